// webrag main-thread client, shared by the two builds' entries (index.js: the full engine;
// search.js: the search build). Heavy work runs in a dedicated Web Worker; this file only posts
// messages and turns failures into Error subclasses with `name` and `code`.

/** Base class of every webrag error; `code` is a stable SCREAMING_SNAKE_CASE string. */
export class WebRagError extends Error {
  constructor(message, code) { super(message); this.name = 'WebRagError'; this.code = code; }
}
/** Bad document or option (EMPTY_DOCUMENT, INVALID_UTF8, DOCUMENT_TOO_LARGE, DUPLICATE_ID, ...). */
export class InputError extends WebRagError { constructor(m, c) { super(m, c); this.name = 'InputError'; } }
/** Model files missing, corrupt or unsupported (MODEL_FILE_UNAVAILABLE, MODEL_TENSOR_MISSING, ...). */
export class ModelError extends WebRagError { constructor(m, c) { super(m, c); this.name = 'ModelError'; } }
/** IndexedDB problem (STORE_BLOCKED, QUOTA_EXCEEDED, STORE_VERSION_TOO_NEW, ...). */
export class StoreError extends WebRagError { constructor(m, c) { super(m, c); this.name = 'StoreError'; } }
export class GpuError extends WebRagError { constructor(m, c) { super(m, c); this.name = 'GpuError'; } }
/** LLM endpoint or output problem (LLM_UNAUTHORIZED, LLM_RATE_LIMITED, LLM_TIMEOUT, LLM_BAD_OUTPUT, LLM_CALLBACK_FAILED, LLM_CANCELLED, ...). */
export class LlmError extends WebRagError { constructor(m, c) { super(m, c); this.name = 'LlmError'; } }
/** An operation without a model call (add, search) whose AbortSignal fired before it started (CANCELLED). */
export class CancelledError extends WebRagError { constructor(m, c) { super(m, c); this.name = 'CancelledError'; } }

const CLASSES = { InputError, ModelError, StoreError, GpuError, LlmError, CancelledError };

function rehydrate({ name, code, message }) {
  const C = CLASSES[name] ?? WebRagError;
  return new C(message, code);
}

/**
 * A knowledge base in IndexedDB, searched in a Web Worker.
 * @example
 *   const rag = await WebRag.open({ name: 'notes', model: '/models/all-MiniLM-L6-v2/' });
 *   await rag.add([{ id: 'a.md', text: '# Hello\n\nworld' }], { onProgress: console.log });
 *   const hits = await rag.search('hello', { k: 5 });
 */
/** How long `WebRag.open` waits for a worker to load by default (`startTimeoutMs`), in ms. */
export const WORKER_START_MS = 30_000;

// Feature detection by validation (the way wasm-feature-detect does it): the smallest module
// that uses a SIMD128 instruction (`i8x16.popcnt`), and one that uses a relaxed-SIMD one
// (`i8x16.relaxed_swizzle`); each validates only where the engine implements it.
const SIMD128_PROBE = [0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11];
const RELAXED_SIMD_PROBE = [0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 15, 1, 13, 0, 65, 1, 253, 15, 65, 2, 253, 15, 253, 128, 2, 11];
const validates = (bytes) => { try { return WebAssembly.validate(new Uint8Array(bytes)); } catch { return false; } };

/**
 * The build of the engine this browser runs, by feature detection: 'relaxed-simd' (the default
 * `webrag_bg.wasm`) where relaxed SIMD validates, else 'simd128' (`baseline/webrag_bg.wasm`);
 * null where WebAssembly SIMD128 itself is missing (no build of the engine runs there).
 */
export function cpuKernels() {
  if (!validates(SIMD128_PROBE)) return null;
  return validates(RELAXED_SIMD_PROBE) ? 'relaxed-simd' : 'simd128';
}

