// generated: errors (webrag surface)
/** Every error code (docs/api.md, "Errors"). */
export type ErrorCode =
  | 'EMPTY_DOCUMENT'
  | 'INVALID_UTF8'
  | 'DOCUMENT_TOO_LARGE'
  | 'DUPLICATE_ID'
  | 'INVALID_ID'
  | 'UNKNOWN_FORMAT'
  | 'PARSER_UNAVAILABLE'
  | 'STEMMER_UNAVAILABLE'
  | 'INVALID_OPTION'
  | 'KB_FILE_INVALID'
  | 'KB_FILE_TOO_LARGE'
  | 'NOT_IN_BUILD'
  | 'MODEL_FILE_UNAVAILABLE'
  | 'MODEL_CONFIG_INVALID'
  | 'MODEL_UNSUPPORTED'
  | 'MODEL_TOKENIZER_INVALID'
  | 'MODEL_WEIGHTS_CORRUPT'
  | 'MODEL_TENSOR_MISSING'
  | 'MODEL_TENSOR_SHAPE'
  | 'MODEL_MISMATCH'
  | 'MODEL_INTEGRITY'
  | 'MODEL_OUTPUT_INVALID'
  | 'STORE_BLOCKED'
  | 'STORE_VERSION_TOO_NEW'
  | 'QUOTA_EXCEEDED'
  | 'STORE_CORRUPT'
  | 'STORE_ABORTED'
  | 'STORE_CONFLICT'
  | 'STORE_BACKEND'
  | 'NOT_OPEN'
  | 'GPU_UNAVAILABLE'
  | 'GPU_FAILED'
  | 'LLM_UNAUTHORIZED'
  | 'LLM_RATE_LIMITED'
  | 'LLM_HTTP'
  | 'LLM_TIMEOUT'
  | 'LLM_NETWORK'
  | 'LLM_BAD_RESPONSE'
  | 'LLM_TRUNCATED'
  | 'LLM_REPLY_TOO_LARGE'
  | 'LLM_BAD_OUTPUT'
  | 'LLM_NOT_CONFIGURED'
  | 'LLM_CALLBACK_FAILED'
  | 'LLM_CANCELLED'
  | 'CANCELLED'
  | 'WORKER_FAILED'
  | 'INTERNAL'
  | 'UNSUPPORTED_BROWSER';
/** Base class of every webrag error, with a stable `code`; itself thrown with WORKER_FAILED, INTERNAL, UNSUPPORTED_BROWSER. */
export class WebRagError extends Error {
  /** Stable machine-readable code, e.g. `EMPTY_DOCUMENT`, `STORE_BLOCKED`. */
  readonly code: ErrorCode;
}
/** An operation without a model call (`add`, `search`) whose `signal` fired before it started: CANCELLED. */
export class CancelledError extends WebRagError {}
/** LLM endpoint or output problem: LLM_UNAUTHORIZED, LLM_RATE_LIMITED, LLM_HTTP, LLM_TIMEOUT, LLM_NETWORK, LLM_BAD_RESPONSE, LLM_TRUNCATED, LLM_REPLY_TOO_LARGE, LLM_BAD_OUTPUT, LLM_NOT_CONFIGURED, LLM_CALLBACK_FAILED, LLM_CANCELLED. */
export class LlmError extends WebRagError {}
/** GPU embedder problem: GPU_UNAVAILABLE, GPU_FAILED. */
export class GpuError extends WebRagError {}
/** Storage problem: STORE_BLOCKED, STORE_VERSION_TOO_NEW, QUOTA_EXCEEDED, STORE_CORRUPT, STORE_ABORTED, STORE_CONFLICT, STORE_BACKEND, NOT_OPEN. */
export class StoreError extends WebRagError {}
/** Model problem: MODEL_FILE_UNAVAILABLE, MODEL_CONFIG_INVALID, MODEL_UNSUPPORTED, MODEL_TOKENIZER_INVALID, MODEL_WEIGHTS_CORRUPT, MODEL_TENSOR_MISSING, MODEL_TENSOR_SHAPE, MODEL_MISMATCH, MODEL_INTEGRITY, MODEL_OUTPUT_INVALID. */
export class ModelError extends WebRagError {}
/** Bad document or option: EMPTY_DOCUMENT, INVALID_UTF8, DOCUMENT_TOO_LARGE, DUPLICATE_ID, INVALID_ID, UNKNOWN_FORMAT, PARSER_UNAVAILABLE, STEMMER_UNAVAILABLE, INVALID_OPTION, KB_FILE_INVALID, KB_FILE_TOO_LARGE, NOT_IN_BUILD. */
export class InputError extends WebRagError {}
// end generated

// generated: llm-config (webrag surface)
/** An OpenAI-compatible chat endpoint (`POST {baseUrl}/chat/completions`). */
export interface LlmConfig {
  /** Up to the API version, e.g. `https://api.openai.com/v1`, `http://127.0.0.1:8000/v1`; `/chat/completions` is appended. */ baseUrl: string;
  /** Sent as `model`. */ model: string;
  /** Sent as `Authorization: Bearer …`; kept in the worker's memory only, never serialised or logged. Default none. */ apiKey?: string;
  /** Extra request headers, name → value. Default `{}`. */ headers?: Record<string, string>;
  /** Sampling temperature. Default 0; 0..=2. */ temperature?: number;
  /** Completion cap. Default 1024; 1..=131072. */ maxTokens?: number;
  /** Per attempt, the whole reply (streamed or not) included. Default 60000; 1..=600000. */ timeoutMs?: number;
  /** Retries after 429, 5xx or a network error (not after other 4xx or a timeout). Default 3; 0..=10. */ retries?: number;
  /** First wait in ms, doubled per retry; a `Retry-After` header wins. Default 500. */ backoffMs?: number;
  /** Longest single wait, ms. Default 20000. */ maxBackoffMs?: number;
  /** Requests in flight at once. Default 4; 1..=64. */ concurrency?: number;
  /** Bytes one reply may hold (16 MiB by default): a whole body, or everything one stream sends (an endless stream stops here); past it `LLM_REPLY_TOO_LARGE`, read no further, not retried. Default 16777216; 4096..=1073741824. */ maxReplyBytes?: number;
  /** Bytes one server-sent event line may hold (1 MiB by default); past it `LLM_REPLY_TOO_LARGE`. Default 1048576. */ maxEventBytes?: number;
  /** How structured steps ask for JSON output (`response_format`; llama.cpp's server, llama-cpp-python, vLLM and Ollama constrain decoding to it): `schema` sends the step's JSON Schema as `{"type": "json_schema"}`, `on` asks for `{"type": "json_object"}`, `off` never asks; `auto` tries `json_schema`, then `json_object` with the schema, then `json_object`, then none, keeping the first form the server does not refuse with a 400, 422 or 500 naming `response_format`. Default `'auto'`. */ jsonMode?: 'auto' | 'schema' | 'on' | 'off';
}
// end generated

/** A chat message as the model function receives it. */
export interface ChatMessage { role: 'system' | 'user' | 'assistant'; content: string }
/** The page's own model (e.g. WebLLM), run in the page: a whole reply, or its pieces as they come (streamed answers). `schema`: on steps that expect one JSON object, that object's JSON Schema (constrain decoding to it where the model can); absent on free-text steps. No timeout or retry applies. */
export type ModelFunction = (messages: ChatMessage[], opts: { step: string; schema?: Record<string, unknown>; signal?: AbortSignal }) => Promise<string | AsyncIterable<string>> | string | AsyncIterable<string>;

