// Static file server for the demo and the browser tests, bound to 127.0.0.1.
//   /www/ /pkg/ /.models/ /target/ /tests/ /src/ /node_modules/ /package.json
//                -> those folders and files of the repository root, nothing else of it
//   /shared/     -> ../shared (evaluation data, golden embeddings)
// Answers only requests whose Host is 127.0.0.1, localhost or [::1] (any port), so a page of
// another site that rebinds its DNS name to 127.0.0.1 gets a 421, not the files. No path segment
// may start with a dot (.git, .env …) other than the top-level .models. Sends CORS headers only to
// pages of 127.0.0.1 / localhost (the wasm-bindgen-test pages run on another port and fetch the
// model), never to other sites. Paths stay inside their root (checked on whole path segments),
// and so does the file a symbolic link leads to; a malformed escape is a 400, not a crash.
// Range requests are answered with the whole file (200).
import { createServer } from 'node:http';
import { createReadStream, realpathSync, statSync } from 'node:fs';
import { extname, join, normalize, resolve, dirname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const shared = process.env.WEBRAG_SHARED ? resolve(process.env.WEBRAG_SHARED) : resolve(root, '..', 'shared');
const args = process.argv.slice(2);
const port = Number(args[args.indexOf('--port') + 1] || process.env.PORT || 8080);
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm', '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png', '.ts': 'text/plain; charset=utf-8',
};

const SERVED = new Set(['www', 'pkg', '.models', 'target', 'tests', 'src', 'node_modules', 'package.json', 'shared']);
// The two roots as the file system names them (a root that does not exist stays as written).
const REAL = new Map([root, shared].map((d) => { try { return [d, realpathSync(d)]; } catch { return [d, d]; } }));
const LOCAL_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?$/i;

/** Whether `file` (inside `base`) is in a served folder, through no dot-named segment but `.models`. */
function served(base, file) {
  const segments = file.slice(base.length).split(sep).filter(Boolean);
  const top = base === shared || base === REAL.get(shared) ? 'shared' : segments[0];
  return SERVED.has(top) && !segments.some((s, i) => s.startsWith('.') && !(i === 0 && s === '.models' && top !== 'shared'));
}

createServer((req, res) => {
  if (!LOCAL_HOST.test(req.headers.host ?? '')) { res.writeHead(421).end('misdirected request: this server answers 127.0.0.1 and localhost only'); return; }
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
  if (!served(base, file)) { res.writeHead(404).end('not found'); return; }
  // The file a symbolic link leads to must be served too: a link under target/ to /etc, to
  // .git or to webrag.sh is not followed.
  let real;
  try { real = realpathSync(file); } catch { res.writeHead(404).end('not found'); return; }
  const realBase = REAL.get(base);
  if (!(real === realBase || real.startsWith(realBase + sep)) || !served(realBase, real)) { res.writeHead(404).end('not found'); return; }
  let st;
  try { st = statSync(real); } catch { res.writeHead(404).end('not found'); return; }
  if (st.isDirectory()) { res.writeHead(302, { Location: url.pathname + '/' }).end(); return; }
  res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Content-Length': st.size });
  createReadStream(real).on('error', () => res.destroy()).pipe(res);
}).listen(port, '127.0.0.1', () => console.error(`serving ${root} on http://127.0.0.1:${port}/`));
