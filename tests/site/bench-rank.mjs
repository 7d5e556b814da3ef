// Ranking quality of webrag/static against Pagefind on the same static sites, in headless
// Chromium, queries of two kinds:
//   headline: the first 6 characters of a page's title, punctuation left out (a visitor typing
//             the start of a headline), one query per page of a CRUD news site
//             (tests/site/gen-crud-site.mjs; its snapshot built with the model: vectors + graph);
//   question: the HotpotQA and MuSiQue questions (../shared/data, train100) over sites made of
//             their passage pools, one page per passage; a question's relevant pages are its
//             gold passages (2 for HotpotQA, 2–4 for MuSiQue);
//   lang:     (only when asked: --kinds lang) the Linux man pages in English, French, German,
//             Spanish and Russian (gen-man-site.mjs), keyword search stemmed and not, against
//             Pagefind: see "Site 5" below;
//   docs:     (only when asked: --kinds docs) the documentation site of gen-docs-site.mjs (three
//             mdBook books, English) with eval-stages.mjs's queries (docs-queries.mjs): 200
//             known-item section headings and the natural questions.
// For each query: webrag keyword (BM25), semantic (the int8 IVF lists), graph (PGR from the
// pages of the fused keyword + semantic results, as the page's third stage seeds it), fused (the
// staged hybrid search's final results) and Pagefind; results are pages. Printed per kind and
// system: top-1 (the first result is relevant), MRR@10 (first relevant result) and nDCG@10
// (binary gains, ideal = all relevant pages first). The query encoder is the int8 copy of the
// model (`webrag quantize`), as a site would serve it; `--query-model f32` uses the full model.
//
//   node tests/site/bench-rank.mjs [--crud DIR] [--crud-pages N] [--query-model int8|f32] [--vectors chunks|static]
//                                  [--kinds headline,question,lang,docs] [--dump PREFIX] [--typos SEED]
//
// --typos SEED: every query gets one random edit (tests/site/typos.mjs: a PRNG seeded with SEED
// and the query; examples printed): a letter deleted, inserted, replaced or swapped with its
// neighbour, in a word of 4+ letters when the query has one (a CJK query: at any character),
// the queries typed with a slip; the table then
// adds `webrag keyword, typos: false` (the same queries without typo tolerance) and counts the
// queries webrag answered through a correction (`corrections`). Every run prints a first keyword
// query's bytes (a fresh loader per query) with and without tolerance.
//
// Another model: WEBRAG_MODEL=DIR WEBRAG_MODEL_ID=ID (e.g. .models/m3e-small and
// moka-ai/m3e-small, a Chinese BERT) builds and ranks its own sites (target/rank-*-<folder>).
//
// --crud DIR reuses a generated CRUD site with its snapshot in DIR/webrag (bench-site passes
// its semantic site); otherwise target/rank-crud is generated (N pages, default 300) and
// indexed. Snapshots are built with a build cache beside them (DIR.cache), so a second run
// re-embeds nothing. Pagefind comes from npm into target/pagefind-tool, as in bench-site.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { ROOT, startServer, launch } from '../e2e/harness.mjs';
import { passageSet } from './question-sets.mjs';
import { docsQueries } from './docs-queries.mjs';
import { typo } from './typos.mjs';

const args = process.argv.slice(2);
const opt = (n, d) => (args.includes(n) ? args[args.indexOf(n) + 1] : d);
const CRUD_PAGES = Number(opt('--crud-pages', 300));
const ENCODER = opt('--query-model', 'int8');
// --vectors static: the snapshots' static tier (`webrag index --vectors static`); queries are
// embedded by webrag/static itself from the snapshot's token rows, no query encoder.
const STATIC = opt('--vectors', 'chunks') === 'static';
const BIN = join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'release/webrag');
const DEFAULT_MODEL = join(ROOT, '.models/all-MiniLM-L6-v2');
const MODEL = process.env.WEBRAG_MODEL ?? DEFAULT_MODEL;
// Another model (WEBRAG_MODEL, its id in WEBRAG_MODEL_ID) gets its own sites, snapshots and
// caches: target/rank-*-<model folder name>.
const MODEL_TAG = resolve(MODEL) === DEFAULT_MODEL ? '' : `-${basename(resolve(MODEL))}`;
const TAG = MODEL_TAG + (STATIC ? '-static' : '');
if (MODEL_TAG && !process.env.WEBRAG_MODEL_ID) throw new Error('WEBRAG_MODEL names another model: set WEBRAG_MODEL_ID to its id');
const KINDS = opt('--kinds', 'headline,question').split(',');
const TYPO_SEED = opt('--typos', null);

