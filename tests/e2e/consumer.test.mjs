// The npm package as a consumer gets it: `npm pack` of pkg/, installed from the tarball into a
// fresh project, bundled with esbuild (the app and, as the package README says, the worker as a
// second entry with the .wasm beside it), served without COOP/COEP headers, and run in headless
// Chromium: static-site keyword search with webrag/static, and a knowledge base with WebRag
// (add + search in the worker, IndexedDB).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync, copyFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, startServer, launch } from './harness.mjs';

const APP = join(ROOT, 'target/consumer');
let server, browser;

before(async () => {
  rmSync(APP, { recursive: true, force: true });
  mkdirSync(join(APP, 'src'), { recursive: true });
  // The package tarball, as `npm publish` would upload it.
  const out = execFileSync('npm', ['pack', join(ROOT, 'pkg'), '--pack-destination', APP, '--json'], { cwd: APP, encoding: 'utf8' });
  const [{ filename, files }] = JSON.parse(out);
  const shipped = files.map((f) => f.path).sort();
  for (const f of ['README.md', 'index.d.ts', 'index.js', 'package.json', 'static.d.ts', 'static.js', 'webrag.js', 'webrag_bg.wasm', 'worker.js']) assert.ok(shipped.includes(f), `${f} is in the tarball: ${shipped}`);
  writeFileSync(join(APP, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { webrag: `file:./${filename}` } }, null, 2));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline'], { cwd: APP, stdio: 'inherit' });
  writeFileSync(join(APP, 'src/app.js'), `
import { WebRag } from 'webrag';
import { StaticSearch, analyze } from 'webrag/static';
window.runStatic = async (snapshot, query) => {
  const site = await StaticSearch.open(snapshot);
  const { results, errors } = await site.search(query, { k: 3 });
  return { urls: results.map((r) => r.url), errors: errors.length, terms: analyze(query), bytes: site.transferred.bytes };
};
window.runKb = async (model) => {
  const rag = await WebRag.open({ name: 'consumer-kb', model, device: 'cpu', workerUrl: new URL('./webrag-worker.js', import.meta.url) });
  await rag.add([
    { id: 'owls.md', text: '# Owls\\n\\nOwls hunt small mammals at night and fly silently.' },
    { id: 'tea.md', text: '# Green tea\\n\\nGreen tea leaves are steamed soon after picking.' },
  ]);
  const hits = await rag.search('nocturnal birds of prey', { k: 2, mode: 'dense' });
  return { first: hits[0]?.docId, stats: await rag.stats(), isolated: globalThis.crossOriginIsolated };
};
`);
  const esbuild = join(ROOT, 'node_modules/.bin/esbuild');
  execFileSync(esbuild, ['src/app.js', '--bundle', '--format=esm', '--outfile=dist/app.js'], { cwd: APP, stdio: 'inherit' });
  execFileSync(esbuild, ['node_modules/webrag/worker.js', '--bundle', '--format=esm', '--outfile=dist/webrag-worker.js'], { cwd: APP, stdio: 'inherit' });
  copyFileSync(join(APP, 'node_modules/webrag/webrag_bg.wasm'), join(APP, 'dist/webrag_bg.wasm'));
  writeFileSync(join(APP, 'dist/index.html'), '<!doctype html><meta charset="utf-8"><title>consumer</title><script type="module" src="app.js"></script>');
  // A small static site and its keyword-only snapshot.
  execFileSync(process.execPath, [join(ROOT, 'tests/site/gen-crud-site.mjs'), join(APP, 'site'), '--limit', '40'], { stdio: 'inherit' });
  execFileSync('cargo', ['run', '--quiet', '--bin', 'webrag', '--', 'index', join(APP, 'site'), '--out', join(APP, 'site/webrag'), '--vectors', 'none'], { cwd: ROOT, stdio: 'inherit' });
  server = await startServer(23000 + Math.floor(Math.random() * 1000));
  browser = await launch();
});
after(async () => { await browser?.close(); server?.stop(); });

test('the packed package, installed and bundled with esbuild, searches in Chromium without COOP/COEP', { timeout: 600_000 }, async () => {
  assert.ok(existsSync(join(APP, 'dist/app.js')) && readdirSync(join(APP, 'dist')).includes('webrag-worker.js'));
  const page = await browser.ctx.newPage();
  page.on('pageerror', (e) => console.error('pageerror:', e.message));
  const res = await page.goto(`${server.url}/target/consumer/dist/index.html`);
  assert.equal(res.headers()['cross-origin-opener-policy'], undefined, 'served without COOP');
  assert.equal(res.headers()['cross-origin-embedder-policy'], undefined, 'served without COEP');
  await page.waitForFunction(() => typeof window.runStatic === 'function');
  const page0 = readdirSync(join(APP, 'site/news/1_part_1')).sort()[3];
  const html = (await import('node:fs')).readFileSync(join(APP, 'site/news/1_part_1', page0), 'utf8');
  const title = /<title>(.*?)<\/title>/.exec(html)[1];
  const st = await page.evaluate(([s, q]) => window.runStatic(s, q), ['/target/consumer/site/webrag/', title]);
  assert.ok(st.urls[0].endsWith(page0), JSON.stringify(st));
  assert.equal(st.errors, 0);
  const kb = await page.evaluate((m) => window.runKb(m), `${server.url}/.models/all-MiniLM-L6-v2/`);
  assert.equal(kb.isolated, false, 'not cross-origin isolated');
  assert.equal(kb.first, 'owls.md');
  assert.equal(kb.stats.documents, 2);
});
