// The ranking of `webrag/static` (static.js): each retriever's ranked chunk list in, the
// results out (`rank`); the fragments it reads come through a callback, so StaticSearch.search
// fetches them and a test passes its own. `rank` runs, in order:
//
//   fuse(lists, scores, fusion)               the chunks in one order (one list keeps its scores)
//   groupPages(fused, lists, pageOf, …)       with `group: 'page'`: the pages to show, each with
//                                             its chunks in the fused order
//   sameFile(chunks, fragmentSize)            the chunks of a page whose text is fetched
//   pickSections(chunks, fragments, query, n, stem) the page's shown chunk and its sections
//   byPhrase(rows, query, …)                  the proximity tiers over the shown results
//
// and ranks the graph list's fact paths (`pgrRows`, PGR).
//
// tests/e2e/static-rank.test.mjs pins the page-level order on a fixture whose results the same
// ranking in Rust (src/native/page_rank.rs, tests/static_rank.rs) writes.
import { analyze, analyzeQuery, begins, highlight, phrase, sectionUrl, termsIn } from './static-text.js';

/**
 * The results of one search stage. `lists`: `{keyword, semantic, graph}` chunk ids, best first;
 * `scores`: chunk → score when one list is searched (BM25 or cosine, kept), else null; `paths`:
 * chunk → its graph path (graph hits); `group`: 'page' or 'chunk'; `pageOf(chunk)`: its page
 * from the pages file, null for a snapshot without one (pages then come from the fragments of
 * the first `k` fused chunks); `fragment(chunk)`: a promise of its `{title, url, heading,
 * excerpt, page}`, null where it cannot be read (the result is left out); `query` as searched;
 * `k`, `sections` (chunks per page result, ≥ 1); `fusion` the manifest's; `fragmentSize` chunks
 * per fragment file. Returns up to `k` results: `{chunk, score, found, page, title, url,
 * heading, excerpt, highlights, section, path?, sections?}`.
 */
export async function rank({ lists, scores, paths, group, pageOf, fragment, query, k, sections, fusion, fragmentSize, order, stem = null }) {
  const shown = (h, f) => ({ ...h, ...f, ...highlight(f.excerpt, query, { stem }), section: sectionUrl(f.url, f.heading) });
  const f = fuse(lists, scores, fusion);
  const { names, single } = f;
  // A sort's order (`order(page)`, lower first) replaces the phrase tiers.
  const phrases = (rows) => (order ? rows : byPhrase(rows, query, { keyword: lists.keyword?.length > 0, single, stem }));
  if (group !== 'page') {
    const fused = order && pageOf ? bySort(f.fused, ([c]) => order(pageOf(c))) : f.fused;
    const out = await Promise.all(fused.slice(0, k).map(async ([chunk, score]) => {
      const t = await fragment(chunk);
      const r = t && shown({ chunk, score }, t);
      if (r) { r.found = names.filter((n) => lists[n].includes(chunk)); if (paths?.has(chunk)) r.path = paths.get(chunk); }
      return r && [r, t];
    }));
    return phrases(out.filter(Boolean)).map(([r]) => r);
  }
  let ranked = f.fused;
  if (!pageOf) {
    ranked = f.fused.slice(0, k);
    const fs = await Promise.all(ranked.map(([c]) => fragment(c)));
    const m = new Map(ranked.map(([c], i) => [c, fs[i] ? (fs[i].page ?? fs[i].url) : null]));
    pageOf = (c) => m.get(c);
    ranked = ranked.filter(([c]) => m.get(c) != null);
  }
  // A staged search fetched the shown pages' fragments for its keyword stage already; an
  // unstaged one fetches them here (the bench-site figures of semantic bytes include it).
  const { pages, chunksOf } = groupPages(f, ranked, lists, pageOf, { k, fusion, qterms: analyzeQuery(query, stem), order });
  const out = await Promise.all(pages.map(async ([p, score]) => {
    const same = sameFile(chunksOf.get(p) ?? [], fragmentSize);
    const picked = pickSections(same, await Promise.all(same.map(([c]) => fragment(c))), query, sections, stem);
    if (!picked.length) return null;
    const [[[chunk], first], ...rest] = picked;
    const r = shown({ chunk, score }, first);
    r.found = names.filter((n) => lists[n].some((c) => pageOf(c) === p));
    const path = picked.map(([[c]]) => paths?.get(c)).find(Boolean);
    if (path) r.path = path;
    r.sections = rest.map(([[c], t]) => (({ chunk, heading, excerpt, highlights, section }) => ({ chunk, heading, excerpt, highlights, section }))(shown({ chunk: c }, t)));
    return [r, first];
  }));
  return phrases(out.filter(Boolean)).slice(0, k).map(([r]) => r);
}

