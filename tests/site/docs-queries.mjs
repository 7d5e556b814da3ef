// The documentation site's queries (tests/site/gen-docs-site.mjs), shared by eval-stages.mjs and
// bench-rank.mjs: known-item (section headings, h2/h3, that name a section on one page only,
// spread evenly over the site; relevant: the heading's page) and natural (docs-questions.json,
// questions written for the site's pages before any search ran; relevant: the pages listed).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** `{'known-item': [{q, relevant}], natural: [{q, relevant}]}` of the site at `site` (`skip`: the snapshot folder), `n` known-item queries at most. */
export function docsQueries(site, skip, n = 200) {
  const pages = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (p === skip) continue;
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.html?$/.test(name)) pages.push(p);
    }
  };
  walk(site);
  const urlOf = (p) => `/${p.slice(site.length + 1)}`.replace(/\/index\.html?$/, '/');
  const text = (html) => html.replace(/<[^>]*>/g, '').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/\s+/g, ' ').trim();
  const headings = [];
  for (const p of pages) {
    const html = readFileSync(p, 'utf8');
    if (/<meta name="robots" content="noindex"/.test(html)) continue;
    for (const m of html.matchAll(/<h[23][^>]*>([\s\S]*?)<\/h[23]>/g)) {
      const q = text(m[1]);
      if (q.length >= 4) headings.push({ q, relevant: [urlOf(p)] });
    }
  }
  // A heading that names sections on several pages ("Examples", "Syntax") identifies no item.
  const pagesOf = new Map();
  for (const h of headings) pagesOf.set(h.q, new Set([...(pagesOf.get(h.q) ?? []), h.relevant[0]]));
  headings.splice(0, headings.length, ...headings.filter((h) => pagesOf.get(h.q).size === 1));
  return {
    'known-item': Array.from({ length: Math.min(n, headings.length) }, (_, i) => headings[Math.floor((i + 0.5) * headings.length / Math.min(n, headings.length))]),
    natural: JSON.parse(readFileSync(new URL('./docs-questions.json', import.meta.url), 'utf8')).map(([q, relevant]) => ({ q, relevant })),
  };
}

