// The core browser paths in every browser engine people use: Chromium (playwright-core), Firefox
// ESR (geckodriver) and WebKitGTK, the engine of Safari (WebKitWebDriver driving MiniBrowser under
// Xvfb); `./webrag.sh setup` installs all three. Each engine runs tests/e2e/core-cases.js: open a
// knowledge base, add, search in every mode, embed with int8 arithmetic, reload the page and open it again from IndexedDB
// (with the full engine, then the search build), export and import it, webrag/static's keyword and semantic search; then the demo's first screen.
// Chromium runs it twice: the build feature detection picks (relaxed SIMD) and the baseline build
// forced (`cpuKernels: 'simd128'`). Where an engine lacks a feature the fallback is what is
// checked: the baseline build where relaxed SIMD is missing, the CPU path without WebGPU.
// Prints one table: the cases × the engines.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Builder } from 'selenium-webdriver';
import firefox from 'selenium-webdriver/firefox.js';
import { ROOT, startServer, launch } from './harness.mjs';
import { DOCS, QUERIES, MODES, MARKUP_DOCS, MARKUP_HITS } from './core-data.js';

const SITE = join(ROOT, 'target/core-site');
const SNAPSHOT = '/target/core-site/webrag/';
const GECKODRIVER = process.env.GECKODRIVER ?? join(homedir(), '.cargo/bin/geckodriver');
const FIREFOX = process.env.FIREFOX ?? '/usr/bin/firefox-esr';
const WEBKIT_DRIVER = process.env.WEBKIT_DRIVER ?? '/usr/bin/WebKitWebDriver';
const MINIBROWSER = process.env.MINIBROWSER ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
const TIMEOUT_MS = 600_000;

let server;
const table = new Map(); // case → engine → 'pass' | 'FAIL: …'

before(async () => {
  // A four-page site of the documents the cases add, and its snapshot with the static tier.
  rmSync(SITE, { recursive: true, force: true });
  mkdirSync(SITE, { recursive: true });
  for (const d of DOCS) {
    const [title, ...rest] = d.text.replace(/^# /, '').split('\n\n');
    writeFileSync(join(SITE, `${d.id}.html`), `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1><p>${rest.join('</p><p>')}</p></main></body></html>\n`);
  }
  execFileSync('cargo', ['run', '--quiet', '--bin', 'webrag', '--', 'index', SITE, '--out', join(SITE, 'webrag'), '--vectors', 'static',
    '--static-model', join(ROOT, 'pkg/model/webrag-static.wrs'), '--no-cache'], { cwd: ROOT, stdio: 'inherit' });
  server = await startServer(24000 + Math.floor(Math.random() * 1000));
});
after(() => {
  server?.stop();
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
async function coreCases(engine, driver, { kernels, expectKernels, expectPath }) {
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
  assert.deepEqual(failures, []);
}

// Chromium through playwright-core (the harness's headless Chromium, without WebGPU so the CPU
// path is what runs, as in the engines that lack WebGPU).
function chromiumDriver(browser) {
  let page;
  return {
    async goto(url) { page ??= await browser.ctx.newPage(); await page.goto(url); await page.waitForFunction(() => window.coreReady || window.webragDemo !== undefined || document.readyState === 'complete'); },
    run: (fn, args) => page.evaluate(([f, a]) => window.coreCases[f](a), [fn, args]),
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
    await coreCases('Chromium (simd128)', chromiumDriver(browser), { kernels: 'simd128', expectKernels: 'simd128', expectPath: 'cpu' });
  } finally { await browser.close(); }
});

test('Firefox ESR: the core cases (no WebGPU on Linux: the CPU path)', { timeout: TIMEOUT_MS }, async () => {
  for (const f of [GECKODRIVER, FIREFOX]) assert.ok(existsSync(f), `${f} is missing: ./webrag.sh setup installs Firefox ESR and geckodriver`);
  const options = new firefox.Options().setBinary(FIREFOX).addArguments('-headless');
  const session = await new Builder().forBrowser('firefox').setFirefoxOptions(options).setFirefoxService(new firefox.ServiceBuilder(GECKODRIVER)).build();
  try {
    await session.manage().setTimeouts({ script: TIMEOUT_MS, pageLoad: 120_000 });
    const detected = await (async () => { await session.get(`${server.url}/tests/e2e/core.html`); return session.executeAsyncScript('const done = arguments[0]; import("/pkg/index.js").then((m) => done(m.cpuKernels()));'); })();
    await coreCases('Firefox ESR', webDriver(session), { kernels: 'auto', expectKernels: detected, expectPath: 'cpu' });
  } finally { await session.quit(); }
});

test("WebKitGTK (Safari's engine): the core cases (no relaxed SIMD: the baseline build; no WebGPU: the CPU path)", { timeout: TIMEOUT_MS }, async () => {
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
    await coreCases('WebKitGTK', webDriver(session), { kernels: 'auto', expectKernels: 'simd128', expectPath: 'cpu' });
  } finally {
    await session?.quit().catch(() => {});
    driverProc.kill();
    xvfb.kill();
  }
});
