// The static tier (`webrag index --vectors static`) against Pagefind, in one run, on two sites:
// the generated CRUD news site (17,364 short pages by default) and a documentation site of long
// pages (tests/site/gen-docs-site.mjs: three mdBook books of the Rust toolchain's docs).
//   Builds: wall time and peak memory (`/usr/bin/time`'s maximum resident set) of the native CLI
//   with the static tier, of the package's `npx webrag index` with the static tier and keyword
//   only (the site builder .wasm in Node, one thread), of the native keyword build (CRUD) and of
//   Pagefind.
//   Queries, each in a fresh browser context (empty HTTP cache), every byte served counted
//   (uncompressed): the search box script a site serves (webrag-ui.js: webrag/ui and
//   webrag/static, bundled by esbuild), the manifest and every shard the first hybrid search
//   reads, and the milliseconds to its results. CRUD: the first 6 characters of titles spread
//   over the site (as bench-site.mjs); docs: tests/site/docs-questions.json; the HotpotQA and
//   MuSiQue passage sites of `bench-rank.mjs --vectors static` (when built): their first
//   questions.
//   Typing: the same queries typed into the search box (webrag/ui's mountSearch) at 200 ms a key,
//   against the same query searched once through the box (Enter), each in a fresh context;
//   bytes until the box has settled.
//
//   node tests/site/bench-static.mjs [--pages N] [--queries N] [--typed N] [--no-builds]
//
// --no-builds reuses the sites and snapshots of an earlier run and measures the queries alone.
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT, SHARED } from '../e2e/harness.mjs';

const args = process.argv.slice(2);
const opt = (n, d) => (args.includes(n) ? Number(args[args.indexOf(n) + 1]) : d);
const PAGES = opt('--pages', 17364);
const QUERIES = opt('--queries', 20);
const TYPED = opt('--typed', 10);
const BUILDS = !args.includes('--no-builds');
const OUT = join(ROOT, 'target/bench-static');
const BIN = join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'release/webrag');
const NPX = join(ROOT, 'pkg/bin/webrag.mjs');
const env = { ...process.env, WEBRAG_MODEL: process.env.WEBRAG_MODEL ?? join(ROOT, '.models/all-MiniLM-L6-v2') };
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 : NaN; };
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
const memFile = join(mkdtempSync(join(tmpdir(), 'bench-static-')), 'mem');

/** Runs `cmd args`: `{secs, mb}` (peak resident memory in MB, NaN without /usr/bin/time). */
function measure(cmd, cmdArgs, options = {}) {
  const t0 = performance.now();
  if (TIME) execFileSync(TIME, ['-f', '%M', '-o', memFile, cmd, ...cmdArgs], { stdio: ['ignore', 'ignore', 'inherit'], ...options });
  else execFileSync(cmd, cmdArgs, { stdio: ['ignore', 'ignore', 'inherit'], ...options });
  const secs = (performance.now() - t0) / 1000;
  return { secs, mb: TIME ? Number(readFileSync(memFile, 'utf8').trim().split('\n').at(-1)) / 1024 : NaN };
}

mkdirSync(OUT, { recursive: true });
if (!existsSync(join(ROOT, 'pkg/build/webrag_bg.wasm'))) throw new Error('pkg/build is missing: run ./webrag.sh build first');
execFileSync('cargo', ['build', '--quiet', '--release', '--bin', 'webrag'], { cwd: ROOT, stdio: 'inherit' });
const PF = join(ROOT, 'target/pagefind-tool');
if (!existsSync(join(PF, 'node_modules/.bin/pagefind'))) {
  mkdirSync(PF, { recursive: true });
  execFileSync('npm', ['install', '--prefix', PF, '--no-save', '--no-audit', '--no-fund', 'pagefind@1.6.0'], { stdio: 'inherit' });
}
const CRUD = join(OUT, 'crud');
const DOCS = join(OUT, 'docs');
if (BUILDS) {
  console.log(`generating ${PAGES} CRUD pages and the documentation site…`);
  execFileSync(process.execPath, [join(ROOT, 'tests/site/gen-crud-site.mjs'), CRUD, '--limit', String(PAGES)], { stdio: 'ignore' });
  console.log(execFileSync(process.execPath, [join(ROOT, 'tests/site/gen-docs-site.mjs'), DOCS], { encoding: 'utf8' }).trim());
}

