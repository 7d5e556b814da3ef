// A scripted OpenAI-compatible chat server for tests (it stands for a remote LLM endpoint, which
// these machines cannot reach). Real HTTP on 127.0.0.1; speaks POST /v1/chat/completions, plain
// and streamed (server-sent events), with CORS so a page on another port can call it.
//
//   node tests/llm/server.mjs [--port 0]      prints "LISTENING <port>" once ready
//
// Control endpoints (tests drive the server with them):
//   POST /__script  [reply, ...]   queue replies, used in order by the next chat requests
//   POST /__reset                  empty the queue, the rules, the log and the switches
//   POST /__config {rejectResponseFormat?}
//                                  switches: a 400 naming `response_format` to any request asking for it
//                                  (true), or to those asking in the forms listed ("json_schema",
//                                  "json_object+schema", "json_object"); rejectStatus: its HTTP
//                                  status (400; llama-cpp-python's server answers 500)
//   GET  /__log                    the chat requests received: [{at, auth, headers, body}]
//   POST /search {query, k}        a web-search endpoint: one result naming the query (/search?hang: never answers;
//                                  /search?flood=N: a reply of N bytes; /search?status=N: that HTTP status;
//                                  /search?notjson: a 200 whose body is an HTML page)
//   POST /__rules [{match, reply, times?}, ...]
//                                  when the queue is empty, the first rule whose `match` occurs in
//                                  the last user message answers (`times`: how often, default
//                                  always); for requests sent concurrently, where order is not fixed
//
// `fillLabels`: a knowledge-filter reply with one label per source of the prompt (a label, or an
// array: the first sources take its labels in order, the later ones its last).
// `questionsFrom: n`: an atomizing reply whose questions are the first `n` sentences of the
// prompt's passage (`Passage: <data>…</data>`), so that each chunk gets questions of its own.
// A reply: {status, headers, content, message, deltas, body, stream: [pieces], delayMs,
// tokenDelayMs, truncate, reset, hang, fillLabels, questionsFrom, flood}. `message` is the completion's message
// object as given (`{content: null, reasoning_content: "..."}`, say; streamed: one delta);
// `deltas` the stream's delta objects as given. `flood: {bytes, as}` sends `bytes` of filler (-1: without end),
// written as the client reads and stopped when it hangs up: `as: 'body'` a JSON body that never
// closes (with `status`), `'line'` one server-sent event line that never ends, `'events'` valid
// content events of "x". `content` becomes a normal completion (or, when the request asks to stream and no
// `stream` is given, one event per word); `body` is sent as is (malformed JSON, say); `status`
// other than 200 sends `body` (default an OpenAI-style error) with `headers` (Retry-After, say);
// `stream` sends each piece as one event, `tokenDelayMs` apart; `truncate` ends the stream
// without a finish reason or [DONE]; `reset` drops the connection after the pieces; `hang` never answers; `delayMs` waits before the head.
// With nothing queued the reply is `{"echo": <last user message>}` as JSON content.
import http from 'node:http';

const args = process.argv.slice(2);
const port = Number(args[args.indexOf('--port') + 1] || 0) || 0;
let queue = [];
let rules = [];
// Server switches (POST /__config): `rejectResponseFormat` answers a request that asks for JSON
// output (`response_format`) with a 400 naming it, as servers without JSON mode do: any such
// request (true) or those in the listed forms (servers without schemas, or with another form).
let config = {};
let log = [];

const cors = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': '*',
  'access-control-allow-methods': 'POST, GET, OPTIONS',
  'access-control-expose-headers': 'retry-after',
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const readBody = (req) => new Promise((resolve) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
});
const completion = (model, content) => JSON.stringify({
  id: 'chatcmpl-test', object: 'chat.completion', created: 0, model,
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
});
const event = (model, delta, finish = null) => `data: ${JSON.stringify({
  id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 0, model,
  choices: [{ index: 0, delta, finish_reason: finish }],
})}\n\n`;

