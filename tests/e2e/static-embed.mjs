// Helper of tests/static_tier.rs (not a test file itself): opens the snapshot in folder argv[2]
// with webrag/static, reading files from disk through a `fetch` stand-in, and prints, for each
// text of the JSON list in argv[3], the word-piece ids of wordpiece.js over the snapshot's
// vocabulary shards, the static tier's query vector and the page and cosine of its nearest chunk
// by the snapshot's vector lists (`semantic`, int4 in a static snapshot), as JSON on stdout.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StaticSearch } from '../../src/web/js/static.js';
import { encode } from '../../src/web/js/wordpiece.js';

const [dir, textsFile] = process.argv.slice(2);
const BASE = 'https://site.invalid/webrag/';
const fetchFile = async (url) => {
  try {
    const bytes = readFileSync(join(dir, url.slice(BASE.length)));
    return new Response(bytes);
  } catch { return new Response('missing', { status: 404 }); }
};
const site = await StaticSearch.open(BASE, { fetch: fetchFile, offline: false });
const t = site.manifest.static;
const shards = new Map();
const entries = async (key) => {
  const i = (await import('../../src/web/js/static-text.js')).fnv1a(key) % t.vocab.shards;
  if (!shards.has(i)) {
    const name = await site.shardName('vocab', i);
    const gz = readFileSync(join(dir, name));
    const text = new TextDecoder().decode(await new Response(new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer());
    shards.set(i, JSON.parse(text).k);
  }
  return shards.get(i);
};
const texts = JSON.parse(readFileSync(textsFile, 'utf8'));
const out = [];
for (const text of texts) {
  const vector = (await site.staticEmbed([text]))[0];
  const { hits, errors } = await site.semantic(vector, { k: 1 });
  if (errors.length) throw errors[0];
  const nearest = hits.length ? { url: (await site.fragments([hits[0].chunk]))[0].url, score: hits[0].score } : null;
  out.push({ ids: await encode(text, t.wordpiece, entries), vector, nearest });
}
process.stdout.write(JSON.stringify({ out, transferred: site.transferred }));
