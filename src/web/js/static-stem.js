// webrag/static's stemmers: the Snowball stemmers a site build stems its pages' words with
// (src/text/stem.rs, rust-stemmers), from the stemmer modules `stem/<tag>.wasm`
// (src/web/stem_module.rs, one per language) built from the same code, so a query's words give
// the pages' terms. A module is loaded only for a search in its language of a snapshot whose
// pages are in it (manifest `languages`), once per module source.

import { SnapshotError } from './static-format.js';

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