// The build `open` starts: the one asked for, else the detected one. Throws INVALID_OPTION for
// another value or for 'relaxed-simd' where it would not compile, UNSUPPORTED_BROWSER without
// SIMD128.
function chooseKernels(asked) {
  if (!['auto', 'relaxed-simd', 'simd128'].includes(asked)) {
    throw new InputError(`option cpuKernels: ${JSON.stringify(asked)} is not 'auto', 'relaxed-simd' or 'simd128'`, 'INVALID_OPTION');
  }
  const here = cpuKernels();
  if (here === null) {
    throw new WebRagError('this browser lacks WebAssembly SIMD128, which every build of the engine needs (webrag/static searches without it)', 'UNSUPPORTED_BROWSER');
  }
  if (asked === 'relaxed-simd' && here !== 'relaxed-simd') {
    throw new InputError("option cpuKernels: 'relaxed-simd' but this browser lacks relaxed SIMD (use 'auto' or 'simd128')", 'INVALID_OPTION');
  }
  return asked === 'auto' ? here : asked;
}

// Resolves once the worker's module graph has loaded (it posts {ready: true}); false when the
// script could not be loaded (a bundler that did not emit worker.js beside this file) or did not
// load within `ms` (a request that never answers).
function started(worker, ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(false), ms);
    const done = (ok) => { clearTimeout(timer); worker.removeEventListener('message', onMessage); worker.removeEventListener('error', onError); resolve(ok); };
    const onMessage = (e) => { if (e.data?.ready) done(true); };
    const onError = (e) => { e.preventDefault?.(); done(false); };
    worker.addEventListener('message', onMessage);
    worker.addEventListener('error', onError);
  });
}

