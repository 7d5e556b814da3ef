// Static-site benchmark: webrag vs Pagefind on the same generated site (the CRUD news corpus as
// HTML pages, 17,364 by default), side by side in one run: index size on disk, build time, and,
// per query in a fresh browser context (cold cache), bytes transferred and milliseconds until the
// first keyword result is shown (its title and excerpt loaded); for webrag also the bytes until
// the first semantic result, the model and the embedder excluded, and then everything a visitor's
// first semantic query downloads (the engine's search build, its worker, the query encoder's
// files, the snapshot's files), cold, with the f32 model and with its int8 copy
// (`webrag quantize`), stored bytes and gzip bytes (what a server that compresses sends).
//
//   node tests/e2e/bench-site.mjs [--pages N] [--semantic-pages N] [--queries N] [--cold-semantic N]
//
// It ends with tests/site/bench-rank.mjs over the semantic site: top-1, MRR@10 and nDCG@10 of
// webrag's keyword, semantic, graph and fused results and Pagefind's, 200+ queries of two kinds.
//
// Pagefind comes from its npm package (which ships its binary), installed on first use. The site is served by a small
// server here that counts the bytes it sends per run (under /c/<run>/, so requests made by
// workers count too: Pagefind searches in a Web Worker); no compression, no COOP/COEP, so bytes
// are file sizes as stored: Pagefind's
// shards are gzip files, webrag's too; Pagefind's JS is minified, so webrag's static.js is
// minified with esbuild for the run. The semantic snapshot is built over the first
// `--semantic-pages` pages (embedding every chunk of the whole site with the CPU model takes hours
// on 2 cores); the bytes it reports are for that snapshot and are labelled so. Builds are from
// scratch (`--no-cache`), but for the semantic snapshot's rebuild after one page changed, which
// reuses the full build's cache and is timed against it.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, mkdirSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { normalize } from 'node:path';
import { ROOT } from './harness.mjs';

const args = process.argv.slice(2);
const opt = (n, d) => (args.includes(n) ? Number(args[args.indexOf(n) + 1]) : d);
const PAGES = opt('--pages', 17364);
const SEM_PAGES = opt('--semantic-pages', 300);
const QUERIES = opt('--queries', 20);
const COLD_SEMANTIC = opt('--cold-semantic', 3);
const SITE = join(ROOT, 'target/bench-site');
const SEM = join(ROOT, 'target/bench-site-semantic');
const BIN = join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'release/webrag');

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 : NaN; };
function du(dir) {
  let bytes = 0, files = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) { const d = du(p); bytes += d.bytes; files += d.files; } else { bytes += statSync(p).size; files++; }
  }
  return { bytes, files };
}
const gzipBytes = new Map();
const gz = (file) => { if (!gzipBytes.has(file)) gzipBytes.set(file, gzipSync(readFileSync(file)).length); return gzipBytes.get(file); };
const time = (f) => { const t0 = performance.now(); f(); return (performance.now() - t0) / 1000; };

