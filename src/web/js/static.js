// webrag static-site search: loads a snapshot written by `webrag index <site> --out <site>/webrag`
// (manifest.json + content-hashed shards) and fetches only what a query needs. Keyword search
// (BM25) is plain JavaScript — no WebAssembly, no model — so the first results come after a few
// kilobytes; semantic search joins once an embedder is set (`setEmbedder`, e.g. WebRag's
// `rag.embed`), reading the int8 IVF centroids and the `nprobe` nearest lists; graph results
// (PG-RAG's PGR over the mind maps of the pages the first hits come from and of their
// neighbours) join with them. `importOffline()` copies the whole snapshot into IndexedDB, after
// which the same site searches with no network.
//
// Errors are `SnapshotError`s with a stable `code`: SNAPSHOT_UNAVAILABLE (a file could not be
// fetched), SNAPSHOT_CORRUPT (hash mismatch, truncated gzip, bad JSON or binary), SNAPSHOT_VERSION
// (a manifest this loader does not read), SNAPSHOT_UNVERIFIED (`requireIntegrity` in a page that
// cannot check hashes). Results' page URLs are links only when safe (`safeUrl`). A shard that fails does not fail the search: its error
// is reported in `errors` and the other shards' results stand.

import { createStore, get, getMany, setMany, clear } from 'idb-keyval';
import { analyze, analyzeQuery, clipQuery, editDistance, fnv1a, highlight, isCjk, option, phrase, sectionUrl, typoBudget, MAX_QUERY_CHARS } from './static-text.js';
import { staticEmbed } from './static-embed.js';
import { bySort, capPerPage, pgrRows, rank, rrf, PER_PAGE } from './static-rank.js';
import { StaticSearchGroup, MERGE_RRF_K } from './static-merge.js';
import { Fields, filterOption, sortOption } from './static-fields.js';
import { Languages } from './static-stem.js';
import { Vocabulary, MAX_CORRECTIONS, MAX_TYPO_WORDS } from './static-words.js';
import { SnapshotError, asSnapshotError, checkManifest, dots, gunzip, hex, migrate, readPages, readVectors } from './static-format.js';

export { SnapshotError };

export { StaticSearchGroup, MERGE_RRF_K };

export { analyze, analyzeQuery, editDistance, fnv1a, highlight, pgrRows, phrase, rrf, sectionUrl, typoBudget, MAX_CORRECTIONS, MAX_QUERY_CHARS, MAX_TYPO_WORDS };

/** The first `k` of `sorted` hits, cut per page when `perPage` (`{pageOf, max}`) is given. */
const cut = (sorted, k, perPage, keep) => {
  const kept = keep ? sorted.filter(([c]) => keep(c)) : sorted;
  return perPage ? capPerPage(kept, k, perPage.pageOf, perPage.max) : kept.slice(0, k);
};

/** `results` with each one's `sortValue` (its page's value of the sort key), when sorted. */
function withSortValues(results, order) {
  if (order) for (const r of results) { const v = order.value(r.page); if (v !== undefined) r.sortValue = v; }
  return results;
}

/** The IndexedDB store of an imported snapshot (one database per snapshot URL). */
const offlineStore = (base) => createStore(`webrag-snapshot ${base}`, 'files');
const SERIES = { terms: 't', fragments: 'f', vectors: 'v', graph: 'g', words: 'w', vocab: 'k', tokenRows: 's' };

/**
 * A result's page URL as a snapshot gives it, if it is safe to put in a link: relative, `http:`
 * or `https:` (parsed as a browser parses an `href`, so `java\tscript:` is caught too). Anything
 * else (`javascript:`, `data:`, not a string) is `null`.
 */
let warnedUnverified = false;

export function safeUrl(u) {
  if (typeof u !== 'string') return null;
  try {
    const p = new URL(u, 'https://relative.invalid/');
    return p.protocol === 'http:' || p.protocol === 'https:' ? u : null;
  } catch { return null; }
}


/** `typos`: a boolean, default true; otherwise a `RangeError` naming it. */
function typoOption(typos) {
  if (typos === undefined) return true;
  if (typeof typos !== 'boolean') throw new RangeError(`webrag/static: option typos must be true or false (got ${typeof typos === 'string' ? `'${typos}'` : String(typos)})`);
  return typos;
}

/**
 * The site's root: `root` (a manifest's `siteRoot` or `open`'s `siteUrl`) read from the snapshot
 * folder `base`; the origin's root when it is not an http(s) URL or the snapshot's own scheme.
 */
