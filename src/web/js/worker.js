// webrag Web Worker: owns one WebRagCore (wasm) and runs the client's calls one at a time.
// Protocol: request {id, op, args}; replies {id, ok: true, value} | {id, ok: false, error:
// {name, code, message}}; progress {id, progress: {phase, done, total}}; embedder events (not tied
// to a request) {event: {type, code, message}}.
import init, { WebRagCore } from './webrag.js';

let core = null;
let queue = Promise.resolve();

async function handle(id, op, args) {
  const onProgress = (ev) => self.postMessage({ id, progress: ev });
  switch (op) {
    case 'open': {
      await init({ module_or_path: new URL('./webrag_bg.wasm', import.meta.url) });
      const onEvent = (event) => self.postMessage({ event });
      core = await WebRagCore.open(args.name, args.model, args.options ?? null, onProgress, args.device ?? 'auto', onEvent);
      return await core.stats();
    }
    case 'add': return await core.add(args.docs, onProgress);
    case 'remove': return await core.remove(args.ids);
    case 'search': return await core.search(args.query, args.options ?? null);
    case 'explainGraph': return await core.explainGraph(args.query, args.k ?? 10);
    case 'embed': return await core.embed(args.texts, args.path ?? null);
    case 'stats': return await core.stats();
    case 'embedder': return await core.embedder();
    case 'profileGpu': return await core.profileGpu(args.texts);
    case 'loseGpuForTesting': return await core.loseGpuForTesting();
    case 'documents': return await core.documents();
    case 'chunk': return await core.chunk(args.id);
    case 'clear': return await core.clear();
    default: throw Object.assign(new Error(`unknown operation ${op}`), { name: 'InputError', code: 'INVALID_OPTION' });
  }
}

self.onmessage = (e) => {
  const { id, op, args } = e.data;
  queue = queue.then(async () => {
    try {
      if (op !== 'open' && !core) throw Object.assign(new Error('not open'), { name: 'StoreError', code: 'NOT_OPEN' });
      const value = await handle(id, op, args);
      self.postMessage({ id, ok: true, value });
    } catch (err) {
      self.postMessage({ id, ok: false, error: { name: err?.name ?? 'Error', code: err?.code ?? 'INTERNAL', message: String(err?.message ?? err) } });
    }
  });
};