// generated: decompose-options (webrag surface)
/** Knowledge-aware decomposition (PIKE-RAG Algorithm 1) options. */
export interface DecomposeOptions {
  /** Rounds N; each adds at most one chunk to the context. Default 5; 1..=20. */ rounds?: number;
  /** Candidates K per proposal. Default 10; 1..=50. */ candidates?: number;
  /** Similarity threshold δ for atomic-question candidates. Default 0.5; 0..=1. */ delta?: number;
  /** Proposals read per round. Default 3; 1..=10. */ proposals?: number;
  /** Retriever of chunk candidates. Default `'hybrid+graph'`. */ retriever?: SearchMode;
}
// end generated


// generated: ask-options (webrag surface)
/** Pipeline steps; each boolean overrides the preset. */
export interface PipelineSteps { trigger?: boolean; rewrite?: boolean; route?: boolean; queryTags?: boolean; keyPoints?: boolean; decompose?: boolean; verify?: boolean; summarize?: boolean; filter?: boolean; answer?: boolean; memory?: boolean; }
/** Ask-pipeline options (docs/ask-pipeline.md). */
export interface AskOptions {
  /** Which steps run and how the answer is written ([ask-pipeline.md](ask-pipeline.md), "Presets"): `search` no model call (the context is the `hybrid+graph` search result, `answer` is `null`); `light` one retrieval and one answer call; `L1`–`L4` PIKE-RAG's task levels (factual, multi-hop, predictive, creative); `ask` every step. Default `'ask'`. */ preset?: 'ask' | 'search' | 'light' | 'L1' | 'L2' | 'L3' | 'L4';
  /** `{trigger, rewrite, route, queryTags, keyPoints, decompose, verify, summarize, filter, answer, memory}` over the preset (`queryTags` is off in every preset); an unknown step → `INVALID_OPTION`. Default the preset's. */ steps?: PipelineSteps;
  /** Retrieval trigger: memory-title similarity τ (calibrated: [benchmarks.md](benchmarks.md#the-retrieval-trigger)). Default 0.6; 0..=1. */ tau?: number;
  /** Retrieval trigger: matches θ that answer from memory. Default 3; 1..=100. */ theta?: number;
  /** Search queries asked of Query Rewriter+. Default 3; 1..=10. */ rewriteQueries?: number;
  /** Key points for the graph retriever. Default 4; 1..=10. */ keyPoints?: number;
  /** Facts the graph retriever puts in its context. Default 8; 1..=50. */ graphFacts?: number;
  /** Verify-and-supplement rounds. Default 1; 1..=5. */ verifyRounds?: number;
  /** Sub-queries per supplement. Default 2; 1..=5. */ supplementQueries?: number;
  /** The documents the run may use, as `search`'s `filter`: every retrieval, the graph's context and the candidates of decomposition stay within them (the memory trigger does not fire); the older form, `'strict'` \| `'lenient'`, is `knowledgeFilter`. Default none. */ filter?: SearchFilter | 'strict' | 'lenient';
  /** Knowledge filter: `strict` keeps `entailment`, `lenient` also `neutral`. Default the preset's: `'strict'` for `L1`, else `'lenient'`. */ knowledgeFilter?: 'strict' | 'lenient';
  /** Sources given to the answer. Default 8; 1..=30. */ maxSources?: number;
  /** Perspectives the `L4` preset drafts before its synthesis. Default 3; 1..=6. */ perspectives?: number;
  /** Store the trace for `exportTraces()`. Default false. */ keepTrace?: boolean;
  /** A search endpoint routing may pick (`POST {query, k}` → `{results: [{title, url, text}]}`, at most 4 MiB: `LLM_REPLY_TOO_LARGE` past it). Default none. */ webSearch?: { url: string; headers?: Record<string, string>; timeoutMs?: number };
  /** Knowledge-aware decomposition (`DecomposeOptions`). */ decompose?: DecomposeOptions;
  /** The answer step. */
  answer?: {
    /** Below it the answer is "I don't know.". Default `'medium'`. */ minConfidence?: 'low' | 'medium' | 'high';
    /** `withheld`: `onToken` gets the final text once its confidence is known; `provisional`: every piece as it arrives, marked `provisional`. Default `'withheld'`. */ stream?: 'withheld' | 'provisional';
    /** The share of the answer's content words (beyond the question's) found in its sources at or above which the computed confidence is `high`; not below `supportMedium` ([ask-pipeline.md](ask-pipeline.md#confidence)). Default 0.8; 0..=1. */ supportHigh?: number;
    /** The share at or above which it is `medium`; below, `low`. Default 0.5; 0..=1. */ supportMedium?: number;
    /** `cap`: the model's own `Confidence:` line, where it writes one, can lower the computed level (never raise it); `ignore`: the evidence alone counts. Default `'cap'`. */ selfReport?: 'cap' | 'ignore';
  };
}
// end generated

export type Format = 'auto' | 'markdown' | 'html' | 'text';
/** `graph`: the pseudo-graph retriever (PGR, PG-RAG); `hybrid+graph`: BM25, dense and PGR fused by RRF; `atomic`: query → atomic questions → chunks fused with dense (PIKE-RAG; the hybrid modes fuse the atomic list too once the KB is atomized). */
export type SearchMode = 'hybrid' | 'bm25' | 'dense' | 'graph' | 'hybrid+graph' | 'atomic';

/** A document to add: `text`, or `bytes` (UTF-8, e.g. an uploaded file). */
export interface DocumentInput {
  id: string;
  title?: string;
  text?: string;
  bytes?: Uint8Array;
  /** Default `auto`: from the url/file extension, else sniffed. */
  format?: Format;
  url?: string;
  /** Tags for `filter.tags` of search and ask (case ignored; at most 32, each 1..=64 characters). */
  tags?: string[];
  /** Metadata `name → value` for `filter.meta` (at most 32 entries; names 1..=256 characters, values up to 256). */
  meta?: Record<string, string>;
  /** Its language, a BCP 47 tag (`en`, `fr-CA`): in one of the 18 Snowball languages its words are stemmed (`reading files` finds `read a file`), with the stemmer module `stem/<tag>.wasm` the worker loads (`WebRag.open`'s `stem`; else `STEMMER_UNAVAILABLE`, nothing written); not a tag → `INVALID_OPTION`. Default none: words as written. */
  lang?: string;
}




/** Which documents a search or an ask may use: every condition given must hold. */
export interface SearchFilter {
  /** At least one of these tags, given or automatic (case ignored). */ tags?: string[];
  /** One of these documents. */ docIds?: string[];
  /** Each of these metadata entries. */ meta?: Record<string, string>;
  /** In this language (a BCP 47 tag; its primary subtag compared: `en` of `en-GB`) or in none; the query's words are then stemmed in it alone. */ lang?: string;
}

