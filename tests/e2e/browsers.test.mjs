// The core browser paths in every browser engine people use: Chromium (playwright-core), Firefox
// ESR (geckodriver) and WebKitGTK, the engine of Safari (WebKitWebDriver driving MiniBrowser under
// Xvfb); `./webrag.sh setup` installs all three. Each engine runs tests/e2e/core-cases.js: open a
// knowledge base, add, search in every mode, embed with int8 arithmetic, reload the page and open it again from IndexedDB
// (with the full engine, then the search build), export and import it, webrag/static's keyword and semantic search; then the demo's first screen.
// Chromium runs it twice: the build feature detection picks (relaxed SIMD) and the baseline build
// forced (`cpuKernels: 'simd128'`). Where an engine lacks a feature the fallback is what is
// checked: the baseline build where relaxed SIMD is missing, the CPU path without WebGPU.
// Each engine then runs tests/e2e/xss-cases.js (issue 63: content is data): the search box under
// a strict Content-Security-Policy, webrag/static, the static-site demo and the notes demo (its
// answer from the scripted model server) over payloads in a real site's titles, headings, text and
// file names, in notes and in the model's answer.
// Firefox and WebKitGTK then run STRESS_ROUNDS rounds of open, add, search, close on one base
// (issue 64: a WebKitGTK run once ended in an out-of-bounds memory access on reopen): 25 in the
// suite, 200 with `./webrag.sh stress`.
// Prints one table: the cases × the engines.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Builder } from 'selenium-webdriver';
import firefox from 'selenium-webdriver/firefox.js';
import { ROOT, startServer, launch, cli } from './harness.mjs';
import { DOCS, QUERIES, MODES, MARKUP_DOCS, MARKUP_HITS } from './core-data.js';

const SITE = join(ROOT, 'target/core-site');
const SNAPSHOT = '/target/core-site/webrag/';
// ./webrag.sh setup puts it in .tools/ (an older setup: ~/.cargo/bin).
const GECKODRIVER = process.env.GECKODRIVER ?? [join(ROOT, '.tools/geckodriver'), join(homedir(), '.cargo/bin/geckodriver')].find(existsSync) ?? join(ROOT, '.tools/geckodriver');
const FIREFOX = process.env.FIREFOX ?? '/usr/bin/firefox-esr';
const WEBKIT_DRIVER = process.env.WEBKIT_DRIVER ?? '/usr/bin/WebKitWebDriver';
const MINIBROWSER = process.env.MINIBROWSER ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
const TIMEOUT_MS = 600_000;

// A site whose titles, headings, text and file names carry the classic payloads, as text (escaped
// in the page source, so the builder reads them as words) and as markup (which it drops).
const XSS_SITE = join(ROOT, 'target/xss-site');
const XSS_SNAPSHOT = '/target/xss-site/webrag/';
const esc = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const xssPage = (title, heading, text) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head>
<body><main><h1>${esc(title)}</h1><p>${esc(text)}</p><h2>${esc(heading)}</h2><p>${esc(text)}</p><p>${text}</p></main></body></html>\n`;
const XSS_PAGES = {
  'owls.html': xssPage('Owls <img src=x onerror="window.__xss=\'title\'">', 'Night hunters <svg onload="window.__xss=\'heading\'">',
    'Owls hunt at night with silent flight. <script>window.__xss="body"</script> "><img src=x onerror=window.__xss="attr"> \' onmouseover=\'window.__xss="quote"'),
  '"><img src=x onerror=window.__xss=\'name\'>.html': xssPage('Herons', 'Waders <iframe srcdoc="<script>parent.__xss=1</script>">', 'Herons wade in shallow water.'),
  "javascript:window.__xss='url'.html": xssPage('Kingfishers javascript:alert(1)', 'Divers <a href="javascript:window.__xss=\'link\'">dive</a>',
    'Kingfishers dive for fish. <math><mtext><table><mglyph><style><img src=x onerror=window.__xss="math">'),
  '100% #sure?.html': xssPage('Gulls', 'Coasts', 'Gulls nest on the coast.'),
};
const XSS_QUERIES = ['owls', 'night hunters', 'herons waders', 'kingfishers', 'gulls', 'img onerror', 'javascript', 'svg onload script'];
// The search page of that site: a policy with no inline script or style, no eval (WebAssembly only:
// 'wasm-unsafe-eval', for the stemmer module), nothing from
// elsewhere (and Trusted Types where the engine has them: no HTML string reaches a sink).
const XSS_SEARCH_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; require-trusted-types-for 'script'">
<title>search</title></head><body><div id="search"></div>
<script type="module" src="/tests/e2e/xss-cases.js"></script><script type="module" src="webrag/webrag-ui.js"></script></body></html>\n`;

