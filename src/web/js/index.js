// webrag main-thread client. Heavy work runs in a dedicated Web Worker (worker.js); this file
// only posts messages and turns failures into Error subclasses with `name` and `code`.

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
/** LLM endpoint or output problem (LLM_UNAUTHORIZED, LLM_RATE_LIMITED, LLM_TIMEOUT, LLM_BAD_OUTPUT, LLM_CALLBACK_FAILED, ...). */
export class LlmError extends WebRagError { constructor(m, c) { super(m, c); this.name = 'LlmError'; } }

const CLASSES = { InputError, ModelError, StoreError, GpuError, LlmError };

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
/** Cache API cache that holds downloaded model files. */
export const MODEL_CACHE = 'webrag-models-v1';

export class WebRag {
  #worker; #next = 1; #pending = new Map(); #onEvent; #models = new Map(); #nextModel = 1;

  constructor(worker, onEvent) {
    this.#worker = worker;
    this.#onEvent = onEvent;
    worker.onmessage = (e) => {
      const { id, ok, value, error, progress, event, llmRequest } = e.data;
      if (event) { this.#onEvent?.(event); return; }
      if (llmRequest) { this.#runModel(llmRequest); return; }
      const p = this.#pending.get(id);
      if (!p) return;
      if (progress) { p.onProgress?.(progress); return; }
      this.#pending.delete(id);
      ok ? p.resolve(value) : p.reject(rehydrate(error));
    };
    worker.onerror = (e) => {
      for (const p of this.#pending.values()) p.reject(new WebRagError(`worker failed: ${e.message}`, 'WORKER_FAILED'));
      this.#pending.clear();
    };
  }

  // A model given as a function runs here, in the page; its reply (a string, or an async
  // iterable of pieces) goes back to the worker piece by piece.
  async #runModel({ cb, reqId, messages, step }) {
    const post = (m) => this.#worker.postMessage(m);
    try {
      const fn = this.#models.get(cb);
      if (!fn) throw new Error('the model function is gone');
      const r = await fn(messages, { step });
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

  async #withModel(llm, f) {
    const m = this.#model(llm);
    try { return await f(m); } finally { if (m?.callback) this.#models.delete(m.callback); }
  }

  #call(op, args, onProgress) {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, onProgress });
      this.#worker.postMessage({ id, op, args });
    });
  }

  /**
   * Opens (or creates) the knowledge base `name`. `model` is the base URL of a folder holding
   * config.json, tokenizer.json and model.safetensors; or `{url, id?, cache?, files?}` to pin
   * sizes/SHA-256s (`files: {'model.safetensors': {size, sha256}}`) or skip the Cache API; or
   * `{config, tokenizer, weights, id?}` bytes. `device`: 'auto' (GPU on a hardware adapter,
   * else CPU), 'cpu' or 'gpu'. `onEvent` receives warnings for the lifetime of the instance,
   * e.g. `{type: 'warning', code: 'GPU_LOST', message}` when the GPU is lost and embedding
   * continues on the CPU.
   */
  static async open({ name = 'webrag', model, options, onProgress, workerUrl, device = 'auto', onEvent } = {}) {
    const url = workerUrl ?? new URL('./worker.js', import.meta.url);
    const worker = new Worker(url, { type: 'module' });
    const rag = new WebRag(worker, onEvent);
    const abs = (u) => new URL(u, globalThis.location?.href).href;
    const m = typeof model === 'string' ? abs(model) : model?.url ? { ...model, url: abs(model.url) } : model;
    try {
      await rag.#call('open', { name, model: m, options, device }, onProgress);
    } catch (e) {
      worker.terminate();
      throw e;
    }
    return rag;
  }

  /** Adds documents in one transaction; resolves to {added, replaced, unchanged, chunks}. */
  add(docs, { onProgress } = {}) { return this.#call('add', { docs }, onProgress); }
  /** Removes documents; resolves to {removed, unknown}. */
  remove(ids) { return this.#call('remove', { ids }); }
  /** Searches; options {k = 10, mode = 'hybrid' | 'bm25' | 'dense' | 'graph' | 'hybrid+graph', literal = false}. */
  search(query, options = {}) { return this.#call('search', { query, options }); }
  /** The pseudo-graph retriever's facts, mind-map context and explain data (anchors, row scores). */
  explainGraph(query, { k = 10 } = {}) { return this.#call('explainGraph', { query, k }); }
  /**
   * Knowledge-aware decomposition (PIKE-RAG Algorithm 1) of `question` over this knowledge base:
   * `llm` is an OpenAI-compatible endpoint `{baseUrl, model, apiKey?, headers?, timeoutMs?, ...}`
   * (the key is kept in the worker's memory only), or the page's own model as a function
   * `async (messages, {step}) => string | AsyncIterable<string>` (e.g. WebLLM; it runs in the page), `options` `{rounds?, candidates?, delta?,
   * proposals?, retriever?}`, `onTrace` receives each step `{step, round, input, output, ms}`.
   * Resolves to the trajectory `{question, rounds, context, stop}`; rejects with `LlmError`.
   */
  decompose(question, { llm, options, onTrace } = {}) { return this.#withModel(llm, (m) => this.#call('decompose', { question, llm: m, options }, onTrace)); }
  /** One short chat with the endpoint ("test connection"); resolves to {reply, ms}, rejects with LlmError. */
  testLlm(llm) { return this.#withModel(llm, (m) => this.#call('testLlm', { llm: m })); }
  /**
   * Decomposition, then an answer from the gathered chunks that cites them as [S1], [S2] (in
   * `answer.sources` order) with a self-assessed confidence; below `options.answer.minConfidence`
   * (default 'medium') the text is "I don't know.". `onToken` receives the answer as it streams.
   * Resolves to `{answer: {text, citations, confidence, known, sources}, trajectory}`.
   */
  ask(question, { llm, options, onTrace, onToken } = {}) {
    return this.#withModel(llm, (m) => this.#call('ask', { question, llm: m, options }, (ev) => (typeof ev.token === 'string' ? onToken?.(ev.token) : onTrace?.(ev))));
  }
  /** Embeds texts with the loaded model (L2-normalised vectors); `{path: 'cpu'|'gpu'}` bypasses the routing. */
  embed(texts, { path } = {}) { return this.#call('embed', { texts, path }); }
  /** The embedding path: {path: 'gpu'|'cpu', queries, adapter, softwareAdapter, reason, crossover}. */
  embedder() { return this.#call('embedder', {}); }
  /** GPU time per kernel kind for one forward pass ({matmulMs, attentionMs, layerNormMs, otherMs, wallMs}), or null. */
  profileGpu(texts) { return this.#call('profileGpu', { texts }); }
  /** Testing hook: destroys the GPU device as a driver reset would; resolves to whether one was in use. */
  loseGpuForTesting() { return this.#call('loseGpuForTesting', {}); }
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
  /** Stops the worker (closing the database connection). */
  close() { this.#worker.terminate(); }
}
