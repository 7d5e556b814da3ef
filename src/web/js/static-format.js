// The snapshot's files as `webrag/static` reads them (docs/snapshot-format.md): the manifest's
// checks and older formats' migration, gzip, content hashes, the pages file and vector blocks,
// and `SnapshotError`, the loader's typed error for a snapshot's own problems.

/** A snapshot problem; `code` is SNAPSHOT_UNAVAILABLE, SNAPSHOT_CORRUPT, SNAPSHOT_VERSION, SNAPSHOT_NO_EMBEDDER or SNAPSHOT_UNVERIFIED, `file` the file. */
export class SnapshotError extends Error {
  constructor(message, code, file) { super(message); this.name = 'SnapshotError'; this.code = code; this.file = file; }
}

export async function gunzip(bytes) {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer());
}

export const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('');

/**
 * Reads a vector block: `WRC1` (centroids) as `magic` says, or for `magic` `WRV1` a `WRV1` block
 * of int8 values, a `WRV4` block of int4 values packed two to a byte, low four bits first (a
 * static-tier snapshot's lists), or a `WRB1` block of sign bits, eight to a byte, lowest bit
 * first (its graph files), unpacked here (a sign bit as ±1). `{ids, scales, q, count}` with `q`
 * an Int8Array of `count × dim`.
 */
export function readVectors(bytes, magic, name, dim) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = String.fromCharCode(...bytes.subarray(0, 4));
  const count = bytes.length >= 12 ? dv.getUint32(4, true) : 0;
  const d = bytes.length >= 12 ? dv.getUint32(8, true) : 0;
  const int4 = magic === 'WRV1' && tag === 'WRV4';
  const sign = magic === 'WRV1' && tag === 'WRB1';
  const row = int4 ? Math.ceil(dim / 2) : sign ? Math.ceil(dim / 8) : dim;
  if ((tag !== magic && !int4 && !sign) || d !== dim || bytes.length !== 12 + count * (8 + row)) throw new SnapshotError(`${name}: not a ${magic} file of ${dim}-d vectors`, 'SNAPSHOT_CORRUPT', name);
  const at = 12 + 8 * count;
  let q;
  if (int4 || sign) {
    q = new Int8Array(count * dim);
    for (let i = 0; i < count; i++) {
      for (let j = 0; j < dim; j++) {
        const b = bytes[at + i * row + (int4 ? j >> 1 : j >> 3)];
        q[i * dim + j] = int4 ? ((j & 1 ? b >> 4 : b) << 28) >> 28 : (b >> (j & 7)) & 1 ? 1 : -1; // the nibble sign-extended; the sign bit
      }
    }
  } else q = new Int8Array(bytes.buffer, bytes.byteOffset + at, count * dim);
  return {
    count,
    ids: new Uint32Array(bytes.slice(12, 12 + 4 * count).buffer),
    scales: new Float32Array(bytes.slice(12 + 4 * count, 12 + 8 * count).buffer),
    q,
  };
}

/** Dot products of `vector` with every row of a `readVectors` block. */
export function dots({ count, scales, q }, vector) {
  const dim = vector.length;
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    let s = 0;
    const o = i * dim;
    for (let j = 0; j < dim; j++) s += q[o + j] * vector[j];
    out[i] = s * scales[i];
  }
  return out;
}

