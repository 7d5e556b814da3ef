// Demo page: notes in IndexedDB, search as you type. All document text is rendered with
// textContent (never innerHTML), so notes cannot inject markup.
import { WebRag } from '../pkg/index.js';

const $ = (id) => document.getElementById(id);
const MODEL = new URL('../.models/all-MiniLM-L6-v2/', location.href).href;
const PARAMS = new URLSearchParams(location.search);
const KB = PARAMS.get('kb') ?? 'webrag-demo';
// ?device=cpu|gpu|auto (default auto: the GPU on a hardware adapter); 'hashing' is for benchmarks.
const DEVICE = PARAMS.get('device') ?? 'auto';
// ?precision=f32|int8: the CPU path's arithmetic (default f32).
const PRECISION = PARAMS.get('precision') ?? 'f32';
// ?workers=N: embedding workers for the CPU path (default every core, at most 4; 0: none).
const WORKERS = PARAMS.has('workers') ? Number(PARAMS.get('workers')) : undefined;
// ?cpuKernels=auto|relaxed-simd|simd128: the engine's build (default auto: by feature detection).
const CPU_KERNELS = PARAMS.get('cpuKernels') ?? 'auto';

const status = (text) => { $('status').textContent = text; };
function progress(ev) {
  const bar = $('progress');
  bar.hidden = ev.phase === 'done';
  bar.max = ev.total || 1;
  bar.value = ev.done;
  const what = { model: 'loading model files', device: 'setting up the embedder', index: 'reading the index from IndexedDB', parse: 'parsing', embed: 'embedding chunks', graph: 'embedding mind-map nodes', store: 'saving to IndexedDB', done: 'done' }[ev.phase] ?? ev.phase;
  const mb = (n) => (n / 1048576).toFixed(1);
  status(ev.phase === 'model' ? `${what} ${mb(ev.done)}/${mb(ev.total)} MB` : `${what} ${ev.done}/${ev.total}`);
}

let rag;
const demo = { ready: false };
window.webragDemo = demo;

/** Shows which path embeds (GPU adapter or CPU) and why. */
async function showPath() {
  const e = await rag.embedder();
  const where = e.path === 'gpu' ? `GPU (WebGPU: ${e.adapter})` : 'CPU (wasm SIMD)';
  const q = e.crossover ? `; queries on ${e.queries.toUpperCase()} (${e.crossover.cpuMs.toFixed(1)} ms CPU vs ${e.crossover.gpuMs.toFixed(1)} ms GPU)` : '';
  // One plain sentence; the platform's own words (e.g. wgpu's adapter errors) on demand.
  $('path-text').textContent = e.detail ? `${e.reason}${q}` : `embedding on ${where} — ${e.reason}${q}`;
  $('path-detail').textContent = e.detail ?? '';
  $('path-more').hidden = !e.detail;
  $('path').dataset.path = e.path;
}

async function refreshDocs() {
  const [docs, stats] = await Promise.all([rag.documents(), rag.stats()]);
  $('count').textContent = `(${stats.documents} documents, ${stats.chunks} chunks)`;
  $('count').dataset.documents = String(stats.documents);
  const ul = $('docs');
  ul.replaceChildren();
  for (const d of docs.slice(0, 500)) {
    const li = document.createElement('li');
    const name = document.createElement('span');
    name.textContent = d.title;
    name.title = d.id;
    const del = document.createElement('button');
    del.textContent = 'delete';
    del.onclick = async () => { await rag.remove([d.id]); await refreshDocs(); search(); };
    li.dataset.mindMap = d.mindMap ?? 'structural';
    if (d.mindMap === 'llm') { const tag = document.createElement('small'); tag.className = 'tag'; tag.textContent = 'LLM map'; name.append(' ', tag); }
    li.append(name, del);
    ul.append(li);
  }
}

