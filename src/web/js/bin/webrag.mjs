#!/usr/bin/env node
// `npx webrag index <site>`: builds a static-site snapshot with the engine's .wasm in Node, so a
// site owner needs no Rust toolchain. The same snapshot builder as the native CLI (`webrag index
// <site> --out …`), so both write the same bytes.
//
//   npx webrag index <site> [--out DIR] [--vectors none|chunks|static] [--model DIR] [--static-model FILE] [--model-id ID] [--no-graph] [--kb] [--no-ui]
//   npx webrag quantize <model> --out DIR [--format int8|f16]
//   npx webrag distill <model> --out FILE [--dim 256] [--model-id ID]
//
// All three run the package's site builder (build/webrag_bg.wasm, which pages never load).
// <site> is the built site (HTML and Markdown pages); --out defaults to <site>/webrag. Keyword
// search needs no model: the package ships all-MiniLM-L6-v2's tokenizer, which bounds the chunks.
// --model DIR (config.json, tokenizer.json, model.safetensors) embeds every chunk for semantic
// and graph search (--vectors chunks, the default when --model is given); --vectors static
// embeds with a static model distilled from one (the package ships all-MiniLM-L6-v2's, so it
// needs no model download, for the owner or the visitors). `distill` writes such a static model
// from any BERT model folder. `quantize` writes the
// smaller copy of a model a site serves to its visitors as their query encoder (the same bytes as
// the native `webrag quantize`). Beside the snapshot, `index` writes the search box
// (`webrag-ui.js`: webrag/ui and webrag/static in one module), so a page needs
// `<div id="search"></div><script type="module" src="/webrag/webrag-ui.js"></script>` and nothing else.
import { parseArgs } from 'node:util';
import { accessSync, closeSync, constants, fstatSync, openSync, readSync, readFileSync, readdirSync, mkdirSync, writeFileSync, rmSync, statSync, lstatSync, realpathSync, existsSync } from 'node:fs';
import { join, relative, resolve, dirname, sep, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { moduleTag } from '../static-stem.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const PKG = resolve(HERE, '..');
const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';

const USAGE = `usage: npx webrag index <site> [--out DIR] [--vectors none|chunks|static] [--model DIR] [--static-model FILE] [--model-id ID] [--no-graph] [--kb] [--no-ui]

  <site>            the built site: every .html, .htm, .md and .markdown file under it is a page
  --out DIR         where the snapshot goes (default: <site>/webrag); files of an earlier snapshot
                    that this one no longer names are removed
  --vectors MODE    none: keyword search only (default without --model);
                    chunks: embed every chunk for semantic and graph search (needs --model);
                    static: embed with a static model (no forward pass; visitors' pages embed
                    queries in plain JavaScript from a few kilobytes of its rows)
  --model DIR       a BERT sentence-embedding model: config.json, tokenizer.json, model.safetensors
                    (e.g. sentence-transformers/all-MiniLM-L6-v2)
  --static-model F  with --vectors static: the static model file (npx webrag distill); default:
                    webrag-static.wrs in --model DIR, else the package's (all-MiniLM-L6-v2's)
  --model-id ID     the id the snapshot records for that model (default
                    sentence-transformers/all-MiniLM-L6-v2; another model needs its own, e.g.
                    moka-ai/m3e-small)
  --no-graph        with vectors: leave out the graph shards (the pages' mind maps)
  --kb              also write the whole knowledge base (kb-{hash}.webrag-kb.gz) for importKb()
  --no-ui           leave out the search box script (<out>/webrag-ui.js, written by default: a page
                    mounts it with <div id="search"></div> and
                    <script type="module" src="/webrag/webrag-ui.js"></script>)
  --site-url URL    where the site is served (/docs/, https://example.org/docs/), for the search
                    box's links; default: found from where --out is in the site (../ for
                    <site>/webrag), so a site served under a sub-path links to its own pages

usage: npx webrag quantize <model> --out DIR [--format int8|f16]

  <model>           a model folder (config.json, tokenizer.json, model.safetensors)
  --out DIR         where the copy goes (config.json and tokenizer.json copied)
  --format F        int8: matrices as int8 with one scale per row, about a quarter of the bytes
                    (default); f16: half

usage: npx webrag distill <model> --out FILE [--dim 256] [--model-id ID]

  <model>           a BERT model folder (config.json, tokenizer.json, model.safetensors)
  --out FILE        the static model file (WRS1) to write
  --dim N           its dimensions (PCA components), 1 to the model's hidden size (default 256)
  --model-id ID     the source model's id the file records (default
                    sentence-transformers/all-MiniLM-L6-v2)`;

function fail(message, code = 2) {
  process.stderr.write(`webrag: ${message}\n`);
  process.exit(code);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Every page under `dir` except under `skip`, as `{path, size}` (`/`-separated, relative to `root`; bytes), sorted,
 * into `out`; what it leaves out into `left` (`[path, why]`). A page over `limit` bytes is not
 * read; a link is followed only to a file or folder inside the site (`realRoot`), and each folder
 * is read once however many links reach it (a link loop ends at once); a name that is not UTF-8,
 * a page that is not a regular file (a named pipe) or cannot be read is left out.
 */

function crawl(root, dir, skip, limit, out, left, realRoot = realpathSync(root), seen = new Set([realRoot])) {
  // Names as bytes, in byte order (the native crawl's order); one that is not UTF-8 cannot be
  // named by a URL.
  for (const raw of readdirSync(dir, { encoding: 'buffer' }).sort(Buffer.compare)) {
    let name;
    try { name = UTF8.decode(raw); } catch { left.push([join(dir, raw.toString()), 'its name is not UTF-8 (no URL names it)']); continue; }
    const path = join(dir, name);
    if (resolve(path) === skip) continue;
    const link = lstatSync(path).isSymbolicLink();
    let real;
    try { real = realpathSync(path); } catch { left.push([path, 'a broken link']); continue; }
    if (link && real !== realRoot && !real.startsWith(realRoot + sep)) { left.push([path, 'a link to outside the site']); continue; }
    const st = statSync(real);
    if (st.isDirectory()) {
      if (seen.has(real)) { left.push([path, 'a folder already read (a link)']); continue; }
      seen.add(real);
      crawl(root, path, skip, limit, out, left, realRoot, seen);
    } else if (/\.(html?|md|markdown)$/i.test(name)) {
      // A named pipe, socket or device named `.html`: reading it could block for ever.
      if (!st.isFile()) left.push([path, 'not a regular file']);
      else if (st.size > limit) left.push([path, `${st.size} bytes, larger than a page may be (${limit}: maxDocumentBytes)`]);
      else {
        try { accessSync(real, constants.R_OK); } catch (e) { left.push([path, `unreadable (${e.code})`]); continue; }
        out.push({ path: relative(root, path).split(sep).join('/'), size: st.size });
      }
    }
  }
  return out;
}

/** The engine's module, initialised (run again with relaxed SIMD enabled where Node needs the flag). */
async function engine() {
  const wasm = readFileSync(join(PKG, 'build', 'webrag_bg.wasm'));
  if (!WebAssembly.validate(wasm)) {
    // Node before 22 has relaxed SIMD behind a flag: run again with it.
    if (process.execArgv.includes(RELAXED_FLAG)) fail('this Node.js cannot run the engine (it needs WebAssembly relaxed SIMD: Node 22+)', 1);
    const r = spawnSync(process.execPath, [RELAXED_FLAG, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
    process.exit(r.status ?? 1);
  }
  const mod = await import('../build/webrag.js');
  mod.initSync({ module: wasm });
  return mod;
}

/** `--model-id ID`: the id a snapshot or static model records for the model (undefined: none given). */
function modelId(values) {
  if (values['model-id'] === undefined) return undefined;
  if (!values['model-id'].trim()) fail('--model-id: empty');
  return values['model-id'];
}

/** `distill <model> --out FILE [--dim N] [--model-id ID]`. */
async function distill(modelDir, values) {
  if (!values.out) fail('distill needs --out FILE');
  const id = modelId(values);
  const dim = Number(values.dim ?? 256);
  if (!Number.isInteger(dim) || dim < 1) fail(`--dim ${values.dim}: expected a whole number ≥ 1`);
  const read = (name) => {
    try { return readFileSync(join(modelDir, name)); } catch (e) { fail(`cannot read ${join(modelDir, name)}: ${e.message}`, 1); }
  };
  const [config, tokenizer, weights] = ['config.json', 'tokenizer.json', 'model.safetensors'].map(read);
  const { distillStatic } = await engine();
  const t0 = Date.now();
  let bytes;
  try {
    bytes = distillStatic(config, tokenizer, weights, dim, id, (ev) => {
      if (ev.done === ev.total || ev.done % 8192 === 0) process.stderr.write(`distilled ${ev.done}/${ev.total} tokens\n`);
    });
  } catch (e) { fail(`${e.code ?? 'ERROR'}: ${e.message}`, 1); }
  const out = resolve(values.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, bytes);
  console.log(`${out}: static model of ${dim} dimensions, ${bytes.length} bytes; ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/** `quantize <model> --out DIR [--format int8|f16]`. */
async function quantize(modelDir, values) {
  if (!values.out) fail('quantize needs --out DIR');
  if (!['int8', 'f16'].includes(values.format)) fail(`--format ${values.format}: expected int8 or f16`);
  const read = (name) => {
    try { return readFileSync(join(modelDir, name)); } catch (e) { fail(`cannot read ${join(modelDir, name)}: ${e.message}`, 1); }
  };
  const [config, tokenizer, weights] = ['config.json', 'tokenizer.json', 'model.safetensors'].map(read);
  const { quantizeWeights } = await engine();
  let small;
  try { small = quantizeWeights(weights, values.format); } catch (e) { fail(`${e.code ?? 'ERROR'}: ${e.message}`, 1); }
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'config.json'), config);
  writeFileSync(join(out, 'tokenizer.json'), tokenizer);
  writeFileSync(join(out, 'model.safetensors'), small);
  console.log(`${out}: model.safetensors ${weights.length} → ${small.length} bytes (${(100 * small.length / weights.length).toFixed(1)}%, ${values.format})`);
}

async function main() {
  let args;
  try {
    args = parseArgs({
      allowPositionals: true,
      options: {
        out: { type: 'string' },
        vectors: { type: 'string' },
        model: { type: 'string' },
        'model-id': { type: 'string' },
        'static-model': { type: 'string' },
        dim: { type: 'string' },
        'no-graph': { type: 'boolean', default: false },
        kb: { type: 'boolean', default: false },
        'no-ui': { type: 'boolean', default: false },
        'site-url': { type: 'string' },
        format: { type: 'string', default: 'int8' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    fail(`${e.message}\n${USAGE}`);
  }
  const { values, positionals } = args;
  if (values.help) { console.log(USAGE); return; }
  if (!['index', 'quantize', 'distill'].includes(positionals[0]) || positionals.length !== 2) fail(USAGE);
  if (positionals[0] === 'quantize') return quantize(resolve(positionals[1]), values);
  if (positionals[0] === 'distill') return distill(resolve(positionals[1]), values);
  const site = resolve(positionals[1]);
  if (!existsSync(site) || !statSync(site).isDirectory()) fail(`${positionals[1]} is not a directory`);
  const out = resolve(values.out ?? join(site, 'webrag'));
  // Where the site's root is seen from the snapshot (the manifest's siteRoot: the search box's
  // links resolve against it): --site-url, else `../` once per folder of --out below the site
  // (none when --out is outside it), as the native CLI finds it.
  const below = relative(site, out);
  const siteRoot = values['site-url'] ?? (below === '' ? './' : below === '..' || below.startsWith(`..${sep}`) || isAbsolute(below) ? undefined : '../'.repeat(below.split(sep).length));
  const vectors = values.vectors ?? (values.model ? 'chunks' : 'none');
  if (!['none', 'chunks', 'static'].includes(vectors)) fail(`--vectors ${vectors}: expected none, chunks or static`);
  if (values['static-model'] !== undefined && vectors !== 'static') fail('--static-model goes with --vectors static');
  if (vectors === 'chunks' && !values.model) fail('--vectors chunks needs --model DIR (config.json, tokenizer.json, model.safetensors)');

  const { buildSnapshot, distillStatic, maxDocumentBytes } = await engine();

  const modelDir = values.model ? resolve(values.model) : join(PKG, 'model');
  const read = (name) => {
    try { return readFileSync(join(modelDir, name)); } catch (e) { fail(`cannot read ${join(modelDir, name)}: ${e.message}`, 1); }
  };
  const model = { config: read('config.json'), tokenizer: read('tokenizer.json') };
  if (vectors === 'chunks') model.weights = read('model.safetensors');
  if (vectors === 'static') {
    // The static model: --static-model, else the model folder's webrag-static.wrs (distilled
    // now when it has none), else the package's own.
    const file = values['static-model'] ? resolve(values['static-model']) : join(modelDir, 'webrag-static.wrs');
    if (existsSync(file) || values['static-model']) {
      try { model.static = readFileSync(file); } catch (e) { fail(`cannot read ${file}: ${e.message}`, 1); }
    } else {
      process.stderr.write(`${file} is missing: distilling the static model from ${modelDir} (npx webrag distill ${modelDir} --out ${file} keeps it)\n`);
      try { model.static = distillStatic(model.config, model.tokenizer, read('model.safetensors'), 256, modelId(values)); } catch (e) { fail(`${e.code ?? 'ERROR'}: ${e.message}`, 1); }
    }
  }
  const id = modelId(values);
  if (id !== undefined) model.id = id;

  const t0 = Date.now();
  const left = [];
  const limit = maxDocumentBytes();
  const pages = crawl(site, site, out, limit, [], left);
  for (const [path, why] of left) process.stderr.write(`warning: skipped ${path}: ${why}\n`);
  process.stderr.write(`crawled ${pages.length} pages under ${site}\n`);
  // The builder reads each page when it needs it (twice: to sort, then in its batch), so the
  // site's files are never held at once; it copies a page's bytes before it asks for the next,
  // so one buffer serves every read. A file is read up to one byte past the limit (one that grew
  // past it since the crawl is then left out, not read whole).
  let buffer = Buffer.alloc(1 << 16);
  const readPage = (path) => {
    const fd = openSync(join(site, ...path.split('/')), 'r');
    try {
      const want = Math.min(fstatSync(fd).size, limit + 1);
      if (want > buffer.length) buffer = Buffer.alloc(Math.max(want, 2 * buffer.length));
      let n = 0;
      for (let r; n < want && (r = readSync(fd, buffer, n, want - n, n)) > 0;) n += r;
      return buffer.subarray(0, n);
    } finally {
      closeSync(fd);
    }
  };
  let result;
  try {
    result = await buildSnapshot(pages, readPage, model, { vectors, graph: !values['no-graph'], kb: values.kb, ...(siteRoot === undefined ? {} : { siteRoot }) }, (ev) => {
      if (ev.done === ev.total || ev.done % 1024 === 0) process.stderr.write(`indexed ${ev.done}/${ev.total} pages\n`);
    });
  } catch (e) {
    fail(`${e.code ?? 'ERROR'}: ${e.message}`, 1);
  }
  for (const id of result.skipped ?? []) process.stderr.write(`warning: skipped ${id}: no text to index\n`);
  for (const [path, why] of result.unread ?? []) process.stderr.write(`warning: skipped ${join(site, ...path.split('/'))}: ${why}\n`);
  if (result.noindex?.length) process.stderr.write(`left out ${result.noindex.length} pages marked <meta name="robots" content="noindex">: ${result.noindex.join(', ')}\n`);
  if (result.searchPages?.length) process.stderr.write(`left out ${result.searchPages.length} search pages (a search box and little text): ${result.searchPages.join(', ')}\n`);
  // The shards first, manifest.json last (the builder's order), then what the manifest no longer names.
  // A file of the same name and size is read and compared (an unchanged page's shards stay as
  // they are); a missing one is found by stat, not by a thrown read (thousands of shards).
  const keep = new Set();
  const folders = new Set();
  for (const [name, bytes] of result.files) {
    const path = join(out, ...name.split('/'));
    const folder = dirname(path);
    if (!folders.has(folder)) {
      mkdirSync(folder, { recursive: true });
      folders.add(folder);
    }
    const old = statSync(path, { throwIfNoEntry: false });
    if (old?.size !== bytes.length || Buffer.compare(readFileSync(path), bytes) !== 0) writeFileSync(path, bytes);
    keep.add(name);
  }
  for (const dir of ['t', 'f', 'v', 'g', 'p', 'w', 'k', 's', 'x', 'o']) { // snapshot::SHARD_DIRS
    let names = [];
    try { names = readdirSync(join(out, dir)); } catch { continue; }
    for (const n of names) if (!keep.has(`${dir}/${n}`)) rmSync(join(out, dir, n));
  }
  // The search box: one module with everything it imports, reading the snapshot from its own folder.
  let ui = '';
  if (!values['no-ui']) {
    const bundle = readFileSync(join(PKG, 'ui', 'webrag-ui.js'));
    const path = join(out, 'webrag-ui.js');
    let same = false;
    try { same = Buffer.compare(readFileSync(path), bundle) === 0; } catch { /* new file */ }
    if (!same) writeFileSync(path, bundle);
    ui = `; search box: ${path}`;
    // The stemmer modules of the site's stemmed languages, in `stem/` (the box loads a language's
    // from beside itself); the others removed, and the folder when no page is in one.
    const stemDir = join(out, 'stem');
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    const wanted = new Set((manifest.languages?.values ?? []).filter((l) => l.stemmed && moduleTag(l.lang)).map((l) => `${moduleTag(l.lang)}.wasm`));
    for (const f of existsSync(stemDir) ? readdirSync(stemDir) : []) if (!wanted.has(f)) rmSync(join(stemDir, f), { force: true });
    for (const f of wanted) {
      const stem = readFileSync(join(PKG, 'ui', 'stem', f));
      let fresh = false;
      try { fresh = Buffer.compare(readFileSync(join(stemDir, f)), stem) === 0; } catch { /* new file */ }
      mkdirSync(stemDir, { recursive: true });
      if (!fresh) writeFileSync(join(stemDir, f), stem);
    }
    if (wanted.size) ui += ` (and its stemmers in ${stemDir}: ${[...wanted].join(', ')})`;
    else rmSync(stemDir, { recursive: true, force: true });
  }
  const s = result.summary;
  console.log(`snapshot of ${s.documents} pages (${s.chunks} chunks) in ${out}: ${s.termShards} term shards, ${s.fragments} fragment files, ${s.lists} vector lists, ${s.topics} graph files, ${s.bytes} bytes; ${((Date.now() - t0) / 1000).toFixed(1)} s${ui}`);
}

main();
