// webrag Web Worker: owns one WebRagCore (wasm) and runs the client's calls one at a time, in
// order (but `enrich`, see OPS).
// Protocol: request {id, op, args}; replies {id, ok: true, value} | {id, ok: false, error:
// {name, code, message}}; progress {id, progress: {phase, done, total}}; embedder events (not tied
// to a request) {event: {type, code, message}}.
//
// Idle-time upkeep: after a write (open, add, remove) and once no request is waiting, the worker
// seals grown fresh vector buffers into HNSW segments one step at a time (`core.maintain`),
// each step queued behind any request that arrived meanwhile; each step posts
// {event: {type: 'sealed', collection, vectors, merged, segments}}.
import init, { WebRagCore, WebRagEmbedder, cancel, stemModuleTag } from './webrag.js';

let core = null;

// Two tabs (or two workers) over one knowledge base: operations that commit run under the
// knowledge base's Web Lock, so one tab writes at a time; each commit bumps the store's
// generation (checked inside every write transaction) and is announced on a BroadcastChannel;
// a worker that hears of one reads the store again before its next operation and tells its page
// {event: {type: 'changed', generation}}.
let dbName = null;
let channel = null;
let stale = false;
let generation = null;
function exclusive(f) {
  const locks = self.navigator?.locks;
  return locks && dbName != null ? locks.request(`webrag:${dbName}`, f) : f();
}
async function announce() {
  const g = await core.generation();
  if (generation !== null && g !== generation) channel?.postMessage({ generation: g });
  generation = g;
}
function listen(name) {
  dbName = name;
  if (typeof BroadcastChannel !== 'function') return;
  channel = new BroadcastChannel(`webrag:${name}`);
  channel.onmessage = (e) => {
    stale = true;
    self.postMessage({ event: { type: 'changed', generation: e.data?.generation ?? null } });
  };
}
async function fresh() {
  if (!stale || !core) return;
  stale = false;
  await core.refresh();
  generation = await core.generation();
  // Another instance may have added documents of a language this one has no module for yet.
  await loadStems((await core.stats()).languages);
}

// A panic in the engine (a bug) ends its wasm instance: every later call would fail or hang. The
// panic hook calls this; the page is told at once ({fatal}), rejects the calls in flight with
// WORKER_FAILED and starts a fresh worker over the same store.
self.__webragPanic = (message) => {
  core = null;
  self.postMessage({ fatal: String(message) });
};

