// Types of webrag/static: search over a static-site snapshot (`webrag index <site> --out <site>/webrag`).

/** SNAPSHOT_UNAVAILABLE (fetch failed), SNAPSHOT_CORRUPT (hash, gzip, JSON or binary), SNAPSHOT_VERSION, SNAPSHOT_NO_EMBEDDER. */
export class SnapshotError extends Error {
  name: 'SnapshotError';
  code: 'SNAPSHOT_UNAVAILABLE' | 'SNAPSHOT_CORRUPT' | 'SNAPSHOT_VERSION' | 'SNAPSHOT_NO_EMBEDDER';
  /** The snapshot file concerned, relative to the snapshot folder. */
  file: string;
}

export interface Manifest {
  format: 'webrag-snapshot';
  version: 2;
  /** Directory pages: each holds the 4-byte name hashes of `group` shards. */
  directory: { group: number; hashBytes: 4 };
  model: { id: string; dim: number };
  documents: number;
  chunks: number;
  bm25: { k1: number; b: number; avgdl: number };
  terms: { hash: 'fnv1a32'; shards: number; ext: string; dirs: string[] };
  fragments: { size: number; count: number; ext: string; dirs: string[] };
  vectors: { quant: 'int8'; metric: 'cosine'; lists: number; nprobe: number; centroids: string; ext: string; dirs: string[] };
}

/** A hit: the chunk's number in the snapshot and its score (BM25, cosine or RRF). */
export interface StaticHit { chunk: number; score: number }
export interface StaticResult extends StaticHit {
  title: string;
  url: string;
  /** Headings above the chunk, joined with " › ". */
  heading: string;
  /** The start of the chunk's text. */
  excerpt: string;
  found: ('keyword' | 'semantic')[];
}

/** The analyzer's terms (Unicode words, NFKC + lowercase, CJK bigrams), as the index writer made them. */
export function analyze(text: string): string[];
export function fnv1a(s: string): number;

export class StaticSearch {
  /** Opens the snapshot folder (the one holding manifest.json). */
  static open(baseUrl: string | URL, opts?: { fetch?: typeof fetch }): Promise<StaticSearch>;
  readonly manifest: Manifest;
  /** Compressed bytes and files fetched so far. */
  readonly transferred: { bytes: number; files: number };
  /** The content-hashed file name of shard `i` of a series (read from its directory page). */
  shardName(kind: 'terms' | 'fragments' | 'vectors', i: number): Promise<string>;
  /** Enables semantic search with a query embedder, e.g. `(texts) => rag.embed(texts)` from `webrag`. */
  setEmbedder(embed: (texts: string[]) => Promise<number[][]>): void;
  keyword(query: string, opts?: { k?: number }): Promise<{ hits: StaticHit[]; errors: SnapshotError[] }>;
  semantic(vector: number[] | Float32Array, opts?: { k?: number; nprobe?: number }): Promise<{ hits: StaticHit[]; errors: SnapshotError[] }>;
  fragments(chunks: number[]): Promise<{ title: string; url: string; heading: string; excerpt: string }[]>;
  /** 'hybrid' (default; keyword alone until an embedder is set), 'keyword' or 'semantic'. `onKeyword` gets the keyword results first. */
  search(query: string, opts?: { k?: number; mode?: 'hybrid' | 'keyword' | 'semantic'; onKeyword?: (results: StaticResult[]) => void }): Promise<{ results: StaticResult[]; errors: SnapshotError[] }>;
}
