//! Sentence embeddings: the [`Embedder`] port, the WordPiece tokenizer ([`tokenizer`]), BERT
//! weights from safetensors and the CPU forward pass ([`bert`]).
//!
//! Model: any BERT-family encoder with mean pooling (default sentence-transformers
//! all-MiniLM-L6-v2, 384-d), from `config.json` + `tokenizer.json` + `model.safetensors`.
//! Output vectors are L2-normalised, so cosine similarity is a dot product. Correctness is
//! measured against sentence-transformers' own output (`../shared/embeddings/*.golden.json`).
pub mod bert;
pub mod device;
#[cfg(any(not(target_arch = "wasm32"), feature = "builder"))]
pub mod distill;
pub mod gemm;
pub mod gemm_i8;
pub mod gpu;
pub mod hashing;
pub mod ops;
pub mod quantize;
pub mod static_model;
pub mod tokenizer;
#[cfg(not(target_arch = "wasm32"))]
pub mod tokenlearn;
pub mod vecmath;

use crate::error::{ModelError, Result};
use crate::text::TokenCounter;

pub use bert::{BertConfig, BertModel};
pub use device::{CpuPool, DeviceEmbedder, DevicePreference, EmbedPath, EmbedderEvent, EmbedderInfo};
pub use gemm::CpuKernels;
pub use quantize::{WeightFormat, quantize_weights};
pub use static_model::{CorpusCounts, StaticModel};
pub use tokenizer::{WordPiece, WordPieceSpec};

/// Arithmetic of the CPU forward pass's linear layers (Q/K/V, attention output, intermediate,
/// output: 95% of its multiply-adds at sentence lengths; attention, LayerNorm and GELU stay f32).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// f32 products (fused multiply-add).
    #[default]
    F32,
    /// int8 weights (per output column) × 7-bit activations (per row), summed exactly in i32
    /// ([`gemm_i8`]).
    Int8,
}

impl std::str::FromStr for Precision {
    type Err = crate::error::InputError;
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match s {
            "f32" => Ok(Self::F32),
            "int8" => Ok(Self::Int8),
            other => {
                Err(crate::error::InputError::InvalidOption { name: "precision".into(), reason: format!("{other:?} is not f32 or int8") })
            }
        }
    }
}

/// Model id recorded for the default model (sentence-transformers/all-MiniLM-L6-v2).
pub const DEFAULT_MODEL_ID: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// The raw files of a model, as bytes (from disk, a URL, or the caller).
#[derive(Clone)]
pub struct ModelFiles {
    /// `config.json`.
    pub config: Vec<u8>,
    /// `tokenizer.json`.
    pub tokenizer: Vec<u8>,
    /// `model.safetensors`.
    pub weights: Vec<u8>,
}

impl std::fmt::Debug for ModelFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelFiles")
            .field("config", &self.config.len())
            .field("tokenizer", &self.tokenizer.len())
            .field("weights", &self.weights.len())
            .finish()
    }
}

