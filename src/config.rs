//! Engine options, each with its default and accepted range.
use serde::{Deserialize, Serialize};

use crate::error::InputError;
pub use crate::index::bm25::Bm25Idf;
use crate::options::{Doc, Range, Value, check_all};

/// Options of an [`crate::Engine`]. All fields have defaults (see [`Config::default`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Config {
    /// Largest accepted document, in bytes of UTF-8 text. Default 8 MiB (about 30 minutes of CPU
    /// embedding in a browser); range 1 KiB..=256 MiB. Larger documents get `DOCUMENT_TOO_LARGE`.
    pub max_document_bytes: usize,
    /// Upper bound of a chunk in word pieces of the embedder's tokenizer, *including* the
    /// `[CLS]`/`[SEP]` tokens and the heading prefix that is embedded with the chunk. Default 256
    /// (all-MiniLM-L6-v2's `max_seq_length`); range 32..=model max.
    pub max_chunk_tokens: usize,
    /// Soft target size of a chunk in word pieces; blocks are merged up to it. Default 200.
    pub target_chunk_tokens: usize,
    /// BM25 `k1` (term-frequency saturation). Default 1.2; range 0..=3.
    pub bm25_k1: f32,
    /// BM25 `b` (length normalisation). Default 0.75; range 0..=1.
    pub bm25_b: f32,
    /// BM25 inverse document frequency. Default [`Bm25Idf::Plus1`].
    pub bm25_idf: Bm25Idf,
    /// With [`Bm25Idf::Okapi`]: a negative idf becomes `epsilon` × the mean idf of all terms
    /// (rank_bm25's floor). Default 0.25; range 0..=1.
    pub bm25_epsilon: f32,
    /// Reciprocal-rank-fusion constant `k` (Cormack et al. 2009). Default 60; range 1..=1000.
    pub rrf_k: f32,
    /// How many hits each retriever contributes to fusion. Default 100; range 1..=10000.
    pub fusion_depth: usize,
    /// Each retriever's weight in the fused modes: a list adds `weight / (rrfK + rank)`
    /// ([`crate::retrieve::FusionWeights`]; each 0..=10).
    pub fusion_weights: crate::retrieve::FusionWeights,
    /// The `hybridGraph` mode's second stage: the fused list reordered by PGR's selection
    /// ([`crate::retrieve::GraphCascade`]: `enabled`, `keep` 2, `candidates` 1).
    pub graph_cascade: crate::retrieve::GraphCascade,
    /// Texts (chunks, then mind-map nodes) embedded per call at ingest; progress is reported
    /// after each call. Default: the embedder's own ([`crate::embed::Embedder::preferred_batch`]:
    /// 256 on a hardware GPU, 64 on the CPU natively, 16 on the page's CPU path); range 1..=1024.
    pub embed_batch: Option<usize>,
    /// Pseudo-graph and PGR options (docs/pseudo-graph.md).
    pub graph: crate::graph::GraphParams,
    /// HNSW segments of the vector collections (chunks, topics, facts): `efConstruction`,
    /// `efSearch`, `sealAt`, `seed` ([`crate::index::ann::AnnParams`]).
    pub ann: crate::index::ann::AnnParams,
    /// From this many chunks on, idle-time upkeep stores the index segments a knowledge base
    /// opens lazily with (docs/vector-index.md, "Index segments"): the next open reads only
    /// their head and serves BM25, dense and hybrid searches from them until an operation
    /// needs the whole knowledge base. 0: never. Default 4096; range 0..=100,000,000.
    pub lazy_open_chunks: usize,
}

