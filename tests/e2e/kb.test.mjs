// End-to-end: a knowledge base the user owns, and every older format still opening.
// - exportKb() in one browser profile, importKb() into a fresh one: identical results for every
//   retriever, also after a reload; a bad file rejects with its code and changes nothing;
//   add() reports the answer to navigator.storage.persist().
// - A static site indexed with `webrag index --kb`: a visitor's page imports the snapshot's
//   knowledge-base file into a full knowledge base and searches it offline.
// - The frozen stores of tests/fixtures (schemas 1 to 5, as older builds laid them out in
//   IndexedDB: object stores of that schema, database version 10 × schema) open in this build,
//   migrated; the frozen snapshots (formats 1 to 3) load and search with webrag/static.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, startServer, launch, cli } from './harness.mjs';

let server;
before(async () => { server = await startServer(22000 + Math.floor(Math.random() * 1000)); });
after(() => server?.stop());

const MODEL = '/.models/all-MiniLM-L6-v2/';
const QUERIES = ['what do owls eat', 'rodent nests in grass', 'tea brewing temperature', 'moon landing 1969'];
const MODES = ['bm25', 'dense', 'hybrid', 'graph', 'hybrid+graph'];

async function blankPage(browser) {
  const page = await browser.ctx.newPage();
  page.on('pageerror', (e) => console.error('pageerror:', e.message));
  await page.goto(`${server.url}/www/style.css`);
  return page;
}

// Runs in the page: opens `name` and answers QUERIES × MODES (chunk ids and scores).
const ANSWERS = async ({ name, model, queries, modes }) => {
  const { WebRag } = await import('/pkg/index.js');
  const rag = window.rag ?? (window.rag = await WebRag.open({ name, model, device: 'cpu' }));
  const out = [];
  for (const q of queries) for (const mode of modes) out.push((await rag.search(q, { k: 5, mode })).map((h) => [h.chunkId, h.score]));
  return { out, stats: await rag.stats() };
};