function siteRootUrl(root, base) {
  try {
    const u = new URL(root, base);
    if (u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === new URL(base).protocol) return u.href.replace(/[?#].*$/, '').replace(/\/?$/, '/');
  } catch { /* below */ }
  return new URL('/', base).href;
}

/** A static-site snapshot, loaded lazily. */
export class StaticSearch {
  #base; #fetch; #cache = new Map(); #embed = null; #idb = null; #pagesOf = null; #fields = null; #langs = null; #words = null;
  /** The manifest. */ manifest;
  /**
   * The site's root URL, which `link()` resolves page URLs against: `open`'s `siteUrl`, else the
   * manifest's `siteRoot` (`../` for a snapshot in `<site>/webrag/`) read from the snapshot's
   * folder, else the origin's root.
   */
  siteUrl;
  /** Bytes fetched from the network so far (compressed, as transferred), and files. */ transferred = { bytes: 0, files: 0 };
  /** Files read from the IndexedDB copy (`importOffline`) instead of the network. */ offlineReads = 0;
  /**
   * Whether shards are checked against the hash in their names: `'sha256'`, or `'unchecked'`
   * where the page has no `crypto.subtle` (an insecure context: plain http on a host other than
   * localhost). `open(…, {requireIntegrity: true})` refuses to open then (SNAPSHOT_UNVERIFIED).
   */
  integrity = globalThis.crypto?.subtle ? 'sha256' : 'unchecked';

  constructor(base, manifest, fetchFn, idb) { this.#base = base; this.manifest = manifest; this.#fetch = fetchFn; this.#idb = idb; }

  /**
   * Opens the snapshot at `baseUrl` (the folder holding manifest.json). `fetch` may be replaced
   * (tests, service workers). With `offline` (default true), a copy imported earlier by
   * `importOffline()` is used: its files are read from IndexedDB, and when the manifest cannot be
   * fetched (no network) the imported manifest is used instead. `siteUrl` (a URL or path, read
   * from the snapshot's folder) overrides the manifest's `siteRoot` for `link()`; a `TypeError`
   * when it is not a string. `stemmer`: where the stemmer modules are (a folder URL holding
   * `<tag>.wasm`, a function `tag → URL | bytes`, or one module's bytes; default the `stem/`
   * folder beside this file), a language's fetched at the first search in it of a snapshot
   * whose pages are in it. An array of snapshots opens them as one `StaticSearchGroup`
   * (`#openGroup`).
   */
  static async open(baseUrl, opts = {}) {
    if (Array.isArray(baseUrl)) return StaticSearch.#openGroup(baseUrl, opts);
    return StaticSearch.#open(baseUrl, opts);
  }

  /**
   * Several snapshots as one (`open([...])`): each entry a snapshot folder's URL or `{url,
   * weight, siteUrl}` (`weight` > 0, default 1: its share in the fusion of the page lists;
   * `siteUrl`: where its site is served, as `open`'s); the other options apply to all. Rejects
   * with the first snapshot's error that cannot be opened; a `RangeError` for an empty list, a
   * bad entry or weight.
   */
  static async #openGroup(list, opts) {
    if (list.length === 0) throw new RangeError('webrag/static: open([]) needs at least one snapshot');
    const entries = list.map((e, i) => {
      const { url, weight = 1, siteUrl } = typeof e === 'string' || e instanceof URL ? { url: e } : (e ?? {});
      if (typeof url !== 'string' && !(url instanceof URL)) throw new RangeError(`webrag/static: snapshot ${i} has no url`);
      if (typeof weight !== 'number' || !(weight > 0) || !Number.isFinite(weight)) throw new RangeError(`webrag/static: snapshot ${i}'s weight must be a number > 0 (got ${String(weight)})`);
      return { url, weight, siteUrl: siteUrl ?? opts.siteUrl };
    });
    const opened = await Promise.all(entries.map((e) => StaticSearch.#open(e.url, { ...opts, siteUrl: e.siteUrl })));
    return new StaticSearchGroup(opened, entries.map((e) => e.weight));
  }

  static async #open(baseUrl, { fetch: fetchFn = globalThis.fetch.bind(globalThis), offline = true, requireIntegrity = false, siteUrl, stemmer } = {}) {
    if (siteUrl !== undefined && typeof siteUrl !== 'string') throw new TypeError('webrag/static: siteUrl is not a string');
    if (!globalThis.crypto?.subtle) {
      const message = 'this page has no crypto.subtle (an insecure context): snapshot shards cannot be checked against their hashes';
      if (requireIntegrity) throw new SnapshotError(message, 'SNAPSHOT_UNVERIFIED', 'manifest.json');
      if (!warnedUnverified) console.warn(`webrag/static: ${message}`);
      warnedUnverified = true;
    }
    const base = new URL(baseUrl, globalThis.location?.href).href.replace(/\/?$/, '/');
    let idb = null;
    if (offline && globalThis.indexedDB) {
      // Only open the database when an import made it (no empty database per visitor).
      const names = indexedDB.databases ? (await indexedDB.databases()).map((d) => d.name) : null;
      if (!names || names.includes(`webrag-snapshot ${base}`)) idb = offlineStore(base);
    }
    let text;
    let fromNetwork = true;
    try {
      let res;
      try { res = await fetchFn(`${base}manifest.json`); } catch (e) { throw new SnapshotError(`manifest.json: ${e.message}`, 'SNAPSHOT_UNAVAILABLE', 'manifest.json'); }
      if (!res.ok) throw new SnapshotError(`manifest.json: HTTP ${res.status}`, 'SNAPSHOT_UNAVAILABLE', 'manifest.json');
      text = await res.text();
    } catch (e) {
      const saved = idb && await get('manifest.json', idb).catch(() => undefined);
      if (!saved) throw e;
      text = saved;
      fromNetwork = false;
    }
    let m;
    try { m = JSON.parse(text); } catch (e) { throw new SnapshotError(`manifest.json: ${e.message}`, 'SNAPSHOT_CORRUPT', 'manifest.json'); }
    if (m?.format !== 'webrag-snapshot' || ![1, 2, 3].includes(m.version)) throw new SnapshotError(`manifest.json: format ${m?.format} version ${m?.version} is not webrag-snapshot 1, 2 or 3`, 'SNAPSHOT_VERSION', 'manifest.json');
    let checked;
    try { checked = checkManifest(migrate(m)); } catch (e) { throw asSnapshotError(e, 'manifest.json'); }
    const s = new StaticSearch(base, checked, fetchFn, idb);
    s.siteUrl = siteRootUrl(siteUrl ?? checked.siteRoot ?? '/', base);
    if (stemmer !== undefined) s.stemmer = stemmer;
    if (checked.static) s.#embed = (texts) => s.staticEmbed(texts);
    if (fromNetwork) {
      s.transferred.bytes += new TextEncoder().encode(text).length;
      s.transferred.files += 1;
    } else s.offlineReads += 1;
    return s;
  }

  /**
   * Sets the query embedder for semantic and graph search: `async (texts) => number[][]` (unit
   * vectors of the snapshot's model). A snapshot with the static tier (`--vectors static`) has
   * one already: `staticEmbed`.
   */
  setEmbedder(embed) { this.#embed = embed; }

  /**
   * The static tier's embedder (a snapshot built with `--vectors static`; `static-embed.js`):
   * texts → unit vectors from a few kilobytes of shards per query, no model, no WebAssembly.
   */
  staticEmbed(texts) {
    return staticEmbed(texts, this.manifest, { json: (name) => this.#json(name), file: (name) => this.#file(name), shardName: (kind, i) => this.shardName(kind, i) });
  }

  /** A file's bytes as stored (compressed): from the IndexedDB copy if it holds them, else fetched. */
  async #raw(name) {
    if (this.#idb) {
      const saved = await get(name, this.#idb).catch(() => undefined);
      if (saved instanceof Uint8Array) { this.offlineReads += 1; return saved; }
    }
    let res;
    try { res = await this.#fetch(this.#base + name); } catch (e) { throw new SnapshotError(`${name}: ${e.message}`, 'SNAPSHOT_UNAVAILABLE', name); }
    if (!res.ok) throw new SnapshotError(`${name}: HTTP ${res.status}`, 'SNAPSHOT_UNAVAILABLE', name);
    const raw = new Uint8Array(await res.arrayBuffer());
    this.transferred.bytes += raw.length;
    this.transferred.files += 1;
    return raw;
  }

  /** Checks a file's bytes against the hash in its name (`…-{8 hex}.…`). */
  static async #check(name, raw) {
    const want = /-([0-9a-f]{12}|[0-9a-f]{8})\./.exec(name)?.[1]; // 12 hex digits in format 1
    if (want && globalThis.crypto?.subtle) {
      const got = hex(await crypto.subtle.digest('SHA-256', raw)).slice(0, want.length);
      if (got !== want) throw new SnapshotError(`${name}: content hash ${got} does not match its name`, 'SNAPSHOT_CORRUPT', name);
    }
  }

  /** Fetches a shard once (cached by its content-hashed name), checks its hash, gunzips it (`gz`). */
  #file(name, gz = true) {
    const key = `${gz ? 'z' : 'r'}:${name}`;
    if (!this.#cache.has(key)) {
      const p = (async () => {
        const raw = await this.#raw(name);
        await StaticSearch.#check(name, raw);
        if (!gz) return raw;
        try { return await gunzip(raw); } catch (e) { throw new SnapshotError(`${name}: ${e.message}`, 'SNAPSHOT_CORRUPT', name); }
      })();
      p.catch(() => this.#cache.delete(key)); // a failed fetch may be retried
      this.#cache.set(key, p);
    }
    return this.#cache.get(key);
  }

  /**
   * The file name of shard `i` of a series (`terms`, `fragments`, `vectors`, `graph`): its
   * directory page (fetched once, cached) holds the 4-byte hash that ends the name.
   */
  async shardName(kind, i) {
    const k = kind === 'vocab' ? this.manifest.static?.vocab : kind === 'tokenRows' ? this.manifest.static?.rows : this.manifest[kind];
    const prefix = SERIES[kind];
    if (k?.files) { // format 1: the manifest lists every shard
      if (!k.files[i]) throw new SnapshotError(`${kind} ${i}: no such shard`, 'SNAPSHOT_CORRUPT', 'manifest.json');
      return k.files[i];
    }
    const group = this.manifest.directory?.group;
    const page = k?.dirs?.[Math.floor(i / group)];
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

  /** Every file of the snapshot (directory pages read to name the shards), manifest excluded. */
  async files() {
    const m = this.manifest;
    const names = [];
    const counts = { terms: m.terms.shards, fragments: m.fragments.count, vectors: m.vectors?.lists ?? 0, graph: m.graph?.topics ?? 0, words: m.words?.blocks ?? 0,
      vocab: m.static?.vocab.shards ?? 0, tokenRows: m.static ? Math.ceil(m.static.rows.count / m.static.rows.perFile) : 0 };
    const dirs = { vocab: m.static?.vocab.dirs, tokenRows: m.static?.rows.dirs };
    for (const [kind, n] of Object.entries(counts)) {
      names.push(...((dirs[kind] ?? m[kind]?.dirs) ?? []));
      for (let i = 0; i < n; i++) names.push(await this.shardName(kind, i));
    }
    if (m.vectors?.centroids) names.push(m.vectors.centroids);
    if (m.pages) names.push(m.pages);
    if (m.words?.index) names.push(m.words.index);
    for (const f of [...(m.filters ?? []), ...(m.sort ?? [])]) names.push(f.file);
    if (m.languages?.file) names.push(m.languages.file);
    return names;
  }

  /**
   * Copies the whole snapshot into IndexedDB (database `webrag-snapshot {snapshot URL}`) for
   * offline use: every file is fetched, checked against its hash and stored as fetched; the
   * manifest goes last, so an interrupted import is never taken for a complete one (the files
   * it stored are kept and count next time: names are content hashes), and with it the stemmer
   * modules of the snapshot's stemmed languages. `onProgress({done,
   * total, bytes})` after each batch. Resolves to `{files, bytes}`; a file that cannot be
   * fetched or fails its check rejects with its `SnapshotError`.
   */
  async importOffline({ onProgress } = {}) {
    const store = this.#idb ?? offlineStore(this.#base);
    const names = await this.files();
    const have = new Set((await getMany(names, store)).map((v, i) => (v instanceof Uint8Array ? names[i] : null)).filter(Boolean));
    let bytes = 0;
    let done = 0;
    for (let i = 0; i < names.length; i += 32) {
      const batch = names.slice(i, i + 32);
      const rows = await Promise.all(batch.filter((n) => !have.has(n)).map(async (n) => {
        const raw = await this.#raw(n);
        await StaticSearch.#check(n, raw);
        bytes += raw.length;
        return [n, raw];
      }));
      await setMany(rows, store);
      done += batch.length;
      onProgress?.({ done, total: names.length, bytes });
    }
    // The stemmer modules too, of the snapshot's stemmed languages (searched offline).
    await setMany(await this.#languages().modules(), store);
    await setMany([['manifest.json', JSON.stringify(this.manifest)]], store);
    this.#idb = store;
    return { files: names.length + 1, bytes };
  }

  /** Deletes the IndexedDB copy made by `importOffline` (later reads use the network). */
  async removeOffline() {
    await clear(this.#idb ?? offlineStore(this.#base));
    this.#idb = null;
  }

  /**
   * The completions of `prefix` in the snapshot's vocabulary (its words blocks; none in older
   * snapshots): up to `max` terms that start with it, most frequent first, `prefix` itself left
   * out.
   */
  async completions(prefix, { max } = {}) {
    return this.#vocabulary().completions(prefix, option('max', max));
  }

  /**
   * The vocabulary's nearest words to `term`, a query word with no postings (typo tolerance):
   * `[{term, edits}]`, fewest edits first, then the most frequent (`Vocabulary.corrections`).
   */
  async corrections(term) {
    return this.#vocabulary().corrections(term);
  }

  /** The snapshot's languages and their stemmers (`static-stem.js`), made once. */
  #languages() {
    this.#langs ??= new Languages(this.manifest.languages, {
      stemmer: () => this.stemmer,
      fetch: this.#fetch,
      saved: async (key) => (this.#idb ? get(key, this.#idb).catch(() => undefined) : undefined),
      json: (name) => this.#json(name),
      pageOf: async () => { const m = await this.#pageMap(); return (c) => m.of(c); },
      documents: this.manifest.documents,
    });
    return this.#langs;
  }

  /** The snapshot's words blocks (`static-words.js`), made once. */
  #vocabulary() {
    this.#words ??= new Vocabulary(this.manifest.words, (name) => this.#json(name), (kind, i) => this.shardName(kind, i));
    return this.#words;
  }

  /**
   * BM25 over the terms' shards: `{hits: [{chunk, score}], errors, corrections}`. While the last
   * word is being typed (`prefix`, default: the query ends in a letter or digit) and has 2
   * characters or more, it also matches its completions (`completions`): a chunk scores its best
   * of the word and its completions. With `typos` (default true), a word with no postings
   * matches its `corrections` (see `search`).
   */
  async keyword(query, { k, prefix, typos, lang } = {}) {
    const errors = [];
    const scope = await this.#languages().scope(lang, errors);
    const kw = await this.#keyword(query, option('k', k), prefix ?? /[\p{Alphabetic}\p{N}]$/u.test(query), { typos: typoOption(typos), ...scope });
    return { ...kw, errors: [...errors, ...kw.errors] };
  }

  /**
   * `perPage`: `{pageOf, max}` to cut the hits as `capPerPage` does (a page search's lists);
   * `keep(chunk)`: whether a chunk may be a hit (a search's filters); `pages`: also resolve to
   * `pages`, the set of pages of every chunk that matched (before `keep` and the cut: facet
   * counts).
   * `typos`: a query word with no postings matches its `corrections`, a chunk taking its best of
   * them at `1 / (1 + edits)` of an exact match's score (so below the pages that match the
   * query's words as typed); `corrections` in the result maps each such word to the words used.
   */
  async #keyword(query, k, prefix, { perPage, typos = true, keep, pages = false, stem = null, raw = false, unstemmed = false } = {}) {
    const m = this.manifest;
    const all = analyzeQuery(query, stem);
    const terms = [...new Set(all)];
    const errors = [];
    // A stemmed word also matches as written (`raw`: the pages that name no language), a chunk
    // taking its better of the two: stem → its forms as written.
    const written = new Map();
    // Each stemmed term's word as typed (the first), which `corrections` is keyed by.
    const typedAs = new Map();
    if (stem) {
      const as = analyzeQuery(query);
      all.forEach((t, i) => {
        if (as[i] === undefined || as[i] === t) return;
        if (!typedAs.has(t)) typedAs.set(t, as[i]);
        if (raw) written.set(t, [...new Set([...(written.get(t) ?? []), as[i]])]);
      });
    }
    // Without the language's stemmer (`unstemmed`: its module did not load), a word also matches
    // its stem as the vocabulary has it, a chunk taking its better of the two (`Vocabulary.stem`).
    if (unstemmed) {
      await Promise.all(terms.map(async (t) => {
        let p = null;
        try { p = await this.#vocabulary().stem(t); } catch (e) { errors.push(asSnapshotError(e)); }
        if (p) written.set(t, [p]);
      }));
    }
    // The word being typed: its completions form one group with it (a chunk takes their best).
    // The query's last term, which may repeat an earlier one (`line by line`), not the last
    // distinct term (`by`).
    const last = all.at(-1);
    let group = [];
    if (prefix && last && !isCjk(last.codePointAt(0)) && [...last].length >= 2) {
      try {
        group = (await this.completions(last)).filter((t) => !terms.includes(t));
        // A stemmed vocabulary has `hunt`, not `hunting`: a word typed part way ("huntin") that
        // neither is a term nor begins one is completed from its first letters, one to three
        // fewer (at least 3 kept), where the first of them begins a term (or is one).
        const isTerm = (t) => this.#vocabulary().has(t);
        if ((stem || unstemmed) && !group.length && !(await isTerm(last))) {
          const chars = [...analyzeQuery(query).at(-1)];
          for (let cut = 1; cut <= 3 && chars.length - cut >= 3 && !group.length; cut++) {
            const p = chars.slice(0, -cut).join('');
            group = [...((await isTerm(p)) ? [p] : []), ...(await this.completions(p))].filter((t) => t !== last && !terms.includes(t));
          }
        }
      } catch (e) { errors.push(asSnapshotError(e)); }
    }
    const scores = new Map();
    const n = m.chunks;
    const k1 = m.bm25.k1;
    // Each term's postings, read shard by shard: `visit(term, chunk, score)` for each; the
    // terms whose shard was read and holds no postings for them.
    const read = async (ts, visit) => {
      const byShard = new Map();
      for (const t of ts) {
        const s = fnv1a(t) % m.terms.shards;
        byShard.set(s, [...(byShard.get(s) ?? []), t]);
      }
      const missing = [];
      await Promise.all([...byShard].map(async ([s, group]) => {
        let shard;
        try { shard = await this.#json(await this.shardName('terms', s)); } catch (e) { errors.push(asSnapshotError(e)); return; }
        for (const t of group) {
          const list = shard.t?.[t];
          if (!list) { missing.push(t); continue; }
          const df = list[0];
          const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
          let c = 0;
          for (let i = 1; i + 1 < list.length; i += 2) {
            c += list[i];
            visit(t, c, idf * (list[i + 1] / 255) * (k1 + 1));
          }
        }
      }));
      return missing;
    };
    // `groups`: chunk → its best score within each group of alternatives (the word being typed
    // and its completions; a misspelled word's corrections), added to its score once.
    const best = (into, c, sc) => into.set(c, Math.max(into.get(c) ?? 0, sc));
    const typed = new Map();
    // A stemmed word and its forms as written: one group (`alts`, by the stemmed word).
    const writtenOf = new Map(); // a form as written → the stemmed words it stands for
    for (const [t, ws] of written) for (const w of ws) writtenOf.set(w, [...(writtenOf.get(w) ?? []), t]);
    const alts = new Map();
    const altOf = (t) => { if (!alts.has(t)) alts.set(t, new Map()); return alts.get(t); };
    const inTyped = (t) => group.length > 0 && (t === last || group.includes(t) || (writtenOf.get(t) ?? []).includes(last));
    const forms = [...writtenOf.keys()].filter((w) => !terms.includes(w) && !group.includes(w));
    const missing = await read([...terms, ...group, ...forms], (t, c, sc) => {
      if (inTyped(t)) { best(typed, c, sc); return; }
      if (written.has(t)) best(altOf(t), c, sc);
      else if (terms.includes(t)) scores.set(c, (scores.get(c) ?? 0) + sc);
      for (const g of writtenOf.get(t) ?? []) best(altOf(g), c, sc);
    });
    const add = (g) => { for (const [c, sc] of g) scores.set(c, (scores.get(c) ?? 0) + sc); };
    add(typed);
    for (const g of alts.values()) add(g);
    // Typo tolerance: the words with no postings (the word being typed too, when no completion
    // has any), in query order, at most MAX_TYPO_WORDS of them.
    const corrections = {};
    if (typos && m.words?.blocks) {
      const matched = (t) => !missing.includes(t) || (written.get(t) ?? []).some((w) => !missing.includes(w));
      const wrong = terms.filter((t) => !matched(t) && !(t === last && group.length > 0) && typoBudget(t) > 0).slice(0, MAX_TYPO_WORDS);
      const found = await Promise.all(wrong.map(async (t) => {
        try { return [t, await this.corrections(t)]; } catch (e) { errors.push(asSnapshotError(e)); return [t, []]; }
      }));
      const fixes = new Map(); // correction → [its groups' scores, 1 / (1 + edits)]
      for (const [t, near] of found.filter(([, near]) => near.length > 0)) {
        corrections[typedAs.get(t) ?? t] = near.map((c) => c.term);
        const g = new Map();
        for (const c of near) fixes.set(c.term, [...(fixes.get(c.term) ?? []), [g, 1 / (1 + c.edits)]]);
      }
      await read([...fixes.keys()], (t, c, sc) => { for (const [g, w] of fixes.get(t)) best(g, c, sc * w); });
      for (const g of new Set([...fixes.values()].flat().map(([g]) => g))) add(g);
    }
    const sorted = [...scores].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    const hits = cut(sorted, k, perPage, keep).map(([chunk, score]) => ({ chunk, score }));
    const matched = pages && perPage ? new Set(sorted.map(([c]) => perPage.pageOf(c))) : null;
    return { hits, errors, corrections, pages: matched };
  }

  /** Cosine over the int8 IVF lists nearest the query vector: `{hits: [{chunk, score}], errors}`. */
  async semantic(vector, { k, nprobe } = {}) {
    const lists = this.manifest.vectors?.lists ?? 0;
    if (nprobe !== undefined && !(Number.isInteger(nprobe) && nprobe >= 1 && nprobe <= Math.max(1, lists))) {
      throw new RangeError(`webrag/static: option nprobe must be an integer in 1..=${Math.max(1, lists)} (the snapshot's IVF lists; got ${typeof nprobe === 'number' || nprobe === null ? String(nprobe) : typeof nprobe})`);
    }
    return this.#semantic(vector, option('k', k), nprobe);
  }

  async #semantic(vector, k, nprobe, perPage, keep) {
    const v = this.manifest.vectors;
    const errors = [];
    if (!v?.lists) return { hits: [], errors };
    let cents;
    try { cents = dots(readVectors(await this.#file(v.centroids), 'WRC1', v.centroids, vector.length), vector); } catch (e) { errors.push(asSnapshotError(e, v.centroids)); return { hits: [], errors }; }
    const probe = [...cents.keys()].sort((a, b) => cents[b] - cents[a]).slice(0, nprobe ?? v.nprobe);
    const best = new Map(); // chunk → its best row (a chunk's own vector or one of its atomic questions)
    await Promise.all(probe.map(async (l) => {
      try {
        const name = await this.shardName('vectors', l);
        const block = readVectors(await this.#file(name), 'WRV1', name, vector.length);
        const d = dots(block, vector);
        for (let i = 0; i < block.count; i++) if (!(best.get(block.ids[i]) >= d[i])) best.set(block.ids[i], d[i]);
      } catch (e) { errors.push(asSnapshotError(e)); }
    }));
    const hits = cut([...best].sort((a, b) => b[1] - a[1] || a[0] - b[0]), k, perPage, keep).map(([chunk, score]) => ({ chunk, score }));
    return { hits, errors };
  }

  /** A page's graph file: `{chunk0, nodes: [[parent, kind, label, chunk]…], links, vectors}`. */
  async #topic(page, dim) {
    const name = await this.shardName('graph', page);
    const bytes = await this.#file(name);
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const len = bytes.length >= 8 ? dv.getUint32(4, true) : 0;
    if (String.fromCharCode(...bytes.subarray(0, 4)) !== 'WRG1' || bytes.length < 8 + len) throw new SnapshotError(`${name}: not a WRG1 graph file`, 'SNAPSHOT_CORRUPT', name);
    let t;
    try { t = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + len))); } catch (e) { throw new SnapshotError(`${name}: ${e.message}`, 'SNAPSHOT_CORRUPT', name); }
    const vectors = readVectors(bytes.subarray(8 + len), 'WRV1', name, dim);
    if (vectors.count !== t.nodes?.length) throw new SnapshotError(`${name}: ${t.nodes?.length} nodes but ${vectors.count} vectors`, 'SNAPSHOT_CORRUPT', name);
    return { ...t, vectors, page };
  }

  /**
   * Graph search (PG-RAG's PGR, docs/pseudo-graph.md) over the snapshot's mind maps: the pages
   * `seedPages` (e.g. those of the first keyword and semantic hits; `seedTopics` of them) are the
   * seed topics; their neighbours (super-topic siblings, mentions, shared entities), ranked by
   * the query's similarity to the seed node that links to them, are taken round-robin up to
   * `maxTopics`; PGR then selects fact paths over all their mind maps with the query as the key
   * point. Resolves to `{hits: [{chunk, score, path: [topic, route…, fact]}], topics, errors}`
   * (one hit per chunk, its best path).
   */
  async graph(vector, seedPages, { k } = {}) {
    return this.#graph(vector, seedPages, option('k', k));
  }

  async #graph(vector, seedPages, k) {
    const g = this.manifest.graph;
    const errors = [];
    if (!g?.topics) return { hits: [], topics: [], errors };
    const load = async (pages) => (await Promise.all(pages.map((p) => this.#topic(p, vector.length).catch((e) => { errors.push(asSnapshotError(e)); return null; })))).filter(Boolean);
    const seeds = await load([...new Set(seedPages)].slice(0, g.seedTopics));
    const cand = seeds.map((t) => t.page);
    const lists = seeds.map((t) => {
      const sims = dots(t.vectors, vector);
      return (t.links ?? []).map(([page, , ...via]) => [Math.max(...via.map((n) => sims[n] ?? -1)), page]).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    });
    const more = [];
    for (let r = 0; cand.length + more.length < g.maxTopics && lists.some((l) => r < l.length); r++) {
      for (const l of lists) {
        const p = l[r]?.[1];
        if (p !== undefined && cand.length + more.length < g.maxTopics && !cand.includes(p) && !more.includes(p)) more.push(p);
      }
    }
    const topics = [...seeds, ...await load(more)];
    // Template: one row per fact path (topic first, pre-order = DFS), node ids numbered across topics.
    const paths = [];
    const sims = [];
    const nodes = [];
    for (const t of topics) {
      const base = nodes.length;
      const s = dots(t.vectors, vector);
      t.nodes.forEach((n, i) => { nodes.push({ t, n }); sims.push(s[i]); });
      const up = (i) => { const p = []; for (let x = i; x >= 0; x = t.nodes[x][0]) p.unshift(base + x); return p; };
      t.nodes.forEach((n, i) => { if (n[1] === 2) paths.push(up(i)); });
    }
    const cols = Math.max(0, ...paths.map((p) => p.length));
    const ids = new Int32Array(cols * paths.length).fill(-1);
    paths.forEach((p, r) => p.forEach((id, c) => { ids[c * paths.length + r] = id; }));
    // The selected rows by support (as src/graph/search.rs ranks them), then aggregated score.
    const rows = pgrRows(ids, paths.map((p) => p.length), [Float32Array.from(sims)], g.pgr)
      .sort((a, b) => b[2] - a[2] || b[1] - a[1] || a[0] - b[0]);
    const hits = [];
    const seen = new Set();
    for (const [r, , score] of rows) {
      const leaf = nodes[paths[r].at(-1)].n;
      if (leaf[3] < 0 || seen.has(leaf[3])) continue;
      seen.add(leaf[3]);
      hits.push({ chunk: leaf[3], score, path: paths[r].map((id) => nodes[id].n[2]) });
    }
    return { hits: hits.slice(0, k), topics: topics.map((t) => t.page), errors };
  }

  /**
   * The link to a result's `url` or `section` (a page's URL in the site, from its root:
   * `/guide/intro.html#…`) from the current page: resolved against `siteUrl`, so a site served
   * under a sub-path (`/docs/`) links to `/docs/guide/intro.html`; path-absolute on the page's
   * own origin, absolute otherwise; null for null or a URL that is not http(s).
   */
  link(url) {
    if (safeUrl(url) == null) return null;
    const rel = url.startsWith('/') && !url.startsWith('//') ? `./${url.slice(1)}` : url;
    let r;
    try { r = new URL(rel, this.siteUrl); } catch { return null; }
    if (r.protocol !== 'http:' && r.protocol !== 'https:' && r.protocol !== new URL(this.siteUrl).protocol) return null;
    return globalThis.location?.origin === r.origin ? `${r.pathname}${r.search}${r.hash}` : r.href;
  }

  /** `{title, url, heading, excerpt, page, meta?}` of chunks (fetching their fragment files). */
  async fragments(chunks) {
    const size = this.manifest.fragments.size;
    return Promise.all(chunks.map(async (c) => {
      const name = await this.shardName('fragments', Math.floor(c / size));
      const f = await this.#json(name);
      const row = f.c?.[c % size];
      if (!Array.isArray(row)) throw new SnapshotError(`${name}: no chunk ${c}`, 'SNAPSHOT_CORRUPT', name);
      const [title, url, heading, excerpt, page] = row;
      const meta = f.m?.[page];
      return { title, url: safeUrl(url), heading, excerpt, page, ...(meta && typeof meta === 'object' ? { meta } : {}) };
    }));
  }

  /** The pages file (fetched once; `of(chunk)` → page), or null for a snapshot without one. */
  #pageMap() {
    const name = this.manifest.pages;
    if (!name) return Promise.resolve(null);
    if (!this.#pagesOf) {
      this.#pagesOf = this.#file(name).then((b) => readPages(b, name, this.manifest.documents, this.manifest.chunks));
      this.#pagesOf.catch(() => { this.#pagesOf = null; }); // a failed fetch may be retried
    }
    return this.#pagesOf;
  }

  /**
   * Searches: `mode` 'keyword' (BM25 only), 'semantic' (needs an embedder) or 'hybrid' (default:
   * keyword, plus semantic and graph fused by RRF when an embedder is set). With `group: 'page'`
   * (default) the results are pages: each retriever's chunk list (its first `k × 4` chunks, no
   * page more than 4 of them: `capPerPage`) becomes a list of pages (a page ranked where its
   * first chunk is), the lists are fused, and a page's best chunk — its first in
   * the fused chunk order — is the result, its next matching chunks in the same fragment file
   * (up to `sections` − 1) its `sections`; `group: 'chunk'` returns chunks. Every result carries a query-aware `excerpt`
   * with its `highlights` and a `section` link. Results come in stages: `onProgress({stage,
   * results})` is called with 'keyword' as soon as the keyword results are ready, then
   * 'semantic' (keyword + semantic), then 'graph' (all three, when the snapshot has a graph);
   * `onKeyword(results)` is the first stage alone. Resolves to the last stage's `{results,
   * errors, corrections}`; results whose fragment file fails are left out (their error is in
   * `errors`). With `typos` (default true) a query word with no postings matches its nearest
   * vocabulary words (`corrections(word)`), each at `1 / (1 + edits)` of an exact match's score;
   * `corrections` maps each such word to the words searched instead (also in `onProgress`).
   */
  async search(query, { k, mode, group, sections, typos, filters, sort, lang, facets = true, onKeyword, onProgress } = {}) {
    [k, mode, group, sections] = [option('k', k), option('mode', mode), option('group', group), option('sections', sections)];
    typos = typoOption(typos);
    [filters, sort] = [filterOption(filters), sortOption(sort)];
    query = clipQuery(query);
    const errors = [];
    let pageMap = null;
    if (group === 'page' || filters || sort) {
      try { pageMap = await this.#pageMap(); } catch (e) { errors.push(asSnapshotError(e)); }
    }
    // Chunk candidates per retriever: more than k when pages group them, and no page more than
    // its share of them (`capPerPage`).
    const pageOf = pageMap && ((c) => pageMap.of(c));
    const share = Math.max(PER_PAGE, sections);
    const want = pageMap ? k * share : k;
    const perPage = pageOf ? { pageOf, max: share } : undefined;
    // Filters keep the chunks of the pages that pass them; a sort orders the results by its key.
    const fields = this.#fieldsOf();
    const withFacets = facets !== false && (this.manifest.filters?.length ?? 0) > 0;
    const narrow = async () => {
      try {
        const pass = filters ? await fields.allowed(filters) : null;
        const order = sort && pageOf ? await fields.order(sort) : null;
        return { keep: pass && (pageOf ? (c) => pass(pageOf(c)) : () => false), order };
      } catch (e) { errors.push(asSnapshotError(e)); return { keep: () => false, order: null }; }
    };
    const narrowed = await narrow();
    const { order } = narrowed;
    // The query's language: its stemmer, and the pages in it (`Languages.scope`).
    const { stem = null, raw = false, unstemmed = false, keep: inLanguage = null } = await this.#languages().scope(lang, errors);
    const keep = narrowed.keep && inLanguage ? (c) => narrowed.keep(c) && inLanguage(c) : narrowed.keep ?? inLanguage;
    // Facet counts over the pages the keyword search matched and the results' pages.
    let facetCounts;
    const counted = async (matched, rs) => {
      if (!withFacets) return undefined;
      const pages = new Set([...(matched ?? []), ...rs.map((r) => r.page).filter((p) => p !== undefined)]);
      try { facetCounts = await fields.counts([...pages], filters); } catch (e) { errors.push(asSnapshotError(e)); }
      return facetCounts;
    };
    if (!analyzeQuery(query).length && (filters || sort)) {
      // No query: the pages that pass the filters, in the sort's order (else the pages' order).
      const rs = withSortValues(await this.#listing(pageMap, keep, order, k, errors), order);
      if (withFacets) {
        try { facetCounts = await fields.counts(null, filters); } catch (e) { errors.push(asSnapshotError(e)); }
      }
      onKeyword?.(rs);
      onProgress?.({ stage: 'keyword', results: rs, corrections: {}, ...(facetCounts ? { filters: facetCounts } : {}) });
      return { results: rs, errors, corrections: {}, ...(facetCounts ? { filters: facetCounts } : {}) };
    }
    const text = async (chunk) => {
      try { return (await this.fragments([chunk]))[0]; } catch (e) { errors.push(asSnapshotError(e)); return null; }
    };
    // `lists`: {name: [chunk…]} ranked; `scores`: chunk → score when there is one list.
    const fragmentSize = this.manifest.fragments.size;
    const results = async (lists, scores, paths) =>
      withSortValues(await rank({ lists, scores, paths, group, pageOf, fragment: text, query, k, sections, fusion: this.manifest.fusion, fragmentSize, order: order?.rank, stem }), order);
    let kw = { hits: [], errors: [], corrections: {}, pages: null };
    const done = (rs) => ({ results: rs, errors, corrections: kw.corrections, ...(facetCounts ? { filters: facetCounts } : {}) });
    const stage = async (name, rs) => {
      await counted(kw.pages, rs);
      if (name === 'keyword') onKeyword?.(rs);
      onProgress?.({ stage: name, results: rs, corrections: kw.corrections, ...(facetCounts ? { filters: facetCounts } : {}) });
      return rs;
    };
    const kwScores = () => new Map(kw.hits.map((h) => [h.chunk, h.score]));
    if (mode !== 'semantic') {
      // With a sort, every matching page is a candidate (the order is the key's, not the score's).
      kw = await this.#keyword(query, order ? this.manifest.chunks : want, /[\p{Alphabetic}\p{N}]$/u.test(query), { perPage, typos, keep, pages: withFacets, stem, raw, unstemmed });
      errors.push(...kw.errors);
    }
    if (mode === 'keyword' || !this.#embed) {
      if (mode === 'semantic') throw new SnapshotError('semantic search needs an embedder (setEmbedder)', 'SNAPSHOT_NO_EMBEDDER', '');
      const rs = await results({ keyword: kw.hits.map((h) => h.chunk) }, kwScores());
      if (onKeyword || onProgress) await stage('keyword', rs);
      else await counted(kw.pages, rs);
      return done(rs);
    }
    if (mode !== 'semantic' && (onKeyword || onProgress)) await stage('keyword', await results({ keyword: kw.hits.map((h) => h.chunk) }, kwScores()));
    const [qv] = await this.#embed([query]);
    // A semantic list of fusion weight 0 (the static tier's) counts for nothing in the fused
    // order: a hybrid search fetches none of its files and seeds the graph from the keyword hits.
    const counts = mode === 'semantic' || (this.manifest.fusion?.weights?.dense ?? 1) !== 0;
    const sem = counts ? await this.#semantic(qv, want, undefined, perPage, keep) : { hits: [], errors: [] };
    errors.push(...sem.errors);
    if (mode === 'semantic') {
      const rs = await results({ semantic: sem.hits.map((h) => h.chunk) }, new Map(sem.hits.map((h) => [h.chunk, h.score])));
      await counted(null, rs);
      return done(rs);
    }
    const lists = { keyword: kw.hits.map((h) => h.chunk), semantic: sem.hits.map((h) => h.chunk) };
    const first = await stage('semantic', await results(lists, null));
    if (!this.manifest.graph?.topics) return done(first);
    // Seed topics: the pages of the first fused results.
    const gr = await this.#graph(qv, first.map((r) => r.page).filter((p) => p !== undefined), want);
    errors.push(...gr.errors);
    const graphHits = keep ? gr.hits.filter((h) => keep(h.chunk)) : gr.hits;
    const paths = new Map(graphHits.map((h) => [h.chunk, h.path]));
    const all = await results({ ...lists, graph: graphHits.map((h) => h.chunk) }, null, paths);
    return done(await stage('graph', all));
  }

  /** The snapshot's filters and sort keys (`static-fields.js`), made once. */
  #fieldsOf() {
    this.#fields ??= new Fields(this.manifest, (name) => this.#json(name));
    return this.#fields;
  }

  /**
   * The first `k` pages that `keep` (their chunks) allows, by `order` (else page order), each
   * as a result of its first chunk (no excerpt to fit to a query: the chunk's text as stored).
   */
  async #listing(pageMap, keep, order, k, errors) {
    if (!pageMap) return [];
    const n = this.manifest.documents;
    let pages = [];
    for (let p = 0; p < n; p++) if (pageMap.starts[p + 1] > pageMap.starts[p] && (!keep || keep(pageMap.starts[p]))) pages.push(p);
    if (order) pages = bySort(pages, order.rank);
    const out = await Promise.all(pages.slice(0, k).map(async (p) => {
      const chunk = pageMap.starts[p];
      try {
        const [f] = await this.fragments([chunk]);
        return { chunk, score: 0, ...f, ...highlight(f.excerpt, ''), section: f.url, found: [] };
      } catch (e) { errors.push(asSnapshotError(e)); return null; }
    }));
    return out.filter(Boolean);
  }

  /**
   * Facet counts without a query: for each filter key of the snapshot, `{value: pages}` over all
   * its pages, each counted when it passes `filters` on the other keys (as `search`'s `filters`
   * in the result). `{}` for a snapshot without filters.
   */
  async filters({ filters } = {}) {
    return this.#fieldsOf().counts(null, filterOption(filters));
  }
}
