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
    let files = crate::native::read_model_files(dir)?;
    let model = CpuEmbedder::from_files(&crate::native::model_id(), &files)?;
    let tokenizer = WordPiece::from_bytes(&files.tokenizer, model.tokenizer().max_len())?;
    distill(&model, tokenizer, dim, progress)
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
