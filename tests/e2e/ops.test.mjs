// The worker operations and error codes, written in four places, agree (no browser needed; reads
// the sources and the wasm-bindgen declarations `./webrag.sh build` wrote to pkg/):
// - the worker's table (src/web/js/worker.js `OPS`: each operation with its run, lock, upkeep and
//   model facts, defined there once) is exactly the set of operations the client
//   posts (client.js `#call('…')`, and the tests' fault hooks through `testHooks`);
// - index.d.ts declares a WebRag method for each but the fault hooks, and docs/api.md names
//   each; the fault hooks are in neither (test-only: testing.js);
// - WebRagCore (pkg/webrag.d.ts, the full build) implements each; the search build
//   (pkg/search/webrag.d.ts) leaves out only the operations search.js says it leaves out;
// - every error code the engine (src/error.rs), the worker and the client can produce is in
//   index.d.ts and docs/api.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './harness.mjs';

const read = (p) => readFileSync(join(ROOT, p), 'utf8');
const block = (text, start, end) => {
  const i = text.indexOf(start);
  assert.ok(i >= 0, `${start} not found`);
  return text.slice(i, text.indexOf(end, i));
};

const worker = read('src/web/js/worker.js');
const OPS = [...block(worker, 'const OPS = {', '\n};').matchAll(/^ {2}(\w+): /gm)].map((m) => m[1]).sort();
const clientJs = read('src/web/js/client.js');
// The fault hooks of the tests, posted through `testHooks` (testing.js), not by WebRag's methods.
const TEST_OPS = new Set([...clientJs.matchAll(/callWorker\(rag, '(\w+)'/g)].map((m) => m[1]));
const CLIENT = [...new Set([...clientJs.matchAll(/#(?:call|post)\('(\w+)'/g)].map((m) => m[1]).concat([...TEST_OPS]))].sort();
const coreMethods = (dts) => new Set([...block(dts, 'export class WebRagCore', '\n}').matchAll(/^ {4}(?:static )?(\w+)\(/gm)].map((m) => m[1]));

test('the worker dispatches exactly the operations the client posts', () => {
  assert.ok(OPS.length >= 25, `the table was read (${OPS.length} operations)`);
  assert.deepEqual(CLIENT, OPS);
});

test('every operation of the worker table says how it runs', () => {
  const table = block(worker, 'const OPS = {', '\n};');
  const locks = Object.fromEntries([...table.matchAll(/^ {2}(\w+): \{\s*lock: '(\w+)'/gm)].map((m) => [m[1], m[2]]));
  assert.deepEqual(Object.keys(locks).sort(), OPS, 'each entry starts with its lock');
  for (const [op, lock] of Object.entries(locks)) assert.ok(['open', 'read', 'commit', 'detached'].includes(lock), `${op}: lock ${lock}`);
  // The writes run under the lock; a search never waits for it.
  for (const op of ['add', 'remove', 'clear', 'importKb', 'enrich', 'forget']) assert.notEqual(locks[op], 'read', op);
  assert.equal(locks.search, 'read');
});

test('index.d.ts declares, and docs/api.md names, a method for every operation', () => {
  const dts = block(read('src/web/js/index.d.ts'), 'export class WebRag ', '\n}');
  const declared = new Set([...dts.matchAll(/^ {2}(?:static )?(\w+)\(/gm)].map((m) => m[1]));
  const api = read('docs/api.md');
  assert.ok(TEST_OPS.size >= 3, `the test hooks were read (${[...TEST_OPS]})`);
  for (const op of OPS.filter((o) => !TEST_OPS.has(o))) {
    assert.ok(declared.has(op), `index.d.ts declares WebRag.${op}`);
    assert.ok(api.includes(`${op}(`), `docs/api.md names ${op}(`);
  }
  // The test hooks are no part of the published class or its documentation.
  for (const op of TEST_OPS) {
    assert.ok(!declared.has(op), `index.d.ts leaves out the test hook ${op}`);
    assert.ok(!clientJs.includes(`  ${op}(`), `WebRag has no method ${op}`);
  }
  assert.match(read('src/web/js/testing.js'), /export \{ testHooks \} from '\.\/client\.js'/);
});

test('WebRagCore implements every operation; the search build leaves out only what it says', () => {
  const full = coreMethods(read('pkg/webrag.d.ts'));
  for (const op of OPS) assert.ok(full.has(op), `WebRagCore.${op} in the full build`);
  const search = coreMethods(read('pkg/search/webrag.d.ts'));
  const missing = OPS.filter((op) => !search.has(op));
  const said = /operations it leaves out \(([^)]*)\)/.exec(read('src/web/js/search.js').replace(/\n\/\/ /g, ' '))[1].split(',').map((s) => s.trim());
  assert.deepEqual(missing.sort(), said.sort(), 'search.js names what webrag/search leaves out');
});

test('every error code is declared in index.d.ts and documented in docs/api.md', () => {
  const engine = [...read('src/error.rs').matchAll(/=> "([A-Z][A-Z0-9_]+)"/g)].map((m) => m[1]);
  const js = [...`${worker}${read('src/web/js/client.js')}`.matchAll(/code: '([A-Z][A-Z0-9_]+)'|, '([A-Z][A-Z0-9_]+)'\)/g)].map((m) => m[1] ?? m[2]);
  const codes = [...new Set([...engine, ...js])].sort();
  assert.ok(codes.length > 40, `codes were read (${codes.length})`);
  const dts = read('src/web/js/index.d.ts');
  const api = read('docs/api.md');
  const missing = codes.filter((c) => !dts.includes(c)).map((c) => `index.d.ts: ${c}`).concat(codes.filter((c) => !api.includes(c)).map((c) => `docs/api.md: ${c}`));
  assert.deepEqual(missing, []);
});

test('every error code is produced by a test (by its code or its Rust variant)', () => {
  const err = read('src/error.rs');
  const pairs = [...err.matchAll(/(\w+Error)::(\w+)\s*(?:\{ \.\. \})?\s*=>\s*"([A-Z][A-Z0-9_]+)"/g)].map((m) => [`${m[1]}::${m[2]}`, m[3]]);
  assert.ok(pairs.length > 35, `codes were read (${pairs.length})`);
  const js = ['NOT_OPEN', 'WORKER_FAILED', 'INTERNAL', 'NOT_IN_BUILD', 'SNAPSHOT_UNAVAILABLE', 'SNAPSHOT_CORRUPT', 'SNAPSHOT_VERSION', 'SNAPSHOT_NO_EMBEDDER', 'SNAPSHOT_UNVERIFIED'];
  const walk = (dir) => readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : /\.(rs|mjs)$/.test(d.name) ? [join(dir, d.name)] : []));
  const tests = [...walk('tests'), ...walk('wasm-tests')].filter((f) => !f.endsWith('ops.test.mjs')).map(read).join('\n');
  const missing = pairs.filter(([variant, code]) => !tests.includes(code) && !tests.includes(variant)).map(([, code]) => code)
    .concat(js.filter((code) => !tests.includes(code)));
  assert.deepEqual(missing, []);
});
