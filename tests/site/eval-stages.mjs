// Ranking quality and first-query bytes of webrag/static's search stages over a static-tier
// snapshot (`webrag index <site> --out <snapshot> --vectors static`), in Node, reading the
// snapshot from disk. The queries (--set):
//   docs (default): a documentation site (tests/site/gen-docs-site.mjs), two kinds —
//     known-item: section headings (h2, h3) that name a section on one page only, spread evenly
//                 over the site; relevant: the heading's page;
//     natural:    tests/site/docs-questions.json, questions written for the site's pages before
//                 any search ran; relevant: the pages listed with each;
//   hotpotqa, musique: the passage sites of bench-rank.mjs (target/rank-<set>-static) and their
//     questions (tests/site/question-sets.mjs).
// Per mode (keyword, semantic, hybrid: the staged search's final list) top-1, MRR@10 and the
// bytes of snapshot files a first search reads (a fresh StaticSearch per query: nothing cached),
// median and maximum. The search box script a page also loads is not counted here
// (bench-static.mjs counts everything in a browser).
//
//   node tests/site/eval-stages.mjs [<site> [<snapshot>]] [--set docs|hotpotqa|musique] [--queries N]
//                                   [--modes keyword,semantic,hybrid] [--by-dir] [--typos SEED]
//
// --typos SEED: one random edit per query (typos.mjs, as bench-rank.mjs), and the mode
// `keyword-exact` (keyword with `typos: false`) may be asked for beside the others.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StaticSearch } from '../../src/web/js/static.js';
import { passageSet } from './question-sets.mjs';
import { docsQueries } from './docs-queries.mjs';
import { typo } from './typos.mjs';
// The stemmer modules of `./webrag.sh build` (static.js here is the source's, with no stem/ beside it).
const STEMMER = new URL('../../pkg/stem/', import.meta.url);

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const SET = opt('--set', 'docs');
const positional = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
const SITE = resolve(positional[0] ?? (SET === 'docs' ? 'target/docsite' : `target/rank-${SET}-static`));
const SNAP = resolve(positional[1] ?? join(SITE, 'webrag'));
const N = Number(opt('--queries', 200));
const MODES = opt('--modes', 'keyword,semantic,hybrid').split(',');

const kinds = SET === 'docs' ? docsQueries(SITE, SNAP, N) : { question: passageSet(SET).questions };
const TYPO_SEED = opt('--typos', null);
if (TYPO_SEED !== null) {
  for (const qs of Object.values(kinds)) for (const q of qs) q.q = typo(q.q, TYPO_SEED);
  console.log(`--typos ${TYPO_SEED}: one edit per query, e.g. ${Object.values(kinds).map((qs) => JSON.stringify(qs[0]?.q)).join(', ')}`);
}

let read = 0;
const byDir = new Map();
const fromDisk = async (u) => {
  try {
    const path = decodeURIComponent(new URL(u).pathname);
    const bytes = readFileSync(path);
    read += bytes.length;
    const dir = path.slice(SNAP.length + 1).split('/')[0];
    byDir.set(dir, (byDir.get(dir) ?? 0) + bytes.length);
    return new Response(bytes);
  } catch { return new Response('', { status: 404 }); }
};
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2; };
const base = `file://${SNAP}/`;
const probe = await StaticSearch.open(base, { fetch: fromDisk, offline: false, stemmer: STEMMER });
console.log(`${probe.manifest.documents} pages, ${probe.manifest.chunks} chunks (${SNAP})`);
console.log('| kind | mode | queries | top-1 | MRR@10 | snapshot bytes of a first search: median | max |');
console.log('|---|---|---|---|---|---|---|');
for (const [kind, qs] of Object.entries(kinds)) {
  for (const mode of MODES) {
    let top1 = 0;
    let mrr = 0;
    const bytes = [];
    for (const { q, relevant } of qs) {
      read = 0;
      const site = await StaticSearch.open(base, { fetch: fromDisk, offline: false, stemmer: STEMMER });
      const { results } = await site.search(q, { k: 10, ...(mode === 'keyword-exact' ? { mode: 'keyword', typos: false } : { mode }) });
      bytes.push(read);
      const urls = [...new Set(results.map((r) => r.url))];
      const rank = urls.findIndex((u) => relevant.includes(u)) + 1;
      if (rank === 1) top1++;
      if (rank) mrr += 1 / rank;
    }
    if (args.includes('--by-dir')) console.log(`  ${mode}: total bytes by folder ${JSON.stringify(Object.fromEntries(byDir))}`);
    byDir.clear();
    console.log(`| ${kind} | ${mode} | ${qs.length} | ${top1} (${(100 * top1 / qs.length).toFixed(1)}%) | ${(mrr / qs.length).toFixed(3)} | ${median(bytes).toLocaleString('en')} | ${Math.max(...bytes).toLocaleString('en')} |`);
  }
}
