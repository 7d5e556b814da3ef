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
      return { ok: true, stop: t.stop, docs, answers: t.rounds.map((r) => r.answer), proposals: t.rounds.map((r) => r.proposals), traces, ms: performance.now() - t0 };
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

  // ask with only decomposition and the answer: the same loop, then a streamed answer citing
  // the context (the whole pipeline is driven through the demo in the next test).
  await script([
    { content: '{"decompose": true, "questions": ["Who founded Acme Corporation?"]}' },
    { content: '{"choice": 0, "answer": "Jane Roe"}' },
    { content: '{"decompose": false}' },
    { stream: ['Acme ', 'was founded ', 'by Jane Roe ', '[S1].', '\nConfidence: high'], tokenDelayMs: 20 },
  ]);
  const asked = await page.evaluate(async (c) => {
    const tokens = [];
    const steps = [];
    const marks = [];
    const options = { preset: 'search', steps: { decompose: true, answer: true }, answer: { stream: 'provisional' } };
    const r = await window.webragDemo.rag.ask('Who founded Acme?', { llm: c, options, onToken: (t, m) => { tokens.push(t); marks.push(m.provisional); }, onTrace: (e) => steps.push(e.step) });
    return { tokens, marks, steps, text: r.answer.text, cited: (await window.webragDemo.rag.chunk(r.answer.citations[0])).docId, confidence: r.answer.confidence };
  }, cfg);
  assert.deepEqual(asked.tokens, ['Acme ', 'was founded ', 'by Jane Roe ', '[S1].', '\nConfidence: high'], 'provisional: tokens arrive as streamed');
  assert.ok(asked.marks.every((m) => m === true), 'and are marked provisional');
  assert.equal(asked.text, 'Acme was founded by Jane Roe [S1].');
  assert.deepEqual([asked.cited, asked.confidence], ['acme', 'high']);
  assert.equal(asked.steps.at(-1), 'answer');

  // The page's own model as a function (as WebLLM would be): JSON replies for the loop, an
  // async generator for the streamed answer; a model that throws is LLM_CALLBACK_FAILED.
  const viaFunction = await page.evaluate(async () => {
    const steps = [];
    const schemas = {};
    const model = async (messages, { step, schema }) => {
      steps.push(step);
      schemas[step] = schema === undefined ? 'absent' : schema;
      const user = messages.at(-1).content;
      if (step === 'propose') return user.includes('Known so far: nothing yet') ? '{"questions": ["Who founded Acme Corporation?"]}' : '{"decompose": false}';
      if (step === 'select') return '{"choice": 0, "answer": "Jane Roe"}';
      return (async function* () { yield 'Jane Roe '; yield 'founded it [S1].'; yield '\nConfidence: medium'; })();
    };
    const tokens = [];
    const options = { preset: 'search', steps: { decompose: true, answer: true } };
    const r = await window.webragDemo.rag.ask('Who founded Acme?', { llm: model, options, onToken: (t) => tokens.push(t) });
    let err;
    try { await window.webragDemo.rag.ask('q', { llm: async () => { throw new Error('model crashed'); }, options }); } catch (e) { err = { name: e.name, code: e.code, message: e.message }; }
    const cited = (await window.webragDemo.rag.chunk(r.answer.citations[0])).docId;
    return { steps, schemas, tokens, text: r.answer.text, confidence: r.answer.confidence, cited, err };
  });
  assert.deepEqual(viaFunction.steps, ['propose', 'select', 'propose', 'answer']);
  // Structured steps hand the page's model their reply's JSON Schema (an object, as HTTP
  // endpoints get it in response_format); the free-text answer step none.
  const { propose, select, answer: answerSchema } = viaFunction.schemas;
  assert.equal(propose.type, 'object', JSON.stringify(propose));
  assert.deepEqual(Object.keys(propose.properties).sort(), ['decompose', 'questions']);
  assert.equal(propose.properties.questions.type, 'array');
  assert.equal(select.type, 'object', JSON.stringify(select));
  assert.ok(select.properties.choice && select.properties.answer, JSON.stringify(select));
  assert.equal(answerSchema, 'absent');
  assert.deepEqual(viaFunction.tokens, ['Jane Roe founded it [S1].'], 'withheld (the default): the final text once its confidence is known');
  assert.deepEqual([viaFunction.text, viaFunction.confidence, viaFunction.cited], ['Jane Roe founded it [S1].', 'medium', 'acme']);
  assert.equal(viaFunction.err.name, 'LlmError');
  assert.equal(viaFunction.err.code, 'LLM_CALLBACK_FAILED');
  assert.match(viaFunction.err.message, /model crashed/);

  // Faults: 401 → LLM_UNAUTHORIZED; a hung server → LLM_TIMEOUT within the configured timeout;
  // 429 then 200 → retried and answered; prose twice → the documented fallback. Nothing stored is lost.
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
  await script([{ content: 'Let me think about it.' }, { content: 'Still thinking.' }, { content: '{"choice": null}' }]);
  const bad = await run(cfg, 'q');
  assert.equal(bad.ok, true, 'an unreadable proposal falls back to the question itself');
  assert.deepEqual(bad.proposals[0], ['q']);
  const down = await run({ ...cfg, baseUrl: 'http://127.0.0.1:9/v1', retries: 0 }, 'q');
  assert.deepEqual([down.name, down.code], ['LlmError', 'LLM_NETWORK']);
  const misconfigured = await run({ baseUrl: 'ftp://x', model: 'm' }, 'q');
  assert.deepEqual([misconfigured.name, misconfigured.code], ['LlmError', 'LLM_NOT_CONFIGURED']);
  // The `search` preset needs no model; the `ask` preset without one is LLM_NOT_CONFIGURED.
  const noLlm = await page.evaluate(async () => {
    const r = await window.webragDemo.rag.ask('Who founded Acme?', { options: { preset: 'search' } });
    let err;
    try { await window.webragDemo.rag.ask('Who founded Acme?'); } catch (e) { err = `${e.name} ${e.code}`; }
    return { answer: r.answer, first: r.context[0]?.id, err };
  });
  assert.equal(noLlm.answer, null);
  assert.equal(noLlm.first, 'acme#0');
  assert.equal(noLlm.err, 'LlmError LLM_NOT_CONFIGURED');
  assert.equal(await page.evaluate(async () => (await window.webragDemo.rag.stats()).documents), 3);
});