console.log(`generating ${PAGES} pages…`);
execFileSync(process.execPath, [join(ROOT, 'tests/site/gen-crud-site.mjs'), SITE, '--limit', String(PAGES)], { stdio: 'inherit' });
execFileSync('cargo', ['build', '--quiet', '--release', '--bin', 'webrag'], { cwd: ROOT, stdio: 'inherit' });
const env = { ...process.env, WEBRAG_MODEL: process.env.WEBRAG_MODEL ?? join(ROOT, '.models/all-MiniLM-L6-v2') };
const webragSecs = time(() => execFileSync(BIN, ['index', SITE, '--out', join(SITE, 'webrag'), '--vectors', 'none', '--no-cache'], { env, stdio: ['ignore', 'inherit', 'ignore'] }));
// Pagefind from npm into target/pagefind-tool (not in package-lock.json: the registry mirror here
// lacks its other platforms' binaries, which would break `npm ci`).
const PF = join(ROOT, 'target/pagefind-tool');
if (!existsSync(join(PF, 'node_modules/.bin/pagefind'))) {
  mkdirSync(PF, { recursive: true });
  execFileSync('npm', ['install', '--prefix', PF, '--no-save', '--no-audit', '--no-fund', 'pagefind@1.6.0'], { stdio: 'inherit' });
}
// Vector shards for the whole site from the hashing embedder: the real sizes and layout (for the
// bytes of the semantic path at full scale), not the model's meaning.
const HV = join(ROOT, 'target/bench-site-hv');
const hashingSecs = time(() => execFileSync(BIN, ['index', SITE, '--out', HV, '--vectors', 'hashing', '--no-graph', '--no-cache'], { env, stdio: ['ignore', 'inherit', 'ignore'] }));
const pagefindSecs = time(() => execFileSync(join(PF, 'node_modules/.bin/pagefind'), ['--site', SITE, '--output-subdir', 'pagefind', '--quiet'], { stdio: 'inherit' }));
console.log(`semantic snapshot over the first ${SEM_PAGES} pages…`);
execFileSync(process.execPath, [join(ROOT, 'tests/site/gen-crud-site.mjs'), SEM, '--limit', String(SEM_PAGES)], { stdio: 'ignore' });
// A full build that leaves its build cache (in a fresh folder), then one page changed (a sentence
// appended to the last page) and the incremental rebuild from that cache.
const SEM_CACHE = join(ROOT, 'target/bench-site-semantic-cache');
rmSync(SEM_CACHE, { recursive: true, force: true });
const semBuild = () => execFileSync(BIN, ['index', SEM, '--out', join(SEM, 'webrag'), '--cache', SEM_CACHE], { env, stdio: ['ignore', 'inherit', 'ignore'] });
const semSecs = time(semBuild);
const lastPage = join(SEM, 'news/1_part_1', readdirSync(join(SEM, 'news/1_part_1')).sort().at(-1));
writeFileSync(lastPage, readFileSync(lastPage, 'utf8').replace('</body>', '<p>本页已更新。</p></body>'));
const semRebuildSecs = time(semBuild);
// The query encoder a page downloads: the model's int8 copy beside the f32 original.
const MODEL_F32 = env.WEBRAG_MODEL;
const MODEL_INT8 = join(ROOT, 'target/bench-model-int8');
const quantized = execFileSync(BIN, ['quantize', MODEL_INT8, '--format', 'int8', '--model', MODEL_F32], { env, encoding: 'utf8' }).trim();
console.log(quantized);
// webrag's loader, minified as a site would deploy it.
mkdirSync(join(SITE, 'js'), { recursive: true });
execFileSync(join(ROOT, 'node_modules/.bin/esbuild'), [join(ROOT, 'src/web/js/static.js'), '--bundle', '--minify', '--format=esm', `--outfile=${join(SITE, 'js/static.min.js')}`], { stdio: 'ignore' });
writeFileSync(join(SITE, 'bench.html'), '<!doctype html><meta charset="utf-8"><title>bench</title>');

// Queries: the first 6 characters of the titles of pages spread over the site (a user typing
// the start of a headline), deterministic.
const files = [];
for (const d of readdirSync(join(SITE, 'news')).sort()) for (const f of readdirSync(join(SITE, 'news', d)).sort()) files.push(`news/${d}/${f}`);
const queries = [];
for (let i = 0; i < QUERIES; i++) {
  const f = files[Math.floor((i + 0.5) * files.length / QUERIES)];
  const title = /<title>(.*?)<\/title>/.exec(readFileSync(join(SITE, f), 'utf8'))[1];
  queries.push({ q: title.replace(/[，。、“”：《》（）\s]/g, '').slice(0, 6), page: `/${f}` });
}
const semFiles = readdirSync(join(SEM, 'news/1_part_1')).sort().slice(0, Math.min(QUERIES, SEM_PAGES));

const sent = new Map();
const filesSent = new Map(); // run → [absolute file path]
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.json': 'application/json', '.wasm': 'application/wasm' };
const server = await new Promise((ok) => {
  const srv = createServer((req, res) => {
    let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const m = /^\/c\/([^/]+)(\/.*)$/.exec(path);
    const run = m?.[1];
    if (m) path = m[2];
    const file = normalize(join(ROOT, path));
    let st;
    try { st = statSync(file); } catch { res.writeHead(404).end(); return; }
    if (!file.startsWith(ROOT) || st.isDirectory()) { res.writeHead(404).end(); return; }
    if (run && !path.endsWith('/bench.html')) {
      sent.set(run, (sent.get(run) ?? 0) + st.size);
      filesSent.set(run, [...(filesSent.get(run) ?? []), file]);
    }
    res.writeHead(200, { 'Content-Type': TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream', 'Content-Length': st.size, 'Cache-Control': 'no-cache' });
    createReadStream(file).pipe(res);
  });
  srv.listen(0, '127.0.0.1', () => ok({ url: `http://127.0.0.1:${srv.address().port}`, stop: () => srv.close() }));
});
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-dev-shm-usage'],
});
let runs = 0;

