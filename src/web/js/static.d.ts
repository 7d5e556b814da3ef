// Types of webrag/static: search over a static-site snapshot (`webrag index <site> --out <site>/webrag`).

/** SNAPSHOT_UNAVAILABLE (fetch failed), SNAPSHOT_CORRUPT (hash, gzip, JSON or binary), SNAPSHOT_VERSION, SNAPSHOT_NO_EMBEDDER, SNAPSHOT_UNVERIFIED (`requireIntegrity` without `crypto.subtle`). */
export class SnapshotError extends Error {
  name: 'SnapshotError';
  code: 'SNAPSHOT_UNAVAILABLE' | 'SNAPSHOT_CORRUPT' | 'SNAPSHOT_VERSION' | 'SNAPSHOT_NO_EMBEDDER' | 'SNAPSHOT_UNVERIFIED';
  /** The snapshot file concerned, relative to the snapshot folder. */
  file: string;
}

export interface Manifest {
  format: 'webrag-snapshot';
  version: 3;
  /** Directory pages: each holds the 4-byte name hashes of `group` shards. */
  directory: { group: number; hashBytes: 4 };
  model: { id: string; dim: number };
  documents: number;
  chunks: number;
  bm25: { k1: number; b: number; avgdl: number };
  terms: { hash: 'fnv1a32'; shards: number; ext: string; dirs: string[] };
  fragments: { size: number; count: number; ext: string; dirs: string[] };
  vectors: { quant: 'int8'; metric: 'cosine'; lists: number; nprobe: number; centroids: string; ext: string; dirs: string[] };
  /** The mind maps, one `g/{page}-{hash}.bin.gz` per page, and the PGR parameters; null when built without (`--no-graph`, `--vectors none`). */
  graph: null | {
    topics: number; ext: string; dirs: string[];
    seedTopics: number; maxTopics: number; linkDecay: number;
    pgr: PgrParams;
  };
}

/** PGR thresholds and sizes (PG-RAG §4.3): weight 1 within `support` of an anchor's similarity, 0.5 within `continueThreshold`. */
export interface PgrParams { support: number; continueThreshold: number; anchors: number; topRows: number }

/** A hit: the chunk's number in the snapshot and its score (BM25, cosine or RRF). */
export interface StaticHit { chunk: number; score: number }
/** The text of a hit, from its fragment file. */
export interface Fragment {
  title: string;
  url: string;
  /** Headings above the chunk, joined with " › ". */
  heading: string;
  /** The start of the chunk's text. */
  excerpt: string;
  /** The page's number in the snapshot (its graph file). */
  page: number;
}
export interface StaticResult extends StaticHit, Fragment {
  found: ('keyword' | 'semantic' | 'graph')[];
  /** For graph hits: the fact path PGR selected, topic first, the fact last. */
  path?: string[];
}
/** A graph hit: a chunk, PGR's aggregated score of its best fact path, and that path. */
export interface GraphHit extends StaticHit { path: string[] }
export type SearchStage = 'keyword' | 'semantic' | 'graph';

/** The analyzer's terms (Unicode words, NFKC + lowercase, CJK bigrams), as the index writer made them. */
export function analyze(text: string): string[];
export function fnv1a(s: string): number;
/**
 * PGR's matrix reverse DFS on a template of fact paths: `ids` column-major `[cols × rows]` node
 * ids (−1 pads), `lens` the rows' lengths, `sims[kp][node]`. The selected `[row, score]`, best first.
 */
export function pgrRows(ids: Int32Array, lens: number[], sims: Float32Array[], p: PgrParams): [number, number][];

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
  static open(baseUrl: string | URL, opts?: { fetch?: typeof fetch; offline?: boolean; requireIntegrity?: boolean }): Promise<StaticSearch>;
  /** 'sha256': every shard is checked against the hash in its name; 'unchecked': the page has no crypto.subtle. */
  readonly integrity: 'sha256' | 'unchecked';
  readonly manifest: Manifest;
  /** Compressed bytes and files fetched from the network so far. */
  readonly transferred: { bytes: number; files: number };
  /** Files read from the IndexedDB copy instead. */
  readonly offlineReads: number;
  /** The content-hashed file name of shard `i` of a series (read from its directory page). */
  shardName(kind: 'terms' | 'fragments' | 'vectors' | 'graph', i: number): Promise<string>;
  /** Every file of the snapshot but the manifest (reads all directory pages). */
  files(): Promise<string[]>;
  /**
   * Copies every file into IndexedDB (database `webrag-snapshot {snapshot URL}`), each checked
   * against its hash; the manifest last. Files already copied are not fetched again.
   */
  importOffline(opts?: { onProgress?: (p: { done: number; total: number; bytes: number }) => void }): Promise<{ files: number; bytes: number }>;
  /** Deletes the IndexedDB copy. */
  removeOffline(): Promise<void>;
  /** Enables semantic search with a query embedder, e.g. `(texts) => rag.embed(texts)` from `webrag`. */
  setEmbedder(embed: (texts: string[]) => Promise<number[][]>): void;
  keyword(query: string, opts?: { k?: number }): Promise<{ hits: StaticHit[]; errors: SnapshotError[] }>;
  semantic(vector: number[] | Float32Array, opts?: { k?: number; nprobe?: number }): Promise<{ hits: StaticHit[]; errors: SnapshotError[] }>;
  /**
   * PGR over the mind maps of `seedPages` (the first `seedTopics`) and their neighbours (up to
   * `maxTopics` pages), the query vector as the key point. One hit per chunk.
   */
  graph(vector: number[] | Float32Array, seedPages: number[], opts?: { k?: number }): Promise<{ hits: GraphHit[]; topics: number[]; errors: SnapshotError[] }>;
  fragments(chunks: number[]): Promise<Fragment[]>;
  /**
   * 'hybrid' (default; keyword alone until an embedder is set), 'keyword' or 'semantic'. Results
   * come in stages through `onProgress`: 'keyword', then (with an embedder) 'semantic' and
   * 'graph', each the RRF fusion so far; `onKeyword` gets the first stage. Resolves to the last.
   */
  search(query: string, opts?: {
    k?: number;
    mode?: 'hybrid' | 'keyword' | 'semantic';
    onKeyword?: (results: StaticResult[]) => void;
    onProgress?: (p: { stage: SearchStage; results: StaticResult[] }) => void;
  }): Promise<{ results: StaticResult[]; errors: SnapshotError[] }>;
}
