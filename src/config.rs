//! Engine options, each with its default and accepted range.
use serde::{Deserialize, Serialize};

use crate::error::InputError;
pub use crate::index::bm25::Bm25Idf;

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
    /// Texts (chunks, then mind-map nodes) embedded per call at ingest; progress is reported
    /// after each call. Default: the embedder's own ([`crate::embed::Embedder::preferred_batch`]:
    /// 256 on a hardware GPU, 64 on the CPU natively, 16 on the page's CPU path); range 1..=1024.
    pub embed_batch: Option<usize>,
    /// Pseudo-graph and PGR options (docs/pseudo-graph.md).
    pub graph: crate::graph::GraphParams,
    /// HNSW segments of the vector collections (chunks, topics, facts): `efConstruction`,
    /// `efSearch`, `sealAt`, `seed` ([`crate::index::ann::AnnParams`]).
    pub ann: crate::index::ann::AnnParams,
}

impl Config {
    /// The BM25 parameters these options name.
    pub fn bm25(&self) -> crate::index::bm25::Bm25Params {
        crate::index::bm25::Bm25Params { k1: self.bm25_k1, b: self.bm25_b, idf: self.bm25_idf, epsilon: self.bm25_epsilon }
    }

    /// Checks every option against its documented range.
    ///
    /// Errors: [`InputError::InvalidOption`] naming the first option out of range.
    pub fn validate(&self) -> Result<(), InputError> {
        let bad = |name: &str, reason: String| Err(InputError::InvalidOption { name: name.into(), reason });
        if !(1024..=256 << 20).contains(&self.max_document_bytes) {
            return bad("maxDocumentBytes", format!("{} is outside 1024..=268435456", self.max_document_bytes));
        }
        if self.max_chunk_tokens < 32 {
            return bad("maxChunkTokens", format!("{} is below 32", self.max_chunk_tokens));
        }
        if self.target_chunk_tokens == 0 || self.target_chunk_tokens > self.max_chunk_tokens {
            return bad(
                "targetChunkTokens",
                format!("{} is outside 1..=maxChunkTokens ({})", self.target_chunk_tokens, self.max_chunk_tokens),
            );
        }
        if !(0.0..=3.0).contains(&self.bm25_k1) {
            return bad("bm25K1", format!("{} is outside 0..=3", self.bm25_k1));
        }
        if !(0.0..=1.0).contains(&self.bm25_b) {
            return bad("bm25B", format!("{} is outside 0..=1", self.bm25_b));
        }
        if !(0.0..=1.0).contains(&self.bm25_epsilon) {
            return bad("bm25Epsilon", format!("{} is outside 0..=1", self.bm25_epsilon));
        }
        if !(1.0..=1000.0).contains(&self.rrf_k) {
            return bad("rrfK", format!("{} is outside 1..=1000", self.rrf_k));
        }
        if !(1..=10_000).contains(&self.fusion_depth) {
            return bad("fusionDepth", format!("{} is outside 1..=10000", self.fusion_depth));
        }
        if let Some(n) = self.embed_batch
            && !(1..=1024).contains(&n)
        {
            return bad("embedBatch", format!("{n} is outside 1..=1024"));
        }
        self.ann.validate()?;
        self.graph.validate()
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_document_bytes: 8 << 20,
            max_chunk_tokens: 256,
            target_chunk_tokens: 200,
            bm25_k1: 1.2,
            bm25_b: 0.75,
            bm25_idf: Bm25Idf::Plus1,
            bm25_epsilon: 0.25,
            rrf_k: 60.0,
            fusion_depth: 100,
            embed_batch: None,
            graph: crate::graph::GraphParams::default(),
            ann: crate::index::ann::AnnParams::default(),
        }
    }
}
