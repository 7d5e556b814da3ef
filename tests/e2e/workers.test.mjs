// End-to-end: the CPU path's embedding workers (WebRag.open's `workers`).
// - Vectors and search results from the workers equal those of the engine's own worker
//   (`workers: 0`), bit for bit; `embedder()` reports the threads and the memory per worker.
// - While an `add` runs on the workers, `search` and `stats` answer from the knowledge base as
//   it was before the batch, before the add resolves; writes sent meanwhile wait for it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launch } from './harness.mjs';

let server;
before(async () => { server = await startServer(23000 + Math.floor(Math.random() * 1000)); });
after(() => server?.stop());

const MODEL = '/.models/all-MiniLM-L6-v2/';
const WORDS = 'owl mouse river stone garden engine harbor violin comet orchard lantern glacier tram spice canyon ferry'.split(' ');
// n small documents of made-up sentences (deterministic), each with a heading and a few facts.
const docs = (n, prefix) => Array.from({ length: n }, (_, i) => {
  const w = (k) => WORDS[(i * 7 + k * 3) % WORDS.length];
  return {
    id: `${prefix}${i}`,
    format: 'markdown',
    text: `# The ${w(0)} of ${w(1)} ${i}\n\nThe ${w(2)} watched the ${w(3)} near the ${w(4)}. A ${w(5)} carried ${i} ${w(6)}s across the ${w(7)}.\n\n## Notes\n\n- ${w(8)} and ${w(9)}\n- the ${w(10)} at dawn`,
  };
});

async function blankPage(browser) {
  const page = await browser.ctx.newPage();
  page.on('pageerror', (e) => console.error('pageerror:', e.message));
  await page.goto(`${server.url}/www/style.css`);
  return page;
}

test('embedding workers give the vectors and results of the engine\'s own worker', { timeout: 600_000 }, async () => {
  const b = await launch({ webgpu: false });
  try {
    const page = await blankPage(b);
    const r = await page.evaluate(async ({ model, docs }) => {
      const { WebRag } = await import('/pkg/index.js');
      const out = {};
      for (const workers of [0, 2]) {
        const rag = await WebRag.open({ name: `workers-${workers}`, model, device: 'cpu', workers });
        const before = await rag.embedder();
        await rag.add(docs);
        const vecs = await rag.embed(docs.slice(0, 5).map((d) => d.text));
        const hits = [];
        for (const mode of ['dense', 'hybrid', 'graph']) hits.push((await rag.search('a violin near the harbor', { k: 5, mode })).map((h) => [h.chunkId, h.score]));
        out[workers] = { before, after: await rag.embedder(), vecs, hits, stats: await rag.stats() };
      }
      return out;
    }, { model: MODEL, docs: docs(40, 'd') });
    assert.equal(r[0].after.threads, 1);
    assert.equal(r[0].after.workerMemoryBytes, null);
    assert.equal(r[2].after.threads, 2);
    assert.equal(r[2].before.workerMemoryBytes, null, 'the workers start at the first batch');
    assert.ok(r[2].after.workerMemoryBytes > 10 * 2 ** 20, `memory per worker: ${r[2].after.workerMemoryBytes}`);
    assert.deepEqual(r[2].stats.chunks, r[0].stats.chunks);
    assert.deepEqual(r[2].vecs, r[0].vecs, 'the same forward pass on the workers');
    assert.deepEqual(r[2].hits, r[0].hits);
  } finally {
    await b.close();
  }
});

test('search and stats answer while an add runs on the workers; a write sent meanwhile waits', { timeout: 600_000 }, async () => {
  const b = await launch({ webgpu: false });
  try {
    const page = await blankPage(b);
    const r = await page.evaluate(async ({ model, first, batch }) => {
      const { WebRag } = await import('/pkg/index.js');
      const rag = await WebRag.open({ name: 'workers-during-add', model, device: 'cpu', workers: 2 });
      await rag.add(first);
      const events = [];
      let added = false;
      const adding = rag.add(batch).then((rep) => { added = true; events.push('add'); return rep; });
      // Reads sent during the add answer from the knowledge base as it was.
      await new Promise((r) => setTimeout(r, 200));
      const during = [];
      while (!added && during.length < 5) {
        const hits = await rag.search('violin harbor', { k: 50, mode: 'bm25' });
        const stats = await rag.stats();
        if (!added) during.push({ docs: new Set(hits.map((h) => h.docId)).size, documents: stats.documents });
        await new Promise((r) => setTimeout(r, 50));
      }
      // A write sent now runs after the add (the engine commits one write at a time).
      const removing = rag.remove([first[0].id]).then((rep) => { events.push('remove'); return rep; });
      const report = await adding;
      const removed = await removing;
      return { during, report, removed, events, stats: await rag.stats() };
    }, { model: MODEL, first: docs(10, 'a'), batch: docs(150, 'b') });
    assert.equal(r.during.length, 5, `reads answered during the add: ${r.during.length}`);
    for (const d of r.during) assert.equal(d.documents, 10, 'reads see the knowledge base as it was before the batch');
    assert.equal(r.report.added.length, 150);
    assert.deepEqual(r.events, ['add', 'remove']);
    assert.deepEqual(r.removed.removed, ['a0']);
    assert.equal(r.stats.documents, 159);
  } finally {
    await b.close();
  }
});