// Embedding workers: the CPU path's batches (ingest) run on every core while this worker stays
// free for searches. Each is a copy of this script that receives {embedWorker: {module, model,
// precision}} first (the compiled wasm module, shared; the model as `open` got it: from the
// Cache API, or bytes) and then answers {ids, lens, pools} (token ids, flat; late chunking's
// pools of token positions, see WebRagEmbedder.embedIds) with {out} (the vectors, flat) or
// {error}. They start at the first batch, so a page that only searches pays nothing.
// The pool is the engine's `CpuPool` (src/web/pool.rs); a pool that fails is dropped by the
// engine, which embeds in place from then on (event WORKERS_FAILED).
function embedPool(size, module, model, precision) {
  const all = []; const idle = []; const jobs = [];
  let broken = null; let starting = null;
  const fail = (err) => {
    broken ??= err;
    for (const j of jobs.splice(0)) j.reject(broken);
    for (const w of all) w.terminate();
  };
  const spawn = () => new Promise((resolve, reject) => {
    const w = new Worker(self.location.href, { type: 'module' });
    all.push(w);
    w.onerror = (e) => { e.preventDefault?.(); reject(new Error(`an embedding worker did not start: ${e.message ?? 'script error'}`)); };
    w.onmessage = (e) => {
      const d = e.data ?? {};
      if (d.ready) w.postMessage({ embedWorker: { module, model, precision } });
      else if (d.embedReady) { pool.memoryBytes = d.embedReady.memoryBytes; resolve(w); }
      else if (d.embedError || d.fatal) reject(new Error(`an embedding worker did not start: ${d.embedError ?? d.fatal}`));
    };
  });
  const pump = () => { while (!broken && idle.length && jobs.length) send(idle.pop(), jobs.shift()); };
  const send = (w, job) => {
    w.onmessage = (e) => {
      const { out, error, fatal } = e.data ?? {};
      if (fatal !== undefined) { job.reject(new Error(`an embedding worker stopped: ${fatal}`)); fail(new Error(String(fatal))); return; }
      if (error !== undefined) job.reject(new Error(error)); else job.resolve(out);
      idle.push(w);
      pump();
    };
    w.onerror = (e) => { e.preventDefault?.(); const err = new Error(`an embedding worker failed: ${e.message ?? 'script error'}`); job.reject(err); fail(err); };
    w.postMessage({ ids: job.ids, lens: job.lens, pools: job.pools }, [job.ids.buffer, job.lens.buffer, job.pools.buffer]);
  };
  const pool = {
    threads: size,
    memoryBytes: null,
    embed(ids, lens, pools) {
      return new Promise((resolve, reject) => {
        if (broken) { reject(broken); return; }
        jobs.push({ ids, lens, pools, resolve, reject });
        starting ??= Promise.all(Array.from({ length: size }, spawn)).then((ws) => { idle.push(...ws); pump(); }, fail);
        pump();
      });
    },
  };
  return pool;
}
// The role of an embedding worker (see embedPool).
async function embedWorker({ module, model, precision }) {
  self.onmessage = null;
  self.__webragPanic = (message) => self.postMessage({ fatal: String(message) });
  try {
    await init({ module_or_path: module });
    const embedder = await WebRagEmbedder.open(model, precision);
    self.onmessage = (e) => {
      try {
        const out = embedder.embedIds(e.data.ids, e.data.lens, e.data.pools);
        self.postMessage({ out }, [out.buffer]);
      } catch (err) {
        self.postMessage({ error: String(err?.message ?? err) });
      }
    };
    self.postMessage({ embedReady: { memoryBytes: WebRagEmbedder.memoryBytes() } });
  } catch (err) {
    self.postMessage({ embedError: String(err?.message ?? err) });
  }
}
// The engine's compiled module (shared with the embedding workers): from the page's bytes (an
// inline worker), else the .wasm beside this file.
async function compile(bytes) {
  if (bytes) return WebAssembly.compile(bytes);
  return compileUrl(new URL('./webrag_bg.wasm', import.meta.url));
}
async function compileUrl(url) {
  const resp = await fetch(url);
  if (!resp.ok) throw new Error(`${url}: HTTP ${resp.status}`);
  try {
    return await WebAssembly.compileStreaming(resp.clone());
  } catch {
    return WebAssembly.compile(await resp.arrayBuffer()); // served without application/wasm
  }
}
// The search build's Markdown and HTML parser (src/web/markup_module.rs): its engine carries
// none. `open` gets where it is (`a.markup`: the URL of search/markup.wasm, or its bytes for an
// inline worker; the full build's client passes none: its engine parses them itself). The first
// `add` with a document whose format is not 'text' compiles it; it is then installed as
// `self.__webragMarkup(text, format)`, which the engine calls for each Markdown or HTML document
// (src/web/platform.rs) and which returns the parse as JSON (text::ParsedWire) or throws. Until
// it loads, those documents reject with PARSER_UNAVAILABLE (the load is tried again at the next
// such `add`); a page that only searches, or only adds plain text, never downloads it.
let markupSource = null;
let markupModule = null;
async function loadMarkup(docs) {
  if (markupSource == null || markupModule || !Array.isArray(docs) || docs.every((d) => d?.format === 'text')) return;
  try {
    markupModule = markupSource instanceof Uint8Array ? await WebAssembly.compile(markupSource) : await compileUrl(new URL(markupSource, self.location.href));
  } catch (err) {
    const why = `the parser module (${markupSource instanceof Uint8Array ? 'inline bytes' : markupSource}) did not load: ${err?.message ?? err}`;
    self.__webragMarkup = () => { throw new Error(why); };
    return;
  }
  // It imports nothing it calls (the bindings' start function is never run): each import throws.
  const imports = {};
  for (const { module, name } of WebAssembly.Module.imports(markupModule)) {
    (imports[module] ??= {})[name] = () => { throw new Error(`the parser module called ${name}`); };
  }
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let x = null;
  self.__webragMarkup = (text, format) => {
    x ??= new WebAssembly.Instance(markupModule, imports).exports;
    try {
      const bytes = encoder.encode(text);
      const ptr = x.markup_alloc(bytes.length);
      new Uint8Array(x.memory.buffer, ptr, bytes.length).set(bytes);
      const n = x.markup_parse(ptr, bytes.length, format === 'markdown' ? 0 : 1);
      const reply = decoder.decode(new Uint8Array(x.memory.buffer, x.markup_reply(), n));
      if (reply.startsWith('{"error"')) throw new Error(JSON.parse(reply).error);
      return reply;
    } catch (err) {
      x = null; // a trap leaves the instance unusable: the next call starts a fresh one
      throw err;
    }
  };
}

