// generated: errors (webrag surface)
/** Every error code (docs/api.md, "Errors"). */
export type ErrorCode =
  | 'EMPTY_DOCUMENT'
  | 'INVALID_UTF8'
  | 'DOCUMENT_TOO_LARGE'
  | 'DUPLICATE_ID'
  | 'INVALID_ID'
  | 'UNKNOWN_FORMAT'
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
  | 'INTERNAL';
/** Base class of every webrag error, with a stable `code`; itself thrown with WORKER_FAILED, INTERNAL. */
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
/** Bad document or option: EMPTY_DOCUMENT, INVALID_UTF8, DOCUMENT_TOO_LARGE, DUPLICATE_ID, INVALID_ID, UNKNOWN_FORMAT, INVALID_OPTION, KB_FILE_INVALID, KB_FILE_TOO_LARGE, NOT_IN_BUILD. */
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
  /** Structured steps ask for JSON output (`response_format: {"type": "json_object"}`, which llama.cpp's server, vLLM and Ollama enforce by constrained decoding); `auto` stops asking once the server refuses it with a 400/422 naming `response_format`. Default `'auto'`. */ jsonMode?: 'auto' | 'on' | 'off';
}
// end generated

/** A chat message as the model function receives it. */
export interface ChatMessage { role: 'system' | 'user' | 'assistant'; content: string }
/** The page's own model (e.g. WebLLM), run in the page: a whole reply, or its pieces as they come (streamed answers). No timeout or retry applies. */
export type ModelFunction = (messages: ChatMessage[], opts: { step: string; signal?: AbortSignal }) => Promise<string | AsyncIterable<string>> | string | AsyncIterable<string>;

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

export interface DecomposeCandidate { question: string; chunkId: string; score: number; via: 'atomic' | 'question' | 'chunk' }
export interface DecomposeRound { proposals: string[]; candidates: DecomposeCandidate[]; selected: number | null; subQuestion: string | null; answer: string | null }
/** `stop`: why the loop ended. `context`: chunk ids, in the order they joined. */
export interface Trajectory { question: string; rounds: DecomposeRound[]; context: string[]; stop: 'nothingProposed' | 'nothingFound' | 'nothingSelected' | 'rounds' | 'unreadable' }
/** The cited answer: `text` cites `sources` as [S1], [S2]...; "I don't know." when `known` is false. */
export interface Answer { text: string; citations: string[]; confidence: 'low' | 'medium' | 'high'; known: boolean; sources: string[] }
// generated: phases-and-steps (webrag surface)
/** The phase of a long operation a `ProgressEvent` reports (`types::Phase`). */
export type Phase =
  | 'model'
  | 'device'
  | 'index'
  | 'parse'
  | 'embed'
  | 'graph'
  | 'store'
  | 'done'
  | 'summaries'
  | 'tags'
  | 'atomize'
  | 'mindmap'
  | 'distill';
/** The step a `TraceEvent` reports: the ask pipeline's, decomposition's, and the ingest-time stages' (`ask::Step`). */
export type TraceStep =
  | 'trigger'
  | 'rewrite'
  | 'route'
  | 'retrieve'
  | 'keyPoints'
  | 'search'
  | 'web'
  | 'propose'
  | 'select'
  | 'verify'
  | 'sparse'
  | 'dense'
  | 'summarize'
  | 'filter'
  | 'perspectives'
  | 'answer'
  | 'memory'
  | 'timeout'
  | 'forwardSummary'
  | 'tags'
  | 'atomize'
  | 'fci'
  | 'mindmap';
// end generated
/** One step with its inputs, outputs and time (ms); `round`: the decomposition round (1-based), else 0. */
export interface TraceEvent { step: TraceStep; round: number; input: unknown; output: unknown; ms: number }