/**
 * Reciprocal-rank fusion as the engine's `retrieve::rrf` computes it (Cormack et al., SIGIR 2009):
 * each list adds `1 / (k + rank)` (rank from 1) to every item it holds; best first, ties in
 * order of first appearance (a Map keeps insertion order and the sort is stable); sums in f32.
 * `k` is the manifest's `fusion.rrfK`, the engine's `rrfK` the snapshot was built with (60
 * before format 3 recorded it). With `weights` (one per list, the manifest's `fusion.weights`),
 * list `i` adds `weights[i] / (k + rank)` (0: the list is left out), as the engine's
 * `retrieve::rrf` does.
 */
export function rrf(lists, k, weights) {
  const score = new Map();
  const f = Math.fround; // f32 arithmetic, as the engine's, so near-ties break the same way
  lists.forEach((list, l) => {
    const w = f(weights?.[l] ?? 1);
    if (w === 0) return; // a weight of 0 leaves its list out
    list.forEach((id, i) => score.set(id, f((score.get(id) ?? 0) + f(w / f(k + i + 1)))));
  });
  return [...score].sort((a, b) => b[1] - a[1]);
}

/** A retriever's fusion weight from the manifest (`fusion.weights`; 1 in older snapshots). */
const WEIGHT_OF = { keyword: 'bm25', semantic: 'dense', graph: 'graph' };

/**
 * How much a query's terms in a row raise a shown result's score (see `phrase`). Chosen on 200
 * headline-start and 200 body-span queries over a 3,000-page CRUD site (0, 0.5, 1, 2: 0.5 best)
 * and checked on 200 + 200 others (0.5 and 1 tie, both above 0): tests/site/eval-static.mjs.
 */
export const PHRASE_WEIGHT = 0.5;

/**
 * The retrievers' lists in one order. `lists`: `{keyword, semantic, graph}` chunk ids, best
 * first (empty ones are left out); `scores`: chunk → score, used when one list is left (BM25 or
 * cosine, kept as they are); `fusion`: the manifest's (`{weights, rrfK}`; 1 and 60 when absent).
 * Returns `{names, single, fused}`: the lists used, whether one list kept its scores, and
 * `[chunk, score]` best first.
 */
export function fuse(lists, scores, fusion) {
  const names = Object.keys(lists).filter((n) => lists[n].length);
  const single = names.length === 1 && Boolean(scores);
  const fused = single
    ? lists[names[0]].map((chunk) => [chunk, scores.get(chunk) ?? 0])
    : rrf(names.map((n) => lists[n]), fusion?.rrfK ?? 60, weightsOf(names, fusion));
  return { names, single, fused };
}

const weightsOf = (names, fusion) => names.map((n) => fusion?.weights?.[WEIGHT_OF[n]] ?? 1);

/**
 * Candidates per page result of a retriever's list (`group: 'page'`): a list holds up to `k ×
 * PER_PAGE` chunks (`sections` of them when more sections are asked for), no page more than
 * that many, so that a page with many matching chunks (a reference page naming its topic in
 * every section) does not fill the list that the page results are drawn from.
 */
export const PER_PAGE = 4;

/**
 * The first `want` of `hits` (`[chunk, score]`, best first) with at most `max` chunks of any one
 * page (`pageOf(chunk)`; chunks of no known page are not counted): a page's later chunks give
 * way to the next pages. A page keeps its place (its best chunk's), so the pages' order is the
 * same as in the uncut list. `src/native/page_rank.rs` `cap_per_page` is the same cut.
 */
export function capPerPage(hits, want, pageOf, max) {
  const count = new Map();
  const out = [];
  for (const h of hits) {
    if (out.length >= want) break;
    const p = pageOf(h[0]);
    if (p !== undefined && p !== null) {
      const n = count.get(p) ?? 0;
      if (n >= max) continue;
      count.set(p, n + 1);
    }
    out.push(h);
  }
  return out;
}

/**
 * Orders `items` by `rank(item)` (lower first; undefined last), keeping their order among
 * equals (the relevance order). Returns a new array.
 */
export function bySort(items, rank) {
  const r = items.map((x, i) => [x, rank(x) ?? Infinity, i]);
  return r.sort((a, b) => a[1] - b[1] || a[2] - b[2]).map(([x]) => x);
}

