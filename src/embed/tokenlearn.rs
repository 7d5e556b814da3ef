//! Training a static model's rows against the encoder it comes from, on a corpus: the tokenlearn
//! method (Minish Lab, *Tokenlearn*, 2025; the step after Model2Vec's distillation, Tulkens & van
//! Dongen 2024, §3): the encoder's pooled output for every text of a general corpus is the
//! target, and each token's row is moved so that the static vector of the text — the normalised,
//! idf-weighted sum of its word pieces' rows — points where the encoder's does.
//!
//! 1. Targets: the encoder's vector `y` of every corpus text; their PCA ([`principal_axes`]) to
//!    `dim` components, so the rows live in the space the corpus's sentences span; a target is
//!    `t = normalise((y − μ) B)`.
//! 2. Start: every token alone through the encoder, projected the same way (what a distilled
//!    model holds, before its SIF weights).
//! 3. Weights: each token's idf over the corpus (BM25's `ln(1 + (N − df + 0.5) / (df + 0.5))`:
//!    [`corpus_idf`], which a site build weights the rows by), so the
//!    rows are trained under the weighting a site build applies to them.
//! 4. Loss: `1 − cos(Σ idf_t r_t, t)` over the text's word pieces (`[UNK]` left out, as
//!    [`StaticModel::embed_one`] leaves it out), minimised by Adam (Kingma & Ba 2015) on
//!    minibatches, each row's moments updated when a text of the batch holds it (lazy Adam).
//!
//! Every 50th text is held out; the mean cosine to its target before and after training is
//! reported. The run is deterministic: texts are visited in an order fixed by SHA-256 of their
//! index and the epoch, and sums run in one order.
use nalgebra::DMatrix;
use sha2::{Digest, Sha256};

use crate::embed::distill::{principal_axes, token_outputs};
use crate::embed::static_model::{Weighting, corpus_idf};
use crate::embed::{CpuEmbedder, Embedder, StaticModel, WordPiece};
use crate::error::{InputError, Result};

/// The training's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainParams {
    /// Dimensions of a row (PCA components), 1 up to the encoder's.
    pub dim: usize,
    /// Passes over the corpus.
    pub epochs: usize,
    /// Adam's step size.
    pub learning_rate: f32,
    /// Texts per minibatch.
    pub batch: usize,
}

impl Default for TrainParams {
    fn default() -> Self {
        TrainParams { dim: crate::embed::static_model::DEFAULT_DIM, epochs: 3, learning_rate: 2e-3, batch: 64 }
    }
}

/// A stage of [`train`], for its progress callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Corpus texts through the encoder (done, total).
    Targets,
    /// Vocabulary tokens through the encoder (done, total).
    Tokens,
    /// Minibatches of the training (done, total).
    Training,
}

/// What [`train`] measured: the held-out texts' mean cosine to their targets.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainReport {
    /// Texts trained on.
    pub texts: usize,
    /// Texts held out.
    pub held_out: usize,
    /// Held-out mean cosine before training (the projected token outputs, idf-weighted).
    pub cosine_before: f64,
    /// Held-out mean cosine after each epoch, one per epoch.
    pub cosine_after: Vec<f64>,
}

/// Every text at index `i` with `i % HOLD_OUT == 0` is held out.
const HOLD_OUT: usize = 50;
/// Adam's moment decay rates and epsilon (Kingma & Ba 2015's defaults).
const BETA1: f32 = 0.9;
const BETA2: f32 = 0.999;
const EPSILON: f32 = 1e-8;
/// Texts per forward pass of the encoder.
const ENCODE_BATCH: usize = 256;

/// Trains a static model of `model` on `texts` ([module doc](self)); `tokenizer` (a copy of the
/// model's) goes with it. `progress` gets the stage, the work done and the total.
///
/// Errors: [`InputError::InvalidOption`] for a `dim` of 0 or past the model's, 0 or more than 8
/// epochs, a batch of 0, a step size that is not positive, or fewer than 100 texts.
pub fn train(
    model: &CpuEmbedder,
    tokenizer: WordPiece,
    texts: &[String],
    params: TrainParams,
    progress: &mut dyn FnMut(Stage, usize, usize),
) -> Result<(StaticModel, TrainReport)> {
    train_with_targets(model, tokenizer, texts, None, params, progress).map(|(m, r, _)| (m, r))
}