// Writes `head`, then pieces of `piece()` until `bytes` are sent (-1: until the client hangs up),
// waiting for the socket to drain so the server never buffers more than the client has read.
const flood = (res, status, type, head, piece, bytes) => {
  res.writeHead(status, { ...cors, 'content-type': type });
  res.write(head);
  let sent = head.length;
  const more = () => {
    while (!res.destroyed && (bytes < 0 || sent < bytes)) {
      const p = piece();
      sent += p.length;
      if (!res.write(p)) { res.once('drain', more); return; }
    }
    if (!res.destroyed) res.end();
  };
  res.on('close', () => res.destroy());
  more();
};

const server = http.createServer(async (req, res) => {
  if (req.method === 'OPTIONS') { res.writeHead(204, cors); res.end(); return; }
  const url = new URL(req.url, 'http://x');
  const text = await readBody(req);
  if (url.pathname === '/__script') { queue.push(...JSON.parse(text)); res.writeHead(200, cors); res.end('{}'); return; }
  if (url.pathname === '/__rules') { rules.push(...JSON.parse(text)); res.writeHead(200, cors); res.end('{}'); return; }
  if (url.pathname === '/__config') { config = { ...config, ...JSON.parse(text) }; res.writeHead(200, cors); res.end('{}'); return; }
  if (url.pathname === '/__reset') { queue = []; rules = []; log = []; config = {}; res.writeHead(200, cors); res.end('{}'); return; }
  if (url.pathname === '/__log') { res.writeHead(200, { ...cors, 'content-type': 'application/json' }); res.end(JSON.stringify(log)); return; }
  // A web-search endpoint for domain routing: {query, k} → {results: [{title, url, text}]}.
  if (url.pathname === '/search' && req.method === 'POST') {
    const { query, k } = JSON.parse(text || '{}');
    log.push({ at: Date.now(), search: query, k, headers: req.headers });
    if (url.searchParams.has('hang')) return; // never answers: the searcher's timeout must end it
    if (url.searchParams.has('flood')) { flood(res, 200, 'application/json', '{"results": [{"title": "', () => 'x'.repeat(65536), Number(url.searchParams.get('flood'))); return; }
    if (url.searchParams.has('status')) { res.writeHead(Number(url.searchParams.get('status')), { ...cors, 'content-type': 'text/plain' }); res.end('search is down'); return; }
    if (url.searchParams.has('notjson')) { res.writeHead(200, { ...cors, 'content-type': 'text/html' }); res.end('<!doctype html><title>Sign in</title><p>Please sign in.</p>'); return; }
    res.writeHead(200, { ...cors, 'content-type': 'application/json' });
    res.end(JSON.stringify({ results: [{ title: 'Acme news', url: 'https://news.example/acme', text: `Today: Acme Corporation opened an office in Lyon. (${query})` }] }));
    return;
  }
  if (!url.pathname.endsWith('/chat/completions') || req.method !== 'POST') { res.writeHead(404, cors); res.end('{"error":{"message":"not found"}}'); return; }
  let body;
  try { body = JSON.parse(text); } catch { res.writeHead(400, cors); res.end('{"error":{"message":"request body is not JSON"}}'); return; }
  const headers = { ...req.headers };
  const auth = headers.authorization || null;
  delete headers.authorization;
  log.push({ at: Date.now(), auth, headers, body });
  const rf = body.response_format;
  const form = !rf ? null : rf.type === 'json_schema' ? 'json_schema' : rf.schema ? 'json_object+schema' : 'json_object';
  const refused = config.rejectResponseFormat === true || (Array.isArray(config.rejectResponseFormat) && config.rejectResponseFormat.includes(form));
  if (form && refused) {
    res.writeHead(config.rejectStatus ?? 400, { ...cors, 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: "Unrecognized request argument supplied: response_format", type: 'invalid_request_error' } }));
    return;
  }
  const lastUser = [...(body.messages || [])].reverse().find((m) => m.role === 'user')?.content ?? '';
  const rule = queue.length ? null : rules.find((r) => lastUser.includes(r.match) && (r.times === undefined || r.times > 0));
  if (rule && rule.times !== undefined) rule.times -= 1;
  let reply = queue.shift() ?? rule?.reply ?? {
    content: JSON.stringify({ echo: [...(body.messages || [])].reverse().find((m) => m.role === 'user')?.content ?? '' }),
  };
  // `fillLabels`: a knowledge-filter reply with one label per source of the prompt (a line `[n] ...`).
  // An array gives the first sources its labels in order, and every later one its last label.
  if (reply.fillLabels) {
    const n = (lastUser.match(/^\[\d+\] /gm) ?? []).length;
    const given = [reply.fillLabels].flat();
    reply = { ...reply, content: JSON.stringify({ labels: Array.from({ length: n }, (_, i) => given[Math.min(i, given.length - 1)]) }) };
  }
  if (reply.questionsFrom) {
    const passage = /Passage: <data>([\s\S]*?)<\/data>/.exec(lastUser)?.[1] ?? '';
    const sentences = passage.split(/(?<=[。！？.!?])\s*/).map((x) => x.trim()).filter(Boolean);
    reply = { ...reply, content: JSON.stringify({ questions: sentences.slice(0, reply.questionsFrom) }) };
  }
  if (reply.hang) return; // never answers; the client's timeout must end it
  if (reply.flood) {
    const { bytes, as } = reply.flood;
    if (as === 'body') flood(res, reply.status ?? 200, 'application/json', '{"error": {"message": "', () => 'x'.repeat(65536), bytes);
    else if (as === 'line') flood(res, 200, 'text/event-stream', 'data: {"choices": [{"delta": {"content": "', () => 'x'.repeat(65536), bytes);
    else flood(res, 200, 'text/event-stream', '', () => event(body.model, { content: 'x' }).repeat(256), bytes);
    return;
  }
  if (reply.delayMs) await sleep(reply.delayMs);
  const status = reply.status ?? 200;
  if (status !== 200) {
    res.writeHead(status, { ...cors, 'content-type': 'application/json', ...(reply.headers || {}) });
    res.end(reply.body ?? JSON.stringify({ error: { message: `scripted ${status}`, type: 'scripted' } }));
    return;
  }
  if (reply.body !== undefined) {
    res.writeHead(200, { ...cors, 'content-type': 'application/json', ...(reply.headers || {}) });
    res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
    return;
  }
  if (!body.stream) {
    res.writeHead(200, { ...cors, 'content-type': 'application/json' });
    res.end(reply.message ? JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion', created: 0, model: body.model, choices: [{ index: 0, message: { role: 'assistant', ...reply.message }, finish_reason: 'stop' }] }) : completion(body.model, reply.content ?? ''));
    return;
  }
  res.writeHead(200, { ...cors, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const pieces = reply.stream ?? (reply.content ?? '').split(/(?<= )/);
  const deltas = reply.deltas ?? (reply.message ? [reply.message] : pieces.map((p) => ({ content: p })));
  res.write(event(body.model, { role: 'assistant' }));
  for (const d of deltas) {
    if (reply.tokenDelayMs) await sleep(reply.tokenDelayMs);
    if (res.destroyed) return;
    res.write(event(body.model, d));
  }
  if (reply.truncate) { res.end(); return; } // a clean end, but no finish reason and no [DONE]
  if (reply.reset) { res.write('', () => res.socket.destroy()); return; } // the connection drops mid-stream
  res.write(event(body.model, {}, 'stop'));
  res.end('data: [DONE]\n\n');
});

server.listen(port, '127.0.0.1', () => {
  console.log(`LISTENING ${server.address().port}`);
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { server.close(); process.exit(0); });
