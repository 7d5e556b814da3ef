// End-to-end: model loading and the GPU path through the page's WebRag client (headless Chromium,
// WebGPU on SwiftShader). Download progress in bytes; the Cache API makes a second load skip the
// network; pinned sizes/SHA-256s reject a wrong file with MODEL_INTEGRITY; `device: 'gpu'` embeds
// on WebGPU, the demo shows the path and adapter, and a lost device falls back to the CPU with a
// GPU_LOST warning while search keeps working.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, startServer, launch, openDemo } from './harness.mjs';

const MODEL_DIR = join(ROOT, '.models/all-MiniLM-L6-v2');
let server, browser;
before(async () => { server = await startServer(17000 + Math.floor(Math.random() * 1000)); browser = await launch(); });
after(async () => { await browser?.close(); server?.stop(); });

test('model download: byte progress, Cache API on the second load, pinned size/sha256', { timeout: 600_000 }, async () => {
  const page = await browser.ctx.newPage();
  await page.goto(`${server.url}/www/`);
  let modelRequests = 0;
  page.on('request', (r) => { if (r.url().includes('/.models/')) modelRequests++; });
  const sizes = ['config.json', 'tokenizer.json', 'model.safetensors'].map((f) => statSync(join(MODEL_DIR, f)).size);
  const sha = createHash('sha256').update(readFileSync(join(MODEL_DIR, 'config.json'))).digest('hex');
  const run = (spec) => page.evaluate(async (spec) => {
    const { WebRag } = await import('/pkg/index.js');
    const model = { ...spec, url: '/.models/all-MiniLM-L6-v2/' };
    const events = [];
    try {
      const rag = await WebRag.open({ name: 'e2e-model', model, device: 'cpu', onProgress: (e) => events.push(e) });
      const dim = (await rag.stats()).dim;
      rag.close();
      return { ok: true, dim, model: events.filter((e) => e.phase === 'model') };
    } catch (e) { return { ok: false, name: e.name, code: e.code, message: e.message }; }
  }, spec);
  assert.equal(await page.evaluate(async () => (await import('/pkg/index.js')).WebRag.clearModelCache().then(() => true)), true);
  const first = await run({ files: { 'config.json': { sha256: sha, size: sizes[0] } } });
  assert.ok(first.ok, JSON.stringify(first));
  const last = first.model.at(-1);
  assert.equal(last.done, sizes.reduce((a, b) => a + b), 'progress ends at the total bytes');
  assert.equal(last.total, last.done);
  assert.ok(first.model.length > 3, 'progress while streaming');
  assert.ok(first.model.every((e, i) => i === 0 || e.done >= first.model[i - 1].done), 'monotonic');
  assert.ok(modelRequests >= 3, `first load fetched the files (${modelRequests} requests)`);
  modelRequests = 0;
  const second = await run({});
  assert.ok(second.ok);
  assert.equal(modelRequests, 0, 'second load is served by the Cache API');
  const badSha = await run({ files: { 'config.json': { sha256: '0'.repeat(64) } } });
  assert.deepEqual([badSha.ok, badSha.name, badSha.code], [false, 'ModelError', 'MODEL_INTEGRITY']);
  // The stale copy was evicted: the next load fetches config.json again.
  modelRequests = 0;
  const badSize = await run({ files: { 'model.safetensors': { size: 12 } } });
  assert.deepEqual([badSize.ok, badSize.code], [false, 'MODEL_INTEGRITY']);
  assert.ok(modelRequests >= 1, 'the evicted file was fetched again');
  const noCache = await run({ cache: false });
  assert.ok(noCache.ok);
  await page.close();
});

test("device: 'gpu' embeds on WebGPU; device loss falls back to the CPU with a GPU_LOST warning", { timeout: 900_000 }, async () => {
  const page = await browser.ctx.newPage();
  await openDemo(page, `${server.url}/www/?kb=e2e-gpu&empty&device=gpu`);
  const info = await page.evaluate(() => window.webragDemo.rag.embedder());
  console.log(`page embedder: ${JSON.stringify(info)}`);
  assert.equal(info.path, 'gpu');
  assert.ok(info.crossover && info.crossover.cpuMs > 0 && info.crossover.gpuMs > 0, 'crossover measured');
  assert.equal(await page.getAttribute('#path', 'data-path'), 'gpu');
  assert.match(await page.textContent('#path'), /GPU \(WebGPU/);
  const notes = [
    { id: 'owls', text: '# Owls\n\nOwls hunt small mammals at night with silent flight.' },
    { id: 'bees', text: '# Bees\n\nHoney bees dance to tell the hive where the flowers are.' },
  ];
  const progress = await page.evaluate(async (notes) => {
    const ev = [];
    await window.webragDemo.rag.add(notes, { onProgress: (e) => ev.push(e.phase) });
    return ev;
  }, notes);
  assert.ok(progress.includes('embed'), 'embed progress events');
  const hit = await page.evaluate(() => window.webragDemo.rag.search('nocturnal birds of prey', { k: 1, mode: 'dense' }));
  assert.equal(hit[0].docId, 'owls');
  // A driver reset: the next embedding runs on the CPU and the page shows the warning.
  assert.equal(await page.evaluate(async () => (await import('/pkg/testing.js')).testHooks(window.webragDemo.rag).loseGpu()), true);
  await page.evaluate(() => window.webragDemo.rag.add([{ id: 'ants', text: 'Ants farm aphids for honeydew.' }]));
  await page.waitForFunction(() => !document.getElementById('warning').hidden);
  assert.match(await page.textContent('#warning'), /GPU_LOST/);
  await page.waitForFunction(() => document.getElementById('path').dataset.path === 'cpu');
  const after = await page.evaluate(() => window.webragDemo.rag.search('insects that keep livestock', { k: 1, mode: 'dense' }));
  assert.equal(after[0].docId, 'ants');
  assert.equal((await page.evaluate(() => window.webragDemo.rag.embedder())).path, 'cpu');
  await page.close();
});