let server, llm, llmUrl;
const table = new Map(); // case → engine → 'pass' | 'FAIL: …'

before(async () => {
  // A four-page site of the documents the cases add, and its snapshot with the static tier.
  rmSync(SITE, { recursive: true, force: true });
  mkdirSync(SITE, { recursive: true });
  for (const d of DOCS) {
    const [title, ...rest] = d.text.replace(/^# /, '').split('\n\n');
    writeFileSync(join(SITE, `${d.id}.html`), `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1><p>${rest.join('</p><p>')}</p></main></body></html>\n`);
  }
  execFileSync(...cli(['index', SITE, '--out', join(SITE, 'webrag'), '--vectors', 'static',
    '--static-model', join(ROOT, 'pkg/model/webrag-static.wrs'), '--no-cache']), { cwd: ROOT, stdio: 'inherit' });
  rmSync(XSS_SITE, { recursive: true, force: true });
  mkdirSync(XSS_SITE, { recursive: true });
  for (const [name, html] of Object.entries(XSS_PAGES)) writeFileSync(join(XSS_SITE, name), html);
  execFileSync(...cli(['index', XSS_SITE, '--out', join(XSS_SITE, 'webrag'), '--vectors', 'static',
    '--static-model', join(ROOT, 'pkg/model/webrag-static.wrs'), '--no-cache']), { cwd: ROOT, stdio: 'inherit' });
  // As static-site.md says for the native CLI: the package's box beside the manifest.
  copyFileSync(join(ROOT, 'pkg/ui/webrag-ui.js'), join(XSS_SITE, 'webrag/webrag-ui.js'));
  // And its language's stemmer module (the pages are in English, stemmed), which the box compiles
  // under the policy ('wasm-unsafe-eval'; a refused compile would be a violation below).
  mkdirSync(join(XSS_SITE, 'webrag/stem'), { recursive: true });
  copyFileSync(join(ROOT, 'pkg/ui/stem/en.wasm'), join(XSS_SITE, 'webrag/stem/en.wasm'));
  writeFileSync(join(XSS_SITE, 'search.html'), XSS_SEARCH_PAGE);
  server = await startServer(24000 + Math.floor(Math.random() * 1000));
  llm = spawn(process.execPath, [join(ROOT, 'tests/llm/server.mjs'), '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  llmUrl = `http://127.0.0.1:${await new Promise((ok) => llm.stdout.on('data', (d) => { const m = /LISTENING (\d+)/.exec(String(d)); if (m) ok(m[1]); }))}`;
});
after(() => {
  server?.stop();
  llm?.kill();
  const engines = [...new Set([...table.values()].flatMap((m) => [...m.keys()]))];
  const rows = [`| case | ${engines.join(' | ')} |`, `|---|${engines.map(() => '---').join('|')}|`];
  for (const [name, m] of table) rows.push(`| ${name} | ${engines.map((e) => m.get(e) ?? '—').join(' | ')} |`);
  console.log(`\nthe core cases in each browser engine:\n${rows.join('\n')}\n`);
});

// One case of one engine: runs `check`, records pass or the failure in the table, rethrows.
async function record(engine, name, check) {
  if (!table.has(name)) table.set(name, new Map());
  try {
    await check();
    table.get(name).set(engine, 'pass');
  } catch (e) {
    table.get(name).set(engine, `FAIL: ${String(e.message).split('\n')[0].slice(0, 80)}`);
    throw e;
  }
}

// The cases, through `driver`: {goto(url), run(fn, args) → the page function's result, demoReady()}.
async function coreCases(engine, driver, { kernels, expectKernels, expectPath, xss = true }) {
  const failures = [];
  const attempt = async (name, f) => { try { await record(engine, name, f); } catch (e) { failures.push(`${name}: ${e.message}`); } };
  const want = Object.fromEntries(MODES.map((m) => [m, QUERIES.map(([, id]) => id)]));
  await driver.goto(`${server.url}/tests/e2e/core.html`);
  const w = await driver.run('write', { kernels });
  await attempt('open, add (the build detected or asked for)', () => {
    assert.equal(w.error, undefined, w.error);
    assert.equal(w.added, DOCS.length);
    assert.equal(w.cpuKernels, expectKernels, `embedder().cpuKernels (detected: ${w.detected})`);
    assert.deepEqual(w.refused, w.detected === 'relaxed-simd' ? ['INVALID_OPTION'] : ['INVALID_OPTION', 'INVALID_OPTION'], 'bad cpuKernels values');
    assert.equal(w.path, expectPath, `embedder().path: ${w.reason}`);
  });
  await attempt('search in every mode', () => assert.deepEqual(w.searches, want));
  await attempt('int8 embeddings (precision: int8) against f32', () => assert.ok(w.int8Cosine >= 0.98, `least cosine ${w.int8Cosine}`));
  await driver.goto(`${server.url}/tests/e2e/core.html`); // a reload: only IndexedDB keeps the base
  const r = await driver.run('reread', { kernels, snapshot: SNAPSHOT });
  await attempt('reload: open again from IndexedDB', () => {
    assert.equal(r.error, undefined, r.error);
    assert.equal(r.documents, DOCS.length);
    assert.deepEqual(r.reloaded, want);
  });
  await attempt('the search build (webrag/search) on the same base', () => {
    assert.equal(r.searchBuild?.cpuKernels, expectKernels);
    assert.deepEqual(r.searchBuild.tops, want);
  });
  await attempt('the search build adds Markdown and HTML (its parser module)', () => {
    assert.equal(r.searchBuild?.added, MARKUP_DOCS.length);
    assert.deepEqual(r.searchBuild.parsed, MARKUP_HITS);
  });
  await attempt('exportKb, importKb into another base', () => {
    assert.ok(w.fileBytes > 0);
    assert.equal(r.imported, DOCS.length);
    assert.deepEqual(r.importedTops, want);
  });
  await attempt('webrag/static keyword and semantic search', () => {
    const pages = QUERIES.map(([, id]) => `${id}.html`);
    assert.deepEqual(r.statics.keyword.map((u) => u?.split('/').pop()), pages);
    assert.deepEqual(r.statics.semantic.map((u) => u?.split('/').pop()), pages);
  });
  await attempt("the demo's first screen", async () => {
    await driver.goto(`${server.url}/www/?cpuKernels=${kernels}`);
    assert.equal(await driver.demoReady(), true);
  });
  if (xss) await attempt('content is data: the box under a strict CSP, webrag/static, both demos, an answer', () => contentIsData(driver, kernels));
  assert.deepEqual(failures, []);
}

// Loads tests/e2e/xss-cases.js into the page (a module script element: the page's own realm) and
// resolves once it has set `window.xssCases`.
const XSS_EXEC = `new Promise((ok, fail) => {
  if (window.xssCases) return ok();
  const s = document.createElement('script');
  s.type = 'module';
  s.src = '/tests/e2e/xss-cases.js';
  s.onerror = () => fail(new Error('xss-cases.js did not load'));
  document.head.append(s);
  const wait = () => (window.xssCases ? ok() : setTimeout(wait, 50));
  wait();
})`;

// Content is data (tests/e2e/xss-cases.js), in one engine through `driver`.
async function contentIsData(driver, kernels) {
  await driver.goto(`${server.url}/target/xss-site/search.html`);
  const box = await driver.exec('box', { queries: XSS_QUERIES, snapshot: XSS_SNAPSHOT });
  assert.equal(box.error, undefined, box.error);
  assert.deepEqual(box.violations, [], 'the box works within the policy');
  assert.equal(box.xss, null, 'no script ran');
  assert.deepEqual(box.made, [], 'no element made from text');
  assert.deepEqual([box.unsafe, box.bad], [[], []], 'every link http(s) on this origin');
  assert.equal(box.styled, '600', 'styled under style-src self (a constructed stylesheet)');
  const shown = Object.fromEntries(box.shown.map((r) => [r.q, r]));
  for (const q of ['owls', 'herons waders', 'kingfishers', 'gulls']) assert.ok(shown[q].results > 0, `the box finds ${q}`);
  assert.match(shown.owls.text, /<img src=x onerror="window\.__xss='title'">/, 'the payload is shown as text');
  // The pages named with payloads are reachable by their links (the names percent-encoded).
  for (const name of Object.keys(XSS_PAGES)) {
    const url = box.urls.find((u) => decodeURIComponent(u.split(/#:~:/)[0]) === `/${name}`);
    assert.ok(url, `a link to ${name}: ${box.urls.join(' ')}`);
    assert.equal((await fetch(`${server.url}/target/xss-site${url.split('#')[0]}`)).status, 200, `${url} reaches ${name}`);
  }
  await driver.goto(`${server.url}/www/site.html?snapshot=../target/xss-site/webrag/`);
  const site = await driver.exec('siteDemo', { queries: XSS_QUERIES });
  assert.equal(site.error, undefined, site.error);
  assert.deepEqual([site.xss, site.made, site.unsafe], [null, [], []], 'the static-site demo');
  await fetch(`${llmUrl}/__reset`, { method: 'POST' });
  const said = 'Owls hunt at night <img src=x onerror="window.__xss=\'answer\'"> <svg onload="window.__xss=1"></svg> <a href="javascript:window.__xss=2">see</a>';
  await fetch(`${llmUrl}/__rules`, { method: 'POST', body: JSON.stringify([{ match: 'Task: answer', reply: { content: `${said} [S1]\nConfidence: high` } }]) });
  await driver.goto(`${server.url}/www/?kb=xss&empty&cpuKernels=${kernels}`);
  const notes = await driver.exec('notesDemo', {
    notes: [{ id: 'owls', title: 'Owls <img src=x onerror="window.__xss=\'note\'">', text: `${said} <script>window.__xss='script'</script>`, format: 'text' }],
    query: 'owls hunt',
    question: 'When do owls hunt?',
    llm: `${llmUrl}/v1`,
  });
  assert.equal(notes.error, undefined, notes.error);
  assert.deepEqual([notes.xss, notes.made, notes.unsafe], [null, [], []], 'the notes demo');
  assert.match(notes.results, /<img src=x onerror=/, 'a note is shown as text');
  assert.ok(notes.cited && notes.answer.includes('<svg onload='), `the answer is shown as text, with its citation: ${notes.answer}`);
  assert.match(notes.source, /<script>window\.__xss='script'<\/script>/, 'the cited source is shown as text');
}

// Chromium through playwright-core (the harness's headless Chromium, without WebGPU so the CPU
// path is what runs, as in the engines that lack WebGPU).
function chromiumDriver(browser) {
  let page;
  return {
    async goto(url) { page ??= await browser.ctx.newPage(); await page.goto(url); await page.waitForFunction(() => window.coreReady || window.webragDemo !== undefined || document.readyState === 'complete'); },
    run: (fn, args) => page.evaluate(([f, a]) => window.coreCases[f](a), [fn, args]),
    exec: (fn, args) => page.evaluate(`(${XSS_EXEC})`).then(() => page.evaluate(([f, a]) => window.xssCases[f](a), [fn, args])),
    demoReady: () => page.waitForFunction(() => window.webragDemo?.ready === true || /Error \[/.test(document.getElementById('status')?.textContent ?? ''), null, { timeout: 300_000 })
      .then(() => page.evaluate(() => window.webragDemo?.ready === true || document.getElementById('status').textContent)),
  };
}

// A WebDriver session (selenium-webdriver): Firefox ESR or WebKitGTK.
function webDriver(session) {
  const until = async (script) => {
    const end = Date.now() + 300_000;
    for (;;) {
      const v = await session.executeScript(script);
      if (v || Date.now() > end) return v;
      await new Promise((ok) => setTimeout(ok, 250));
    }
  };
  return {
    async goto(url) { await session.get(url); await until('return document.readyState === "complete" && (window.coreReady === true || !location.pathname.endsWith("core.html"))'); },
    run: (fn, args) => session.executeAsyncScript('const done = arguments[arguments.length - 1]; window.coreCases[arguments[0]](arguments[1]).then(done, (e) => done({ error: String(e) }));', fn, args),
    exec: (fn, args) => session.executeAsyncScript(`const done = arguments[arguments.length - 1]; (${XSS_EXEC}).then(() => window.xssCases[arguments[0]](arguments[1])).then(done, (e) => done({ error: String(e) }));`, fn, args),
    demoReady: async () => {
      await until('return window.webragDemo?.ready === true || /Error \\[/.test(document.getElementById("status")?.textContent ?? "")');
      return session.executeScript('return window.webragDemo?.ready === true || document.getElementById("status").textContent');
    },
  };
}

const freePort = () => new Promise((ok) => { const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => ok(port)); }); });

test('Chromium: the core cases, the build feature detection picks (relaxed SIMD)', { timeout: TIMEOUT_MS }, async () => {
  const browser = await launch({ webgpu: false });
  try {
    await coreCases('Chromium (relaxed-simd)', chromiumDriver(browser), { kernels: 'auto', expectKernels: 'relaxed-simd', expectPath: 'cpu' });
  } finally { await browser.close(); }
});

test('Chromium: the core cases on the baseline build (cpuKernels: simd128)', { timeout: TIMEOUT_MS }, async () => {
  const browser = await launch({ webgpu: false });
  try {
    await coreCases('Chromium (simd128)', chromiumDriver(browser), { kernels: 'simd128', expectKernels: 'simd128', expectPath: 'cpu', xss: false });
  } finally { await browser.close(); }
});

// Runs `use(session)` in headless Firefox ESR (geckodriver), then ends the session.
async function inFirefox(use) {
  for (const f of [GECKODRIVER, FIREFOX]) assert.ok(existsSync(f), `${f} is missing: ./webrag.sh setup installs Firefox ESR and geckodriver`);
  const options = new firefox.Options().setBinary(FIREFOX).addArguments('-headless');
  const session = await new Builder().forBrowser('firefox').setFirefoxOptions(options).setFirefoxService(new firefox.ServiceBuilder(GECKODRIVER)).build();
  try {
    await session.manage().setTimeouts({ script: TIMEOUT_MS, pageLoad: 120_000 });
    return await use(session);
  } finally { await session.quit(); }
}

// Runs `use(session)` in WebKitGTK's MiniBrowser (WebKitWebDriver under its own Xvfb), then ends
// the session, the driver and the display.
async function inWebKit(use) {
  for (const f of [WEBKIT_DRIVER, MINIBROWSER]) assert.ok(existsSync(f), `${f} is missing: ./webrag.sh setup installs webkit2gtk-driver`);
  const display = `:${90 + Math.floor(Math.random() * 9)}`;
  const xvfb = spawn('Xvfb', [display, '-screen', '0', '1280x800x24', '-nolisten', 'tcp'], { stdio: 'ignore' });
  const port = await freePort();
  const driverProc = spawn(WEBKIT_DRIVER, [`--port=${port}`], { stdio: 'ignore', env: { ...process.env, DISPLAY: display } });
  let session;
  try {
    await new Promise((ok) => setTimeout(ok, 1500));
    session = await new Builder().usingServer(`http://127.0.0.1:${port}`).withCapabilities({
      browserName: 'MiniBrowser',
      'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] },
    }).build();
    await session.manage().setTimeouts({ script: TIMEOUT_MS, pageLoad: 120_000 });
    return await use(session);
  } finally {
    await session?.quit().catch(() => {});
    driverProc.kill();
    xvfb.kill();
  }
}

test('Firefox ESR: the core cases (no WebGPU on Linux: the CPU path)', { timeout: TIMEOUT_MS }, () => inFirefox(async (session) => {
  const detected = await (async () => { await session.get(`${server.url}/tests/e2e/core.html`); return session.executeAsyncScript('const done = arguments[0]; import("/pkg/index.js").then((m) => done(m.cpuKernels()));'); })();
  await coreCases('Firefox ESR', webDriver(session), { kernels: 'auto', expectKernels: detected, expectPath: 'cpu' });
}));

test("WebKitGTK (Safari's engine): the core cases (no relaxed SIMD: the baseline build; no WebGPU: the CPU path)", { timeout: TIMEOUT_MS }, () => inWebKit(async (session) => {
  await coreCases('WebKitGTK', webDriver(session), { kernels: 'auto', expectKernels: 'simd128', expectPath: 'cpu' });
}));

// Issue 64: a WebKitGTK run once ended in `RuntimeError: Out of bounds memory access` on reopen.
// STRESS_ROUNDS rounds (WEBRAG_STRESS_ROUNDS: 25 in the suite, 200 from `./webrag.sh stress`) of
// open, add one note, search for it, close, in calls of 25 rounds with a page reload between
// them, on one base: every note must be
// at the top of its own BM25 search, every hybrid search must answer, and the base must end
// with every note.
const STRESS_ROUNDS = Number(process.env.WEBRAG_STRESS_ROUNDS ?? 25);
const STRESS_CALL = 25;
async function stressRounds(engine, driver) {
  const t0 = Date.now();
  let found = 0;
  let hybrid = 0;
  let documents = 0;
  for (let first = 0; first < STRESS_ROUNDS; first += STRESS_CALL) {
    await driver.goto(`${server.url}/tests/e2e/core.html`);
    const r = await driver.run('stress', { first, rounds: Math.min(STRESS_CALL, STRESS_ROUNDS - first), fresh: first === 0 });
    assert.equal(r.error, undefined, `${engine}, rounds from ${first}: ${r.error}`);
    found += r.found;
    hybrid += r.hybrid;
    documents = r.documents;
  }
  console.log(`# ${engine}: ${STRESS_ROUNDS} rounds of open, add, search, close in ${((Date.now() - t0) / 1000).toFixed(1)} s; ${found} notes found at the top, ${documents} in the base`);
  assert.equal(found, STRESS_ROUNDS, 'every note at the top of its own BM25 search');
  assert.ok(hybrid >= STRESS_ROUNDS, `hybrid searches return results (${hybrid})`);
  assert.equal(documents, STRESS_ROUNDS, 'the base holds every note');
}

test(`Firefox ESR: ${STRESS_ROUNDS} rounds of open, add, search, close, reopen`, { timeout: 3 * TIMEOUT_MS }, () => inFirefox((session) => stressRounds('Firefox ESR', webDriver(session))));

test(`WebKitGTK: ${STRESS_ROUNDS} rounds of open, add, search, close, reopen`, { timeout: 3 * TIMEOUT_MS }, () => inWebKit((session) => stressRounds('WebKitGTK', webDriver(session))));
