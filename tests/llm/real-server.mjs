// webrag against a real OpenAI-compatible server (`./webrag.sh llm-real`; opt-in, not in CI):
// llama.cpp's server from `llama-cpp-python[server]` with a GGUF model, behind a recording proxy
// on 127.0.0.1 that classifies every LLM call. Over 30 HotpotQA passages it runs, natively (the
// `webrag` binary) and in the page (headless Chromium, the worker), `enrich` (atomizing + LLM mind
// maps), `decompose` and `ask` (presets ask and search) for three questions, then prints how the
// calls ended — JSON read at once, read after one repair request, unreadable after the repair
// (the step's fallback, or a typed error), free text (the answer) — and how each operation ended
// (ok, or its error code). Nothing may crash or hang: every operation has a deadline.
// Options: --passages N (30), --questions N (3), --max-tokens N (256), --timeout-ms N (300000),
// --threads N (the server's threads; every core), --only native|page (both), --chat-format F
// (gemma for a Gemma file, else none: see CHAT_FORMAT).
// With --presets search,light,L1,L2,L3,L4,ask it runs, in the page only, `ask` under each preset
// for every question (`--questions 20`) and prints per preset the seconds and LLM calls per
// question and how each question ended (an answer, "I don't know." — the low-confidence
// fallback — or an error code).
// With --answers (and --answer-questions N, 30; --presets light by default here) it runs only
// `webrag eval --answers` through the proxy: the answer benchmark of docs/benchmarks.md ("Answers
// with a real model"), the pipeline's answers under each preset against a naive
// retrieve-then-read baseline with the same model, on HotpotQA and MuSiQue (`--dataset` for one).
// With --forward-summaries (alone or with --answers) the eval first measures every retriever,
// then writes forward summaries with the model and measures them again (`webrag eval
// --forward-summaries`): docs/benchmarks.md, "Forward summaries".
// With --tags (and --answers) the model first tags every passage, then each preset is scored also
// with query-side tagging on (`webrag eval --tags`): docs/benchmarks.md, "Query-side tagging".
// --eval-questions N passes `--questions N` to the eval: the first N questions of each set over
// their own passages only (a smaller pool: fewer passages to tag).
//
//   node tests/llm/real-server.mjs --python target/llm-venv/bin/python --model target/llm/SmolLM2-135M-Instruct.Q4_1.gguf
import { spawn, execFile } from 'node:child_process';
import { createServer, request } from 'node:http';
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { ROOT, SHARED, startServer, launch } from '../e2e/harness.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const PYTHON = opt('--python', join(ROOT, 'target/llm-venv/bin/python'));
const MODEL = opt('--model', join(ROOT, 'target/llm/SmolLM2-135M-Instruct.Q4_1.gguf'));
const LLM_PORT = Number(opt('--port', 18181));
const PROXY_PORT = LLM_PORT + 1;
const PASSAGES = Number(opt('--passages', 30));
const QUESTIONS = Number(opt('--questions', 3));
// A small model on a CPU is slow and rambles: replies are capped, and a call may take minutes.
const MAX_TOKENS = Number(opt('--max-tokens', 256));
const TIMEOUT_MS = Number(opt('--timeout-ms', 300_000));
// llama-cpp-python generates on half the cores unless told: a small model is faster on all of them.
const THREADS = Number(opt('--threads', availableParallelism()));
// `--answers` and `--forward-summaries` run `webrag eval` through the proxy (either or both).
const FORWARD = args.includes('--forward-summaries');
const TAGS = args.includes('--tags');
const ANSWERS = args.includes('--answers') || FORWARD || TAGS;
// Every operation's deadline: 20 minutes, or 3 hours for the one `webrag eval` of --answers (a
// 1.5B model on 2 cores answers 30 questions of both sets in about 30 minutes).
const DEADLINE_MS = Number(opt('--deadline-ms', (ANSWERS ? 180 : 20) * 60_000));
// The chat template: a GGUF without one (the Gemma 3 270M file) falls back to a Llama-2-style
// prompt. `--chat-format gemma` (the default for a model file named gemma) uses Gemma's turns,
// and since llama-cpp-python's `gemma` format drops system messages, the proxy joins them to the
// first user turn, as Gemma 3's own template does (../shared/llm/README.md). `--chat-format none`
// keeps the server's fallback.
const CHAT_FORMAT = opt('--chat-format', /gemma/i.test(MODEL) ? 'gemma' : 'none');
const MERGE_SYSTEM = CHAT_FORMAT === 'gemma';
const PRESETS = ANSWERS ? [] : opt('--presets', '').split(',').filter(Boolean);
const ONLY = PRESETS.length ? 'page' : opt('--only', 'both'); // native, page or both
const LLM_FLAGS = ['--llm-model', 'local', '--llm-timeout-ms', String(TIMEOUT_MS), '--llm-max-tokens', String(MAX_TOKENS)];
const WORK = join(ROOT, 'target/llm-real');
const BIN = join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'release/webrag');

