// Static-site search demo: webrag/static over a snapshot, search as you type. Keyword results
// show first; with "semantic" ticked, the embedder (webrag's worker + model) loads and semantic
// and graph results are fused in when ready (staged: keyword → semantic → graph). "Save for
// offline" copies the snapshot into IndexedDB. Text is rendered with textContent only.
import { StaticSearch } from '../pkg/static.js';

const $ = (id) => document.getElementById(id);
const PARAMS = new URLSearchParams(location.search);
// `?snapshot=` names a snapshot of this site only: another origin's would put its text and links
// in this page.
const SNAPSHOT = new URL(PARAMS.get('snapshot') ?? '../target/crud-site/webrag/', location.href);
const FOREIGN = SNAPSHOT.origin !== location.origin;
// `?model=` is the query encoder's folder (default the f32 model; `webrag quantize` writes an int8
// copy about a quarter of its size).
// Page URLs in the snapshot are relative to the site root: the snapshot's parent folder.
const SITE_ROOT = new URL('..', SNAPSHOT);
const demo = { ready: false, semanticReady: false, searches: 0 };
window.siteDemo = demo;
let site;
let seq = 0;

// A link to `url` (a result's `url` or `section`: relative, http or https, or null — safeUrl —
// so never a javascript: link), resolved against the site root.
function link(url, text) {
  const a = document.createElement('a');
  const href = url == null ? null : new URL(url.replace(/^\//, ''), SITE_ROOT);
  if (href && (href.protocol === 'http:' || href.protocol === 'https:')) a.href = href.href;
  a.textContent = text;
  return a;
}

// The excerpt with its matched spans in <mark> (text nodes only).
function excerpt(text, highlights) {
  const p = document.createElement('p');
  let at = 0;
  for (const [a, b] of highlights ?? []) {
    const m = document.createElement('mark');
    m.textContent = text.slice(a, b);
    p.append(text.slice(at, a), m);
    at = b;
  }
  p.append(text.slice(at));
  return p;
}

function render(results, errors) {
  const ol = $('results');
  ol.replaceChildren();
  for (const r of results) {
    const li = document.createElement('li');
    const a = link(r.url, r.title || r.url || '(untitled)');
    const meta = document.createElement('small');
    meta.append(' ');
    if (r.heading) meta.append(link(r.section, r.heading), ' · ');
    meta.append(r.found.join(' + '));
    li.append(a, meta, excerpt(r.excerpt, r.highlights));
    if (r.sections?.length) {
      const ul = document.createElement('ul');
      ul.className = 'sections';
      for (const s of r.sections) {
        const sub = document.createElement('li');
        sub.append(link(s.section, s.heading || r.title || '(section)'), excerpt(s.excerpt, s.highlights));
        ul.append(sub);
      }
      li.append(ul);
    }
    if (r.path) {
      const path = document.createElement('p');
      path.className = 'path';
      path.textContent = `graph: ${r.path.join(' › ')}`;
      li.append(path);
    }
    li.dataset.found = r.found.join(' ');
    ol.append(li);
  }
  $('errors').hidden = errors.length === 0;
  $('errors').textContent = errors.map((e) => `${e.code}: ${e.message}`).join('\n');
}

async function search() {
  const q = $('q').value.trim();
  const my = ++seq;
  if (!q) { render([], []); return; }
  const t0 = performance.now();
  const stages = [];
  const { results, errors } = await site.search(q, {
    k: 10,
    onProgress: ({ stage, results: rs }) => {
      if (my !== seq) return;
      stages.push(stage);
      render(rs, []);
      $('status').textContent = `${stage} results in ${(performance.now() - t0).toFixed(0)} ms · ${site.transferred.bytes} bytes fetched so far`;
    },
  });
  if (my !== seq) return;
  render(results, errors);
  demo.searches++;
  demo.stages = stages;
  const offline = site.offlineReads ? ` · ${site.offlineReads} files read from the offline copy` : '';
  $('status').textContent = `${results.length} results in ${(performance.now() - t0).toFixed(0)} ms (${stages.join(' → ') || 'keyword'}) · ${site.transferred.bytes} bytes in ${site.transferred.files} files fetched so far${offline}`;
}

async function enableSemantic() {
  $('status').textContent = 'loading the embedder…';
  const { WebRag } = await import('../pkg/search.js'); // this page only searches: the search build
  const rag = await WebRag.open({ name: 'webrag-site-embedder', model: new URL(PARAMS.get('model') ?? '../.models/all-MiniLM-L6-v2/', location.href).href, device: PARAMS.get('device') ?? 'auto' });
  demo.embed = (texts) => rag.embed(texts);
  site.setEmbedder(demo.embed);
  demo.semanticReady = true;
  $('status').textContent = 'semantic search ready';
  search();
}

async function saveOffline() {
  $('offline').disabled = true;
  try {
    const r = await site.importOffline({ onProgress: ({ done, total }) => { $('status').textContent = `saving for offline: ${done}/${total} files`; } });
    $('status').textContent = `saved for offline: ${r.files} files, ${r.bytes} bytes in IndexedDB`;
    demo.saved = r;
  } catch (e) {
    $('status').textContent = `${e.name} [${e.code}]: ${e.message}`;
  } finally {
    $('offline').disabled = false;
  }
}

async function main() {
  if (FOREIGN) {
    $('status').textContent = `refused: the snapshot ${SNAPSHOT.href} is not on this site (${location.origin})`;
    return;
  }
  try {
    site = await StaticSearch.open(SNAPSHOT);
  } catch (e) {
    $('status').textContent = `${e.name} [${e.code}]: ${e.message}`;
    return;
  }
  const m = site.manifest;
  $('status').textContent = `${m.documents} pages, ${m.chunks} chunks — manifest ${site.transferred.bytes} bytes`;
  $('q').disabled = false;
  $('offline').disabled = false;
  $('offline').addEventListener('click', saveOffline);
  $('q').addEventListener('input', search);
  $('semantic').addEventListener('change', () => { if ($('semantic').checked && !demo.semanticReady) enableSemantic(); });
  demo.site = site;
  demo.ready = true;
}

main();