/** Pipeline steps; each boolean overrides the preset. */
export interface PipelineSteps { trigger?: boolean; rewrite?: boolean; route?: boolean; keyPoints?: boolean; decompose?: boolean; verify?: boolean; summarize?: boolean; filter?: boolean; answer?: boolean; memory?: boolean }
// generated: ask-options (webrag surface)
/** Ask-pipeline options (docs/ask-pipeline.md). */
export interface AskOptions {
  /** Which steps run and how the answer is written ([ask-pipeline.md](ask-pipeline.md), "Presets"): `search` no model call (the context is the `hybrid+graph` search result, `answer` is `null`); `light` one retrieval and one answer call; `L1`–`L4` PIKE-RAG's task levels (factual, multi-hop, predictive, creative); `ask` every step. Default `'ask'`. */ preset?: 'ask' | 'search' | 'light' | 'L1' | 'L2' | 'L3' | 'L4';
  /** `{trigger, rewrite, route, keyPoints, decompose, verify, summarize, filter, answer, memory}` over the preset; an unknown step → `INVALID_OPTION`. Default the preset's. */ steps?: PipelineSteps;
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
  };
}
// end generated
/** A source of the answer and the step that brought it (`memory`, `rewrite`, `graph`, `decompose`, `search`, `sparse`, `dense`). */
export interface ContextItem { id: string; title: string; text: string; via: string }
export interface AskResult { question: string; clarified: string; answer: Answer | null; context: ContextItem[]; trajectory: Trajectory | null; route: 'graph' | 'chunks' | 'both' | 'web' | 'memory'; remembered: number }
export interface EnrichReport {
  /** Present when the stage ran. */ forwardSummaries?: { chunks: number; failed: string[]; remaining: number };
  /** Present when the stage ran. */ tags?: { documents: number; tags: number; failed: string[]; remaining: number };
  atomize: { chunks: number; questions: number; failed: string[]; remaining: number } | null;
  mindMaps: { documents: number; fallbacks: string[]; items: number; unverifiedChunks: number; regenerations: number } | null;
}
export interface MemoryEntry { id: string; title: string; content: string; sources: string[]; createdAt: number }

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
}

export interface ProgressEvent {
  /** `open`: `model` (bytes), `device`, `index`; `add`: `parse` (documents), `embed` (chunks), `graph` (mind-map nodes embedded), `store`, `done`; `enrich`: `summaries`, `tags`, `atomize`, `mindmap`. */
  phase: Phase;
  done: number;
  total: number;
}

export interface SnippetPart { text: string; hit: boolean }

export interface Hit {
  docId: string;
  chunkId: string;
  title: string;
  url: string | null;
  headingPath: string[];
  /** RRF score in hybrid mode, else the retriever's own score. */
  score: number;
  /** Each retriever's score and 1-based rank (null when it did not find the chunk); `atomic` / `atomicRank` (the cosine of the chunk's best atomic question) only when atomic questions took part. */
  scores: { bm25: number | null; bm25Rank: number | null; dense: number | null; denseRank: number | null; graph: number | null; graphRank: number | null; atomic?: number; atomicRank?: number; rrf: number | null };
  /** Plain text parts; render with textContent, never as HTML. */
  snippet: SnippetPart[];
  /** With `group: 'document'`: the document's other matching chunks, best first (at most 2). */
  sections?: { chunkId: string; headingPath: string[]; score: number; snippet: SnippetPart[] }[];
}