/**
 * Pages from fused chunks (`group: 'page'`): each list becomes a list of pages (a page ranked
 * where its first chunk is) and those are fused (one list: a page keeps its best chunk's score).
 * `ranked`: `[chunk, score]` in the fused order (`fuse(…).fused`, or its first k when pages
 * come from fragments); `pageOf(chunk)`: its page, `null`/`undefined` when unknown. Shown: the
 * first `k` fused pages and, for a query of two or more terms (`qterms`), the keyword list's
 * first `k` pages too, so its exact matches can take a phrase tier where the fused order left
 * them out (`byPhrase` cuts to k after the tiers). With `order(page)` (a sort: lower first,
 * undefined last) the pages are the first `k` in that order instead. Returns `{pages: [[page,
 * score]…], chunksOf: Map page → [[chunk, score]…]}` (each page's chunks in the fused order).
 */
export function groupPages({ names, single }, ranked, lists, pageOf, { k, fusion, qterms, order }) {
  const known = (p) => p !== undefined && p !== null;
  const pageLists = names.map((n) => [...new Set(lists[n].map(pageOf).filter(known))]);
  const pages = single ? [] : rrf(pageLists, fusion?.rrfK ?? 60, weightsOf(names, fusion));
  const chunksOf = new Map();
  for (const [c, score] of ranked) {
    const p = pageOf(c);
    if (!known(p)) continue;
    if (!chunksOf.has(p)) { chunksOf.set(p, []); if (single) pages.push([p, score]); }
    chunksOf.get(p).push([c, score]);
  }
  if (order) return { pages: bySort(pages, ([p]) => order(p)).slice(0, k), chunksOf };
  let shown = pages.slice(0, k);
  const kwList = names.includes('keyword') && !single && qterms.length >= 2 ? pageLists[names.indexOf('keyword')] : [];
  if (kwList.length) {
    const have = new Set(shown.map(([p]) => p));
    const score = new Map(pages);
    shown = shown.concat(kwList.slice(0, k).filter((p) => !have.has(p)).map((p) => [p, score.get(p) ?? 0]));
  }
  return { pages: shown, chunksOf };
}

/**
 * A page's chunks whose text is read: its best and its other matching chunks in the same
 * fragment file (no further fetch). `chunks`: `[[chunk, score]…]` best first; `fragmentSize`:
 * chunks per fragment file (the manifest's `fragments.size`).
 */
export function sameFile(chunks, fragmentSize) {
  const file = (c) => Math.floor(c / fragmentSize);
  return chunks.filter(([c], i) => i === 0 || file(c) === file(chunks[0][0]));
}

/**
 * The chunks a page shows: of `chunks` (from `sameFile`, with their `fragments`, `null` where a
 * fetch failed), those whose text holds the most query terms first (a short chunk can outrank
 * the one that holds the match through the title every chunk is indexed with), at most
 * `sections` (≥ 1). `[]` when the best chunk's fragment failed. Returns `[[chunk, score],
 * fragment]` pairs: the first is shown, the next are its sections. `stem`: the query language's
 * stemmer, if any.
 */
export function pickSections(chunks, fragments, query, sections, stem = null) {
  if (!fragments[0]) return [];
  return chunks.map((c, i) => [c, fragments[i], fragments[i] ? termsIn(fragments[i].excerpt, query, stem) : -1]).filter((x) => x[1])
    .sort((a, b) => b[2] - a[2]).slice(0, Math.max(1, sections)).map(([c, f]) => [c, f]);
}

/**
 * The proximity signal over shown results. `rows`: `[result, fragment]` in the fused order
 * (a result has `score`; a fragment `title`, `heading`, `excerpt`). Keyword results whose
 * title, heading or text hold the query's terms in a row rank higher among the shown ones
 * (BM25 score × (1 + PHRASE_WEIGHT · phrase), when one list kept its scores: `single`), and
 * results holding all of them in a row (the query as a phrase) come first: those whose title
 * begins with it (a visitor typing the start of a title), then those with it elsewhere in their
 * title, then in their heading or text: an exact match that only the keyword list found is not
 * outvoted by pages the other lists agree on. While the last word is typed (`query` ends in a
 * letter or digit) it may be the start of the text's word. Fused results keep their RRF order
 * below the phrase tiers: neighbouring RRF scores differ by about 1/k², so the multiplier,
 * chosen on BM25 scores, would overrule the lists (tests/site/bench-rank.mjs's 200 questions
 * when this was chosen: top-1 72.0% with it, 76.0% without). Without a keyword list or with fewer
 * than two query terms the rows stay as they are. Sorts `rows` in place and returns it.
 */
