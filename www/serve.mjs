// Static file server for the demo and the browser tests, bound to 127.0.0.1.
//   /            -> the repository root (www/, pkg/, .models/)
//   /shared/     -> ../shared (evaluation data, golden embeddings)
// Sends CORS headers only to pages of 127.0.0.1 / localhost (the wasm-bindgen-test pages run on
// another port and fetch the model), never to other sites. Paths stay inside their root (checked
// on whole path segments); a malformed escape is a 400, not a crash.
import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { extname, join, normalize, resolve, dirname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const shared = resolve(root, '..', 'shared');
const args = process.argv.slice(2);
const port = Number(args[args.indexOf('--port') + 1] || process.env.PORT || 8080);
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm', '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png', '.ts': 'text/plain; charset=utf-8',
};

createServer((req, res) => {
  let url, path;
  try {
    url = new URL(req.url, 'http://x');
    path = decodeURIComponent(url.pathname);
  } catch { res.writeHead(400).end('bad request'); return; }
  let base = root;
  if (path.startsWith('/shared/')) { base = shared; path = path.slice('/shared'.length); }
  if (path.endsWith('/')) path += 'index.html';
  const file = normalize(join(base, path));
  const origin = req.headers.origin;
  if (origin && /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(origin)) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
  }
  res.setHeader('Cache-Control', 'no-cache');
  if (file !== base && !file.startsWith(base + sep)) { res.writeHead(403).end('forbidden'); return; }
  if (path.includes('\0')) { res.writeHead(400).end('bad request'); return; }
  let st;
  try { st = statSync(file); } catch { res.writeHead(404).end('not found'); return; }
  if (st.isDirectory()) { res.writeHead(302, { Location: url.pathname + '/' }).end(); return; }
  res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Content-Length': st.size });
  createReadStream(file).on('error', () => res.destroy()).pipe(res);
}).listen(port, '127.0.0.1', () => console.error(`serving ${root} on http://127.0.0.1:${port}/`));
