// Browser benchmark at scale (issue 4): search latency at more than 100k chunks in headless
// Chromium, with the index loaded from IndexedDB, and that load time.
//
// Corpus: the 17,364 CRUD news articles of ../shared/data/crud_news, twice — the second copy has
// its sentences in reverse order, so it chunks and embeds differently — about 120k chunks.
// Vectors: `device: 'hashing'` (sparse random indexing of the real tokenizer's word pieces, see
// src/embed/hashing.rs): embedding 35k articles with MiniLM in one browser thread would take about
// 90 minutes, and the latency target excludes query embedding. The pseudo-graph is off (its
// scaling is `bench-graph`'s); BM25, the segmented vector index (exact fresh buffer + HNSW
// segments) and RRF are what a default `hybrid` search runs.
//
// Steps: ingest in batches of 1,000 articles through the worker (`add`), atomize every third
// document (`enrich`, atomizing alone, against the scripted server: two questions per chunk, its
// first two sentences — so a third of the chunks have atomic questions), run the upkeep the worker
// otherwise does when idle (`maintain`: HNSW sealing, the index segments), then once with force
// (every buffer sealed, the segments' delta folded), close; three times: load a page, open a new
// instance on the same IndexedDB database and run one hybrid search (timed: worker + wasm + model
// files from the Cache API + the lazy open's reads + the search); then 200 queries (12-character
// spans of articles, as in the native bench) per mode, timed in the page around `rag.search`
// (worker round trip and the query's hashing vector included), p50 / p95; then what a notes app
// does on the lazily opened knowledge base (add a note, `enrich` it, graph and filtered searches,
// remove it), twenty `ask`s, each step's time and the worker's wasm memory after it (wasm memory
// never shrinks: the peak so far), none of which may load the knowledge base; then `exportKb()`
// (lazily: a page of records at a time) and the whole knowledge base loaded (by
// `maintain({force: true})`), the same hybrid queries again: latency and top-10 agreement with
// the lazy lists.
import { readFileSync, readdirSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, SHARED, startServer, launch, openDemo } from './harness.mjs';

const dir = join(SHARED, 'data/crud_news');
const all = readdirSync(dir).sort().flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter((l) => l.trim()));
// WEBRAG_SCALE_ARTICLES: a smaller run (a quick check of the benchmark itself); the figures are of the whole corpus.
const articles = all.slice(0, Number(process.env.WEBRAG_SCALE_ARTICLES) || all.length);
const reversed = (a) => a.split(/(?<=。)/).reverse().join('');
const docs = [
  ...articles.map((text, i) => ({ id: `n${i}`, text, format: 'text', tags: [`part${i % 10}`] })),
  ...articles.map((text, i) => ({ id: `r${i}`, text: reversed(text), format: 'text' })),
];
const queries = articles.filter((_, i) => i % Math.floor(articles.length / 200) === 0).slice(0, 200).map((a) => [...a].slice(40, 52).join(''));

