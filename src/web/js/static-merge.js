// Several snapshots searched as one (`StaticSearch.open([...])`): other folders of the same site,
// other sites, other origins (their hosts must allow this page's origin by CORS). Each snapshot
// searches with its own tier (a snapshot built with another model, or with no vectors, is
// searched by keyword alone), and the page lists are fused by weighted reciprocal-rank fusion,
// as a snapshot fuses its own retrievers (`rrf`, k = 60).
import { rrf } from './static-rank.js';
import { sortOption } from './static-fields.js';
import { option } from './static-text.js';

/** The `k` of the fusion across snapshots (the engine's `rrfK` default). */
export const MERGE_RRF_K = 60;

/**
 * One search over several opened snapshots (`StaticSearch` instances), each with a `weight`
 * (> 0; default 1). Results are pages fused across snapshots, each with `snapshot` (its index
 * in `snapshots`) and its `url` and `section` already resolved against that snapshot's site
 * (`StaticSearch.link`), so `link(url)` returns them as they are.
 */
export class StaticSearchGroup {
  /** The opened snapshots, in the order given. */ snapshots;
  /** Their weights in the fusion. */ weights;

  constructor(snapshots, weights) {
    this.snapshots = snapshots;
    this.weights = weights;
  }

  /** Bytes and files fetched from the network so far, over all snapshots. */
  get transferred() {
    return this.snapshots.reduce((t, s) => ({ bytes: t.bytes + s.transferred.bytes, files: t.files + s.transferred.files }), { bytes: 0, files: 0 });
  }

  /** A merged result's `url` or `section` is a link already (see the class). */
  link(url) { return url ?? null; }

  /**
   * Searches every snapshot with the same options (`search`'s) and fuses their results: `k`
   * pages in all. `onProgress({stage, results, corrections})` gets the fusion of each
   * snapshot's latest stage whenever one of them advances. Resolves to `{results, errors,
   * corrections}`: the errors of every snapshot (a snapshot that fails its search entirely adds
   * its error and no results), the corrections of all.
   */
  async search(query, opts = {}) {
    const { onProgress, onKeyword, ...rest } = opts;
    const k = option('k', opts.k); // checked again by each snapshot's search
    const sort = sortOption(opts.sort);
    const latest = this.snapshots.map(() => []);
    const facets = this.snapshots.map(() => undefined);
    const fuse = () => {
      const lists = latest.map((rs, i) => rs.map((_, j) => `${i}:${j}`));
      const byId = new Map(latest.flatMap((rs, i) => rs.map((r, j) => [`${i}:${j}`, [i, r]])));
      let fused = rrf(lists, MERGE_RRF_K, this.weights);
      // A sort orders by the pages' values across snapshots (each snapshot's own order kept
      // among equal values).
      if (sort) fused = bySortValue(fused, (id) => byId.get(id)[1].sortValue, sort.desc);
      return fused.slice(0, k).map(([id, score]) => {
        const [i, r] = byId.get(id);
        const s = this.snapshots[i];
        const sections = r.sections?.map((x) => ({ ...x, section: s.link(x.section) }));
        return { ...r, score, snapshot: i, url: s.link(r.url), section: s.link(r.section), ...(sections ? { sections } : {}) };
      });
    };
    let keywordSent = false;
    const corrections = {};
    const progress = (i) => ({ stage, results, corrections: c, filters }) => {
      latest[i] = results;
      facets[i] = filters;
      Object.assign(corrections, c);
      const fused = fuse();
      if (stage === 'keyword' && !keywordSent) { keywordSent = true; onKeyword?.(fused); }
      const counts = sumCounts(facets);
      onProgress?.({ stage, results: fused, corrections: { ...corrections }, ...(counts ? { filters: counts } : {}) });
    };
    const errors = [];
    const settled = await Promise.allSettled(this.snapshots.map((s, i) =>
      s.search(query, { ...rest, ...(onProgress || onKeyword ? { onProgress: progress(i) } : {}) })));
    settled.forEach((r, i) => {
      if (r.status === 'fulfilled') {
        latest[i] = r.value.results;
        facets[i] = r.value.filters;
        errors.push(...r.value.errors);
        Object.assign(corrections, r.value.corrections);
      } else if (r.reason instanceof RangeError || r.reason instanceof TypeError) {
        throw r.reason; // a bad option is the caller's, the same for every snapshot
      } else {
        latest[i] = [];
        errors.push(r.reason);
      }
    });
    const counts = sumCounts(facets);
    return { results: fuse(), errors, corrections, ...(counts ? { filters: counts } : {}) };
  }

  /** Facet counts without a query (`filters()` of each snapshot), summed by key and value. */
  async filters(opts = {}) {
    return sumCounts(await Promise.all(this.snapshots.map((s) => s.filters(opts)))) ?? {};
  }
}

/** Facet counts `{key: {value: n}}` of several snapshots summed; undefined when none has any. */
function sumCounts(list) {
  const have = list.filter(Boolean);
  if (!have.length) return undefined;
  const out = new Map(); // key → Map value → n (a key or value named `__proto__` stays data)
  for (const c of have) {
    for (const [key, values] of Object.entries(c)) {
      if (!out.has(key)) out.set(key, new Map());
      const m = out.get(key);
      for (const [v, n] of Object.entries(values)) m.set(v, (m.get(v) ?? 0) + n);
    }
  }
  return Object.fromEntries([...out].map(([key, m]) => [key, Object.fromEntries(m)]));
}

/**
 * Fused `[id, score]` ordered by their results' `value(id)` (`sortValue`: numbers as numbers,
 * else as strings in code point order; descending with `desc`; those without one last), the
 * fused order kept among equals.
 */
function bySortValue(fused, value, desc) {
  const cmp = (x, y) => {
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    const [a, b] = [String(x), String(y)];
    return a < b ? -1 : a > b ? 1 : 0;
  };
  return fused.map((f, i) => [f, value(f[0]), i]).sort(([, x, i], [, y, j]) => {
    if (x === undefined || y === undefined) return (x === undefined) - (y === undefined) || i - j;
    return (desc ? cmp(y, x) : cmp(x, y)) || i - j;
  }).map(([f]) => f);
}
