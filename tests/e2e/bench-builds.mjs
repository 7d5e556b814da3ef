// The two builds of the engine in the page (headless Chromium, which runs both): the relaxed-SIMD
// build (`webrag_bg.wasm`) and the baseline (`baseline/webrag_bg.wasm`, SIMD128 alone, what
// browsers without relaxed SIMD load), each with the CPU path on one thread (`workers: 0`), f32
// and int8: sentences/s embedding 96 sentences of ../shared/embeddings/bench_sentences.json in
// batches of 32 (median of 3 runs), and each baseline figure as a share of the relaxed one.
// Usage: node tests/e2e/bench-builds.mjs   (./webrag.sh bench-builds)
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { SHARED, startServer, launch } from './harness.mjs';

const sentences = JSON.parse(readFileSync(join(SHARED, 'embeddings/bench_sentences.json'), 'utf8')).slice(0, 96);
const server = await startServer(20000 + Math.floor(Math.random() * 1000));
const browser = await launch({ webgpu: false });

async function rate(cpuKernels, precision) {
  const page = await browser.ctx.newPage();
  await page.goto(`${server.url}/pkg/package.json`);
  const r = await page.evaluate(async ({ cpuKernels, precision, s }) => {
    const { WebRag } = await import('/pkg/index.js');
    const rag = await WebRag.open({ name: `bench-${cpuKernels}-${precision}`, model: '/.models/all-MiniLM-L6-v2/', device: 'cpu', precision, workers: 0, cpuKernels });
    await rag.embed(s.slice(0, 32)); // warm-up: workspace for the largest batch
    const runs = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      for (let j = 0; j < s.length; j += 32) await rag.embed(s.slice(j, j + 32));
      runs.push(s.length / ((performance.now() - t) / 1000));
    }
    const info = await rag.embedder();
    rag.close();
    return { rate: runs.sort((a, b) => a - b)[1], kernels: info.cpuKernels };
  }, { cpuKernels, precision, s: sentences });
  await page.close();
  if (r.kernels !== cpuKernels) throw new Error(`asked for ${cpuKernels}, ran ${r.kernels}`);
  return r.rate;
}

try {
  console.log(`the engine's two builds in headless Chromium (${cpus()[0]?.model ?? 'unknown CPU'}), CPU path, one thread, batch 32, median of 3 runs over 96 sentences`);
  console.log('| precision | relaxed-simd (sentences/s) | simd128 (sentences/s) | simd128 / relaxed-simd |');
  console.log('|---|---|---|---|');
  for (const precision of ['f32', 'int8']) {
    const relaxed = await rate('relaxed-simd', precision);
    const baseline = await rate('simd128', precision);
    console.log(`| ${precision} | ${relaxed.toFixed(1)} | ${baseline.toFixed(1)} | ${(baseline / relaxed).toFixed(2)} |`);
  }
} finally {
  await browser.close();
  server.stop();
}
