// Page-level ranking quality of webrag/static's search over a CRUD news site snapshot
// (tests/site/gen-crud-site.mjs, then `webrag index <site> --out <site>/webrag --vectors none`;
// `--vectors static` for `--mode semantic` or `hybrid`),
// in Node, reading the snapshot from disk: top-1, MRR@10 and nDCG@10 (one relevant page) for two
// kinds of query made from pages spread evenly over the site —
//   headline: the first 6 characters of the title, punctuation left out (a visitor typing the
//             start of a headline);
//   body:     10 characters from the middle of the body text, punctuation left out (a visitor
//             quoting a passage).
// `--offset X` (0..1, default 0.5) picks other pages for the same count: a held-out set.
//
// `--mode` (default keyword) is the search's: keyword, semantic (the static tier's query vector
// against the snapshot's lists) or hybrid.
//
//   node tests/site/eval-static.mjs <site> [--queries N] [--offset X] [--group page|chunk] [--mode keyword|semantic|hybrid]
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StaticSearch } from '../../src/web/js/static.js';
// The stemmer modules of `./webrag.sh build` (static.js here is the source's, with no stem/ beside it).
const STEMMER = new URL('../../pkg/stem/', import.meta.url);

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const SITE = resolve(args[0] ?? 'target/site3k');
const N = Number(opt('--queries', 200));
const OFFSET = Number(opt('--offset', 0.5));
const GROUP = opt('--group', 'page');
const MODE = opt('--mode', 'keyword');

const fromDisk = async (u) => {
  try { return new Response(readFileSync(decodeURIComponent(new URL(u).pathname))); } catch { return new Response('', { status: 404 }); }
};
const site = await StaticSearch.open(`file://${join(SITE, 'webrag')}/`, { fetch: fromDisk, offline: false, stemmer: STEMMER });
const files = [];
for (const d of readdirSync(join(SITE, 'news')).sort()) for (const f of readdirSync(join(SITE, 'news', d)).sort()) files.push(`news/${d}/${f}`);
const strip = (t) => t.replace(/[，。、“”：《》（）！？；\s]/g, '');
const kinds = { headline: [], body: [] };
for (let i = 0; i < N; i++) {
  const f = files[Math.floor((i + OFFSET) * files.length / N)];
  const html = readFileSync(join(SITE, f), 'utf8');
  kinds.headline.push({ q: strip(/<title>(.*?)<\/title>/.exec(html)[1]).slice(0, 6), page: `/${f}` });
  const body = [...html.split('</h1>')[1].matchAll(/<p>([^<]*)<\/p>/g)].map((m) => m[1]).join('');
  const span = strip(body.slice(Math.floor(body.length / 2))).slice(0, 10);
  if (span.length >= 6) kinds.body.push({ q: span, page: `/${f}` });
}
console.log(`${site.manifest.documents} pages, ${site.manifest.chunks} chunks; ${MODE} search, results grouped by ${GROUP}; queries at offset ${OFFSET}`);
for (const [kind, qs] of Object.entries(kinds)) {
  let top1 = 0;
  let mrr = 0;
  let ndcg = 0;
  for (const { q, page } of qs) {
    const { results } = await site.search(q, { k: 10, mode: MODE, group: GROUP });
    const rank = [...new Set(results.map((r) => r.url))].indexOf(page) + 1; // pages, in order
    if (rank === 1) top1++;
    if (rank) { mrr += 1 / rank; ndcg += 1 / Math.log2(rank + 1); }
  }
  console.log(`${kind}: ${qs.length} queries, top-1 ${top1}/${qs.length}, MRR@10 ${(mrr / qs.length).toFixed(3)}, nDCG@10 ${(ndcg / qs.length).toFixed(3)}`);
}