// ---- the last JSON object of a reply (as src/llm/json.rs reads it) ----
function hasJsonObject(text) {
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1)) {
    for (let j = text.indexOf('}', i); j >= 0; j = text.indexOf('}', j + 1)) {
      try { const v = JSON.parse(text.slice(i, j + 1)); if (v && typeof v === 'object' && !Array.isArray(v)) return true; } catch { /* longer */ }
    }
  }
  return false;
}

// ---- the recording proxy ----
const calls = [];
let phase = 'setup';
function classify(body, reply) {
  const msgs = body?.messages ?? [];
  const user = [...msgs].reverse().find((m) => m.role === 'user')?.content ?? '';
  const repair = user.startsWith('Your reply could not be used');
  const task = /^Task: ([^\n]+)/m.exec(msgs.filter((m) => m.role === 'user').map((m) => m.content).join('\n'))?.[1] ?? (msgs.length <= 2 ? 'chat' : 'other');
  const free = /^answer/.test(task) || task === 'chat';
  const kind = free ? 'free text' : repair ? (hasJsonObject(reply) ? 'read after repair' : 'unreadable after repair') : (hasJsonObject(reply) ? 'JSON at once' : 'needed a repair');
  return { task, kind };
}
function sseText(raw) {
  let text = '';
  for (const line of raw.split('\n')) {
    const d = line.startsWith('data:') ? line.slice(5).trim() : null;
    if (!d || d === '[DONE]') continue;
    try { text += JSON.parse(d).choices?.[0]?.delta?.content ?? ''; } catch { /* not JSON */ }
  }
  return text;
}
const proxy = createServer((req, res) => {
  const cors = { 'Access-Control-Allow-Origin': req.headers.origin ?? '*', 'Access-Control-Allow-Headers': '*', 'Access-Control-Allow-Methods': 'GET, POST, OPTIONS' };
  if (req.method === 'OPTIONS') { res.writeHead(204, cors).end(); return; }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body = Buffer.concat(chunks);
    let parsed = null;
    try { parsed = JSON.parse(body.toString('utf8')); } catch { /* forwarded as is */ }
    if (MERGE_SYSTEM && Array.isArray(parsed?.messages) && parsed.messages.some((m) => m.role === 'system')) {
      const system = parsed.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n');
      const rest = parsed.messages.filter((m) => m.role !== 'system');
      const first = rest.findIndex((m) => m.role === 'user');
      if (first >= 0) rest[first] = { ...rest[first], content: `${system}\n\n${rest[first].content}` };
      else rest.unshift({ role: 'user', content: system });
      body = Buffer.from(JSON.stringify({ ...parsed, messages: rest }));
      req.headers['content-length'] = String(body.length);
    }
    const up = request({ host: '127.0.0.1', port: LLM_PORT, path: req.url, method: req.method, headers: { ...req.headers, host: `127.0.0.1:${LLM_PORT}` } }, (ur) => {
      // The server's own CORS headers are replaced by ours (two Access-Control-Allow-Origin
      // values make the browser refuse the response).
      const headers = Object.fromEntries(Object.entries(ur.headers).filter(([k]) => !k.startsWith('access-control-')));
      res.writeHead(ur.statusCode, { ...headers, ...Object.fromEntries(Object.entries(cors).map(([k, v]) => [k.toLowerCase(), v])) });
      const out = [];
      ur.on('data', (c) => { out.push(c); res.write(c); });
      ur.on('end', () => {
        res.end();
        if (req.url.endsWith('/chat/completions')) {
          const raw = Buffer.concat(out).toString('utf8');
          const reply = parsed?.stream ? sseText(raw) : (() => { try { return JSON.parse(raw).choices?.[0]?.message?.content ?? ''; } catch { return ''; } })();
          calls.push({ phase, status: ur.statusCode, ...classify(parsed, reply) });
          // Every exchange, for reading what the model made of a prompt: target/llm-real/calls.jsonl.
          const asked = (parsed?.messages ?? []).filter((m) => m.role === 'user').at(-1)?.content ?? '';
          appendFileSync(join(WORK, 'calls.jsonl'), `${JSON.stringify({ phase, status: ur.statusCode, prompt: asked, reply })}\n`);
        }
      });
    });
    up.on('error', (e) => { res.writeHead(502, cors).end(String(e)); calls.push({ phase, status: 502, task: 'transport', kind: 'transport error' }); });
    up.end(body);
  });
});

