// Types of webrag/static: search over a static-site snapshot (`webrag index <site> --out <site>/webrag`).

// generated: snapshot-errors (webrag surface)
/** What `webrag/static` rejects with (docs/api.md, "Errors"): `SNAPSHOT_UNAVAILABLE`, `SNAPSHOT_CORRUPT`, `SNAPSHOT_VERSION`, `SNAPSHOT_NO_EMBEDDER`, `SNAPSHOT_UNVERIFIED`. Not a `WebRagError`. */
export class SnapshotError extends Error {
  name: 'SnapshotError';
  code: 'SNAPSHOT_UNAVAILABLE' | 'SNAPSHOT_CORRUPT' | 'SNAPSHOT_VERSION' | 'SNAPSHOT_NO_EMBEDDER' | 'SNAPSHOT_UNVERIFIED';
  /** The snapshot file concerned, relative to the snapshot folder. */
  file: string;
}
// end generated

// generated: manifest (webrag surface)
/** The manifest of a snapshot (`manifest.json`). */
export interface Manifest {
  /** The BM25 analyzer (Unicode words, NFKC + lowercase, CJK bigrams). */
  analyzer: 'webrag-1';
  /** BM25's parameters and the forms of its stored weights. */
  bm25: ManifestBm25;
  /** Chunks indexed (numbered `0..chunks`). */
  chunks: number;
  /** Directory pages: each holds the 4-byte name hashes of `group` shards. */
  directory: ManifestDirectory;
  /** Pages indexed. */
  documents: number;
  /** The filters (facets) the pages carry (`data-webrag-filter`), by key; absent when none does. */
  filters?: ManifestFilter[];
  /** Always `webrag-snapshot`. */
  format: 'webrag-snapshot';
  /** The fragment files: `size` chunks' text each. */
  fragments: ManifestFragments;
  /** Reciprocal-rank fusion of the retrievers' lists. */
  fusion: ManifestFusion;
  /**
   * The mind maps, one `g/{page}-{hash}.bin.gz` per page, and the PGR parameters; null when built
   * without (`--no-graph`, `--vectors none`).
   */
  graph: ManifestGraph | null;
  /** The knowledge-base file a visitor can import (`--kb`). */
  kb?: ManifestKb;
  /**
   * The pages' languages (`<html lang>`), which their words are stemmed in; absent when no page
   * names one (no page is stemmed).
   */
  languages?: ManifestLanguages;
  /** The embedding model of the vectors. */
  model: ManifestModel;
  /** The pages file (`WRP1`: each page's chunk count); absent in older snapshots. */
  pages?: string;
  /**
   * The site's root seen from the snapshot's folder (`../` for `<site>/webrag/`; `--site-url`),
   * against which `webrag/static`'s `link()` resolves page URLs; absent: the origin's root.
   */
  siteRoot?: string;
  /** The sort keys the pages carry (`data-webrag-sort`), by key; absent when none does. */
  sort?: ManifestSort[];
  /** The static tier's query embedder (`--vectors static`). */
  static?: ManifestStatic;
  /** The postings shards, by FNV-1a 32 hash of the term. */
  terms: ManifestTerms;
  /** The chunk vectors: IVF lists around k-means centroids. */
  vectors: ManifestVectors;
  /** The format's version; the loader reads 3 (`SNAPSHOT_VERSION` otherwise). */
  version: 3;
  /**
   * The sorted vocabulary in blocks with each block's first term (prefix completion); absent in
   * older snapshots.
   */
  words?: ManifestWords;
}
/** BM25's parameters (Robertson & Zaragoza 2009) and the forms of the stored weights. */
export interface ManifestBm25 {
  /** Average chunk length, in terms. */
  avgdl: number;
  /** Length normalization. */
  b: number;
  /** The IDF formula. */
  idf: string;
  /** Term-frequency saturation. */
  k1: number;
  /** What a posting's byte holds. */
  weights: string;
}
/** The directory pages' shape. */
export interface ManifestDirectory {
  /** Shards a directory page names. */
  group: number;
  /** Bytes of each name hash. */
  hashBytes: 4;
}
/**
 * A filter: its file `x/{i}-{hash}.json.gz` holds `{"v": [[value, [Δpage…]]…]}`, the values in code
 * point order, each with the pages that carry it (page numbers, delta-coded from 0).
 */
