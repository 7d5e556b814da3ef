// The largest contributors to the engine's .wasm, by crate: `twiggy top` (every item, CSV) over
// the linked module (cargo's output, which still has its name section), items grouped by the
// first path segment of their demangled name.
//
//   node src/web/js/build/wasm-size.mjs path/to/webrag.wasm [rows]
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';

const [file, rows = '12'] = process.argv.slice(2);
const csv = execFileSync('twiggy', ['top', '-n', '1000000', '--format', 'csv', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
const total = statSync(file).size;
const byCrate = new Map();
const sections = [];
const functions = [];
for (const line of csv.split('\n').slice(1)) {
  const m = /^(?:"((?:[^"]|"")*)"|([^,]*)),(\d+),/.exec(line);
  if (!m) continue;
  const name = (m[1] ?? m[2]).replaceAll('""', '"');
  const size = Number(m[3]);
  // Sections and data segments (names, wasm-bindgen's custom section: stripped by wasm-bindgen
  // and wasm-opt; .rodata: constant tables, kept) apart from code.
  if (/^(".*" subsection|custom section |data segment |type\[|import |export |table|elem|memory|global)/.test(name)) {
    sections.push([name, size]);
    continue;
  }
  functions.push([name, size]);
  const seg = /^[<&\s]*(?:dyn\s+)?([A-Za-z_][A-Za-z0-9_]*)::/.exec(name);
  const key = seg ? seg[1] : '(unnamed)';
  byCrate.set(key, (byCrate.get(key) ?? 0) + size);
}
const code = functions.reduce((a, [, v]) => a + v, 0);
const pct = (n) => `${((100 * n) / total).toFixed(1)}%`.padStart(6);
console.log(`largest contributors to ${file} (${total} bytes, linked, before wasm-bindgen and wasm-opt):`);
console.log('  sections and data:');
for (const [k, v] of sections.sort((a, b) => b[1] - a[1]).slice(0, 4)) console.log(`  ${String(v).padStart(9)} ${pct(v)}  ${k.slice(0, 100)}`);
console.log(`  code (${code} bytes), by crate:`);
for (const [k, v] of [...byCrate].sort((a, b) => b[1] - a[1]).slice(0, Number(rows))) console.log(`  ${String(v).padStart(9)} ${pct(v)}  ${k}`);
console.log('  largest functions:');
for (const [k, v] of functions.sort((a, b) => b[1] - a[1]).slice(0, 6)) console.log(`  ${String(v).padStart(9)} ${pct(v)}  ${k.slice(0, 100)}`);
