// The bytes a query fetches with filters, facet counts and a sort (docs/benchmarks.md, "Filters
// and sort"): a generated blog of N pages (seeded), each with an author (of 50), 1–3 tags (of
// 200) and a date, built keyword-only with the release CLI; each query runs in a fresh
// `StaticSearch` (nothing cached), reading the snapshot's files from disk and counting their bytes.
//
//   node tests/site/bench-filters.mjs [--pages 10000] [--seed 1]
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync, readdirSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpus } from 'node:os';
import { StaticSearch } from '../../src/web/js/static.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const pages = Number(opt('--pages', 10000));
const seed = Number(opt('--seed', 1));
const dir = join(ROOT, 'target/bench-filters');
const cliPath = process.env.WEBRAG_CLI ?? join(ROOT, 'target/release/webrag');

let state = seed;
const rand = () => { state = (state * 1103515245 + 12345) % 2147483648; return state / 2147483648; };
const words = 'kettle tea water boil green black travel home cleaning limescale filter spout handle lid cup pot leaf brew steep mug'.split(' ');
rmSync(dir, { recursive: true, force: true });
mkdirSync(join(dir, 'site'), { recursive: true });
for (let i = 0; i < pages; i++) {
  const tags = [...new Set(Array.from({ length: 1 + Math.floor(rand() * 3) }, () => `tag${Math.floor(rand() * 200)}`))];
  const date = new Date(Date.UTC(2015, 0, 1) + Math.floor(rand() * 3650) * 864e5).toISOString().slice(0, 10);
  const body = Array.from({ length: 60 }, () => words[Math.floor(rand() * words.length)]).join(' ');
  writeFileSync(join(dir, 'site', `p${i}.html`), `<!doctype html><html><head><title>Post ${i}</title><meta data-webrag-sort="date[content]" content="${date}"></head>
<body><main><h1>Post ${i}</h1><p>By <span data-webrag-filter="author">author${i % 50}</span></p><p>${body}</p>
<ul>${tags.map((t) => `<li data-webrag-filter="tag">${t}</li>`).join('')}</ul></main></body></html>`);
}
execFileSync(cliPath, ['index', join(dir, 'site'), '--out', join(dir, 'site/webrag'), '--vectors', 'none', '--no-cache'], { stdio: 'pipe' });
const snap = join(dir, 'site/webrag');
const m = JSON.parse(readFileSync(join(snap, 'manifest.json'), 'utf8'));
const size = (f) => statSync(join(snap, f)).size;
const fsFetch = async (u) => { try { return new Response(readFileSync(decodeURIComponent(new URL(u).pathname))); } catch { return new Response('', { status: 404 }); } };
const cpu = cpus()[0]?.model ?? 'unknown CPU';
console.log(`${pages} pages (seed ${seed}), ${cpu}; snapshot ${readdirSync(snap, { recursive: true }).filter((f) => statSync(join(snap, f)).isFile()).map((f) => size(f)).reduce((a, b) => a + b, 0)} bytes`);
for (const f of m.filters) console.log(`filter ${f.key}: ${f.values} values, ${f.pages} pages, ${size(f.file)} bytes`);
for (const s of m.sort) console.log(`sort ${s.key}: ${s.pages} pages, ${size(s.file)} bytes`);
const cases = [
  ['query', 'green kettle', {}],
  ['query, facets: false', 'green kettle', { facets: false }],
  ['query + filter tag, facets: false', 'green kettle', { filters: { tag: 'tag7' }, facets: false }],
  ['query + filter tag (facet counts)', 'green kettle', { filters: { tag: 'tag7' } }],
  ['query + sort date, facets: false', 'green kettle', { sort: { date: 'desc' }, facets: false }],
  ['no query: filter author, sorted, facets: false', '', { filters: { author: 'author3' }, sort: { date: 'desc' }, facets: false }],
];
console.log('| query | results | bytes | files |\n|---|---|---|---|');
for (const [name, q, o] of cases) {
  const site = await StaticSearch.open(`file://${snap}/`, { fetch: fsFetch, offline: false });
  const r = await site.search(q, { mode: 'keyword', ...o });
  if (r.errors.length) throw r.errors[0];
  console.log(`| ${name} | ${r.results.length} | ${site.transferred.bytes} | ${site.transferred.files} |`);
}