export interface ManifestFilter {
  /** Its file. */
  file: string;
  /** The filter's key (`data-webrag-filter="key…"`). */
  key: string;
  /** Pages with at least one value. */
  pages: number;
  /** Distinct values. */
  values: number;
}
/** Fragment files: the chunks' text, `size` chunks a file. */
export interface ManifestFragments {
  /** Files. */
  count: number;
  /** The directory pages, in order. */
  dirs: string[];
  /** The files' extension. */
  ext: string;
  /** Chunks a file. */
  size: number;
}
/** Reciprocal-rank fusion (Cormack et al. 2009) of the retrievers' lists. */
export interface ManifestFusion {
  /** RRF's `k`. */
  rrfK: number;
  /** Each list's weight. */
  weights: ManifestFusionWeights;
}
/** Each retriever's weight in the fusion. */
export interface ManifestFusionWeights {
  /** BM25's. */
  bm25: number;
  /** The dense retriever's. */
  dense: number;
  /** The graph retriever's. */
  graph: number;
}
/** The mind maps and PGR's parameters. */
export interface ManifestGraph {
  /** The directory pages, in order. */
  dirs: string[];
  /** The files' extension. */
  ext: string;
  /** A linked page's similarity factor. */
  linkDecay: number;
  /** Pages the graph search reads at most. */
  maxTopics: number;
  /** PGR's thresholds and sizes. */
  pgr: PgrParams;
  /** Pages the semantic hits seed the graph search with. */
  seedTopics: number;
  /** Pages with a mind map. */
  topics: number;
}
/** The knowledge-base file of a snapshot. */
export interface ManifestKb {
  /** Its size in bytes. */
  bytes: number;
  /** Its name, relative to the snapshot folder. */
  file: string;
}
/** One language of a snapshot's pages. */
export interface ManifestLanguage {
  /**
   * The primary subtag of the pages' `<html lang>` (`en`, `zh`), lowercase; `""` for the pages that
   * name no language.
   */
  lang: string;
  /** Pages in it. */
  pages: number;
  /**
   * Whether its pages' words were stemmed (the language has a Snowball stemmer): a query in it is
   * stemmed by `webrag/static`'s stemmer module of the language (`stem/<tag>.wasm`).
   */
  stemmed: boolean;
}
/**
 * The pages' languages: a query is searched in the languages it asks for (a page's, or the
 * caller's), its words stemmed as each language's pages were.
 */
export interface ManifestLanguages {
  /**
   * Which page is in which language, in a filter's form (`x/lang-{hash}.json.gz`: `{"v": [[lang,
   * [Δpage…]]…]}`); absent when every page is in the one language of `values`.
   */
  file?: string;
  /** Each language with its pages, the most pages first (then by tag). */
  values: ManifestLanguage[];
}
/** The embedding model of a snapshot's vectors. */
export interface ManifestModel {
  /** Embedding dimension. */
  dim: number;
  /** Model id (empty without vectors). */
  id: string;
}
/** The static tier's token rows. */
export interface ManifestRows {
  /** Rows (token ids `0..count`). */
  count: number;
  /** The directory pages, in order. */
  dirs: string[];
  /** The files' extension. */
  ext: string;
  /** Rows a file. */
  perFile: number;
}
/**
 * A sort key: its file `o/{i}-{hash}.json.gz` holds `{"o": [[value, [page…]]…]}`, the pages that
 * carry it grouped by equal value (each group's value as its first page wrote it), groups in
 * ascending order of value.
 */
