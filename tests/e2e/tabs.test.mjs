// End-to-end: two tabs on one knowledge base, and a worker that dies.
// - Two pages of one browser profile open the same knowledge base and, for a minute, interleave
//   add / remove / search (graph modes included) as fast as they can: no call fails, both end
//   with the same documents and the same answers, and a third page opens it (docs/api.md, "Two
//   tabs": Web Locks, the generation checked in every write transaction, BroadcastChannel).
// - A panic inside the engine rejects the calls in flight with WORKER_FAILED at once, and a
//   fresh worker opens the knowledge base again: what was stored is all there.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launch } from './harness.mjs';

let server;
before(async () => { server = await startServer(23000 + Math.floor(Math.random() * 1000)); });
after(() => server?.stop());

const MODEL = '/.models/all-MiniLM-L6-v2/';
const SECONDS = Number(process.env.WEBRAG_TABS_SECONDS ?? 60);

async function blankPage(browser) {
  const page = await browser.ctx.newPage();
  page.on('pageerror', (e) => console.error('pageerror:', e.message));
  await page.goto(`${server.url}/www/style.css`);
  return page;
}

// Runs in a page: opens `name`, then for `ms` adds, replaces, removes and searches documents of
// one shared pool (ids with odd characters; one title, so their topics fuse across documents).
const HAMMER = async ({ name, model, ms, seed }) => {
  const { WebRag } = await import('/pkg/index.js');
  const events = [];
  const rag = window.rag = await WebRag.open({ name, model, device: 'hashing', onEvent: (e) => events.push(e.type) });
  let s = seed;
  const rand = (n) => { s = (s * 1103515245 + 12345) % 2147483648; return s % n; };
  const counts = { add: 0, remove: 0, search: 0 };
  const errors = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const i = rand(8);
    const id = `pool|${i} #x/${i}?`;
    try {
      const r = rand(10);
      if (r < 4) {
        await rag.add([{ id, text: `# Sourdough starter\n\n## Feeding ${i}\n\nFeed the starter flour and water, version ${rand(3)} of note ${i}.` }]);
        counts.add++;
      } else if (r < 7) {
        await rag.remove([id]);
        counts.remove++;
      } else {
        await rag.search('starter feeding flour', { k: 5, mode: ['hybrid', 'graph', 'hybrid+graph'][rand(3)] });
        counts.search++;
      }
    } catch (e) {
      errors.push(`${e.code}: ${e.message}`);
    }
  }
  return { counts, errors, changed: events.filter((t) => t === 'changed').length };
};

const STATE = async () => {
  const docs = (await window.rag.documents()).map((d) => `${d.id} ${d.sourceHash}`).sort();
  const hits = [];
  // Every hit (k covers the whole pool), BM25's with its score: the order of equal scores is
  // free, and fused scores follow that order.
  for (const mode of ['bm25', 'hybrid', 'graph']) {
    hits.push((await window.rag.search('starter feeding flour', { k: 50, mode })).map((h) => (mode === 'bm25' ? `${h.chunkId} ${h.score.toFixed(4)}` : h.chunkId)).sort());
  }
  return { docs, hits };
};

test('two tabs interleaving writes for a minute: no error, the same content, a clean reopen', { timeout: 600_000 }, async () => {
  const browser = await launch({ webgpu: false });
  try {
    const [a, b] = [await blankPage(browser), await blankPage(browser)];
    const ms = SECONDS * 1000;
    const [ra, rb] = await Promise.all([
      a.evaluate(HAMMER, { name: 'shared', model: MODEL, ms, seed: 1 }),
      b.evaluate(HAMMER, { name: 'shared', model: MODEL, ms, seed: 2 }),
    ]);
    console.log(`# tab A ${JSON.stringify(ra.counts)} heard ${ra.changed} changes; tab B ${JSON.stringify(rb.counts)} heard ${rb.changed} changes`);
    assert.deepEqual(ra.errors, [], 'tab A: no call failed');
    assert.deepEqual(rb.errors, [], 'tab B: no call failed');
    for (const r of [ra, rb]) assert.ok(r.counts.add > 5 && r.counts.remove > 5 && r.counts.search > 5, `both tabs wrote and read: ${JSON.stringify(r.counts)}`);
    assert.ok(ra.changed + rb.changed > 0, 'the tabs heard of each other\'s commits');
    await new Promise((r) => setTimeout(r, 500));
    const [sa, sb] = [await a.evaluate(STATE), await b.evaluate(STATE)];
    assert.deepEqual(sa, sb, 'both tabs hold the same content');
    const c = await blankPage(browser);
    const sc = await c.evaluate(async ({ model, state }) => {
      const { WebRag } = await import('/pkg/index.js');
      window.rag = await WebRag.open({ name: 'shared', model, device: 'hashing' });
      return (0, eval)(`(${state})`)();
    }, { model: MODEL, state: STATE.toString() });
    assert.deepEqual(sc, sa, 'a fresh open agrees');
  } finally {
    await browser.close();
  }
});