// generated: search-options (webrag surface)
/** Options of `search()` (docs/api.md, "Search"). */
export interface SearchOptions {
  /** Hits returned. Default 10; 1..=1000. */ k?: number;
  /** Retrievers. Default `'hybrid'`. */ mode?: SearchMode;
  /** Read the query as plain text: no phrases, exclusions or boosts (for natural-language questions). Default false. */ literal?: boolean;
  /** Only documents with at least one of `tags` (given or automatic; case ignored), among `docIds`, with every `meta` entry, and in the language `lang` (a BCP 47 tag, its primary subtag compared) or in none, the query then stemmed in that language only; every retriever is restricted (dense scans the filter's chunks exactly); unknown fields or a `lang` that is not a tag → `INVALID_OPTION`. Default none. */ filter?: SearchFilter;
  /** `'document'`: `k` documents, each its best chunk (ranked where it is), its next matching chunks in the first `fusionDepth` (100) of the ranked list as `sections` (at most 2). Default `'chunk'`. */ group?: 'chunk' | 'document';
  /** Fired while the search waits behind other operations: it never runs (`CancelledError` `CANCELLED`). Default none. */ signal?: AbortSignal;
}
// end generated

// generated: options (webrag surface)
/** Engine options (all optional; docs/api.md, "Engine options"). */
export interface Options {
  /** Largest document (UTF-8 bytes; 8 MiB by default); larger ones get `DOCUMENT_TOO_LARGE`. Default 8388608; 1024..=268435456. */ maxDocumentBytes?: number;
  /** Chunk bound in word pieces, including `[CLS]`, `[SEP]` and the heading prefix embedded with the chunk. Default 256. */ maxChunkTokens?: number;
  /** Soft chunk size in word pieces; blocks are merged up to it. Default 200. */ targetChunkTokens?: number;
  /** BM25 term-frequency saturation. Default 1.2; 0..=3. */ bm25K1?: number;
  /** BM25 length normalisation. Default 0.75; 0..=1. */ bm25B?: number;
  /** BM25 idf: `plus1` ln(1 + (N − df + 0.5)/(df + 0.5)) (Lucene); `okapi` ln((N − df + 0.5)/(df + 0.5)) with negative values floored to `bm25Epsilon` × the mean idf (rank_bm25's `BM25Okapi`). Default `'plus1'`. */ bm25Idf?: 'plus1' | 'okapi';
  /** The `okapi` floor. Default 0.25; 0..=1. */ bm25Epsilon?: number;
  /** Reciprocal-rank-fusion constant k (Cormack, Clarke & Büttcher, SIGIR 2009): score = Σ 1/(k + rank). Default 60; 1..=1000. */ rrfK?: number;
  /** Hits each retriever contributes to fusion. Default 100; 1..=10000. */ fusionDepth?: number;
  /** Each retriever's weight in the fused modes: a list adds weight / (rrfK + rank) (weighted RRF); 0 leaves the list out. `webrag eval --tune-fusion` chooses weights on half of each eval set's questions and reports the other half ([benchmarks.md](benchmarks.md#fusion-weights): tuned weights did not beat equal ones there, so 1 each stays the default). */
  fusionWeights?: {
    /** BM25's weight. Default 1; 0..=10. */ bm25?: number;
    /** Dense retrieval's weight. Default 1; 0..=10. */ dense?: number;
    /** The graph retriever's weight. Default 1; 0..=10. */ graph?: number;
    /** The atomic-question list's weight. Default 1; 0..=10. */ atomic?: number;
  };
  /** The `hybrid+graph` mode's second stage over the fused list: its first `keep` hits stay; then the other hits PGR selected and the graph list's first `candidates` unselected facts, in fused order; then the rest (`retrieve::GraphCascade`; [benchmarks.md](benchmarks.md#graph-cascade)). A hit's `score` stays its RRF score, so a promoted hit can follow a higher one. */
  graphCascade?: {
    /** Off: the fused list as reciprocal-rank fusion ranks it. Default true. */ enabled?: boolean;
    /** Fused hits kept ahead of the graph's evidence. Default 2; 0..=100. */ keep?: number;
    /** Graph-list facts PGR did not select that join its selection. Default 1; 0..=100. */ candidates?: number;
  };
  /** Texts embedded per call at ingest; an `embed` progress event follows each call. Default the path's own: 256 on a hardware GPU, 16 on the page's CPU path (64 natively); 1..=1024. */ embedBatch?: number;
  /** From this many chunks on, idle-time upkeep stores the index segments the next `open` reads lazily ([vector-index.md](vector-index.md#index-segments-lazy-open)); 0 never stores them and always loads the whole knowledge base at open. Default 4096; 0..=100000000. */ lazyOpenChunks?: number;
  /** Pseudo-graph options (PG-RAG). */ graph?: GraphOptions;
  /** HNSW segments of the vector collections (chunks, topics, facts, questions). */ ann?: AnnOptions;
}

/** instant-distance HNSW (Malkov & Yashunin 2018). Bad values: InputError INVALID_OPTION `ann.<field>`. */
export interface AnnOptions {
  /** Candidate list while building a segment. Default 40; 1..=1000. */ efConstruction?: number;
  /** Candidate list while searching a segment (at least k). Default 100; 1..=1000. */ efSearch?: number;
  /** Vectors in the exact fresh buffer before it is sealed into a segment. Default 4096; 16..=1000000. */ sealAt?: number;
  /** Seed of the layer assignment (deterministic segments). Default 1. */ seed?: number;
}

/** Pseudo-graph options (docs/pseudo-graph.md). Thresholds are cosines. */
export interface GraphOptions {
  /** Build mind maps at ingest (one embedding per topic, route and fact). Default true. */ enabled?: boolean;
  /** A new topic joins the super-topic of its nearest topic above this cosine. Default 0.92; 0..=1. */ superTopicThreshold?: number;
  /** A new fact joins the super-fact of its nearest fact above this cosine. Default 0.98; 0..=1. */ superFactThreshold?: number;
  /** Seed topics by title similarity, and again by best-fact similarity. Default 3; 1..=50. */ seedTopics?: number;
  /** Candidate topics after the walk. Default 10; 1..=200. */ maxTopics?: number;
  /** Share of the linking node's similarity a walked-to topic's facts inherit. Default 0.9; 0..=1. */ linkDecay?: number;
  /** Dense hops per walked topic (0: off): topics owning the facts nearest to normalise(query + the topic's best fact). Default 0; 0..=10. */ denseHops?: number;
  /** Shared-entity links: topics naming the same proper name (a run of capitalised words) are neighbours when at most this many topics name it; 0 turns them off. Default 20; 0..=1000. */ entityMaxTopics?: number;
  /** At ingest, late chunking of facts (Günther et al. 2024, arXiv 2409.04701 §3): a structural fact's vector is the L2-normalised mean of its chunk's last hidden state over `[CLS]`, the heading prefix, the fact's own tokens and `[SEP]`, from the chunk's forward pass, instead of a pass of its own; the CPU path only (the GPU path, and a fact past the chunk's 256-token truncation, keep a pass each). Cost and recall: [benchmarks.md](benchmarks.md), "Ingest in the page". Default true. */ lateChunking?: boolean;
  /** Super-fact links in the walk (PG-RAG §3.3): a topic whose fact shares a super-fact with another topic's fact has it as a neighbour; off by default — no change in recall@k on HotpotQA or MuSiQue train100 ([benchmarks.md](benchmarks.md), "Super-facts"). Default false. */ superFactLinks?: boolean;
  /** The pseudo-graph retriever (PG-RAG §4.2): support 0.01 and continue 0.02 are the PG-RAG reference code's thresholds (the paper's are 0.03 and 0.05). */
  pgr?: {
    /** Weight 1 within this of an anchor's similarity. Default 0.01. */ support?: number;
    /** Weight 0.5 within this; beyond, 0. Default 0.02. */ continueThreshold?: number;
    /** Anchors per key point. Default 8; 1..=100. */ anchors?: number;
    /** Fact paths selected. Default 8; 1..=1000. */ topRows?: number;
  };
}
// end generated