export interface ManifestSort {
  /** Its file. */
  file: string;
  /** The sort key (`data-webrag-sort="key…"`). */
  key: string;
  /**
   * Whether the values were compared as numbers (every value is one), else as strings in code point
   * order (ISO 8601 dates sort right either way).
   */
  numeric: boolean;
  /** Pages with a value. */
  pages: number;
}
/** The static tier: a query embedder of a vocabulary and token rows. */
export interface ManifestStatic {
  /** The token rows. */
  rows: ManifestRows;
  /** The model it was distilled from. */
  source: string;
  /** The vocabulary shards. */
  vocab: ManifestVocab;
  /** The token weighting of its rows. */
  weighting: string;
  /** How to tokenize as the model's WordPiece does. */
  wordpiece: WordPieceSpec;
}
/** The postings shards. */
export interface ManifestTerms {
  /** The directory pages, in order. */
  dirs: string[];
  /** The shards' file extension. */
  ext: string;
  /** The hash that picks a term's shard. */
  hash: 'fnv1a32';
  /** Shards (a power of two). */
  shards: number;
}
/** The chunk vectors' IVF lists. */
export interface ManifestVectors {
  /** The centroids' file. */
  centroids: string;
  /** The directory pages, in order. */
  dirs: string[];
  /** The lists' extension. */
  ext: string;
  /** IVF lists. */
  lists: number;
  /** The similarity (unit vectors). */
  metric: 'cosine';
  /** Lists a query reads by default. */
  nprobe: number;
  /** How a component is stored. */
  quant: VectorCode;
  /** Atomic-question rows after the chunks' (ids from `chunks` on). */
  questions: number;
}
/** The static tier's vocabulary shards. */
export interface ManifestVocab {
  /** The directory pages, in order. */
  dirs: string[];
  /** The shards' extension. */
  ext: string;
  /** The hash that picks a piece's shard. */
  hash: 'fnv1a32';
  /** What is hashed. */
  key: string;
  /** Shards (a power of two). */
  shards: number;
}
/** The vocabulary blocks (prefix completion). */
export interface ManifestWords {
  /** Blocks. */
  blocks: number;
  /** The directory pages, in order. */
  dirs: string[];
  /** The blocks' extension. */
  ext: string;
  /** The file with each block's first term. */
  index: string;
}
/**
 * PGR thresholds and sizes (PG-RAG §4.3): weight 1 within `support` of an anchor's similarity, 0.5
 * within `continueThreshold`.
 */
export interface PgrParams {
  /** Anchors per key point. */
  anchors: number;
  /** Continue threshold. */
  continueThreshold: number;
  /** Support threshold. */
  support: number;
  /** Rows selected. */
  topRows: number;
}
/**
 * How a snapshot stores its chunk vectors (the IVF lists): int8 (`WRV1` blocks) with the
 * transformer tier, int4 (`WRV4`, half the bytes) with the static tier, whose dense R@5 int4 leaves
 * within 1 point of int8 (docs/benchmarks.md, "The static model"). The manifest's `vectors.quant`
 * names it. A graph file's node vectors are int8 with the transformer tier and sign bits with the
 * static tier (`WRB1`, a 32nd of f32's bytes: a documentation site's graph files were most of a
 * first hybrid query's bytes; docs/benchmarks.md, "The static model").
 */
export type VectorCode =
  /** One signed byte a component. */
  | 'int8'
  /** Four bits a component, two to a byte. */
  | 'int4';
/** `WordPiece::spec`: what tokenizing as a `WordPiece` does needs besides the vocabulary. */
export interface WordPieceSpec {
  /** Added tokens matched in the raw text first (leftmost, then longest): `[text, id]`. */
  added: ([string, number])[];
  /** A space on each side of a CJK ideograph. */
  chinese: boolean;
  /** Drop NUL, U+FFFD and control characters; whitespace becomes a space. */
  cleanText: boolean;
  /** Lowercase. */
  lowercase: boolean;
  /** A longer word (in characters, after normalization) is one `[UNK]`. */
  maxWordChars: number;
  /** The continuation prefix (`##`). */
  prefix: string;
  /** NFD, then no nonspacing marks. */
  stripAccents: boolean;
  /** The `[UNK]` id. */
  unk: number;
}
// end generated

// generated: loader-results (webrag surface)
/**
 * A query-aware excerpt (`highlight`): about `chars` characters around the most query terms, "…"
 * where text was cut.
 */
