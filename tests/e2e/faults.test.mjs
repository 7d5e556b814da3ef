// End-to-end: storage faults in the real browser. After each, a reopen holds all of the batch or
// none of it, and the error code says what happened.
// - An IndexedDB transaction aborted mid-batch (`testHooks(rag).abortNextCommit`: the real
//   `IDBTransaction.abort()` after some of the writes): STORE_ABORTED, nothing of the batch.
// - A quota too small for the batch (the DevTools protocol's Storage.overrideQuotaForOrigin):
//   QUOTA_EXCEEDED, nothing of the batch; a small add still fits afterwards.
// - The page closed while a batch is being stored: the reopened knowledge base holds the batch
//   whole or not at all, and its chunk counts agree with its documents.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launch } from './harness.mjs';

let server;
before(async () => { server = await startServer(25000 + Math.floor(Math.random() * 1000)); });
after(() => server?.stop());

const MODEL = '/.models/all-MiniLM-L6-v2/';
const doc = (i, words = 40) => ({ id: `batch/${i}.md`, text: `# Note ${i}\n\n${`Sourdough starter feeding schedule ${i}. `.repeat(words)}` });

async function blankPage(browser) {
  const page = await browser.ctx.newPage();
  page.on('pageerror', (e) => console.error('pageerror:', e.message));
  await page.goto(`${server.url}/www/style.css`);
  return page;
}

// Opens `name` in a fresh page and returns its documents' ids and whether its counts agree.
async function reopen(browser, name, model = MODEL) {
  const page = await blankPage(browser);
  const r = await page.evaluate(async ({ name, model }) => {
    const { WebRag } = await import('/pkg/index.js');
    const rag = await WebRag.open({ name, model, device: 'hashing' });
    const docs = await rag.documents();
    const stats = await rag.stats();
    const hits = await rag.search('sourdough starter feeding', { k: 50, mode: 'bm25' });
    rag.close();
    return { ids: docs.map((d) => d.id).sort(), chunks: stats.chunks, counted: docs.reduce((n, d) => n + d.chunkCount, 0), hitDocs: [...new Set(hits.map((h) => h.docId))].sort() };
  }, { name, model });
  await page.close();
  return r;
}

test('an IndexedDB transaction aborted mid-batch: STORE_ABORTED and none of the batch', { timeout: 300_000 }, async () => {
  const browser = await launch({ webgpu: false });
  try {
    const page = await blankPage(browser);
    const r = await page.evaluate(async ({ model, batch }) => {
      const { WebRag } = await import('/pkg/index.js');
      const rag = await WebRag.open({ name: 'abort', model, device: 'hashing' });
      await rag.add([{ id: 'kept.md', text: '# Kept\n\nThis note was stored before the fault.' }]);
      await rag.maintain({ force: true });
      await (await import('/pkg/testing.js')).testHooks(rag).abortNextCommit(7);
      const err = await rag.add(batch).then(() => null, (e) => `${e.name} ${e.code}`);
      const after = (await rag.documents()).map((d) => d.id);
      const again = await rag.add(batch);
      rag.close();
      return { err, after, again: again.added.length };
    }, { model: MODEL, batch: [doc(1), doc(2), doc(3)] });
    assert.equal(r.err, 'StoreError STORE_ABORTED');
    assert.deepEqual(r.after, ['kept.md'], 'the engine kept its view: none of the batch');
    assert.equal(r.again, 3, 'the same batch goes through afterwards');
    const back = await reopen(browser, 'abort');
    assert.deepEqual(back.ids, ['batch/1.md', 'batch/2.md', 'batch/3.md', 'kept.md']);
    assert.equal(back.chunks, back.counted);
  } finally {
    await browser.close();
  }
});

test('a quota too small for the batch: QUOTA_EXCEEDED and none of the batch', { timeout: 300_000 }, async () => {
  const browser = await launch({ webgpu: false });
  try {
    const page = await blankPage(browser);
    // The quota is set before anything is stored (the model is not cached: `cache: false`).
    const cdp = await browser.ctx.newCDPSession(page);
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: server.url, quotaSize: 1024 * 1024 });
    // ≈ 1 MB of text that does not compress (IndexedDB compresses values), and its vectors.
    let seed = 7;
    const word = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed.toString(36); };
    const batch = Array.from({ length: 120 }, (_, i) => ({ id: `batch/${i}.md`, text: Array.from({ length: 1200 }, word).join(' ') }));
    const r = await page.evaluate(async ({ model, batch }) => {
      const { WebRag } = await import('/pkg/index.js');
      const rag = await WebRag.open({ name: 'quota', model: { url: model, cache: false }, device: 'hashing' });
      await rag.add([{ id: 'kept.md', text: '# Kept\n\nThis note was stored before the batch.' }]);
      const err = await rag.add(batch).then(() => null, (e) => `${e.name} ${e.code}: ${e.message}`);
      const after = (await rag.documents()).length;
      const small = await rag.add([{ id: 'small.md', text: 'A short note still fits.' }]).then((x) => x.added.length, (e) => e.code);
      rag.close();
      return { err, after, small };
    }, { model: MODEL, batch });
    assert.match(r.err ?? '', /^StoreError QUOTA_EXCEEDED/, `the error says the quota: ${r.err}`);
    assert.equal(r.after, 1, 'none of the batch');
    assert.equal(r.small, 1, 'a small add fits');
    const back = await reopen(browser, 'quota', { url: MODEL, cache: false });
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: server.url });
    assert.deepEqual(back.ids, ['kept.md', 'small.md']);
    assert.equal(back.chunks, back.counted);
  } finally {
    await browser.close();
  }
});

test('the page closed while a batch is stored: all of it or none after a reopen', { timeout: 300_000 }, async () => {
  const browser = await launch({ webgpu: false });
  try {
    const outcomes = [];
    for (let round = 0; round < 3; round++) {
      const page = await blankPage(browser);
      const storing = new Promise((resolve) => page.on('console', (m) => { if (m.text() === 'STORING') resolve(); }));
      const batch = Array.from({ length: 60 }, (_, i) => doc(100 * round + i, 60));
      page.evaluate(async ({ model, batch, round }) => {
        const { WebRag } = await import('/pkg/index.js');
        const rag = await WebRag.open({ name: 'closed', model, device: 'hashing' });
        if (round === 0) await rag.add([{ id: 'kept.md', text: '# Kept\n\nStored before any close.' }]);
        await rag.add(batch, { onProgress: (p) => { if (p.phase === 'store') console.log('STORING'); } });
      }, { model: MODEL, batch, round }).catch(() => {});
      await storing;
      await page.close();
      const back = await reopen(browser, 'closed');
      const stored = batch.filter((d) => back.ids.includes(d.id)).length;
      assert.ok(stored === 0 || stored === batch.length, `round ${round}: ${stored} of ${batch.length} documents of the batch`);
      assert.ok(back.ids.includes('kept.md'), 'what was stored before stays');
      assert.equal(back.chunks, back.counted, 'chunks agree with their documents');
      outcomes.push(stored === 0 ? 'none' : 'all');
    }
    console.log(`# page closed while storing: ${outcomes.join(', ')}`);
  } finally {
    await browser.close();
  }
});
