// The core browser paths, run the same way in every browser engine (tests/e2e/browsers.test.mjs
// drives Chromium through playwright-core, Firefox ESR and WebKitGTK through WebDriver): loaded
// by tests/e2e/core.html. Each function runs in the page and resolves to plain JSON the test
// asserts on; a failure is caught and reported as {error} so the driver sees its message.
//
// write: open a knowledge base (the build `kernels` asks for), add four documents, search in
// every mode, export it. reread (after the page reloads): open it again from IndexedDB and search,
// then with the search build (`webrag/search`, which also adds a Markdown and an HTML document
// through its parser module and removes them), import the exported file into another base and
// search, and webrag/static's keyword and
// semantic search over a snapshot built with `--vectors static`.
import { WebRag, cpuKernels } from '/pkg/index.js';
import { WebRag as SearchRag } from '/pkg/search.js';
import { StaticSearch } from '/pkg/static.js';
import { DOCS, QUERIES, MODES, MARKUP_DOCS, MARKUP_QUERIES } from './core-data.js';

const MODEL = '/.models/all-MiniLM-L6-v2/';

async function tops(rag) {
  const out = {};
  for (const mode of MODES) out[mode] = await Promise.all(QUERIES.map(async ([q]) => (await rag.search(q, { k: 3, mode }))[0]?.docId ?? null));
  return out;
}

// The steps taken so far (a driver reads `window.coreSteps` when a call does not return).
const step = (s) => { (window.coreSteps ??= []).push(s); };

const caught = (f) => async (...a) => {
  try { return await f(...a); } catch (e) { return { error: `${e?.name ?? 'Error'} ${e?.code ?? ''}: ${e?.message ?? e} (at step ${window.coreSteps?.at(-1)})` }; }
};

export const write = caught(async ({ kernels = 'auto', name = 'core' } = {}) => {
  step('bad options');
  const code = (p) => p.then((r) => { r.close(); return null; }, (e) => e.code);
  // A value that names no build, and relaxed SIMD asked for where the browser lacks it.
  const refused = [await code(WebRag.open({ name, model: MODEL, cpuKernels: 'avx2' }))];
  if (cpuKernels() !== 'relaxed-simd') refused.push(await code(WebRag.open({ name, model: MODEL, cpuKernels: 'relaxed-simd' })));
  step('open');
  const rag = await WebRag.open({ name, model: MODEL, cpuKernels: kernels });
  step('clear');
  await rag.clear();
  step('add');
  const added = await rag.add(DOCS);
  const info = await rag.embedder();
  step('search');
  const searches = await tops(rag);
  step('int8');
  // The CPU path's int8 arithmetic (its own kernel in each build) against f32: the least cosine.
  const texts = DOCS.map((d) => d.text);
  const f32 = await rag.embed(texts);
  const q8 = await WebRag.open({ name: `${name}-int8`, model: MODEL, cpuKernels: kernels, precision: 'int8' });
  const i8 = await q8.embed(texts);
  q8.close();
  const cos = (a, b) => { let d = 0, x = 0, y = 0; for (let i = 0; i < a.length; i++) { d += a[i] * b[i]; x += a[i] * a[i]; y += b[i] * b[i]; } return d / Math.sqrt(x * y); };
  const int8Cosine = Math.min(...f32.map((v, i) => cos(v, i8[i])));
  step('exportKb');
  const file = await rag.exportKb();
  // Kept for reread: the page's sessionStorage survives the reload.
  sessionStorage.setItem('webrag-core-file', btoa(String.fromCharCode(...file)));
  rag.close();
  return { detected: cpuKernels(), refused, cpuKernels: info.cpuKernels, path: info.path, reason: info.reason, added: added.added.length, int8Cosine, searches, fileBytes: file.length };
});