/** Per vector collection: [vectors in the exact fresh buffer, sealed HNSW segments, tombstones]. */
export interface AnnStats { chunks: [number, number, number]; topics: [number, number, number]; facts: [number, number, number]; questions: [number, number, number] }
/** `lazy`: opened from the stored index segments and not loaded whole yet (searches bm25 / dense / hybrid / atomic are served from them; `ann` and `memory` read 0 until loaded). */
export interface Stats { documents: number; chunks: number; terms: number; dim: number; model: string; ann: AnnStats; atomizedChunks: number; questions: number; memory: number; lazy: boolean; /** The worker's wasm linear memory, in bytes (every loaded index lives there). */ wasmMemoryBytes: number }
/** One upkeep step: the collection, vectors in the new segment, older segments merged into it, segments after; for `'segments'`, the chunks of the new index-segment base and the records written (0, 0 when they were deleted). */
export interface SealReport { collection: 'chunks' | 'topics' | 'facts' | 'questions' | 'segments' | ''; vectors: number; merged: number; segments: number }
/** `persisted`: the browser's answer to `navigator.storage.persist()`, asked after the first add that stores something; on later adds `navigator.storage.persisted()`; null without a StorageManager. */
export interface AddReport { added: string[]; replaced: string[]; unchanged: string[]; chunks: number; persisted: boolean | null }
export interface RemoveReport { removed: string[]; unknown: string[] }
export interface DocumentRecord { id: string; title: string; url: string | null; sourceHash: string; addedAt: number; chunkCount: number; status: string; mindMap?: 'structural' | 'llm' | 'structural-fallback'; tags?: string[]; autoTags?: string[]; tagged?: boolean; meta?: Record<string, string> }
export interface ChunkRecord { id: string; docId: string; ordinal: number; headingPath: string[]; text: string; tokenCount: number; forwardSummary?: string }
/** Which documents a search or an ask may use: every condition given must hold. */
export interface SearchFilter {
  /** At least one of these tags, given or automatic (case ignored). */ tags?: string[];
  /** One of these documents. */ docIds?: string[];
  /** Each of these metadata entries. */ meta?: Record<string, string>;
}