/// [`train`], with the encoder's vectors of `texts` (`texts.len() × hidden`, row by row) when an
/// earlier run computed them (`targets`); returns them too, for the next run.
///
/// Errors: [`train`]'s, and [`InputError::InvalidOption`] for `targets` of the wrong length.
pub fn train_with_targets(
    model: &CpuEmbedder,
    tokenizer: WordPiece,
    texts: &[String],
    targets: Option<Vec<f32>>,
    params: TrainParams,
    progress: &mut dyn FnMut(Stage, usize, usize),
) -> Result<(StaticModel, TrainReport, Vec<f32>)> {
    let TrainParams { dim, epochs, learning_rate, batch } = params;
    let hidden = model.dim();
    let bad = |name: &str, reason: String| -> crate::Error { InputError::InvalidOption { name: name.into(), reason }.into() };
    if dim == 0 || dim > hidden {
        return Err(bad("dim", format!("{dim} is not in 1..={hidden}")));
    }
    if epochs == 0 || epochs > 8 {
        return Err(bad("epochs", format!("{epochs} is not in 1..=8")));
    }
    if batch == 0 {
        return Err(bad("batch", "0 texts".into()));
    }
    if !(learning_rate.is_finite() && learning_rate > 0.0) {
        return Err(bad("learning_rate", format!("{learning_rate} is not positive")));
    }
    if texts.len() < 100 {
        return Err(bad("train", format!("{} texts; at least 100 are needed", texts.len())));
    }
    let n = tokenizer.id_bound() as usize;
    let unk = tokenizer.unk();

    // 1. Targets.
    let encoded = match targets {
        Some(t) if t.len() == texts.len() * hidden => t,
        Some(t) => return Err(bad("targets", format!("{} values for {} texts of {hidden}", t.len(), texts.len()))),
        None => {
            let mut all = Vec::with_capacity(texts.len() * hidden);
            for (b, chunk) in texts.chunks(ENCODE_BATCH).enumerate() {
                let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
                all.extend(model.embed_sync(&refs)?.into_iter().flatten());
                progress(Stage::Targets, (b * ENCODE_BATCH + chunk.len()).min(texts.len()), texts.len());
            }
            all
        }
    };
    let y = DMatrix::<f64>::from_row_iterator(texts.len(), hidden, encoded.iter().map(|x| f64::from(*x)));
    let (mean, basis) = principal_axes(&y, dim);
    let targets: Vec<f32> = {
        let mut c = y;
        for mut r in c.row_iter_mut() {
            r -= &mean;
        }
        let p = c * &basis;
        let mut t = Vec::with_capacity(texts.len() * dim);
        for r in p.row_iter() {
            let norm = r.norm().max(1e-12);
            t.extend(r.iter().map(|x| (x / norm) as f32));
        }
        t
    };

    // 2. Start: the tokens' own outputs in the same space.
    let mut start = token_outputs(model, &mut |d, t| progress(Stage::Tokens, d, t));
    for mut r in start.row_iter_mut() {
        r -= &mean;
    }
    let start = start * &basis;
    let mut rows: Vec<f32> = start.row_iter().flat_map(|r| r.iter().map(|x| *x as f32).collect::<Vec<_>>()).collect();

    // 3. The texts' word pieces and the corpus idf.
    let pieces: Vec<Vec<u32>> = texts
        .iter()
        .map(|t| tokenizer.pieces(t).into_iter().map(|(id, _)| id).filter(|id| *id != unk && (*id as usize) < n).collect())
        .collect();
    let mut df = vec![0u32; n];
    let mut seen = Vec::new();
    for p in &pieces {
        seen.clear();
        seen.extend(p.iter().copied());
        crate::sort::ascending(&mut seen);
        seen.dedup();
        for id in &seen {
            df[*id as usize] += 1;
        }
    }
    let idf: Vec<f32> = df.iter().map(|d| corpus_idf(texts.len() as u32, *d)).collect();

    // 4. Training.
    let (train_ix, held): (Vec<usize>, Vec<usize>) = (0..texts.len()).partition(|i| i % HOLD_OUT != 0);
    let held_cosine = |rows: &[f32]| -> f64 {
        let mut s = vec![0f32; dim];
        let sum: f64 = held.iter().map(|&i| f64::from(cosine(rows, &pieces[i], &idf, &targets[i * dim..(i + 1) * dim], &mut s).0)).sum();
        sum / held.len().max(1) as f64
    };
    let mut report = TrainReport {
        texts: train_ix.len(),
        held_out: held.len(),
        cosine_before: held_cosine(&rows),
        cosine_after: Vec::with_capacity(epochs),
    };
    let mut m1 = vec![0f32; n * dim];
    let mut m2 = vec![0f32; n * dim];
    let mut steps = vec![0u32; n];
    let mut grad = vec![0f32; n * dim];
    let mut touched: Vec<u32> = Vec::new();
    let mut is_touched = vec![false; n];
    let mut s = vec![0f32; dim];
    let batches_per_epoch = train_ix.len().div_ceil(batch);
    for epoch in 0..epochs {
        let order = shuffled(&train_ix, epoch);
        for (b, chunk) in order.chunks(batch).enumerate() {
            for &i in chunk {
                let t = &targets[i * dim..(i + 1) * dim];
                let (c, norm) = cosine(&rows, &pieces[i], &idf, t, &mut s);
                if norm <= 0.0 {
                    continue;
                }
                // d(1 − cos)/ds = −(t − cos · u) / |s|, u = s / |s|; averaged over the batch.
                let scale = 1.0 / (norm * chunk.len() as f32);
                for (x, tj) in s.iter_mut().zip(t) {
                    *x = -(tj - c * (*x / norm)) * scale;
                }
                for &id in &pieces[i] {
                    let id = id as usize;
                    if !is_touched[id] {
                        is_touched[id] = true;
                        touched.push(id as u32);
                    }
                    let w = idf[id];
                    for (g, x) in grad[id * dim..(id + 1) * dim].iter_mut().zip(&s) {
                        *g += w * x;
                    }
                }
            }
            crate::sort::ascending(&mut touched);
            for &id in &touched {
                let id = id as usize;
                is_touched[id] = false;
                steps[id] += 1;
                let k = steps[id] as i32;
                let (c1, c2) = (1.0 - BETA1.powi(k), 1.0 - BETA2.powi(k));
                let at = id * dim..(id + 1) * dim;
                for (((r, g), a), v) in rows[at.clone()].iter_mut().zip(&mut grad[at.clone()]).zip(&mut m1[at.clone()]).zip(&mut m2[at]) {
                    *a = BETA1 * *a + (1.0 - BETA1) * *g;
                    *v = BETA2 * *v + (1.0 - BETA2) * *g * *g;
                    *r -= learning_rate * (*a / c1) / ((*v / c2).sqrt() + EPSILON);
                    *g = 0.0;
                }
            }
            touched.clear();
            progress(Stage::Training, epoch * batches_per_epoch + b + 1, epochs * batches_per_epoch);
        }
        report.cosine_after.push(held_cosine(&rows));
    }
    let model = StaticModel::from_rows(model.model_id(), tokenizer, dim, &rows, Weighting::Tokenlearn)?;
    Ok((model, report, encoded))
}

