// Error codes that only the page produces, each from the call a user would make:
// UNKNOWN_FORMAT (a document format the engine does not parse), GPU_UNAVAILABLE (`device: 'gpu'`
// in a browser without WebGPU, and `embed(…, {path: 'gpu'})` on the CPU path), and, from the
// worker protocol itself, NOT_OPEN (a call before open) and INTERNAL (a .wasm that does not
// compile); PARSER_UNAVAILABLE (the search build's parser module missing or broken).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launch } from './harness.mjs';

let server, browser;
before(async () => { server = await startServer(27000 + Math.floor(Math.random() * 1000)); browser = await launch({ webgpu: false }); });
after(async () => { await browser?.close(); server?.stop(); });

const MODEL = '/.models/all-MiniLM-L6-v2/';

async function blankPage() {
  const page = await browser.ctx.newPage();
  page.on('pageerror', (e) => console.error('pageerror:', e.message));
  await page.goto(`${server.url}/www/style.css`);
  return page;
}

test('UNKNOWN_FORMAT and GPU_UNAVAILABLE from the public API', { timeout: 300_000 }, async () => {
  const page = await blankPage();
  const r = await page.evaluate(async ({ model }) => {
    const { WebRag } = await import('/pkg/index.js');
    const code = (p) => p.then(() => 'resolved', (e) => `${e.name} ${e.code}`);
    const gpu = await code(WebRag.open({ name: 'errors-gpu', model, device: 'gpu' }));
    const rag = await WebRag.open({ name: 'errors', model, device: 'cpu' });
    const format = await code(rag.add([{ id: 'a.pdf', text: '%PDF-1.7', format: 'pdf' }]));
    const path = await code(rag.embed(['owls'], { path: 'gpu' }));
    const docs = (await rag.documents()).length;
    rag.close();
    return { gpu, format, path, docs };
  }, { model: MODEL });
  assert.equal(r.gpu, 'GpuError GPU_UNAVAILABLE', 'no WebGPU in this browser');
  assert.equal(r.format, 'InputError UNKNOWN_FORMAT');
  assert.equal(r.path, 'GpuError GPU_UNAVAILABLE', 'the GPU path is not in use');
  assert.equal(r.docs, 0, 'nothing stored');
});

test('the worker protocol: NOT_OPEN before open, INTERNAL for a .wasm that does not compile', { timeout: 120_000 }, async () => {
  const page = await blankPage();
  const r = await page.evaluate(async () => {
    const worker = new Worker('/pkg/worker.js', { type: 'module' });
    await new Promise((ok) => worker.addEventListener('message', (e) => { if (e.data?.ready) ok(); }));
    const call = (id, op, args) => new Promise((ok) => {
      const on = (e) => { if (e.data?.id === id) { worker.removeEventListener('message', on); ok(e.data.error?.code ?? 'ok'); } };
      worker.addEventListener('message', on);
      worker.postMessage({ id, op, args });
    });
    const notOpen = await call(1, 'search', { query: 'owls' });
    const internal = await call(2, 'open', { name: 'x', model: '/', wasm: new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9]) });
    worker.terminate();
    return { notOpen, internal };
  });
  assert.equal(r.notOpen, 'NOT_OPEN');
  assert.equal(r.internal, 'INTERNAL');
});

test('PARSER_UNAVAILABLE: the search build without its parser module keeps what it stored and still adds plain text', { timeout: 300_000 }, async () => {
  const page = await blankPage();
  const r = await page.evaluate(async ({ model }) => {
    // The search build's worker, started by hand so that `open` can name a parser module that is
    // not there (a 404) or is not WebAssembly.
    const run = async (markup) => {
      const worker = new Worker('/pkg/search/worker.js', { type: 'module' });
      await new Promise((ok) => worker.addEventListener('message', (e) => { if (e.data?.ready) ok(); }));
      let next = 1;
      const call = (op, args) => new Promise((ok) => {
        const id = next++;
        const on = (e) => { if (e.data?.id === id && !e.data.progress) { worker.removeEventListener('message', on); ok(e.data.ok ? e.data.value : { code: e.data.error.code, message: e.data.error.message }); } };
        worker.addEventListener('message', on);
        worker.postMessage({ id, op, args });
      });
      const name = `errors-markup-${markup instanceof Uint8Array ? 'bytes' : 'url'}`;
      await call('open', { name, model, device: 'cpu', workers: 0, markup });
      await call('clear', {});
      const text = await call('add', { docs: [{ id: 'plain', format: 'text', text: 'Owls hunt at night.' }] });
      const markdown = await call('add', { docs: [{ id: 'md', format: 'markdown', text: '# Tea\n\nGreen tea.' }, { id: 'more', format: 'text', text: 'Moles dig.' }] });
      const html = await call('add', { docs: [{ id: 'page', text: '<html><body><p>Glaciers.</p></body></html>' }] });
      const again = await call('add', { docs: [{ id: 'plain2', format: 'text', text: 'Tea is steeped.' }] });
      const docs = (await call('documents', {})).map((d) => d.id).sort();
      worker.terminate();
      return { text: text.added, markdown, html: html.code, again: again.added, docs };
    };
    return { missing: await run('/pkg/search/no-such-markup.wasm'), broken: await run(new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9])) };
  }, { model: MODEL });
  for (const [what, x] of Object.entries(r)) {
    assert.deepEqual(x.text, ['plain'], what);
    assert.equal(x.markdown.code, 'PARSER_UNAVAILABLE', `${what}: ${JSON.stringify(x.markdown)}`);
    assert.match(x.markdown.message, /markdown.*parser module/, what);
    assert.equal(x.html, 'PARSER_UNAVAILABLE', `${what}: a document whose format is auto and reads as HTML`);
    assert.deepEqual(x.again, ['plain2'], `${what}: plain text still adds`);
    assert.deepEqual(x.docs, ['plain', 'plain2'], `${what}: the rejected batches wrote nothing, lost nothing`);
  }
});
