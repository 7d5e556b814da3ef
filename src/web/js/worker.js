// webrag Web Worker: owns one WebRagCore (wasm) and runs the client's calls one at a time.
// Protocol: request {id, op, args}; replies {id, ok: true, value} | {id, ok: false, error:
// {name, code, message}}; progress {id, progress: {phase, done, total}}; embedder events (not tied
// to a request) {event: {type, code, message}}.
//
// Idle-time upkeep: after a write (open, add, remove) and once no request is waiting, the worker
// seals grown fresh vector buffers into HNSW segments one step at a time (`core.maintain`),
// each step queued behind any request that arrived meanwhile; each step posts
// {event: {type: 'sealed', collection, vectors, merged, segments}}.
import init, { WebRagCore, cancel } from './webrag.js';

let core = null;

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
    self.postMessage({ llmRequest: { cb, reqId, messages, step: opts?.step } });
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
        const step = await core.maintain(false);
        more = step != null;
        if (more) self.postMessage({ event: { type: 'sealed', ...step } });
      } catch (err) {
        self.postMessage({ event: { type: 'warning', code: err?.code ?? 'INTERNAL', message: `background sealing failed: ${err?.message ?? err}` } });
      }
      if (more) scheduleUpkeep(0);
    });
  }, delay);
}

async function handle(id, op, args) {
  const onProgress = (ev) => self.postMessage({ id, progress: ev });
  switch (op) {
    case 'open': {
      // Module bytes from the page for an inline worker; else the .wasm beside this file.
      await init({ module_or_path: args.wasm ?? new URL('./webrag_bg.wasm', import.meta.url) });
      const onEvent = (event) => self.postMessage({ event });
      core = await WebRagCore.open(args.name, args.model, args.options ?? null, onProgress, args.device ?? 'auto', onEvent);
      return await core.stats();
    }
    case 'add': return await core.add(args.docs, onProgress);
    case 'remove': return await core.remove(args.ids);
    case 'search': return await core.search(args.query, args.options ?? null);
    case 'explainGraph': return await core.explainGraph(args.query, args.k ?? 10);
    case 'testLlm': return await core.testLlm(modelArg(args.llm));
    case 'ask': return await core.ask(args.question, modelArg(args.llm), args.options ?? null, (ev) => self.postMessage({ id, progress: ev }));
    case 'enrich': return await core.enrich(modelArg(args.llm), args.options ?? null, (ev) => self.postMessage({ id, progress: ev }));
    case 'traces': return await core.traces();
    case 'exportTraces': return await core.exportTraces(args.format ?? 'events');
    case 'clearTraces': return await core.clearTraces();
    case 'memory': return await core.memory();
    case 'forget': return await core.forget();
    case 'questions': return await core.questions(args.chunkId);
    case 'mindMap': return await core.mindMap(args.docId);
    case 'decompose': return await core.decompose(args.question, modelArg(args.llm), args.options ?? null, (trace) => self.postMessage({ id, progress: trace }));
    case 'embed': return await core.embed(args.texts, args.path ?? null);
    case 'stats': return await core.stats();
    case 'embedder': return await core.embedder();
    case 'profileGpu': return await core.profileGpu(args.texts);
    case 'loseGpuForTesting': return await core.loseGpuForTesting();
    case 'documents': return await core.documents();
    case 'chunk': return await core.chunk(args.id);
    case 'clear': return await core.clear();
    case 'exportKb': return await core.exportKb();
    case 'importKb': return await core.importKb(args.bytes);
    case 'maintain': return await core.maintain(args.force ?? false);
    default: throw Object.assign(new Error(`unknown operation ${op}`), { name: 'InputError', code: 'INVALID_OPTION' });
  }
}

self.onmessage = (e) => {
  const { llmToken, llmEnd, llmError, cancelId } = e.data;
  // A cancel bypasses the queue: the run it stops holds the queue.
  if (cancelId) { if (core) cancel(cancelId); return; }
  if (llmToken) { llmCalls.get(llmToken.reqId)?.token(llmToken.token); return; }
  if (llmEnd) { llmCalls.get(llmEnd.reqId)?.end(); return; }
  if (llmError) { llmCalls.get(llmError.reqId)?.fail(llmError.message); return; }
  const { id, op, args } = e.data;
  waiting++;
  queue = queue.then(async () => {
    try {
      if (op !== 'open' && !core) throw Object.assign(new Error('not open'), { name: 'StoreError', code: 'NOT_OPEN' });
      if (op !== 'open' && typeof core[op] !== 'function') {
        throw Object.assign(new Error(`${op} is not in this build (webrag/search has no LLM pipeline and no GPU engine): import WebRag from 'webrag'`), { name: 'InputError', code: 'NOT_IN_BUILD' });
      }
      const value = await handle(id, op, args);
      self.postMessage({ id, ok: true, value });
    } catch (err) {
      self.postMessage({ id, ok: false, error: { name: err?.name ?? 'Error', code: err?.code ?? 'INTERNAL', message: String(err?.message ?? err) } });
    } finally {
      waiting--;
      if (op === 'open' || op === 'add' || op === 'remove' || op === 'importKb') scheduleUpkeep();
    }
  });
};

// The page waits for this before its first request: the module graph (and so webrag.js) loaded.
self.postMessage({ ready: true });
