// A multilingual documentation site for the ranking benchmark (bench-rank.mjs --kinds lang): the
// Linux man pages that Debian 12 ships in every language asked (manpages and manpages-dev 6.03
// for English, manpages-l10n 4.18.1's translations for the others), one HTML page per manual
// page and language (`<html lang>`, title `name(section)`), rendered by mandoc. Each page's NAME
// line ("access, faccessat - check user's permissions for a file") is left out of its page and
// becomes its known-item query: the description alone, in the page's language, which the page
// must be found by from its other sections' words.
//
//   node tests/site/gen-man-site.mjs OUT [--langs en,fr,de,es,ru] [--plain]
//
// --plain: every page's `lang` a private-use tag of its language (`qen`, `qfr`: RFC 5646 §2.2.1),
// which no stemmer has, so the same site is indexed language by language without stemming.
// Writes OUT/{lang}/{name}.{section}.html and OUT/queries.json ([{lang, q, relevant: [path]}]).
// The packages are downloaded once with `apt-get download` (Debian's registry) into
// target/man-debs and unpacked there (dpkg -x); mandoc runs from its unpacked package.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../e2e/harness.mjs';

const args = process.argv.slice(2);
const OUT = args[0];
if (!OUT || OUT.startsWith('--')) throw new Error('usage: gen-man-site.mjs OUT [--langs en,fr,de,es,ru] [--plain]');
const opt = (n, d) => (args.includes(n) ? args[args.indexOf(n) + 1] : d);
const LANGS = opt('--langs', 'en,fr,de,es,ru').split(',');
const PLAIN = args.includes('--plain');

const DEBS = join(ROOT, 'target/man-debs');
const packages = ['mandoc', ...LANGS.flatMap((l) => (l === 'en' ? ['manpages', 'manpages-dev'] : [`manpages-${l}`, `manpages-${l}-dev`]))];
mkdirSync(join(DEBS, 'x'), { recursive: true });
for (const p of packages) {
  if (existsSync(join(DEBS, 'x', p))) continue;
  const have = () => readdirSync(DEBS).find((f) => f.startsWith(`${p}_`) && f.endsWith('.deb'));
  if (!have()) {
    try { execFileSync('apt-get', ['download', p], { cwd: DEBS, stdio: ['ignore', 'ignore', 'inherit'] }); } catch (e) {
      // Not every language has a -dev package.
      if (p.endsWith('-dev')) continue;
      throw new Error(`apt-get download ${p} failed (run \`apt-get update\` once): ${e.message}`);
    }
  }
  execFileSync('dpkg', ['-x', join(DEBS, have()), join(DEBS, 'x', p)]);
}
const MANDOC = join(DEBS, 'x/mandoc/usr/bin/mandoc');

// name.section → its file, per language (sections 1–8; `.so` links and empty stubs left out).
const pagesOf = (lang) => {
  const out = new Map();
  for (const p of packages.filter((x) => x !== 'mandoc' && (lang === 'en' ? ['manpages', 'manpages-dev'].includes(x) : x.startsWith(`manpages-${lang}`)))) {
    const root = join(DEBS, 'x', p, 'usr/share/man', lang === 'en' ? '' : lang);
    for (let s = 1; s <= 8; s++) {
      const dir = join(root, `man${s}`);
      if (!existsSync(dir)) continue;
      for (const f of readdirSync(dir)) if (f.endsWith('.gz')) out.set(f.replace(/\.gz$/, ''), join(dir, f));
    }
  }
  return out;
};
const byLang = Object.fromEntries(LANGS.map((l) => [l, pagesOf(l)]));
const common = [...byLang[LANGS[0]].keys()].filter((n) => LANGS.every((l) => byLang[l].has(n))).sort();

const decode = (s) => s.replace(/&#x([0-9A-Fa-f]+);/g, (_, h) => String.fromCodePoint(parseInt(h, 16))).replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
const text = (html) => decode(html.replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ').trim();
const esc = (s) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

rmSync(OUT, { recursive: true, force: true });
const queries = [];
let skipped = 0;
for (const name of common) {
  const rendered = {};
  for (const l of LANGS) {
    let html;
    try { html = execFileSync(MANDOC, ['-T', 'html', '-O', 'fragment', byLang[l].get(name)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }); } catch { html = ''; }
    const sections = html.split('<section class="Sh">');
    const nameLine = sections.length > 2 ? text(sections[1].replace(/<h1[\s\S]*?<\/h1>/, '')) : '';
    const desc = nameLine.split(/\s+[-—–]\s+/).slice(1).join(' - ').trim();
    if (!desc || sections.length < 3) break;
    rendered[l] = { desc, body: sections.slice(2).map((s) => `<section>${s}`).join('') };
  }
  if (Object.keys(rendered).length !== LANGS.length) { skipped++; continue; }
  const [cmd, sec] = [name.slice(0, name.lastIndexOf('.')), name.slice(name.lastIndexOf('.') + 1)];
  for (const l of LANGS) {
    const { desc, body } = rendered[l];
    const path = `/${l}/${name}.html`;
    const tag = PLAIN ? `q${l}` : l;
    mkdirSync(join(OUT, l), { recursive: true });
    writeFileSync(join(OUT, l, `${name}.html`), `<!doctype html>\n<html lang="${tag}">\n<head><meta charset="utf-8"><title>${esc(cmd)}(${esc(sec)})</title></head>\n<body>\n<main>\n<h1>${esc(cmd)}(${esc(sec)})</h1>\n${body.replace(/<\/?section[^>]*>/g, '')}\n</main>\n</body>\n</html>\n`);
    queries.push({ lang: tag, q: desc, relevant: [path] });
  }
}
writeFileSync(join(OUT, 'queries.json'), JSON.stringify(queries));
console.log(`${OUT}: ${common.length - skipped} manual pages in ${LANGS.join(', ')} (${queries.length} pages and queries; ${skipped} pages without a NAME line in some language left out)`);
