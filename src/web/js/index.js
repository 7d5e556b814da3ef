// webrag: the WebRag client on the full engine (webrag_bg.wasm: search, the ask pipeline with its
// LLM client, the GPU embedder). A page that only searches can import `webrag/search` instead.
import { WebRag as Client, startWorker } from './client.js';

export { cpuKernels } from './client.js';

export { WebRagError, InputError, ModelError, StoreError, GpuError, LlmError, CancelledError, MODEL_CACHE } from './client.js';

/**
 * A knowledge base in IndexedDB, searched in a Web Worker.
 * @example
 *   const rag = await WebRag.open({ name: 'notes', model: '/models/all-MiniLM-L6-v2/' });
 *   await rag.add([{ id: 'a.md', text: '# Hello\n\nworld' }], { onProgress: console.log });
 *   const hits = await rag.search('hello', { k: 5 });
 */
export class WebRag extends Client {
  // One literal `new URL(…, import.meta.url)` per build, so bundlers emit both.
  static startWorker(workerUrl, ms, kernels) {
    return kernels === 'simd128'
      ? startWorker(workerUrl, () => new Worker(new URL('./baseline/worker.js', import.meta.url), { type: 'module' }), () => import('./baseline/inline.js'), ms)
      : startWorker(workerUrl, () => new Worker(new URL('./worker.js', import.meta.url), { type: 'module' }), () => import('./inline.js'), ms);
  }
}