// The stemmer modules (src/web/stem_module.rs: one per Snowball language, `stem/<tag>.wasm`, the
// site builder's `text::stem` built alone). `open` gets their folder (`a.stem`: a URL; the
// client's default is the package's `stem/`). Before an `add`, the modules of its documents'
// languages are loaded, and after `open`, an `importKb` and another instance's commit those of
// the knowledge base's (`stats().languages`), so a search stems its words too; each is installed in `stems` and answers
// `self.__webragStem(tag, word)` (src/web/platform.rs) synchronously. A module that does not load
// leaves its language out: an `add` in it then rejects with STEMMER_UNAVAILABLE (nothing written),
// and a search matches its words as written; it is tried again at the next call that needs it.
let stemFolder = null;
const stems = new Map(); // module tag → word → stem
self.__webragStem = (tag, word) => stems.get(tag)?.(word);
async function loadStems(tags) {
  if (stemFolder == null) return;
  const wanted = [...new Set((tags ?? []).filter((t) => typeof t === 'string').map((t) => stemModuleTag(t)).filter(Boolean))];
  await Promise.all(wanted.filter((t) => !stems.has(t)).map(async (tag) => {
    try {
      const module = await compileUrl(new URL(`${tag}.wasm`, stemFolder));
      const imports = {};
      for (const { module: m, name } of WebAssembly.Module.imports(module)) {
        (imports[m] ??= {})[name] = () => { throw new Error(`the stemmer module called ${name}`); };
      }
      stems.set(tag, moduleStemmer(new WebAssembly.Instance(module, imports).exports, tag));
    } catch (err) {
      console.warn(`webrag: the stemmer module ${tag}.wasm (${stemFolder}) did not load: ${err?.message ?? err}`);
    }
  }));
}
// `word → stem` of a stemmer module's language, through its buffer (MAX_STEM_BYTES = 64 bytes a
// word: a longer one is its own stem, as src/text/stem.rs keeps it).
function moduleStemmer(x, tag) {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const buffer = () => new Uint8Array(x.memory.buffer, x.stem_buffer(), 256);
  const t = encoder.encode(tag);
  buffer().set(t);
  const id = x.stem_language(t.length);
  if (!id) throw new Error(`the stemmer module has no stemmer for ${tag}`);
  return (word) => {
    const b = encoder.encode(word);
    if (b.length > 64) return word;
    buffer().set(b);
    return decoder.decode(buffer().slice(0, x.stem_word(id, b.length)));
  };
}

// Embedding workers by default: every core, at most this many (each holds its own copy of the
// model: see docs/api.md for the memory per worker).
const DEFAULT_WORKERS_CAP = 4;

// Models given by the page as JS functions (e.g. WebLLM) run in the page: the worker asks for
// each reply with {llmRequest: {cb, reqId, messages, step}} and the page answers with
// {llmToken: {reqId, token}}... then {llmEnd: {reqId}} or {llmError: {reqId, message}}. These
// messages bypass the request queue (the request that waits for them holds it), as does
// {cancelId}: the page's AbortSignal fired for the run started with options.cancelId.
const llmCalls = new Map();
let nextLlmCall = 1;
function pageModel(cb) {
  return (messages, opts) => {
    const reqId = nextLlmCall++;
    const pieces = [];
    let done = false; let error = null; let wake = null;
    llmCalls.set(reqId, {
      token: (t) => { pieces.push(t); wake?.(); },
      end: () => { done = true; wake?.(); },
      fail: (m) => { error = new Error(m); done = true; wake?.(); },
    });
    self.postMessage({ llmRequest: { cb, reqId, messages, step: opts?.step, schema: opts?.schema } });
    return {
      async next() {
        while (!pieces.length && !done) await new Promise((r) => { wake = r; });
        wake = null;
        if (pieces.length) return { done: false, value: pieces.shift() };
        llmCalls.delete(reqId);
        if (error) throw error;
        return { done: true, value: undefined };
      },
    };
  };
}
const modelArg = (llm) => (llm && typeof llm.callback === 'number' ? pageModel(llm.callback) : llm ?? null);
let queue = Promise.resolve();
let waiting = 0;       // requests received and not yet answered
let upkeepTimer = 0;