test('exportKb in one browser profile, importKb in a fresh one: the same answers', { timeout: 600_000 }, async () => {
  const a = await launch({ webgpu: false });
  let file, want, persisted;
  try {
    const page = await blankPage(a);
    const r = await page.evaluate(async ({ model }) => {
      const { WebRag } = await import('/pkg/index.js');
      const rag = window.rag = await WebRag.open({ name: 'notes', model, device: 'cpu' });
      const first = await rag.add([
        { id: 'notes/owls.md', text: '# Owls\n\nOwls are birds of prey that hunt at night.\n\n## Diet\n\nOwls often eat the Harvest mouse.' },
        { id: 'a|b #c/d?e f 🦉', text: 'The Harvest mouse is a small rodent of Europe and Asia. It builds woven nests in tall grass.' },
        { id: 'x'.repeat(1024), text: 'Green tea is steeped at about 80 degrees Celsius. Longjing comes from Hangzhou.' },
      ]);
      await rag.maintain({ force: true });
      const second = await rag.add([{ id: 'apollo', text: 'Apollo 11 landed on the Moon in July 1969; Armstrong and Aldrin walked on the surface.' }]);
      const bytes = await rag.exportKb();
      return { first: first.persisted, second: second.persisted, bytes: Array.from(bytes), persistedNow: await navigator.storage.persisted() };
    }, { model: MODEL });
    persisted = r;
    assert.equal(typeof r.first, 'boolean', 'the first add reports the answer to persist()');
    assert.equal(r.second, r.persistedNow, 'later adds report persisted()');
    file = r.bytes;
    want = await page.evaluate(ANSWERS, { name: 'notes', model: MODEL, queries: QUERIES, modes: MODES });
    assert.equal(want.stats.documents, 4);
    assert.ok(want.out.every((hits) => hits.length > 0), 'every retriever finds something');
  } finally { await a.close(); }
  console.error(`exported ${file.length} bytes; persist() answered ${persisted.first}`);

  const b = await launch({ webgpu: false }); // a fresh profile: empty IndexedDB
  try {
    const page = await blankPage(b);
    const imported = await page.evaluate(async ({ model, file }) => {
      const { WebRag } = await import('/pkg/index.js');
      const rag = window.rag = await WebRag.open({ name: 'moved', model, device: 'cpu' });
      const before = await rag.stats();
      const stats = await rag.importKb(new Uint8Array(file));
      // A bad file: typed error, nothing changes.
      const codes = [];
      for (const bad of [new Uint8Array([1, 2, 3]), new Uint8Array(file.slice(0, file.length >> 1))]) {
        try { await rag.importKb(bad); codes.push('resolved'); } catch (e) { codes.push(`${e.name} ${e.code}`); }
      }
      return { before, stats, codes, after: await rag.stats() };
    }, { model: MODEL, file });
    assert.equal(imported.before.documents, 0);
    // The knowledge base's figures; wasmMemoryBytes is the instance's own.
    const kb = ({ wasmMemoryBytes, ...rest }) => (assert.ok(wasmMemoryBytes > 0, 'wasmMemoryBytes'), rest);
    assert.deepEqual(kb(imported.stats), kb(want.stats));
    assert.deepEqual(imported.codes, ['InputError KB_FILE_INVALID', 'InputError KB_FILE_INVALID']);
    assert.deepEqual(kb(imported.after), kb(want.stats));
    const got = await page.evaluate(ANSWERS, { name: 'moved', model: MODEL, queries: QUERIES, modes: MODES });
    assert.deepEqual(got.out, want.out, 'identical results in the fresh profile');
    // After a reload the imported knowledge base is what IndexedDB holds.
    await page.reload();
    const again = await page.evaluate(ANSWERS, { name: 'moved', model: MODEL, queries: QUERIES, modes: MODES });
    assert.deepEqual(again.out, want.out, 'identical results after a reload');
    // The odd ids go as they came: removed one by one, gone after a reload too.
    const odd = ['a|b #c/d?e f 🦉', 'x'.repeat(1024)];
    const removed = await page.evaluate(async (ids) => {
      const out = [];
      for (const id of ids) out.push(await window.rag.remove([id]));
      return { out, docs: (await window.rag.documents()).map((d) => d.id) };
    }, odd);
    assert.deepEqual(removed.out.map((r) => r.removed), odd.map((id) => [id]));
    await page.reload();
    const left = await page.evaluate(async ({ model }) => {
      const { WebRag } = await import('/pkg/index.js');
      const rag = window.rag = await WebRag.open({ name: 'moved', model, device: 'cpu' });
      const hits = [];
      for (const q of ['rodent nests in grass', 'tea brewing temperature']) for (const mode of ['hybrid', 'graph']) hits.push(...(await rag.search(q, { k: 5, mode })).map((h) => h.docId));
      return { docs: (await rag.documents()).map((d) => d.id).sort(), hits: [...new Set(hits)] };
    }, { model: MODEL });
    assert.deepEqual(left.docs, ['apollo', 'notes/owls.md']);
    assert.ok(left.hits.every((id) => left.docs.includes(id)), `no hit of a removed document: ${left.hits}`);
  } finally { await b.close(); }
});

