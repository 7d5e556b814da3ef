// webrag/static's stemmers: the Snowball stemmers a site build stems its pages' words with
// (src/text/stem.rs, rust-stemmers), from the stemmer modules `stem/<tag>.wasm`
// (src/web/stem_module.rs, one per language) built from the same code, so a query's words give
// the pages' terms. A module is loaded only for a search in its language of a snapshot whose
// pages are in it (manifest `languages`), once per module source.

import { SnapshotError, asSnapshotError } from './static-format.js';
import { Fields } from './static-fields.js';

/** Words longer than this many UTF-8 bytes are not stemmed (`MAX_STEM_BYTES`, src/text/stem.rs). */
export const MAX_STEM_BYTES = 64;

/** The primary subtag of a BCP 47 tag, lowercased (`en` of `en-GB`, `pt` of `pt_BR`). */
export function primarySubtag(tag) {
  return String(tag ?? '').trim().split(/[-_]/)[0].toLowerCase();
}

/**
 * The module tag of a language tag's primary subtag (`en`; `no` for Norwegian's `nb` and `nn`,
 * which share a stemmer: `Language::from_tag` in src/text/stem.rs); null unless that subtag is 2
 * to 8 ASCII letters (`primary_subtag`), so that a manifest's language never names another path
 * or origin for its module.
 */
export function moduleTag(tag) {
  const t = primarySubtag(tag);
  if (!/^[a-z]{2,8}$/.test(t)) return null;
  return t === 'nb' || t === 'nn' ? 'no' : t;
}

/**
 * Where the stemmer module of language `tag` is: by `stemmer` (the loader's option) — a folder
 * URL (its `<tag>.wasm`), a function `tag → URL | bytes`, or one module's bytes (used for every
 * language) — else in the `stem/` folder beside this file (`pkg/stem/`, `pkg/ui/stem/`), or null
 * where this file has no URL (an IIFE bundle without `stemmer`). Read at a search, never at
 * import.
 */
export function stemModule(tag, stemmer) {
  const t = moduleTag(tag);
  if (t === null) return null;
  if (typeof stemmer === 'function') return stemmer(t) ?? null;
  if (stemmer instanceof Uint8Array || stemmer instanceof ArrayBuffer) return stemmer;
  let folder;
  try {
    folder = new URL(stemmer ?? './stem/', stemmer == null ? import.meta.url : globalThis.location?.href);
  } catch {
    return null;
  }
  if (!folder.pathname.endsWith('/')) folder.pathname += '/';
  return new URL(`${t}.wasm`, folder);
}

const loaded = new Map(); // source (a URL's href) → Promise<Stemmers>