/** A mind map as nested lists inside a collapsible <details> (text only, never HTML). */
function mindMapTree(map) {
  const det = document.createElement('details');
  det.className = 'mindmap';
  const sum = document.createElement('summary');
  sum.textContent = 'mind-map context';
  const list = (nodes) => {
    const ul = document.createElement('ul');
    for (const n of nodes) {
      const li = document.createElement('li');
      li.textContent = n.label;
      if (n.children?.length) li.append(list(n.children)); else li.className = 'fact';
      ul.append(li);
    }
    return ul;
  };
  const root = document.createElement('ul');
  const top = document.createElement('li');
  top.textContent = map.topic;
  top.append(list(map.children));
  root.append(top);
  det.append(sum, root);
  return det;
}

/** The explain view: candidate topics, anchors and the selected rows' scores. */
function renderExplain(g) {
  const det = $('explain');
  det.replaceChildren();
  if (!g) { det.hidden = true; return; }
  det.hidden = false;
  const sum = document.createElement('summary');
  sum.textContent = `explain PGR: ${g.explain.topics.length} candidate topics, template ${g.explain.template[0]} × ${g.explain.template[1]}, ${g.explain.anchors.length} anchors`;
  const topics = document.createElement('p');
  topics.textContent = 'topics: ' + g.explain.topics.map(([d, how]) => `${d} (${how})`).join(', ');
  const table = document.createElement('table');
  const row = (cells, tag = 'td') => { const tr = document.createElement('tr'); for (const c of cells) { const td = document.createElement(tag); td.textContent = c; tr.append(td); } return tr; };
  table.append(row(['anchor row', 'similarity', 'sub-root column', 'path-matrix rows'], 'th'));
  for (const a of g.explain.anchors) table.append(row([a.row, a.value.toFixed(3), a.subRootCol, `${a.top}–${a.bottom - 1}`]));
  const rows = document.createElement('table');
  rows.append(row(['row', 'score (row sum of F)', 'fact path'], 'th'));
  for (const [r, score, labels] of g.explain.rows) rows.append(row([r, score.toFixed(3), labels.join(' → ')]));
  det.append(sum, topics, table, rows);
}

