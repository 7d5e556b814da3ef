//! Engine options, each with its default and accepted range.
use serde::{Deserialize, Serialize};

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
    /// Reciprocal-rank-fusion constant `k` (Cormack et al. 2009). Default 60; range 1..=1000.
    pub rrf_k: f32,
    /// How many hits each retriever contributes to fusion. Default 100.
    pub fusion_depth: usize,
    /// Chunks embedded per forward pass at ingest. Default 16; range 1..=256.
    pub embed_batch: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_document_bytes: 8 << 20,
            max_chunk_tokens: 256,
            target_chunk_tokens: 200,
            bm25_k1: 1.2,
            bm25_b: 0.75,
            rrf_k: 60.0,
            fusion_depth: 100,
            embed_batch: 16,
        }
    }
}
