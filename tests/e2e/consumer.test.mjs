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
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, startServer, launch } from './harness.mjs';

// Pinned consumer tooling (installed from the registry into the fresh app).
const VITE = '8.3.8';
const ESBUILD = '0.28.2';
const APP = join(ROOT, 'target/consumer');
let server, browser;

before(async () => {
  rmSync(APP, { recursive: true, force: true });
  mkdirSync(join(APP, 'src'), { recursive: true });
  // The package tarball, as `npm publish` would upload it.
  const out = execFileSync('npm', ['pack', join(ROOT, 'pkg'), '--pack-destination', APP, '--json'], { cwd: APP, encoding: 'utf8' });
  const [{ filename, files }] = JSON.parse(out);
  const shipped = files.map((f) => f.path).sort();
  for (const f of ['README.md', 'index.d.ts', 'index.js', 'inline.js', 'package.json', 'static.d.ts', 'static.js', 'webrag.js', 'webrag_bg.wasm', 'worker.js']) assert.ok(shipped.includes(f), `${f} is in the tarball: ${shipped}`);
  writeFileSync(join(APP, 'package.json'), JSON.stringify({
    name: 'consumer', private: true, type: 'module',
    dependencies: { webrag: `file:./${filename}` },
    devDependencies: { vite: VITE, esbuild: ESBUILD },
  }, null, 2));
  const cache = mkdtempSync(join(tmpdir(), 'webrag-npm-cache-'));
  try {
    execFileSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: APP, stdio: 'inherit', env: { ...process.env, npm_config_cache: cache } });
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
  writeFileSync(join(APP, 'src/app.js'), `
import { WebRag } from 'webrag';
import { StaticSearch, analyze } from 'webrag/static';
window.runStatic = async (snapshot, query) => {
  const site = await StaticSearch.open(snapshot);
  const { results, errors } = await site.search(query, { k: 3 });
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
window.appReady = true;
`);
  // Vite: index.html at the project root, "vite build" → dist/ (its defaults).
  writeFileSync(join(APP, 'index.html'), '<!doctype html><meta charset="utf-8"><title>consumer (vite)</title><script type="module" src="/src/app.js"></script>');
  execFileSync(join(APP, 'node_modules/.bin/vite'), ['build', '--base', './'], { cwd: APP, stdio: 'inherit' });
  // esbuild: "esbuild --bundle" with nothing else (an IIFE for the browser) → esbuild/app.js.
  execFileSync(join(APP, 'node_modules/.bin/esbuild'), ['src/app.js', '--bundle', '--outfile=esbuild/app.js'], { cwd: APP, stdio: 'inherit' });
  writeFileSync(join(APP, 'esbuild/index.html'), '<!doctype html><meta charset="utf-8"><title>consumer (esbuild)</title><script src="app.js"></script>');
  // A small static site and its keyword-only snapshot.
  execFileSync(process.execPath, [join(ROOT, 'tests/site/gen-crud-site.mjs'), join(APP, 'site'), '--limit', '40'], { stdio: 'inherit' });
  execFileSync('cargo', ['run', '--quiet', '--bin', 'webrag', '--', 'index', join(APP, 'site'), '--out', join(APP, 'site/webrag'), '--vectors', 'none'], { cwd: ROOT, stdio: 'inherit' });
  server = await startServer(23000 + Math.floor(Math.random() * 1000));
  browser = await launch();
});
after(async () => { await browser?.close(); server?.stop(); });

for (const [bundler, dir] of [['Vite', 'dist'], ['esbuild', 'esbuild']]) {
  test(`the packed package, installed and built by ${bundler} with its default config, searches in Chromium without COOP/COEP`, { timeout: 600_000 }, async () => {
    const built = readdirSync(join(APP, dir), { recursive: true }).map(String);
    if (bundler === 'Vite') assert.ok(built.some((f) => f.endsWith('.wasm')), `Vite emitted the .wasm: ${built}`);
    if (bundler === 'esbuild') assert.deepEqual(built.sort(), ['app.js', 'index.html'], 'esbuild needs no copied file');
    const page = await browser.ctx.newPage();
    page.on('pageerror', (e) => console.error('pageerror:', e.message));
    const res = await page.goto(`${server.url}/target/consumer/${dir}/index.html`);
    assert.equal(res.headers()['cross-origin-opener-policy'], undefined, 'served without COOP');
    assert.equal(res.headers()['cross-origin-embedder-policy'], undefined, 'served without COEP');
    await page.waitForFunction(() => window.appReady === true);
    const page0 = readdirSync(join(APP, 'site/news/1_part_1')).sort()[3];
    const html = readFileSync(join(APP, 'site/news/1_part_1', page0), 'utf8');
    const title = /<title>(.*?)<\/title>/.exec(html)[1];
    const st = await page.evaluate(([s, q]) => window.runStatic(s, q), ['/target/consumer/site/webrag/', title]);
    assert.ok(st.urls[0].endsWith(page0), JSON.stringify(st));
    assert.equal(st.errors, 0);
    const kb = await page.evaluate((m) => window.runKb(m), `${server.url}/.models/all-MiniLM-L6-v2/`);
    assert.equal(kb.isolated, false, 'not cross-origin isolated');
    assert.equal(kb.first, 'owls.md');
    assert.equal(kb.stats.documents, 2);
    await page.close();
  });
}