export function byPhrase(rows, query, { keyword, single, stem = null }) {
  const qterms = analyzeQuery(query, stem);
  if (!keyword || qterms.length < 2) return rows;
  const typing = /[\p{Alphabetic}\p{N}]$/u.test(query);
  // row → 3: its title begins with the query, 2: the query is a phrase of its title, 1: of
  // its heading or text
  const exact = new Map();
  for (const [r, f] of rows) {
    const p = phrase(qterms, analyze(`${f.title ?? ''}\n${f.heading ?? ''}\n${f.excerpt ?? ''}`, stem), { prefixLast: typing });
    if (single) r.score *= 1 + PHRASE_WEIGHT * p;
    const title = p < 1 ? [] : analyze(f.title ?? '', stem);
    exact.set(r, p < 1 ? 0 : begins(qterms, title, { prefixLast: typing }) ? 3 : phrase(qterms, title, { prefixLast: typing }) === 1 ? 2 : 1);
  }
  return rows.sort((a, b) => exact.get(b[0]) - exact.get(a[0]) || b[0].score - a[0].score);
}

// ---- PGR: matrix-based reverse DFS (PG-RAG §4.2–4.5), the same computation as the Rust
// src/graph/pgr.rs (checked against the wasm `pgrRows` in the browser tests) -----------------

/**
 * Runs PGR on a template of fact paths: `ids` column-major `[cols × rows]` node ids (−1 pads),
 * `lens[r]` the length of row `r`, `sims[kp][node]` similarities; `p` = {support,
 * continueThreshold, anchors, topRows}. Returns the selected rows `[[row, score, support]…]`,
 * by the aggregated score (row sum of F) best first; `support` is, per key point, the largest row
 * sum of one anchor's dyeing matrix, summed over key points (what search hits are ranked by).
 */
export function pgrRows(ids, lens, sims, p) {
  const rows = lens.length;
  if (!rows) return [];
  const cols = ids.length / rows;
  const [support, cont] = [Math.fround(p.support), Math.fround(p.continueThreshold)]; // f32, as in Rust
  const weight = (x, v) => { const d = Math.abs(Math.fround(x - v)); return d <= support ? 1 : d <= cont ? 0.5 : 0; };
  const f = new Float32Array(rows * cols);
  const s = new Float32Array(rows * cols);
  const alive = new Uint8Array(rows);
  const dyed = new Float32Array(rows);
  const best = new Float32Array(rows);
  const rowSupport = new Float32Array(rows);
  for (const sim of sims) {
    for (let i = 0; i < s.length; i++) s[i] = ids[i] >= 0 ? sim[ids[i]] : 0;
    const leaf = [];
    for (let r = 0; r < rows; r++) leaf.push([r, s[(lens[r] - 1) * rows + r]]);
    leaf.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    for (const [r, v] of leaf.slice(0, p.anchors)) {
      let colF = lens[r] - 1;
      while (colF > 0 && weight(s[(colF - 1) * rows + r], v) > 0) colF--;
      const root = ids[colF * rows + r];
      let top = r;
      while (top > 0 && ids[colF * rows + top - 1] === root) top--;
      let bottom = r + 1;
      while (bottom < rows && ids[colF * rows + bottom] === root) bottom++;
      alive.fill(1, top, bottom);
      dyed.fill(0, top, bottom);
      for (let j = colF; j < cols; j++) {
        let any = 0;
        for (let i = top; i < bottom; i++) {
          const x = s[j * rows + i];
          const w = weight(x, v);
          const a = alive[i] & (ids[j * rows + i] >= 0 ? 1 : 0) & (w > 0 ? 1 : 0);
          alive[i] = a;
          if (a) {
            const c = Math.fround(w * x);
            f[j * rows + i] = Math.fround(f[j * rows + i] + c);
            dyed[i] = Math.fround(dyed[i] + c);
          }
          any |= a;
        }
        if (!any) break;
      }
      for (let i = top; i < bottom; i++) best[i] = Math.max(best[i], dyed[i]);
    }
    for (let r = 0; r < rows; r++) { rowSupport[r] = Math.fround(rowSupport[r] + best[r]); best[r] = 0; }
  }
  const sum = new Float32Array(rows);
  for (let j = 0; j < cols; j++) for (let r = 0; r < rows; r++) sum[r] = Math.fround(sum[r] + f[j * rows + r]);
  const out = [];
  for (let r = 0; r < rows; r++) if (sum[r] > 0) out.push([r, sum[r], rowSupport[r]]);
  return out.sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, p.topRows);
}
