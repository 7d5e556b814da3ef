// The largest contributors to the engine's .wasm, by crate: every function of the linked module
// (cargo's output, which still has its name section; Rust's legacy symbol mangling undone) sized
// from its code-section body, grouped by the first path segment of its name; sections and data
// segments apart. Read with this file's own reader of the WebAssembly binary format (sections,
// the code section's bodies, the `name` custom section: WebAssembly Core Specification 2.0,
// §5.5 and §7.4), no tool to install.
//
//   node src/web/js/build/wasm-size.mjs path/to/webrag.wasm [rows]
import { readFileSync, statSync } from 'node:fs';

const [file, rows = '12'] = process.argv.slice(2);

const ESCAPES = { SP: '@', BP: '*', RF: '&', LT: '<', GT: '>', LP: '(', RP: ')', C: ',' };

/**
 * A Rust symbol in the legacy mangling (`_ZN` length-prefixed path segments `E`, the last the
 * `h`-prefixed hash; `$LT$`-style and `$u7b$`-style escapes, `..` for `::`) as rustc-demangle
 * writes it; any other name as it is.
 */
function demangle(sym) {
  if (!sym.startsWith('_ZN')) return sym;
  const parts = [];
  let i = 3;
  while (i < sym.length && sym[i] !== 'E') {
    const len = /^\d+/.exec(sym.slice(i))?.[0];
    if (!len) return sym;
    i += len.length;
    parts.push(sym.slice(i, i + Number(len)));
    i += Number(len);
  }
  return parts.map((p) => p.replace(/^_\$/, '$').replaceAll('..', '::')
    .replace(/\$(SP|BP|RF|LT|GT|LP|RP|C|u[0-9a-f]+)\$/g, (_, e) => ESCAPES[e] ?? String.fromCodePoint(parseInt(e.slice(1), 16)))).join('::');
}

/** `[name, bytes]` for every section item of the module in `bytes`: functions, data segments, sections. */
function items(bytes) {
  let at = 8; // magic and version
  const u32 = () => { let n = 0; let shift = 0; let b; do { b = bytes[at++]; n += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80); return n; };
  const str = () => { const n = u32(); const t = new TextDecoder().decode(bytes.subarray(at, at + n)); at += n; return t; };
  const out = { functions: [], sections: [] };
  const fnNames = new Map();
  const dataNames = new Map();
  let imported = 0;
  const bodies = [];
  const data = [];
  while (at < bytes.length) {
    const id = bytes[at++];
    const size = u32();
    const end = at + size;
    if (id === 0) {
      const name = str();
      if (name === 'name') {
        while (at < end) {
          const sub = bytes[at++];
          const subSize = u32();
          const subEnd = at + subSize;
          const kind = { 0: 'module name', 1: 'function names', 2: 'local names', 7: 'global names', 9: 'data segment names' }[sub] ?? `name subsection ${sub}`;
          out.sections.push([`"${kind}" subsection`, subSize]);
          if (sub === 1 || sub === 9) for (let n = u32(); n > 0; n--) { const i = u32(); (sub === 1 ? fnNames : dataNames).set(i, str()); }
          at = subEnd;
        }
      } else out.sections.push([`custom section '${name}'`, size]);
    } else if (id === 2) {
      for (let n = u32(); n > 0; n--) {
        str(); str();
        const kind = bytes[at++];
        if (kind === 0) { imported++; u32(); } else if (kind === 1) { at++; const f = bytes[at++]; u32(); if (f & 1) u32(); } else if (kind === 2) { const f = bytes[at++]; u32(); if (f & 1) u32(); } else { at += 2; }
      }
    } else if (id === 10) {
      for (let n = u32(); n > 0; n--) { const start = at; const len = u32(); at += len; bodies.push(at - start); }
    } else if (id === 11) {
      for (let n = u32(), i = 0; i < n; i++) {
        const start = at;
        const flags = u32();
        if (flags === 2) u32();
        if (flags !== 1) { // the offset: i32.const / i64.const n or global.get i, then end (0x0b)
          at++;
          while (bytes[at] & 0x80) at++; // the LEB128 immediate (its bytes may be 0x0b)
          at += 2;
        }
        const len = u32();
        at += len;
        data.push(at - start);
      }
    } else if (id === 9) out.sections.push(['elem[0]', size]);
    at = end;
  }
  bodies.forEach((n, i) => out.functions.push([demangle(fnNames.get(imported + i) ?? `code[${i}]`), n]));
  data.forEach((n, i) => out.sections.push([`data segment "${dataNames.get(i) ?? i}"`, n]));
  return out;
}

const total = statSync(file).size;
const byCrate = new Map();
const { functions, sections } = items(readFileSync(file));
for (const [name, size] of functions) {
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