export const utf8 = (t) => new TextEncoder().encode(t);
/** Byte order of UTF-8 (= code point order), the order of the vocabulary's blocks. */
export function cmpBytes(a, b) {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/**
 * A pages file (`WRP1`): each page's first chunk (`starts`, pages + 1 entries, the last =
 * `chunks`); `of(chunk)` is the chunk's page. Memory is bounded by the file's size, whatever the
 * manifest claims.
 */
export function readPages(bytes, name, pages, chunks) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bad = (why) => { throw new SnapshotError(`${name}: ${why}`, 'SNAPSHOT_CORRUPT', name); };
  if (bytes.length < 8 || String.fromCharCode(...bytes.subarray(0, 4)) !== 'WRP1') bad('not a WRP1 pages file');
  if (dv.getUint32(4, true) !== pages) bad(`${dv.getUint32(4, true)} pages, the manifest says ${pages}`);
  if (pages > bytes.length - 8) bad('truncated'); // a count takes a byte at least
  const starts = new Float64Array(pages + 1);
  let at = 8;
  for (let p = 0; p < pages; p++) {
    let n = 0;
    for (let shift = 0; ; shift += 7) {
      if (at >= bytes.length || shift > 28) bad('truncated');
      const b = bytes[at++];
      n += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) break;
    }
    starts[p + 1] = starts[p] + n;
  }
  if (starts[pages] !== chunks || at !== bytes.length) bad(`${starts[pages]} chunks, the manifest says ${chunks}`);
  const of = (c) => {
    if (!(c >= 0 && c < chunks)) return undefined;
    let lo = 0;
    let hi = pages - 1;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (starts[mid] <= c) lo = mid; else hi = mid - 1; }
    return lo;
  };
  return { starts, of };
}

/** The widest vectors a snapshot may declare (`model.dim`): no sentence encoder is wider. */
export const MAX_DIM = 8192;

/**
 * Checks the fields of a manifest (format 3 shape, after `migrate`) that this loader reads, so a
 * damaged or foreign manifest is a SNAPSHOT_CORRUPT at open instead of a TypeError in a search.
 */