function scheduleUpkeep(delay = 50) {
  clearTimeout(upkeepTimer);
  upkeepTimer = setTimeout(() => {
    if (!core) return;
    if (waiting > 0) return scheduleUpkeep(delay);
    queue = queue.then(async () => {
      let more = false;
      try {
        const step = await exclusive(async () => { await fresh(); const r = await core.maintain(false); await announce(); return r; });
        more = step != null;
        if (more) self.postMessage({ event: { type: 'sealed', ...step } });
      } catch (err) {
        self.postMessage({ event: { type: 'warning', code: err?.code ?? 'INTERNAL', message: `background sealing failed: ${err?.message ?? err}` } });
      }
      if (more) scheduleUpkeep(0);
    });
  }, delay);
}

// The operations, one entry each, with everything the worker knows of it: the client's method of
// the same name posts {op, args} (client.js), index.d.ts declares it, WebRagCore implements it
// (tests/e2e/ops.test.mjs checks that the four agree). `run(args, p)` calls the engine (`p` posts
// a progress message for this request). `lock`: how it runs beside other calls and tabs —
// 'read' runs when the queue reaches it, without the Web Lock; 'commit' runs under the knowledge
// base's Web Lock, reading the store first if another tab committed and announcing its own
// commit; 'detached' is a long write that waits on a model (or the embedding workers) most of the
// time: started in queue order under the lock, which it holds to the end (so writes queued after
// it wait), but the queue moves on once it runs and reads run while it waits (the engine holds
// its lock only for each read or commit step, src/engine/shared.rs); 'open' starts the engine.
// `upkeep`: the idle-time upkeep runs after it. `llm`: it calls a model, so a cancel before it
// starts rejects with LLM_CANCELLED (else CANCELLED).
const OPS = {
  open: {
    lock: 'open',
    upkeep: true,
    run: async (a, p) => {
      // Module bytes from the page for an inline worker; else the .wasm beside this file.
      const module = await compile(a.wasm);
      await init({ module_or_path: module });
      markupSource = a.markup ?? null;
      stemFolder = a.stem ? new URL(String(a.stem).replace(/\/?$/, '/'), self.location.href) : null;
      const onEvent = (event) => self.postMessage({ event });
      listen(a.name);
      const workers = a.workers ?? Math.min(self.navigator?.hardwareConcurrency || 1, DEFAULT_WORKERS_CAP);
      const pool = workers >= 1 && typeof Worker === 'function' ? embedPool(workers, module, a.model, a.precision ?? 'f32') : null;
      // A new store gets its meta written at open: under the lock too.
      core = await exclusive(() => WebRagCore.open(a.name, a.model, a.options ?? null, p, a.device ?? 'auto', a.precision ?? 'f32', onEvent, pool));
      generation = await core.generation();
      const stats = await core.stats();
      await loadStems(stats.languages);
      return stats;
    },
  },
  add: { lock: 'detached', upkeep: true, run: async (a, p) => { await Promise.all([loadMarkup(a.docs), loadStems(Array.isArray(a.docs) ? a.docs.map((d) => d?.lang) : [])]); return core.add(a.docs, p); } },
  remove: { lock: 'commit', upkeep: true, run: (a) => core.remove(a.ids) },
  search: { lock: 'read', run: (a) => core.search(a.query, a.options ?? null) },
  explainGraph: { lock: 'read', run: (a) => core.explainGraph(a.query, a.k ?? 10) },
  testLlm: { lock: 'read', llm: true, run: (a) => core.testLlm(modelArg(a.llm)) },
  ask: { lock: 'commit', llm: true, run: (a, p) => core.ask(a.question, modelArg(a.llm), a.options ?? null, p) },
  enrich: { lock: 'detached', llm: true, run: (a, p) => core.enrich(modelArg(a.llm), a.options ?? null, p) },
  traces: { lock: 'read', run: () => core.traces() },
  exportTraces: { lock: 'read', run: (a) => core.exportTraces(a.format ?? 'events') },
  clearTraces: { lock: 'commit', run: () => core.clearTraces() },
  memory: { lock: 'read', run: () => core.memory() },
  forget: { lock: 'commit', run: () => core.forget() },
  questions: { lock: 'read', run: (a) => core.questions(a.chunkId) },
  mindMap: { lock: 'read', run: (a) => core.mindMap(a.docId) },
  decompose: { lock: 'read', llm: true, run: (a, p) => core.decompose(a.question, modelArg(a.llm), a.options ?? null, p) },
  embed: { lock: 'read', run: (a) => core.embed(a.texts, a.path ?? null) },
  stats: { lock: 'read', run: () => core.stats() },
  embedder: { lock: 'read', run: () => core.embedder() },
  profileGpu: { lock: 'read', run: (a) => core.profileGpu(a.texts) },
  loseGpuForTesting: { lock: 'read', run: () => core.loseGpuForTesting() },
  panicForTesting: { lock: 'read', run: () => core.panicForTesting() },
  abortNextCommitForTesting: { lock: 'read', run: (a) => core.abortNextCommitForTesting(a.ops) },
  documents: { lock: 'read', run: () => core.documents() },
  chunk: { lock: 'read', run: (a) => core.chunk(a.id) },
  clear: { lock: 'commit', run: () => core.clear() },
  maintain: { lock: 'commit', run: (a) => core.maintain(a.force ?? false) },
  exportKb: { lock: 'read', run: () => core.exportKb() },
  importKb: { lock: 'commit', upkeep: true, run: async (a) => { const stats = await core.importKb(a.bytes); await loadStems(stats.languages); return stats; } },
};

