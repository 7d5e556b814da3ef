// The npm package as a consumer gets it: `npm pack` of pkg/, installed from the tarball into a
// fresh project with an empty npm cache (so nothing an earlier command left behind helps), built
// by Vite and by esbuild, each with its default configuration (no extra entry, no copied file:
// Vite emits the worker and the .wasm it finds through `new URL(…, import.meta.url)`; under
// esbuild, which does not follow that pattern, the package falls back to its inlined worker and
// .wasm), served without COOP/COEP headers, and run in headless Chromium: static-site keyword
// search with webrag/static, and a knowledge base with WebRag (add + search in the worker,
// IndexedDB).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createServer } from 'node:http';
import { ROOT, needsShared, startServer, launch, cli } from './harness.mjs';
import { moduleTag } from '../../src/web/js/static-stem.js';

// The test sites are pages of the CRUD news corpus: without `../shared` the tests over them skip.
const NO_SITE = needsShared('data/crud_news');

// Pinned consumer tooling (installed from the registry into the fresh app).
const VITE = '8.3.8';
const ESBUILD = '0.28.2';
const TYPESCRIPT = '5.9.3';
const APP = join(ROOT, 'target/consumer');
let server, browser;

before(async () => {
  rmSync(APP, { recursive: true, force: true });
  mkdirSync(join(APP, 'src'), { recursive: true });
  // The package tarball, as `npm publish` would upload it.
  const out = execFileSync('npm', ['pack', join(ROOT, 'pkg'), '--pack-destination', APP, '--json'], { cwd: APP, encoding: 'utf8' });
  const [{ filename, files }] = JSON.parse(out);
  const shipped = files.map((f) => f.path).sort();
  for (const f of ['README.md', 'ui.js', 'ui.d.ts', 'ui/webrag-ui.js', 'build/webrag.js', 'build/webrag_bg.wasm', 'model/webrag-static.wrs', 'client.js', 'index.d.ts', 'index.js', 'inline.js', 'package.json', 'search.js', 'search.d.ts', 'search/inline.js', 'search/webrag.js', 'search/webrag_bg.wasm', 'search/worker.js', 'search/markup.wasm', 'baseline/webrag.js', 'baseline/webrag_bg.wasm', 'baseline/worker.js', 'baseline/inline.js', 'search/baseline/webrag.js', 'search/baseline/webrag_bg.wasm', 'search/baseline/worker.js', 'search/baseline/inline.js', 'static.d.ts', 'static.js', 'static-fields.js', 'static-format.js', 'static-merge.js', 'static-rank.js', 'static-embed.js', 'static-stem.js', 'static-text.js', 'static-words.js', 'stem/en.wasm', 'stem/el.wasm', 'ui/stem/en.wasm', 'ui/stem/ru.wasm', 'webrag.js', 'webrag_bg.wasm', 'worker.js', 'bin/webrag.mjs', 'model/tokenizer.json']) assert.ok(shipped.includes(f), `${f} is in the tarball: ${shipped}`);
  writeFileSync(join(APP, 'package.json'), JSON.stringify({
    name: 'consumer', private: true, type: 'module',
    dependencies: { webrag: `file:./${filename}` },
    devDependencies: { vite: VITE, esbuild: ESBUILD, typescript: TYPESCRIPT },
  }, null, 2));
  const cache = mkdtempSync(join(tmpdir(), 'webrag-npm-cache-'));
  try {
    execFileSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: APP, stdio: 'inherit', env: { ...process.env, npm_config_cache: cache } });
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
  writeFileSync(join(APP, 'src/app.js'), `
import { WebRag } from 'webrag';
import { WebRag as SearchRag } from 'webrag/search';
import { StaticSearch, analyze } from 'webrag/static';
window.runStatic = async (snapshot, query, mode = 'hybrid') => {
  const site = await StaticSearch.open(snapshot);
  const { results, errors } = await site.search(query, { k: 3, mode });
  return { urls: results.map((r) => r.url), errors: errors.length, terms: analyze(query), bytes: site.transferred.bytes };
};
window.runKb = async (model) => {
  const rag = await WebRag.open({ name: 'consumer-kb', model, device: 'cpu' });
  await rag.add([
    { id: 'owls.md', text: '# Owls\\n\\nOwls hunt small mammals at night and fly silently.' },
    { id: 'tea.md', text: '# Green tea\\n\\nGreen tea leaves are steamed soon after picking.' },
  ]);
  const hits = await rag.search('nocturnal birds of prey', { k: 2, mode: 'dense' });
  return { first: hits[0]?.docId, stats: await rag.stats(), isolated: globalThis.crossOriginIsolated };
};
window.runSearchKb = async (model) => {
  const rag = await SearchRag.open({ name: 'consumer-search-kb', model });
  await rag.add([
    { id: 'owls.md', text: '# Owls\\n\\nOwls hunt small mammals at night and fly silently.' },
    { id: 'tea.md', text: '# Green tea\\n\\nGreen tea leaves are steamed soon after picking.' },
  ]);
  const hits = await rag.search('nocturnal birds of prey', { k: 2, mode: 'hybrid' });
  // Markdown: parsed by the search build's parser module (search/markup.wasm), fetched now.
  await rag.add([{ id: 'moles', format: 'markdown', text: '# Moles\\n\\nMoles dig *tunnels* underground.' }]);
  const markdownTitle = (await rag.search('moles dig tunnels', { k: 1, mode: 'bm25' }))[0]?.title;
  const refused = await rag.ask('Which birds hunt at night?', { llm: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } }).then(() => null, (e) => ({ name: e.name, code: e.code }));
  return { first: hits[0]?.docId, path: (await rag.embedder()).path, markdownTitle, refused };
};
window.appReady = true;
`);
  // Vite: index.html at the project root, "vite build" → dist/ (its defaults).
  writeFileSync(join(APP, 'index.html'), '<!doctype html><meta charset="utf-8"><title>consumer (vite)</title><script type="module" src="/src/app.js"></script>');
  execFileSync(join(APP, 'node_modules/.bin/vite'), ['build', '--base', './'], { cwd: APP, stdio: 'inherit' });
  // esbuild: "esbuild --bundle" with nothing else (an IIFE for the browser) → esbuild/app.js.
  execFileSync(join(APP, 'node_modules/.bin/esbuild'), ['src/app.js', '--bundle', '--outfile=esbuild/app.js'], { cwd: APP, stdio: 'inherit' });
  writeFileSync(join(APP, 'esbuild/index.html'), '<!doctype html><meta charset="utf-8"><title>consumer (esbuild)</title><script src="app.js"></script>');
  // A small static site and its keyword-only snapshot, by the native CLI.
  if (!NO_SITE) {
    execFileSync(process.execPath, [join(ROOT, 'tests/site/gen-crud-site.mjs'), join(APP, 'site'), '--limit', '40', '--fields'], { stdio: 'inherit' });
    execFileSync(...cli(['index', join(APP, 'site'), '--out', join(APP, 'site/webrag'), '--vectors', 'none', '--no-cache']), { cwd: ROOT, stdio: 'inherit' });
  }
  server = await startServer(23000 + Math.floor(Math.random() * 1000));
  browser = await launch();
});
after(async () => { await browser?.close(); server?.stop(); });