// ---- helpers ----
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ops = [];
const presetRuns = [];
async function timed(name, f) {
  const t0 = performance.now();
  let outcome;
  try {
    outcome = await Promise.race([f().then(() => 'ok'), sleep(DEADLINE_MS).then(() => 'HUNG')]);
  } catch (e) {
    outcome = e?.code ?? `untyped: ${e?.message ?? e}`;
  }
  ops.push({ phase, name, outcome, s: ((performance.now() - t0) / 1000).toFixed(0) });
  console.error(`[${phase}] ${name}: ${outcome} (${ops.at(-1).s} s)`);
}
function run(cmd, argv, onStderr = () => {}) {
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { cwd: ROOT, maxBuffer: 64 << 20, timeout: DEADLINE_MS }, (err, stdout, stderr) => {
      onStderr(stderr);
      if (!err) return resolve(stdout);
      const code = /error \[([A-Z_]+)\]/.exec(stderr)?.[1];
      reject(Object.assign(new Error(stderr.slice(-500)), { code: code ?? (err.killed ? 'HUNG' : `exit ${err.code}`) }));
    });
  });
}

// ---- main ----
// On a CPU that advertises AMX, llama.cpp's repacked weights run AMX tiles, which a process (or a
// VM) may not be allowed to use: the server then dies on its first completion with a general
// protection fault (../shared/llm/README.md, point 1). There, the launcher loads the model
// without the extra buffer types (`use_extra_bufts = False`); elsewhere it changes nothing.
const AMX = (() => { try { return /\bamx_tile\b/.test(readFileSync('/proc/cpuinfo', 'utf8')); } catch { return false; } })();
const LAUNCHER = `import sys
import llama_cpp.llama_cpp as c
if ${AMX ? 'True' : 'False'}:
    default = c.llama_model_default_params
    def params():
        p = default()
        p.use_extra_bufts = False
        return p
    c.llama_model_default_params = params
from llama_cpp.server.__main__ import main
sys.argv[0] = 'llama_cpp.server'
main()`;
const server = spawn(PYTHON, ['-c', LAUNCHER, '--model', MODEL, '--host', '127.0.0.1', '--port', String(LLM_PORT), '--n_ctx', '8192', '--n_threads', String(THREADS), '--n_threads_batch', String(THREADS), '--model_alias', 'local', ...(CHAT_FORMAT !== 'none' ? ['--chat_format', CHAT_FORMAT] : [])], { stdio: ['ignore', 'ignore', 'pipe'] });
let serverLog = '';
mkdirSync(WORK, { recursive: true });
rmSync(join(WORK, 'calls.jsonl'), { force: true });
server.stderr.on('data', (d) => { serverLog = (serverLog + d).slice(-4000); });
const cleanup = () => { try { server.kill(); } catch { /* gone */ } };
process.on('exit', cleanup);
try {
  for (let i = 0; ; i++) {
    try { if ((await fetch(`http://127.0.0.1:${LLM_PORT}/v1/models`)).ok) break; } catch { /* starting */ }
    if (i > 300 || server.exitCode !== null) throw new Error(`the LLM server did not start:\n${serverLog}`);
    await sleep(1000);
  }
  await new Promise((r) => proxy.listen(PROXY_PORT, '127.0.0.1', r));
  const LLM_URL = `http://127.0.0.1:${PROXY_PORT}/v1`;
  const llm = { baseUrl: LLM_URL, model: 'local', timeoutMs: TIMEOUT_MS, maxTokens: MAX_TOKENS };
  if (ANSWERS) {
    phase = 'answers';
    mkdirSync(WORK, { recursive: true });
    const argv = ['eval', ...(args.includes('--answers') ? ['--answers'] : []), ...(FORWARD ? ['--forward-summaries'] : []), ...(TAGS ? ['--tags'] : []),
      ...(args.includes('--eval-questions') ? ['--questions', opt('--eval-questions')] : []), '--llm-url', LLM_URL, ...LLM_FLAGS, '--presets', opt('--presets', 'light'),
      '--answer-questions', opt('--answer-questions', '30'), '--cache', join(WORK, 'evalcache'), '--json', join(WORK, 'answers.json'),
      '--data', join(SHARED, 'data'), ...(args.includes('--dataset') ? ['--dataset', opt('--dataset')] : [])];
    console.error(`webrag ${argv.join(' ')}`);
    const out = await run(BIN, argv, (stderr) => {
      // How many forward summaries the model wrote (`<set>: N forward summaries (K unreadable)`).
      for (const line of stderr.split('\n')) if (line.includes('forward summaries (') || line.includes(' passages tagged now (')) console.log(line);
    });
    // The retrieval table (with `--forward-summaries` rows) and the answers table.
    console.log(FORWARD ? out : out.slice(out.indexOf('Answers with a real model')));
    const free = calls.filter((c) => c.phase === 'answers');
    console.log(`
${free.length} LLM calls through the proxy; HTTP statuses: ${JSON.stringify(Object.fromEntries([...new Set(free.map((c) => c.status))].map((s) => [s, free.filter((c) => c.status === s).length])))}`);
    process.exit(0);
  }

  // 30 passages of HotpotQA's train100 (the contexts of the first questions), 3 questions.
  const data = JSON.parse(readFileSync(join(SHARED, 'data/hotpotqa/train100.json'), 'utf8'));
  const passages = new Map();
  for (const q of data) for (const [title, sents] of q.context) if (passages.size < PASSAGES && !passages.has(title)) passages.set(title, sents.join(''));
  const questions = data.slice(0, QUESTIONS).map((q) => q.question);
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(join(WORK, 'docs'), { recursive: true });
  const files = [...passages].map(([title, text], i) => {
    const f = join(WORK, 'docs', `${String(i).padStart(2, '0')}.md`);
    writeFileSync(f, `# ${title}\n\n${text}\n`);
    return f;
  });
  const db = join(WORK, 'kb.json');

  phase = 'native';
  if (ONLY !== 'page') await run(BIN, ['index', ...files, '--db', db]);
  if (ONLY !== 'page') await timed('enrich', () => run(BIN, ['enrich', '--llm-url', LLM_URL, ...LLM_FLAGS, '--db', db]));
  for (const [i, q] of (ONLY !== 'page' ? questions : []).entries()) {
    await timed(`decompose q${i + 1}`, () => run(BIN, ['ask', q, '--decompose', '--llm-url', LLM_URL, ...LLM_FLAGS, '--db', db]));
    await timed(`ask q${i + 1}`, () => run(BIN, ['ask', q, '--preset', 'ask', '--llm-url', LLM_URL, ...LLM_FLAGS, '--db', db]));
    await timed(`search q${i + 1}`, () => run(BIN, ['ask', q, '--preset', 'search', '--llm-url', LLM_URL, ...LLM_FLAGS, '--db', db]));
  }

  if (ONLY !== 'native') {
    phase = 'page';
    const web = await startServer(PROXY_PORT + 1);
    const browser = await launch({ webgpu: false });
    try {
      const page = await browser.ctx.newPage();
      page.on('pageerror', (e) => console.error('pageerror:', e.message));
      await page.goto(`${web.url}/www/style.css`);
      await page.evaluate(async ({ docs }) => {
        const { WebRag } = await import('/pkg/index.js');
        window.rag = await WebRag.open({ name: 'llm-real', model: '/.models/all-MiniLM-L6-v2/', device: 'cpu' });
        await window.rag.add(docs);
      }, { docs: [...passages].map(([title, text], i) => ({ id: `${i}.md`, text: `# ${title}\n\n${text}` })) });
      const inPage = (name, body) => timed(name, () => page.evaluate(body, { llm, questions }).then((r) => { if (r) throw Object.assign(new Error(r.message), { code: r.code }); }));
      const wrap = (expr) => new Function('a', `return (async () => { try { ${expr}; return null; } catch (e) { return { code: e.code ?? e.name, message: e.message }; } })();`);
      for (const preset of PRESETS) {
        phase = preset;
        for (let i = 0; i < questions.length; i++) {
          const t0 = performance.now();
          const before = calls.length;
          let outcome;
          try {
            outcome = await Promise.race([
              page.evaluate(async ({ llm: l, q, p }) => {
                try {
                  const r = await window.rag.ask(q, { llm: l, options: { preset: p, steps: { memory: false, trigger: false } } });
                  return r.answer === null ? 'context only' : r.answer.known ? 'answer' : "I don't know";
                } catch (e) { return `error ${e.code ?? e.name}`; }
              }, { llm, q: questions[i], p: preset }),
              sleep(DEADLINE_MS).then(() => 'HUNG'),
            ]);
          } catch (e) { outcome = `untyped: ${e.message}`; }
          presetRuns.push({ preset, q: i, outcome, s: (performance.now() - t0) / 1000, calls: calls.length - before });
          console.error(`[${preset}] q${i + 1}: ${outcome} (${presetRuns.at(-1).s.toFixed(0)} s, ${presetRuns.at(-1).calls} calls)`);
        }
      }
      if (!PRESETS.length) await inPage('enrich', wrap('await window.rag.enrich({ llm: a.llm })'));
      for (let i = 0; i < (PRESETS.length ? 0 : questions.length); i++) {
        await inPage(`decompose q${i + 1}`, wrap(`await window.rag.decompose(a.questions[${i}], { llm: a.llm })`));
        await inPage(`ask q${i + 1}`, wrap(`await window.rag.ask(a.questions[${i}], { llm: a.llm, options: { preset: 'ask' } })`));
        await inPage(`search q${i + 1}`, wrap(`await window.rag.ask(a.questions[${i}], { llm: a.llm, options: { preset: 'search' } })`));
      }
    } finally {
      await browser.close();
      web.stop();
    }
  }

  // ---- the figures ----
  const kinds = ['JSON at once', 'needed a repair', 'read after repair', 'unreadable after repair', 'free text', 'transport error'];
  console.log(`\nwebrag against llama.cpp's server (llama-cpp-python 0.3.36) with ${MODEL.split('/').at(-1)}, ${new Date().toISOString().slice(0, 10)}`);
  console.log(`\n| where | LLM calls | ${kinds.join(' | ')} |\n|---|---|${kinds.map(() => '---').join('|')}|`);
  for (const p of [...new Set(calls.map((x) => x.phase))].filter((p) => p !== 'setup')) {
    const c = calls.filter((x) => x.phase === p);
    console.log(`| ${p} | ${c.length} | ${kinds.map((k) => c.filter((x) => x.kind === k).length).join(' | ')} |`);
  }
  if (PRESETS.length) {
    const outcomes = [...new Set(presetRuns.map((r) => r.outcome))].sort();
    console.log(`\n| preset | questions | seconds / question (mean, max) | LLM calls / question (mean, max) | ${outcomes.join(' | ')} |\n|---|---|---|---|${outcomes.map(() => '---').join('|')}|`);
    for (const p of PRESETS) {
      const rs = presetRuns.filter((r) => r.preset === p);
      const mean = (f) => rs.reduce((a, r) => a + f(r), 0) / Math.max(1, rs.length);
      const max = (f) => Math.max(0, ...rs.map(f));
      console.log(`| ${p} | ${rs.length} | ${mean((r) => r.s).toFixed(1)}, ${max((r) => r.s).toFixed(0)} | ${mean((r) => r.calls).toFixed(1)}, ${max((r) => r.calls)} | ${outcomes.map((o) => rs.filter((r) => r.outcome === o).length).join(' | ')} |`);
    }
    const failed = presetRuns.filter((r) => r.outcome.startsWith('error') || r.outcome === 'HUNG' || r.outcome.startsWith('untyped'));
    console.log(`\n${presetRuns.length} questions asked: ${presetRuns.length - failed.length} ended in an answer, "I don't know." or the context; ${failed.length} in an error`);
    process.exitCode = failed.length ? 1 : 0;
  }
  console.log('\n| where | operation | outcome | seconds |\n|---|---|---|---|');
  for (const o of ops) console.log(`| ${o.phase} | ${o.name} | ${o.outcome} | ${o.s} |`);
  const bad = ops.filter((o) => o.outcome === 'HUNG' || o.outcome.startsWith('untyped'));
  console.log(`\n${ops.length} operations: ${ops.filter((o) => o.outcome === 'ok').length} ok, ${ops.length - bad.length - ops.filter((o) => o.outcome === 'ok').length} typed errors, ${bad.length} hung or untyped`);
  if (bad.length) process.exitCode = 1;
} finally {
  proxy.close();
  cleanup();
}
