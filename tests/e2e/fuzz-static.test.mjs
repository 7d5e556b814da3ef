// Fuzzing webrag/static's snapshot decoders (fast-check): a real 12-page snapshot, served from
// memory by a `fetch` that hands out mutated files — a byte changed, the file cut, a manifest
// field replaced with a value of another type — to StaticSearch.open and to keyword, semantic
// and graph search. Half the cases run without `crypto.subtle`, so the corrupted bytes reach the
// decoders instead of failing the hash check. Every outcome must be results, or a SnapshotError
// with its code (thrown, or reported in `errors`): never a TypeError, a RangeError or a hang.
//
// Runs for WEBRAG_FUZZ_SECONDS (default 5; `./webrag.sh fuzz` gives 600) and prints
// `fuzz static_snapshot: <runs> executions in <s> s, 0 failures`.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { ROOT, needsShared, cli } from './harness.mjs';

// The fuzzed snapshot is 12 pages of the CRUD news corpus: without `../shared` these tests skip.
const NO_SITE = needsShared('data/crud_news');
import { StaticSearch, SnapshotError } from '../../src/web/js/static.js';

const SITE = join(ROOT, 'target/fuzz-site');
const SECONDS = Number(process.env.WEBRAG_FUZZ_SECONDS ?? 5);
const files = new Map();
// The global `crypto`, put back after the cases that hide it (an interrupted case may restore it late).
const CRYPTO = Object.getOwnPropertyDescriptor(globalThis, 'crypto');

before(() => {
  if (NO_SITE) return;
  execFileSync(process.execPath, [join(ROOT, 'tests/site/gen-crud-site.mjs'), SITE, '--limit', '12', '--fields'], { stdio: 'inherit' });
  execFileSync(...cli(['index', SITE, '--out', join(SITE, 'webrag')]), { cwd: ROOT, stdio: 'inherit' });
  const walk = (dir) => readdirSync(dir).forEach((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) walk(p); else files.set(relative(join(SITE, 'webrag'), p), new Uint8Array(readFileSync(p)));
  });
  walk(join(SITE, 'webrag'));
});

const BASE = 'https://site.invalid/webrag/';
const VALUES = [null, 0, -1, 1e9, 2 ** 53, 0.5, '', 'x', [], [1, 2], {}, { a: 1 }, true, NaN];

// A mutated copy of one file: `how` 0 sets a byte, 1 cuts the file, 2 (JSON files) replaces a field.
function mutate(bytes, name, { how, at, byte, path, value }) {
  let m;
  try { m = how === 2 && name.endsWith('.json') ? JSON.parse(new TextDecoder().decode(bytes)) : undefined; } catch { m = undefined; }
  if (m !== undefined) {
    const keys = []; // every [object, key] reachable, to pick one
    const walk = (o) => { if (o && typeof o === 'object') for (const k of Object.keys(o)) { keys.push([o, k]); walk(o[k]); } };
    walk(m);
    if (keys.length) { const [o, k] = keys[path % keys.length]; o[k] = VALUES[value % VALUES.length]; }
    return new TextEncoder().encode(JSON.stringify(m));
  }
  const out = bytes.slice();
  if (!out.length) return out;
  if (how === 1) return out.slice(0, at % out.length);
  out[at % out.length] = byte;
  return out;
}

const typed = (e) => e instanceof SnapshotError && typeof e.code === 'string' && e.code.startsWith('SNAPSHOT_');