/// Turns texts into L2-normalised vectors. [`CpuEmbedder`] is the CPU path; [`DeviceEmbedder`]
/// (what the engine uses in the page) adds the GPU path and chooses between them.
pub trait Embedder {
    /// Model id recorded in the store (e.g. `sentence-transformers/all-MiniLM-L6-v2`).
    fn model_id(&self) -> &str;
    /// Output dimension (384 for all-MiniLM-L6-v2).
    fn dim(&self) -> usize;
    /// Maximum sequence length in word pieces, special tokens included (256).
    fn max_tokens(&self) -> usize;
    /// The tokenizer used for chunk bounds.
    fn token_counter(&self) -> &dyn TokenCounter;
    /// Embeds `texts`: one `dim`-long, L2-normalised vector per text, in order. Texts longer
    /// than `max_tokens` are truncated (first `max_tokens - 1` ids, then `[SEP]`).
    async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    /// [`Embedder::embed`] with its output checked: one vector of `dim` finite values per text.
    /// The engine embeds only through this, so no bad vector reaches an index.
    ///
    /// Errors: those of `embed`; [`crate::error::ModelError::BadOutput`].
    async fn embed_checked(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let out = self.embed(texts).await?;
        let bad = |reason: String| crate::error::ModelError::BadOutput { reason }.into();
        if out.len() != texts.len() {
            return Err(bad(format!("{} vectors for {} texts", out.len(), texts.len())));
        }
        if let Some((i, v)) = out.iter().enumerate().find(|(_, v)| v.len() != self.dim() || v.iter().any(|x| !x.is_finite())) {
            return Err(bad(format!("vector {i} has {} values (expected {} finite ones)", v.len(), self.dim())));
        }
        Ok(out)
    }
    /// Texts per [`Embedder::embed`] call that keep this path busy at ingest (the engine's
    /// default `embedBatch`): [`CPU_BATCH`] unless the path says otherwise.
    fn preferred_batch(&self) -> usize {
        CPU_BATCH
    }
    /// Late chunking (Günther et al. 2024, arXiv 2409.04701 §3): one forward pass per text
    /// giving its vector ([`Embedder::embed`]'s) and, from the same token states, one vector per
    /// entry of `pools[i]`, the L2-normalised mean over `[CLS]`, the tokens that lie inside that
    /// entry's byte ranges of `texts[i]`, and `[SEP]` — the vector of a span read in the context
    /// of its whole text. A pool whose ranges keep no token (truncated away) gets `None`.
    /// `Ok(None)` where this path cannot (the GPU path, hashing vectors): embed the spans'
    /// texts separately.
    ///
    /// Errors: those of [`Embedder::embed`].
    async fn embed_late(&self, texts: &[&str], pools: &[LatePools]) -> Result<Option<Vec<LateVectors>>> {
        let _ = (texts, pools);
        Ok(None)
    }
    /// Calls of [`Embedder::embed`] that run at once on separate threads (the page's embedding
    /// workers, [`device::CpuPool`]): the engine keeps this many batches in flight. 1 where
    /// calls run one after another (natively each call already spreads over every core).
    fn parallelism(&self) -> usize {
        1
    }
    /// The distilled static model this embedder is ([`static_model`]), whose token rows a
    /// snapshot ships so that a page embeds queries without a model; `None` for every other.
    fn static_model(&self) -> Option<&StaticModel> {
        None
    }
}

/// The pools of one text for [`Embedder::embed_late`]: each a list of byte ranges `(start, end)`.
pub type LatePools = Vec<Vec<(usize, usize)>>;
/// What [`Embedder::embed_late`] gives for one text: its vector, and one per pool (`None`: no
/// token of the pool survived truncation).
pub type LateVectors = (Vec<f32>, Vec<Option<Vec<f32>>>);

/// [`BertModel::embed_pooled`]'s output for one sequence: its vector and one per pool.
pub type PooledVectors = (Vec<f32>, Vec<Vec<f32>>);

/// Texts per call on the CPU path: natively large enough that each matrix product splits across
/// every core; in the page (one thread) small, so progress is reported often.
pub const CPU_BATCH: usize = if cfg!(target_arch = "wasm32") { 16 } else { 64 };

/// Texts per call on a hardware GPU: length-sorted forward passes of up to
/// [`gpu::GpuBert::MAX_BATCH_TOKENS`] tokens fill the device.
pub const GPU_BATCH: usize = 256;