async function gunzip(base64) {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// The worker: `workerUrl` when given; else the one `beside()` starts (worker.js and its .wasm
// beside the client, where bundlers that follow `new URL(…, import.meta.url)` put them: Vite,
// webpack 5, Parcel; also no bundler at all); else both from the module `inline()` imports
// (esbuild, which does not follow that pattern: it works with no configuration, at the cost of the
// inlined .wasm in the bundle). Each waits at most `ms` for the worker to load. Resolves to
// {worker, wasm, markup}: `wasm` holds the module bytes for an inline worker, else null;
// `markup` the search build's parser module bytes for an inline worker (its inline module's
// `markupGzipBase64`), else null. Rejects with WORKER_FAILED when none starts.
export async function startWorker(workerUrl, beside, inline, ms = WORKER_START_MS) {
  if (workerUrl) {
    const worker = new Worker(workerUrl, { type: 'module' });
    if (await started(worker, ms)) return { worker, wasm: null, markup: null };
    worker.terminate();
    throw new WebRagError(`the webrag worker at ${String(workerUrl)} did not start within ${ms} ms`, 'WORKER_FAILED');
  }
  let worker = null;
  try {
    worker = beside();
  } catch { /* no import.meta.url (e.g. an IIFE bundle) */ }
  if (worker && (await started(worker, ms))) return { worker, wasm: null, markup: null };
  worker?.terminate();
  const { workerSource, wasmGzipBase64, markupGzipBase64 } = await inline();
  const url = URL.createObjectURL(new Blob([workerSource], { type: 'text/javascript' }));
  worker = new Worker(url, { type: 'module' });
  // The URL stays valid: the worker starts its embedding workers from it (self.location).
  const ok = await started(worker, ms);
  if (!ok) {
    worker.terminate();
    throw new WebRagError(`the webrag worker could not start within ${ms} ms (a Content-Security-Policy without worker-src blob:?)`, 'WORKER_FAILED');
  }
  return { worker, wasm: await gunzip(wasmGzipBase64), markup: markupGzipBase64 ? await gunzip(markupGzipBase64) : null };
}

/** How long `add` waits for the answer to `navigator.storage.persist()`, in ms. */
const PERSIST_WAIT_MS = 1_000;

// `promise`'s value, or null when it has not settled within `ms` (it is left to settle later).
function answerSoon(promise, ms) {
  let timer;
  return Promise.race([promise, new Promise((resolve) => { timer = setTimeout(() => resolve(null), ms); })]).finally(() => clearTimeout(timer));
}

/** Cache API cache that holds downloaded model files. */
export const MODEL_CACHE = 'webrag-models-v1';

/** `(client, op, args)` → the worker's answer: set by the class below for `testHooks`. */
let callWorker;

/**
 * The fault hooks of the end-to-end tests (testing.js, a test-only entry the package does not
 * export): `loseGpu()` destroys the GPU device as a driver reset would (resolves to whether one
 * was in use); `panic()` panics inside the engine as a bug would (rejects with WORKER_FAILED,
 * and a fresh worker takes over); `abortNextCommit(ops)` makes the next commit abort its
 * IndexedDB transaction after `ops` writes (STORE_ABORTED; nothing of the batch stays).
 */
export function testHooks(rag) {
  return {
    loseGpu: () => callWorker(rag, 'loseGpuForTesting', {}),
    panic: () => callWorker(rag, 'panicForTesting', {}),
    abortNextCommit: (ops) => callWorker(rag, 'abortNextCommitForTesting', { ops }),
  };
}

export class WebRag {
  // The test-only entry (testing.js) reaches the worker through this; it is not the API.
  static { callWorker = (rag, op, args) => rag.#call(op, args); }

  #worker; #next = 1; #pending = new Map(); #persistAsked = false; #onEvent; #models = new Map(); #nextModel = 1; #nextCancel = 1; #signals = new Map();
  #reopen = null; #ready = null;

  constructor(worker, onEvent) {
    this.#onEvent = onEvent;
    this.#attach(worker);
  }

  #attach(worker) {
    this.#worker = worker;
    worker.onmessage = (e) => {
      const { id, ok, value, error, progress, event, llmRequest, fatal } = e.data;
      if (fatal !== undefined) { this.#failed(`the engine stopped: ${fatal}`); return; }
      if (event) { this.#onEvent?.(event); return; }
      if (llmRequest) { this.#runModel(llmRequest); return; }
      const p = this.#pending.get(id);
      if (!p) return;
      if (progress) { p.onProgress?.(progress); return; }
      this.#pending.delete(id);
      ok ? p.resolve(value) : p.reject(rehydrate(error));
    };
    worker.onerror = (e) => { e.preventDefault?.(); this.#failed(`worker failed: ${e.message}`); };
  }

  // The worker died (a panic in the engine, an uncaught error): every call in flight rejects with
  // WORKER_FAILED now (its message ends with the operation, `(during search)`), and a fresh
  // worker opens the same knowledge base from the store; calls made meanwhile wait for it (and
  // reject with WORKER_FAILED if it cannot start).
  #failed(message) {
    const worker = this.#worker;
    worker.onmessage = null; worker.onerror = null;
    worker.terminate();
    for (const p of this.#pending.values()) p.reject(new WebRagError(`${message} (during ${p.op})`, 'WORKER_FAILED'));
    this.#pending.clear();
    this.#onEvent?.({ type: 'warning', code: 'WORKER_FAILED', message: `${message}; starting a fresh worker` });
    if (!this.#reopen) return;
    this.#ready = this.#reopen().then(
      () => { this.#onEvent?.({ type: 'restarted' }); },
      (e) => { throw new WebRagError(`the worker could not be started again: ${e?.message ?? e}`, 'WORKER_FAILED'); },
    );
    this.#ready.catch(() => {});
  }

  // A model given as a function runs here, in the page; its reply (a string, or an async
  // iterable of pieces) goes back to the worker piece by piece.
  async #runModel({ cb, reqId, messages, step, schema }) {
    const post = (m) => this.#worker.postMessage(m);
    try {
      const fn = this.#models.get(cb);
      if (!fn) throw new Error('the model function is gone');
      const r = await fn(messages, { step, ...(schema ? { schema } : {}), signal: this.#signals.get(cb) });
      if (typeof r === 'string') post({ llmToken: { reqId, token: r } });
      else if (r && typeof r[Symbol.asyncIterator] === 'function') {
        for await (const piece of r) {
          if (typeof piece !== 'string') throw new Error('the model yielded something other than a string');
          post({ llmToken: { reqId, token: piece } });
        }
      } else throw new Error('the model returned neither a string nor an async iterable of strings');
      post({ llmEnd: { reqId } });
    } catch (err) {
      post({ llmError: { reqId, message: String(err?.message ?? err) } });
    }
  }

  // `llm` as posted: a config object as is; a function stays here and the worker gets its number.
  #model(llm) {
    if (typeof llm !== 'function') return llm;
    const cb = this.#nextModel++;
    this.#models.set(cb, llm);
    return { callback: cb };
  }

  async #withModel(llm, f, signal) {
    const m = this.#model(llm);
    if (m?.callback && signal) this.#signals.set(m.callback, signal);
    try { return await f(m); } finally { if (m?.callback) { this.#models.delete(m.callback); this.#signals.delete(m.callback); } }
  }

  // Runs `f(cancelId)` so that `signal` aborting cancels it in the worker: while it waits in the
  // worker's queue it never starts; a running model call is aborted (LLM_CANCELLED). `llm`: the
  // operation calls a model (else a queued cancel is CancelledError CANCELLED).
  async #cancellable(signal, f, llm = true) {
    if (!signal) return f(undefined);
    if (signal.aborted) throw llm ? new LlmError('LLM work cancelled', 'LLM_CANCELLED') : new CancelledError('cancelled before it started', 'CANCELLED');
    const cancelId = `c${this.#nextCancel++}`;
    const onAbort = () => this.#worker.postMessage({ cancelId });
    signal.addEventListener('abort', onAbort, { once: true });
    try { return await f(cancelId); } finally { signal.removeEventListener('abort', onAbort); }
  }

  /** The build's worker: `webrag` (index.js) and `webrag/search` (search.js) each start their own. */
  static startWorker() {
    throw new WebRagError('import WebRag from webrag or webrag/search', 'WORKER_FAILED');
  }

  async #call(op, args, onProgress) {
    if (this.#ready) await this.#ready;
    return this.#post(op, args, onProgress);
  }

  #post(op, args, onProgress) {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { op, resolve, reject, onProgress });
      this.#worker.postMessage({ id, op, args });
    });
  }

  /**
   * Opens (or creates) the knowledge base `name`. `model` is the base URL of a folder holding
   * config.json, tokenizer.json and model.safetensors; or `{url, id?, cache?, files?}` to pin
   * sizes/SHA-256s (`files: {'model.safetensors': {size, sha256}}`) or skip the Cache API; or
   * `{config, tokenizer, weights, id?}` bytes. `device`: 'auto' (GPU on a hardware adapter,
   * else CPU), 'cpu' or 'gpu'. `precision`: the CPU path's arithmetic, 'f32' (default) or 'int8'
   * (int8 weights × 7-bit activations). `workers`: embedding workers for the CPU path's batches
   * (0–64; default every core, `navigator.hardwareConcurrency`, at most 4; 0 embeds in the
   * engine's own worker): each holds a copy of the model, started at the first batch.
   * `startTimeoutMs` (default 30,000; 1–600,000): how long each way of starting the worker may
   * take to load before it counts as failed; when none starts, `open` rejects with WORKER_FAILED.
   * `cpuKernels`: which build of the engine to start, 'auto' (default: 'relaxed-simd' where the
   * browser has relaxed SIMD, else 'simd128', by feature detection), 'relaxed-simd' or
   * 'simd128' (the baseline build); `embedder().cpuKernels` reports the one running. A
   * `workerUrl` worker loads the `.wasm` beside it whatever this says.
   * `stem`: the folder holding the stemmer modules (`<tag>.wasm`: `en.wasm`, `no.wasm` for `nb`
   * and `nn`), default the package's `stem/` beside this file; a document with a `lang` in one of
   * the 18 Snowball languages needs its module (else STEMMER_UNAVAILABLE), 10–21 KB gzipped,
   * fetched once per language. Under a bundler, serve `node_modules/webrag/stem/` and pass its URL.
   * `onEvent` receives warnings for the lifetime of the instance,
   * e.g. `{type: 'warning', code: 'GPU_LOST', message}` when the GPU is lost and embedding
   * continues on the CPU.
   */
  static async open({ name = 'webrag', model, options, onProgress, workerUrl, device = 'auto', precision = 'f32', workers, startTimeoutMs = WORKER_START_MS, cpuKernels = 'auto', onEvent, stem } = {}) {
    if (workers !== undefined && !(Number.isInteger(workers) && workers >= 0 && workers <= 64)) {
      throw new InputError(`option workers: ${JSON.stringify(workers)} is not an integer from 0 to 64`, 'INVALID_OPTION');
    }
    if (!(Number.isInteger(startTimeoutMs) && startTimeoutMs >= 1 && startTimeoutMs <= 600_000)) {
      throw new InputError(`option startTimeoutMs: ${JSON.stringify(startTimeoutMs)} is not an integer from 1 to 600000`, 'INVALID_OPTION');
    }
    const kernels = chooseKernels(cpuKernels);
    const { worker, wasm, markup } = await this.startWorker(workerUrl, startTimeoutMs, kernels);
    const rag = new this(worker, onEvent);
    const abs = (u) => new URL(u, globalThis.location?.href).href;
    const m = typeof model === 'string' ? abs(model) : model?.url ? { ...model, url: abs(model.url) } : model;
    // The stemmer modules' folder (documents with a `lang`): the option, else the package's `stem/`.
    let stems = null;
    try {
      const here = import.meta.url; // not a literal `new URL(…, import.meta.url)`: no bundler emits a folder
      stems = stem != null ? abs(String(stem)) : new URL('./stem/', here).href;
    } catch { /* no URL for this file: documents in a stemmed language reject with STEMMER_UNAVAILABLE */ }
    try {
      await rag.#post('open', { name, model: m, options, device, precision, workers, wasm, markup, stem: stems }, onProgress);
    } catch (e) {
      worker.terminate();
      throw e;
    }
    rag.#reopen = async () => {
      const started = await this.startWorker(workerUrl, startTimeoutMs, kernels);
      rag.#attach(started.worker);
      await rag.#post('open', { name, model: m, options, device, precision, workers, wasm: started.wasm, markup: started.markup, stem: stems });
    };
    return rag;
  }

  /**
   * Adds documents in one transaction; resolves to {added, replaced, unchanged, chunks,
   * persisted}. After the first add that stores something, the page asks the browser to keep
   * this origin's storage (`navigator.storage.persist()`, once per instance): `persisted` is the
   * answer then — or, where the browser asks the user instead (Firefox shows a prompt) and no
   * answer came within PERSIST_WAIT_MS, whether storage is persistent now: `add` never waits on
   * the user — and on later adds whether storage is persistent (`persisted()`); null where the
   * browser has no StorageManager.
   */
  async add(docs, { onProgress, signal } = {}) {
    const report = await this.#cancellable(signal, (cancelId) => this.#call('add', { docs, cancelId }, onProgress), false);
    const storage = globalThis.navigator?.storage;
    let persisted = null;
    try {
      if (storage?.persist && !this.#persistAsked && report.added.length + report.replaced.length > 0) {
        this.#persistAsked = true;
        persisted = (await storage.persisted()) || (await answerSoon(storage.persist(), PERSIST_WAIT_MS)) || (await storage.persisted());
      } else if (storage?.persisted) {
        persisted = await storage.persisted();
      }
    } catch { persisted = null; }
    return { ...report, persisted };
  }
  /** Removes documents; resolves to {removed, unknown}. */
  remove(ids) { return this.#call('remove', { ids }); }
  /**
   * Searches; options {k = 10, mode = 'hybrid' | 'bm25' | 'dense' | 'graph' | 'hybrid+graph',
   * literal = false, signal}: an AbortSignal that fires while the search waits behind other
   * operations rejects it with CancelledError CANCELLED before it runs.
   */
  search(query, options = {}) {
    const { signal, ...rest } = options ?? {};
    return this.#cancellable(signal, (cancelId) => this.#call('search', { query, options: rest, cancelId }), false);
  }
  /** The pseudo-graph retriever's facts, mind-map context and explain data (anchors, row scores). */
  explainGraph(query, { k = 10 } = {}) { return this.#call('explainGraph', { query, k }); }
  /**
   * Knowledge-aware decomposition (PIKE-RAG Algorithm 1) of `question` over this knowledge base:
   * `llm` is an OpenAI-compatible endpoint `{baseUrl, model, apiKey?, headers?, timeoutMs?, ...}`
   * (the key is kept in the worker's memory only), or the page's own model as a function
   * `async (messages, {step, schema}) => string | AsyncIterable<string>` (e.g. WebLLM; it runs in the page), `options` `{rounds?, candidates?, delta?,
   * proposals?, retriever?}`, `onTrace` receives each step `{step, round, input, output, ms}`.
   * Resolves to the trajectory `{question, rounds, context, stop}`; rejects with `LlmError`.
   */
  decompose(question, { llm, options, onTrace, signal } = {}) {
    return this.#withModel(llm, (m) => this.#cancellable(signal, (cancelId) =>
      this.#call('decompose', { question, llm: m, options: { ...(options ?? {}), ...(cancelId ? { cancelId } : {}) } }, onTrace)), signal);
  }
  /** One short chat with the endpoint ("test connection"); resolves to {reply, ms}, rejects with LlmError. */
  testLlm(llm) { return this.#withModel(llm, (m) => this.#call('testLlm', { llm: m })); }
  /**
   * The ask pipeline (docs/ask-pipeline.md): retrieval trigger over the memory knowledge base, Query
   * Rewriter+, domain routing, key points into the graph retriever, knowledge-aware
   * decomposition, verify, supplement and summarize, knowledge filter, a cited answer given to
   * `onToken(piece, {provisional})`, memory update. `options`: `{preset: 'ask' (every step) |
   * 'light' | 'L1' | 'L2' | 'L3' | 'L4' | 'search' (no model call), steps: {trigger, rewrite,
   * route, keyPoints, decompose, verify, summarize, filter, answer, memory} (booleans over the
   * preset), tau, theta, rewriteQueries, keyPoints, graphFacts, verifyRounds, supplementQueries,
   * filter: {tags, docIds, meta}, knowledgeFilter: 'strict' | 'lenient', maxSources,
   * perspectives, keepTrace, decompose: {...}, answer: {minConfidence, stream: 'withheld' |
   * 'provisional'}}`. `onTrace` (alias `onEvent`) receives each step's `{step, round,
   * input, output, ms}`. `signal` (AbortSignal) cancels: requests in flight are aborted and the
   * promise rejects with LlmError LLM_CANCELLED. Resolves to `{question, clarified, answer:
   * {text, citations, confidence, known, sources} | null, context: [{id, title, text, via}],
   * trajectory | null, route, remembered}`; citations are `answer.sources` ids (chunk ids,
   * `graph:1`, `memory:<id>`).
   */
  ask(question, { llm, options, onTrace, onEvent, onToken, signal } = {}) {
    const trace = onTrace ?? onEvent;
    return this.#withModel(llm, (m) => this.#cancellable(signal, (cancelId) =>
      this.#call('ask', { question, llm: m, options: { ...(options ?? {}), ...(cancelId ? { cancelId } : {}) } }, (ev) => (typeof ev.token === 'string' ? onToken?.(ev.token, { provisional: ev.provisional === true }) : trace?.(ev)))), signal);
  }
  /**
   * The ingest-time LLM stages over what is stored: forward summaries (each chunk embedded
   * again with what its document said before it) and auto-tagging (PIKE-RAG; off unless asked),
   * knowledge atomizing (the questions each chunk answers, embedded and indexed) and LLM mind
   * maps (verified fact-check items → JSON mind map replacing the structural one). Each stage:
   * `true`, `false`, or its options; `documents` (ids) limits them to those documents.
   * Resumable: each call does only what is left, so after an error or an abort, call again. `onProgress` receives `{phase: 'summaries' | 'tags' |
   * 'atomize' | 'mindmap', done, total}` and the stages' trace events. Resolves to
   * `{forwardSummaries?, tags?, atomize: {chunks, questions, failed, remaining}, mindMaps:
   * {documents, fallbacks, items, unverifiedChunks, regenerations}}`.
   */
  enrich({ llm, forwardSummaries = false, tags = false, atomize = true, mindMaps = true, documents, onProgress, signal } = {}) {
    return this.#withModel(llm, (m) => this.#cancellable(signal, (cancelId) =>
      this.#call('enrich', { llm: m, options: { forwardSummaries, tags, atomize, mindMaps, ...(documents ? { documents } : {}), ...(cancelId ? { cancelId } : {}) } }, onProgress)), signal);
  }
  /** Kept ask traces (`options.keepTrace`), oldest first: `[{id, createdAt, question, json}]`. */
  traces() { return this.#call('traces', {}); }
  /**
   * Kept traces as JSONL text: `format` 'events' (one trace per line) or 'sft' (decomposition
   * trajectories as PIKE-RAG `<decompose>` fine-tuning pairs `{prompt, completion}`).
   */
  exportTraces({ format = 'events' } = {}) { return this.#call('exportTraces', { format }); }
  /** Deletes every kept trace; resolves to how many. */
  clearTraces() { return this.#call('clearTraces', {}); }
  /** The memory knowledge base `[{id, title, content, sources, createdAt}]`, oldest first. */
  memory() { return this.#call('memory', {}); }
  /** Deletes every memory entry; resolves to how many. */
  forget() { return this.#call('forget', {}); }
  /** A chunk's atomic questions, or null when it is not atomized. */
  questions(chunkId) { return this.#call('questions', { chunkId }); }
  /** The mind map the pseudo-graph holds for a document `{topic, children}`, or null. */
  mindMap(docId) { return this.#call('mindMap', { docId }); }
  /** Embeds texts with the loaded model (L2-normalised vectors); `{path: 'cpu'|'gpu'}` bypasses the routing. */
  embed(texts, { path } = {}) { return this.#call('embed', { texts, path }); }
  /** The embedding path: {path: 'gpu'|'cpu', queries, adapter, softwareAdapter, reason, crossover}. */
  embedder() { return this.#call('embedder', {}); }
  /** GPU time per kernel kind for one forward pass ({matmulMs, attentionMs, layerNormMs, otherMs, wallMs}), or null. */
  profileGpu(texts) { return this.#call('profileGpu', { texts }); }
  /** Deletes the cached model files (the next open downloads them again). */
  static clearModelCache() { return globalThis.caches?.delete(MODEL_CACHE) ?? Promise.resolve(false); }
  /** {documents, chunks, terms, dim, model, ann: {chunks, topics, facts: [fresh, segments, tombstones]}}. */
  stats() { return this.#call('stats', {}); }
  /**
   * Seals vector buffers into HNSW segments now (the worker also does it when idle). `force`:
   * seal every non-empty buffer and rebuild segments that still hold removed vectors; resolves to
   * the steps taken. Without it, one step or null.
   */
  maintain({ force = false } = {}) { return this.#call('maintain', { force }); }
  /** Stored document records, newest first. */
  documents() { return this.#call('documents', {}); }
  /** One chunk record by id, or null. */
  chunk(id) { return this.#call('chunk', { id }); }
  /** Deletes everything in this knowledge base. */
  clear() { return this.#call('clear', {}); }
  /**
   * The whole knowledge base as one file: a `Uint8Array` of gzip-compressed JSON holding every
   * stored record (docs/kb-file.md), for `importKb` in another browser or `webrag import`.
   */
  exportKb() { return this.#call('exportKb', {}); }
  /**
   * Replaces this knowledge base with the one in `bytes` (`Uint8Array` or `ArrayBuffer` from
   * `exportKb`, `webrag export`, or a site's `kb` file from `webrag index --kb`). The file is
   * checked whole first; a bad one rejects (InputError KB_FILE_INVALID / KB_FILE_TOO_LARGE, ModelError
   * MODEL_MISMATCH, StoreError STORE_CORRUPT / STORE_VERSION_TOO_NEW) and nothing changes.
   * Resolves to the new stats().
   */
  importKb(bytes) { return this.#call('importKb', { bytes: bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes) }); }
  /** Stops the worker (closing the database connection). */
  close() { this.#worker.terminate(); }
}