const server = await startServer(19000 + Math.floor(Math.random() * 1000));
// The scripted OpenAI-compatible server (tests/llm/server.mjs) for the ask step: a readable reply
// for every step of the `ask` preset, by its task marker.
const llm = spawn(process.execPath, [join(ROOT, 'tests/llm/server.mjs'), '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
const llmPort = await new Promise((ok) => llm.stdout.on('data', (d) => { const m = /LISTENING (\d+)/.exec(String(d)); if (m) ok(m[1]); }));
const json = (o) => ({ content: JSON.stringify(o) });
await fetch(`http://127.0.0.1:${llmPort}/__rules`, { method: 'POST', body: JSON.stringify([
  { match: 'Task: rewrite', reply: json({ queries: [] }) },
  { match: 'Task: route', reply: json({ route: 'both' }) },
  { match: 'Task: key points', reply: json({ keyPoints: ['城市 项目'] }) },
  { match: 'Task: select', reply: json({ choice: 0, answer: '见资料' }) },
  { match: 'Known so far: nothing yet', reply: json({ decompose: true, questions: ['城市绿化项目由谁负责？'] }) },
  { match: 'Task: propose', reply: json({ decompose: false }) },
  { match: 'Task: verify', reply: json({ sufficient: false, queries: ['项目 负责人'] }) },
  { match: 'Task: keyword query', reply: json({ query: '项目 负责人' }) },
  { match: 'Task: keyword feedback', reply: json({ relevant: true }) },
  { match: 'Task: pseudo-document', reply: json({ document: '该项目由市政府负责，预计年底完成。' }) },
  { match: 'Task: summarize', reply: json({ summary: '资料说明了项目的负责人 [1]。' }) },
  { match: 'Task: filter', reply: { fillLabels: 'entailment' } },
  { match: 'Task: answer', reply: { content: '见资料 [S1]。\nConfidence: high' } },
  { match: 'Task: atomize', reply: { questionsFrom: 2 } },
  { match: 'Task: fact-check items', reply: json({ items: ['城市绿化项目在春季开工，预计年底完成。'] }) },
  { match: 'Task: mind map', reply: json({ 城市绿化项目: { 进度: '城市绿化项目在春季开工，预计年底完成。' } }) },
]) });
const LLM = `http://127.0.0.1:${llmPort}/v1`;
const browser = await launch();
const t0 = Date.now();
const log = (m) => console.error(`[${((Date.now() - t0) / 1000).toFixed(0)} s] ${m}`);
try {
  const page = await browser.ctx.newPage();
  await openDemo(page, `${server.url}/www/?kb=bench-scale-demo&empty&device=cpu`);
  // Open, then one hybrid search: what a reader waits for after the page loads.
  const OPEN = async (firstQuery) => {
    const { WebRag } = await import('/pkg/index.js');
    const t = performance.now();
    const at = {};
    window.scaleRag = await WebRag.open({
      name: 'bench-scale', model: new URL('/.models/all-MiniLM-L6-v2/', location.href).href, device: 'hashing',
      options: { graph: { enabled: false } },
      onProgress: (e) => { if (e.phase === 'index') at[e.done] = performance.now(); },
    });
    const opened = performance.now();
    const hits = firstQuery ? await window.scaleRag.search(firstQuery, { k: 10, mode: 'hybrid' }) : [];
    const first = performance.now();
    return {
      ms: opened - t, firstMs: first - t, firstHits: hits.length, indexMs: at[1] - at[0], stats: await window.scaleRag.stats(),
      heap: performance.memory?.usedJSHeapSize ?? null,
    };
  };
  const first = await page.evaluate(OPEN);
  if (first.stats.documents !== 0) throw new Error('the benchmark database is not empty');
  let ingestMs = 0;
  for (let i = 0; i < docs.length; i += 1000) {
    ingestMs += await page.evaluate(async (batch) => {
      const t = performance.now();
      await window.scaleRag.add(batch);
      return performance.now() - t;
    }, docs.slice(i, i + 1000));
    if ((i / 1000) % 5 === 4) log(`ingested ${Math.min(i + 1000, docs.length)} / ${docs.length} articles`);
  }
  // Atomic questions on every third document's chunks (loaded: the knowledge base was new).
  const atomized = await page.evaluate(async ([ids, baseUrl]) => {
    const t = performance.now();
    const r = await window.scaleRag.enrich({ llm: { baseUrl, model: 'scripted', timeoutMs: 10000, retries: 0 }, atomize: { batch: 64, maxQuestions: 2 }, mindMaps: false, documents: ids });
    return { ms: performance.now() - t, report: r.atomize };
  }, [docs.filter((_, i) => i % 3 === 0).map((d) => d.id), LLM]);
  log(`atomized: ${JSON.stringify(atomized)}`);
  // What idle upkeep would do by itself, then with force: every buffer sealed, the index
  // segments folded (their delta empty), so each open below starts from the same state.
  const sealed = await page.evaluate(async () => {
    const t = performance.now();
    const steps = [];
    for (let s; (s = await window.scaleRag.maintain()) != null;) steps.push(s);
    steps.push(...await window.scaleRag.maintain({ force: true }));
    return { ms: performance.now() - t, steps, stats: await window.scaleRag.stats(), usage: (await navigator.storage.estimate()).usage };
  });
  log(`sealed: ${JSON.stringify(sealed.stats.ann)}`);
  await page.evaluate(() => window.scaleRag.close());
  // Three opens, each after a page load (a new worker and wasm instance, nothing in memory).
  const loads = [];
  for (let r = 0; r < 3; r++) {
    await page.goto(`${server.url}/package.json`);
    loads.push(await page.evaluate(OPEN, queries[r * 7]));
    if (r < 2) await page.evaluate(() => window.scaleRag.close());
  }
  log(`opened: ${JSON.stringify(loads.map((l) => [l.ms, l.firstMs, l.stats.lazy]))}`);
  const lat = await page.evaluate(async (qs) => {
    const rag = window.scaleRag;
    const out = {};
    const pct = (v, p) => v[Math.round((v.length - 1) * p)];
    for (const mode of ['bm25', 'dense', 'hybrid']) {
      for (const q of qs.slice(0, 10)) await rag.search(q, { k: 10, mode }); // warm-up
      const t = [];
      for (const q of qs) {
        const a = performance.now(); await rag.search(q, { k: 10, mode }); t.push(performance.now() - a);
      }
      t.sort((a, b) => a - b);
      out[mode] = [pct(t, 0.5), pct(t, 0.95)];
    }
    const e = [];
    for (const q of qs) { const a = performance.now(); await rag.embed([q]); e.push(performance.now() - a); }
    e.sort((a, b) => a - b);
    out.embed = [pct(e, 0.5), pct(e, 0.95)];
    return out;
  }, queries);
  // What a notes app does next on the lazily opened knowledge base: add one note, search the
  // graph, remove the note — none of which may load the knowledge base whole (stats().lazy).
  const writes = await page.evaluate(async ([q, baseUrl]) => {
    const rag = window.scaleRag;
    const time = async (f) => { const t = performance.now(); const r = await f(); return [performance.now() - t, r]; };
    const note = { id: 'bench-note', text: '今天的会议纪要：城市绿化项目在春季开工，预计年底完成。负责人是环保局。', format: 'text' };
    const [addMs, added] = await time(() => rag.add([note]));
    const afterAdd = (await rag.stats()).wasmMemoryBytes;
    const [findMs, found] = await time(() => rag.search('城市绿化项目 会议纪要', { k: 5, mode: 'bm25' }));
    // The note's atomic questions and LLM mind map, lazily; its questions are found at once.
    const llm = { baseUrl, model: 'scripted', timeoutMs: 10000, retries: 0 };
    const [enrichMs, enriched] = await time(() => rag.enrich({ llm, documents: ['bench-note'], mindMaps: { regenerations: 0 } }));
    const afterEnrich = await rag.stats();
    const atomicHits = await rag.search('今天的会议纪要：城市绿化项目在春季开工，预计年底完成。', { k: 5, mode: 'atomic' });
    const [graphMs, graph] = await time(() => rag.search(q, { k: 10, mode: 'graph' }));
    const afterGraph = (await rag.stats()).wasmMemoryBytes;
    const [hgMs] = await time(() => rag.search(q, { k: 10, mode: 'hybrid+graph' }));
    const [removeMs, removed] = await time(() => rag.remove(['bench-note']));
    const [listMs, list] = await time(() => rag.documents());
    // Filtered searches, lazily: documents named (read by key), then a tag every tenth document
    // carries (every document record read; the dense retriever scans the passing chunks' vectors).
    const [docFilterMs, byDoc] = await time(() => rag.search(q, { k: 10, mode: 'hybrid', filter: { docIds: ['n1', 'n2', 'n3'] } }));
    const [tagFilterMs, byTag] = await time(() => rag.search(q, { k: 10, mode: 'hybrid', filter: { tags: ['part3'] } }));
    const [tagAgainMs] = await time(() => rag.search(q, { k: 10, mode: 'hybrid', filter: { tags: ['part3'] } }));
    const filterOk = byDoc.every((h) => ['n1', 'n2', 'n3'].includes(h.docId)) && byTag.length === 10 && byTag.every((h) => Number(h.docId.slice(1)) % 10 === 3);
    const stats = await rag.stats();
    return { addMs, afterAdd, afterGraph, enrichMs, enriched, afterEnrich, noteAtomic: atomicHits[0]?.docId === 'bench-note', added, findMs, noteFirst: found[0]?.docId === 'bench-note', graphMs, graphHits: graph.length, hgMs, removeMs, removed, listMs, listed: list.length, docFilterMs, tagFilterMs, tagAgainMs, filterOk, stats };
  }, [queries[3], LLM]);
  log(`writes: ${JSON.stringify({ ...writes, stats: undefined, afterEnrich: undefined })}`);
  if (writes.listed !== writes.stats.documents) throw new Error(`documents() listed ${writes.listed} of ${writes.stats.documents}`);
  if (!writes.noteFirst || writes.removed.removed[0] !== 'bench-note') throw new Error('the note was not found first, or not removed');
  if (!writes.filterOk) throw new Error('a filtered search returned a document outside its filter');
  if (!writes.stats.lazy || !writes.afterEnrich.lazy) throw new Error('the writes, enrich or filtered searches loaded the knowledge base whole');
  if (!writes.noteAtomic || writes.enriched.atomize.chunks !== writes.added.chunks || writes.enriched.mindMaps.documents !== 1) {
    throw new Error(`enrich of the note: ${JSON.stringify(writes.enriched)}; found first by its question: ${writes.noteAtomic}`);
  }
  // Twenty questions through the whole `ask` preset (every step, the low-level searchers and
  // summarize, the memory update, a kept trace; the retrieval trigger off, so that every question
  // retrieves rather than being answered from the memory the earlier ones wrote) against the
  // scripted server: none may load the knowledge base whole.
  const asked = await page.evaluate(async ([qs, baseUrl]) => {
    const rag = window.scaleRag;
    const llm = { baseUrl, model: 'scripted', timeoutMs: 10000, retries: 0 };
    const ms = [];
    let known = 0, sources = 0, remembered = 0;
    for (const q of qs) {
      const t = performance.now();
      // The scripted answer is one fixed sentence, which no passage need hold: evidence
      // thresholds at 0 keep it shown (this measures what a question costs, not its answer).
      const r = await rag.ask(q, { llm, options: { preset: 'ask', keepTrace: true, steps: { trigger: false }, answer: { supportHigh: 0, supportMedium: 0 } } });
      ms.push(performance.now() - t);
      known += r.answer?.known ? 1 : 0;
      sources += r.context.length;
      remembered += r.remembered;
    }
    ms.sort((a, b) => a - b);
    return { n: qs.length, known, sources: sources / qs.length, remembered, firstMs: ms[0], p50: ms[Math.round((ms.length - 1) * 0.5)], max: ms[ms.length - 1], stats: await rag.stats() };
  }, [queries.slice(0, 20), LLM]);
  log(`asked: ${JSON.stringify({ ...asked, stats: undefined })}`);
  if (!asked.stats.lazy) throw new Error('the asks loaded the knowledge base whole');
  if (asked.known !== asked.n) throw new Error(`${asked.n - asked.known} of ${asked.n} asks ended without an answer`);
  // `exportKb()` on the lazily opened knowledge base: read from IndexedDB a page of records at a
  // time, never loaded whole (stats().lazy stays true): its time, the file and wasm memory. Then
  // the same queries once the knowledge base is loaded whole (the first call that needs it —
  // here `maintain({force: true})`, which seals every buffer — loads it): how long that takes,
  // and how far the lazy hybrid lists agree.
  const whole = await page.evaluate(async (qs) => {
    const rag = window.scaleRag;
    const lazyTop = [];
    for (const q of qs) lazyTop.push((await rag.search(q, { k: 10, mode: 'hybrid' })).map((h) => h.chunkId));
    let t = performance.now();
    const kbBytes = (await rag.exportKb()).length;
    const exportMs = performance.now() - t;
    const exported = await rag.stats();
    t = performance.now();
    await rag.maintain({ force: true });
    const loadMs = performance.now() - t;
    let overlap = 0;
    const lat = [];
    for (let i = 0; i < qs.length; i++) {
      const a = performance.now();
      const top = (await rag.search(qs[i], { k: 10, mode: 'hybrid' })).map((h) => h.chunkId);
      lat.push(performance.now() - a);
      overlap += top.filter((c) => lazyTop[i].includes(c)).length / Math.max(1, top.length);
    }
    lat.sort((a, b) => a - b);
    return { exportMs, kbBytes, exported, loadMs, overlap: overlap / qs.length, p50: lat[Math.round((lat.length - 1) * 0.5)], p95: lat[Math.round((lat.length - 1) * 0.95)], stats: await rag.stats() };
  }, queries);
  if (!whole.exported.lazy) throw new Error('exportKb() loaded the knowledge base whole');
  const s = loads[0].stats;
  const loadMs = loads.map((l) => l.ms).sort((a, b) => a - b);
  const indexMs = loads.map((l) => l.indexMs).sort((a, b) => a - b);
  const f = (x) => x.toFixed(2);
  console.log('| figure (headless Chromium, wasm, 1 thread; hashing vectors, graph off) | value |');
  console.log('|---|---|');
  console.log(`| corpus | ${s.documents} documents, ${s.chunks} chunks, ${s.terms} terms; atomic questions: ${s.questions} on ${s.atomizedChunks} chunks |`);
  console.log(`| ingest through the worker (batches of 1,000 articles) | ${(ingestMs / 1000).toFixed(0)} s (${(s.chunks / (ingestMs / 1000)).toFixed(0)} chunks/s) |`);
  console.log(`| atomizing every third document (\`enrich\`, scripted server, 64 chunks a commit) | ${(atomized.ms / 1000).toFixed(0)} s (${atomized.report.chunks} chunks, ${atomized.report.questions} questions) |`);
  console.log(`| sealing what was left in the fresh buffers (ef_construction 40; the rest was sealed while idle between adds) | ${(sealed.ms / 1000).toFixed(0)} s, ${sealed.steps.length} steps |`);
  console.log(`| IndexedDB usage (navigator.storage.estimate) | ${(sealed.usage / 1048576).toFixed(0)} MiB |`);
  const firstMs = loads.map((l) => l.firstMs).sort((a, b) => a - b);
  const mib = (b) => (b / 1048576).toFixed(0);
  console.log(`| opened lazily from the index segments (stats().lazy) | ${loads.map((l) => l.stats.lazy).join(', ')} |`);
  console.log(`| index load at open (lazy: meta + segment head + delta), median of 3 | ${(indexMs[1] / 1000).toFixed(2)} s (runs: ${indexMs.map((x) => (x / 1000).toFixed(2)).join(', ')}) |`);
  console.log(`| whole open (worker + wasm init + model files from the Cache API + index load), median of 3 | ${(loadMs[1] / 1000).toFixed(2)} s |`);
  console.log(`| **open() → first hybrid result** (after a page load; median of 3) | **${(firstMs[1] / 1000).toFixed(2)} s** (runs: ${firstMs.map((x) => (x / 1000).toFixed(2)).join(', ')}) |`);
  console.log(`| worker wasm memory after open + first search / page JS heap | ${mib(loads[1].stats.wasmMemoryBytes)} MiB / ${loads[1].heap == null ? 'n/a' : mib(loads[1].heap) + ' MiB'} |`);
  for (const m of ['bm25', 'dense', 'hybrid']) {
    console.log(`| search ${m} k=10, 200 queries, lazy: p50 / p95 ms (worker round trip incl.) | ${f(lat[m][0])} / ${f(lat[m][1])} |`);
  }
  console.log(`| **first \`add\` of one document** after the lazy open (still lazy: ${writes.stats.lazy}) | **${(writes.addMs / 1000).toFixed(2)} s** (${writes.added.chunks} chunk); found by bm25 in ${f(writes.findMs)} ms; wasm memory after **${mib(writes.afterAdd)} MiB** |`);
  console.log(`| **\`enrich\` of that document** (atomizing + LLM mind map, \`documents: [id]\`, scripted server; still lazy: ${writes.afterEnrich.lazy}; its question finds it first: ${writes.noteAtomic}) | **${(writes.enrichMs / 1000).toFixed(2)} s**; wasm memory after **${mib(writes.afterEnrich.wasmMemoryBytes)} MiB** |`);
  console.log(`| **first graph search** (the pseudo-graph read alone; ${writes.graphHits} hits, the graph being off here) / hybrid+graph | **${f(writes.graphMs)} ms** / ${f(writes.hgMs)} ms; wasm memory after ${mib(writes.afterGraph)} MiB |`);
  console.log(`| \`remove\` of that document | ${f(writes.removeMs)} ms |`);
  console.log(`| \`documents()\` (${writes.listed} records, lazily) | ${f(writes.listMs)} ms |`);
  console.log(`| filtered hybrid search, lazily: 3 documents by id / a tag of every tenth document (first, again) | ${f(writes.docFilterMs)} ms / ${f(writes.tagFilterMs)}, ${f(writes.tagAgainMs)} ms |`);
  console.log(`| worker wasm memory after these (still lazy: ${writes.stats.lazy}) | ${mib(writes.stats.wasmMemoryBytes)} MiB |`);
  console.log(`| **${asked.n}-question \`ask\`** (preset \`ask\`, every step but the trigger, scripted server; ${asked.known} answered, ${asked.sources.toFixed(1)} sources each, ${asked.remembered} memory entries written; still lazy: ${asked.stats.lazy}): median / slowest per question | **${(asked.p50 / 1000).toFixed(2)} s** / ${(asked.max / 1000).toFixed(2)} s |`);
  console.log(`| worker wasm memory after the asks (still lazy) | **${mib(asked.stats.wasmMemoryBytes)} MiB** |`);
  console.log(`| **\`exportKb()\`**, lazily (read a page at a time, the file handed out in pieces; still lazy: ${whole.exported.lazy}): time, file / worker wasm memory after | **${(whole.exportMs / 1000).toFixed(1)} s**, ${mib(whole.kbBytes)} MiB / **${mib(whole.exported.wasmMemoryBytes)} MiB** |`);
  console.log(`| loading the whole knowledge base on first need (\`maintain({force: true})\`: the load, then every buffer sealed) | ${(whole.loadMs / 1000).toFixed(1)} s; wasm memory then ${mib(whole.stats.wasmMemoryBytes)} MiB |`);
  console.log(`| vector collection once loaded: [fresh, segments, tombstones] | chunks ${JSON.stringify(whole.stats.ann.chunks)} |`);
  console.log(`| search hybrid k=10 once loaded, 200 queries: p50 / p95 ms | ${f(whole.p50)} / ${f(whole.p95)} |`);
  console.log(`| hybrid top-10 overlap, lazy vs loaded (both dense lists approximate: IVF vs HNSW) | ${whole.overlap.toFixed(3)} |`);
  console.log(`| query encoding alone (rag.embed round trip, hashing): p50 / p95 ms | ${f(lat.embed[0])} / ${f(lat.embed[1])} |`);
  log('done');
} finally {
  await browser.close();
  server.stop();
  llm.kill();
}