test('a panic in the engine: WORKER_FAILED at once, then a fresh worker over the same store', { timeout: 300_000 }, async () => {
  const browser = await launch({ webgpu: false });
  try {
    const page = await blankPage(browser);
    const r = await page.evaluate(async ({ model }) => {
      const { WebRag } = await import('/pkg/index.js');
      const { testHooks } = await import('/pkg/testing.js');
      const events = [];
      const rag = await WebRag.open({ name: 'panics', model, device: 'hashing', onEvent: (e) => events.push(e) });
      await rag.add([{ id: 'owls.md', text: '# Owls\n\nOwls hunt mice at night.' }]);
      const t0 = performance.now();
      // The rejection names the operation it ended (`… (during search)`).
      const outcome = (p) => p.then(() => 'resolved', (e) => `${e.name} ${e.code} ${/\(during (\w+)\)$/.exec(e.message)?.[1]}`);
      const [panicked, queued] = await Promise.all([outcome(testHooks(rag).panic()), outcome(rag.search('owls', { k: 1 }))]);
      const ms = performance.now() - t0;
      const hits = await rag.search('owls hunt', { k: 1, mode: 'bm25' });
      const added = await rag.add([{ id: 'tea.md', text: 'Green tea steeps at 80 degrees.' }]);
      return { panicked, queued, ms, hits: hits.map((h) => h.docId), added: added.added, events: events.map((e) => e.code ?? e.type), docs: (await rag.stats()).documents };
    }, { model: MODEL });
    assert.equal(r.panicked, 'WebRagError WORKER_FAILED panicForTesting');
    assert.equal(r.queued, 'WebRagError WORKER_FAILED search', 'the call queued behind it rejects too, not left waiting');
    assert.ok(r.ms < 5000, `rejected within ${r.ms} ms`);
    assert.deepEqual(r.hits, ['owls.md'], 'the fresh worker reads what was stored');
    assert.deepEqual(r.added, ['tea.md']);
    assert.equal(r.docs, 2);
    assert.deepEqual(r.events.filter((e) => e === 'WORKER_FAILED' || e === 'restarted'), ['WORKER_FAILED', 'restarted']);
  } finally {
    await browser.close();
  }
});

test('a worker that never starts: open rejects with WORKER_FAILED after startTimeoutMs, and a bad startTimeoutMs is INVALID_OPTION', { timeout: 120_000 }, async () => {
  const browser = await launch({ webgpu: false });
  try {
    const page = await blankPage(browser);
    const r = await page.evaluate(async ({ model }) => {
      const { WebRag } = await import('/pkg/index.js');
      const outcome = (p) => p.then(() => 'resolved', (e) => `${e.name} ${e.code}: ${e.message}`);
      const t0 = performance.now();
      const silent = await outcome(WebRag.open({ name: 'silent', model, device: 'hashing', workerUrl: '/tests/e2e/silent-worker.js', startTimeoutMs: 800 }));
      const ms = performance.now() - t0;
      const bad = await Promise.all([0, 1.5, '100', 600_001].map((v) => outcome(WebRag.open({ name: 'x', model, device: 'hashing', startTimeoutMs: v }))));
      // The default still starts the real worker.
      const rag = await WebRag.open({ name: 'started', model, device: 'hashing', startTimeoutMs: 60_000 });
      const docs = (await rag.stats()).documents;
      return { silent, ms, bad, docs };
    }, { model: MODEL });
    assert.match(r.silent, /^WebRagError WORKER_FAILED: the webrag worker at .*silent-worker\.js did not start within 800 ms$/);
    assert.ok(r.ms >= 750 && r.ms < 10_000, `gave up after ${r.ms} ms`);
    for (const b of r.bad) assert.match(b, /^InputError INVALID_OPTION: option startTimeoutMs: /);
    assert.equal(r.docs, 0);
  } finally {
    await browser.close();
  }
});