export interface Excerpt {
  /** The excerpt. */
  excerpt: string;
  /** The matched spans, `[start, end)` UTF-16 offsets into `excerpt`. */
  highlights: ([number, number])[];
}
/** A chunk's text, from its fragment file (`fragments`). */
export interface Fragment {
  /** The chunk's text as its fragment keeps it (up to 1,000 characters). */
  excerpt: string;
  /** The headings above the chunk, joined with " › ". */
  heading: string;
  /** The page's metadata (`data-webrag-meta`), when it has any. */
  meta?: Record<string, string>;
  /** The page's number in the snapshot (its graph file). */
  page: number;
  /** The page's title. */
  title: string;
  /**
   * The page's URL from the site's root (`/guide/intro.html`), when it is safe as a link
   * (`safeUrl`: relative, http: or https:); `link(url)` is the link from the current page.
   */
  url: string | null;
}
/** A hit of `graph`: a chunk, its score and the fact path PGR selected for it. */
export interface GraphHit {
  /** The chunk's number in the snapshot. */
  chunk: number;
  /** The fact path: the page's title, its headings, the fact last. */
  path: string[];
  /**
   * PGR's support of the path (PG-RAG §4.5): per key point, the largest row sum of one anchor's
   * dyeing matrix.
   */
  score: number;
}
/** A retriever of the loader, and the stage of a search that adds it (`onProgress`). */
export type SearchStage =
  /** BM25 over the term shards. */
  | 'keyword'
  /** Cosine over the IVF lists nearest the query vector. */
  | 'semantic'
  /** PGR over the mind maps of the first results' pages and their neighbours. */
  | 'graph';
/** A page's value of a sort key: a number when every page's value of the key is one. */
export type SortValue = number | string;
/** What a result of `search` is: its `group`. */
export type StaticGrouping =
  /** A page: its best chunk, with its other matching sections. */
  | 'page'
  /** A chunk. */
  | 'chunk';
/** A hit of `keyword` or `semantic`: a chunk and its score. */
export interface StaticHit {
  /** The chunk's number in the snapshot (`0..manifest.chunks`). */
  chunk: number;
  /** BM25 (`keyword`) or cosine (`semantic`). */
  score: number;
}
/** The retrievers of `search`: its `mode`. */
export type StaticMode =
  /** Keyword, plus semantic and graph fused by RRF once an embedder is set. */
  | 'hybrid'
  /** BM25 only. */
  | 'keyword'
  /** The dense retriever only (needs an embedder: `SNAPSHOT_NO_EMBEDDER`). */
  | 'semantic';
/**
 * A result of `search`: a chunk (with `group: 'page'`, its page's best), its text and where it came
 * from.
 */
export interface StaticResult {
  /** The chunk's number in the snapshot. */
  chunk: number;
  /** The query-aware excerpt of the chunk's text. */
  excerpt: string;
  /** The retrievers that found this chunk (`group: 'chunk'`) or any chunk of this page. */
  found: SearchStage[];
  /** The headings above the chunk, joined with " › ". */
  heading: string;
  /** The matched spans, `[start, end)` UTF-16 offsets into `excerpt`. */
  highlights: ([number, number])[];
  /** The page's metadata (`data-webrag-meta`: `{key: value}`), when it has any. */
  meta?: Record<string, string>;
  /** The page's number in the snapshot. */
  page: number;
  /** For graph results: the fact path PGR selected, the page's title first, the fact last. */
  path?: string[];
  /**
   * The retriever's score (BM25, cosine) with one retriever, else the RRF score; a keyword-only
   * result's BM25 score is times `1 + 0.5 · phrase`.
   */
  score: number;
  /** A link to the chunk's section (see `StaticSection.section`). */
  section: string | null;
  /** With `group: 'page'`: the page's other matching sections, best first. */
  sections?: StaticSection[];
  /**
   * With `sort`: the page's value of the sort key (a number when the key is numeric), absent for a
   * page without one.
   */
  sortValue?: SortValue;
  /** The page's title. */
  title: string;
  /** The page's URL, when it is safe as a link. */
  url: string | null;
}
/** Another matching chunk of a page result (from the best chunk's fragment file). */
export interface StaticSection {
  /** The chunk's number in the snapshot. */
  chunk: number;
  /** Its query-aware excerpt. */
  excerpt: string;
  /** The headings above the chunk, joined with " › ". */
  heading: string;
  /** The matched spans, `[start, end)` UTF-16 offsets into `excerpt`. */
  highlights: ([number, number])[];
  /**
   * The section's URL from the site's root (`link(section)` is the link from the current page): the
   * page URL with a text fragment (`#:~:text=`) of its heading, or the page URL; null without a
   * safe URL.
   */
  section: string | null;
}
// end generated