test('stores of every released schema, as older builds wrote them to IndexedDB, open migrated', { timeout: 600_000 }, async () => {
  const browser = await launch({ webgpu: false });
  try {
    const page = await blankPage(browser);
    let first;
    for (const schema of [1, 2, 3, 4, 5]) {
      const fixture = JSON.parse(readFileSync(join(ROOT, `tests/fixtures/store-schema-${schema}.json`), 'utf8'));
      const r = await page.evaluate(async ({ fixture, schema, model }) => {
        const name = `fixture-schema-${schema}`;
        const bytes = { vectors: ['data'], ann: ['data'], memory: ['embedding'], segments: ['data'] };
        await new Promise((ok, fail) => {
          const req = indexedDB.open(name, 10 * schema);
          req.onupgradeneeded = () => { for (const s of Object.keys(fixture)) req.result.createObjectStore(s, { keyPath: 'id' }); };
          req.onerror = () => fail(req.error);
          req.onsuccess = () => {
            const db = req.result;
            const tx = db.transaction(Object.keys(fixture), 'readwrite');
            for (const [s, records] of Object.entries(fixture)) {
              for (const r of records) {
                for (const f of bytes[s] ?? []) if (Array.isArray(r[f])) r[f] = new Uint8Array(r[f]);
                tx.objectStore(s).put(r);
              }
            }
            tx.oncomplete = () => { db.close(); ok(); };
            tx.onerror = () => fail(tx.error);
          };
        });
        const { WebRag } = await import('/pkg/index.js');
        // Opened, searched and closed; then reopened and searched again.
        const session = async () => {
          // lazyOpenChunks 1: the fixtures' 5 chunks are worth a stored base, so the upkeep keeps
          // (or rebuilds) it instead of deleting it as it does below the default 4,096.
          const rag = await WebRag.open({ name, model, device: 'cpu', options: { lazyOpenChunks: 1 } });
          const lazy = (await rag.stats()).lazy;
          const answers = {};
          for (const [q, mode] of [['When did Apollo 11 land on the Moon?', 'hybrid'], ['which language has a borrow checker', 'dense'], ['green tea brewing', 'bm25'], ['Apollo 11 Moon', 'graph']]) {
            answers[`${mode}: ${q}`] = (await rag.search(q, { k: 3, mode, literal: true })).map((h) => h.docId);
          }
          const stats = await rag.stats();
          // What idle time does after the open's writes, brought to its end here: whether the
          // 50 ms idle timer fires in so short a session is a race.
          for (let i = 0; i < 10 && (await rag.maintain()) != null; i++);
          rag.close();
          return { answers, stats, lazy };
        };
        const first = await session();
        const again = await session();
        const version = await new Promise((ok) => { const req = indexedDB.open(name); req.onsuccess = () => { ok(req.result.version); req.result.close(); }; });
        return { ...first, version, again };
      }, { fixture, schema, model: MODEL });
      assert.equal(r.stats.documents, 3, `schema ${schema}`);
      assert.equal(r.stats.chunks, 5, `schema ${schema}`);
      assert.equal(r.version, 50, `schema ${schema}: the database was upgraded`);
      // No fixture records the analyzer version (text::ANALYZER_VERSION, recorded since version
      // 2), so the first open of each is a full one that checks its BM25 postings; the schema-5
      // store's index segments then open lazily (its English postings are those of version 2).
      assert.equal(r.lazy, false, `schema ${schema}: the first open is a full one`);
      if (schema === 5) assert.equal(r.again.lazy, true, 'schema 5: reopened, its index segments open lazily');
      assert.deepEqual(r.again.answers, r.answers, `schema ${schema}: the reopened store answers alike`);
      const top = Object.fromEntries(Object.entries(r.answers).map(([k, v]) => [k, v[0]?.split('/').pop()]));
      assert.deepEqual(top, {
        'hybrid: When did Apollo 11 land on the Moon?': 'moon.txt',
        'dense: which language has a borrow checker': 'rust.md',
        'bm25: green tea brewing': 'tea.md',
        'graph: Apollo 11 Moon': 'moon.txt',
      }, `schema ${schema}`);
      first ??= r.answers;
      assert.deepEqual(r.answers, first, `schema ${schema} answers as schema 1 does`);
    }
  } finally { await browser.close(); }
});

