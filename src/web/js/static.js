// webrag static-site search: loads a snapshot written by `webrag index <site> --out <site>/webrag`
// (manifest.json + content-hashed shards) and fetches only what a query needs. Keyword search
// (BM25) is plain JavaScript — no WebAssembly, no model — so the first results come after a few
// kilobytes; semantic search joins once an embedder is set (`setEmbedder`, e.g. WebRag's
// `rag.embed`), reading the int8 IVF centroids and the `nprobe` nearest lists.
//
// Errors are `SnapshotError`s with a stable `code`: SNAPSHOT_UNAVAILABLE (a file could not be
// fetched), SNAPSHOT_CORRUPT (hash mismatch, truncated gzip, bad JSON or binary), SNAPSHOT_VERSION
// (a manifest this loader does not read). A shard that fails does not fail the search: its error
// is reported in `errors` and the other shards' results stand.

/** A snapshot problem; `code` is SNAPSHOT_UNAVAILABLE, SNAPSHOT_CORRUPT or SNAPSHOT_VERSION, `file` the file. */
export class SnapshotError extends Error {
  constructor(message, code, file) { super(message); this.name = 'SnapshotError'; this.code = code; this.file = file; }
}

// ---- the analyzer: the same terms as the Rust one (src/text/analyze.rs) --------------------
const isCjk = (cp) => (cp >= 0x3040 && cp <= 0x30ff) || (cp >= 0x3400 && cp <= 0x4dbf) || (cp >= 0x4e00 && cp <= 0x9fff)
  || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x20000 && cp <= 0x2fa1f);
