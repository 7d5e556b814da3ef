//! `webrag distill`: [`crate::embed::distill`] on a model folder, and the static model file read
//! back with that folder's tokenizer.
use std::path::Path;

use crate::embed::distill::distill;
use crate::embed::{BertConfig, CpuEmbedder, StaticModel, WordPiece};
use crate::error::Result;

/// Distills the model in `dir` ([`distill`]).
///
/// Errors: the model folder's, and [`distill`]'s.
pub fn distill_dir(dir: &Path, dim: usize, progress: &mut dyn FnMut(usize, usize)) -> Result<StaticModel> {
    let (_, model, tokenizer) = encoder(dir)?;
    distill(&model, tokenizer, dim, progress)
}

/// The model folder's files, its CPU encoder, and a copy of its tokenizer for a static model.
fn encoder(dir: &Path) -> Result<(crate::embed::ModelFiles, CpuEmbedder, WordPiece)> {
    let files = crate::native::read_model_files(dir)?;
    let model = CpuEmbedder::from_files(&crate::native::model_id(), &files)?;
    let tokenizer = WordPiece::from_bytes(&files.tokenizer, model.tokenizer().max_len())?;
    Ok((files, model, tokenizer))
}

/// Distills and trains a static model of the model in `dir` on `texts`
/// ([`crate::embed::tokenlearn::train`]). With `cache`, the encoder's vectors of the texts are
/// kept in that file (little-endian f32 after the SHA-256 of the model's weights and the texts)
/// and read back by a run on the same model and texts, which then only trains; a file of other
/// texts or weights is encoded again and overwritten.
///
/// Errors: the model folder's, `train`'s, and `MODEL_FILE_UNAVAILABLE` when the cache cannot be written.
pub fn train_dir(
    dir: &Path,
    texts: &[String],
    cache: Option<&Path>,
    params: crate::embed::tokenlearn::TrainParams,
    progress: &mut dyn FnMut(crate::embed::tokenlearn::Stage, usize, usize),
) -> Result<(StaticModel, crate::embed::tokenlearn::TrainReport)> {
    use sha2::{Digest, Sha256};
    let (files, model, tokenizer) = encoder(dir)?;
    let mut h = Sha256::new();
    h.update(&files.weights);
    for t in texts {
        h.update((t.len() as u64).to_le_bytes());
        h.update(t.as_bytes());
    }
    let key: [u8; 32] = h.finalize().into();
    let cached = cache
        .and_then(|c| std::fs::read(c).ok())
        .filter(|b| b.len() >= 32 && b[..32] == key)
        .map(|b| b[32..].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect::<Vec<f32>>());
    let hit = cached.is_some();
    let (m, report, targets) = crate::embed::tokenlearn::train_with_targets(&model, tokenizer, texts, cached, params, progress)?;
    if let Some(c) = cache.filter(|_| !hit) {
        let mut b = Vec::with_capacity(32 + targets.len() * 4);
        b.extend_from_slice(&key);
        b.extend(targets.iter().flat_map(|x| x.to_le_bytes()));
        std::fs::write(c, b).map_err(|e| crate::embed::file_error("targets cache", format!("{}: {e}", c.display())))?;
    }
    Ok((m, report))
}

/// Reads a static model file distilled from the model in `dir` (its `tokenizer.json` and
/// `config.json`).
///
/// Errors: the folder's files', and [`StaticModel::from_bytes`]'s.
pub fn load_static(dir: &Path, file: &Path) -> Result<StaticModel> {
    let read = |p: &Path, name: &str| std::fs::read(p).map_err(|e| crate::embed::file_error(name, format!("{}: {e}", p.display())));
    let config = BertConfig::from_json(&read(&dir.join("config.json"), "config.json")?)?;
    let tokenizer = WordPiece::from_bytes(&read(&dir.join("tokenizer.json"), "tokenizer.json")?, config.max_seq_len())?;
    StaticModel::from_bytes(tokenizer, &read(file, "static model")?)
}
