//! `webrag quantize`: a smaller copy of a model folder for a page's query encoder
//! ([`crate::embed::quantize`]): `model.safetensors` rewritten as int8 (per-row scales) or f16,
//! `config.json` and `tokenizer.json` copied. The copy is loaded back and compared with the
//! full model on [`SENTENCES`] (cosine of the two embeddings of each sentence).
use std::path::Path;

use crate::embed::{CpuEmbedder, ModelFiles, WeightFormat, file_error, quantize_weights};
use crate::error::Result;
use crate::native::read_model_files;

/// Sentences of the kinds a site search sees: short queries, a question, a passage, and text in
/// a script the default model's vocabulary covers poorly.
pub const SENTENCES: [&str; 8] = [
    "how do I reset my password",
    "Which band released the album The Dark Side of the Moon?",
    "installation guide",
    "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
    "wasm simd matrix multiply",
    "Retrieval-augmented generation combines a search index with a language model.",
    "新能源汽车销量",
    "Preise und Versand",
];

/// What [`quantize`] wrote and how close the copy is to the full model.
#[derive(Debug, Clone)]
pub struct Report {
    /// Bytes of the source `model.safetensors`.
    pub source_bytes: usize,
    /// Bytes of the written `model.safetensors`.
    pub bytes: usize,
    /// Smallest cosine between the two models' embeddings over [`SENTENCES`].
    pub min_cosine: f64,
    /// Mean of those cosines.
    pub mean_cosine: f64,
}

/// Writes the `format` copy of the model in `model_dir` to `out` (created if missing).
///
/// Errors: the model's ([`crate::error::ModelError`]), and
/// [`crate::error::ModelError::FileUnavailable`] when `out` cannot be written.
pub fn quantize(model_dir: &Path, out: &Path, format: WeightFormat) -> Result<Report> {
    let files = read_model_files(model_dir)?;
    let weights = quantize_weights(&files.weights, format)?;
    let small = ModelFiles { weights, ..files.clone() };
    let full = CpuEmbedder::from_files(&super::model_id(), &files)?;
    let copy = CpuEmbedder::from_files(&super::model_id(), &small)?;
    let (a, b) = (full.embed_sync(&SENTENCES)?, copy.embed_sync(&SENTENCES)?);
    let cos: Vec<f64> = a.iter().zip(&b).map(|(x, y)| f64::from(crate::embed::vecmath::dot(x, y))).collect();
    std::fs::create_dir_all(out).map_err(|e| file_error(&out.display().to_string(), e))?;
    for (name, bytes) in [("config.json", &small.config), ("tokenizer.json", &small.tokenizer), ("model.safetensors", &small.weights)] {
        let p = out.join(name);
        std::fs::write(&p, bytes).map_err(|e| file_error(name, format!("{}: {e}", p.display())))?;
    }
    Ok(Report {
        source_bytes: files.weights.len(),
        bytes: small.weights.len(),
        min_cosine: cos.iter().copied().fold(f64::INFINITY, f64::min),
        mean_cosine: cos.iter().sum::<f64>() / cos.len().max(1) as f64,
    })
}