/** Model files as bytes; `id` is recorded in the knowledge base (default all-MiniLM-L6-v2's). */
export interface ModelBytes { config: Uint8Array; tokenizer: Uint8Array; weights: Uint8Array; id?: string }
/** Expected size (bytes) and/or SHA-256 (lowercase hex) of a model file. */
export interface FileCheck { size?: number; sha256?: string }
/**
 * A model folder URL (config.json, tokenizer.json, model.safetensors). Files are kept in the Cache
 * API ('webrag-models-v1') unless `cache` is false; a mismatch with `files` rejects with
 * ModelError code MODEL_INTEGRITY (and evicts a stale cached copy).
 */
export interface ModelUrl { url: string; id?: string; cache?: boolean; files?: { [file: string]: FileCheck } }
/** 'auto': GPU on a hardware adapter, else CPU; 'cpu'; 'gpu': any WebGPU adapter (GpuError GPU_UNAVAILABLE if none); 'hashing': benchmarks only, no transformer (sparse random indexing of word pieces; model id '…+hashing'). */
export type Device = 'auto' | 'cpu' | 'gpu' | 'hashing';
/** Sent to `onEvent`: e.g. {type: 'warning', code: 'GPU_LOST', message} when embedding falls back to the CPU; {type: 'warning', code: 'WORKERS_FAILED', message} when the embedding workers failed and batches are embedded in the engine's worker; {type: 'sealed', ...} after each idle-time sealing step; {type: 'changed'} when another tab committed; {type: 'restarted'} after a worker failure. */
export type EmbedderEvent =
  | { type: 'warning'; code: string; message: string }
  | ({ type: 'sealed' } & SealReport)
  /** Another tab (or worker) committed to this knowledge base; this one reads the store again before its next call. */
  | { type: 'changed'; generation: number | null }
  /** A fresh worker took over after WORKER_FAILED and opened the knowledge base again. */
  | { type: 'restarted' };
export const MODEL_CACHE: string;
/**
 * The build of the engine this browser runs, by feature detection (validating a few bytes of
 * WebAssembly): 'relaxed-simd' (`webrag_bg.wasm`) where relaxed SIMD is implemented, else
 * 'simd128' (`baseline/webrag_bg.wasm`); null without WebAssembly SIMD128 (`WebRag.open` then
 * rejects with UNSUPPORTED_BROWSER; `webrag/static` still searches).
 */
export function cpuKernels(): 'relaxed-simd' | 'simd128' | null;

// generated: enrich-stages (webrag surface)
/** The ingest-time stages of `enrich()`: each `true`, `false` or its options. */
export interface EnrichStages {
  /** Forward summaries (PIKE-RAG's enhanced chunking); off unless asked. */
  forwardSummaries?: boolean | {
    /** Words a forward summary may have (each chunk after a document's first gets one: what the document said before it; it is embedded and indexed for BM25 with the chunk). Default 40; 5..=200. */ maxWords?: number;
    /** Chunks per commit. Default 8; 1..=256. */ batch?: number;
  };
  /** Automatic tags per document; off unless asked. */
  tags?: boolean | {
    /** Automatic tags per document. Default 5; 1..=32. */ maxTags?: number;
    /** The tags to choose from (case ignored); empty: any short tag. Default `[]`. */ vocabulary?: string[];
    /** Characters of the document the model reads. Default 2000; 200..=20000. */ maxChars?: number;
  };
  /** Knowledge atomizing (atomic questions per chunk); on by default. */
  atomize?: boolean | {
    /** Questions asked for per chunk. Default 5; 1..=20. */ maxQuestions?: number;
    /** Chunks per commit (their calls concurrent up to `concurrency`). Default 8; 1..=256. */ batch?: number;
  };
  /** LLM mind maps with fact-check items; on by default. */
  mindMaps?: boolean | {
    /** ROUGE-L F1 the fact-check items must reach against their chunk. Default 0.15; 0..=1. */ minRougeL?: number;
    /** Cosine between the items' and the chunk's embeddings. Default 0.85; 0..=1. */ minCosine?: number;
    /** Regenerations of items that fail verification. Default 2; 0..=5. */ regenerations?: number;
    /** Items asked for per chunk. Default 12; 1..=50. */ maxItems?: number;
  };
}
// end generated

// generated: result-types (webrag surface)
/** Outcome of an `add()` batch. */
export interface AddReport {
  /** Ids added for the first time. */
  added: string[];
  /** Chunks written. */
  chunks: number;
  /** Ids whose content changed and were replaced. */
  replaced: string[];
  /** Ids re-added unchanged (nothing written). */
  unchanged: string[];
  /**
   * Whether the origin's storage is persistent (`navigator.storage.persist()`, asked after the
   * first add that stores something); null where the browser has no Storage API.
   */
  persisted: boolean | null;
}
/** One anchor and the sub-tree it dyed (for the explain view). */
export interface Anchor {
  /** One past its last row. */
  bottom: number;
  /** Leaf column of the anchor row. */
  col: number;
  /** Key point index. */
  kp: number;
  /** Anchor row and leaf column. */
  row: number;
  /** Upper bound column `col_f` (the sub-root's depth). */
  subRootCol: number;
  /** First row of the path matrix's support. */
  top: number;
  /** The anchor's similarity `v`. */
  value: number;
}
/**
 * Shape of the segmented vector collections (`ann`): `[fresh vectors, sealed segments, tombstones]`
 * each.
 */
export interface AnnStats {
  /** Chunk vectors. */
  chunks: [number, number, number];
  /** Fact vectors. */
  facts: [number, number, number];
  /** Atomic questions. */
  questions: [number, number, number];
  /** Topic vectors. */
  topics: [number, number, number];
}
/** The answer. */
export interface Answer {
  /**
   * Chunk ids the answer cites, in the order first cited; where it cites none, the ones it is
   * attributed to (those holding its words, in context order: docs/ask-pipeline.md, "The answer").
   */
  citations: string[];
  /**
   * The confidence, computed from the evidence and capped by the model's own where it gave one
   * (docs/ask-pipeline.md, "Confidence").
   */
  confidence: Confidence;
  /** False when the confidence was below the configured level. */
  known: boolean;
  /** The model's own `Confidence:` line; null when it wrote none. */
  selfReported: Confidence | null;
  /** The context's chunk ids (`[S1]` is the first). */
  sources: string[];
  /**
   * The share of the answer's content words (beyond the question's) that its sources hold, 0..=1;
   * null when it has none (a bare yes or no) or no answer was read.
   */
  support: number | null;
  /**
   * The answer with its `[S1]` markers (without them when citation repair named other sources:
   * `citations` holds those), without the confidence line; "I don't know." when `known` is false.
   */
  text: string;
}
/** What the pipeline returns. */
export interface AskResult {
  /** The answer (null with the `search` preset or `steps.answer` off). */
  answer: Answer | null;
  /** The clarified question (the rewriter's, else the question). */
  clarified: string;
  /** The context given to the answer, `[S1]` first. */
  context: ContextItem[];
  /** The question as asked. */
  question: string;
  /** Memory entries written. */
  remembered: number;
  /** The route taken. */
  route: Route;
  /** The decomposition trajectory, when decomposition ran. */
  trajectory: Trajectory | null;
}
/** What an atomizing pass did. */
export interface AtomizeReport {
  /** Chunks atomized by this pass. */
  chunks: number;
  /** Chunks whose reply stayed unreadable after the repair attempt (left for the next pass). */
  failed: string[];
  /** Questions stored by this pass. */
  questions: number;
  /** Chunks still without questions afterwards. */
  remaining: number;
}
/** `chunks` record. */
export interface ChunkRecord {
  /** Owning document. */
  docId: string;
  /**
   * PIKE-RAG's forward summary (§4.2, context-aware chunking): what the document says before this
   * chunk, in a sentence or two, written by the `enrich` stage; it is embedded with the chunk.
   * null: not written (the first chunk never has one).
   */
  forwardSummary?: string;
  /** Headings above the chunk, outermost first (the title is not repeated). */
  headingPath: string[];
  /** `"{doc_id}#{ordinal}"`. */
  id: string;
  /** Position within the document, from 0. */
  ordinal: number;
  /** Chunk text. */
  text: string;
  /** Word pieces of the embedded input (prefix + text + special tokens); ≤ `max_chunk_tokens`. */
  tokenCount: number;
}
/** A self-assessed confidence, ordered low < medium < high. */
export type Confidence =
  /** Missing or low. */
  | 'low'
  /** Medium. */
  | 'medium'
  /** High. */
  | 'high';
