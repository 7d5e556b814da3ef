// Shared harness for page tests: the static server and a headless Chromium (playwright-core
// driving Debian's /usr/bin/chromium) with a fresh profile, so IndexedDB starts empty and
// survives reloads within the run.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
// The shared evaluation data: `../shared` beside the checkout, or $WEBRAG_SHARED.
export const SHARED = process.env.WEBRAG_SHARED ? resolve(process.env.WEBRAG_SHARED) : resolve(ROOT, '..', 'shared');

/**
 * A test's need of the shared evaluation data (`../shared/<rel>`, beside the checkout), as
 * node:test's `skip` option: `false` when it is there, else the one line the skipped test prints
 * (what is missing and where it goes). With `CI=true` a missing file throws, so CI can never go
 * green by skipping.
 */
export function needsShared(...rels) {
  const missing = rels.filter((rel) => !existsSync(join(SHARED, rel)));
  if (!missing.length) return false;
  const what = `${missing.map((rel) => `../shared/${rel}`).join(', ')} missing (the shared evaluation data, a folder \`shared\` beside the checkout)`;
  if (process.env.CI === 'true') throw new Error(`${what}: with CI=true the data-bound tests must run`);
  return what;
}

/**
 * The native CLI with `args`, as [command, argv] for `execFileSync` / `spawnSync`: `$WEBRAG_CLI`
 * where it is set (`./webrag.sh test` points it at the binary the native tests built), else
 * `cargo run`, which builds it first. `cargo run` builds without the dev-dependencies' features,
 * so after `cargo test` it compiles the engine a second time.
 */
export function cli(args) {
  return process.env.WEBRAG_CLI ? [process.env.WEBRAG_CLI, args] : ['cargo', ['run', '--quiet', '--bin', 'webrag', '--', ...args]];
}

export async function startServer(port) {
  const proc = spawn(process.execPath, [join(ROOT, 'www/serve.mjs'), '--port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise((ok, fail) => {
    proc.stderr.on('data', (d) => { if (String(d).includes('serving')) ok(); });
    proc.on('exit', (c) => fail(new Error(`server exited ${c}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => proc.kill() };
}

/** Headless Chromium with a fresh profile; `webgpu: false` leaves out `--enable-unsafe-webgpu`. */
export async function launch({ webgpu = true } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'webrag-e2e-'));
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', ...(webgpu ? ['--enable-unsafe-webgpu'] : [])],
  });
  return { ctx, close: async () => { await ctx.close(); rmSync(dir, { recursive: true, force: true }); } };
}

export async function openDemo(page, url) {
  page.on('pageerror', (e) => console.error('pageerror:', e.message));
  await page.goto(url);
  await page.waitForFunction(() => window.webragDemo?.ready === true || /Error \[/.test(document.getElementById('status').textContent), null, { timeout: 300_000 });
  const st = await page.textContent('#status');
  if (!(await page.evaluate(() => window.webragDemo.ready))) throw new Error(`demo failed to start: ${st}`);
}