// --dump PREFIX: every query's ranked pages per system, as PREFIX.<kind>.<site>.json.
const DUMP = opt('--dump', null);
const env = { ...process.env, WEBRAG_MODEL: MODEL };
const esc = (s) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const strip = (t) => t.replace(/[，。、“”：《》（）！？；\s]/g, '');

execFileSync('cargo', ['build', '--quiet', '--release', '--bin', 'webrag'], { cwd: ROOT, stdio: 'inherit' });
const PF = join(ROOT, 'target/pagefind-tool');
if (!existsSync(join(PF, 'node_modules/.bin/pagefind'))) {
  mkdirSync(PF, { recursive: true });
  execFileSync('npm', ['install', '--prefix', PF, '--no-save', '--no-audit', '--no-fund', 'pagefind@1.6.0'], { stdio: 'inherit' });
}
const QUERY_MODEL = ENCODER === 'f32' ? MODEL : join(ROOT, `target/bench-model-int8${TAG}`);
if (ENCODER !== 'f32' && !STATIC) console.log(execFileSync(BIN, ['quantize', QUERY_MODEL, '--format', 'int8', '--model', MODEL], { env, encoding: 'utf8' }).trim());

/** The snapshot (with the model, build cache beside it) and Pagefind's index of `dir`. */
function index(dir) {
  const t0 = performance.now();
  execFileSync(BIN, ['index', dir, '--out', join(dir, 'webrag'), '--cache', `${dir}.cache`, ...(STATIC ? ['--vectors', 'static'] : [])], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync(join(PF, 'node_modules/.bin/pagefind'), ['--site', dir, '--output-subdir', 'pagefind', '--quiet'], { stdio: 'inherit' });
  console.log(`indexed ${relative(ROOT, dir)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

// Site 1: CRUD news, headline queries.
let crud = opt('--crud', null);
if (!crud) {
  crud = join(ROOT, `target/rank-crud${TAG}`);
  execFileSync(process.execPath, [join(ROOT, 'tests/site/gen-crud-site.mjs'), crud, '--limit', String(CRUD_PAGES)], { stdio: 'ignore' });
  index(crud);
} else if (!existsSync(join(crud, 'pagefind'))) {
  execFileSync(join(PF, 'node_modules/.bin/pagefind'), ['--site', crud, '--output-subdir', 'pagefind', '--quiet'], { stdio: 'inherit' });
}
const headline = [];
for (const d of readdirSync(join(crud, 'news')).sort()) {
  for (const f of readdirSync(join(crud, 'news', d)).sort()) {
    const title = /<title>(.*?)<\/title>/.exec(readFileSync(join(crud, 'news', d, f), 'utf8'))[1];
    headline.push({ q: strip(title).slice(0, 6), relevant: [`/news/${d}/${f}`] });
  }
}

// Sites 2 and 3: the passage pools of HotpotQA and MuSiQue, question queries.
function passageSite(name, passages) {
  const dir = join(ROOT, `target/rank-${name}${TAG}`);
  const stamp = join(dir, 'pages.json');
  const want = JSON.stringify(passages.length);
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== want) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, 'p'), { recursive: true });
    for (const [i, [title, text]] of passages.entries()) {
      writeFileSync(join(dir, 'p', `${i}.html`), `<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>${esc(title)}</title></head>\n<body>\n<main>\n<h1>${esc(title)}</h1>\n<p>${esc(text)}</p>\n</main>\n</body>\n</html>\n`);
    }
    writeFileSync(stamp, want);
  }
  index(dir);
  return dir;
}
// Site 4 (--kinds docs): the documentation site.
let docs = null;
let docsSets = { 'known-item': [], natural: [] };
if (KINDS.includes('docs')) {
  docs = join(ROOT, `target/rank-docs${TAG}`);
  if (!existsSync(join(docs, 'cargo/index.html'))) execFileSync(process.execPath, [join(ROOT, 'tests/site/gen-docs-site.mjs'), docs], { stdio: 'inherit' });
  index(docs);
  docsSets = docsQueries(docs, join(docs, 'webrag'));
}
// Site 5 (--kinds lang): the Linux man pages in five languages (gen-man-site.mjs), keyword search
// only (what stemming changes): the site as written (`<html lang>`: stemmed per language) and the
// same site with private-use language tags (`--plain`: each language searched alone, unstemmed),
// against Pagefind (which stems the 32 languages it supports and searches a language's index).
const LANG_SITES = KINDS.includes('lang') ? [join(ROOT, 'target/rank-man'), join(ROOT, 'target/rank-man-plain')] : [];
for (const [i, dir] of LANG_SITES.entries()) {
  if (!existsSync(join(dir, 'queries.json'))) execFileSync(process.execPath, [join(ROOT, 'tests/site/gen-man-site.mjs'), dir, ...(i ? ['--plain'] : [])], { stdio: 'inherit' });
  const t0 = performance.now();
  execFileSync(BIN, ['index', dir, '--out', join(dir, 'webrag'), '--cache', `${dir}.cache`, '--vectors', 'none'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (i === 0) execFileSync(join(PF, 'node_modules/.bin/pagefind'), ['--site', dir, '--output-subdir', 'pagefind', '--quiet'], { stdio: 'inherit' });
  console.log(`indexed ${relative(ROOT, dir)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
const QUESTIONS = KINDS.includes('question');
const hp = passageSet('hotpotqa');
const hotpot = QUESTIONS ? passageSite('hotpotqa', hp.passages) : null;
const hpQuestions = hp.questions;
const mu = passageSet('musique');
const musique = QUESTIONS ? passageSite('musique', mu.passages) : null;
const muQuestions = mu.questions;

const server = await startServer(23000 + Math.floor(Math.random() * 1000));
const browser = await launch({ webgpu: false });
const page = await browser.ctx.newPage();
page.on('pageerror', (e) => console.error('pageerror:', e.message));
await page.goto(`${server.url}/www/site.html?snapshot=../${relative(ROOT, crud)}/webrag/`);
if (!STATIC) await page.evaluate(async (model) => {
  const { WebRag } = await import('/pkg/search.js');
  const rag = await WebRag.open({ name: 'bench-rank-encoder', model, device: 'cpu' });
  window.rankEmbed = (texts) => rag.embed(texts);
}, `/${relative(ROOT, QUERY_MODEL)}/`);

/** Every system's ranked page paths (site-relative, up to 10) for each query on `dir`. */
async function run(dir, queries) {
  const base = `/${relative(ROOT, dir)}`;
  return page.evaluate(async ([base, qs]) => {
    const { StaticSearch } = await import('/pkg/static.js');
    const site = await StaticSearch.open(`${base}/webrag/`);
    const embed = site.manifest.static ? (texts) => site.staticEmbed(texts) : window.rankEmbed;
    if (!site.manifest.static) site.setEmbedder(embed);
    const pf = await import(`${base}/pagefind/pagefind.js`);
    await pf.init?.();
    const path = (u) => { const p = new URL(u, location.href).pathname; return p.startsWith(base) ? p.slice(base.length) : p; };
    const urls = (rs) => [...new Set(rs.map((r) => path(r.url)))].slice(0, 10);
    const out = [];
    for (const q of qs) {
      const kw = await site.search(q, { k: 10, mode: 'keyword' });
      const keyword = urls(kw.results);
      const corrected = Object.keys(kw.corrections ?? {}).length > 0;
      // A visitor's first query (a fresh loader: manifest and every shard it reads), with and
      // without typo tolerance.
      const cold = async (typos) => { const c = await StaticSearch.open(`${base}/webrag/`, { offline: false }); await c.search(q, { k: 10, mode: 'keyword', typos }); return c.transferred.bytes; };
      const keywordBytes = [await cold(true), await cold(false)];
      // The same keyword search without typo tolerance (what it adds, with --typos).
      const exact = urls((await site.search(q, { k: 10, mode: 'keyword', typos: false })).results);
      const semantic = urls((await site.search(q, { k: 10, mode: 'semantic' })).results);
      let first = [];
      const fused = urls((await site.search(q, { k: 10, onProgress: ({ stage, results }) => { if (stage === 'semantic') first = results; } })).results);
      // The graph list alone, seeded as the staged search seeds it.
      const [v] = await embed([q]);
      const g = await site.graph(v, first.map((r) => r.page).filter((p) => p !== undefined), { k: 40 });
      const graph = urls(await site.fragments(g.hits.map((h) => h.chunk)));
      const s = await pf.search(q);
      const pagefind = (await Promise.all(s.results.slice(0, 10).map((r) => r.data()))).map((d) => path(d.url).replace(/\/$/, ''));
      out.push({ keyword, exact, semantic, graph, fused, pagefind, corrected, keywordBytes });
    }
    return out;
  }, [base, queries.map((q) => q.q)]);
}

if (TYPO_SEED !== null) {
  for (const qs of [headline, hpQuestions, muQuestions, docsSets['known-item'], docsSets.natural]) for (const q of qs) q.q = typo(q.q, TYPO_SEED);
  console.log(`--typos ${TYPO_SEED}: one edit per query, e.g. ${[headline[0], hpQuestions[0], docsSets['known-item'][0]].filter(Boolean).map((q) => JSON.stringify(q.q)).join(', ')}`);
}

const SYSTEMS = ['keyword', ...(TYPO_SEED === null ? [] : ['exact']), 'semantic', 'graph', 'fused', 'pagefind'];
const scores = {};
const KIND_SETS = { headline: [[crud, headline]], question: [[hotpot, hpQuestions], [musique, muQuestions]], 'docs known-item': [[docs, docsSets['known-item']]], 'docs natural': [[docs, docsSets.natural]] };
const wanted = (kind) => KINDS.includes(kind.split(' ')[0]);
for (const [kind, sets] of Object.entries(KIND_SETS).filter(([k]) => wanted(k))) {
  scores[kind] = Object.fromEntries(SYSTEMS.map((s) => [s, { top1: 0, mrr: 0, ndcg: 0, n: 0, empty: 0 }]));
  scores[kind].corrected = 0;
  scores[kind].bytes = [];
  for (const [dir, qs] of sets) {
    const t0 = performance.now();
    const ranked = await run(dir, qs);
    scores[kind].corrected += ranked.filter((r) => r.corrected).length;
    scores[kind].bytes.push(...ranked.map((r) => r.keywordBytes));
    if (DUMP) writeFileSync(`${DUMP}.${kind.replace(' ', '-')}.${basename(dir)}.json`, JSON.stringify(qs.map((q, i) => ({ ...q, ...ranked[i] }))));
    console.log(`${relative(ROOT, dir)}: ${qs.length} ${kind} queries in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    for (const [i, { relevant }] of qs.entries()) {
      for (const s of SYSTEMS) {
        const list = ranked[i][s].map((p) => p.replace(/\.html$/, ''));
        const rel = new Set(relevant.map((p) => p.replace(/\.html$/, '')));
        const m = scores[kind][s];
        const rank = list.findIndex((p) => rel.has(p)) + 1;
        m.n++;
        if (!list.length) m.empty++;
        if (rank === 1) m.top1++;
        if (rank) m.mrr += 1 / rank;
        let dcg = 0;
        list.forEach((p, j) => { if (rel.has(p)) dcg += 1 / Math.log2(j + 2); });
        let ideal = 0;
        for (let j = 0; j < Math.min(rel.size, 10); j++) ideal += 1 / Math.log2(j + 2);
        m.ndcg += dcg / ideal;
      }
    }
  }
}
// --kinds lang: each query searched in its language (webrag's `lang`; Pagefind's index of the
// page's `<html lang>`, set before Pagefind starts), keyword only.
const langScores = {};
if (LANG_SITES.length) {
  const [man, plain] = LANG_SITES;
  const queries = JSON.parse(readFileSync(join(man, 'queries.json'), 'utf8'));
  const plainQueries = JSON.parse(readFileSync(join(plain, 'queries.json'), 'utf8'));
  const ranked = await page.evaluate(async ([bases, qs, pqs]) => {
    const { StaticSearch } = await import('/pkg/static.js');
    const [site, flat] = await Promise.all(bases.map((b) => StaticSearch.open(`${b}/webrag/`)));
    // The stemmed site searched as a page whose stemmer module does not load (a missing file, a
    // policy without 'wasm-unsafe-eval'): each word as written and by its vocabulary stem.
    const broken = await StaticSearch.open(`${bases[0]}/webrag/`, { stemmer: `${bases[0]}/no-such-stemmers/` });
    const path = (u, base) => { const p = new URL(u, location.href).pathname; return p.startsWith(base) ? p.slice(base.length) : p; };
    const urls = (rs, base) => [...new Set(rs.map((r) => path(r.url, base)))].slice(0, 10);
    const out = qs.map(() => ({}));
    const langs = [...new Set(qs.map((q) => q.lang))];
    for (const lang of langs) {
      document.documentElement.lang = lang;
      const pf = await import(`${bases[0]}/pagefind/pagefind.js?lang=${lang}`);
      await pf.init?.();
      for (const [i, q] of qs.entries()) {
        if (q.lang !== lang) continue;
        out[i].stemmed = urls((await site.search(q.q, { k: 10, mode: 'keyword', lang })).results, bases[0]);
        out[i].fallback = urls((await broken.search(q.q, { k: 10, mode: 'keyword', lang })).results, bases[0]);
        out[i].plain = urls((await flat.search(pqs[i].q, { k: 10, mode: 'keyword', lang: pqs[i].lang })).results, bases[1]);
        const s = await pf.search(q.q);
        out[i].pagefind = (await Promise.all(s.results.slice(0, 10).map((r) => r.data()))).map((d) => path(d.url, bases[0]).replace(/\/$/, ''));
      }
    }
    return out;
  }, [LANG_SITES.map((d) => `/${relative(ROOT, d)}`), queries, plainQueries]);
  for (const [i, q] of queries.entries()) {
    for (const lang of [q.lang, 'all']) {
      langScores[lang] ??= Object.fromEntries(['stemmed', 'fallback', 'plain', 'pagefind'].map((s) => [s, { top1: 0, mrr: 0, n: 0 }]));
      for (const s of ['stemmed', 'fallback', 'plain', 'pagefind']) {
        const rank = ranked[i][s].map((p) => p.replace(/\.html$/, '')).indexOf(q.relevant[0].replace(/\.html$/, '')) + 1;
        const m = langScores[lang][s];
        m.n++;
        if (rank === 1) m.top1++;
        if (rank) m.mrr += 1 / rank;
      }
    }
  }
}
await browser.close();
server.stop();
const pfVersion = JSON.parse(readFileSync(join(PF, 'node_modules/pagefind/package.json'), 'utf8')).version;
if (Object.keys(scores).length) console.log(`
ranking quality, results as pages (model: ${basename(resolve(MODEL))}, query encoder: ${STATIC ? "the static tier (webrag/static, no model)" : ENCODER}${TYPO_SEED === null ? '' : `; one random edit per query, --typos ${TYPO_SEED}`}); headline: ${relative(ROOT, crud)} (${headline.length} pages, one query each); question: HotpotQA ${hpQuestions.length} + MuSiQue ${muQuestions.length} questions over their passage pools (${hp.passages.length} and ${mu.passages.length} pages)${docs ? `; docs: ${relative(ROOT, docs)}, ${docsSets['known-item'].length} known-item headings and ${docsSets.natural.length} natural questions` : ''}
| kind | system | top-1 | MRR@10 | nDCG@10 | queries | no result |
|---|---|---|---|---|---|---|`);
for (const [kind, by] of Object.entries(scores)) {
  for (const s of SYSTEMS) {
    const m = by[s];
    const name = s === 'pagefind' ? `Pagefind ${pfVersion}` : s === 'exact' ? 'webrag keyword, typos: false' : `webrag ${s}`;
    console.log(`| ${kind} | ${name} | ${m.top1}/${m.n} (${(100 * m.top1 / m.n).toFixed(1)}%) | ${(m.mrr / m.n).toFixed(3)} | ${(m.ndcg / m.n).toFixed(3)} | ${m.n} | ${m.empty} |`);
  }
}
if (LANG_SITES.length) {
  console.log(`
stemming per language: ${relative(ROOT, LANG_SITES[0])} (gen-man-site.mjs: Debian 12's Linux man pages in en, fr, de, es, ru; a page's NAME description as its known-item query, in its language), keyword search
| language | system | top-1 | MRR@10 | queries |
|---|---|---|---|---|`);
  const names = { stemmed: 'webrag keyword, stemmed', fallback: 'webrag keyword, stemmer module missing (vocabulary stems)', plain: 'webrag keyword, not stemmed', pagefind: `Pagefind ${pfVersion}` };
  for (const [lang, by] of Object.entries(langScores).sort(([a], [b]) => (a === 'all') - (b === 'all'))) {
    for (const [s, name] of Object.entries(names)) {
      const m = by[s];
      console.log(`| ${lang} | ${name} | ${m.top1}/${m.n} (${(100 * m.top1 / m.n).toFixed(1)}%) | ${(m.mrr / m.n).toFixed(3)} | ${m.n} |`);
    }
  }
}
const median = (xs) => { const v = [...xs].sort((a, b) => a - b); return v[v.length >> 1]; };
for (const [kind, by] of Object.entries(scores)) {
  console.log(`${kind}: webrag keyword answered ${by.corrected} of ${by.keyword.n} queries through a correction (typo tolerance); a first keyword query's bytes, median: ${median(by.bytes.map((b) => b[0]))} with typo tolerance, ${median(by.bytes.map((b) => b[1]))} without (typos: false); the largest: ${Math.max(...by.bytes.map((b) => b[0]))} and ${Math.max(...by.bytes.map((b) => b[1]))}`);
}