// generated: loader-options (webrag surface)
/** The options of `StaticSearch.open(baseUrl, options?)`. */
export interface StaticOpenOptions {
  /** How files are fetched (tests, service workers). Default `globalThis.fetch`. */ fetch?: typeof fetch;
  /** Use the IndexedDB copy `importOffline()` made: files are read from it, and its manifest when the network one cannot be fetched. Default true. */ offline?: boolean;
  /** Reject with `SNAPSHOT_UNVERIFIED` where shards cannot be checked against their hashes (no `crypto.subtle`: an insecure context). Default false. */ requireIntegrity?: boolean;
  /** Where the site is served: `link()` resolves page URLs against it. Default the manifest's `siteRoot` (`../` for a snapshot in `<site>/webrag/`), else the origin's root. */ siteUrl?: string;
  /** The stemmer modules (one per Snowball language, 10.7–13.6 KB gzipped each, Greek's 20.5 KB), a language's fetched once, at the first search in it of a snapshot whose pages are in it; without it such a search matches each word as written and by the longest vocabulary word it begins with (at least half its letters: `hunt` for `hunting`), and reports `SNAPSHOT_UNAVAILABLE` in `errors`. Default the `stem/` folder beside `static.js` (or the box's `webrag-ui.js`). */ stemmer?: string | URL | Uint8Array | ((tag: string) => string | URL | Uint8Array | null);
}

/** The options of `search(query, options?)`. */
export interface StaticSearchOptions {
  /** Results: pages with `group: 'page'`, else chunks. Default 10; 1..=1000. */ k?: number;
  /** Retrievers. Default `'hybrid'`. */ mode?: StaticMode;
  /** `'page'`: each retriever's chunks become pages, the page lists are fused (RRF), and a result is a page's best chunk with its other matching `sections`; `'chunk'`: chunks. Default `'page'`. */ group?: StaticGrouping;
  /** Chunks a page result shows: its best and up to `sections` − 1 other matching sections. Default 3; 1..=20. */ sections?: number;
  /** A query word of 4–32 letters (not CJK, not a number) with no postings matches the vocabulary's nearest words instead (`corrections`: edit distance 1 for 4–7 letters, 2 for 8–32, a swap of neighbours counting 1; at most 3, the fewest edits and then the most frequent, from the vocabulary block where the word sorts and its neighbours), each scored at 1 / (1 + edits) of an exact match, so pages matching the query as typed rank first; the result's `corrections` maps each such word to the words used. Default true. */ typos?: boolean;
  /** Keep the pages that carry, for every key, one of its values (`data-webrag-filter`); a key the snapshot does not have keeps no page. An empty query with `filters` or `sort` lists the pages that pass, in the sort's order (else the site's). Default none. */ filters?: Record<string, string | string[]>;
  /** Order the results by the pages' values of a sort key (`data-webrag-sort`; numbers as numbers when every value is one, else code point order), every page that matches the query a candidate; pages without a value last, in relevance order; each result carries its `sortValue`. Default relevance. */ sort?: Record<string, 'asc' | 'desc'>;
  /** For a snapshot whose pages name their language (`<html lang>`): search the pages in this language and those that name none, the query's words stemmed as this language's pages were (Snowball) and also matched as written; pages in other languages are left out. Default the page's `<html lang>` when the snapshot has pages in it, else the language most of its pages are in. */ lang?: string;
  /** Count the values of every filter over the matching pages (the result's `filters`), each key counted under the other keys' `filters` only; `false` fetches no filter file a query does not filter on. Default true. */ facets?: boolean;
  /** Called with the keyword stage's results as soon as they are ready. Default none. */ onKeyword?: (results: StaticResult[]) => void;
  /** Called with each stage's results: `keyword`, then (with an embedder) `semantic` and `graph`, each the RRF fusion so far. Default none. */ onProgress?: (p: { stage: SearchStage; results: StaticResult[]; corrections: Corrections; filters?: FacetCounts }) => void;
}

/** The options of `keyword(query, options?)`. */
export interface KeywordOptions {
  /** Hits. Default 10; 1..=1000. */ k?: number;
  /** A query word of 4–32 letters (not CJK, not a number) with no postings matches the vocabulary's nearest words instead (`corrections`: edit distance 1 for 4–7 letters, 2 for 8–32, a swap of neighbours counting 1; at most 3, the fewest edits and then the most frequent, from the vocabulary block where the word sorts and its neighbours), each scored at 1 / (1 + edits) of an exact match, so pages matching the query as typed rank first; the result's `corrections` maps each such word to the words used. Default true. */ typos?: boolean;
  /** For a snapshot whose pages name their language (`<html lang>`): search the pages in this language and those that name none, the query's words stemmed as this language's pages were (Snowball) and also matched as written; pages in other languages are left out. Default the page's `<html lang>` when the snapshot has pages in it, else the language most of its pages are in. */ lang?: string;
  /** The last word (2+ characters, not CJK) also matches its `completions`; a chunk takes its best of them. Default the query ends in a letter or digit. */ prefix?: boolean;
}