test('the shipped types check under tsc --strict: a TypeScript consumer of every entry point', () => {
  // Uses the generated result types the way an app does; the `@ts-expect-error` lines must be
  // errors (a field that does not exist, a string where a typed union is), so a type that
  // decays to `any` or `string` fails this test.
  writeFileSync(join(APP, 'src/consumer.ts'), `
import { WebRag, WebRagError, type Hit, type Stats, type AskResult, type DocumentRecord, type TraceEvent, type SealReport, type EmbedderInfo, type GraphSearch, type Phase } from 'webrag';
import { WebRag as SearchRag } from 'webrag/search';
import { StaticSearch, SnapshotError } from 'webrag/static';
import { mountSearch } from 'webrag/ui';
export async function use(rag: WebRag, lite: SearchRag, site: StaticSearch): Promise<number> {
  const hits: Hit[] = await rag.search('owls', { k: 2, mode: 'hybrid', group: 'document' });
  const first: Hit = hits[0];
  const bm25: number | null = first.scores.bm25;
  const atomic: number | undefined = first.scores.atomic;
  const sections: number = first.sections?.length ?? 0;
  const stats: Stats = await lite.stats();
  const docs: DocumentRecord[] = await rag.documents();
  const kind: 'structural' | 'llm' | 'structural-fallback' | undefined = docs[0]?.mindMap;
  const r: AskResult = await rag.ask('Who?', { options: { preset: 'search' }, onTrace: (e: TraceEvent) => void e.step });
  const route: 'graph' | 'chunks' | 'both' | 'web' | 'memory' = r.route;
  const sealed = (await rag.maintain()) as SealReport | null;
  const info: EmbedderInfo = await rag.embedder();
  const weights: 'f16' | 'f32' | null = info.gpuWeights;
  const graph: GraphSearch = await rag.explainGraph('owls');
  const phase: Phase = 'embed';
  // @ts-expect-error a hit has no text field
  void first.text;
  // @ts-expect-error the route is a union of five routes, not any string
  const wrong: AskResult['route'] = 'elsewhere';
  // @ts-expect-error a progress phase is one of the engine's phases
  const badPhase: Phase = 'thinking';
  const { results } = await site.search('owls', { k: 3, group: 'chunk', onProgress: (p) => void p.stage });
  const found: ('keyword' | 'semantic' | 'graph')[] = results[0]?.found ?? [];
  // @ts-expect-error a static search's mode is one of three
  await site.search('owls', { mode: 'fuzzy' });
  const box = mountSearch('#search', { base: '/webrag/' });
  void [bm25, atomic, kind, route, sealed, weights, graph.hits[0]?.factId, phase, wrong, badPhase, results, found, box, WebRagError, SnapshotError];
  return sections + stats.wasmMemoryBytes + stats.ann.chunks[0] + docs.length;
}
`);
  writeFileSync(join(APP, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: 'es2022', lib: ['es2022', 'dom'], module: 'esnext', moduleResolution: 'bundler', skipLibCheck: false },
    files: ['src/consumer.ts'],
  }));
  try {
    execFileSync(join(APP, 'node_modules/.bin/tsc'), ['-p', APP], { cwd: APP, encoding: 'utf8' });
  } catch (e) {
    assert.fail(`tsc --strict on the shipped types: ${e.stdout}${e.stderr}`);
  }
});