/** A source in the context, with the step that brought it. */
export interface ContextItem {
  /** What a citation names: a chunk id, `"graph:{n}"`, `"memory:{id}"`. */
  id: string;
  /** The text given to the model. */
  text: string;
  /** Shown in parentheses before the text (the document title). */
  title: string;
  /** `memory`, `rewrite`, `graph`, `decompose`, `search`, `sparse`, `dense`, `web`. */
  via: string;
}
/**
 * The instruction set the CPU path's kernels were compiled for (the embedder's info reports it as
 * `cpuKernels`): the page's two builds of the engine differ only in this.
 */
export type CpuKernels =
  /**
   * wasm SIMD128 with the relaxed-SIMD proposal's fused multiply-add and i8 dot product
   * (`webrag_bg.wasm`: Chrome/Edge 114+, Firefox 145+).
   */
  | 'relaxed-simd'
  /**
   * wasm SIMD128 alone (`baseline/webrag_bg.wasm`: every browser with SIMD128, Safari 16.4+ and
   * Firefox ESR among them): a multiply then an add, and the int8 product (`gemm_i8`) by its
   * portable loop.
   */
  | 'simd128'
  /** Natively: AVX-512F or AVX2 + FMA chosen at run time on x86-64, else portable loops. */
  | 'native';
/**
 * One-query latency of each path, measured at start-up (milliseconds, median of up to 3 runs; one
 * run when the paths differ by more than 4×).
 */
export interface Crossover {
  /** CPU path. */
  cpuMs: number;
  /** GPU path (ids in, pooled vector out, readback awaited). */
  gpuMs: number;
}
/** One candidate shown to the selector. */
export interface DecomposeCandidate {
  /** The chunk that answers it. */
  chunkId: string;
  /** The atomic question, or for a chunk candidate the chunk's title. */
  question: string;
  /** Similarity (atomic) or retrieval score (chunk). */
  score: number;
  /** How it was found. */
  via: DecomposeVia;
}
/** One round's outcome. */
export interface DecomposeRound {
  /** The selector's answer to it. */
  answer: string | null;
  /** The candidates shown to the selector. */
  candidates: DecomposeCandidate[];
  /** The proposals. */
  proposals: string[];
  /** Index into `candidates` of the one selected. */
  selected: number | null;
  /**
   * The sub-question answered this round (the selected atomic question, or the proposal the
   * selected chunk was found for).
   */
  subQuestion: string | null;
}
/** Why the loop ended. */
export type DecomposeStop =
  /** The proposer said the context suffices. */
  | 'nothingProposed'
  /** No candidate, even after the fallbacks. */
  | 'nothingFound'
  /** The selector chose none. */
  | 'nothingSelected'
  /** `rounds` reached. */
  | 'rounds'
  /**
   * A proposal after the first round stayed unreadable after its repair (the fallback: stop with
   * the context gathered so far).
   */
  | 'unreadable';
/** Where a candidate came from. */
export type DecomposeVia =
  /** An atomic question matched a proposal (path (b)). */
  | 'atomic'
  /**
   * Found for the original question instead of a proposal (the fallbacks: atomic questions for the
   * question when the proposals find none; chunks for the question when nothing found for the
   * proposals is selected).
   */
  | 'question'
  /** A chunk retrieved for a proposal (path (a), second fallback). */
  | 'chunk';
/** `documents` record. */
export interface DocumentRecord {
  /** Milliseconds since the Unix epoch. */
  addedAt: number;
  /** Tags the auto-tagging stage chose (PIKE-RAG §4.2, auto-tagging; `enrich`), normalized. */
  autoTags?: string[];
  /** Number of chunks. */
  chunkCount: number;
  /** Document id. */
  id: string;
  /**
   * The document's language, a lowercase primary subtag (`DocumentInput::lang`), which its BM25
   * terms are stemmed in (absent: not stemmed).
   */
  lang?: string;
  /** Metadata given with the document. */
  meta?: Record<string, string>;
  /**
   * Which mind map the pseudo-graph holds for the document (absent in older records: structural).
   */
  mindMap?: MindMapKind;
  /** Hex SHA-256 of (format, title, text): equal hash = unchanged document. */
  sourceHash: string;
  /** `"indexed"`. */
  status: string;
  /** Whether the auto-tagging stage ran on this document (so a pass resumes after it). */
  tagged?: boolean;
  /** Tags given with the document (`normalize_tag`ged). */
  tags?: string[];
  /** Title. */
  title: string;
  /** URL or file name, if given. */
  url: string | null;
}
/** A compute path. */
export type EmbedPath =
  /** WordPiece + BERT on the CPU (wasm SIMD in the page). */
  | 'cpu'
  /** WGSL kernels through wgpu (WebGPU in the page, Vulkan natively). */
  | 'gpu';
