// webrag/search: the WebRag client on the search build of the engine (search/webrag_bg.wasm:
// no ask pipeline or LLM client, no GPU engine, no knowledge-base file, no static-site snapshot
// builder), for pages that only index and search. The same API as `webrag`; the operations it
// leaves out (decompose, ask, enrich, testLlm, traces, exportTraces, clearTraces, memory, forget,
// exportKb, importKb, profileGpu, loseGpuForTesting) reject with InputError NOT_IN_BUILD, and
// `device: 'gpu'` with GpuError GPU_UNAVAILABLE.
import { WebRag as Client, startWorker } from './client.js';

export { cpuKernels } from './client.js';

export { WebRagError, InputError, ModelError, StoreError, GpuError, LlmError, CancelledError, MODEL_CACHE } from './client.js';

export class WebRag extends Client {
  // One literal `new URL(…, import.meta.url)` per build, so bundlers emit both.
  static startWorker(workerUrl, ms, kernels) {
    return kernels === 'simd128'
      ? startWorker(workerUrl, () => new Worker(new URL('./search/baseline/worker.js', import.meta.url), { type: 'module' }), () => import('./search/baseline/inline.js'), ms)
      : startWorker(workerUrl, () => new Worker(new URL('./search/worker.js', import.meta.url), { type: 'module' }), () => import('./search/inline.js'), ms);
  }
}
