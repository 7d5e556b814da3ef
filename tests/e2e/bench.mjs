// Browser benchmark (headless Chromium, wasm CPU path, 1 thread): embedding sentences/s at batch
// 1 and 32 on all 1,000 sentences of ../shared/embeddings/bench_sentences.json (the set the
// transformers.js reference was measured on; median of 3 runs, each over one third of them, after a
// warm-up), ingest documents/s (200 passages; then all 994 HotpotQA train100 passages with the
// graph on: the old path (f32 in the engine's own worker, a forward pass per mind-map fact),
// late chunking there, then late chunking with f32 and int8 on the embedding workers, each with
// the time split by stage and the latency of searches sent while the add runs),
// BM25 search latency (no query embedding) through the worker, and the optimised .wasm size.
import { readFileSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { ROOT, SHARED, startServer, launch, openDemo } from './harness.mjs';

const server = await startServer(19000 + Math.floor(Math.random() * 1000));
const browser = await launch();
try {
  const page = await browser.ctx.newPage();
  const t0 = Date.now();
  await openDemo(page, `${server.url}/www/?kb=bench&empty&device=cpu&workers=0`);
  const ready = Date.now() - t0;
  const sentences = JSON.parse(readFileSync(join(SHARED, 'embeddings/bench_sentences.json'), 'utf8'));
  const emb = await page.evaluate(async (s) => {
    const rag = window.webragDemo.rag;
    const med = (v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)];
    const out = {};
    for (let i = 0; i < 8; i++) await rag.embed([s[i]]); // warm-up: V8 tiers the kernels up
    const third = Math.ceil(s.length / 3);
    for (const batch of [1, 32]) {
      const rates = [];
      for (let r = 0; r < 3; r++) {
        const part = s.slice(r * third, (r + 1) * third);
        const t = performance.now();
        for (let i = 0; i < part.length; i += batch) await rag.embed(part.slice(i, i + batch));
        rates.push(part.length / ((performance.now() - t) / 1000));
      }
      out[batch] = med(rates);
    }
    return out;
  }, sentences);
  const corpus = JSON.parse(readFileSync(join(SHARED, 'data/hotpotqa/train100_corpus.json'), 'utf8'));
  const docs = Object.keys(corpus).slice(0, 200).map((t, i) => ({ id: String(i), title: t, text: corpus[t].join(''), format: 'text' }));
  const ingest = await page.evaluate(async (docs) => {
    const t = performance.now();
    await window.webragDemo.rag.add(docs);
    return docs.length / ((performance.now() - t) / 1000);
  }, docs);
  const questions = JSON.parse(readFileSync(join(SHARED, 'data/hotpotqa/train100.json'), 'utf8')).map((q) => q.question);
  const lat = await page.evaluate(async (qs) => {
    const rag = window.webragDemo.rag;
    const t = [];
    for (const q of qs) {
      const a = performance.now(); await rag.search(q, { k: 10, mode: 'bm25' }); const b = performance.now();
      t.push(b - a);
    }
    t.sort((a, b) => a - b);
    return { p50: t[Math.floor(t.length * 0.5)], p95: t[Math.floor((t.length - 1) * 0.95)] };
  }, questions);
  // All 994 passages, graph on, per precision: stage split from the progress events (each
  // interval counts for the phase of the event that ends it: 'parse' = parse, chunk and count
  // tokens; 'embed' = the chunks' forward passes; 'graph' = the mind-map nodes' forward passes;
  // 'store' = mind maps planned into the graph; 'done' = the commit to IndexedDB and the
  // in-memory indexes), and BM25 searches sent every 50 ms while the add runs.
  const all = Object.keys(corpus).map((t, i) => ({ id: String(i), title: t, text: corpus[t].join(''), format: 'text' }));
  const runs = [];
  // The old path (f32 in the engine's worker, a forward pass per mind-map node) next to late
  // chunking in the engine's worker, then late chunking on the embedding workers (every core,
  // the default) at each precision.
  const configs = [
    { precision: 'f32', workers: 0, late: false },
    { precision: 'f32', workers: 0, late: true },
    { precision: 'f32', late: true },
    { precision: 'int8', late: true },
  ];
  for (const [i, c] of configs.entries()) {
    const p = await browser.ctx.newPage();
    p.on('pageerror', (e) => console.error('pageerror:', e.message));
    await p.goto(`${server.url}/www/style.css`);
    runs.push(await p.evaluate(async ({ docs, q, c, name }) => {
      const { WebRag } = await import('/pkg/index.js');
      const rag = await WebRag.open({
        name, model: '/.models/all-MiniLM-L6-v2/', device: 'cpu', precision: c.precision, workers: c.workers,
        options: { graph: { lateChunking: c.late } },
      });
      const info = await rag.embedder();
      const stages = {};
      let last = performance.now();
      const onProgress = (e) => { const now = performance.now(); stages[e.phase] = (stages[e.phase] ?? 0) + (now - last); last = now; };
      const lat = [];
      let running = true;
      const searching = (async () => {
        while (running) {
          const a = performance.now(); await rag.search(q, { k: 10, mode: 'bm25' }); lat.push(performance.now() - a);
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      const t = performance.now();
      await rag.add(docs, { onProgress });
      const secs = (performance.now() - t) / 1000;
      running = false;
      await searching;
      lat.sort((a, b) => a - b);
      const after = await rag.embedder();
      // Nearest-rank p95 (with few samples, the slowest of them).
      const p95 = lat[Math.max(0, Math.ceil(lat.length * 0.95) - 1)];
      return { late: c.late, precision: info.precision, threads: info.threads, workerMemory: after.workerMemoryBytes, secs, stages, searches: lat.length, p95, max: lat[lat.length - 1] };
    }, { docs: all, q: questions[0], c, name: `bench-ingest-${i}` }));
    await p.close();
  }
  const wasm = readFileSync(join(ROOT, 'pkg/webrag_bg.wasm'));
  const cpu = (await import('node:os')).cpus();
  console.log(`CPU: ${cpu[0]?.model ?? 'unknown'}, ${cpu.length} logical cores`);
  console.log('| figure | browser (headless Chromium, wasm; 1 thread unless stated) |');
  console.log('|---|---|');
  console.log(`| page load to ready (model fetch + wasm init + IndexedDB open), ms | ${ready} |`);
  console.log(`| embedding, batch 1, 1,000 sentences: sentences/s (median of 3) | ${emb[1].toFixed(1)} |`);
  console.log(`| embedding, batch 32, 1,000 sentences: sentences/s (median of 3) | ${emb[32].toFixed(1)} |`);
  console.log(`| ingest, 200 HotpotQA passages: documents/s | ${ingest.toFixed(1)} |`);
  console.log(`| search latency bm25 k=10 over 200 docs incl. worker round trip: p50 / p95 ms | ${lat.p50.toFixed(2)} / ${lat.p95.toFixed(2)} |`);
  for (const r of runs) {
    const st = ['parse', 'embed', 'graph', 'store', 'done'].map((k) => ((r.stages[k] ?? 0) / 1000).toFixed(1)).join(' / ');
    const how = r.workerMemory == null ? 'in the engine\'s worker' : `${r.threads} embedding worker(s), ${(r.workerMemory / 2 ** 20).toFixed(0)} MiB wasm memory each`;
    const facts = r.late ? 'facts late-chunked' : 'a pass per fact';
    console.log(`| ingest, all ${all.length} HotpotQA passages, graph on, ${r.precision}, ${facts}, ${how}: documents/s | ${(all.length / r.secs).toFixed(1)} (${r.secs.toFixed(1)} s) |`);
    console.log(`| … of which parse / embed chunks / embed mind-map nodes / plan graph / commit, s | ${st} |`);
    console.log(`| … BM25 searches sent during it (one at a time, 50 ms apart): count, p95 / max ms | ${r.searches}, ${r.p95.toFixed(0)} / ${r.max.toFixed(0)} |`);
  }
  const x = (r) => `${(runs[0].secs / r.secs).toFixed(2)}×`;
  console.log(`| ingest speed-up over the old path (f32, a pass per fact, engine's worker): late chunking / + workers f32 / + workers int8 | ${x(runs[1])} / ${x(runs[2])} / ${x(runs[3])} |`);
  console.log(`| optimised .wasm: bytes / gzip -9 bytes | ${statSync(join(ROOT, 'pkg/webrag_bg.wasm')).size} / ${gzipSync(wasm, { level: 9 }).length} |`);
} finally {
  await browser.close();
  server.stop();
}
