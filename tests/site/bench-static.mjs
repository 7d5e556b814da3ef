// The static tier (`webrag index --vectors static`) against Pagefind, in one run: build time of
// the whole generated CRUD news site (17,364 pages by default) with the static tier, keyword only
// (the native CLI, then `npx webrag index` from pkg/) and Pagefind; then, per query in a fresh browser context (empty HTTP cache), everything the
// first hybrid search downloads — the search box script a site serves (webrag-ui.js: webrag/ui
// and webrag/static, bundled by esbuild), the manifest and every shard (keyword, the query's vocabulary
// shards and token rows, IVF centroids and lists, graph files, fragments) — and the milliseconds
// to its results. Queries: the first 6 characters of titles spread over the site (as
// bench-site.mjs), and on the HotpotQA and MuSiQue passage sites of
// `bench-rank.mjs --vectors static` (when built) their first questions.
//
//   node tests/site/bench-static.mjs [--pages N] [--queries N]
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, normalize } from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT, SHARED } from '../e2e/harness.mjs';

const args = process.argv.slice(2);
const opt = (n, d) => (args.includes(n) ? Number(args[args.indexOf(n) + 1]) : d);
const PAGES = opt('--pages', 17364);
const QUERIES = opt('--queries', 20);
const OUT = join(ROOT, 'target/bench-static');
const SITE = join(OUT, 'crud');
const BIN = join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'release/webrag');
const env = { ...process.env, WEBRAG_MODEL: process.env.WEBRAG_MODEL ?? join(ROOT, '.models/all-MiniLM-L6-v2') };
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 : NaN; };
const time = (f) => { const t0 = performance.now(); f(); return (performance.now() - t0) / 1000; };

mkdirSync(OUT, { recursive: true });
console.log(`generating ${PAGES} pages…`);
execFileSync(process.execPath, [join(ROOT, 'tests/site/gen-crud-site.mjs'), SITE, '--limit', String(PAGES)], { stdio: 'ignore' });
execFileSync('cargo', ['build', '--quiet', '--release', '--bin', 'webrag'], { cwd: ROOT, stdio: 'inherit' });
const PF = join(ROOT, 'target/pagefind-tool');
if (!existsSync(join(PF, 'node_modules/.bin/pagefind'))) {
  mkdirSync(PF, { recursive: true });
  execFileSync('npm', ['install', '--prefix', PF, '--no-save', '--no-audit', '--no-fund', 'pagefind@1.6.0'], { stdio: 'inherit' });
}
const build = (mode) => time(() => execFileSync(BIN, ['index', SITE, '--out', join(OUT, `crud-${mode}`), '--vectors', mode, '--no-cache'], { env, stdio: ['ignore', 'ignore', 'inherit'] }));
const staticSecs = build('static');
const keywordSecs = build('none');
// The same keyword build by the package's `npx webrag index` (the site builder .wasm in Node, one
// thread), as a site owner without a Rust toolchain runs it; ./webrag.sh build made pkg/.
const NPX = join(ROOT, 'pkg/bin/webrag.mjs');
if (!existsSync(join(ROOT, 'pkg/build/webrag_bg.wasm'))) throw new Error('pkg/build is missing: run ./webrag.sh build first');
const npxSecs = time(() => execFileSync(process.execPath, [NPX, 'index', SITE, '--out', join(OUT, 'crud-npx'), '--no-ui'], { stdio: ['ignore', 'ignore', 'inherit'] }));
const pagefindSecs = time(() => execFileSync(join(PF, 'node_modules/.bin/pagefind'), ['--site', SITE, '--output-subdir', 'pagefind', '--quiet'], { stdio: 'inherit' }));
mkdirSync(join(OUT, 'js'), { recursive: true });
// What a site's page loads: the search box bundle `npx webrag index` writes (webrag/ui with
// webrag/static), built as ./webrag.sh build builds it.
execFileSync(join(ROOT, 'node_modules/.bin/esbuild'), [join(ROOT, 'src/web/js/ui-bundle.js'), '--bundle', '--minify', '--format=esm', '--target=es2022', '--legal-comments=none', `--outfile=${join(OUT, 'js/webrag-ui.js')}`], { stdio: 'ignore' });
writeFileSync(join(OUT, 'bench.html'), '<!doctype html><meta charset="utf-8"><title>bench</title>');