async function cold(fn, arg) {
  const ctx = await browser.newContext(); // a fresh context: empty HTTP cache
  const page = await ctx.newPage();
  const run = `r${runs++}`;
  await page.goto(`${server.url}/c/${run}/target/bench-site/bench.html`);
  const r = await page.evaluate(fn, arg);
  await ctx.close();
  return { ...r, bytes: sent.get(run) ?? 0, files: filesSent.get(run) ?? [] };
}

const rows = { webrag: [], pagefind: [], semantic: [] };
for (const { q, page } of queries) {
  const w = await cold(async (q) => {
    const t0 = performance.now();
    const { StaticSearch } = await import('./js/static.min.js');
    const site = await StaticSearch.open('./webrag/');
    const { hits } = await site.keyword(q, { k: 10 });
    const first = hits.length ? (await site.fragments([hits[0].chunk]))[0] : null;
    return { ms: performance.now() - t0, url: first?.url ?? null, n: hits.length };
  }, q);
  const p = await cold(async (q) => {
    const t0 = performance.now();
    const pf = await import('./pagefind/pagefind.js');
    await pf.init?.();
    const s = await pf.search(q);
    const first = s.results.length ? await s.results[0].data() : null;
    return { ms: performance.now() - t0, url: first?.url ?? null, n: s.results.length };
  }, q);
  rows.webrag.push({ ...w, hit: (w.url ?? '') === page });
  rows.pagefind.push({ ...p, hit: (p.url ?? '').replace(/\.html$/, '').endsWith(page.replace(/\.html$/, '')) });
  console.log(`${q}\twebrag ${w.bytes} B ${w.ms.toFixed(0)} ms ${w.url === page ? 'top-1 ✓' : `top-1 ${w.url}`}\tpagefind ${p.bytes} B ${p.ms.toFixed(0)} ms ${rows.pagefind.at(-1).hit ? 'top-1 ✓' : `top-1 ${p.url}`}`);
}