/** Which path is in use, on which adapter, and why. */
export interface EmbedderInfo {
  /** The adapter, when one was opened (e.g. `llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan)`). */
  adapter: string | null;
  /** The instruction set of the CPU path's kernels: which build of the engine the page loaded. */
  cpuKernels: CpuKernels;
  /** The start-up measurement, when both paths were available. */
  crossover: Crossover | null;
  /**
   * What the platform said when it offered no usable adapter (the raw error), for a "details" view;
   * null when there is nothing more to say.
   */
  detail: string | null;
  /** Compute dispatches per forward pass on the GPU (none on the CPU path). */
  dispatchesPerForward: number | null;
  /** Buffers, bind groups and pipelines created on the device so far (a warm batch adds none). */
  gpuObjects: GpuCounters | null;
  /** Precision of the GPU path's matrix multiplies (null on the CPU path). */
  gpuWeights: GpuWeights | null;
  /** Path for batches (ingest). */
  path: EmbedPath;
  /** Arithmetic of the CPU path's linear layers (`Precision`). */
  precision: Precision;
  /** Path for single texts (queries), from the crossover. */
  queries: EmbedPath;
  /**
   * Why this path, in one plain sentence (e.g. `no WebGPU adapter: embedding on the CPU (wasm
   * SIMD)`).
   */
  reason: string;
  /** Whether that adapter is a CPU implementation of the API. */
  softwareAdapter: boolean;
  /**
   * Threads the CPU path's forward passes run on: rayon's pool natively; in the page the embedding
   * workers (`CpuPool`), or 1 without them.
   */
  threads: number;
  /**
   * In the page with embedding workers: the wasm memory each started worker holds (bytes; the model
   * and its working buffers), null before the first batch starts them or without them.
   */
  workerMemoryBytes: number | null;
}
/** What `enrich` did: each stage's report (null: skipped). */
export interface EnrichReport {
  /** Knowledge atomizing. */
  atomize: AtomizeReport | null;
  /** Forward summaries (absent: skipped). */
  forwardSummaries?: SummaryReport;
  /** LLM mind maps. */
  mindMaps: MindMapReport | null;
  /** Auto-tagging (absent: skipped). */
  tags?: TagReport;
}
/** GPU objects created so far on one device (a warm batch must add none). */
export interface GpuCounters {
  /** Bind groups. */
  bindGroups: number;
  /** Buffers (weights, activations, parameters, readback). */
  buffers: number;
  /** Compute pipelines. */
  pipelines: number;
}
/** Precision of the GPU path's matrix multiplies (`EmbedderInfo::gpu_weights`). */
export type GpuWeights =
  /**
   * f16 weights; products in f16 summed in f32 per 16-wide slice (a hardware adapter with
   * `shader-f16`).
   */
  | 'f16'
  /** f32 weights and products. */
  | 'f32';
/** What the graph retriever did, for the explain view. */
export interface GraphExplain {
  /** Anchors (row, leaf column, value, sub-root column, support rows). */
  anchors: Anchor[];
  /** Node labels of each template row, topic first (only the selected rows). */
  rows: ([number, number, string[]])[];
  /** Template size: rows (fact paths) × columns. */
  template: [number, number];
  /**
   * Candidate topics (document ids) with how each was reached: `query`, `title`, `fact`,
   * `super_topic`, `mention`.
   */
  topics: ([string, string])[];
}
/** One fact found by the graph retriever. */
export interface GraphHit {
  /** The fact's chunk (provenance). */
  chunkId: string;
  /** The fact's document. */
  docId: string;
  /** Fact node id. */
  factId: string;
  /** Template row of the fact path. */
  row: number;
  /**
   * PGR support of the fact path (per key point the largest row sum of one anchor's dyeing matrix,
   * summed over key points: `PgrResult::support`); facts not selected by PGR follow with their leaf
   * similarity − 2, so they sort after every selected row.
   */
  score: number;
}
/** The graph retriever's answer. */
export interface GraphSearch {
  /** The selected fact paths merged back into mind maps (topic → routes → facts): the context. */
  context: MindMap[];
  /** How it got there. */
  explain: GraphExplain;
  /** Facts, best first: PGR's selected rows, then the other candidate facts. */
  hits: GraphHit[];
  /** How many of `hits` come first from PGR's selected rows. */
  selected: number;
}
/** One search result. */
export interface Hit {
  /** Chunk id. */
  chunkId: string;
  /** Document id. */
  docId: string;
  /** Headings above the chunk. */
  headingPath: string[];
  /** The score the list is ordered by (RRF in hybrid mode, else the retriever's own). */
  score: number;
  /** Score and rank from each retriever. */
  scores: Scores;
  /**
   * With `Grouping::Document`: the document's other matching chunks, best first (at most 2). Empty
   * otherwise.
   */
  sections?: Section[];
  /** Snippet around the best-matching terms (≈ 240 characters). */
  snippet: SnippetPart[];
  /** Document title. */
  title: string;
  /** Document URL, if any. */
  url: string | null;
}
/**
 * GPU time of one forward pass by kernel kind (timestamp queries), its span on the GPU, and its
 * wall time from recording to readback on the host, in milliseconds.
 */
export interface KernelTimes {
  /** Attention. */
  attentionMs: number;
  /** Residual + LayerNorm. */
  layerNormMs: number;
  /** Tiled matrix multiplies (Q/K/V, output, FFN ×2). */
  matmulMs: number;
  /** Embedding gather and pooling. */
  otherMs: number;
  /**
   * GPU time from the first dispatch's start to the last one's end: the kernels and the gaps
   * between them (barriers, launches).
   */
  spanMs: number;
  /** Host wall time of the whole call (includes recording, submission, transfers, readback). */
  wallMs: number;
}
/** A route (has children) or a fact (a leaf). */
export interface MapNode {
  /** Children; empty for a fact. */
  children?: MapNode[];
  /** For a fact: the ordinal of the chunk it comes from (provenance). */
  chunk?: number;
  /** Route label or fact text. */
  label: string;
}
/** A memory entry as `memory()` returns it: a `MemoryRecord` without its embedding. */
export interface MemoryEntry {
  /** The knowledge (an answer). */
  content: string;
  /** Milliseconds since the Unix epoch. */
  createdAt: number;
  /** `"m{created_at}-{n}"`. */
  id: string;
  /** Chunk ids the content came from. */
  sources: string[];
  /** The title (a question) the retrieval trigger compares queries with. */
  title: string;
}
/** One document's mind map. */
export interface MindMap {
  /** Routes and facts directly under the topic. */
  children: MapNode[];
  /** The topic: the document's title. */
  topic: string;
}
/** Which mind map the pseudo-graph holds for a document (`DocumentRecord::mind_map`). */
export type MindMapKind =
  /** Built from headings and sentences, no LLM (`structural`). */
  | 'structural'
  /** PG-RAG's fact-check-item-verified map (`enrich`'s mind-map stage). */
  | 'llm'
  /** The LLM map failed after its repair attempt; the structural map was kept. */
  | 'structural-fallback';
/** What an LLM mind-map pass did. */
export interface MindMapReport {
  /** Documents given an LLM mind map. */
  documents: number;
  /** Documents that kept their structural map (unreadable mind-map JSON). */
  fallbacks: string[];
  /** Fact-check items kept (verified), over all documents. */
  items: number;
  /** Regenerations asked for. */
  regenerations: number;
  /**
   * Chunks whose items failed verification after every regeneration (their structural facts stood
   * in).
   */
  unverifiedChunks: number;
}
/** The phase of a long operation a `ProgressEvent` reports (`phase` in the page, camelCase). */
export type Phase =
  /** `open`: the model files downloaded (`done`/`total` in bytes). */
  | 'model'
  /** `open`: the embedding device set up (0/1, 1/1). */
  | 'device'
  /**
   * `open`: IndexedDB read and the in-memory indexes rebuilt (0/1, 1/1); the site builder: pages
   * indexed.
   */
  | 'index'
  /** `add`: documents parsed. */
  | 'parse'
  /** `add`: chunks embedded (one event per embedding call). */
  | 'embed'
  /** `add`: mind-map nodes embedded. */
  | 'graph'
  /** `add`: the commit (0/1). */
  | 'store'
  /** `add`: finished. */
  | 'done'
  /** `enrich`: chunks given a forward summary. */
  | 'summaries'
  /** `enrich`: documents tagged. */
  | 'tags'
  /** `enrich`: chunks atomized. */
  | 'atomize'
  /** `enrich`: documents given an LLM mind map. */
  | 'mindmap'
  /** The site builder's `distillStatic`: token rows distilled. */
  | 'distill';
