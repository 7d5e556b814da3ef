// A snapshot's filters (facets) and sort keys (manifest `filters`, `sort`; docs/snapshot-format.md):
// which pages carry which values, read from one small file per key when a search needs it. The
// pages said so with `data-webrag-filter` and `data-webrag-sort` (Pagefind's syntax).
import { SnapshotError } from './static-format.js';

/**
 * `filters` of `search`: `{key: value | value[]}`, a page kept when, for every key, it carries
 * one of the values. A `TypeError` for another shape. Returns `[[key, Set(values)]…]`, or null
 * for none.
 */
export function filterOption(filters) {
  if (filters === undefined || filters === null) return null;
  if (typeof filters !== 'object' || Array.isArray(filters)) throw new TypeError('webrag/static: option filters must be an object {key: value | value[]}');
  const out = [];
  for (const [key, v] of Object.entries(filters)) {
    const values = Array.isArray(v) ? v : [v];
    if (!values.every((x) => typeof x === 'string')) throw new TypeError(`webrag/static: filter ${key} must be a string or an array of strings`);
    out.push([key, new Set(values)]);
  }
  return out.length ? out : null;
}

/** `sort` of `search`: `{key: 'asc' | 'desc'}` (one key). Returns `{key, desc}` or null; a `RangeError` otherwise. */
export function sortOption(sort) {
  if (sort === undefined || sort === null) return null;
  const entries = typeof sort === 'object' && !Array.isArray(sort) ? Object.entries(sort) : [];
  if (entries.length !== 1 || !['asc', 'desc'].includes(entries[0][1])) {
    throw new RangeError("webrag/static: option sort must be one key and its direction, {key: 'asc' | 'desc'}");
  }
  return { key: entries[0][0], desc: entries[0][1] === 'desc' };
}

/** A filter or sort file of the wrong shape. */
const corrupt = (name, why) => new SnapshotError(`${name}: ${why}`, 'SNAPSHOT_CORRUPT', name);

/**
 * The filters and sort keys of one snapshot: `json(name)` fetches (once, cached by the caller)
 * and parses a file of it.
 */
export class Fields {
  #json; #manifest; #filters = new Map(); #sorts = new Map();

  constructor(manifest, json) { this.#manifest = manifest; this.#json = json; }

  /** The filter keys of the snapshot. */
  get keys() { return (this.#manifest.filters ?? []).map((f) => f.key); }

  /**
   * Key `key`'s values: `{values: Map value → page[], of: Map page → value[]}`, or null when the
   * snapshot has no such filter. A file that is not one rejects with `SNAPSHOT_CORRUPT`.
   */
  filter(key) {
    const f = (this.#manifest.filters ?? []).find((x) => x.key === key);
    if (!f) return Promise.resolve(null);
    if (!this.#filters.has(key)) {
      const p = this.#json(f.file).then((j) => {
        if (!Array.isArray(j?.v)) throw corrupt(f.file, 'not a filter file');
        const values = new Map();
        const of = new Map();
        const n = this.#manifest.documents;
        for (const row of j.v) {
          if (!Array.isArray(row) || typeof row[0] !== 'string' || !Array.isArray(row[1])) throw corrupt(f.file, 'a row is not [value, pages]');
          const pages = [];
          let page = 0;
          for (const d of row[1]) {
            page += d;
            if (!Number.isInteger(d) || d < 0 || page >= n) throw corrupt(f.file, `page ${page} of ${row[0]} is not one of the ${n}`);
            pages.push(page);
            if (!of.has(page)) of.set(page, []);
            of.get(page).push(row[0]);
          }
          values.set(row[0], pages);
        }
        return { values, of };
      });
      p.catch(() => this.#filters.delete(key)); // a failed fetch may be retried
      this.#filters.set(key, p);
    }
    return this.#filters.get(key);
  }

  /**
   * Whether each page passes `filters` (from `filterOption`) but the key `except`: a function
   * page → boolean. A key the snapshot does not have keeps no page.
   */
  async #passes(filters, except) {
    const tests = await Promise.all(filters.filter(([key]) => key !== except).map(async ([key, want]) => {
      const f = await this.filter(key);
      return (p) => (f?.of.get(p) ?? []).some((v) => want.has(v));
    }));
    return (p) => tests.every((t) => t(p));
  }

  /** The pages passing `filters` (from `filterOption`): a function page → boolean. */
  allowed(filters) { return this.#passes(filters, undefined); }

  /**
   * Facet counts: for every filter key (or those in `keys`), `{value: pages}` over `pages` (page
   * numbers; all the snapshot's when null), each page counted when it passes the other keys'
   * `filters` (a key's own selection does not narrow its counts, so a box can offer its other
   * values). Values with no page are 0; in the file's order (code points).
   */
  async counts(pages, filters, keys = this.keys) {
    const all = pages ?? Array.from({ length: this.#manifest.documents }, (_, i) => i);
    // Maps, made objects by `Object.fromEntries` (own properties: a key or value named
    // `__proto__` is data, not the prototype).
    const out = new Map();
    await Promise.all(keys.map(async (key) => {
      const f = await this.filter(key);
      if (!f) return;
      const pass = filters ? await this.#passes(filters, key) : () => true;
      const counts = new Map([...f.values.keys()].map((v) => [v, 0]));
      for (const p of all) {
        if (!pass(p)) continue;
        for (const v of f.of.get(p) ?? []) counts.set(v, counts.get(v) + 1);
      }
      out.set(key, Object.fromEntries(counts));
    }));
    return Object.fromEntries(keys.filter((k) => out.has(k)).map((k) => [k, out.get(k)]));
  }

  /**
   * The order of `sort` (from `sortOption`): `{rank: page → number (lower first) or undefined
   * for a page without the key, value: page → its value}`; every page undefined when the
   * snapshot has no such key.
   */
  async order(sort) {
    const s = (this.#manifest.sort ?? []).find((x) => x.key === sort.key);
    if (!s) return { rank: () => undefined, value: () => undefined };
    if (!this.#sorts.has(s.key)) {
      const p = this.#json(s.file).then((j) => {
        if (!Array.isArray(j?.o)) throw corrupt(s.file, 'not a sort file');
        const group = new Map();
        const value = new Map();
        j.o.forEach((row, g) => {
          if (!Array.isArray(row) || typeof row[0] !== 'string' || !Array.isArray(row[1])) throw corrupt(s.file, 'a row is not [value, pages]');
          for (const page of row[1]) {
            if (!Number.isInteger(page) || page < 0 || page >= this.#manifest.documents) throw corrupt(s.file, `page ${page} is not one of the ${this.#manifest.documents}`);
            group.set(page, g);
            value.set(page, s.numeric ? Number(row[0]) : row[0]);
          }
        });
        return { group, value };
      });
      p.catch(() => this.#sorts.delete(s.key));
      this.#sorts.set(s.key, p);
    }
    const { group, value } = await this.#sorts.get(s.key);
    return { rank: (p) => { const g = group.get(p); return g === undefined ? undefined : sort.desc ? -g : g; }, value: (p) => value.get(p) };
  }
}