const rules = (r) => fetch(`${llmUrl}/__rules`, { method: 'POST', body: JSON.stringify(r) });
const json = (v) => ({ content: JSON.stringify(v) });

test('the demo: LLM stages at ingest (resumable), the whole ask pipeline streamed with citations and trace, export, stop, settings', { timeout: 600_000 }, async () => {
  const page = await browser.ctx.newPage();
  await openDemo(page, `${server.url}/www/?kb=e2e-ask&empty&device=cpu`);
  await page.evaluate(async () => {
    await window.webragDemo.rag.add([
      { id: 'acme', title: 'Acme Corporation', text: 'Acme Corporation was founded by Jane Roe in 1931 in Springfield.', format: 'text' },
      { id: 'roe', title: 'Jane Roe', text: 'Jane Roe was an engineer born in Lyon, France.', format: 'text' },
      { id: 'lyon', title: 'Lyon', text: 'Lyon is a city in France at the confluence of the Rhône and the Saône.', format: 'text' },
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

  // Ingest-time LLM stages. The atomizing calls run concurrently, so the server answers by
  // rules. Jane Roe's first call is refused: the pass stops with a typed error, the others'
  // questions are kept, and the second run asks only about the chunk left.
  await reset();
  await rules([
    { match: 'Task: atomize\nDocument: <data>Jane Roe', times: 1, reply: { status: 401 } },
    { match: 'Task: atomize\nDocument: <data>Acme', reply: json({ questions: ['Who founded Acme Corporation?', 'When was Acme Corporation founded?'] }) },
    { match: 'Task: atomize\nDocument: <data>Jane Roe', reply: json({ questions: ['Where was Jane Roe born?'] }) },
    { match: 'Task: atomize\nDocument: <data>Lyon', reply: json({ questions: ['Which rivers meet at Lyon?'] }) },
    { match: 'Task: fact-check items\nDocument: <data>Acme', reply: json({ items: ['Acme Corporation was founded by Jane Roe in 1931.', 'Acme Corporation was founded in Springfield.'] }) },
    { match: 'Task: fact-check items\nDocument: <data>Jane Roe', reply: json({ items: ['Jane Roe was an engineer born in Lyon, France.'] }) },
    { match: 'Task: fact-check items\nDocument: <data>Lyon', reply: json({ items: ['Lyon is a city in France at the confluence of the Rhône and the Saône.'] }) },
    { match: 'Task: mind map\nTopic: <data>Acme', reply: { content: '```json\n{"Acme Corporation": {"History": {"Founding": "Founded by Jane Roe in 1931.", "Place": "Founded in Springfield."}}}\n```' } },
    { match: 'Task: mind map\nTopic: <data>Jane Roe', reply: json({ 'Jane Roe': { Life: { Birth: 'Born in Lyon, France.', Work: 'An engineer.' } } }) },
    { match: 'Task: mind map\nTopic: <data>Lyon', reply: { content: 'Lyon is lovely; no JSON today.' } },
    { match: 'Your reply could not be used', reply: { content: 'Still no JSON, sorry.' } },
  ]);
  await page.click('#enrich-btn');
  await page.waitForFunction(() => document.getElementById('enrich-status').dataset.done);
  assert.equal(await page.getAttribute('#enrich-status', 'data-done'), 'LLM_UNAUTHORIZED');
  assert.match(await page.textContent('#enrich-status'), /run again to resume/);
  const mid = await page.evaluate(async () => (await window.webragDemo.rag.stats()));
  assert.deepEqual([mid.documents, mid.atomizedChunks, mid.questions], [3, 2, 3], 'the two readable batch-mates were kept');
  const asked = (await log()).filter((r) => r.body.messages[1].content.startsWith('Task: atomize')).length;
  assert.equal(asked, 3);
  await page.click('#enrich-btn');
  await page.waitForFunction(() => document.getElementById('enrich-status').dataset.done === 'ok', null, { timeout: 120_000 });
  const sent = await log();
  assert.equal(sent.filter((r) => r.body.messages[1].content.startsWith('Task: atomize')).length, 4, 'the resumed pass asked once more, for the chunk left');
  assert.match(await page.textContent('#enrich-status'), /1 chunks atomized \(1 questions, 0 left\); 2 LLM mind maps \(1 kept structural/);
  const after = await page.evaluate(async () => {
    const rag = window.webragDemo.rag;
    const s = await rag.stats();
    const docs = await rag.documents();
    return { s, kinds: Object.fromEntries(docs.map((d) => [d.id, d.mindMap])), map: await rag.mindMap('acme'), qs: await rag.questions('acme#0') };
  });
  assert.deepEqual([after.s.atomizedChunks, after.s.questions], [3, 4]);
  assert.deepEqual(after.kinds, { acme: 'llm', roe: 'llm', lyon: 'structural-fallback' });
  assert.deepEqual(after.map.children.map((n) => n.label), ['History']);
  assert.deepEqual(after.qs, ['Who founded Acme Corporation?', 'When was Acme Corporation founded?']);
  assert.equal(await page.locator('#docs li[data-mind-map="llm"]').count(), 2);

  // The whole pipeline from the Ask panel (every step on by default).
  await reset();
  await rules([
    { match: 'Task: rewrite', reply: json({ question: 'Where was the founder of Acme Corporation born?', queries: ['Acme Corporation founder'] }) },
    { match: 'Task: route', reply: json({ route: 'both' }) },
    { match: 'Task: key points', reply: json({ keyPoints: ['founder of Acme Corporation', 'birthplace of Jane Roe'] }) },
    { match: 'Known so far: nothing yet.\n\nList up to', reply: json({ decompose: true, questions: ['Who founded Acme Corporation?'] }) },
    { match: 'Task: propose', reply: json({ decompose: false, questions: [] }) },
    { match: 'Task: select', reply: json({ choice: 0, answer: 'Jane Roe' }) },
    { match: 'Task: verify', reply: json({ sufficient: true }) },
    { match: 'Task: filter', reply: { fillLabels: 'entailment' } },
    { match: 'Task: answer', reply: { stream: ['Acme ', 'was founded ', 'by <b>Jane Roe</b> ', '[S1].', '\nConfidence: high'], tokenDelayMs: 150 } },
  ]);
  await page.fill('#ask-q', 'Where was the founder of Acme born?');
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
  const steps = await page.$$eval('#trace > li', (lis) => lis.map((li) => li.dataset.step));
  assert.deepEqual(steps, ['rewrite', 'route', 'retrieve', 'keyPoints', 'propose', 'retrieve', 'select', 'propose', 'verify', 'filter', 'answer', 'memory']);
  const trace = await page.textContent('#trace');
  assert.match(trace, /key points: founder of Acme Corporation \| birthplace of Jane Roe/);
  assert.match(trace, /candidates: Who founded Acme Corporation\?/, 'atomic questions are the candidates');
  assert.match(trace, /selected \[0\] → Jane Roe/);
  assert.ok(await page.locator('#trace li[data-step="keyPoints"] details.mindmap').count() >= 1, 'the mind-map context is in the timeline');
  // Traces are kept and export as JSONL: events, and t + 1 = 2 <decompose> pairs.
  const exported = await page.evaluate(async () => ({ events: await window.webragDemo.rag.exportTraces(), sft: await window.webragDemo.rag.exportTraces({ format: 'sft' }), memory: await window.webragDemo.rag.memory() }));
  assert.equal(exported.events.trim().split('\n').length, 1);
  assert.equal(JSON.parse(exported.events).events.length, steps.length);
  const pairs = exported.sft.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(pairs.map((p) => p.completion), ['<decompose>True</decompose>\n<sub-question>Who founded Acme Corporation?</sub-question>', '<decompose>False</decompose>']);
  assert.deepEqual(exported.memory.map((m) => m.title), ['Who founded Acme Corporation?', 'Where was the founder of Acme Corporation born?']);

  // Stop: an AbortSignal cancels the run in the worker (the request in flight is aborted).
  await reset();
  await rules([{ match: 'Task:', reply: { ...json({ question: 'q', queries: [] }), delayMs: 4000 } }]);
  const t0 = Date.now();
  await page.click('#ask-btn');
  await page.waitForFunction(() => !document.getElementById('ask-stop').hidden);
  await page.click('#ask-stop');
  await page.waitForFunction(() => document.getElementById('ask-error').textContent.includes('LLM_CANCELLED'));
  assert.ok(Date.now() - t0 < 3500, `cancelled after ${Date.now() - t0} ms, before the reply`);
  // A refused key shows a typed error in the panel; nothing stored is lost.
  await reset();
  await script([{ status: 401 }]);
  await page.click('#ask-btn');
  await page.waitForFunction(() => document.getElementById('ask-error').textContent.includes('LLM_UNAUTHORIZED'));
  assert.equal(await page.evaluate(async () => (await window.webragDemo.rag.stats()).questions), 4);
  // "remember" keeps the key across a reload.
  await page.check('#llm-remember');
  await page.reload();
  await page.waitForFunction(() => window.webragDemo?.ready === true, null, { timeout: 300_000 });
  assert.equal(await page.inputValue('#llm-key'), 'sk-demo-secret');
  assert.equal(await page.inputValue('#llm-base'), `${llmUrl}/v1`);
});

test('an AbortSignal is honoured while the call waits in the worker queue: it never starts', { timeout: 600_000 }, async () => {
  const page = await browser.ctx.newPage();
  await openDemo(page, `${server.url}/www/?kb=e2e-cancel&empty&device=cpu`);
  await reset();
  // The first call holds the worker's queue for 1.5 s (a slow model); four more wait behind it
  // and are aborted there.
  await rules([{ match: 'Task:', reply: { ...json({ decompose: false, questions: [] }), delayMs: 1500 } }]);
  const r = await page.evaluate(async (cfg) => {
    const rag = window.webragDemo.rag;
    await rag.add([{ id: 'acme', title: 'Acme Corporation', text: 'Acme Corporation was founded by Jane Roe in 1931.', format: 'text' }]);
    const settle = (p) => p.then((v) => ({ ok: true, v }), (e) => ({ ok: false, name: e.name, code: e.code }));
    const slow = settle(rag.decompose('Who founded Acme?', { llm: cfg }));
    const ctl = [0, 1, 2, 3].map(() => new AbortController());
    const queued = [
      settle(rag.search('Acme', { k: 3, signal: ctl[0].signal })),
      settle(rag.ask('Who founded Acme?', { llm: cfg, signal: ctl[1].signal })),
      settle(rag.decompose('Who founded Acme?', { llm: cfg, signal: ctl[2].signal })),
      settle(rag.add([{ id: 'late', text: 'Never stored.', format: 'text' }], { signal: ctl[3].signal })),
    ];
    const kept = settle(rag.search('Acme', { k: 3, signal: new AbortController().signal }));
    for (const c of ctl) c.abort();
    const [first, ...rest] = await Promise.all([slow, ...queued, kept]);
    return { first, rest, docs: (await rag.documents()).map((d) => d.id) };
  }, { baseUrl: `${llmUrl}/v1`, model: 'scripted', timeoutMs: 10_000, retries: 0 });
  assert.equal(r.first.ok, true, JSON.stringify(r.first));
  const [search, ask, decompose, add, kept] = r.rest;
  assert.deepEqual([search.name, search.code], ['CancelledError', 'CANCELLED']);
  assert.deepEqual([ask.name, ask.code], ['LlmError', 'LLM_CANCELLED']);
  assert.deepEqual([decompose.name, decompose.code], ['LlmError', 'LLM_CANCELLED']);
  assert.deepEqual([add.name, add.code], ['CancelledError', 'CANCELLED']);
  assert.equal(kept.ok, true, 'a search whose signal did not fire runs');
  assert.equal(kept.v[0].docId, 'acme');
  assert.deepEqual(r.docs, ['acme'], 'the cancelled add wrote nothing');
  assert.equal((await log()).length, 1, 'only the first call reached the model');
});

test('options accept undefined for any optional field, and errors name the field and what was expected', { timeout: 600_000 }, async () => {
  const page = await browser.ctx.newPage();
  await openDemo(page, `${server.url}/www/?kb=e2e-options&empty&device=cpu`);
  const r = await page.evaluate(async (cfg) => {
    const rag = window.webragDemo.rag;
    await rag.add([{ id: 'acme', title: 'Acme Corporation', text: 'Acme Corporation was founded by Jane Roe in 1931.', format: 'text' }]);
    const settle = (p) => p.then((v) => ({ ok: true, v }), (e) => ({ ok: false, code: e.code, message: e.message }));
    return {
      ask: await settle(rag.ask('Who founded Acme?', { llm: { ...cfg, apiKey: undefined, headers: undefined }, options: { preset: 'search', steps: undefined, tau: undefined, answer: { minConfidence: undefined }, decompose: undefined } })),
      search: await settle(rag.search('Acme', { k: undefined, mode: undefined })),
      badEnum: await settle(rag.ask('q', { llm: cfg, options: { preset: 'search', answer: { minConfidence: 'sure' } } })),
      badPreset: await settle(rag.ask('q', { llm: cfg, options: { preset: 'chat' } })),
      badType: await settle(rag.search('Acme', { k: 'ten' })),
      badStep: await settle(rag.ask('q', { llm: cfg, options: { preset: 'search', steps: { answer: 'yes' } } })),
    };
  }, { baseUrl: `${llmUrl}/v1`, model: 'scripted', timeoutMs: 5000, retries: 0 });
  assert.equal(r.ask.ok, true, JSON.stringify(r.ask));
  assert.equal(r.ask.v.context[0].title, 'Acme Corporation');
  assert.equal(r.search.ok, true, JSON.stringify(r.search));
  assert.equal(r.badEnum.code, 'INVALID_OPTION');
  assert.match(r.badEnum.message, /options\.answer\.minConfidence: unknown variant `sure`, expected one of `low`, `medium`, `high`/);
  assert.equal(r.badPreset.code, 'INVALID_OPTION');
  assert.match(r.badPreset.message, /options\.preset: unknown variant `chat`, expected one of .*`light`.*`L1`/);
  assert.equal(r.badType.code, 'INVALID_OPTION');
  assert.match(r.badType.message, /options\.k: /);
  assert.equal(r.badStep.code, 'INVALID_OPTION');
  assert.match(r.badStep.message, /steps\.answer/);
});

test('tags and metadata filter search and ask in the page; auto-tagging and forward summaries run from enrich', { timeout: 600_000 }, async () => {
  const page = await browser.ctx.newPage();
  await openDemo(page, `${server.url}/www/?kb=e2e-tags&empty&device=cpu`);
  await reset();
  await rules([
    { match: 'Task: tags', reply: json({ tags: ['Business', 'not in the list'] }) },
    { match: 'Task: forward summary', reply: json({ summary: 'Acme Corporation was founded by Jane Roe.' }) },
    { match: 'Task: answer', reply: { content: 'Lyon [S1].\nConfidence: high' } },
  ]);
  const r = await page.evaluate(async (cfg) => {
    const rag = window.webragDemo.rag;
    await rag.add([
      { id: 'acme', title: 'Acme Corporation', text: 'Acme Corporation was founded by Jane Roe in 1931.\n\nIt moved to Lyon in 1950.', format: 'text', tags: ['Companies'], meta: { year: '1931' } },
      { id: 'lyon', title: 'Lyon', text: 'Lyon is a city in France.', format: 'text', tags: ['places'], meta: undefined },
      { id: 'history', title: 'History', text: Array.from({ length: 40 }, (_, i) => `Paragraph ${i}: the company made anvils in Springfield for many years.`).join('\n\n'), format: 'text' },
    ]);
    const docs = async (hits) => [...new Set(hits.map((h) => h.docId))];
    const places = await docs(await rag.search('Acme founded city', { filter: { tags: ['PLACES'] } }));
    const byMeta = await docs(await rag.search('Acme founded city', { mode: 'dense', filter: { meta: { year: '1931' } } }));
    const report = await rag.enrich({ llm: cfg, tags: { vocabulary: ['business', 'travel'] }, forwardSummaries: true, atomize: false, mindMaps: false });
    const business = await docs(await rag.search('Lyon', { mode: 'bm25', filter: { tags: ['business'] } }));
    const scoped = await rag.ask('Who founded Acme?', { llm: cfg, options: { preset: 'light', filter: { docIds: ['lyon'] } } });
    const all = await rag.documents();
    return { places, byMeta, report, business, scopedDocs: scoped.context.map((c) => c.id), all, second: await rag.chunk('history#1') };
  }, { baseUrl: `${llmUrl}/v1`, model: 'scripted', timeoutMs: 5000, retries: 0 });
  assert.deepEqual(r.places, ['lyon']);
  assert.deepEqual(r.byMeta, ['acme']);
  assert.deepEqual(r.report.tags, { documents: 3, tags: 3, failed: [], remaining: 0 });
  assert.equal(r.report.atomize, null);
  assert.deepEqual(r.business.sort(), ['acme', 'lyon']);
  const acme = r.all.find((d) => d.id === 'acme');
  assert.deepEqual([acme.tags, acme.autoTags, acme.meta], [['companies'], ['business'], { year: '1931' }]);
  assert.ok(r.scopedDocs.every((id) => id.startsWith('lyon') || id === 'graph:1'), JSON.stringify(r.scopedDocs));
  assert.ok(r.report.forwardSummaries.chunks >= 1 && r.report.forwardSummaries.remaining === 0, JSON.stringify(r.report.forwardSummaries));
  assert.equal(r.second.forwardSummary, 'Acme Corporation was founded by Jane Roe.');
});

test('the page\'s web searcher: routing to the web answers from its results, with the configured headers; a failing searcher ends in "I don\'t know."', { timeout: 600_000 }, async () => {
  const page = await browser.ctx.newPage();
  await openDemo(page, `${server.url}/www/?kb=e2e-web&empty&device=cpu`);
  await reset();
  const steps = { trigger: false, rewrite: false, verify: false, filter: false, memory: false };
  const ask = (webSearch, answer) => page.evaluate(async ({ cfg, webSearch, steps, answer }) => {
    const rag = window.webragDemo.rag;
    if ((await rag.stats()).documents === 0) {
      await rag.add([{ id: 'acme', title: 'Acme Corporation', text: 'Acme Corporation was founded by Jane Roe in 1931.', format: 'text' }]);
    }
    const trace = [];
    const r = await rag.ask('What is Acme doing today?', { llm: cfg, options: { steps, webSearch }, onTrace: (e) => trace.push(e.step) });
    return { trace, answer: r.answer, context: r.context.map((c) => ({ id: c.id, via: c.via, title: c.title, text: c.text })), route: r.route, documents: (await rag.stats()).documents, answerIs: answer };
  }, { cfg: { baseUrl: `${llmUrl}/v1`, model: 'scripted', timeoutMs: 5000, retries: 0 }, webSearch, steps, answer });
  await script([{ content: '{"route": "web"}' }, { content: 'Acme opened an office in Lyon [S1].\nConfidence: high' }]);
  const ok = await ask({ url: `${llmUrl}/search`, headers: { 'x-api-key': 'secret-1' }, timeoutMs: 5000 });
  assert.deepEqual(ok.trace, ['route', 'web', 'answer'], JSON.stringify(ok));
  assert.equal(ok.route, 'web');
  assert.deepEqual([ok.context[0].id, ok.context[0].via, ok.context[0].title], ['web:1', 'web', 'Acme news <https://news.example/acme>'], JSON.stringify(ok.context));
  assert.match(ok.context[0].text, /opened an office in Lyon\. \(What is Acme doing today\?\)/);
  assert.equal(ok.answer.text, 'Acme opened an office in Lyon [S1].');
  assert.deepEqual(ok.answer.citations, ['web:1']);
  const searches = (await log()).filter((r) => r.search !== undefined);
  assert.equal(searches.length, 1);
  assert.equal(searches[0].search, 'What is Acme doing today?');
  assert.ok(searches[0].k >= 1, JSON.stringify(searches[0]));
  assert.equal(searches[0].headers['x-api-key'], 'secret-1', 'the configured headers reach the searcher');
  // A searcher that fails (an HTTP 500, an HTML page where JSON was expected) ends the question
  // in "I don't know." over the knowledge base, traced as a fallback; nothing stored is lost.
  for (const path of ['/search?status=500', '/search?notjson']) {
    await reset();
    await script([{ content: '{"route": "web"}' }]);
    const failed = await ask({ url: `${llmUrl}${path}`, timeoutMs: 5000 });
    assert.deepEqual(failed.trace, ['route', 'fallback'], `${path}: ${JSON.stringify(failed)}`);
    assert.equal(failed.answer.text, "I don't know.");
    assert.equal(failed.answer.known, false);
    assert.ok(failed.context.every((c) => c.via !== 'web') && failed.context.some((c) => c.id.startsWith('acme')), JSON.stringify(failed.context));
    assert.equal(failed.documents, 1);
  }
});

test('search runs while enrich waits on the model; a write waits for enrich and then commits', { timeout: 600_000 }, async () => {
  const page = await browser.ctx.newPage();
  await openDemo(page, `${server.url}/www/?kb=e2e-enrich-reads&empty&device=cpu`);
  await reset();
  // Each atomizing reply takes 1.5 s: enrich (one chunk per batch) waits on the model ~4.5 s.
  await rules([{ match: 'Task: atomize', reply: { ...json({ questions: ['Who founded Acme Corporation?'] }), delayMs: 1500 } }]);
  const r = await page.evaluate(async (cfg) => {
    const rag = window.webragDemo.rag;
    await rag.add([
      { id: 'acme', title: 'Acme Corporation', text: 'Acme Corporation was founded by Jane Roe in 1931.', format: 'text' },
      { id: 'roe', title: 'Jane Roe', text: 'Jane Roe was an engineer born in Lyon.', format: 'text' },
      { id: 'lyon', title: 'Lyon', text: 'Lyon is a city in France.', format: 'text' },
    ]);
    const order = [];
    const enrich = rag.enrich({ llm: cfg, atomize: { batch: 1 }, mindMaps: false, onProgress: (ev) => { if (ev.phase === 'atomize' && ev.done > 0) order.push(`atomized ${ev.done}`); } })
      .then((report) => { order.push('enrich'); return report; });
    const hits = await rag.search('founded');
    order.push('search');
    const stats = await rag.stats();
    order.push('stats');
    const add = rag.add([{ id: 'tea', title: 'Tea', text: 'Green tea is steamed soon after picking.', format: 'text' }]).then(() => order.push('add'));
    const [report] = await Promise.all([enrich, add]);
    return { order, hits: hits.map((h) => h.docId), chunks: stats.chunks, report, after: (await rag.stats()).chunks };
  }, { baseUrl: `${llmUrl}/v1`, model: 'scripted', timeoutMs: 10_000, retries: 0 });
  // The search and the stats answered before the first reply came back; the add waited for enrich.
  assert.deepEqual(r.order, ['search', 'stats', 'atomized 1', 'atomized 2', 'atomized 3', 'enrich', 'add'], JSON.stringify(r.order));
  assert.equal(r.hits[0], 'acme');
  assert.equal(r.chunks, 3);
  assert.deepEqual([r.report.atomize.chunks, r.report.atomize.questions, r.report.atomize.remaining], [3, 3, 0]);
  assert.equal(r.after, 4);
});