/// [`Embedder`] for a pointer to one, every method forwarded (`embed_checked` keeps its default).
macro_rules! forward_embedder {
    ($($ptr:ty),*) => {$(
        impl<T: Embedder + ?Sized> Embedder for $ptr {
            async fn embed_late(&self, texts: &[&str], pools: &[LatePools]) -> Result<Option<Vec<LateVectors>>> {
                (**self).embed_late(texts, pools).await
            }
            fn model_id(&self) -> &str {
                (**self).model_id()
            }
            fn dim(&self) -> usize {
                (**self).dim()
            }
            fn max_tokens(&self) -> usize {
                (**self).max_tokens()
            }
            fn token_counter(&self) -> &dyn TokenCounter {
                (**self).token_counter()
            }
            async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
                (**self).embed(texts).await
            }
            fn preferred_batch(&self) -> usize {
                (**self).preferred_batch()
            }
            fn parallelism(&self) -> usize {
                (**self).parallelism()
            }
            fn static_model(&self) -> Option<&StaticModel> {
                (**self).static_model()
            }
        }
    )*};
}
// `Rc`: an embedder shared by the engine and the steps that embed without holding it (the
// page's `add`).
forward_embedder!(&T, std::rc::Rc<T>);

/// CPU embedder: WordPiece + BERT forward pass on the CPU ([`gemm`] and [`ops`]: SIMD128 with
/// relaxed-SIMD FMA in wasm, AVX-512/AVX2 natively).
pub struct CpuEmbedder {
    id: String,
    tokenizer: WordPiece,
    model: BertModel,
}

impl CpuEmbedder {
    /// Loads a model from its files. `id` names it in the store.
    ///
    /// Errors: [`ModelError::InvalidConfig`], [`ModelError::Unsupported`],
    /// [`ModelError::InvalidTokenizer`], [`ModelError::CorruptWeights`],
    /// [`ModelError::TensorMissing`], [`ModelError::TensorShape`].
    pub fn from_files(id: &str, files: &ModelFiles) -> Result<Self> {
        let config = BertConfig::from_json(&files.config)?;
        let tokenizer = WordPiece::from_bytes(&files.tokenizer, config.max_seq_len())?;
        let model = BertModel::from_safetensors(config, &files.weights)?;
        Ok(CpuEmbedder { id: id.to_string(), tokenizer, model })
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &WordPiece {
        &self.tokenizer
    }

    /// The BERT model (weights, packed for the CPU kernels; the GPU path uploads these).
    pub fn bert(&self) -> &BertModel {
        &self.model
    }

    /// Sets the arithmetic of the forward pass ([`Precision`]).
    pub fn set_precision(&mut self, p: Precision) {
        let tok = &self.tokenizer;
        self.model.set_precision(p, &|t| tok.encode(t).unwrap_or_default());
    }

    /// The arithmetic of the forward pass.
    pub fn precision(&self) -> Precision {
        self.model.precision()
    }

    /// Embeds already-tokenized sequences (ids include `[CLS]`/`[SEP]`).
    pub fn embed_ids(&self, seqs: &[Vec<u32>]) -> Vec<Vec<f32>> {
        self.model.embed(seqs)
    }

    /// Token ids of `texts` and, per text, its pools as token positions ([`Embedder::embed_late`]:
    /// `[CLS]`, the tokens inside the ranges, `[SEP]`; an empty list where no token of the ranges
    /// survived truncation).
    pub fn late_ids(&self, texts: &[&str], pools: &[LatePools]) -> (Vec<Vec<u32>>, Vec<Vec<Vec<usize>>>) {
        let keep = self.tokenizer.max_len().saturating_sub(2);
        let mut ids = Vec::with_capacity(texts.len());
        let mut positions = Vec::with_capacity(texts.len());
        for (i, t) in texts.iter().enumerate() {
            let pieces = self.tokenizer.pieces(t);
            let kept = &pieces[..pieces.len().min(keep)];
            let mut seq = Vec::with_capacity(kept.len() + 2);
            seq.push(self.tokenizer.cls());
            seq.extend(kept.iter().map(|(id, _)| *id));
            seq.push(self.tokenizer.sep());
            let sep = seq.len() - 1;
            let per_text = pools.get(i).map_or(&[][..], |p| p.as_slice());
            positions.push(
                per_text
                    .iter()
                    .map(|ranges| {
                        let inner: Vec<usize> = kept
                            .iter()
                            .enumerate()
                            .filter(|(_, (_, (s, e)))| ranges.iter().any(|&(a, b)| *s >= a && *e <= b))
                            .map(|(k, _)| k + 1)
                            .collect();
                        if inner.is_empty() { Vec::new() } else { [vec![0], inner, vec![sep]].concat() }
                    })
                    .collect(),
            );
            ids.push(seq);
        }
        (ids, positions)
    }

    /// Synchronous [`Embedder::embed_late`] (the CPU path always can).
    pub fn embed_late_sync(&self, texts: &[&str], pools: &[LatePools]) -> Vec<LateVectors> {
        let (ids, positions) = self.late_ids(texts, pools);
        late_vectors(self.model.embed_pooled(&ids, &positions), &positions)
    }

    /// Synchronous [`Embedder::embed`].
    pub fn embed_sync(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        // Natively the texts are tokenized on every core too (the forward pass already is).
        #[cfg(not(target_arch = "wasm32"))]
        let ids = {
            use rayon::prelude::*;
            texts.par_iter().map(|t| self.tokenizer.encode(t)).collect::<Result<Vec<_>>>()?
        };
        #[cfg(target_arch = "wasm32")]
        let ids = texts.iter().map(|t| self.tokenizer.encode(t)).collect::<Result<Vec<_>>>()?;
        Ok(self.model.embed(&ids))
    }
}

impl Embedder for CpuEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }
    fn dim(&self) -> usize {
        self.model.config().hidden_size
    }
    fn max_tokens(&self) -> usize {
        self.tokenizer.max_len()
    }
    fn token_counter(&self) -> &dyn TokenCounter {
        &self.tokenizer
    }
    async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_sync(texts)
    }
    async fn embed_late(&self, texts: &[&str], pools: &[LatePools]) -> Result<Option<Vec<LateVectors>>> {
        Ok(Some(self.embed_late_sync(texts, pools)))
    }
}