export const reread = caught(async ({ kernels = 'auto', name = 'core', snapshot } = {}) => {
  step('reopen');
  const rag = await WebRag.open({ name, model: MODEL, cpuKernels: kernels });
  const stats = await rag.stats();
  const reloaded = await tops(rag);
  rag.close();
  const file = Uint8Array.from(atob(sessionStorage.getItem('webrag-core-file') ?? ''), (c) => c.charCodeAt(0));
  step('webrag/search');
  const lite = await SearchRag.open({ name, model: MODEL, cpuKernels: kernels });
  const searchBuild = { cpuKernels: (await lite.embedder()).cpuKernels, tops: await tops(lite) };
  // Markdown and HTML through the search build's parser module (search/markup.wasm, fetched at
  // this first add that needs it), then removed again.
  step('webrag/search add Markdown and HTML');
  searchBuild.added = (await lite.add(MARKUP_DOCS)).added.length;
  const hit = async (q) => {
    const h = (await lite.search(q, { k: 1, mode: 'bm25' }))[0];
    return h ? { docId: h.docId, title: h.title, headingPath: h.headingPath } : null;
  };
  searchBuild.parsed = await Promise.all(MARKUP_QUERIES.map(hit));
  await lite.remove(MARKUP_DOCS.map((d) => d.id));
  lite.close();
  step('importKb');
  const copy = await WebRag.open({ name: `${name}-import`, model: MODEL, cpuKernels: kernels });
  await copy.clear();
  const imported = await copy.importKb(file);
  const importedTops = await tops(copy);
  await copy.clear();
  copy.close();
  step('static');
  const site = await StaticSearch.open(snapshot, { offline: false });
  const url = async (q, mode) => (await site.search(q, { k: 3, mode })).results[0]?.url ?? null;
  const statics = {
    keyword: await Promise.all(QUERIES.map(([q]) => url(q, 'keyword'))),
    semantic: await Promise.all(QUERIES.map(([q]) => url(q, 'semantic'))),
  };
  return { documents: stats.documents, reloaded, searchBuild, imported: imported?.documents ?? null, importedTops, statics };
});

// A short word of letters only (the analyzer keeps it whole) naming round `i`.
const tag = (i) => `kw${[...i.toString(26)].map((c) => String.fromCharCode(97 + parseInt(c, 26))).join('')}q`;

// stress: `rounds` rounds, numbered from `first`, of open (the build `kernels` asks for), add one
// note, search for it, close; every open after the base's first is a reopen from IndexedDB (the
// driver also reloads the page between calls). `fresh` clears the base first. Resolves to the
// notes found at the top of their own BM25 search, the hybrid results returned, the base's
// documents at the end, and the time.
export const stress = caught(async ({ kernels = 'auto', first = 0, rounds = 50, name = 'stress', fresh = false } = {}) => {
  const t0 = performance.now();
  let found = 0;
  let hybrid = 0;
  let documents = 0;
  for (let i = first; i < first + rounds; i++) {
    step(`round ${i}: open`);
    const rag = await WebRag.open({ name, model: MODEL, cpuKernels: kernels });
    if (fresh && i === first) await rag.clear();
    step(`round ${i}: add`);
    await rag.add([{ id: `note-${i}`, text: `Round ${i} note ${tag(i)}: owls and herons seen at dusk near the ${tag(i)} marsh.`, format: 'text' }]);
    step(`round ${i}: search`);
    // BM25 ranks the note with the round's own word first; the hybrid search (the
    // query embedded too) runs as well, though among 200 near-identical notes its fused order
    // need not.
    const hits = await rag.search(`${tag(i)} marsh`, { k: 3, mode: 'bm25' });
    if (hits[0]?.docId === `note-${i}`) found++;
    hybrid += (await rag.search(`${tag(i)} marsh`, { k: 3 })).length;
    documents = (await rag.stats()).documents;
    step(`round ${i}: close`);
    rag.close();
  }
  return { found, hybrid, documents, ms: performance.now() - t0 };
});
