// webrag/search: the WebRag client on the search build of the engine (search/webrag_bg.wasm:
// no ask pipeline or LLM client, no GPU engine, no knowledge-base file, no static-site snapshot
// builder; Markdown and HTML are parsed by search/markup.wasm, which the worker fetches at the
// first `add` of such a document), for pages that only index and search. The same API as
// `webrag`; the operations it leaves out (decompose, ask, enrich, testLlm, traces, exportTraces,
// clearTraces, memory, forget, exportKb, importKb, profileGpu, loseGpuForTesting) reject with
// InputError NOT_IN_BUILD, and `device: 'gpu'` with GpuError GPU_UNAVAILABLE.
import { WebRag as Client, startWorker } from './client.js';

export { cpuKernels } from './client.js';

export { WebRagError, InputError, ModelError, StoreError, GpuError, LlmError, CancelledError, MODEL_CACHE } from './client.js';

export class WebRag extends Client {
  // One literal `new URL(…, import.meta.url)` per build and for the parser module, so bundlers
  // emit each.
  static async startWorker(workerUrl, ms, kernels) {
    const started = await (kernels === 'simd128'
      ? startWorker(workerUrl, () => new Worker(new URL('./search/baseline/worker.js', import.meta.url), { type: 'module' }), () => import('./search/baseline/inline.js'), ms)
      : startWorker(workerUrl, () => new Worker(new URL('./search/worker.js', import.meta.url), { type: 'module' }), () => import('./search/inline.js'), ms));
    // The search build parses Markdown and HTML with a module of its own, which its worker
    // fetches at the first `add` that needs it (an inline worker got its bytes).
    let markup = started.markup;
    try {
      markup ??= new URL('./search/markup.wasm', import.meta.url).href;
    } catch { /* no import.meta.url: Markdown and HTML reject with PARSER_UNAVAILABLE */ }
    return { ...started, markup };
  }
}