/**
 * Arithmetic of the CPU forward pass's linear layers (Q/K/V, attention output, intermediate,
 * output: 95% of its multiply-adds at sentence lengths; attention, LayerNorm and GELU stay f32).
 */
export type Precision =
  /** f32 products (fused multiply-add). */
  | 'f32'
  /**
   * int8 weights (per output column) × 7-bit activations (per row), summed exactly in i32
   * (`gemm_i8`).
   */
  | 'int8';
/** A progress event of long work (`add()`, model loading). */
export interface ProgressEvent {
  /** Units done in this phase. */
  done: number;
  /** The phase. */
  phase: Phase;
  /** Units in this phase. */
  total: number;
}
/** Outcome of `remove()`. */
export interface RemoveReport {
  /** Ids removed. */
  removed: string[];
  /** Ids that were not stored (ignored; not an error). */
  unknown: string[];
}
/** Where the pipeline looked for the answer (the routing step's choice, WeKnow-RAG). */
export type Route =
  /** The pseudo-graph's mind maps (facts about named topics). */
  | 'graph'
  /** Passages (chunks). */
  | 'chunks'
  /** Both (the default, and the fallback of an unreadable reply). */
  | 'both'
  /** The web searcher (current events, not in the knowledge base). */
  | 'web'
  /** The memory knowledge base: the retrieval trigger fired. */
  | 'memory';
/**
 * Per-retriever scores and 1-based ranks of a hit (absent where that retriever did not find it).
 */
export interface Scores {
  /** Cosine of the chunk's best atomic question to the query (path (b)). */
  atomic?: number;
  /** Rank in the atomic list. */
  atomicRank?: number;
  /** BM25 score. */
  bm25: number | null;
  /** Rank in the BM25 list. */
  bm25Rank: number | null;
  /** Cosine similarity of query and chunk embeddings. */
  dense: number | null;
  /** Rank in the dense list. */
  denseRank: number | null;
  /**
   * Aggregated PGR score of the chunk's best fact path (leaf similarity − 2 for candidate facts PGR
   * did not select).
   */
  graph: number | null;
  /** Rank in the graph list. */
  graphRank: number | null;
  /** Reciprocal-rank-fusion score (hybrid modes). */
  rrf: number | null;
}
/** What one `Engine::maintain` step did. */
export interface SealReport {
  /**
   * The vector collection sealed: `"chunks"`, `"topics"`, `"facts"` or `"questions"` (empty when
   * the step only deleted unreadable segments); `"segments"` when the step stored a new base of
   * index segments (`vectors`: its chunks, `segments`: the records written) or deleted them (both
   * 0).
   */
  collection: Sealed;
  /** Older segments merged into it. */
  merged: number;
  /** Sealed segments of the collection afterwards. */
  segments: number;
  /** Vectors in the new segment. */
  vectors: number;
}
/** What a maintenance step sealed or stored (`SealReport::collection`). */
export type Sealed =
  /** Chunk embeddings. */
  | 'chunks'
  /** The pseudo-graph's topic nodes. */
  | 'topics'
  /** The pseudo-graph's fact nodes. */
  | 'facts'
  /** Atomic questions. */
  | 'questions'
  /** A base of index segments stored or deleted. */
  | 'segments'
  /** Nothing sealed: the step only deleted unreadable segments. */
  | '';
/** Another matching chunk of a document-level hit (`Hit::sections`). */
export interface Section {
  /** Chunk id. */
  chunkId: string;
  /** Headings above the chunk. */
  headingPath: string[];
  /** Its score in the ranked list. */
  score: number;
  /** Snippet around the best-matching terms. */
  snippet: SnippetPart[];
}
/** A piece of a snippet; `hit` pieces matched a query term (render them highlighted). */
export interface SnippetPart {
  /** Whether the piece matched a query term. */
  hit: boolean;
  /** Text of the piece (plain text: render with `textContent`, never as HTML). */
  text: string;
}
/** Counters returned by `stats()`. */
export interface Stats {
  /**
   * Vector collections (chunks, topics, facts): vectors in the exact fresh buffer, sealed HNSW
   * segments, tombstones.
   */
  ann: AnnStats;
  /** Chunks atomized (with a `questions` record). */
  atomizedChunks: number;
  /** Chunks stored. */
  chunks: number;
  /** Embedding dimension. */
  dim: number;
  /** Documents stored. */
  documents: number;
  /**
   * The languages its documents are stemmed in (tags: `en`, `fr`; `no` for Norwegian), whose
   * stemmer modules a search needs (the worker loads them at open).
   */
  languages: string[];
  /**
   * Opened lazily and not loaded yet: searches are served from the stored index segments
   * (docs/vector-index.md, "Index segments"), `documents`, `chunks` and `terms` are theirs, and
   * `ann` and `memory` read 0 until the knowledge base is loaded.
   */
  lazy: boolean;
  /** Memory knowledge-base entries. */
  memory: number;
  /** Model id. */
  model: string;
  /** Atomic questions indexed. */
  questions: number;
  /** Distinct BM25 terms. */
  terms: number;
  /** The worker's wasm linear memory, in bytes (every loaded index lives there). */
  wasmMemoryBytes: number;
}
/** What a forward-summary pass did. */
export interface SummaryReport {
  /** Chunks summarized (and embedded again). */
  chunks: number;
  /** Chunks whose reply stayed unreadable (left for the next pass). */
  failed: string[];
  /** Chunks still without a summary. */
  remaining: number;
}
/** What an auto-tagging pass did. */
export interface TagReport {
  /** Documents tagged. */
  documents: number;
  /** Documents whose reply stayed unreadable (left for the next pass). */
  failed: string[];
  /** Documents still untagged. */
  remaining: number;
  /** Tags given, over all documents. */
  tags: number;
}
/** A trace event: one step's inputs, outputs and time. */
export interface TraceEvent {
  /** What went in. */
  input: unknown;
  /** Milliseconds. */
  ms: number;
  /** What came out. */
  output: unknown;
  /** Round (1-based; 0 for steps outside the loop). */
  round: number;
  /** The step. */
  step: TraceStep;
}
/** `traces` record (schema 4): one kept ask trace (opt-in), for export as JSONL. */
export interface TraceRecord {
  /** Milliseconds since the Unix epoch. */
  createdAt: number;
  /** `"t{created_at}"` (zero-padded, so keys sort by time). */
  id: string;
  /** The trace as JSON: `{question, events: [...], trajectory?, answer?}`. */
  json: string;
  /** The question asked. */
  question: string;
}
/**
 * A step of the ask pipeline, of decomposition or of an ingest-time stage, as a `TraceEvent` names
 * it (camelCase in the page).
 */