// Cancels received for requests (their `cancelId`): one still queued never starts.
const cancelled = new Set();

self.onmessage = (e) => {
  if (e.data?.embedWorker) { embedWorker(e.data.embedWorker); return; }
  const { llmToken, llmEnd, llmError, cancelId } = e.data;
  // A cancel bypasses the queue: the run it stops holds the queue, or it is still queued.
  if (cancelId) { cancelled.add(cancelId); if (core) cancel(cancelId); return; }
  if (llmToken) { llmCalls.get(llmToken.reqId)?.token(llmToken.token); return; }
  if (llmEnd) { llmCalls.get(llmEnd.reqId)?.end(); return; }
  if (llmError) { llmCalls.get(llmError.reqId)?.fail(llmError.message); return; }
  const { id, op, args } = e.data;
  const cid = args?.cancelId ?? args?.options?.cancelId;
  waiting++;
  const reply = (value) => self.postMessage({ id, ok: true, value });
  const fail = (err) => self.postMessage({ id, ok: false, error: { name: err?.name ?? 'Error', code: err?.code ?? 'INTERNAL', message: String(err?.message ?? err) } });
  const settle = () => {
    if (cid) cancelled.delete(cid);
    waiting--;
    if (OPS[op]?.upkeep) scheduleUpkeep();
  };
  queue = queue.then(async () => {
    let detached = false;
    try {
      if (cid && cancelled.has(cid)) {
        throw OPS[op]?.llm
          ? Object.assign(new Error(`${op} cancelled before it started`), { name: 'LlmError', code: 'LLM_CANCELLED' })
          : Object.assign(new Error(`${op} cancelled before it started`), { name: 'CancelledError', code: 'CANCELLED' });
      }
      if (!Object.hasOwn(OPS, op)) throw Object.assign(new Error(`unknown operation ${op}`), { name: 'InputError', code: 'INVALID_OPTION' });
      if (op !== 'open' && !core) throw Object.assign(new Error('not open'), { name: 'StoreError', code: 'NOT_OPEN' });
      if (op !== 'open' && typeof core[op] !== 'function') {
        throw Object.assign(new Error(`${op} is not in this build (webrag/search has no LLM pipeline, no GPU engine and no knowledge-base file): import WebRag from 'webrag'`), { name: 'InputError', code: 'NOT_IN_BUILD' });
      }
      const run = () => OPS[op].run(args, (ev) => self.postMessage({ id, progress: ev }));
      const { lock } = OPS[op];
      if (lock === 'open') reply(await run());
      else if (lock === 'detached') {
        // Started in order, under the lock; the queue moves on once it runs (see OPS).
        let started;
        const running = new Promise((r) => { started = r; });
        const done = exclusive(async () => { await fresh(); const v = run(); started(); try { return await v; } finally { await announce(); } });
        detached = true;
        done.then(reply, fail).finally(settle);
        await Promise.race([running, done.catch(() => {})]);
      } else if (lock === 'commit') reply(await exclusive(async () => { await fresh(); const v = await run(); await announce(); return v; }));
      else { await fresh(); reply(await run()); }
    } catch (err) {
      fail(err);
    } finally {
      if (!detached) settle();
    }
  });
};

// The page waits for this before its first request: the module graph (and so webrag.js) loaded.
self.postMessage({ ready: true });
