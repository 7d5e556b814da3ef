// Static-site search demo: webrag/static over a snapshot, search as you type. Keyword results
// show first; with "semantic" ticked, the embedder (webrag's worker + model) loads and semantic
// results are fused in when ready. Text is rendered with textContent only.
import { StaticSearch } from '../pkg/static.js';

const $ = (id) => document.getElementById(id);
const PARAMS = new URLSearchParams(location.search);
const SNAPSHOT = new URL(PARAMS.get('snapshot') ?? '../target/crud-site/webrag/', location.href);
// Page URLs in the snapshot are relative to the site root: the snapshot's parent folder.
const SITE_ROOT = new URL('..', SNAPSHOT);
const demo = { ready: false, semanticReady: false, searches: 0 };
window.siteDemo = demo;
let site;
let seq = 0;

function render(results, errors) {
  const ol = $('results');
  ol.replaceChildren();
  for (const r of results) {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = new URL(r.url.replace(/^\//, ''), SITE_ROOT).href;
    a.textContent = r.title || r.url;
    const meta = document.createElement('small');
    meta.textContent = ` ${r.heading ? `${r.heading} · ` : ''}${r.found.join(' + ')}`;
    const p = document.createElement('p');
    p.textContent = r.excerpt;
    li.append(a, meta, p);
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
  const { results, errors } = await site.search(q, {
    k: 10,
    onKeyword: (kw) => { if (my === seq) { render(kw, []); $('status').textContent = `keyword results in ${(performance.now() - t0).toFixed(0)} ms · ${site.transferred.bytes} bytes fetched so far`; } },
  });
  if (my !== seq) return;
  render(results, errors);
  demo.searches++;
  $('status').textContent = `${results.length} results in ${(performance.now() - t0).toFixed(0)} ms${demo.semanticReady ? ' (keyword + semantic)' : ''} · ${site.transferred.bytes} bytes in ${site.transferred.files} files fetched so far`;
}

async function enableSemantic() {
  $('status').textContent = 'loading the embedder…';
  const { WebRag } = await import('../pkg/index.js');
  const rag = await WebRag.open({ name: 'webrag-site-embedder', model: new URL('../.models/all-MiniLM-L6-v2/', location.href).href, device: PARAMS.get('device') ?? 'auto' });
  site.setEmbedder((texts) => rag.embed(texts));
  demo.semanticReady = true;
  $('status').textContent = 'semantic search ready';
  search();
}

async function main() {
  try {
    site = await StaticSearch.open(SNAPSHOT);
  } catch (e) {
    $('status').textContent = `${e.name} [${e.code}]: ${e.message}`;
    return;
  }
  const m = site.manifest;
  $('status').textContent = `${m.documents} pages, ${m.chunks} chunks — manifest ${site.transferred.bytes} bytes`;
  $('q').disabled = false;
  $('q').addEventListener('input', search);
  $('semantic').addEventListener('change', () => { if ($('semantic').checked && !demo.semanticReady) enableSemantic(); });
  demo.site = site;
  demo.ready = true;
}

main();
