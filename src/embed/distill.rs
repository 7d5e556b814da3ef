//! Distillation of a static embedding model ([`StaticModel`]) from a BERT sentence encoder, by
//! the Model2Vec method (Tulkens & van Dongen 2024, §3): every vocabulary token through the
//! model, PCA of the outputs, SIF weighting by Zipf rank. The PCA is nalgebra's symmetric
//! eigendecomposition of the outputs' covariance. Natively for `webrag distill`, and in the site
//! builder's `.wasm` (cargo feature `builder`) for `npx webrag distill`; never in a page's build.
use nalgebra::{DMatrix, SymmetricEigen};

use crate::embed::static_model::{SIF_A, Weighting};
use crate::embed::{CpuEmbedder, Embedder, StaticModel, WordPiece};
use crate::error::{InputError, Result};

/// Tokens per forward pass while distilling.
const BATCH: usize = 512;

/// Distills `model` into `dim` dimensions (at most the model's own); `tokenizer` (a copy of the
/// model's, read from the same `tokenizer.json`) goes with the static model. `progress` is
/// called with the tokens done and the total.
///
/// Errors: [`InputError::InvalidOption`] for a `dim` of 0 or past the model's.
pub fn distill(model: &CpuEmbedder, tokenizer: WordPiece, dim: usize, progress: &mut dyn FnMut(usize, usize)) -> Result<StaticModel> {
    let hidden = model.dim();
    if dim == 0 || dim > hidden {
        return Err(InputError::InvalidOption { name: "dim".into(), reason: format!("{dim} is not in 1..={hidden}") }.into());
    }
    let n = model.tokenizer().id_bound() as usize;
    // 1. Every token alone through the model: its pooled output.
    let mut out = token_outputs(model, progress);
    // 2. PCA: center, the covariance's eigenvectors by decreasing eigenvalue, project.
    let (mean, basis) = principal_axes(&out, dim);
    for mut r in out.row_iter_mut() {
        r -= &mean;
    }
    let projected = out * basis;
    // 3. SIF weights with Zipf probabilities, p(rank) = (1 / rank) / H(n): a WordPiece vocabulary
    // lists its words roughly by frequency, after its special tokens and single characters,
    // which count as the most frequent (rank 1).
    let ranks = zipf_ranks(&tokenizer, n);
    let harmonic: f64 = (1..=n).map(|r| 1.0 / r as f64).sum();
    let mut rows = Vec::with_capacity(n * dim);
    for (id, r) in projected.row_iter().enumerate() {
        let p = 1.0 / ranks[id] as f64 / harmonic;
        let w = SIF_A / (SIF_A + p);
        rows.extend(r.iter().map(|x| (x * w) as f32));
    }
    StaticModel::from_rows(model.model_id(), tokenizer, dim, &rows, Weighting::SifZipf)
}

/// Every vocabulary token alone (`[CLS] token [SEP]`) through `model`: its pooled output, one
/// row per id (`id_bound × hidden`). `progress` gets the tokens done and the total.
pub(crate) fn token_outputs(model: &CpuEmbedder, progress: &mut dyn FnMut(usize, usize)) -> DMatrix<f64> {
    let tok = model.tokenizer();
    let n = tok.id_bound() as usize;
    let mut out = DMatrix::<f64>::zeros(n, model.dim());
    let ids: Vec<u32> = (0..n as u32).collect();
    for (b, batch) in ids.chunks(BATCH).enumerate() {
        let seqs: Vec<Vec<u32>> = batch.iter().map(|&id| vec![tok.cls(), id, tok.sep()]).collect();
        for (k, v) in model.embed_ids(&seqs).into_iter().enumerate() {
            for (j, x) in v.into_iter().enumerate() {
                out[(b * BATCH + k, j)] = f64::from(x);
            }
        }
        progress((b * BATCH + batch.len()).min(n), n);
    }
    out
}

/// The mean row of `data` and its first `dim` principal axes (`cols × dim`, by decreasing
/// variance): the eigenvectors of the centred rows' covariance, each signed so that its largest
/// loading is positive (an eigenvector's sign is arbitrary; this makes a distillation the same on
/// every machine's eigensolver). `dim` must be at most `data`'s columns.
pub(crate) fn principal_axes(data: &DMatrix<f64>, dim: usize) -> (nalgebra::RowDVector<f64>, DMatrix<f64>) {
    let (n, cols) = data.shape();
    let mean = data.row_mean();
    let mut centred = data.clone();
    for mut r in centred.row_iter_mut() {
        r -= &mean;
    }
    let cov = centred.transpose() * &centred / n.max(1) as f64;
    let eig = SymmetricEigen::new(cov);
    let mut order: Vec<usize> = (0..cols).collect();
    crate::sort::by(&mut order, |&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]).then(a.cmp(&b)));
    let mut basis = DMatrix::from_fn(cols, dim, |i, j| eig.eigenvectors[(i, order[j])]);
    for mut c in basis.column_iter_mut() {
        let (at, _) = c.iter().enumerate().fold((0, 0f64), |best, (i, x)| if x.abs() > best.1 { (i, x.abs()) } else { best });
        if c[at] < 0.0 {
            c.neg_mut();
        }
    }
    (mean, basis)
}

/// Each id's Zipf rank: words (pieces of two or more characters, the continuation prefix aside,
/// that are not `[bracketed]` special tokens) ranked by id from 1; every other id rank 1.
fn zipf_ranks(tokenizer: &WordPiece, n: usize) -> Vec<usize> {
    let prefix = tokenizer.spec().prefix;
    let mut word = vec![false; n];
    for (piece, id) in tokenizer.vocab() {
        let text = piece.strip_prefix(prefix.as_str()).filter(|r| !r.is_empty() && !prefix.is_empty()).unwrap_or(piece);
        let special = text.starts_with('[') && text.ends_with(']');
        if let Some(w) = word.get_mut(id as usize) {
            *w = !special && text.chars().nth(1).is_some();
        }
    }
    let mut next = 0;
    word.iter()
        .map(|w| {
            if *w {
                next += 1;
                next
            } else {
                1
            }
        })
        .collect()
}