// Sites and their queries.
const sites = [];
const files = [];
for (const d of readdirSync(join(SITE, 'news')).sort()) for (const f of readdirSync(join(SITE, 'news', d)).sort()) files.push(`news/${d}/${f}`);
const headlines = [];
for (let i = 0; i < QUERIES; i++) {
  const title = /<title>(.*?)<\/title>/.exec(readFileSync(join(SITE, files[Math.floor((i + 0.5) * files.length / QUERIES)]), 'utf8'))[1];
  headlines.push(title.replace(/[，。、“”：《》（）\s]/g, '').slice(0, 6));
}
sites.push({ name: `CRUD news (${files.length} pages), headline queries`, dir: 'crud-static', queries: headlines });
for (const [name, file, q] of [['hotpotqa', 'data/hotpotqa/train100.json', (x) => x.question], ['musique', 'data/musique/train100.json', (x) => x.question]]) {
  const dir = join(ROOT, `target/rank-${name}-static/webrag`);
  if (!existsSync(join(dir, 'manifest.json'))) continue;
  const link = join(OUT, `${name}-static`);
  if (!existsSync(link)) execFileSync('ln', ['-s', dir, link]);
  sites.push({ name: `${name} passages (bench-rank --vectors static), questions`, dir: `${name}-static`, queries: JSON.parse(readFileSync(join(SHARED, file), 'utf8')).slice(0, QUERIES).map(q) });
}

// A server that counts the bytes it sends per run (under /c/<run>/), no compression.
const sent = new Map();
const server = await new Promise((ok) => {
  const srv = createServer((req, res) => {
    let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const m = /^\/c\/([^/]+)(\/.*)$/.exec(path);
    if (m) path = m[2];
    const file = normalize(join(OUT, path));
    let st;
    try { st = statSync(file); } catch { res.writeHead(404).end(); return; }
    if (!file.startsWith(OUT) || st.isDirectory()) { res.writeHead(404).end(); return; }
    if (m && !path.endsWith('/bench.html')) sent.set(m[1], (sent.get(m[1]) ?? 0) + st.size);
    res.writeHead(200, { 'Content-Type': file.endsWith('.js') ? 'text/javascript' : file.endsWith('.html') ? 'text/html; charset=utf-8' : 'application/octet-stream', 'Content-Length': st.size, 'Cache-Control': 'no-cache' });
    createReadStream(file).pipe(res);
  });
  srv.listen(0, '127.0.0.1', () => ok({ url: `http://127.0.0.1:${srv.address().port}`, stop: () => srv.close() }));
});
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-dev-shm-usage'] });
let runs = 0;
const rows = [];
for (const s of sites) {
  const got = [];
  for (const q of s.queries) {
    const run = `r${runs++}`;
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto(`${server.url}/c/${run}/bench.html`);
    const r = await page.evaluate(async ([q, dir]) => {
      const t0 = performance.now();
      const { StaticSearch } = await import('./js/webrag-ui.js');
      const site = await StaticSearch.open(`./${dir}/`);
      const { results, errors } = await site.search(q, { k: 10 });
      return { ms: performance.now() - t0, n: results.length, semantic: results.some((x) => x.found?.includes('semantic') || x.found?.includes('graph')), errors: errors.length };
    }, [q, s.dir]);
    await ctx.close();
    got.push({ ...r, bytes: sent.get(run) ?? 0 });
  }
  rows.push({ s, got });
}
await browser.close();
server.stop();

const cpu = readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)?.[1] ?? 'unknown CPU';
console.log(`\nthe static tier, ${new Date().toISOString().slice(0, 10)}, ${cpu}, ${(await import('node:os')).cpus().length} logical cores\n`);
console.log('| build of the CRUD site (s) | webrag --vectors static | webrag --vectors none | npx webrag index (keyword) | Pagefind 1.6.0 | static ÷ Pagefind | npx ÷ native keyword |');
console.log('|---|---|---|---|---|---|---|');
console.log(`| ${files.length} pages | ${staticSecs.toFixed(1)} | ${keywordSecs.toFixed(1)} | ${npxSecs.toFixed(1)} | ${pagefindSecs.toFixed(1)} | ${(staticSecs / pagefindSecs).toFixed(2)}× | ${(npxSecs / keywordSecs).toFixed(2)}× |`);
console.log('\n| site, queries | first hybrid query: bytes, median (min–max) | ms, median | results with semantic or graph hits | shard errors |');
console.log('|---|---|---|---|---|');
for (const { s, got } of rows) {
  const b = got.map((g) => g.bytes);
  console.log(`| ${s.name} (${got.length}) | ${median(b).toLocaleString('en')} (${Math.min(...b).toLocaleString('en')}–${Math.max(...b).toLocaleString('en')}) | ${median(got.map((g) => g.ms)).toFixed(0)} | ${got.filter((g) => g.semantic).length}/${got.length} | ${got.reduce((a, g) => a + g.errors, 0)} |`);
}