const MID_PUNCT = /[!-/:-@[-^`{-~\u00B7\u0387\u05F3\u05F4\u2018\u2019\u2024\u2027\uFE50\uFE52\uFE54\uFE55]/u;
const ALNUM = /[\p{Alphabetic}\p{N}]/u;
let segmenter;

// Katakana that UAX #29 joins into one word (Word_Break=Katakana, within the CJK ranges).
const isKatakanaWord = (cp) => (cp >= 0x30a0 && cp <= 0x30fa) || (cp >= 0x30fc && cp <= 0x30ff) || cp === 0x309b || cp === 0x309c;
// Scripts that ICU segments with a dictionary but UAX #29 (the Rust side) by grapheme cluster.
const DICTIONARY_SCRIPT = /[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Tai_Tham}\p{Script=Tai_Viet}\p{Script=New_Tai_Lue}]/u;
let graphemes;

/**
 * Splits text into index terms: Unicode words, NFKC + lowercase, split at inner punctuation;
 * runs of CJK characters as overlapping bigrams (a lone character as itself). The same terms as
 * the Rust analyzer (src/text/analyze.rs), which follows UAX #29 without dictionaries: CJK is
 * read character by character here (Katakana runs are one word, as in UAX #29), whatever
 * `Intl.Segmenter`'s dictionary says, and Thai-like scripts by grapheme cluster.
 */
export function analyze(text) {
  segmenter ??= new Intl.Segmenter('und', { granularity: 'word' });
  graphemes ??= new Intl.Segmenter('und', { granularity: 'grapheme' });
  const out = [];
  let run = [];
  let runEnd = -1;
  const flush = () => {
    if (run.length === 1) out.push(run[0]);
    else for (let i = 0; i + 1 < run.length; i++) out.push(run[i] + run[i + 1]);
    run = [];
  };
  const lower = (s) => { let r = ''; for (const c of s) r += c.toLowerCase(); return r; };
  const word = (w) => {
    if (!ALNUM.test(w)) return;
    if (run.length) flush();
    for (const p of lower(w.normalize('NFKC')).split(MID_PUNCT)) if (ALNUM.test(p)) out.push(p);
  };
  // CJK "words" as UAX #29 makes them: one per character, except Katakana runs.
  let kata = null; // the Katakana word being read: {start, chars, end}
  const endKata = () => {
    if (!kata) return;
    if (kata.chars.length === 1) cjkChar(kata.chars[0], kata.start);
    else {
      if (run.length) flush();
      let at = kata.start;
      for (const c of kata.chars) { if (at !== runEnd && run.length) flush(); run.push(c); at += c.length; runEnd = at; }
    }
    kata = null;
  };
  const cjkChar = (ch, at) => {
    if (at !== runEnd && run.length) flush();
    run.push(ch);
    runEnd = at + ch.length;
  };
  for (const { segment, index } of segmenter.segment(text)) {
    let off = 0;
    let plain = '';
    const endPlain = () => {
      if (!plain) return;
      if (DICTIONARY_SCRIPT.test(plain)) for (const { segment: g } of graphemes.segment(plain)) word(g);
      else word(plain);
      plain = '';
    };
    for (const ch of segment) {
      const cp = ch.codePointAt(0);
      const at = index + off;
      if (isCjk(cp)) {
        endPlain();
        if (isKatakanaWord(cp) && kata && kata.end === at) { kata.chars.push(ch); kata.end = at + ch.length; }
        else {
          endKata();
          if (isKatakanaWord(cp)) kata = { start: at, chars: [ch], end: at + ch.length };
          else cjkChar(ch, at);
        }
      } else {
        endKata();
        plain += ch;
      }
      off += ch.length;
    }
    endPlain();
  }
  endKata();
  if (run.length) flush();
  return out;
}

/** FNV-1a 32 of the UTF-8 bytes (the term → shard hash of the writer). */
export function fnv1a(s) {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(s)) { h ^= b; h = Math.imul(h, 0x01000193) >>> 0; }
  return h >>> 0;
}

async function gunzip(bytes) {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer());
}

const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('');

/** Reciprocal-rank fusion of ranked id lists (k = 60). */
function rrf(lists, k = 60) {
  const score = new Map();
  for (const list of lists) list.forEach((id, i) => score.set(id, (score.get(id) ?? 0) + 1 / (k + i + 1)));
  return [...score].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
}

/** A static-site snapshot, loaded lazily. */
export class StaticSearch {
  #base; #fetch; #cache = new Map(); #embed = null;
  /** The manifest. */ manifest;
  /** Bytes fetched so far (compressed, as transferred), and files. */ transferred = { bytes: 0, files: 0 };

  constructor(base, manifest, fetchFn) { this.#base = base; this.manifest = manifest; this.#fetch = fetchFn; }

  /**
   * Opens the snapshot at `baseUrl` (the folder holding manifest.json). `fetch` may be replaced
   * (tests, service workers).
   */
  static async open(baseUrl, { fetch: fetchFn = globalThis.fetch.bind(globalThis) } = {}) {
    const base = new URL(baseUrl, globalThis.location?.href).href.replace(/\/?$/, '/');
    let res;
    try { res = await fetchFn(`${base}manifest.json`); } catch (e) { throw new SnapshotError(`manifest.json: ${e.message}`, 'SNAPSHOT_UNAVAILABLE', 'manifest.json'); }
    if (!res.ok) throw new SnapshotError(`manifest.json: HTTP ${res.status}`, 'SNAPSHOT_UNAVAILABLE', 'manifest.json');
    const text = await res.text();
    let m;
    try { m = JSON.parse(text); } catch (e) { throw new SnapshotError(`manifest.json: ${e.message}`, 'SNAPSHOT_CORRUPT', 'manifest.json'); }
    if (m.format !== 'webrag-snapshot' || m.version !== 2) throw new SnapshotError(`manifest.json: format ${m.format} version ${m.version} is not webrag-snapshot 2`, 'SNAPSHOT_VERSION', 'manifest.json');
    const s = new StaticSearch(base, m, fetchFn);
    s.transferred.bytes += new TextEncoder().encode(text).length;
    s.transferred.files += 1;
    return s;
  }

  /** Sets the query embedder for semantic search: `async (texts) => number[][]` (unit vectors). */
  setEmbedder(embed) { this.#embed = embed; }

  /** Fetches a shard once (cached by its content-hashed name), checks its hash, gunzips it (`gz`). */
  #file(name, gz = true) {
    if (!this.#cache.has(name)) {
      const p = (async () => {
        let res;
        try { res = await this.#fetch(this.#base + name); } catch (e) { throw new SnapshotError(`${name}: ${e.message}`, 'SNAPSHOT_UNAVAILABLE', name); }
        if (!res.ok) throw new SnapshotError(`${name}: HTTP ${res.status}`, 'SNAPSHOT_UNAVAILABLE', name);
        const raw = new Uint8Array(await res.arrayBuffer());
        this.transferred.bytes += raw.length;
        this.transferred.files += 1;
        const want = /-([0-9a-f]{8})\./.exec(name)?.[1];
        if (want && globalThis.crypto?.subtle) {
          const got = hex(await crypto.subtle.digest('SHA-256', raw)).slice(0, 8);
          if (got !== want) throw new SnapshotError(`${name}: content hash ${got} does not match its name`, 'SNAPSHOT_CORRUPT', name);
        }
        if (!gz) return raw;
        try { return await gunzip(raw); } catch (e) { throw new SnapshotError(`${name}: ${e.message}`, 'SNAPSHOT_CORRUPT', name); }
      })();
      p.catch(() => this.#cache.delete(name)); // a failed fetch may be retried
      this.#cache.set(name, p);
    }
    return this.#cache.get(name);
  }

  /**
   * The file name of shard `i` of a series (`terms`, `fragments`, `vectors`): its directory page
   * (fetched once, cached) holds the 4-byte hash that ends the name.
   */
  async shardName(kind, i) {
    const k = this.manifest[kind];
    const prefix = { terms: 't', fragments: 'f', vectors: 'v' }[kind];
    const group = this.manifest.directory.group;
    const page = k.dirs[Math.floor(i / group)];
    if (!page) throw new SnapshotError(`${kind} ${i}: no such shard`, 'SNAPSHOT_CORRUPT', 'manifest.json');
    const bytes = await this.#file(page, false);
    const at = 4 * (i % group);
    if (bytes.length < at + 4) throw new SnapshotError(`${page}: too short for shard ${i}`, 'SNAPSHOT_CORRUPT', page);
    return `${prefix}/${i}-${hex(bytes.subarray(at, at + 4))}.${k.ext}`;
  }

  async #json(name) {
    const bytes = await this.#file(name);
    try { return JSON.parse(new TextDecoder().decode(bytes)); } catch (e) { throw new SnapshotError(`${name}: ${e.message}`, 'SNAPSHOT_CORRUPT', name); }
  }

  /** BM25 over the terms' shards: `{hits: [{chunk, score}], errors}`. */
  async keyword(query, { k = 10 } = {}) {
    const m = this.manifest;
    const terms = [...new Set(analyze(query))];
    const byShard = new Map();
    for (const t of terms) {
      const s = fnv1a(t) % m.terms.shards;
      byShard.set(s, [...(byShard.get(s) ?? []), t]);
    }
    const errors = [];
    const scores = new Map();
    const n = m.chunks;
    const k1 = m.bm25.k1;
    await Promise.all([...byShard].map(async ([s, ts]) => {
      let shard;
      try { shard = await this.#json(await this.shardName('terms', s)); } catch (e) { errors.push(e); return; }
      for (const t of ts) {
        const list = shard.t?.[t];
        if (!list) continue;
        const df = list[0];
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        let c = 0;
        for (let i = 1; i + 1 < list.length; i += 2) {
          c += list[i];
          scores.set(c, (scores.get(c) ?? 0) + idf * (list[i + 1] / 255) * (k1 + 1));
        }
      }
    }));
    const hits = [...scores].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k).map(([chunk, score]) => ({ chunk, score }));
    return { hits, errors };
  }

  /** Cosine over the int8 IVF lists nearest the query vector: `{hits: [{chunk, score}], errors}`. */
  async semantic(vector, { k = 10, nprobe } = {}) {
    const v = this.manifest.vectors;
    const errors = [];
    if (!v?.lists) return { hits: [], errors };
    const read = (bytes, magic, name) => {
      const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const tag = String.fromCharCode(...bytes.subarray(0, 4));
      const count = bytes.length >= 12 ? dv.getUint32(4, true) : 0;
      const dim = bytes.length >= 12 ? dv.getUint32(8, true) : 0;
      if (tag !== magic || dim !== vector.length || bytes.length !== 12 + count * (8 + dim)) throw new SnapshotError(`${name}: not a ${magic} file of ${vector.length}-d vectors`, 'SNAPSHOT_CORRUPT', name);
      const ids = new Uint32Array(bytes.slice(12, 12 + 4 * count).buffer);
      const scales = new Float32Array(bytes.slice(12 + 4 * count, 12 + 8 * count).buffer);
      const q = new Int8Array(bytes.buffer, bytes.byteOffset + 12 + 8 * count, count * dim);
      const dots = new Float32Array(count);
      for (let i = 0; i < count; i++) {
        let s = 0;
        const o = i * dim;
        for (let j = 0; j < dim; j++) s += q[o + j] * vector[j];
        dots[i] = s * scales[i];
      }
      return { ids, dots };
    };
    let cents;
    try { cents = read(await this.#file(v.centroids), 'WRC1', v.centroids); } catch (e) { errors.push(e); return { hits: [], errors }; }
    const probe = [...cents.dots.keys()].sort((a, b) => cents.dots[b] - cents.dots[a]).slice(0, nprobe ?? v.nprobe);
    const all = [];
    await Promise.all(probe.map(async (l) => {
      try {
        const name = await this.shardName('vectors', l);
        const { ids, dots } = read(await this.#file(name), 'WRV1', name);
        for (let i = 0; i < ids.length; i++) all.push([ids[i], dots[i]]);
      } catch (e) { errors.push(e); }
    }));
    const hits = all.sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k).map(([chunk, score]) => ({ chunk, score }));
    return { hits, errors };
  }

  /** `{title, url, heading, excerpt}` of chunks (fetching their fragment files). */
  async fragments(chunks) {
    const size = this.manifest.fragments.size;
    return Promise.all(chunks.map(async (c) => {
      const name = await this.shardName('fragments', Math.floor(c / size));
      const f = await this.#json(name);
      const row = f.c?.[c % size];
      if (!Array.isArray(row)) throw new SnapshotError(`${name}: no chunk ${c}`, 'SNAPSHOT_CORRUPT', name);
      const [title, url, heading, excerpt] = row;
      return { title, url, heading, excerpt };
    }));
  }

  /**
   * Searches: `mode` 'keyword' (BM25 only), 'semantic' (needs an embedder) or 'hybrid' (default:
   * keyword, plus semantic fused by RRF when an embedder is set). `onKeyword` receives the
   * keyword results as soon as they are ready (before the semantic part). Resolves to `{results:
   * [{chunk, score, title, url, heading, excerpt, found: ['keyword'|'semantic']}], errors}`;
   * results whose fragment file fails are left out (their error is in `errors`).
   */
  async search(query, { k = 10, mode = 'hybrid', onKeyword } = {}) {
    const errors = [];
    const withText = async (hits, found) => {
      const out = [];
      await Promise.all(hits.map(async (h, i) => {
        try { out[i] = { ...h, ...(await this.fragments([h.chunk]))[0], found: found(h.chunk) }; } catch (e) { errors.push(e); }
      }));
      return out.filter(Boolean);
    };
    let kw = { hits: [], errors: [] };
    if (mode !== 'semantic') {
      kw = await this.keyword(query, { k });
      errors.push(...kw.errors);
      if (onKeyword) onKeyword(await withText(kw.hits, () => ['keyword']));
    }
    if (mode === 'keyword' || !this.#embed) {
      if (mode === 'semantic') throw new SnapshotError('semantic search needs an embedder (setEmbedder)', 'SNAPSHOT_NO_EMBEDDER', '');
      return { results: await withText(kw.hits, () => ['keyword']), errors };
    }
    const [qv] = await this.#embed([query]);
    const sem = await this.semantic(qv, { k });
    errors.push(...sem.errors);
    if (mode === 'semantic') return { results: await withText(sem.hits, () => ['semantic']), errors };
    const kwSet = new Set(kw.hits.map((h) => h.chunk));
    const semSet = new Set(sem.hits.map((h) => h.chunk));
    const fused = rrf([kw.hits.map((h) => h.chunk), sem.hits.map((h) => h.chunk)]).slice(0, k).map(([chunk, score]) => ({ chunk, score }));
    const found = (c) => [...(kwSet.has(c) ? ['keyword'] : []), ...(semSet.has(c) ? ['semantic'] : [])];
    return { results: await withText(fused, found), errors };
  }
}