test('the installed .wasm files keep their size budgets (the parser module\'s too); the search build is smaller than the full engine', () => {
  // GNU gzip -9, as the build measures (Node's zlib at level 9 writes about 1% more).
  const gz = (f) => execFileSync('gzip', ['-9c', join(APP, 'node_modules/webrag', f)], { maxBuffer: 1 << 26 }).length;
  const [full, search] = [gz('webrag_bg.wasm'), gz('search/webrag_bg.wasm')];
  console.log(`engine .wasm, gzip -9: full ${full} bytes, search build ${search} bytes (${(100 * (1 - search / full)).toFixed(1)}% less)`);
  // The budgets `./webrag.sh build` checks (WASM_BUDGETS), for each page build in the package.
  const budgets = [...readFileSync(join(ROOT, 'webrag.sh'), 'utf8').matchAll(/^\s+"pkg\/(\S+\.wasm) (\d+)"$/gm)].map(([, f, n]) => [f, Number(n)]);
  assert.equal(budgets.length, 6, 'webrag.sh names a budget for each of the four page builds, the search build\'s parser module and the stemmer modules');
  // A pattern (`stem/*.wasm`) holds each of its files to the budget.
  const files = (f) => (f.includes('*') ? readdirSync(join(APP, 'node_modules/webrag', dirname(f))).filter((n) => n.endsWith('.wasm')).map((n) => `${dirname(f)}/${n}`) : [f]);
  for (const [f, limit] of budgets) {
    assert.ok(files(f).length >= (f.includes('*') ? 18 : 1), `${f}: ${files(f)}`);
    for (const g of files(f)) assert.ok(gz(g) <= limit, `${g}: ${gz(g)} bytes gzip -9, budget ${limit}`);
  }
  assert.ok(search < full, `search ${search} < full ${full}`);
});

/** Every file under `dir`, relative, with its bytes. */
function tree(dir) {
  return Object.fromEntries(readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => { const p = join(e.parentPath ?? e.path, e.name); return [p.slice(dir.length + 1), readFileSync(p).toString('base64')]; })
    .sort(([a], [b]) => (a < b ? -1 : 1)));
}

test('npx webrag index, from the installed tarball alone, writes the native CLI\'s snapshot byte for byte, and it searches', { timeout: 600_000, skip: NO_SITE }, async () => {
  // The package's bin with its .wasm in Node (no cargo, no Rust): `npx webrag index <site>`.
  const out = execFileSync('npx', ['--no-install', 'webrag', 'index', 'site', '--out', 'site/webrag-npx'], { cwd: APP, encoding: 'utf8', env: { ...process.env, PATH: `${join(APP, 'node_modules/.bin')}:${process.env.PATH}` } });
  assert.match(out, /snapshot of 40 pages/);
  const native = tree(join(APP, 'site/webrag'));
  const npx = tree(join(APP, 'site/webrag-npx'));
  // The search box script is the package's (the native CLI writes data only).
  assert.equal(npx['webrag-ui.js'], readFileSync(join(APP, 'node_modules/webrag/ui/webrag-ui.js')).toString('base64'));
  delete npx['webrag-ui.js'];
  // And the stemmer modules of the site's stemmed languages (only those), beside it in stem/.
  const stemmed = (JSON.parse(readFileSync(join(APP, 'site/webrag/manifest.json'), 'utf8')).languages?.values ?? []).filter((l) => l.stemmed).map((l) => `stem/${moduleTag(l.lang)}.wasm`).sort();
  assert.deepEqual(Object.keys(npx).filter((f) => f.startsWith('stem/')), stemmed);
  for (const f of stemmed) {
    assert.equal(npx[f], readFileSync(join(APP, 'node_modules/webrag/ui', f)).toString('base64'));
    delete npx[f];
  }
  assert.ok(Object.keys(native).includes('manifest.json') && Object.keys(native).length > 10);
  assert.deepEqual(Object.keys(npx), Object.keys(native), 'same files');
  for (const f of Object.keys(native)) assert.equal(npx[f], native[f], `${f} is byte-identical`);
  // Bad input: a typed message and exit code 2, nothing written.
  const bad = (args) => { try { execFileSync('npx', ['--no-install', 'webrag', ...args], { cwd: APP, stdio: 'pipe' }); return null; } catch (e) { return { status: e.status, stderr: String(e.stderr) }; } };
  const missing = bad(['index', 'no-such-site']);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /^webrag: no-such-site is not a directory$/m);
  const noModel = bad(['index', 'site', '--vectors', 'chunks']);
  assert.equal(noModel.status, 2);
  assert.match(noModel.stderr, /^webrag: --vectors chunks needs --model/m);
  // A hostile folder: the crawl reads the site alone (links out, broken links and link loops
  // left out with a warning; a binary file named .html left out, the build goes on).
  const hostile = join(APP, 'hostile');
  rmSync(hostile, { recursive: true, force: true });
  mkdirSync(join(hostile, 'site/docs'), { recursive: true });
  mkdirSync(join(hostile, 'outside'));
  writeFileSync(join(hostile, 'outside/secret.html'), '<title>Secret</title><p>Private text outside the site.</p>');
  writeFileSync(join(hostile, 'site/docs/page.html'), '<title>Page</title><p>Kettles boil water.</p>');
  writeFileSync(join(hostile, 'site/binary.html'), Buffer.from([0xff, 0xfe, 0x00, 0x81, 0x9f, 0x00, 0xc3]));
  symlinkSync(join(hostile, 'outside'), join(hostile, 'site/out-link'));
  symlinkSync(join(hostile, 'site'), join(hostile, 'site/docs/loop'));
  symlinkSync(join(hostile, 'nowhere'), join(hostile, 'site/broken.html'));
  writeFileSync(join(hostile, 'site/huge.html'), '');
  truncateSync(join(hostile, 'site/huge.html'), (8 << 20) + 1); // sparse: over the 8 MiB a page may be
  // A named pipe named .html (reading it would wait for ever) and a name that is not UTF-8.
  execFileSync('mkfifo', [join(hostile, 'site/pipe.html')]);
  writeFileSync(Buffer.concat([Buffer.from(`${join(hostile, 'site')}/caf`), Buffer.from([0xe9]), Buffer.from('.html')]), '<title>Cafe</title><p>Coffee.</p>');
  const h = spawnSync('npx', ['--no-install', 'webrag', 'index', 'site', '--out', 'snap'], { cwd: hostile, encoding: 'utf8', env: { ...process.env, PATH: `${join(APP, 'node_modules/.bin')}:${process.env.PATH}` } });
  assert.equal(h.status, 0, h.stderr);
  assert.match(h.stdout, /snapshot of 1 pages/);
  assert.match(h.stderr, /warning: skipped \S*out-link: a link to outside the site/);
  assert.match(h.stderr, /warning: skipped \S*broken\.html: a broken link/);
  assert.match(h.stderr, /warning: skipped \S*docs\/loop: a folder already read \(a link\)/);
  assert.match(h.stderr, /warning: skipped \S*site\/binary\.html: not UTF-8 text/);
  assert.match(h.stderr, /warning: skipped \S*huge\.html: 8388609 bytes, larger than a page may be \(8388608: maxDocumentBytes\)/);
  assert.match(h.stderr, /warning: skipped \S*pipe\.html: not a regular file/);
  assert.match(h.stderr, /warning: skipped \S*caf\S*\.html: its name is not UTF-8 \(no URL names it\)/);
  // The npx snapshot in the page.
  const page = await browser.ctx.newPage();
  await page.goto(`${server.url}/target/consumer/esbuild/index.html`);
  await page.waitForFunction(() => window.appReady === true);
  const page0 = readdirSync(join(APP, 'site/news/1_part_1')).sort()[5];
  const title = /<title>(.*?)<\/title>/.exec(readFileSync(join(APP, 'site/news/1_part_1', page0), 'utf8'))[1];
  const st = await page.evaluate(([s, q]) => window.runStatic(s, q), ['/target/consumer/site/webrag-npx/', title]);
  assert.ok(st.urls[0].endsWith(page0), JSON.stringify(st));
  await page.close();
});