impl Config {
    /// `maxDocumentBytes`: 8 MiB; 1 KiB..=256 MiB.
    pub const MAX_DOCUMENT_BYTES: Range = Range::new("maxDocumentBytes", (8 << 20) as f64, 1024.0, (256 << 20) as f64);
    /// `bm25K1`.
    pub const BM25_K1: Range = Range::new("bm25K1", 1.2, 0.0, 3.0);
    /// `bm25B`.
    pub const BM25_B: Range = Range::new("bm25B", 0.75, 0.0, 1.0);
    /// `bm25Epsilon`.
    pub const BM25_EPSILON: Range = Range::new("bm25Epsilon", 0.25, 0.0, 1.0);
    /// `rrfK`.
    pub const RRF_K: Range = Range::new("rrfK", 60.0, 1.0, 1000.0);
    /// `fusionDepth`.
    pub const FUSION_DEPTH: Range = Range::new("fusionDepth", 100.0, 1.0, 10_000.0);
    /// `embedBatch` (its default is the embedder's: `default` here is the CPU path's in the page).
    pub const EMBED_BATCH: Range = Range::new("embedBatch", 16.0, 1.0, 1024.0);
    /// `lazyOpenChunks`.
    pub const LAZY_OPEN_CHUNKS: Range = Range::new("lazyOpenChunks", 4096.0, 0.0, 100_000_000.0);

    /// `maxChunkTokens`'s default (all-MiniLM-L6-v2's `max_seq_length`).
    pub const MAX_CHUNK_TOKENS: usize = 256;
    /// `targetChunkTokens`'s default.
    pub const TARGET_CHUNK_TOKENS: usize = 200;
    /// The engine options as docs/api.md ("Engine options") and `index.d.ts` (`Options`) state them.
    pub const DOCS: &[Doc] = &[
        Doc::new(
            "maxDocumentBytes",
            Value::Number(Self::MAX_DOCUMENT_BYTES),
            "largest document (UTF-8 bytes; 8 MiB by default); larger ones get `DOCUMENT_TOO_LARGE`",
        ),
        Doc::new(
            "maxChunkTokens",
            Value::Other { ts: "number", default: "256", accepts: "≥ 32 (capped at the model's maximum)" },
            "chunk bound in word pieces, including `[CLS]`, `[SEP]` and the heading prefix embedded with the chunk",
        ),
        Doc::new(
            "targetChunkTokens",
            Value::Other { ts: "number", default: "200", accepts: "1..=`maxChunkTokens`" },
            "soft chunk size in word pieces; blocks are merged up to it",
        ),
        Doc::new("bm25K1", Value::Number(Self::BM25_K1), "BM25 term-frequency saturation"),
        Doc::new("bm25B", Value::Number(Self::BM25_B), "BM25 length normalisation"),
        Doc::new(
            "bm25Idf",
            Value::Other { ts: "'plus1' | 'okapi'", default: "`'plus1'`", accepts: "`'plus1'` \\| `'okapi'`" },
            "BM25 idf: `plus1` ln(1 + (N − df + 0.5)/(df + 0.5)) (Lucene); `okapi` ln((N − df + 0.5)/(df + 0.5)) with negative values floored to `bm25Epsilon` × the mean idf (rank_bm25's `BM25Okapi`)",
        ),
        Doc::new("bm25Epsilon", Value::Number(Self::BM25_EPSILON), "the `okapi` floor"),
        Doc::new(
            "rrfK",
            Value::Number(Self::RRF_K),
            "reciprocal-rank-fusion constant k (Cormack, Clarke & Büttcher, SIGIR 2009): score = Σ 1/(k + rank)",
        ),
        Doc::new("fusionDepth", Value::Number(Self::FUSION_DEPTH), "hits each retriever contributes to fusion"),
        Doc::new(
            "fusionWeights",
            Value::Group(crate::retrieve::FusionWeights::DOCS),
            "each retriever's weight in the fused modes: a list adds weight / (rrfK + rank) (weighted RRF); 0 leaves the list out. `webrag eval --tune-fusion` chooses weights on half of each eval set's questions and reports the other half ([benchmarks.md](benchmarks.md#fusion-weights): tuned weights did not beat equal ones there, so 1 each stays the default)",
        ),
        Doc::new(
            "graphCascade",
            Value::Group(crate::retrieve::GraphCascade::DOCS),
            "the `hybrid+graph` mode's second stage over the fused list: its first `keep` hits stay; then the other hits PGR selected and the graph list's first `candidates` unselected facts, in fused order; then the rest (`retrieve::GraphCascade`; [benchmarks.md](benchmarks.md#graph-cascade)). A hit's `score` stays its RRF score, so a promoted hit can follow a higher one",
        ),
        Doc::new(
            "embedBatch",
            Value::NumberDefault(Self::EMBED_BATCH, "the path's own: 256 on a hardware GPU, 16 on the page's CPU path (64 natively)"),
            "texts embedded per call at ingest; an `embed` progress event follows each call",
        ),
        Doc::new(
            "lazyOpenChunks",
            Value::Number(Self::LAZY_OPEN_CHUNKS),
            "from this many chunks on, idle-time upkeep stores the index segments the next `open` reads lazily ([vector-index.md](vector-index.md#index-segments-lazy-open)); 0 never stores them and always loads the whole knowledge base at open",
        ),
        Doc::new("graph", Value::Table { ts: "GraphOptions", default: "below" }, "pseudo-graph options (PG-RAG)"),
        Doc::new(
            "ann",
            Value::Table { ts: "AnnOptions", default: "below" },
            "HNSW segments of the vector collections (chunks, topics, facts, questions)",
        ),
    ];