export type TraceStep =
  /** `trigger`: the retrieval trigger: memory entries matched against the question. */
  | 'trigger'
  /** `rewrite`: Query Rewriter+: the clarified question and its search queries. */
  | 'rewrite'
  /** `route`: routing: graph, chunks, both, web or memory. */
  | 'route'
  /** `queryTags`: query-side tagging: the knowledge base's tags the question's documents carry. */
  | 'queryTags'
  /** `retrieve`: a retrieval of the rewritten queries, or of a decomposition round. */
  | 'retrieve'
  /** `keyPoints`: key points for the graph retriever. */
  | 'keyPoints'
  /** `search`: a search of the question. */
  | 'search'
  /** `web`: the web searcher. */
  | 'web'
  /** `propose`: decomposition: proposed sub-questions. */
  | 'propose'
  /** `select`: decomposition: the chosen candidate. */
  | 'select'
  /** `verify`: verify-and-supplement: what is missing. */
  | 'verify'
  /** `sparse`: the sparse (BM25) searcher of a supplement. */
  | 'sparse'
  /** `dense`: the dense searcher of a supplement. */
  | 'dense'
  /** `summarize`: LevelRAG's summary of one supplement. */
  | 'summarize'
  /** `filter`: the knowledge filter. */
  | 'filter'
  /** `perspectives`: the drafts of the L4 preset. */
  | 'perspectives'
  /** `answer`: the answer. */
  | 'answer'
  /** `memory`: the memory update. */
  | 'memory'
  /** `timeout`: a model call or web search that timed out; the question ends in "I don't know.". */
  | 'timeout'
  /**
   * `fallback`: a model reply that could not be used (a stream cut short, not a chat completion,
   * past its cap) or a web search that failed; the question ends in "I don't know.".
   */
  | 'fallback'
  /** `forwardSummary`: enrich: a forward summary. */
  | 'forwardSummary'
  /** `tags`: enrich: automatic tags. */
  | 'tags'
  /** `atomize`: enrich: atomic questions of a chunk. */
  | 'atomize'
  /** `fci`: enrich: fact-check items of a chunk. */
  | 'fci'
  /** `mindmap`: enrich: a document's LLM mind map. */
  | 'mindmap';
/** A decomposition trajectory `(q, [(sub_q, answer)...])` and its context. */
export interface Trajectory {
  /** Chunk ids of the context, in the order they joined. */
  context: string[];
  /** The original question. */
  question: string;
  /** Every round, in order. */
  rounds: DecomposeRound[];
  /** Why it ended. */
  stop: DecomposeStop;
}
// end generated

export class WebRag {
  /** Opens (or creates) a knowledge base; the engine runs in a module Web Worker. */
  /** Progress phases: 'model' (done/total in bytes), 'device' (GPU set-up), 'index' (0/1, 1/1 around reading IndexedDB and rebuilding the indexes), then ingest phases. */
  static open(opts: { name?: string; model: string | ModelUrl | ModelBytes; options?: Options; onProgress?: (e: ProgressEvent) => void; workerUrl?: string | URL; device?: Device; precision?: Precision; workers?: number; startTimeoutMs?: number; cpuKernels?: 'auto' | 'relaxed-simd' | 'simd128'; onEvent?: (e: EmbedderEvent) => void; stem?: string | URL }): Promise<WebRag>;
  /** Deletes the cached model files. */
  static clearModelCache(): Promise<boolean>;
  /** `signal`: an abort while the add waits behind other operations rejects it (CancelledError CANCELLED) and nothing is written; once started it runs to its one atomic commit. While it runs, `search` and the other reads answer from the knowledge base as it was before the batch; writes wait for it. */
  add(docs: DocumentInput[], opts?: { onProgress?: (e: ProgressEvent) => void; signal?: AbortSignal }): Promise<AddReport>;
  remove(ids: string[]): Promise<RemoveReport>;
  /** `literal: true` reads the query as plain text (no phrases, `-term` or `^` boosts). `group: 'document'`: `k` documents, each its best chunk with its other matching chunks as `sections`. */
  /** `signal`: an abort while the search waits behind other operations rejects it with CancelledError CANCELLED. */
  search(query: string, options?: SearchOptions): Promise<Hit[]>;
  /** The pseudo-graph retriever alone: facts (with their chunk), the selected fact paths merged into mind maps, and why. */
  explainGraph(query: string, options?: { k?: number }): Promise<GraphSearch>;
  /** Knowledge-aware decomposition of `question` over this knowledge base with an LLM endpoint; rejects with LlmError. */
  decompose(question: string, opts: { llm: LlmConfig | ModelFunction; options?: DecomposeOptions; onTrace?: (e: TraceEvent) => void; signal?: AbortSignal }): Promise<Trajectory>;
  /** One short chat with the endpoint ("test connection"); rejects with LlmError. */
  testLlm(llm: LlmConfig | ModelFunction): Promise<{ reply: string; ms: number }>;
  /** The ask pipeline; rejects with LlmError when the endpoint needs the user (LLM_NOT_CONFIGURED, LLM_UNAUTHORIZED, LLM_RATE_LIMITED, LLM_HTTP, LLM_NETWORK) or LLM_CANCELLED when `signal` aborts; a model call that times out or gives nothing usable (a cut stream, not a chat completion, past its cap) and a failed web search end in "I don't know." with the sources gathered so far. */
  ask(question: string, opts: { llm?: LlmConfig | ModelFunction; options?: AskOptions; onTrace?: (e: TraceEvent) => void; onEvent?: (e: TraceEvent) => void; onToken?: (piece: string, mark: { provisional: boolean }) => void; signal?: AbortSignal }): Promise<AskResult>;
  /** Ingest-time LLM stages over what is stored (forward summaries, tags, knowledge atomizing, LLM mind maps); resumable; rejects with LlmError. Reads called meanwhile (search, stats, ...) run while it waits on the model; writes wait for it to end. */
  enrich(opts: EnrichStages & {
    llm: LlmConfig | ModelFunction;
    /** Only these documents (ids); absent or empty: every document. */
    documents?: string[];
    onProgress?: (e: ProgressEvent | TraceEvent) => void;
    signal?: AbortSignal;
  }): Promise<EnrichReport>;
  traces(): Promise<TraceRecord[]>;
  /** Kept traces as JSONL: 'events' or 'sft' (PIKE-RAG `<decompose>` pairs). */
  exportTraces(opts?: { format?: 'events' | 'sft' }): Promise<string>;
  clearTraces(): Promise<number>;
  memory(): Promise<MemoryEntry[]>;
  forget(): Promise<number>;
  questions(chunkId: string): Promise<string[] | null>;
  mindMap(docId: string): Promise<MindMap | null>;
  /** `path` bypasses the routing (GpuError GPU_UNAVAILABLE for 'gpu' on the CPU path). */
  embed(texts: string[], opts?: { path?: 'cpu' | 'gpu' }): Promise<number[][]>;
  embedder(): Promise<EmbedderInfo>;
  profileGpu(texts: string[]): Promise<KernelTimes | null>;
  stats(): Promise<Stats>;
  /** Seals vector buffers into HNSW segments now (also done when the worker is idle); `force` seals every buffer and purges removed vectors. */
  maintain(opts?: { force?: boolean }): Promise<SealReport | SealReport[] | null>;
  documents(): Promise<DocumentRecord[]>;
  chunk(id: string): Promise<ChunkRecord | null>;
  clear(): Promise<void>;
  /** The whole knowledge base as one file: gzip-compressed JSON of every stored record (docs/kb-file.md). */
  exportKb(): Promise<Uint8Array>;
  /** Replaces this knowledge base with an exported one, checked whole first (KB_FILE_INVALID, KB_FILE_TOO_LARGE, MODEL_MISMATCH, STORE_CORRUPT, STORE_VERSION_TOO_NEW: nothing changes). Resolves to the new stats. */
  importKb(bytes: Uint8Array | ArrayBuffer): Promise<Stats>;
  close(): void;
}