// Semantic: query vectors from the embedder first (warm, not counted), then cold contexts that
// read keyword + semantic shards and the first result's fragment.
const warmCtx = await browser.newContext();
const warm = await warmCtx.newPage();
await warm.goto(`${server.url}/www/site.html?snapshot=../target/bench-site-semantic/webrag/&device=cpu`);
await warm.waitForFunction(() => window.siteDemo?.ready);
const semQueries = semFiles.map((f) => /<p>([^<]{10,60}?)[。，]/.exec(readFileSync(join(SEM, 'news/1_part_1', f), 'utf8').split('</h1>')[1])?.[1] ?? '新闻').map((s) => s.slice(0, 16));
const vectors = await warm.evaluate(async (qs) => {
  const { WebRag } = await import('/pkg/index.js');
  const rag = await WebRag.open({ name: 'bench-embedder', model: '/.models/all-MiniLM-L6-v2/', device: 'cpu' });
  return rag.embed(qs);
}, semQueries);
// The same questions embedded by the int8 copy (the query encoder a site would serve).
const vectors8 = await warm.evaluate(async (qs) => {
  const { WebRag } = await import('/pkg/index.js');
  const rag = await WebRag.open({ name: 'bench-embedder-int8', model: '/target/bench-model-int8/', device: 'cpu' });
  return rag.embed(qs);
}, semQueries);
await warmCtx.close();
const semantic8 = [];
for (const [i, v] of vectors8.entries()) {
  const s = await cold(async (v) => {
    const { StaticSearch } = await import('./js/static.min.js');
    const site = await StaticSearch.open('../bench-site-semantic/webrag/');
    const sem = await site.semantic(v, { k: 10 });
    const first = sem.hits.length ? (await site.fragments([sem.hits[0].chunk]))[0] : null;
    return { url: first?.url ?? null };
  }, v);
  semantic8.push({ ...s, hit: (s.url ?? '').endsWith(semFiles[i]) });
}
// Everything a visitor's first semantic query downloads, cold: the search build of the engine
// (client, worker, .wasm), the query encoder's files, static.min.js and the snapshot's files
// (keyword, semantic and graph stages of a hybrid search).
const servable = (dir) => { const r = relative(ROOT, dir); return r.startsWith('..') ? null : r; };
const encoders = [['f32', servable(MODEL_F32)], ['int8', servable(MODEL_INT8)]].filter(([, d]) => d);
const firstQuery = {};
for (const [name, dir] of encoders) {
  firstQuery[name] = [];
  for (const q of semQueries.slice(0, COLD_SEMANTIC)) {
    const r = await cold(async ([q, model]) => {
      const t0 = performance.now();
      const { WebRag } = await import('../../pkg/search.js');
      const rag = await WebRag.open({ name: 'visitor', model: new URL(model, location.href).href, device: 'cpu' });
      const { StaticSearch } = await import('./js/static.min.js');
      const site = await StaticSearch.open('../bench-site-semantic/webrag/');
      site.setEmbedder((texts) => rag.embed(texts));
      const { results } = await site.search(q, { k: 10 });
      return { ms: performance.now() - t0, n: results.length };
    }, [q, `../../${dir}/`]);
    const part = (f) => (f.startsWith(join(ROOT, 'pkg') + '/') ? 'engine' : f.startsWith(join(ROOT, dir) + '/') ? 'model' : 'snapshot');
    const sum = { engine: [0, 0], model: [0, 0], snapshot: [0, 0] };
    for (const f of r.files) { const b = sum[part(f)]; b[0] += statSync(f).size; b[1] += gz(f); }
    firstQuery[name].push({ ...r, sum });
  }
}
for (const [i, q] of semQueries.entries()) {
  const s = await cold(async ([q, v]) => {
    const t0 = performance.now();
    const { StaticSearch } = await import('./js/static.min.js');
    const site = await StaticSearch.open('../bench-site-semantic/webrag/');
    const kw = await site.keyword(q, { k: 10 });
    const afterKeyword = site.transferred.bytes;
    const sem = await site.semantic(v, { k: 10 });
    const first = sem.hits.length ? (await site.fragments([sem.hits[0].chunk]))[0] : null;
    const semanticBytes = site.transferred.bytes;
    // Graph stage: PGR over the mind maps of the first semantic hits' pages and their neighbours.
    const seeds = (await site.fragments(sem.hits.slice(0, 3).map((h) => h.chunk))).map((f) => f.page);
    const g = await site.graph(v, seeds, { k: 10 });
    if (g.hits.length) await site.fragments([g.hits[0].chunk]);
    return { ms: performance.now() - t0, keywordBytes: afterKeyword, semanticBytes, graphBytes: site.transferred.bytes, topics: g.topics.length, url: first?.url ?? null, kw: kw.hits.length };
  }, [q, vectors[i]]);
  rows.semantic.push({ ...s, hit: (s.url ?? '').endsWith(semFiles[i]) });
}
// The semantic path's bytes on the whole site (hashing-embedder shards, the same sizes).
const fullSem = [];
for (const [i, q] of semQueries.entries()) {
  const s = await cold(async ([q, v]) => {
    const { StaticSearch } = await import('./js/static.min.js');
    const site = await StaticSearch.open('../bench-site-hv/');
    await site.keyword(q, { k: 10 });
    const sem = await site.semantic(v, { k: 10 });
    if (sem.hits.length) await site.fragments([sem.hits[0].chunk]);
    return { n: sem.hits.length };
  }, [q, vectors[i]]);
  fullSem.push(s);
}
await browser.close();
server.stop();