/** The options of `semantic(vector, options?)`. */
export interface SemanticOptions {
  /** Hits. Default 10; 1..=1000. */ k?: number;
  /** IVF lists read: those whose centroids are nearest the query vector. Default the manifest's `vectors.nprobe`. */ nprobe?: number;
}

/** The options of `graph(vector, seedPages, options?)`. */
export interface StaticGraphOptions {
  /** Hits: chunks, each at its best fact path. Default 10; 1..=1000. */ k?: number;
}

/** The options of `completions(prefix, options?)`. */
export interface CompletionOptions {
  /** Terms returned, most frequent first. Default 3; 1..=100. */ max?: number;
}

/** The options of `highlight(text, query, options?)`. */
export interface HighlightOptions {
  /** The excerpt's length in characters, about (cut at word boundaries). Default 200; 20..=10000. */ chars?: number;
}

/** The options of `importOffline(options?)`. */
export interface ImportOfflineOptions {
  /** Called after each file copied: files done, files in all, bytes so far. Default none. */ onProgress?: (p: { done: number; total: number; bytes: number }) => void;
}
// end generated

/** The analyzer's terms (Unicode words, NFKC + lowercase, CJK bigrams, a CJK run going on across punctuation and spaces), as the index writer made them. */
export function analyze(text: string): string[];
/** A query's terms: `analyze` word by word (split at spaces), as keyword search reads a query. */
export function analyzeQuery(query: string): string[];
/** How much of a query `search` and `analyzeQuery` read: its first 1,024 UTF-16 code units. */
export const MAX_QUERY_CHARS: number;
export function fnv1a(s: string): number;
/**
 * PGR's matrix reverse DFS on a template of fact paths: `ids` column-major `[cols × rows]` node
 * ids (−1 pads), `lens` the rows' lengths, `sims[kp][node]`. The selected `[row, score, support]`, by
 * score (the row sum of the aggregation matrix) best first; `support`: per key point the largest
 * row sum of one anchor's dyeing matrix, summed over key points.
 */
export function pgrRows(ids: Int32Array, lens: number[], sims: Float32Array[], p: PgrParams): [row: number, score: number, support: number][];

/**
 * A query-aware excerpt of `text` (a fragment's text): the window of about `chars` (200)
 * characters holding the most distinct query terms — words at word boundaries, the last word
 * also as a prefix while it is being typed, CJK bigrams anywhere — cut at word boundaries.
 */
export function highlight(text: string, query: string, opts?: HighlightOptions): Excerpt;
/** The proximity signal: the longest run of consecutive query terms found consecutively in the text's terms, over (query terms − 1); 0 for fewer than 2 query terms. */
export function phrase(queryTerms: string[], textTerms: string[], options?: { prefixLast?: boolean }): number;
/** `url` with a text fragment (`#:~:text=`) of the last heading of `heading` (" › "-joined), or `url` when there is none. */
export function sectionUrl(url: string | null, heading: string): string | null;

/** `u` if it is safe as a link (relative, http: or https:, parsed as a browser parses an href), else null. Results' `url` went through it. */
export function safeUrl(u: unknown): string | null;