/// [`BertModel::embed_pooled`]'s output as [`LateVectors`]: a pool without positions is `None`.
pub fn late_vectors(pooled: Vec<PooledVectors>, positions: &[Vec<Vec<usize>>]) -> Vec<LateVectors> {
    pooled
        .into_iter()
        .zip(positions)
        .map(|((whole, parts), pos)| (whole, parts.into_iter().zip(pos).map(|(v, p)| (!p.is_empty()).then_some(v)).collect()))
        .collect()
}

/// Expected size and/or SHA-256 of a model file, checked after download.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
pub struct FileCheck {
    /// Size in bytes.
    #[serde(default)]
    pub size: Option<u64>,
    /// SHA-256, lowercase hex.
    #[serde(default)]
    pub sha256: Option<String>,
}

impl FileCheck {
    /// Checks `bytes` of `file`.
    ///
    /// Errors: [`ModelError::Integrity`] naming the first mismatch (size, then SHA-256).
    pub fn verify(&self, file: &str, bytes: &[u8]) -> Result<()> {
        let bad = |what: &str, expected: String, found: String| -> Result<()> {
            Err(ModelError::Integrity { file: file.into(), what: what.into(), expected, found }.into())
        };
        if let Some(size) = self.size
            && size != bytes.len() as u64
        {
            return bad("size", size.to_string(), bytes.len().to_string());
        }
        if let Some(want) = &self.sha256 {
            use sha2::Digest;
            let got: String = sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
            if !got.eq_ignore_ascii_case(want.trim()) {
                return bad("sha256", want.clone(), got);
            }
        }
        Ok(())
    }
}

/// Maps a file-loading failure to a typed error.
pub fn file_error(file: &str, reason: impl std::fmt::Display) -> crate::Error {
    ModelError::FileUnavailable { file: file.to_string(), reason: reason.to_string() }.into()
}