    /// The BM25 parameters these options name.
    pub fn bm25(&self) -> crate::index::bm25::Bm25Params {
        crate::index::bm25::Bm25Params { k1: self.bm25_k1, b: self.bm25_b, idf: self.bm25_idf, epsilon: self.bm25_epsilon }
    }

    /// Checks every option against its documented range.
    ///
    /// Errors: [`InputError::InvalidOption`] naming the first option out of range.
    pub fn validate(&self) -> Result<(), InputError> {
        let bad = |name: &str, reason: String| Err(InputError::InvalidOption { name: name.into(), reason });
        Self::MAX_DOCUMENT_BYTES.check("", self.max_document_bytes as f64)?;
        if self.max_chunk_tokens < 32 {
            return bad("maxChunkTokens", format!("{} is below 32", self.max_chunk_tokens));
        }
        if self.target_chunk_tokens == 0 || self.target_chunk_tokens > self.max_chunk_tokens {
            return bad(
                "targetChunkTokens",
                format!("{} is outside 1..=maxChunkTokens ({})", self.target_chunk_tokens, self.max_chunk_tokens),
            );
        }
        check_all(
            "",
            &[
                (Self::BM25_K1, self.bm25_k1 as f64),
                (Self::BM25_B, self.bm25_b as f64),
                (Self::BM25_EPSILON, self.bm25_epsilon as f64),
                (Self::RRF_K, self.rrf_k as f64),
                (Self::FUSION_DEPTH, self.fusion_depth as f64),
                (Self::LAZY_OPEN_CHUNKS, self.lazy_open_chunks as f64),
            ],
        )?;
        if let Some(n) = self.embed_batch {
            Self::EMBED_BATCH.check("", n as f64)?;
        }
        self.fusion_weights.validate()?;
        self.graph_cascade.validate()?;
        self.ann.validate()?;
        self.graph.validate()
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_document_bytes: Self::MAX_DOCUMENT_BYTES.count(),
            max_chunk_tokens: Self::MAX_CHUNK_TOKENS,
            target_chunk_tokens: Self::TARGET_CHUNK_TOKENS,
            bm25_k1: Self::BM25_K1.real(),
            bm25_b: Self::BM25_B.real(),
            bm25_idf: Bm25Idf::Plus1,
            bm25_epsilon: Self::BM25_EPSILON.real(),
            rrf_k: Self::RRF_K.real(),
            fusion_depth: Self::FUSION_DEPTH.count(),
            fusion_weights: crate::retrieve::FusionWeights::default(),
            graph_cascade: crate::retrieve::GraphCascade::default(),
            embed_batch: None,
            graph: crate::graph::GraphParams::default(),
            ann: crate::index::ann::AnnParams::default(),
            lazy_open_chunks: Self::LAZY_OPEN_CHUNKS.count(),
        }
    }
}