export class StaticSearch {
  /** Opens the snapshot folder (the one holding manifest.json). */
  /**
   * With `offline` (default true) a copy made by `importOffline()` is used: files are read from
   * IndexedDB, and its manifest when the network one cannot be fetched.
   * Rejects with SNAPSHOT_UNAVAILABLE, SNAPSHOT_CORRUPT or SNAPSHOT_VERSION (manifest version 3 is read);
   * with `requireIntegrity` and no `crypto.subtle` (an insecure context), SNAPSHOT_UNVERIFIED.
   */
  static open(baseUrl: string | URL, opts?: StaticOpenOptions): Promise<StaticSearch>;
  /**
   * Several snapshots searched as one (other folders, sites or origins: their hosts must allow
   * this page's origin by CORS): each a folder URL or `{url, weight, siteUrl}` (`weight` > 0,
   * default 1, its share in the fusion; `siteUrl` where its site is served); `opts` apply to all.
   * Rejects with the first error of a snapshot that cannot be opened; a `RangeError` for an
   * empty list, an entry without a url, or a weight that is not a number > 0.
   */
  static open(snapshots: (string | URL | SnapshotEntry)[], opts?: StaticOpenOptions): Promise<StaticSearchGroup>;
  /** 'sha256': every shard is checked against the hash in its name; 'unchecked': the page has no crypto.subtle. */
  readonly integrity: 'sha256' | 'unchecked';
  readonly manifest: Manifest;
  /** The site's root URL, which `link()` resolves against: `siteUrl`, else the manifest's `siteRoot` read from the snapshot's folder, else the origin's root. */
  readonly siteUrl: string;
  /**
   * The link to a result's `url` or `section` (the page's URL from the site's root) from the
   * current page: resolved against `siteUrl`, so a site served under `/docs/` links to
   * `/docs/…`; path-absolute on the page's own origin, absolute otherwise; null for null or a
   * URL that is not http(s).
   */
  link(url: string | null): string | null;
  /** Compressed bytes and files fetched from the network so far. */
  readonly transferred: { bytes: number; files: number };
  /** Files read from the IndexedDB copy instead. */
  readonly offlineReads: number;
  /** The content-hashed file name of shard `i` of a series (read from its directory page). */
  shardName(kind: 'terms' | 'fragments' | 'vectors' | 'graph' | 'words', i: number): Promise<string>;
  /** Every file of the snapshot but the manifest (reads all directory pages). */
  files(): Promise<string[]>;
  /**
   * Copies every file into IndexedDB (database `webrag-snapshot {snapshot URL}`), each checked
   * against its hash; the manifest last. Files already copied are not fetched again.
   */
  importOffline(opts?: ImportOfflineOptions): Promise<{ files: number; bytes: number }>;
  /** Deletes the IndexedDB copy. */
  removeOffline(): Promise<void>;
  /**
   * Enables semantic search with a query embedder, e.g. `(texts) => rag.embed(texts)` from
   * `webrag`; it must give unit vectors of the snapshot's model (`manifest.model`). A snapshot
   * with the static tier (`--vectors static`) has one already (`staticEmbed`).
   */
  setEmbedder(embed: (texts: string[]) => Promise<number[][]>): void;
  /**
   * The static tier's query embedder (snapshots built with `--vectors static`): each text's word
   * pieces, read from the vocabulary shards its words need, and the L2-normalised mean of their
   * token rows (`manifest.model.dim` values; all zeros for a text without a known piece). Plain
   * JavaScript, no model. Rejects with `SNAPSHOT_NO_EMBEDDER` without the tier.
   */
  staticEmbed(texts: string[]): Promise<number[][]>;
  /** Up to `max` (3) terms of the vocabulary that start with `prefix`, most frequent first (none without a words index). */
  completions(prefix: string, opts?: CompletionOptions): Promise<string[]>;
  /**
   * BM25. With `prefix` (default: the query ends in a letter or digit) the last word, 2+
   * characters and not CJK, also matches its completions; a chunk takes its best of them.
   */
  keyword(query: string, opts?: KeywordOptions): Promise<{ hits: StaticHit[]; errors: SnapshotError[]; corrections: Corrections }>;
  /**
   * The vocabulary's nearest words to `term` (a query word with no postings): within 1 edit for
   * 4–7 letters, 2 for 8–32 (`typoBudget`; none otherwise, for numbers and CJK), the
   * fewest edits then the most frequent, at most 3, from the words block where `term` sorts and
   * its neighbours.
   */
  corrections(term: string): Promise<{ term: string; edits: number }[]>;
  semantic(vector: number[] | Float32Array, opts?: SemanticOptions): Promise<{ hits: StaticHit[]; errors: SnapshotError[] }>;
  /**
   * PGR over the mind maps of `seedPages` (the first `seedTopics`) and their neighbours (up to
   * `maxTopics` pages), the query vector as the key point. One hit per chunk.
   */
  graph(vector: number[] | Float32Array, seedPages: number[], opts?: StaticGraphOptions): Promise<{ hits: GraphHit[]; topics: number[]; errors: SnapshotError[] }>;
  fragments(chunks: number[]): Promise<Fragment[]>;
  /**
   * 'hybrid' (default; keyword alone until an embedder is set), 'keyword' or 'semantic'. Results
   * come in stages through `onProgress`: 'keyword', then (with an embedder) 'semantic' and
   * 'graph', each the RRF fusion so far; `onKeyword` gets the first stage. Resolves to the last.
   * `group: 'page'` (default): `k` pages, each its best chunk with up to `sections` − 1 (default
   * 3 − 1) other matching sections; the retrievers' page lists are fused (RRF). `'chunk'`: `k` chunks.
   * The query is read up to `MAX_QUERY_CHARS` (1,024 UTF-16 code units). With `typos` (default
   * true) a word with no postings matches its `corrections`, below exact matches; `corrections`
   * says which. `filters` keeps the pages carrying the given values, `sort` orders by a key
   * (`sortValue` on each result); with filters in the snapshot the result has `filters`, the
   * facet counts over the matching pages (unless `facets: false`).
   */
  search(query: string, opts?: StaticSearchOptions): Promise<{ results: StaticResult[]; errors: SnapshotError[]; corrections: Corrections; filters?: FacetCounts }>;
  /**
   * Facet counts without a query: every filter key's values with the pages that carry them, each
   * key counted under the other keys' `filters` only. `{}` for a snapshot without filters.
   */
  filters(opts?: { filters?: Record<string, string | string[]> }): Promise<FacetCounts>;
}