export function checkManifest(m) {
  const bad = (what) => { throw new SnapshotError(`manifest.json: ${what}`, 'SNAPSHOT_CORRUPT', 'manifest.json'); };
  const obj = (v, what) => (v && typeof v === 'object' && !Array.isArray(v) ? v : bad(`${what} is not an object`));
  const int = (v, what, min = 0, max = Number.MAX_SAFE_INTEGER) => { if (!Number.isSafeInteger(v) || v < min || v > max) bad(`${what} is not an integer in ${min}..=${max}`); };
  const num = (v, what) => { if (typeof v !== 'number' || !Number.isFinite(v)) bad(`${what} is not a number`); };
  const names = (v, what) => { if (!Array.isArray(v) || !v.every((f) => typeof f === 'string')) bad(`${what} is not a list of file names`); };
  const series = (k, what) => {
    obj(k, what);
    if (k.files !== undefined) names(k.files, `${what}.files`); // format 1: every shard named
    else {
      if (typeof k.ext !== 'string') bad(`${what}.ext is not a string`);
      names(k.dirs, `${what}.dirs`);
      int(obj(m.directory, 'directory').group, 'directory.group', 1);
    }
  };
  int(m.documents, 'documents');
  int(m.chunks, 'chunks');
  int(obj(m.model, 'model').dim, 'model.dim', 1, MAX_DIM); // a query vector of that many floats is made before any file is read
  for (const f of ['avgdl', 'k1', 'b']) num(obj(m.bm25, 'bm25')[f], `bm25.${f}`);
  series(m.terms, 'terms');
  int(m.terms.shards, 'terms.shards', 1);
  series(m.fragments, 'fragments');
  int(m.fragments.size, 'fragments.size', 1);
  int(m.fragments.count, 'fragments.count');
  if (m.fusion != null) {
    num(obj(m.fusion, 'fusion').rrfK, 'fusion.rrfK');
    if (m.fusion.weights != null) for (const w of ['bm25', 'dense', 'graph']) num(obj(m.fusion.weights, 'fusion.weights')[w], `fusion.weights.${w}`);
  }
  if (m.pages != null && typeof m.pages !== 'string') bad('pages is not a file name');
  if (m.siteRoot != null && typeof m.siteRoot !== 'string') bad('siteRoot is not a string');
  for (const f of ['filters', 'sort']) {
    if (m[f] == null) continue;
    if (!Array.isArray(m[f])) bad(`${f} is not a list`);
    m[f].forEach((x, i) => {
      if (typeof obj(x, `${f}[${i}]`).key !== 'string' || typeof x.file !== 'string') bad(`${f}[${i}] has no key and file`);
    });
  }
  if (m.languages != null) {
    const l = obj(m.languages, 'languages');
    if (!Array.isArray(l.values)) bad('languages.values is not a list');
    l.values.forEach((v, i) => {
      if (typeof obj(v, `languages.values[${i}]`).lang !== 'string' || typeof v.stemmed !== 'boolean') bad(`languages.values[${i}] has no lang and stemmed`);
      int(v.pages, `languages.values[${i}].pages`);
    });
    if (l.file != null && typeof l.file !== 'string') bad('languages.file is not a file name');
  }
  if (m.words != null) {
    series(m.words, 'words');
    int(m.words.blocks, 'words.blocks');
    if (typeof m.words.index !== 'string') bad('words.index is not a file name');
  }
  if (m.vectors != null) {
    series(m.vectors, 'vectors');
    int(m.vectors.lists, 'vectors.lists');
    if (m.vectors.lists > 0) {
      if (typeof m.vectors.centroids !== 'string') bad('vectors.centroids is not a file name');
      int(m.vectors.nprobe, 'vectors.nprobe', 1);
    }
  }
  if (m.static != null) {
    const t = obj(m.static, 'static');
    series(t.vocab, 'static.vocab');
    int(t.vocab.shards, 'static.vocab.shards', 1);
    series(t.rows, 'static.rows');
    int(t.rows.count, 'static.rows.count', 1);
    int(t.rows.perFile, 'static.rows.perFile', 1);
    const w = obj(t.wordpiece, 'static.wordpiece');
    for (const f of ['cleanText', 'chinese', 'stripAccents', 'lowercase']) if (typeof w[f] !== 'boolean') bad(`static.wordpiece.${f} is not a boolean`);
    int(w.unk, 'static.wordpiece.unk');
    int(w.maxWordChars, 'static.wordpiece.maxWordChars');
    if (typeof w.prefix !== 'string') bad('static.wordpiece.prefix is not a string');
    if (!Array.isArray(w.added) || !w.added.every((a) => Array.isArray(a) && typeof a[0] === 'string' && Number.isSafeInteger(a[1]))) bad('static.wordpiece.added is not a list of [text, id]');
  }
  if (m.graph != null) {
    series(m.graph, 'graph');
    for (const f of ['topics', 'seedTopics', 'maxTopics']) int(m.graph[f], `graph.${f}`);
    num(m.graph.linkDecay, 'graph.linkDecay');
    const p = obj(m.graph.pgr, 'graph.pgr');
    for (const f of ['support', 'continueThreshold']) num(p[f], `graph.pgr.${f}`);
    for (const f of ['anchors', 'topRows']) int(p[f], `graph.pgr.${f}`, 1);
  }
  return m;
}

/** `e` as a SnapshotError: a decoder's TypeError or RangeError on damaged bytes is corruption of `file`. */
export function asSnapshotError(e, file = '') {
  return e instanceof SnapshotError ? e : new SnapshotError(`${file || 'snapshot'}: ${e?.message ?? e}`, 'SNAPSHOT_CORRUPT', file);
}

/**
 * A manifest of an older format in the shape of format 3 (docs/snapshot-format.md, "Versions"):
 * format 2 lacks the graph series (no graph search) and the fragments' page number; format 1
 * lists every shard's name in the manifest (`files`) instead of directory pages. What those
 * snapshots hold is read as written; rebuilding with `webrag index` brings the graph stage.
 */
export function migrate(m) {
  if (m.version === 3) return m;
  const out = structuredClone(m);
  if (m.version === 1) out.fragments.count = m.fragments.files?.length ?? 0;
  out.vectors &&= { questions: 0, ...out.vectors };
  delete out.graph;
  return out;
}
