// Renders the CRUD-RAG news corpus (../shared/data/crud_news, 17,364 Chinese articles, one per
// line: "[ date ] ，正文：text") as a static site of HTML pages, the way a site generator would:
// a <nav> and a <footer> on every page (which indexers must skip), a title, the date, the text
// in paragraphs inside <main>. With `--fields` each page also carries its part of the corpus as
// a filter (`data-webrag-filter="part:…"`) and its date as a sort key (`data-webrag-sort="date"`),
// as a site would tag its sections and posts (the e2e tests; the benchmarks' sites have none).
//
//   node tests/site/gen-crud-site.mjs <out-dir> [--limit N] [--data DIR] [--fields]
import { readFileSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const out = args[0];
if (!out) { console.error('usage: gen-crud-site.mjs <out-dir> [--limit N] [--data DIR] [--fields]'); process.exit(2); }
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const limit = Number(opt('--limit', Infinity));
const fields = args.includes('--fields');
const data = opt('--data', join(ROOT, '..', 'shared', 'data', 'crud_news'));

const esc = (s) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const parts = ['1_part_1', '1_part_2', '1_part_3', '2_part_1', '2_part_2', '2_part_3', '3_part_1', '3_part_2', '3_part_3'];
rmSync(out, { recursive: true, force: true });
let n = 0;
outer: for (const p of parts) {
  const lines = readFileSync(join(data, `documents_dup_part_${p}`), 'utf8').split('\n').filter((l) => l.trim());
  for (const [i, line] of lines.entries()) {
    if (n >= limit) break outer;
    // "[ 2023-07-28 16：40 ] ，正文：text", "07-20 23:59，正文：text", "，正文：text", ...
    const at = line.search(/正文[：:]/);
    const date = at >= 0 ? line.slice(0, at).replace(/[[\]，,\s]+/g, ' ').trim() : '';
    const body = (at >= 0 ? line.slice(at + 3) : line).trim();
    const sentences = body.split(/(?<=[。！？])/).filter((s) => s.trim());
    const title = (sentences[0] ?? body).replace(/^[^：:]{0,20}电\s*(（[^）]*）)?/, '').slice(0, 40) || `新闻 ${n + 1}`;
    const paras = [];
    for (let j = 0; j < sentences.length; j += 3) paras.push(sentences.slice(j, j + 3).join(''));
    const rel = `news/${p}/${String(i).padStart(4, '0')}.html`;
    const html = `<!doctype html>
<html lang="zh">
<head><meta charset="utf-8"><title>${esc(title)}</title></head>
<body${fields ? ` data-webrag-filter="part:${p}"` : ''}>
<nav><a href="/">首页</a> · <a href="/news/">新闻</a> · <a href="/about/">关于本站</a> · sitenavigationmenu</nav>
<main>
<h1>${esc(title)}</h1>
<p class="date"${fields && date ? ' data-webrag-sort="date"' : ''}>${esc(date)}</p>
${paras.map((t) => `<p>${esc(t)}</p>`).join('\n')}
</main>
<footer>版权所有 © 示例新闻网站 · 联系我们 · sitefooterlinks</footer>
</body>
</html>
`;
    mkdirSync(join(out, dirname(rel)), { recursive: true });
    writeFileSync(join(out, rel), html);
    n++;
  }
}
console.log(`wrote ${n} pages to ${out}`);