/** Facet counts: filter key → value → pages carrying it (values in code point order). */
export type FacetCounts = Record<string, Record<string, number>>;

/** A snapshot of a `StaticSearch.open([...])` group. */
export interface SnapshotEntry {
  /** The snapshot folder (the one holding manifest.json). */
  url: string | URL;
  /** Its share in the fusion of the page lists (weighted RRF, k = 60). Default 1; > 0. */
  weight?: number;
  /** Where its site is served (`StaticOpenOptions.siteUrl`). */
  siteUrl?: string;
}

/** A page result of a group: from snapshot `snapshot`, its `url` and `section` already links. */
export type GroupResult = StaticResult & { snapshot: number };

/**
 * Several snapshots searched as one (`StaticSearch.open([...])`): each searches with its own
 * tier (one built with another model, or with no vectors, by keyword alone), and their page
 * lists are fused by weighted RRF (k = `MERGE_RRF_K`, 60).
 */
export class StaticSearchGroup {
  /** The opened snapshots, in the order given. */
  readonly snapshots: StaticSearch[];
  /** Their weights. */
  readonly weights: number[];
  /** Compressed bytes and files fetched from the network so far, over all snapshots. */
  readonly transferred: { bytes: number; files: number };
  /** A group result's `url` and `section` are links already: returned as they are. */
  link(url: string | null): string | null;
  /**
   * Every snapshot's `search` with the same options, their results fused: `k` pages in all, each
   * with `snapshot`. `onProgress` gets the fusion of each snapshot's latest stage whenever one
   * advances. Errors of every snapshot (one whose search fails adds its error, no results);
   * corrections of all; facet counts summed; with `sort`, results ordered by `sortValue` across
   * snapshots. A bad option rejects as `search` does.
   */
  search(query: string, opts?: StaticSearchOptions): Promise<{ results: GroupResult[]; errors: SnapshotError[]; corrections: Corrections; filters?: FacetCounts }>;
  /** Every snapshot's `filters()`, summed by key and value. */
  filters(opts?: { filters?: Record<string, string | string[]> }): Promise<FacetCounts>;
}

/** The `k` of the fusion across a group's snapshots. */
export const MERGE_RRF_K: number;

/** A query's misspelled words (analyzed terms with no postings) → the vocabulary words searched instead. */
export type Corrections = Record<string, string[]>;

/** The edit distance (optimal string alignment) of `a` and `b` by code point, or `max + 1` once over `max`. */
export function editDistance(a: string, b: string, max: number): number;
/** The edits a query word may be from a vocabulary word (0 under 4 characters, over 32, for numbers and CJK; 1 up to 7; 2 for 8 to 32). */
export function typoBudget(term: string): number;
/** Corrections a misspelled word matches at most (3), and misspelled words a query corrects (4). */
export const MAX_CORRECTIONS: number;
export const MAX_TYPO_WORDS: number;