// Builds. Snapshots go beside the site (OUT/<name>-<kind>), Pagefind's into the site.
const builds = [];
for (const [name, site] of BUILDS ? [['crud', CRUD], ['docs', DOCS]] : []) {
  const row = { name, pages: 0 };
  row.static = measure(BIN, ['index', site, '--out', join(OUT, `${name}-static`), '--vectors', 'static', '--no-cache'], { env });
  if (name === 'crud') row.keyword = measure(BIN, ['index', site, '--out', join(OUT, `${name}-none`), '--vectors', 'none', '--no-cache'], { env });
  row.npxStatic = measure(process.execPath, [NPX, 'index', site, '--out', join(OUT, `${name}-npx-static`), '--vectors', 'static', '--no-ui']);
  row.npxKeyword = measure(process.execPath, [NPX, 'index', site, '--out', join(OUT, `${name}-npx`), '--no-ui']);
  row.pagefind = measure(join(PF, 'node_modules/.bin/pagefind'), ['--site', site, '--output-subdir', 'pagefind', '--quiet']);
  row.pages = JSON.parse(readFileSync(join(OUT, `${name}-static/manifest.json`), 'utf8')).documents;
  builds.push(row);
}
mkdirSync(join(OUT, 'js'), { recursive: true });
// What a site's page loads: the search box bundle `npx webrag index` writes (webrag/ui with
// webrag/static), built as ./webrag.sh build builds it.
execFileSync(join(ROOT, 'node_modules/.bin/esbuild'), [join(ROOT, 'src/web/js/ui-bundle.js'), '--bundle', '--minify', '--format=esm', '--target=es2022', '--legal-comments=none', `--outfile=${join(OUT, 'js/webrag-ui.js')}`], { stdio: 'ignore' });
writeFileSync(join(OUT, 'bench.html'), '<!doctype html><meta charset="utf-8"><title>bench</title><div id="box"></div>');

// Sites and their queries.
const sites = [];
const files = [];
for (const d of readdirSync(join(CRUD, 'news')).sort()) for (const f of readdirSync(join(CRUD, 'news', d)).sort()) files.push(`news/${d}/${f}`);
const headlines = [];
for (let i = 0; i < QUERIES; i++) {
  const title = /<title>(.*?)<\/title>/.exec(readFileSync(join(CRUD, files[Math.floor((i + 0.5) * files.length / QUERIES)]), 'utf8'))[1];
  headlines.push(title.replace(/[，。、“”：《》（）\s]/g, '').slice(0, 6));
}
sites.push({ name: `CRUD news (${files.length} pages), headline queries`, dir: 'crud-static', queries: headlines, typed: true });
const docsQuestions = JSON.parse(readFileSync(join(ROOT, 'tests/site/docs-questions.json'), 'utf8')).map(([q]) => q);
const docPages = JSON.parse(readFileSync(join(OUT, 'docs-static/manifest.json'), 'utf8')).documents;
sites.push({ name: `documentation (${docPages} pages), natural questions`, dir: 'docs-static', queries: docsQuestions, typed: true });
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
/** Runs `f(page)` in a fresh context; `{...f's result, bytes}` (every byte served to it). */
async function fresh(f) {
  const run = `r${runs++}`;
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(`${server.url}/c/${run}/bench.html`);
  const r = await f(page);
  await ctx.close();
  return { ...r, bytes: sent.get(run) ?? 0 };
}
/** Mounts the search box over `dir` (waits until the snapshot is open). */
const mount = (page, dir) => page.evaluate(async (dir) => {
  const { mountSearch } = await import('./js/webrag-ui.js');
  window.box = mountSearch('#box', { base: `./${dir}/` });
  await window.box.ready;
}, dir);
/** Waits until `page` has fetched nothing for `quiet` ms. */
async function settle(page, run, quiet = 1500) {
  let last = -1;
  while (sent.get(run) !== last) { last = sent.get(run); await page.waitForTimeout(quiet); }
}
const rows = [];
for (const s of sites) {
  const got = [];
  for (const q of s.queries) {
    got.push(await fresh((page) => page.evaluate(async ([q, dir]) => {
      const t0 = performance.now();
      const { StaticSearch } = await import('./js/webrag-ui.js');
      const site = await StaticSearch.open(`./${dir}/`);
      const { results, errors } = await site.search(q, { k: 10 });
      return { ms: performance.now() - t0, n: results.length, semantic: results.some((x) => x.found?.includes('semantic') || x.found?.includes('graph')), errors: errors.length };
    }, [q, s.dir])));
  }
  const typed = [];
  for (const q of s.typed ? s.queries.slice(0, TYPED) : []) {
    const once = await fresh(async (page) => { await mount(page, s.dir); await page.evaluate((q) => window.box.search(q), q); await settle(page, `r${runs - 1}`); return {}; });
    const keys = await fresh(async (page) => {
      await mount(page, s.dir);
      await page.locator('#box input').pressSequentially(q, { delay: 200 });
      await settle(page, `r${runs - 1}`);
      return { shown: await page.locator('#box .webrag-ui-result').count() };
    });
    typed.push({ once: once.bytes, keys: keys.bytes, shown: keys.shown });
  }
  rows.push({ s, got, typed });
}
await browser.close();
server.stop();