// generated: search-options (webrag surface)
/** Options of `search()` (docs/api.md, "Search"). */
export interface SearchOptions {
  /** Hits returned. Default 10; 1..=1000. */ k?: number;
  /** Retrievers. Default `'hybrid'`. */ mode?: SearchMode;
  /** Read the query as plain text: no phrases, exclusions or boosts (for natural-language questions). Default false. */ literal?: boolean;
  /** Only documents with at least one of `tags` (given or automatic; case ignored), among `docIds`, and with every `meta` entry; every retriever is restricted (dense scans the filter's chunks exactly); unknown fields → `INVALID_OPTION`. Default none. */ filter?: SearchFilter;
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

/** A mind map: topic (title) → routes (headings) → facts (leaves; `chunk` = chunk ordinal). */
export interface MindMap { topic: string; children: MapNode[] }
export interface MapNode { label: string; children?: MapNode[]; chunk?: number }

/** `explainGraph()`'s answer. Scores: PGR row sums (selected rows), else leaf cosine − 2. */
export interface GraphSearch {
  hits: { chunkId: string; docId: string; factId: string; score: number; row: number }[];
  context: MindMap[];
  explain: {
    /** Candidate topics as [docId, how reached: 'query' | 'fact' | 'title' | 'mention' | 'super_topic']. */
    topics: [string, string][];
    /** Template matrix size [rows (fact paths), columns (depth)]. */
    template: [number, number];
    /** Per anchor: key point, row, leaf column, similarity, sub-root column, path-matrix rows [top, bottom). */
    anchors: { kp: number; row: number; col: number; value: number; subRootCol: number; top: number; bottom: number }[];
    /** Selected rows: [row, aggregated score, node labels topic first]. */
    rows: [number, number, string[]][];
  };
}

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
/** The CPU path's arithmetic in its linear layers: 'f32', or 'int8' (int8 weights per output column × 7-bit activations per row, SmoothQuant-smoothed, exact i32 sums; relaxed-SIMD integer dot products in the page). */
export type Precision = 'f32' | 'int8';
/** Which path embeds: batches (`path`) and single queries (`queries`, from the measured crossover). */
export interface EmbedderInfo {
  path: 'gpu' | 'cpu'; queries: 'gpu' | 'cpu'; adapter: string | null; softwareAdapter: boolean; reason: string; detail: string | null;
  /** One short query's latency on each path at start-up, ms (median of 3); null with one path. */
  crossover: { cpuMs: number; gpuMs: number } | null;
  /** GPU path's linear weights: 'f16' (hardware adapter with shader-f16) or 'f32'. */
  gpuWeights: 'f16' | 'f32' | null;
  /** Compute dispatches per forward pass (GPU path only). */
  dispatchesPerForward: number | null;
  /** Objects created on the device so far; a warm batch adds none. */
  gpuObjects: { buffers: number; bindGroups: number; pipelines: number } | null;
  /** The CPU path's arithmetic. */
  precision: Precision;
  /** Threads the CPU path's forward passes run on: the embedding workers (open's `workers`), or 1 without them. */
  threads: number;
  /** wasm memory one started embedding worker holds, bytes (the model and its buffers); null before the first batch starts them, or without them. */
  workerMemoryBytes: number | null;
}
/** GPU time of one forward pass by kernel kind (timestamp queries) and its host wall time, ms. */
export interface KernelTimes { matmulMs: number; attentionMs: number; layerNormMs: number; otherMs: number; wallMs: number }
/** Sent to `onEvent`: e.g. {type: 'warning', code: 'GPU_LOST', message} when embedding falls back to the CPU; {type: 'warning', code: 'WORKERS_FAILED', message} when the embedding workers failed and batches are embedded in the engine's worker; {type: 'sealed', ...} after each idle-time sealing step; {type: 'changed'} when another tab committed; {type: 'restarted'} after a worker failure. */
export type EmbedderEvent =
  | { type: 'warning'; code: string; message: string }
  | ({ type: 'sealed' } & SealReport)
  /** Another tab (or worker) committed to this knowledge base; this one reads the store again before its next call. */
  | { type: 'changed'; generation: number | null }
  /** A fresh worker took over after WORKER_FAILED and opened the knowledge base again. */
  | { type: 'restarted' };
export const MODEL_CACHE: string;

// generated: enrich-stages (webrag surface)
/** The ingest-time stages of `enrich()`: each `true`, `false` or its options. */
export interface EnrichStages {
  /** Forward summaries (PIKE-RAG's enhanced chunking); off unless asked. */
  forwardSummaries?: boolean | {
    /** Words a forward summary may have (each chunk after a document's first gets one: what the document said before it; it is embedded with the chunk). Default 40; 5..=200. */ maxWords?: number;
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

export class WebRag {
  /** Opens (or creates) a knowledge base; the engine runs in a module Web Worker. */
  /** Progress phases: 'model' (done/total in bytes), 'device' (GPU set-up), 'index' (0/1, 1/1 around reading IndexedDB and rebuilding the indexes), then ingest phases. */
  static open(opts: { name?: string; model: string | ModelUrl | ModelBytes; options?: Options; onProgress?: (e: ProgressEvent) => void; workerUrl?: string | URL; device?: Device; precision?: Precision; workers?: number; onEvent?: (e: EmbedderEvent) => void }): Promise<WebRag>;
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
  /** The ask pipeline; rejects with LlmError (LLM_TRUNCATED when the stream is cut, LLM_CANCELLED when `signal` aborts); a timed-out model call ends in "I don't know." with the sources gathered so far. */
  ask(question: string, opts: { llm?: LlmConfig | ModelFunction; options?: AskOptions; onTrace?: (e: TraceEvent) => void; onEvent?: (e: TraceEvent) => void; onToken?: (piece: string, mark: { provisional: boolean }) => void; signal?: AbortSignal }): Promise<AskResult>;
  /** Ingest-time LLM stages over what is stored (forward summaries, tags, knowledge atomizing, LLM mind maps); resumable; rejects with LlmError. Reads called meanwhile (search, stats, ...) run while it waits on the model; writes wait for it to end. */
  enrich(opts: EnrichStages & {
    llm: LlmConfig | ModelFunction;
    onProgress?: (e: ProgressEvent | TraceEvent) => void;
    signal?: AbortSignal;
  }): Promise<EnrichReport>;
  traces(): Promise<{ id: string; createdAt: number; question: string; json: string }[]>;
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
  /** Testing hook: destroys the GPU device (as a driver reset would). */
  loseGpuForTesting(): Promise<boolean>;
  /** Testing hook: panics inside the engine as a bug would; rejects with WORKER_FAILED at once, and a fresh worker opens the knowledge base again (onEvent: {type: 'restarted'}). */
  panicForTesting(): Promise<void>;
  /** Testing hook: the next commit aborts its IndexedDB transaction after `ops` writes (STORE_ABORTED; nothing of the batch stays). */
  abortNextCommitForTesting(ops: number): Promise<void>;
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