/// The cosine between the idf-weighted sum of `ids`' rows and the unit vector `t`, and the sum's
/// norm; the sum is left in `s`.
fn cosine(rows: &[f32], ids: &[u32], idf: &[f32], t: &[f32], s: &mut [f32]) -> (f32, f32) {
    let dim = s.len();
    s.iter_mut().for_each(|x| *x = 0.0);
    for &id in ids {
        let id = id as usize;
        let w = idf[id];
        for (x, r) in s.iter_mut().zip(&rows[id * dim..(id + 1) * dim]) {
            *x += w * r;
        }
    }
    let norm = s.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm <= 0.0 {
        return (0.0, 0.0);
    }
    (s.iter().zip(t).map(|(a, b)| a * b).sum::<f32>() / norm, norm)
}

/// `ix` in the order of SHA-256 of (epoch, index): a fixed shuffle per epoch.
fn shuffled(ix: &[usize], epoch: usize) -> Vec<usize> {
    let mut keyed: Vec<([u8; 8], usize)> = ix
        .iter()
        .map(|&i| {
            let mut h = Sha256::new();
            h.update((epoch as u64).to_le_bytes());
            h.update((i as u64).to_le_bytes());
            let d = h.finalize();
            ([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]], i)
        })
        .collect();
    crate::sort::by(&mut keyed, |a, b| a.cmp(b));
    keyed.into_iter().map(|(_, i)| i).collect()
}