test('npx webrag index --vectors static: the static tier from the package alone (its own static model), as the native CLI builds it, searched semantically in the page', { timeout: 600_000, skip: NO_SITE }, async () => {
  const env = { ...process.env, PATH: `${join(APP, 'node_modules/.bin')}:${process.env.PATH}` };
  const out = execFileSync('npx', ['--no-install', 'webrag', 'index', 'site', '--vectors', 'static', '--out', 'site/webrag-npx-static'], { cwd: APP, encoding: 'utf8', env });
  assert.match(out, /snapshot of 40 pages .* \d+ vector lists, 40 graph files/);
  const wrs = join(APP, 'node_modules/webrag/model/webrag-static.wrs');
  execFileSync(...cli(['index', join(APP, 'site'), '--out', join(APP, 'site/webrag-native-static'), '--vectors', 'static', '--static-model', wrs, '--no-cache']), { cwd: ROOT, stdio: 'pipe' });
  const native = tree(join(APP, 'site/webrag-native-static'));
  const npx = tree(join(APP, 'site/webrag-npx-static'));
  delete npx['webrag-ui.js'];
  const manifest = JSON.parse(Buffer.from(npx['manifest.json'], 'base64'));
  assert.ok(manifest.static?.vocab?.shards > 0 && manifest.static.rows.count === 30522, JSON.stringify(manifest.static));
  assert.deepEqual(Object.keys(npx).filter((f) => /^[kst]\//.test(f)), Object.keys(native).filter((f) => /^[kst]\//.test(f)), 'the same term, vocabulary and token-row shards');
  for (const f of Object.keys(native).filter((f) => /^[kst]\//.test(f))) assert.equal(npx[f], native[f], `${f} is byte-identical`);
  // Bad input: a static model file that is not one is a typed error, exit status 1.
  writeFileSync(join(APP, 'bad.wrs'), 'not a static model');
  let e = null;
  try { execFileSync('npx', ['--no-install', 'webrag', 'index', 'site', '--vectors', 'static', '--static-model', 'bad.wrs', '--out', 'site/x'], { cwd: APP, stdio: 'pipe', env }); } catch (err) { e = err; }
  assert.equal(e?.status, 1);
  assert.match(String(e.stderr), /^webrag: MODEL_WEIGHTS_CORRUPT: /m);
  // In the page: webrag/static embeds the query itself; semantic results with no model.
  const page = await browser.ctx.newPage();
  await page.goto(`${server.url}/target/consumer/esbuild/index.html`);
  await page.waitForFunction(() => window.appReady === true);
  const file = readdirSync(join(APP, 'site/news/1_part_1')).sort()[2];
  const title = /<title>(.*?)<\/title>/.exec(readFileSync(join(APP, 'site/news/1_part_1', file), 'utf8'))[1];
  const st = await page.evaluate(([s, q]) => window.runStatic(s, q, 'semantic'), ['/target/consumer/site/webrag-npx-static/', title]);
  assert.equal(st.errors, 0);
  assert.ok(st.urls.length > 0, JSON.stringify(st));
  await page.close();
  // The package's search box over it: while typing, keyword searches only (no graph file, no
  // token row fetched); once typing pauses, the hybrid search reads them and its results show.
  writeFileSync(join(APP, 'box.html'), '<!doctype html><meta charset="utf-8"><title>box</title><div id="box"></div>');
  const boxPage = await browser.ctx.newPage();
  const staged = [];
  boxPage.on('request', (r) => { const m = /webrag-npx-static\/([gs])\//.exec(r.url()); if (m) staged.push(m[1]); });
  await boxPage.goto(`${server.url}/target/consumer/box.html`);
  await boxPage.evaluate(async () => {
    const { mountSearch } = await import('/target/consumer/node_modules/webrag/ui/webrag-ui.js');
    window.box = mountSearch('#box', { base: '/target/consumer/site/webrag-npx-static/', debounce: 20, pause: 5_000 });
    await window.box.ready;
  });
  const typed = title.slice(0, 8);
  await boxPage.locator('#box input').pressSequentially(typed, { delay: 150 });
  await boxPage.waitForFunction(() => document.querySelectorAll('#box .webrag-ui-result').length > 0);
  assert.deepEqual(staged, [], 'no graph file or token row while typing');
  await boxPage.waitForFunction(() => performance.getEntriesByType('resource').some((e) => /webrag-npx-static\/g\//.test(e.name)), null, { timeout: 30_000 });
  assert.ok(staged.includes('g') && staged.includes('s'), `the hybrid search after the pause: ${staged}`);
  // While the later stages run the box says so: "refining…" and aria-busy, then neither.
  const states = await boxPage.evaluate(async (q) => {
    const seen = [];
    const status = document.querySelector('#box [role=status]');
    const list = document.querySelector('#box ol');
    const note = () => seen.push([status.textContent, list.getAttribute('aria-busy'), document.getElementById('box').classList.contains('webrag-ui-refining')]);
    const obs = new MutationObserver(note);
    obs.observe(status, { childList: true, characterData: true, subtree: true });
    await window.box.search(q);
    note();
    obs.disconnect();
    return seen;
  }, title);
  assert.ok(states.some(([t, b, c]) => /results? for .* · refining…$/.test(t) && b === 'true' && c), JSON.stringify(states));
  const last = states.at(-1);
  assert.ok(/results? for/.test(last[0]) && !last[0].includes('refining') && last[1] === 'false' && !last[2], JSON.stringify(states));
  await boxPage.close();
});

/**
 * A BERT folder with the default model's vocabulary and a small random encoder (1 layer, 64 wide),
 * in `dir`: what `distill` reads (config.json, tokenizer.json, model.safetensors), so that the
 * command runs every vocabulary token through a model in seconds. Distillation's quality with the
 * real encoder is `cargo test --test suite static_tier::`'s.
 */
function tinyBert(dir) {
  const real = process.env.WEBRAG_MODEL ?? join(ROOT, '.models/all-MiniLM-L6-v2');
  const [vocab, h, inter, positions] = [30522, 64, 128, 64];
  mkdirSync(dir, { recursive: true });
  const config = { architectures: ['BertModel'], model_type: 'bert', hidden_act: 'gelu', hidden_size: h, intermediate_size: inter,
    num_attention_heads: 2, num_hidden_layers: 1, max_position_embeddings: positions, type_vocab_size: 2, vocab_size: vocab, layer_norm_eps: 1e-12, pad_token_id: 0 };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  writeFileSync(join(dir, 'tokenizer.json'), readFileSync(join(real, 'tokenizer.json')));
  // safetensors: an 8-byte little-endian header length, the JSON header, then the f32 data.
  const tensors = [['embeddings.word_embeddings.weight', [vocab, h]], ['embeddings.position_embeddings.weight', [positions, h]],
    ['embeddings.token_type_embeddings.weight', [2, h]], ['embeddings.LayerNorm.weight', [h], 1], ['embeddings.LayerNorm.bias', [h]]];
  const p = 'encoder.layer.0';
  for (const part of ['query', 'key', 'value']) tensors.push([`${p}.attention.self.${part}.weight`, [h, h]], [`${p}.attention.self.${part}.bias`, [h]]);
  tensors.push([`${p}.attention.output.dense.weight`, [h, h]], [`${p}.attention.output.dense.bias`, [h]],
    [`${p}.attention.output.LayerNorm.weight`, [h], 1], [`${p}.attention.output.LayerNorm.bias`, [h]],
    [`${p}.intermediate.dense.weight`, [inter, h]], [`${p}.intermediate.dense.bias`, [inter]],
    [`${p}.output.dense.weight`, [h, inter]], [`${p}.output.dense.bias`, [h]],
    [`${p}.output.LayerNorm.weight`, [h], 1], [`${p}.output.LayerNorm.bias`, [h]]);
  const header = {};
  let offset = 0;
  for (const [name, shape] of tensors) {
    const bytes = 4 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  // The header padded with spaces to a multiple of 8 bytes (as the format allows), so the data is aligned.
  const text = JSON.stringify(header);
  const json = Buffer.from(text.padEnd(Math.ceil((text.length + 8) / 8) * 8 - 8, ' '));
  const out = Buffer.alloc(8 + json.length + offset);
  out.writeBigUInt64LE(BigInt(json.length), 0);
  json.copy(out, 8);
  const data = new Float32Array(out.buffer, out.byteOffset + 8 + json.length, offset / 4);
  let seed = 12345;
  for (const [name, , fill] of tensors) {
    const [from, to] = header[name].data_offsets.map((o) => o / 4);
    // LayerNorm weights 1; everything else small values from a fixed LCG.
    for (let i = from; i < to; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      data[i] = fill ?? (seed / 2 ** 32 - 0.5) * 0.2;
    }
  }
  writeFileSync(join(dir, 'model.safetensors'), out);
  return dir;
}

test('npx webrag distill writes a static model from a BERT folder; bad --dim is refused', { timeout: 600_000 }, () => {
  const model = tinyBert(join(APP, 'tiny-bert'));
  const env = { ...process.env, PATH: `${join(APP, 'node_modules/.bin')}:${process.env.PATH}` };
  const out = execFileSync('npx', ['--no-install', 'webrag', 'distill', model, '--out', 'distilled/m.wrs', '--dim', '32', '--model-id', 'acme/bert-mini'], { cwd: APP, encoding: 'utf8', env });
  assert.match(out, /static model of 32 dimensions, \d+ bytes/);
  const b = readFileSync(join(APP, 'distilled/m.wrs'));
  assert.equal(b.subarray(0, 4).toString(), 'WRS1');
  const header = JSON.parse(b.subarray(8, 8 + b.readUInt32LE(4)).toString());
  assert.equal(header.dim, 32);
  assert.equal(header.rows, 30522);
  assert.equal(header.source, 'acme/bert-mini', 'the file records the --model-id it was given');
  assert.equal(b.length, 8 + b.readUInt32LE(4) + 30522 * 4 + 30522 * 32, 'scales and int8 rows');
  const bad = (args) => { try { execFileSync('npx', ['--no-install', 'webrag', ...args], { cwd: APP, stdio: 'pipe', env }); return null; } catch (err) { return { status: err.status, stderr: String(err.stderr) }; } };
  assert.equal(bad(['distill', model, '--out', 'x.wrs', '--dim', '0']).status, 2);
  assert.equal(bad(['distill', model, '--out', 'x.wrs', '--model-id', ' ']).status, 2);
  const past = bad(['distill', model, '--out', 'x.wrs', '--dim', '999']);
  assert.equal(past.status, 1);
  assert.match(past.stderr, /^webrag: INVALID_OPTION: /m);
});

test('npx webrag quantize writes the native CLI\'s int8 query encoder byte for byte', { timeout: 600_000, skip: NO_SITE }, () => {
  const model = process.env.WEBRAG_MODEL ?? join(ROOT, '.models/all-MiniLM-L6-v2');
  const env = { ...process.env, PATH: `${join(APP, 'node_modules/.bin')}:${process.env.PATH}` };
  const out = execFileSync('npx', ['--no-install', 'webrag', 'quantize', model, '--out', 'query-model-npx'], { cwd: APP, encoding: 'utf8', env });
  assert.match(out, /model\.safetensors \d+ → \d+ bytes \(2\d\.\d%, int8\)/);
  execFileSync(...cli(['quantize', join(APP, 'query-model-native'), '--model', model]), { cwd: ROOT, stdio: 'pipe' });
  for (const f of ['config.json', 'tokenizer.json', 'model.safetensors']) {
    assert.ok(readFileSync(join(APP, 'query-model-npx', f)).equals(readFileSync(join(APP, 'query-model-native', f))), `${f} is byte-identical`);
  }
  let e = null;
  try { execFileSync('npx', ['--no-install', 'webrag', 'quantize', model, '--out', 'x', '--format', 'int4'], { cwd: APP, stdio: 'pipe', env }); } catch (err) { e = err; }
  assert.equal(e?.status, 2);
  assert.match(String(e.stderr), /^webrag: --format int4: expected int8 or f16$/m);
});

for (const [bundler, dir] of [['Vite', 'dist'], ['esbuild', 'esbuild']]) {
  test(`the packed package, installed and built by ${bundler} with its default config, searches in Chromium without COOP/COEP`, { timeout: 600_000 }, async () => {
    const built = readdirSync(join(APP, dir), { recursive: true }).map(String);
    if (bundler === 'Vite') assert.ok(built.some((f) => f.endsWith('.wasm')), `Vite emitted the .wasm: ${built}`);
    if (bundler === 'esbuild') assert.deepEqual(built.sort(), ['app.js', 'index.html'], 'esbuild needs no copied file');
    const page = await browser.ctx.newPage();
    page.on('pageerror', (e) => console.error('pageerror:', e.message));
    const requests = [];
    browser.ctx.on('request', (r) => requests.push(r.url()));
    const res = await page.goto(`${server.url}/target/consumer/${dir}/index.html`);
    assert.equal(res.headers()['cross-origin-opener-policy'], undefined, 'served without COOP');
    assert.equal(res.headers()['cross-origin-embedder-policy'], undefined, 'served without COEP');
    await page.waitForFunction(() => window.appReady === true);
    // webrag/static over the test site (its pages come from ../shared: without it, this part alone skips).
    if (NO_SITE) console.log(`# SKIP the static-site part: ${NO_SITE}`);
    else {
      const page0 = readdirSync(join(APP, 'site/news/1_part_1')).sort()[3];
      const html = readFileSync(join(APP, 'site/news/1_part_1', page0), 'utf8');
      const title = /<title>(.*?)<\/title>/.exec(html)[1];
      const st = await page.evaluate(([s, q]) => window.runStatic(s, q), ['/target/consumer/site/webrag/', title]);
      assert.ok(st.urls[0].endsWith(page0), JSON.stringify(st));
      assert.equal(st.errors, 0);
    }
    const kb = await page.evaluate((m) => window.runKb(m), `${server.url}/.models/all-MiniLM-L6-v2/`);
    assert.equal(kb.isolated, false, 'not cross-origin isolated');
    assert.equal(kb.first, 'owls.md');
    assert.equal(kb.stats.documents, 2);
    // webrag/search: the search build searches, and says plainly what it leaves out.
    const sk = await page.evaluate((m) => window.runSearchKb(m), `${server.url}/.models/all-MiniLM-L6-v2/`);
    assert.deepEqual(sk, { first: 'owls.md', path: 'cpu', markdownTitle: 'Moles', refused: { name: 'InputError', code: 'NOT_IN_BUILD' } });
    // Vite's build runs the emitted worker and .wasm; esbuild's the inlined ones.
    const fetched = (re) => requests.some((u) => re.test(new URL(u).pathname));
    if (bundler === 'Vite') assert.ok(fetched(/\.wasm$/) && !fetched(/inline/), `the emitted worker and .wasm: ${requests.join(' ')}`);
    if (bundler === 'Vite') assert.ok(fetched(/markup[^/]*\.wasm$/), `the emitted parser module: ${requests.join(' ')}`);
    if (bundler === 'esbuild') assert.ok(!fetched(/\.wasm$/), `the inlined .wasm: ${requests.join(' ')}`);
    await page.close();
  });
}

/** A plain file server of `dir` under the path `prefix` (what a static host does), on 127.0.0.1. */
async function plainHost(dir, prefix = '/') {
  const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.json': 'application/json', '.gz': 'application/gzip' };
  const srv = createServer((req, res) => {
    const full = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (full.split('/').includes('..')) { res.writeHead(400).end(); return; }
    if (!full.startsWith(prefix)) { res.writeHead(404).end('not found'); return; }
    const path = `/${full.slice(prefix.length)}`;
    try {
      const body = readFileSync(join(dir, path.endsWith('/') ? `${path}index.html` : path));
      const ext = Object.keys(types).find((e) => path.endsWith(e));
      res.writeHead(200, { 'content-type': types[ext] ?? 'application/octet-stream' }).end(body);
    } catch { res.writeHead(404).end('not found'); }
  });
  await new Promise((ok) => srv.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${srv.address().port}`, stop: () => srv.close() };
}

test('README "Use 1" verbatim: npx webrag index public, then a plain HTML page with the search box finds results (no bundler, no import map)', { timeout: 600_000, skip: NO_SITE }, async () => {
  // The README's commands and markup, as a site owner copies them.
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const use1 = readme.slice(readme.indexOf('## Use 1'), readme.indexOf('## Use 2'));
  const markup = /```html\n([\s\S]*?)```/.exec(use1)?.[1];
  assert.ok(markup?.includes('<div id="search"></div>') && markup.includes('webrag-ui.js'), `README Use 1 shows the markup: ${markup}`);
  assert.ok(use1.includes('npx webrag index public '), 'README Use 1 shows npx webrag index public');
  const site = join(APP, 'public');
  rmSync(site, { recursive: true, force: true });
  execFileSync(process.execPath, [join(ROOT, 'tests/site/gen-crud-site.mjs'), site, '--limit', '30', '--fields'], { stdio: 'inherit' });
  // Two values of the generator's `part` filter: the last 15 pages are tagged `extra`.
  const partFiles = readdirSync(join(site, 'news/1_part_1')).sort();
  for (const f of partFiles.slice(15)) {
    const at = join(site, 'news/1_part_1', f);
    writeFileSync(at, readFileSync(at, 'utf8').replace('data-webrag-filter="part:1_part_1"', 'data-webrag-filter="part:extra"'));
  }
  writeFileSync(join(site, 'search.html'), `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Search</title></head>\n<body>\n${markup}</body></html>\n`);
  const out = execFileSync('npx', ['webrag', 'index', 'public'], { cwd: APP, encoding: 'utf8', env: { ...process.env, PATH: `${join(APP, 'node_modules/.bin')}:${process.env.PATH}` } });
  assert.match(out, /snapshot of \d+ pages .*; search box: .*public\/webrag\/webrag-ui\.js/);
  const ui = readFileSync(join(site, 'webrag/webrag-ui.js'), 'utf8');
  assert.doesNotMatch(ui, /\b(import|from)\s*["']idb-keyval|import\(["'][a-z@]/, 'no bare import in the bundle');
  const host = await plainHost(site);
  const page = await browser.ctx.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  // (The browser's own favicon request is not the page's: failed fetches are caught below.)
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`); });
  page.on('requestfailed', (r) => problems.push(`failed: ${r.url()}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  try {
    await page.goto(`${host.url}/search.html`);
    // The accessible parts: a search landmark, a labelled search box, a status line.
    const box = page.getByRole('searchbox', { name: 'Search this site' });
    await box.waitFor();
    assert.equal(await page.getByRole('search').count(), 1);
    const file = readdirSync(join(site, 'news/1_part_1')).sort()[7];
    const title = /<title>(.*?)<\/title>/.exec(readFileSync(join(site, 'news/1_part_1', file), 'utf8'))[1];
    await box.fill(title);
    await page.waitForFunction(() => /results? for/.test(document.querySelector('[role=status]')?.textContent ?? ''));
    const first = page.locator('.webrag-ui-result a').first();
    assert.ok((await first.getAttribute('href')).endsWith(`news/1_part_1/${file}`), await first.getAttribute('href'));
    assert.ok(await page.locator('.webrag-ui-result').first().locator('mark').count() > 0, 'matches are highlighted');
    // Keyboard: down to the first result, up back to the box, Escape clears.
    await box.press('ArrowDown');
    assert.equal(await page.evaluate(() => document.activeElement?.className), 'webrag-ui-title');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('type')), 'search');
    await page.keyboard.press('Escape');
    assert.equal(await box.inputValue(), '');
    assert.equal(await page.locator('.webrag-ui-result').count(), 0);
    // Themable: the colours are CSS variables of the box.
    assert.ok(await page.evaluate(() => getComputedStyle(document.getElementById('search')).getPropertyValue('--webrag-ui-accent').trim().length > 0));
    // The query is kept in the address: Back from a result shows it and its results again.
    await box.fill(title);
    await page.waitForFunction((t) => new URL(location.href).searchParams.get('q') === t, title);
    await page.locator('.webrag-ui-result a').first().click();
    await page.waitForURL((u) => u.pathname.endsWith(file));
    await page.goBack();
    await page.getByRole('searchbox', { name: 'Search this site' }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('.webrag-ui-result').length > 0);
    assert.equal(await page.getByRole('searchbox', { name: 'Search this site' }).inputValue(), title);
    assert.ok((await page.locator('.webrag-ui-result a').first().getAttribute('href')).endsWith(`news/1_part_1/${file}`));
    // A link with the query searches at once.
    await page.goto(`${host.url}/search.html?q=${encodeURIComponent(title)}`);
    await page.waitForFunction(() => document.querySelectorAll('.webrag-ui-result').length > 0);
    // Facets: the filter's values with their counts, checked from the keyboard, narrow the
    // results; with no query they list the pages that carry them.
    const filters = page.getByRole('group', { name: 'Filters' });
    await filters.waitFor();
    const extra = filters.getByRole('checkbox', { name: /^extra \(\d+\)$/ });
    const own = filters.getByRole('checkbox', { name: /^1_part_1 \(\d+\)$/ });
    assert.equal(await own.count(), 1, 'the page\'s own part is offered with its count');
    await extra.focus();
    await page.keyboard.press('Space');
    assert.ok(await extra.isChecked());
    await page.waitForFunction((f) => [...document.querySelectorAll('.webrag-ui-result a.webrag-ui-title')].every((a) => !a.href.endsWith(f)), file);
    const narrowed = await page.locator('.webrag-ui-result a.webrag-ui-title').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    const tagged = new Set(partFiles.slice(15));
    assert.ok(narrowed.every((h) => tagged.has(h.split('/').pop())), `only pages tagged extra: ${narrowed}`);
    assert.equal(await page.evaluate(() => document.activeElement?.dataset?.value), 'extra', 'focus stays on the checkbox as the facets update');
    await page.getByRole('searchbox', { name: 'Search this site' }).fill('');
    await page.getByRole('searchbox', { name: 'Search this site' }).press('Enter');
    await page.waitForFunction(() => /^10 results$/.test(document.querySelector('[role=status]')?.textContent ?? ''));
    const listed = await page.locator('.webrag-ui-result a.webrag-ui-title').evaluateAll((as) => as.map((a) => a.getAttribute('href').split('/').pop()));
    assert.ok(listed.every((f) => tagged.has(f)), `the listing holds pages tagged extra: ${listed}`);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
    host.stop();
  }
  // The same site served under a sub-path, the box loaded by a path relative to the page: the
  // result links reach the pages under that path.
  writeFileSync(join(site, 'find.html'), `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Find</title></head>\n<body>\n${markup.replace('src="/webrag/', 'src="webrag/')}</body></html>\n`);
  const sub = await plainHost(site, '/docs/');
  const page2 = await browser.ctx.newPage();
  const problems2 = [];
  page2.on('pageerror', (e) => problems2.push(`pageerror: ${e.message}`));
  page2.on('response', (r) => { if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems2.push(`HTTP ${r.status()}: ${r.url()}`); });
  try {
    await page2.goto(`${sub.url}/docs/find.html`);
    const box = page2.getByRole('searchbox', { name: 'Search this site' });
    await box.waitFor();
    const file = readdirSync(join(site, 'news/1_part_1')).sort()[7];
    const title = /<title>(.*?)<\/title>/.exec(readFileSync(join(site, 'news/1_part_1', file), 'utf8'))[1];
    await box.fill(title);
    await page2.waitForFunction(() => /results? for/.test(document.querySelector('[role=status]')?.textContent ?? ''));
    const href = await page2.locator('.webrag-ui-result a').first().getAttribute('href');
    assert.ok(href.startsWith('/docs/') && href.endsWith(`news/1_part_1/${file}`), href);
    await page2.locator('.webrag-ui-result a').first().click();
    await page2.waitForURL((u) => u.pathname === href);
    await page2.waitForLoadState();
    assert.deepEqual(problems2, [], 'the link reaches the page (no 404)');
  } finally {
    await page2.close();
    sub.stop();
  }
});
