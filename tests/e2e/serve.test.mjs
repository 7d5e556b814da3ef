// Hostile input to the dev server and to the static-site page:
// - www/serve.mjs answers a malformed escape with 400 and keeps serving; a path that leaves its
//   root for a sibling folder whose name starts the same is refused; CORS headers go to pages of
//   127.0.0.1 / localhost only.
// - webrag/static's `safeUrl` keeps relative, http and https links and drops javascript:, data:
//   and their obfuscations (results' `url` goes through it); site.html refuses a `?snapshot=` of
//   another origin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { ROOT, startServer, launch } from './harness.mjs';
import { safeUrl } from '../../src/web/js/static.js';

let server;
const SIBLING = `${ROOT}-probe-${process.pid}`;
before(async () => {
  mkdirSync(SIBLING, { recursive: true });
  writeFileSync(`${SIBLING}/secret.txt`, 'not for the web');
  server = await startServer(24000 + Math.floor(Math.random() * 1000));
});
after(() => { server?.stop(); rmSync(SIBLING, { recursive: true, force: true }); });

const get = (path, headers = {}) => fetch(`${server.url}${path}`, { headers, redirect: 'manual' });

test('the dev server: a bad escape is a 400 and the server lives on', async () => {
  assert.equal((await get('/%E0%A4%A')).status, 400);
  assert.equal((await get('/www/%')).status, 400);
  assert.equal((await get('/www/style.css')).status, 200, 'still serving');
});

test('the dev server: no path leaves its root, not even for a sibling folder of a similar name', async () => {
  const probe = `/..%2f${basename(SIBLING)}/secret.txt`;
  const r = await get(probe);
  assert.equal(r.status, 403, `${probe} is refused`);
  assert.notEqual(await r.text(), 'not for the web');
  assert.equal((await get('/shared/..%2f..%2fetc/passwd')).status, 403);
  assert.equal((await get('/www/..%2f..%2f..%2fetc/passwd')).status, 403);
});

test('the dev server: local Host names only, no dotfiles, only the served folders', async () => {
  const host = (h) => new Promise((ok, fail) => {
    // fetch() sets Host itself: a raw request names another.
    import('node:http').then(({ request }) => {
      const u = new URL(server.url);
      request({ host: u.hostname, port: u.port, path: '/www/style.css', headers: { Host: h } }, (r) => { r.resume(); ok(r.statusCode); }).on('error', fail).end();
    });
  });
  for (const ok of ['127.0.0.1', `127.0.0.1:${new URL(server.url).port}`, 'localhost:1', 'LOCALHOST', '[::1]:8080']) assert.equal(await host(ok), 200, ok);
  for (const bad of ['evil.example', 'evil.example:80', '127.0.0.1.evil.example', 'localhost.evil.example', '127.0.0.2']) assert.equal(await host(bad), 421, bad);
  for (const hidden of ['/.git/config', '/.git/HEAD', '/.gitignore', '/.ci/run', '/www/.hidden', '/%2egit/HEAD', '/target/.rustc_info.json', '/Cargo.toml', '/README.md', '/webrag.sh', '/docs/api.md']) {
    const r = await get(hidden);
    assert.equal(r.status, 404, hidden);
  }
  for (const served of ['/www/style.css', '/package.json', '/pkg/package.json']) assert.equal((await get(served)).status, 200, served);
});

test('the dev server: a symbolic link is followed only to a file it serves', async () => {
  // Links in a served folder (as a hostile site under target/ has): out of the repository, into
  // .git, to a file of the root it does not serve; a link that stays inside target/ is followed.
  const dir = `${ROOT}/target/serve-links-${process.pid}`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/page.html`, 'served');
  const links = { out: `${SIBLING}/secret.txt`, outdir: SIBLING, git: `${ROOT}/.git/HEAD`, script: `${ROOT}/webrag.sh`, ok: `${dir}/page.html` };
  try {
    for (const [name, to] of Object.entries(links)) symlinkSync(to, `${dir}/${name}`);
    const base = `/target/${basename(dir)}`;
    for (const bad of ['out', 'outdir/secret.txt', 'git', 'script']) {
      const r = await get(`${base}/${bad}`);
      assert.equal(r.status, 404, bad);
      assert.notEqual(await r.text(), 'not for the web');
    }
    const ok = await get(`${base}/ok`);
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), 'served');
    // A range asks for part of a file: the whole file comes, once.
    const ranged = await get(`${base}/page.html`, { Range: 'bytes=0-1,0-1,0-1,0-99999999999999999999' });
    assert.deepEqual([ranged.status, await ranged.text()], [200, 'served']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the dev server: CORS for local pages only', async () => {
  const local = await get('/www/style.css', { Origin: 'http://127.0.0.1:9999' });
  assert.equal(local.headers.get('access-control-allow-origin'), 'http://127.0.0.1:9999');
  const other = await get('/www/style.css', { Origin: 'https://evil.example' });
  assert.equal(other.headers.get('access-control-allow-origin'), null);
  assert.equal((await get('/www/style.css')).headers.get('access-control-allow-origin'), null);
});

test('safeUrl keeps links a visitor can follow safely and drops script URLs', () => {
  for (const ok of ['news/a.html', '/news/a.html#x', 'https://example.org/p?q=1', 'http://example.org/', '?page=2', 'a:b/c.html'.replace('a:', 'a%3A')]) {
    assert.equal(safeUrl(ok), ok, ok);
  }
  for (const bad of ['javascript:alert(1)', 'JavaScript:alert(1)', ' javascript:alert(1)', 'java\tscript:alert(1)', 'java\nscript:alert(1)',
    '\u0001javascript:alert(1)', 'data:text/html,<script>alert(1)</script>', 'vbscript:x', null, 42, {}]) {
    assert.equal(safeUrl(bad), null, JSON.stringify(bad));
  }
});

test('site.html refuses a snapshot of another origin', { timeout: 120_000 }, async () => {
  const browser = await launch({ webgpu: false });
  try {
    const page = await browser.ctx.newPage();
    const other = server.url.replace('127.0.0.1', 'localhost');
    await page.goto(`${server.url}/www/site.html?snapshot=${encodeURIComponent(`${other}/target/e2e-site/webrag/`)}`);
    await page.waitForFunction(() => /refused/.test(document.getElementById('status').textContent), null, { timeout: 30_000 });
    assert.equal(await page.evaluate(() => window.siteDemo.ready), false);
  } finally {
    await browser.close();
  }
});