const wSize = du(join(SITE, 'webrag'));
const pSize = du(join(SITE, 'pagefind'));
const sSize = du(join(SEM, 'webrag'));
const pct = (rs) => `${rs.filter((r) => r.hit).length}/${rs.length}`;
const m = JSON.parse(readFileSync(join(SITE, 'webrag/manifest.json'), 'utf8'));
console.log(`
site: ${PAGES} pages (${m.chunks} chunks); ${QUERIES} queries (6-character headline starts), each in a fresh browser context
| | webrag (keyword snapshot) | Pagefind ${JSON.parse(readFileSync(join(PF, 'node_modules/pagefind/package.json'), 'utf8')).version} |
|---|---|---|
| index on disk | ${wSize.bytes.toLocaleString('en')} bytes in ${wSize.files} files | ${pSize.bytes.toLocaleString('en')} bytes in ${pSize.files} files |
| build time | ${webragSecs.toFixed(1)} s | ${pagefindSecs.toFixed(1)} s |
| bytes to the first keyword result, median (min–max) | ${median(rows.webrag.map((r) => r.bytes)).toLocaleString('en')} (${Math.min(...rows.webrag.map((r) => r.bytes)).toLocaleString('en')}–${Math.max(...rows.webrag.map((r) => r.bytes)).toLocaleString('en')}) | ${median(rows.pagefind.map((r) => r.bytes)).toLocaleString('en')} (${Math.min(...rows.pagefind.map((r) => r.bytes)).toLocaleString('en')}–${Math.max(...rows.pagefind.map((r) => r.bytes)).toLocaleString('en')}) |
| ms to the first keyword result, median | ${median(rows.webrag.map((r) => r.ms)).toFixed(0)} | ${median(rows.pagefind.map((r) => r.ms)).toFixed(0)} |
| top-1 is the page the query came from | ${pct(rows.webrag)} | ${pct(rows.pagefind)} |
| ratio webrag / Pagefind, bytes to first keyword result (median) | ${(median(rows.webrag.map((r) => r.bytes)) / median(rows.pagefind.map((r) => r.bytes))).toFixed(2)} | |

semantic snapshot: first ${SEM_PAGES} pages (${JSON.parse(readFileSync(join(SEM, 'webrag/manifest.json'), 'utf8')).chunks} chunks), ${sSize.bytes.toLocaleString('en')} bytes in ${sSize.files} files, built in ${semSecs.toFixed(1)} s with the model (chunk vectors and graph shards)
| rebuild after one page changed (build cache) | ${semRebuildSecs.toFixed(1)} s, ${(100 * semRebuildSecs / semSecs).toFixed(1)}% of the full build |
| bytes to the first semantic result (keyword + semantic shards + its fragment; model and embedder excluded), median | ${median(rows.semantic.map((r) => r.bytes)).toLocaleString('en')} (of which keyword snapshot files ${median(rows.semantic.map((r) => r.keywordBytes)).toLocaleString("en")}) |
| top-1 of the semantic list is the query's page | ${pct(rows.semantic)} (query by the int8 copy: ${pct(semantic8)}) |
| snapshot bytes after the graph stage (PGR over the seed pages' mind maps and their neighbours, median ${median(rows.semantic.map((r) => r.topics))} topics), median | ${median(rows.semantic.map((r) => r.graphBytes)).toLocaleString('en')} (after the semantic stage ${median(rows.semantic.map((r) => r.semanticBytes)).toLocaleString('en')}) |

whole site with vector shards from the hashing embedder, no graph shards (${JSON.parse(readFileSync(join(HV, 'manifest.json'), 'utf8')).vectors.lists} IVF lists; built in ${hashingSecs.toFixed(1)} s; sizes and layout as with the model, meaning aside):
| bytes to the first semantic result (keyword + semantic shards + its fragment; model and embedder excluded), median | ${median(fullSem.map((r) => r.bytes)).toLocaleString('en')} | 2 × Pagefind's keyword bytes: ${(2 * median(rows.pagefind.map((r) => r.bytes))).toLocaleString('en')} |
| index on disk with vectors | ${du(HV).bytes.toLocaleString('en')} bytes in ${du(HV).files} files | |`);
const mb = (x) => (x / 1e6).toFixed(2);
const cell = (rs, k, j) => mb(median(rs.map((r) => (k ? r.sum[k][j] : r.sum.engine[j] + r.sum.model[j] + r.sum.snapshot[j]))));
console.log(`
everything the first semantic query downloads (hybrid search on the semantic snapshot in a fresh browser context, device cpu; median of ${COLD_SEMANTIC} queries), MB stored / MB gzip-compressed:
${quantized}
| | ${encoders.map(([n]) => `query encoder ${n}`).join(' | ')} |
|---|${encoders.map(() => '---').join('|')}|
| engine (webrag/search: client, worker, .wasm) | ${encoders.map(([n]) => `${cell(firstQuery[n], 'engine', 0)} / ${cell(firstQuery[n], 'engine', 1)}`).join(' | ')} |
| query encoder (config.json, tokenizer.json, model.safetensors) | ${encoders.map(([n]) => `${cell(firstQuery[n], 'model', 0)} / ${cell(firstQuery[n], 'model', 1)}`).join(' | ')} |
| static.min.js + snapshot files | ${encoders.map(([n]) => `${cell(firstQuery[n], 'snapshot', 0)} / ${cell(firstQuery[n], 'snapshot', 1)}`).join(' | ')} |
| **total** | ${encoders.map(([n]) => `**${cell(firstQuery[n], null, 0)} / ${cell(firstQuery[n], null, 1)}**`).join(' | ')} |
| ms to the first results (download, model load, one query embedded on the CPU, search) | ${encoders.map(([n]) => median(firstQuery[n].map((r) => r.ms)).toFixed(0)).join(' | ')} |`);

// Ranking quality, 200+ queries of two kinds (headline starts on the semantic site's pages;
// HotpotQA and MuSiQue questions over their passage pools), every webrag list and Pagefind.
console.log('\nranking quality (tests/site/bench-rank.mjs)…');
execFileSync(process.execPath, [join(ROOT, 'tests/site/bench-rank.mjs'), '--crud', SEM], { stdio: 'inherit' });
