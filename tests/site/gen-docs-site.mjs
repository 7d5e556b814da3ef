// A documentation site of long pages for the static tier's benchmarks: three mdBook books from the
// Rust toolchain's own HTML documentation (The Cargo Book, The Rust Reference, The rustc book;
// MIT / Apache-2.0), copied as they ship, sidebars, print pages and search pages included, under
// one root: about 390 pages of many sections and code blocks, built by a real site generator.
// The books come from `rustup component add rust-docs` (in rustup's default profile) or Debian's
// `rust-doc` package; the page count and bytes follow the toolchain's version, which the script
// prints.
//
//   node tests/site/gen-docs-site.mjs <out-dir> [--docs DIR]
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

const BOOKS = ['cargo', 'reference', 'rustc'];
const args = process.argv.slice(2);
const out = args[0];
if (!out) { console.error('usage: gen-docs-site.mjs <out-dir> [--docs DIR]'); process.exit(2); }
const given = args.includes('--docs') ? args[args.indexOf('--docs') + 1] : null;

function docsDir() {
  const candidates = given ? [given] : [];
  try { candidates.push(join(execFileSync('rustc', ['--print', 'sysroot'], { encoding: 'utf8' }).trim(), 'share/doc/rust/html')); } catch { /* no rustc */ }
  candidates.push('/usr/share/doc/rust-doc/html');
  const dir = candidates.find((d) => BOOKS.every((b) => existsSync(join(d, b, 'index.html'))));
  if (!dir) {
    console.error(`gen-docs-site: the Rust documentation (${BOOKS.join(', ')}) was not found in ${candidates.join(', ')}; install it with \`rustup component add rust-docs\` (or Debian's rust-doc package), or pass --docs DIR`);
    process.exit(2);
  }
  return dir;
}

const countPages = (dir) => readdirSync(dir).reduce((n, name) => {
  const p = join(dir, name);
  return n + (statSync(p).isDirectory() ? countPages(p) : /\.html?$/.test(name) ? 1 : 0);
}, 0);

const docs = docsDir();
rmSync(out, { recursive: true, force: true });
for (const b of BOOKS) cpSync(join(docs, b), join(out, b), { recursive: true });
let version = 'unknown version';
try { version = execFileSync('rustc', ['--version'], { encoding: 'utf8' }).trim(); } catch { /* Debian's docs */ }
console.log(`${out}: ${countPages(out)} pages from ${docs} (${version})`);
