// The query-side stemmer of webrag/static against the JavaScript Snowball stemmers on npm: the
// bytes a site's visitor downloads for them, and how often each gives another stem than the
// stemmers the site build stems pages with (rust-stemmers, through pkg/stem/<tag>.wasm) — a word
// stemmed otherwise at query time does not find the pages that hold it.
//
//   node tests/site/compare-stemmers.mjs [SITE]
//
// SITE: the man-page site of gen-man-site.mjs (default target/rank-man, generated if missing):
// the words are the distinct terms of its pages in each language (the unstemmed analyzer's,
// letters only). The npm packages (snowball-stemmers 0.6.0, @orama/stemmers 3.1.18) are
// installed into target/stemmers-npm; bytes are each one bundled and minified by esbuild, then
// GNU gzip -9, as a site would serve it. Needs `./webrag.sh build` (pkg/stem/).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../e2e/harness.mjs';
import { analyze } from '../../src/web/js/static-text.js';
import { loadStemmer } from '../../src/web/js/static-stem.js';

const SITE = process.argv[2] ?? join(ROOT, 'target/rank-man');
if (!existsSync(join(SITE, 'queries.json'))) execFileSync(process.execPath, [join(ROOT, 'tests/site/gen-man-site.mjs'), SITE], { stdio: 'inherit' });
const NPM = join(ROOT, 'target/stemmers-npm');
const PACKAGES = ['snowball-stemmers@0.6.0', '@orama/stemmers@3.1.18'];
if (!existsSync(join(NPM, 'node_modules/@orama/stemmers'))) {
  mkdirSync(NPM, { recursive: true });
  execFileSync('npm', ['install', '--silent', '--no-audit', '--no-fund', '--prefix', NPM, ...PACKAGES], { stdio: 'inherit' });
}
const require = createRequire(join(NPM, 'package.json'));
const snowball = require('snowball-stemmers');
const ESBUILD = join(ROOT, 'node_modules/.bin/esbuild');

/** Bytes of `source` (a module's text) bundled and minified, and gzip -9 of that. */
function bundled(name, source) {
  const entry = join(NPM, `${name}.entry.mjs`);
  writeFileSync(entry, source);
  const out = execFileSync(ESBUILD, [entry, '--bundle', '--minify', '--format=esm', '--log-level=error'], { cwd: NPM, maxBuffer: 1 << 26 });
  return [out.length, execFileSync('gzip', ['-9c'], { input: out, maxBuffer: 1 << 26 }).length];
}

// The 18 languages of the site build (src/text/stem.rs) by their names in the two packages.
const LANGS = { ar: 'arabic', da: 'danish', nl: 'dutch', en: 'english', fi: 'finnish', fr: 'french', de: 'german', el: 'greek', hu: 'hungarian', it: 'italian', no: 'norwegian', pt: 'portuguese', ro: 'romanian', ru: 'russian', es: 'spanish', sv: 'swedish', ta: 'tamil', tr: 'turkish' };
const oramaHas = (name) => Boolean(JSON.parse(readFileSync(join(NPM, 'node_modules/@orama/stemmers/package.json'), 'utf8')).exports[`./${name}`]);

const gz = (f) => execFileSync('gzip', ['-9c', f], { maxBuffer: 1 << 26 }).length;
const STEM_DIR = join(ROOT, 'pkg/stem');
const ourFiles = readdirSync(STEM_DIR).filter((f) => f.endsWith('.wasm'));
const ourGz = ourFiles.map((f) => gz(join(STEM_DIR, f))).sort((a, b) => a - b);
const ourBytes = ourFiles.reduce((a, f) => a + readFileSync(join(STEM_DIR, f)).length, 0);
const [allSnowball] = [bundled('snowball', "import s from 'snowball-stemmers'; globalThis.s = s;")];
const covered = Object.values(LANGS).filter((n) => snowball.algorithms().includes(n));
console.log(`bytes a visitor downloads for the query side (esbuild --bundle --minify, gzip -9; ${new Date().toISOString().slice(0, 10)}):`);
console.log('| stemmer | languages of the 18 | bytes | gzip -9 |\n|---|---|---|---|');
console.log(`| webrag pkg/stem/<tag>.wasm (rust-stemmers, one module per language) | ${ourFiles.length} | ${ourBytes} all | ${ourGz[0]}–${ourGz.at(-1)} each (median ${ourGz[ourGz.length >> 1]}), ${ourGz.reduce((a, b) => a + b, 0)} all |`);
console.log(`| snowball-stemmers 0.6.0 (all its languages in one module) | ${covered.length} (not: ${Object.values(LANGS).filter((n) => !covered.includes(n)).join(', ')}) | ${allSnowball[0]} | ${allSnowball[1]} |`);
const oramaSizes = Object.values(LANGS).filter(oramaHas).map((n) => bundled(`orama-${n}`, `import { stemmer } from '@orama/stemmers/${n}'; globalThis.s = stemmer;`));
const oramaGz = oramaSizes.map((b) => b[1]).sort((a, b) => a - b);
console.log(`| @orama/stemmers 3.1.18 (one module per language) | ${oramaSizes.length} | ${oramaSizes.reduce((a, b) => a + b[0], 0)} all | ${oramaGz[0]}–${oramaGz.at(-1)} each, ${oramaGz.reduce((a, b) => a + b, 0)} all |`);

// Agreement with the site build's stems on the site's words.
const queries = JSON.parse(readFileSync(join(SITE, 'queries.json'), 'utf8'));
const langs = [...new Set(queries.map((q) => q.lang))];
console.log(`\nwords stemmed otherwise than the site build stems them (${SITE.replace(`${ROOT}/`, '')}: the distinct letter-only terms of each language's pages):`);
console.log('| language | words | snowball-stemmers 0.6.0 | @orama/stemmers 3.1.18 |\n|---|---|---|---|');
for (const lang of langs) {
  const words = new Set();
  for (const f of readdirSync(join(SITE, lang))) {
    const html = readFileSync(join(SITE, lang, f), 'utf8').replace(/<[^>]*>/g, ' ');
    for (const t of analyze(html)) if (/^\p{L}+$/u.test(t)) words.add(t);
  }
  const rust = await loadStemmer(lang, pathToFileURL(`${STEM_DIR}/`));
  const name = LANGS[lang];
  const sb = covered.includes(name) ? snowball.newStemmer(name) : null;
  const orama = oramaHas(name) ? (await import(pathToFileURL(require.resolve(`@orama/stemmers/${name}`)).href.replace(/\.cjs$/, '.js'))).stemmer : null;
  let [a, b] = [0, 0];
  for (const w of words) {
    const r = rust(w);
    if (sb && sb.stem(w) !== r) a++;
    if (orama && orama(w) !== r) b++;
  }
  const pct = (n, has) => (has ? `${n} (${(100 * n / words.size).toFixed(2)}%)` : 'no stemmer');
  console.log(`| ${lang} | ${words.size} | ${pct(a, sb)} | ${pct(b, orama)} |`);
}