/** The module's bytes: a `file:` URL read from disk (Node), any other fetched. */
export async function moduleBytes(url, fetchFn = globalThis.fetch?.bind(globalThis)) {
  url = new URL(url, globalThis.location?.href);
  if (url.protocol === 'file:') {
    const fs = 'node:fs/promises'; // not a module for bundlers to resolve: only Node reads `file:` URLs
    const { readFile } = await import(fs);
    return readFile(url);
  }
  const res = await fetchFn(url.href);
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/**
 * The stemmers of the module at `source` (a URL or path, or the module's bytes), loaded once per
 * source. A module that cannot be fetched or compiled rejects with a `SnapshotError`
 * (`SNAPSHOT_UNAVAILABLE`) naming it.
 */
export function loadStemmers(source, fetchFn = globalThis.fetch?.bind(globalThis)) {
  if (source === null || source === undefined) {
    return Promise.reject(new SnapshotError('no stemmer module: this bundle has no URL to find stem/ beside it; pass the loader\'s `stemmer` option', 'SNAPSHOT_UNAVAILABLE', 'stem'));
  }
  const bytes = source instanceof Uint8Array || source instanceof ArrayBuffer;
  const url = bytes ? null : new URL(source, globalThis.location?.href);
  const key = bytes ? null : url.href;
  if (key && loaded.has(key)) return loaded.get(key);
  const p = (async () => {
    let module;
    try {
      module = await WebAssembly.compile(bytes ? source : await moduleBytes(url, fetchFn));
    } catch (e) {
      throw new SnapshotError(`the stemmer module (${key ?? 'bytes'}) did not load: ${e?.message ?? e}`, 'SNAPSHOT_UNAVAILABLE', key ?? 'stem');
    }
    // It imports nothing it calls (the bindings' start function is never run): each import throws.
    const imports = {};
    for (const { module: m, name } of WebAssembly.Module.imports(module)) {
      (imports[m] ??= {})[name] = () => { throw new Error(`the stemmer module called ${name}`); };
    }
    return new Stemmers(new WebAssembly.Instance(module, imports).exports);
  })();
  if (key) {
    loaded.set(key, p);
    p.catch(() => loaded.delete(key)); // a failed load may be retried
  }
  return p;
}

/**
 * The stemmer of language `tag` (`word → stem`), from its module (`stemModule(tag, stemmer)`);
 * null when the module has no stemmer for it. Rejects as `loadStemmers` does.
 */
export async function loadStemmer(tag, stemmer, fetchFn) {
  if (moduleTag(tag) === null) throw new SnapshotError(`manifest.json: ${JSON.stringify(String(tag).slice(0, 40))} is not a language tag`, 'SNAPSHOT_CORRUPT', 'manifest.json');
  return (await loadStemmers(stemModule(tag, stemmer), fetchFn)).of(tag);
}

/** The stemmers of one loaded module (one language's, or several). */
export class Stemmers {
  #x; #byTag = new Map();

  constructor(exports) { this.#x = exports; }

  /**
   * The stemmer of a BCP 47 tag's language (`en`, `fr-CA`): `word → stem` for a lowercased
   * analyzer term, with a cache; `null` for a language without one.
   */
  of(tag) {
    tag = String(tag ?? '');
    if (this.#byTag.has(tag)) return this.#byTag.get(tag);
    const x = this.#x;
    const encoder = new TextEncoder();
    const decoder = new TextDecoder();
    const buffer = () => new Uint8Array(x.memory.buffer, x.stem_buffer(), 4 * MAX_STEM_BYTES);
    const t = encoder.encode(tag).subarray(0, 4 * MAX_STEM_BYTES);
    buffer().set(t);
    const id = x.stem_language(t.length);
    let stem = null;
    if (id) {
      const cache = new Map();
      stem = (word) => {
        let s = cache.get(word);
        if (s !== undefined) return s;
        const b = encoder.encode(word);
        if (b.length > MAX_STEM_BYTES) s = word;
        else {
          buffer().set(b);
          const n = x.stem_word(id, b.length);
          s = decoder.decode(buffer().slice(0, n));
        }
        if (cache.size >= 10_000) cache.clear(); // a long session's words stay bounded
        cache.set(word, s);
        return s;
      };
    }
    this.#byTag.set(tag, stem);
    return stem;
  }
}

/**
 * A snapshot's languages (manifest `languages`) as its searches use them: the language a search
 * is in, its stemmer, and the pages in it. `host`: `stemmer()` (the loader's `stemmer` option, read
 * at each load), `fetch`, `saved(key)` (the bytes `importOffline` stored under `key`, or
 * undefined), `json(name)` (a snapshot file), `pageOf()` (resolves to `chunk → page`) and
 * `documents` (the manifest's page count).
 */
export class Languages {
  #langs; #host; #stems = new Map();

  constructor(languages, host) { this.#langs = languages; this.#host = host; }

  /**
   * The stemmer of language `tag` (`word → stem`, or null), from its module (`stemModule`); when
   * that cannot be fetched, the copy `importOffline` saved with the snapshot. Loaded once per
   * language; a failed load is tried again at the next search.
   */
  stemmer(tag) {
    if (!this.#stems.has(tag)) {
      const h = this.#host;
      const p = (async () => {
        try { return await loadStemmer(tag, h.stemmer(), h.fetch); } catch (e) {
          const saved = await h.saved(`stem/${moduleTag(tag)}.wasm`);
          if (saved instanceof Uint8Array) return loadStemmer(tag, saved);
          throw e;
        }
      })();
      this.#stems.set(tag, p);
      p.catch(() => this.#stems.delete(tag));
    }
    return this.#stems.get(tag);
  }

  /**
   * The language a search is in (`lang`: a BCP 47 tag; default the page's `<html lang>`, else the
   * language most of the snapshot's pages are in) when the snapshot's pages name theirs:
   * `{stem, raw, unstemmed, keep}` — the language's stemmer (null for one without, or when the
   * stemmer module does not load: its error in `errors`, and `unstemmed` true, its words then
   * matched by their vocabulary stems: static.js `#keyword`), whether its query words also match
   * as written (pages that name no language are searched too, unstemmed), and the chunks of the
   * pages in it or in none (null when that is every page). `{}` for a snapshot whose pages name
   * no language. A `TypeError` for a `lang` that is not a string.
   */
  async scope(lang, errors) {
    if (lang !== undefined && lang !== null && typeof lang !== 'string') throw new TypeError('webrag/static: option lang must be a language tag (a string)');
    const langs = this.#langs;
    if (!langs?.values?.length) return {};
    const have = (t) => langs.values.some((v) => v.lang === t);
    const page = primarySubtag(globalThis.document?.documentElement?.lang);
    const tag = lang != null ? primarySubtag(lang) : have(page) && page ? page : langs.values.find((v) => v.lang)?.lang ?? '';
    const entry = langs.values.find((v) => v.lang === tag);
    let stem = null;
    if (entry?.stemmed) {
      try { stem = await this.stemmer(tag); } catch (e) { errors.push(asSnapshotError(e)); }
    }
    const raw = Boolean(stem) && have('');
    const unstemmed = Boolean(entry?.stemmed) && !stem;
    if (!langs.file) return { stem, raw, unstemmed, keep: entry ? null : () => false };
    let keep;
    try {
      const f = await new Fields({ filters: [{ key: 'lang', file: langs.file }], documents: this.#host.documents }, this.#host.json).filter('lang');
      const pageOf = await this.#host.pageOf();
      const ok = (l) => l === tag || l === '';
      keep = (c) => (f.of.get(pageOf(c)) ?? []).some(ok);
    } catch (e) { errors.push(asSnapshotError(e)); keep = null; }
    return { stem, raw, unstemmed, keep };
  }

  /**
   * The stemmer modules of the snapshot's stemmed languages, as `[key, bytes]` rows for
   * `importOffline` to store (`stem/<tag>.wasm`); a module that cannot be fetched is left out.
   */
  async modules() {
    const rows = [];
    for (const { lang } of this.#langs?.values?.filter((l) => l.stemmed && moduleTag(l.lang)) ?? []) {
      const source = stemModule(lang, this.#host.stemmer());
      const bytes = source instanceof Uint8Array || source instanceof ArrayBuffer ? source : source ? await moduleBytes(source, this.#host.fetch).catch(() => null) : null;
      if (bytes) rows.push([`stem/${moduleTag(lang)}.wasm`, new Uint8Array(bytes)]);
    }
    return rows;
  }
}
