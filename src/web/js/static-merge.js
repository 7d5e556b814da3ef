// Several snapshots searched as one (`StaticSearch.open([...])`): other folders of the same site,
// other sites, other origins (their hosts must allow this page's origin by CORS). Each snapshot
// searches with its own tier (a snapshot built with another model, or with no vectors, is
// searched by keyword alone), and the page lists are fused by weighted reciprocal-rank fusion,
// as a snapshot fuses its own retrievers (`rrf`, k = 60).
import { rrf } from './static-rank.js';
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
    const latest = this.snapshots.map(() => []);
    const fuse = () => {
      const lists = latest.map((rs, i) => rs.map((_, j) => `${i}:${j}`));
      const byId = new Map(latest.flatMap((rs, i) => rs.map((r, j) => [`${i}:${j}`, [i, r]])));
      return rrf(lists, MERGE_RRF_K, this.weights).slice(0, k).map(([id, score]) => {
        const [i, r] = byId.get(id);
        const s = this.snapshots[i];
        const sections = r.sections?.map((x) => ({ ...x, section: s.link(x.section) }));
        return { ...r, score, snapshot: i, url: s.link(r.url), section: s.link(r.section), ...(sections ? { sections } : {}) };
      });
    };
    let keywordSent = false;
    const corrections = {};
    const progress = (i) => ({ stage, results, corrections: c }) => {
      latest[i] = results;
      Object.assign(corrections, c);
      const fused = fuse();
      if (stage === 'keyword' && !keywordSent) { keywordSent = true; onKeyword?.(fused); }
      onProgress?.({ stage, results: fused, corrections: { ...corrections } });
    };
    const errors = [];
    const settled = await Promise.allSettled(this.snapshots.map((s, i) =>
      s.search(query, { ...rest, ...(onProgress || onKeyword ? { onProgress: progress(i) } : {}) })));
    settled.forEach((r, i) => {
      if (r.status === 'fulfilled') {
        latest[i] = r.value.results;
        errors.push(...r.value.errors);
        Object.assign(corrections, r.value.corrections);
      } else if (r.reason instanceof RangeError || r.reason instanceof TypeError) {
        throw r.reason; // a bad option is the caller's, the same for every snapshot
      } else {
        latest[i] = [];
        errors.push(r.reason);
      }
    });
    return { results: fuse(), errors, corrections };
  }
}