test('static snapshot decoders: mutated files give results or SnapshotErrors, nothing else', { timeout: 3_600_000, skip: NO_SITE }, async () => {
  const names = [...files.keys()].sort();
  assert.ok(names.includes('manifest.json') && names.length > 5, `the snapshot was read (${names.length} files)`);
  const dim = JSON.parse(new TextDecoder().decode(files.get('manifest.json'))).model?.dim ?? 384;
  let runs = 0;
  const outcomes = { results: 0, reported: 0, thrown: 0 };
  const start = performance.now();
  const subtle = CRYPTO;
  const prop = fc.asyncProperty(
    fc.array(fc.record({ file: fc.nat(), how: fc.nat(2), at: fc.nat(), byte: fc.nat(255), path: fc.nat(), value: fc.nat() }), { minLength: 1, maxLength: 3 }),
    fc.oneof(fc.constantFrom('新闻', '经济 发展', '"中国 市场"', '2023'), fc.string({ maxLength: 12 })),
    fc.boolean(),
    async (muts, query, noHashCheck) => {
      runs += 1;
      const served = new Map(files);
      for (const m of muts) { const name = names[m.file % names.length]; served.set(name, mutate(served.get(name), name, m)); }
      const fetchFn = async (url) => {
        const name = String(url).slice(BASE.length);
        const b = served.get(name);
        return b ? new Response(b) : new Response('not found', { status: 404 });
      };
      if (noHashCheck) Object.defineProperty(globalThis, 'crypto', { value: undefined, configurable: true, writable: true });
      try {
        let site;
        try { site = await StaticSearch.open(BASE, { fetch: fetchFn, offline: false }); } catch (e) {
          if (!typed(e)) throw new Error(`open threw ${e?.name}: ${e?.message}`);
          outcomes.thrown += 1;
          return;
        }
        site.setEmbedder?.(async (texts) => texts.map((t) => Array.from({ length: dim }, (_, i) => Math.sin(i + t.length))));
        for (const opts of [{ k: 5, mode: 'keyword' }, { k: 5, mode: 'hybrid' }]) {
          try {
            const r = await site.search(query, opts);
            if (!Array.isArray(r.results) || !r.errors.every(typed)) throw new Error(`bad errors: ${r.errors.map((e) => `${e?.name}: ${e?.message}`)}`);
            outcomes[r.errors.length ? 'reported' : 'results'] += 1;
          } catch (e) {
            if (!typed(e)) throw new Error(`search threw ${e?.name}: ${e?.message}\n${e?.stack}`);
            outcomes.thrown += 1;
          }
        }
      } finally {
        if (noHashCheck) Object.defineProperty(globalThis, 'crypto', subtle);
      }
    },
  );
  const details = await fc.check(prop, { numRuns: Number.MAX_SAFE_INTEGER, interruptAfterTimeLimit: SECONDS * 1000, markInterruptAsFailure: false, seed: 19 });
  await new Promise((r) => setTimeout(r, 2000)); // a case cut off by the time limit ends
  Object.defineProperty(globalThis, 'crypto', CRYPTO);
  if (details.failed) assert.fail(`fuzz static_snapshot: counterexample ${JSON.stringify(details.counterexample)}: ${details.errorInstance?.message}`);
  console.log(`# fuzz static_snapshot: ${runs} executions in ${((performance.now() - start) / 1000).toFixed(0)} s, 0 failures (${JSON.stringify(outcomes)})`);
  assert.ok(runs > 10);
});

test('typed errors of the loader: SNAPSHOT_NO_EMBEDDER, SNAPSHOT_UNVERIFIED', { skip: NO_SITE }, async () => {
  Object.defineProperty(globalThis, 'crypto', CRYPTO);
  const fetchFn = async (url) => {
    const b = files.get(String(url).slice(BASE.length));
    return b ? new Response(b) : new Response('not found', { status: 404 });
  };
  const site = await StaticSearch.open(BASE, { fetch: fetchFn, offline: false });
  assert.equal(site.integrity, 'sha256');
  await assert.rejects(site.search('新闻', { mode: 'semantic' }), (e) => e instanceof SnapshotError && e.code === 'SNAPSHOT_NO_EMBEDDER');
  Object.defineProperty(globalThis, 'crypto', { value: undefined, configurable: true, writable: true });
  try {
    await assert.rejects(StaticSearch.open(BASE, { fetch: fetchFn, offline: false, requireIntegrity: true }), (e) => e instanceof SnapshotError && e.code === 'SNAPSHOT_UNVERIFIED');
    const unchecked = await StaticSearch.open(BASE, { fetch: fetchFn, offline: false });
    assert.equal(unchecked.integrity, 'unchecked', 'without the option it opens, and says so');
  } finally {
    Object.defineProperty(globalThis, 'crypto', CRYPTO);
  }
});

// Found by static_snapshot: a manifest whose `fragments` is null made every search fail with a
// TypeError per hit; such a manifest is SNAPSHOT_CORRUPT at open.
test('regression: a manifest field of the wrong type or a crafted size is SNAPSHOT_CORRUPT at open', { skip: NO_SITE }, async () => {
  // `model.dim` of 2^40 was a RangeError from the first semantic search (the query vector is
  // made before any file is read), and 1e9 a 4 GB allocation.
  const dims = [2 ** 40, 1e9, 8193].map((dim) => ['model', { ...JSON.parse(new TextDecoder().decode(files.get('manifest.json'))).model, dim }]);
  for (const [field, value] of [['fragments', null], ['terms', { shards: 'x' }], ['model', 3], ['graph', { pgr: null }], ...dims]) {
    const m = JSON.parse(new TextDecoder().decode(files.get('manifest.json')));
    m[field] = value;
    const fetchFn = async (url) => {
      const name = String(url).slice(BASE.length);
      if (name === 'manifest.json') return new Response(JSON.stringify(m));
      const b = files.get(name);
      return b ? new Response(b) : new Response('not found', { status: 404 });
    };
    await assert.rejects(StaticSearch.open(BASE, { fetch: fetchFn, offline: false }), (e) => e instanceof SnapshotError && e.code === 'SNAPSHOT_CORRUPT', field);
  }
});
