// Browser embedding benchmark (headless Chromium): the CPU path (wasm SIMD, 1 thread) and the GPU
// path (WebGPU; SwiftShader here) at batch 1, 8 and 32 on ../shared/embeddings/bench_sentences.json:
// sentences/s (median of 3 runs; CPU: each run a third of the 1,000 sentences; GPU on a software
// adapter: each run the first N, N printed), milliseconds from navigation to the first embedding
// (model files already in the Cache API; includes wasm compile, model parse, WebGPU device,
// pipelines/shader compilation, weight upload), dispatches per forward pass, objects created per
// batch after warm-up, and the kernel-time split where timestamp queries exist.
// Usage: node tests/e2e/bench-embed.mjs [software-sentences=8]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED, startServer, launch } from './harness.mjs';

const SOFTWARE_N = Number(process.argv[2] ?? 8);
const sentences = JSON.parse(readFileSync(join(SHARED, 'embeddings/bench_sentences.json'), 'utf8'));
const server = await startServer(20000 + Math.floor(Math.random() * 1000));
const browser = await launch();

async function session(device) {
  const page = await browser.ctx.newPage();
  page.on('pageerror', (e) => console.error('pageerror:', e.message));
  // A page of the same origin that loads nothing: the benchmark imports the module itself, and
  // times from the page's time origin (navigation start).
  await page.goto(`${server.url}/pkg/package.json`);
  const cold = await page.evaluate(async (device) => {
    const t0 = 0;
    const { WebRag } = await import('/pkg/index.js');
    window.rag = await WebRag.open({ name: `bench-${device}`, model: '/.models/all-MiniLM-L6-v2/', device });
    await window.rag.embed(['warm start']);
    return performance.now() - t0;
  }, device);
  return { page, cold };
}

async function rates(page, batches, slices, path) {
  return page.evaluate(async ({ s, batches, slices, path }) => {
    const med = (v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)];
    const info0 = await window.rag.embedder();
    await window.rag.embed(s.slice(0, Math.min(32, s.length)), { path }); // workspace sized for the largest batch
    const out = {};
    for (const batch of batches) {
      const before = (await window.rag.embedder()).gpuObjects;
      let n = 0;
      const r = [];
      for (const [a, b] of slices) {
        const part = s.slice(a, b);
        const t = performance.now();
        for (let i = 0; i < part.length; i += batch) { await window.rag.embed(part.slice(i, i + batch), { path }); n++; }
        r.push(part.length / ((performance.now() - t) / 1000));
      }
      const after = (await window.rag.embedder()).gpuObjects;
      const per = before && after ? `${(after.buffers - before.buffers) / n} / ${(after.bindGroups - before.bindGroups) / n} / ${(after.pipelines - before.pipelines) / n}` : '';
      out[batch] = { rate: med(r), per };
    }
    return { out, info: info0 };
  }, { s: sentences, batches, slices, path });
}

try {
  // Fill the Cache API once so both cold starts read the model from it.
  const warm = await session('cpu');
  await warm.page.close();
  console.log('| path | figure | batch 1 | batch 8 | batch 32 |');
  console.log('|---|---|---|---|---|');
  const cpu = await session('cpu');
  const third = Math.ceil(sentences.length / 3);
  const c = await rates(cpu.page, [1, 8, 32], [[0, third], [third, 2 * third], [2 * third, sentences.length]], 'cpu');
  console.log(`| cpu (wasm SIMD, 1 thread) | sentences/s (${sentences.length} sentences, median of 3) | ${[1, 8, 32].map((b) => c.out[b].rate.toFixed(1)).join(' | ')} |`);
  console.log(`| cpu | navigation to first embedding, ms | ${cpu.cold.toFixed(0)} | | |`);
  await cpu.page.close();
  const gpu = await session('gpu');
  const info = await gpu.page.evaluate(() => window.rag.embedder());
  const n = info.softwareAdapter ? SOFTWARE_N : sentences.length;
  const slices = info.softwareAdapter ? [[0, n], [0, n], [0, n]] : [[0, third], [third, 2 * third], [2 * third, sentences.length]];
  const g = await rates(gpu.page, [1, 8, 32], slices, 'gpu');
  const what = info.softwareAdapter ? `software adapter: first ${n} sentences` : `${n} sentences`;
  console.log(`| gpu (${info.adapter}) | sentences/s (${what}, median of 3) | ${[1, 8, 32].map((b) => g.out[b].rate.toFixed(2)).join(' | ')} |`);
  console.log(`| gpu | navigation to first embedding (device, shaders, upload, crossover probe), ms | ${gpu.cold.toFixed(0)} | | |`);
  console.log(`| gpu | buffers / bind groups / pipelines created per batch after warm-up | ${[1, 8, 32].map((b) => g.out[b].per).join(' | ')} |`);
  console.log(`| gpu | compute dispatches per forward pass | ${info.dispatchesPerForward} | ${info.dispatchesPerForward} | ${info.dispatchesPerForward} |`);
  console.log(`| gpu | query crossover: one short query, CPU vs GPU ms → queries on | ${info.crossover.cpuMs.toFixed(1)} vs ${info.crossover.gpuMs.toFixed(1)} → ${info.queries} | | |`);
  const k = await gpu.page.evaluate((s) => window.rag.profileGpu(s), sentences.slice(0, Math.min(8, n)));
  if (k) {
    const sum = k.matmulMs + k.attentionMs + k.layerNormMs + k.otherMs;
    console.log(`| gpu | GPU time, batch of ${Math.min(8, n)}: matmul / attention / LayerNorm / gather+pool ms | ${k.matmulMs.toFixed(1)} / ${k.attentionMs.toFixed(1)} / ${k.layerNormMs.toFixed(1)} / ${k.otherMs.toFixed(1)} of ${k.wallMs.toFixed(1)} wall (${(100 * k.matmulMs / sum).toFixed(0)}% matmul, ${(100 * sum / k.wallMs).toFixed(0)}% in kernels) | | |`);
  } else {
    console.log('| gpu | kernel time split | no timestamp queries on this adapter | | |');
  }
  await gpu.page.close();
} finally {
  await browser.close();
  server.stop();
}