function renderHits(hits, graph) {
  const ol = $('results');
  ol.replaceChildren();
  renderExplain(graph);
  for (const h of hits) {
    const li = document.createElement('li');
    const title = document.createElement('div');
    title.className = 'hit-title';
    title.textContent = h.title;
    const path = document.createElement('div');
    path.className = 'hit-path';
    const hp = h.headingPath[0] === h.title ? h.headingPath.slice(1) : h.headingPath;
    path.textContent = hp.join(' › ');
    const snip = document.createElement('div');
    snip.className = 'snippet';
    for (const part of h.snippet) {
      if (part.hit) { const m = document.createElement('mark'); m.textContent = part.text; snip.append(m); }
      else snip.append(document.createTextNode(part.text));
    }
    const sc = document.createElement('div');
    sc.className = 'scores';
    const add = (label, v, r) => { if (v != null) { const s = document.createElement('span'); s.textContent = `${label} ${v.toFixed(3)}${r ? ` (#${r})` : ''}`; sc.append(s); } };
    add('bm25', h.scores.bm25, h.scores.bm25Rank);
    add('dense', h.scores.dense, h.scores.denseRank);
    add('graph', h.scores.graph, h.scores.graphRank);
    add('rrf', h.scores.rrf);
    li.append(title, path, snip, sc);
    const map = graph?.context.find((m) => m.topic === h.title);
    if (map) li.append(mindMapTree(map));
    ol.append(li);
  }
}

let seq = 0;
async function search() {
  const q = $('q').value;
  const my = ++seq;
  if (!q.trim()) { $('results').replaceChildren(); return; }
  try {
    const mode = $('mode').value;
    const hits = await rag.search(q, { k: 10, mode });
    const graph = mode.includes('graph') ? await rag.explainGraph(q, { k: 10 }) : null;
    if (my === seq) renderHits(hits, graph);
  } catch (e) { if (my === seq) status(`${e.name} [${e.code}]: ${e.message}`); }
}

async function addDocs(docs) {
  $('add-error').textContent = '';
  try {
    const r = await rag.add(docs, { onProgress: progress });
    status(`added ${r.added.length}, replaced ${r.replaced.length}, unchanged ${r.unchanged.length} (${r.chunks} chunks)`);
    await refreshDocs();
    if ($('enrich-auto').checked && r.chunks > 0) enrich();
    return r;
  } catch (e) {
    $('add-error').textContent = `${e.name} [${e.code}]: ${e.message}`;
    $('progress').hidden = true;
    throw e;
  }
}

async function loadDefaultCorpus() {
  const list = await (await fetch('corpus.json')).json();
  const docs = [];
  for (const path of list) {
    const text = await (await fetch(new URL(path, location.href))).text();
    docs.push({ id: path.replace(/^(\.\.\/)+/, ''), text, url: path });
  }
  await addDocs(docs);
}

// ---- Ask: an OpenAI-compatible endpoint, the streamed answer, citations, the trace. ----
// The endpoint and model are remembered in localStorage; the API key only when the user ticks
// "remember" (else it lives in this page's memory and the worker's).
const LLM_KEY = 'webrag-llm';
let llmKey = '';
function llmConfig() {
  return { baseUrl: $('llm-base').value.trim(), model: $('llm-model').value.trim(), apiKey: llmKey || $('llm-key').value, timeoutMs: 60000 };
}
function saveLlm() {
  const c = llmConfig();
  llmKey = $('llm-key').value;
  const keep = $('llm-remember').checked;
  localStorage.setItem(LLM_KEY, JSON.stringify({ baseUrl: c.baseUrl, model: c.model, ...(keep ? { apiKey: llmKey } : {}) }));
  $('llm-summary').textContent = c.baseUrl ? `${c.model || '(no model)'} at ${c.baseUrl}` : 'not set';
}
function loadLlm() {
  try {
    const c = JSON.parse(localStorage.getItem(LLM_KEY) ?? '{}');
    $('llm-base').value = c.baseUrl ?? '';
    $('llm-model').value = c.model ?? '';
    if (c.apiKey) { $('llm-key').value = c.apiKey; $('llm-remember').checked = true; llmKey = c.apiKey; }
  } catch { /* a corrupt entry is ignored */ }
  saveLlm();
}

/** One trace event as a line of the timeline (text only). */
function traceLine(e) {
  const o = e.output ?? {};
  const what = {
    propose: () => (o.proposals?.length ? `sub-questions: ${o.proposals.join(' | ')}` : 'no further sub-question'),
    retrieve: () => (Array.isArray(o) ? `${o.length} candidates: ${o.slice(0, 5).map((c) => c.question).join(' | ')}` : `chunks for the rewritten queries: ${(o.chunks ?? []).join(', ')}`),
    select: () => (o.choice == null ? 'none selected' : `selected [${o.choice}] → ${o.answer ?? ''}`),
    answer: () => `answer (${o.answer?.confidence ?? '?'} confidence) citing ${o.answer?.citations?.length ?? 0} source(s)`,
    trigger: () => `${o.matches?.length ?? 0} memory match(es)${o.fired ? ' — answering from memory' : ''}`,
    rewrite: () => `clarified: ${o.clarified}; queries: ${(o.queries ?? []).join(' | ')}`,
    route: () => `route: ${o.route}`,
    keyPoints: () => `key points: ${(o.keyPoints ?? []).join(' | ')}`,
    search: () => `${o.chunks?.length ?? 0} chunks`,
    verify: () => (o.sufficient ? 'context sufficient' : `insufficient; sub-queries: ${(o.queries ?? []).join(' | ')}`),
    sparse: () => `keyword queries: ${(o.queries ?? []).join(' → ')}${o.feedback ? ` (${o.feedback})` : ''}; added ${o.added ?? 'nothing'}`,
    dense: () => `pseudo-document; added ${o.added ?? 'nothing'}`,
    filter: () => `kept ${o.kept?.length ?? 0} source(s)${o.labels ? `: ${o.labels.join(', ')}` : ' (unreadable labels: all kept)'}`,
    memory: () => `remembered: ${(o.saved ?? []).join(' | ')}`,
  }[e.step];
  return `${e.round ? `round ${e.round} · ` : ''}${e.step}: ${what ? what() : ''} (${e.ms.toFixed(0)} ms)`;
}

/** One trace event as a timeline entry; the key-points step shows its mind-map context. */
function traceItem(e) {
  const li = document.createElement('li');
  li.dataset.step = e.step;
  li.append(document.createTextNode(traceLine(e)));
  if (e.step === 'keyPoints' && e.output?.context?.length) for (const m of e.output.context) li.append(mindMapTree(m));
  return li;
}

/** The finished answer with its [S1] markers as buttons that open the cited source. */
function renderAnswer(a, context = []) {
  const box = $('answer');
  box.replaceChildren();
  for (const part of a.text.split(/(\[S\d+\])/)) {
    const m = /^\[S(\d+)\]$/.exec(part);
    const id = m ? a.sources[Number(m[1]) - 1] : null;
    if (!id) { box.append(document.createTextNode(part)); continue; }
    const b = document.createElement('button');
    b.type = 'button'; b.className = 'cite'; b.textContent = part; b.dataset.chunk = id;
    b.onclick = async () => {
      const src = $('source');
      const item = context.find((x) => x.id === id);
      if (item && ['graph', 'memory', 'web', 'summary'].includes(item.via)) {
        src.textContent = `${item.title} (${item.via})\n\n${item.text}`;
      } else {
        const c = await rag.chunk(id);
        src.textContent = c ? `${c.headingPath.join(' › ') || c.docId}\n\n${c.text}` : `(chunk ${id} is gone)`;
      }
      src.hidden = false;
    };
    box.append(b);
  }
  box.classList.remove('provisional');
  $('answer-meta').textContent = `confidence: ${a.confidence}${a.known ? '' : ' (below the threshold: "I don\'t know")'} · sources: ${a.sources.length}`;
  $('answer-meta').dataset.confidence = a.confidence;
}

async function askQuestion(q) {
  $('ask-error').textContent = '';
  $('answer').textContent = '';
  $('answer-meta').textContent = '';
  $('source').hidden = true;
  $('trace').replaceChildren();
  $('trace-box').open = true;
  // Under the ask preset every box applies; under another preset only the boxes unchecked turn
  // its steps off (the preset decides which steps are on).
  const preset = $('ask-preset').value;
  const steps = {};
  for (const box of document.querySelectorAll('#ask-steps input[data-step]')) {
    if (preset === 'ask' || !box.checked) steps[box.dataset.step] = box.checked;
  }
  const ctl = new AbortController();
  $('ask-stop').hidden = false;
  $('ask-stop').onclick = () => ctl.abort();
  try {
    const r = await rag.ask(q, {
      llm: llmConfig(),
      // Streamed provisionally (marked as such) until the confidence is known.
      options: { preset, steps, keepTrace: $('keep-trace').checked, answer: { stream: 'provisional' } },
      signal: ctl.signal,
      onToken: (t, { provisional }) => {
        $('answer').classList.toggle('provisional', provisional);
        $('answer').append(document.createTextNode(t));
      },
      onTrace: (e) => $('trace').append(traceItem(e)),
    });
    if (r.answer) renderAnswer(r.answer, r.context);
  } catch (e) {
    $('ask-error').textContent = `${e.name} [${e.code}]: ${e.message}`;
  } finally {
    $('ask-stop').hidden = true;
  }
}

/** Runs the ingest-time LLM stages (resumable) with progress and a Stop button. */
async function enrich() {
  const ctl = new AbortController();
  $('enrich-stop').hidden = false;
  $('enrich-stop').onclick = () => ctl.abort();
  $('enrich-btn').disabled = true;
  const st = $('enrich-status');
  st.textContent = 'starting…';
  delete st.dataset.done;
  try {
    const r = await rag.enrich({
      llm: llmConfig(),
      atomize: $('enrich-atomize').checked,
      mindMaps: $('enrich-maps').checked,
      signal: ctl.signal,
      onProgress: (ev) => { if (ev.phase) st.textContent = `${ev.phase === 'atomize' ? 'atomic questions' : 'LLM mind maps'}: ${ev.done}/${ev.total}`; },
    });
    const a = r.atomize ? `${r.atomize.chunks} chunks atomized (${r.atomize.questions} questions, ${r.atomize.remaining} left)` : '';
    const m = r.mindMaps ? `${r.mindMaps.documents} LLM mind maps (${r.mindMaps.fallbacks.length} kept structural, ${r.mindMaps.regenerations} regenerations)` : '';
    st.textContent = [a, m].filter(Boolean).join('; ');
    st.dataset.done = 'ok';
  } catch (e) {
    st.textContent = `${e.name} [${e.code}]: ${e.message} — run again to resume`;
    st.dataset.done = e.code;
  } finally {
    $('enrich-stop').hidden = true;
    $('enrich-btn').disabled = false;
    await refreshDocs();
  }
}

/** Downloads kept traces as JSONL ('events' or 'sft'). */
async function exportTraces(format) {
  const text = await rag.exportTraces({ format });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
  a.download = format === 'sft' ? 'webrag-decompose-sft.jsonl' : 'webrag-traces.jsonl';
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

async function main() {
  status('loading the model and opening IndexedDB…');
  try {
    rag = await WebRag.open({
      name: KB, model: MODEL, device: DEVICE, precision: PRECISION, workers: WORKERS, cpuKernels: CPU_KERNELS, onProgress: progress,
      onEvent: (ev) => {
        if (ev.type !== 'warning') return; // 'sealed': idle-time HNSW sealing, nothing to show
        $('warning').hidden = false; $('warning').textContent = `${ev.code}: ${ev.message}`; showPath();
      },
    });
  } catch (e) {
    status(`${e.name} [${e.code}]: ${e.message}`);
    return;
  }
  demo.rag = rag;
  const stats = await rag.stats();
  if (stats.documents === 0 && !new URLSearchParams(location.search).has('empty')) {
    status('indexing the default corpus (the user docs)…');
    await loadDefaultCorpus().catch(() => {});
  }
  await refreshDocs();
  for (const id of ['q', 'add-btn', 'files', 'ask-q', 'ask-btn', 'enrich-btn']) $(id).disabled = false;
  $('enrich-btn').addEventListener('click', () => { saveLlm(); enrich(); });
  $('export-events').addEventListener('click', (ev) => { ev.preventDefault(); exportTraces('events'); });
  $('export-sft').addEventListener('click', (ev) => { ev.preventDefault(); exportTraces('sft'); });
  loadLlm();
  for (const id of ['llm-base', 'llm-model', 'llm-key', 'llm-remember']) $(id).addEventListener('change', saveLlm);
  $('llm-test').addEventListener('click', async () => {
    saveLlm();
    $('llm-test-result').textContent = 'testing…';
    try {
      const r = await rag.testLlm(llmConfig());
      $('llm-test-result').textContent = `connected (${r.ms.toFixed(0)} ms): ${r.reply.slice(0, 60)}`;
    } catch (e) { $('llm-test-result').textContent = `${e.name} [${e.code}]: ${e.message}`; }
  });
  $('ask-form').addEventListener('submit', (ev) => { ev.preventDefault(); saveLlm(); askQuestion($('ask-q').value); });
  const s = await rag.stats();
  status(`ready — ${s.documents} documents, ${s.chunks} chunks, model ${s.model} (${s.dim}-d)`);
  await showPath();
  demo.ready = true;
  $('q').addEventListener('input', search);
  $('mode').addEventListener('change', search);
  $('add-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const text = $('note-text').value;
    const title = $('note-title').value.trim() || undefined;
    const id = `note-${Date.now()}`;
    await addDocs([{ id, title, text, format: 'auto' }]).then(() => { $('note-text').value = ''; $('note-title').value = ''; }).catch(() => {});
  });
  $('files').addEventListener('change', async (ev) => {
    const docs = [];
    for (const f of ev.target.files) docs.push({ id: f.name, url: f.name, bytes: new Uint8Array(await f.arrayBuffer()) });
    await addDocs(docs).catch(() => {});
    ev.target.value = '';
  });
}

main();