const cpu = readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)?.[1] ?? 'unknown CPU';
const f1 = (x) => (Number.isNaN(x) ? 'n/a' : x.toFixed(1));
const f0 = (x) => (Number.isNaN(x) ? 'n/a' : x.toFixed(0));
console.log(`\nthe static tier, ${new Date().toISOString().slice(0, 10)}, ${cpu}, ${(await import('node:os')).cpus().length} logical cores\n`);
console.log('| build: s / peak MB | webrag --vectors static | npx webrag index --vectors static | npx webrag index (keyword) | webrag --vectors none | Pagefind 1.6.0 | npx static ÷ Pagefind: time / memory |');
console.log('|---|---|---|---|---|---|---|');
for (const b of builds) {
  const cell = (m) => (m ? `${f1(m.secs)} / ${f0(m.mb)}` : '–');
  console.log(`| ${b.name} (${b.pages} pages) | ${cell(b.static)} | ${cell(b.npxStatic)} | ${cell(b.npxKeyword)} | ${cell(b.keyword)} | ${cell(b.pagefind)} | ${(b.npxStatic.secs / b.pagefind.secs).toFixed(2)}× / ${(b.npxStatic.mb / b.pagefind.mb).toFixed(2)}× |`);
}
console.log('\n| site, queries | first hybrid query: bytes, median (min–max) | ms, median | results with semantic or graph hits | shard errors |');
console.log('|---|---|---|---|---|');
for (const { s, got } of rows) {
  const b = got.map((g) => g.bytes);
  console.log(`| ${s.name} (${got.length}) | ${median(b).toLocaleString('en')} (${Math.min(...b).toLocaleString('en')}–${Math.max(...b).toLocaleString('en')}) | ${median(got.map((g) => g.ms)).toFixed(0)} | ${got.filter((g) => g.semantic).length}/${got.length} | ${got.reduce((a, g) => a + g.errors, 0)} |`);
}
console.log('\n| site, queries typed at 200 ms a key | bytes searched once (Enter): median | bytes typed: median | typed ÷ once: median (max) | boxes showing results |');
console.log('|---|---|---|---|---|');
for (const { s, typed } of rows.filter((r) => r.typed.length)) {
  const ratio = typed.map((t) => t.keys / t.once);
  console.log(`| ${s.name} (${typed.length}) | ${median(typed.map((t) => t.once)).toLocaleString('en')} | ${median(typed.map((t) => t.keys)).toLocaleString('en')} | ${median(ratio).toFixed(2)}× (${Math.max(...ratio).toFixed(2)}×) | ${typed.filter((t) => t.shown > 0).length}/${typed.length} |`);
}
