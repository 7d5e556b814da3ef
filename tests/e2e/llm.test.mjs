// End-to-end: knowledge-aware decomposition in the page (worker + wasm + IndexedDB + fetch)
// against the scripted OpenAI-compatible server on 127.0.0.1 (another origin: CORS), with the
// trace delivered to the page, and injected faults ending in typed LlmErrors within the timeout.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, startServer, launch, openDemo } from './harness.mjs';

let server, browser, llm, llmUrl;
before(async () => {
  server = await startServer(20000 + Math.floor(Math.random() * 1000));
  browser = await launch();
  llm = spawn(process.execPath, [join(ROOT, 'tests/llm/server.mjs'), '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((ok) => llm.stdout.on('data', (d) => { const m = /LISTENING (\d+)/.exec(String(d)); if (m) ok(m[1]); }));
  llmUrl = `http://127.0.0.1:${port}`;
});
after(async () => { await browser?.close(); server?.stop(); llm?.kill(); });

const script = (replies) => fetch(`${llmUrl}/__script`, { method: 'POST', body: JSON.stringify(replies) });
const reset = () => fetch(`${llmUrl}/__reset`, { method: 'POST' });
const log = async () => (await fetch(`${llmUrl}/__log`)).json();

test('decomposition runs in the page over fetch, traces each step, and faults are typed', { timeout: 600_000 }, async () => {
  const page = await browser.ctx.newPage();
  await openDemo(page, `${server.url}/www/?kb=e2e-llm&empty&device=cpu`);
  await page.evaluate(async () => {
    await window.webragDemo.rag.add([
      { id: 'acme', title: 'Acme Corporation', text: 'Acme Corporation was founded by Jane Roe in 1931 in Springfield.', format: 'text' },
      { id: 'roe', title: 'Jane Roe', text: 'Jane Roe was an engineer born in Lyon, France, who later moved to Springfield.', format: 'text' },
      { id: 'lyon', title: 'Lyon', text: 'Lyon is a city in France at the confluence of the Rhône and the Saône.', format: 'text' },
    ]);
  });
  await reset();
  await script([
    { content: '{"decompose": true, "questions": ["Who founded Acme Corporation?"]}' },
    { content: 'Here you go:\n```json\n{"choice": 0, "answer": "Jane Roe"}\n```' },
    { content: '{"decompose": true, "questions": ["Where was Jane Roe born?"]}' },
    { content: '{"choice": 0, "answer": "Lyon"}' },
    { content: '{"decompose": false, "questions": []}' },
  ]);
  const run = (llmConfig, question) => page.evaluate(async ([cfg, q]) => {
    const traces = [];
    const t0 = performance.now();
    try {
      const t = await window.webragDemo.rag.decompose(q, { llm: cfg, onTrace: (e) => traces.push(e.step) });
      const docs = [];
      for (const c of t.context) docs.push((await window.webragDemo.rag.chunk(c)).docId);
      return { ok: true, stop: t.stop, docs, answers: t.rounds.map((r) => r.answer), traces, ms: performance.now() - t0 };
    } catch (e) {
      return { ok: false, name: e.name, code: e.code, isLlmError: e.constructor.name === 'LlmError', ms: performance.now() - t0 };
    }
  }, [llmConfig, question]);
  const cfg = { baseUrl: `${llmUrl}/v1`, model: 'scripted', apiKey: 'sk-page-key', timeoutMs: 1500, retries: 1, backoffMs: 50 };
  const ok = await run(cfg, 'Where was the founder of Acme Corporation born?');
  assert.equal(ok.ok, true, JSON.stringify(ok));
  assert.deepEqual(ok.docs, ['acme', 'roe']);
  assert.deepEqual(ok.answers, ['Jane Roe', 'Lyon']);
  assert.equal(ok.stop, 'nothingProposed');
  assert.deepEqual(ok.traces, ['propose', 'retrieve', 'select', 'propose', 'retrieve', 'select', 'propose']);
  const sent = await log();
  assert.equal(sent.length, 5);
  assert.equal(sent[0].auth, 'Bearer sk-page-key', 'the key is sent as a bearer token');
  assert.match(sent[1].body.messages[1].content, /<data>Acme Corporation was founded/);

  // ask: the same loop, then a streamed answer citing the context.
  await script([
    { content: '{"decompose": true, "questions": ["Who founded Acme Corporation?"]}' },
    { content: '{"choice": 0, "answer": "Jane Roe"}' },
    { content: '{"decompose": false}' },
    { stream: ['Acme ', 'was founded ', 'by Jane Roe ', '[S1].', '\nConfidence: high'], tokenDelayMs: 20 },
  ]);
  const asked = await page.evaluate(async (c) => {
    const tokens = [];
    const steps = [];
    const r = await window.webragDemo.rag.ask('Who founded Acme?', { llm: c, onToken: (t) => tokens.push(t), onTrace: (e) => steps.push(e.step) });
    return { tokens, steps, text: r.answer.text, cited: (await window.webragDemo.rag.chunk(r.answer.citations[0])).docId, confidence: r.answer.confidence };
  }, cfg);
  assert.deepEqual(asked.tokens, ['Acme ', 'was founded ', 'by Jane Roe ', '[S1].', '\nConfidence: high'], 'tokens arrive as streamed');
  assert.equal(asked.text, 'Acme was founded by Jane Roe [S1].');
  assert.deepEqual([asked.cited, asked.confidence], ['acme', 'high']);
  assert.equal(asked.steps.at(-1), 'answer');

  // The page's own model as a function (as WebLLM would be): JSON replies for the loop, an
  // async generator for the streamed answer; a model that throws is LLM_CALLBACK_FAILED.
  const viaFunction = await page.evaluate(async () => {
    const steps = [];
    const model = async (messages, { step }) => {
      steps.push(step);
      const user = messages.at(-1).content;
      if (step === 'propose') return user.includes('Known so far: nothing yet') ? '{"questions": ["Who founded Acme Corporation?"]}' : '{"decompose": false}';
      if (step === 'select') return '{"choice": 0, "answer": "Jane Roe"}';
      return (async function* () { yield 'Jane Roe '; yield 'founded it [S1].'; yield '\nConfidence: medium'; })();
    };
    const tokens = [];
    const r = await window.webragDemo.rag.ask('Who founded Acme?', { llm: model, onToken: (t) => tokens.push(t) });
    let err;
    try { await window.webragDemo.rag.ask('q', { llm: async () => { throw new Error('model crashed'); } }); } catch (e) { err = { name: e.name, code: e.code, message: e.message }; }
    const cited = (await window.webragDemo.rag.chunk(r.answer.citations[0])).docId;
    return { steps, tokens, text: r.answer.text, confidence: r.answer.confidence, cited, err };
  });
  assert.deepEqual(viaFunction.steps, ['propose', 'select', 'propose', 'answer']);
  assert.deepEqual(viaFunction.tokens, ['Jane Roe ', 'founded it [S1].', '\nConfidence: medium']);
  assert.deepEqual([viaFunction.text, viaFunction.confidence, viaFunction.cited], ['Jane Roe founded it [S1].', 'medium', 'acme']);
  assert.equal(viaFunction.err.name, 'LlmError');
  assert.equal(viaFunction.err.code, 'LLM_CALLBACK_FAILED');
  assert.match(viaFunction.err.message, /model crashed/);

  // Faults: 401 → LLM_UNAUTHORIZED; a hung server → LLM_TIMEOUT within the configured timeout;
  // 429 then 200 → retried and answered; prose twice → LLM_BAD_OUTPUT. Nothing stored is lost.
  await script([{ status: 401 }]);
  const unauthorized = await run(cfg, 'q');
  assert.deepEqual([unauthorized.name, unauthorized.code, unauthorized.isLlmError], ['LlmError', 'LLM_UNAUTHORIZED', true]);
  await script([{ hang: true }]);
  const hung = await run(cfg, 'q');
  assert.deepEqual([hung.name, hung.code], ['LlmError', 'LLM_TIMEOUT']);
  assert.ok(hung.ms < 5000, `the timeout ended the call after ${hung.ms} ms`);
  await script([{ status: 429, headers: { 'retry-after': '0' } }, { content: '{"decompose": false}' }]);
  const retried = await run(cfg, 'q');
  assert.equal(retried.ok, true, JSON.stringify(retried));
  await script([{ content: 'Let me think about it.' }, { content: 'Still thinking.' }]);
  const bad = await run(cfg, 'q');
  assert.deepEqual([bad.name, bad.code], ['LlmError', 'LLM_BAD_OUTPUT']);
  const down = await run({ ...cfg, baseUrl: 'http://127.0.0.1:9/v1', retries: 0 }, 'q');
  assert.deepEqual([down.name, down.code], ['LlmError', 'LLM_NETWORK']);
  const misconfigured = await run({ baseUrl: 'ftp://x', model: 'm' }, 'q');
  assert.deepEqual([misconfigured.name, misconfigured.code], ['LlmError', 'LLM_NOT_CONFIGURED']);
  assert.equal(await page.evaluate(async () => (await window.webragDemo.rag.stats()).documents), 3);
});

test('the demo Ask panel: endpoint settings, test connection, streamed answer, citations that open the source, trace', { timeout: 600_000 }, async () => {
  const page = await browser.ctx.newPage();
  await openDemo(page, `${server.url}/www/?kb=e2e-ask&empty&device=cpu`);
  await page.evaluate(async () => {
    await window.webragDemo.rag.add([
      { id: 'acme', title: 'Acme Corporation', text: 'Acme Corporation was founded by Jane Roe in 1931 in Springfield.', format: 'text' },
      { id: 'roe', title: 'Jane Roe', text: 'Jane Roe was an engineer born in Lyon, France.', format: 'text' },
    ]);
  });
  await reset();
  await page.click('#llm-settings summary');
  await page.fill('#llm-base', `${llmUrl}/v1`);
  await page.fill('#llm-model', 'scripted');
  await page.fill('#llm-key', 'sk-demo-secret');
  await script([{ content: 'OK' }]);
  await page.click('#llm-test');
  await page.waitForFunction(() => /connected/.test(document.getElementById('llm-test-result').textContent));
  assert.equal(await page.evaluate(() => localStorage.getItem('webrag-llm').includes('sk-demo-secret')), false, 'the key is not stored unless "remember" is ticked');
  await script([
    { content: '{"decompose": true, "questions": ["Who founded Acme Corporation?"]}' },
    { content: '{"choice": 0, "answer": "Jane Roe"}' },
    { content: '{"decompose": false}' },
    { stream: ['Acme ', 'was founded ', 'by <b>Jane Roe</b> ', '[S1].', '\nConfidence: high'], tokenDelayMs: 150 },
  ]);
  await page.fill('#ask-q', 'Who founded Acme?');
  await page.click('#ask-btn');
  // The answer streams: part of it shows before the end.
  await page.waitForFunction(() => document.getElementById('answer').textContent.includes('was founded'));
  assert.equal(await page.textContent('#answer-meta'), '', 'still streaming');
  await page.waitForFunction(() => document.getElementById('answer-meta').dataset.confidence === 'high');
  assert.equal(await page.textContent('#answer'), 'Acme was founded by <b>Jane Roe</b> [S1].', 'model text is shown as text');
  assert.equal(await page.locator('#answer b').count(), 0);
  await page.click('#answer button.cite');
  await page.waitForFunction(() => !document.getElementById('source').hidden);
  assert.match(await page.textContent('#source'), /Acme Corporation was founded by Jane Roe/);
  const steps = await page.$$eval('#trace li', (lis) => lis.map((li) => li.dataset.step));
  assert.deepEqual(steps, ['propose', 'retrieve', 'select', 'propose', 'answer']);
  assert.match(await page.textContent('#trace'), /selected \[0\] → Jane Roe/);
  // A refused key shows a typed error in the panel.
  await script([{ status: 401 }]);
  await page.click('#ask-btn');
  await page.waitForFunction(() => document.getElementById('ask-error').textContent.includes('LLM_UNAUTHORIZED'));
  // "remember" keeps the key across a reload.
  await page.check('#llm-remember');
  await page.reload();
  await page.waitForFunction(() => window.webragDemo?.ready === true, null, { timeout: 300_000 });
  assert.equal(await page.inputValue('#llm-key'), 'sk-demo-secret');
  assert.equal(await page.inputValue('#llm-base'), `${llmUrl}/v1`);
});