test('snapshots of every format version load and search with webrag/static', { timeout: 300_000 }, async () => {
  const browser = await launch({ webgpu: false });
  try {
    const page = await browser.ctx.newPage(); // site.html maps webrag/static's imports
    await page.goto(`${server.url}/www/site.html?snapshot=../tests/fixtures/snapshot-v3/`);
    for (const v of [1, 2, 3]) {
      const r = await page.evaluate(async ({ base }) => {
        const { StaticSearch } = await import('/pkg/static.js');
        const site = await StaticSearch.open(base);
        const kw = await site.keyword('Apollo lunar surface', { k: 3 });
        const frags = await site.fragments(kw.hits.map((h) => h.chunk));
        const files = await site.files();
        return { version: site.manifest.version, urls: frags.map((f) => f.url), errors: kw.errors.length, files: files.length, graph: !!site.manifest.graph };
      }, { base: `${server.url}/tests/fixtures/snapshot-v${v}/` });
      assert.equal(r.version, v);
      assert.ok(r.files >= 3, `v${v}: every shard is named (${r.files})`);
      assert.equal(r.graph, v === 3, `v${v}: graph shards only from format 3`);
      assert.equal(r.errors, 0, `v${v}`);
      assert.equal(r.urls[0], '/moon.html', `v${v}: ${r.urls}`);
    }
  } finally { await browser.close(); }
});

test('a site snapshot built with --kb imports as a full knowledge base', { timeout: 600_000 }, async () => {
  const site = join(ROOT, 'target/e2e-kb-site');
  rmSync(site, { recursive: true, force: true });
  mkdirSync(site, { recursive: true });
  const pages = {
    'owls.html': ['Owls', 'Owls are birds of prey that hunt at night. Owls often eat the Harvest mouse.'],
    'mouse.html': ['Harvest mouse', 'The Harvest mouse is a small rodent of Europe and Asia. It builds woven nests in tall grass.'],
    'apollo.html': ['Apollo 11', 'Apollo 11 landed on the Moon in July 1969; Armstrong and Aldrin walked on the surface.'],
  };
  for (const [f, [title, body]] of Object.entries(pages)) writeFileSync(join(site, f), `<html><head><title>${title}</title></head><body><h1>${title}</h1><p>${body}</p></body></html>`);
  execFileSync(...cli(['index', site, '--out', join(site, 'webrag'), '--kb']), { cwd: ROOT, stdio: 'inherit' });
  const manifest = JSON.parse(readFileSync(join(site, 'webrag/manifest.json'), 'utf8'));
  assert.match(manifest.kb?.file ?? '', /^kb-[0-9a-f]{8}\.webrag-kb\.gz$/);
  const browser = await launch({ webgpu: false });
  try {
    const page = await blankPage(browser);
    const r = await page.evaluate(async ({ model, base }) => {
      const m = await (await fetch(`${base}manifest.json`)).json();
      const bytes = new Uint8Array(await (await fetch(base + m.kb.file)).arrayBuffer());
      const { WebRag } = await import('/pkg/index.js');
      const rag = await WebRag.open({ name: 'visitor', model, device: 'cpu' });
      const stats = await rag.importKb(bytes);
      const hits = {};
      for (const [q, mode] of [['When did Apollo 11 land on the Moon?', 'hybrid'], ['small rodent nests', 'dense'], ['birds of prey', 'graph']]) {
        hits[q] = (await rag.search(q, { k: 1, mode, literal: true }))[0]?.url;
      }
      return { stats, hits, size: bytes.length, declared: m.kb.bytes, documents: m.documents, chunks: m.chunks };
    }, { model: MODEL, base: `${server.url}/target/e2e-kb-site/webrag/` });
    assert.equal(r.size, r.declared);
    assert.equal(r.stats.documents, r.documents);
    assert.equal(r.stats.chunks, r.chunks);
    assert.deepEqual(r.hits, { 'When did Apollo 11 land on the Moon?': '/apollo.html', 'small rodent nests': '/mouse.html', 'birds of prey': '/owls.html' });
  } finally { await browser.close(); }
});
