//! A static embedding model distilled from a BERT sentence encoder (the Model2Vec method:
//! Tulkens & van Dongen 2024, *Model2Vec: Distill a Small Fast Model from any Sentence
//! Transformer*): one row per vocabulary token, and a text's vector is the L2-normalised mean of
//! its word pieces' rows. No forward pass runs, so embedding costs what tokenizing costs: the
//! static tier of site snapshots (`--vectors static`), whose queries `webrag/static` embeds in
//! plain JavaScript from the token rows they need.
//!
//! How the rows are made (`webrag distill`, `crate::native::distill`): every token alone
//! (`[CLS] token [SEP]`) through the model, its pooled output; PCA of those outputs to `dim`
//! components; each row then weighted by SIF (Arora et al. 2017) with the token's probability
//! estimated by Zipf's law from its rank among the vocabulary's words (`a / (a + p)`,
//! `p ∝ 1 / rank`; special tokens and single characters count as the most frequent), so frequent
//! pieces count less in a mean; stored as int8 with one f32 scale per row. Or, with `--train`,
//! the projected rows are then trained against the model on a corpus ([`crate::embed::tokenlearn`];
//! the package's model is). A site build then weights the rows by the site's own idf
//! ([`StaticModel::weight_by_corpus`]).
//!
//! File (`WRS1`, little-endian): magic, u32 length of a JSON header
//! (`{"source", "dim", "rows", "weighting", "sif"}`), then `rows` f32 scales, then `rows × dim`
//! int8 values, row by row (row = token id). `[UNK]` takes no part in a mean.
use crate::embed::vecmath::quantize_i8;
use crate::embed::{Embedder, WordPiece};
use crate::error::{ModelError, Result};
use crate::text::TokenCounter;

/// The file's magic.
pub const MAGIC: &[u8; 4] = b"WRS1";

/// Default output dimension of a distilled model (PCA components).
pub const DEFAULT_DIM: usize = 256;

/// The SIF constant `a` of the weighting `a / (a + p)`.
pub const SIF_A: f64 = 1e-4;

/// How a static model's rows were made, as its header's `weighting` names it (a site build
/// appends `+idf` when it weights the rows by the site: [`StaticModel::weight_by_corpus`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weighting {
    /// Distilled: PCA of the tokens' outputs, SIF weights by Zipf rank (`sif-zipf`).
    SifZipf,
    /// Distilled, then trained against the model's outputs on a corpus under corpus idf weights
    /// ([`crate::embed::tokenlearn`]; `tokenlearn`): rows that expect idf weights in a mean.
    Tokenlearn,
}

impl Weighting {
    /// The header's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Weighting::SifZipf => "sif-zipf",
            Weighting::Tokenlearn => "tokenlearn",
        }
    }
}

/// The JSON header of a static model file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StaticHeader {
    /// The model it was distilled from (its id).
    pub source: String,
    /// Dimension of a row.
    pub dim: usize,
    /// Rows (= the tokenizer's id bound).
    pub rows: usize,
    /// How rows were made ([`Weighting::as_str`]), `+idf` once weighted by a corpus.
    pub weighting: String,
    /// The SIF constant (0 for a trained model, which has no SIF weights).
    pub sif: f64,
}

/// Document frequencies of a static model's tokens over a corpus, and the corpus's size in
/// documents ([`StaticModel::corpus_counts`]).
#[derive(Debug, Clone)]
pub struct CorpusCounts {
    df: Vec<u32>,
    n: u32,
    /// The current text's distinct tokens (a buffer kept between texts).
    seen: Vec<usize>,
}

/// A distilled static model with its tokenizer.
pub struct StaticModel {
    id: String,
    header: StaticHeader,
    tokenizer: WordPiece,
    scales: Vec<f32>,
    rows: Vec<i8>,
}

/// A token's inverse document frequency in a corpus of `n` texts, `df` of which hold it: BM25's
/// `ln(1 + (N − df + 0.5) / (df + 0.5))`, a token absent from them counting as seen once. A site
/// build weights the rows by it ([`StaticModel::weight_by_corpus`]) and the training weights the
/// corpus's sums by it ([`crate::embed::tokenlearn`]).
pub fn corpus_idf(n: u32, df: u32) -> f32 {
    let df = f64::from(df.max(1));
    (1.0 + (f64::from(n) - df + 0.5) / (df + 0.5)).ln() as f32
}

/// The model id a static model of `source` records (snapshots, the store).
pub fn static_id(source: &str) -> String {
    format!("{source}+static")
}

fn invalid(reason: impl Into<String>) -> crate::Error {
    ModelError::CorruptWeights { reason: format!("static model: {}", reason.into()) }.into()
}

impl StaticModel {
    /// A model from f32 rows (`rows.len() = n · dim`), each quantized to int8 with its own scale.
    ///
    /// Errors: [`ModelError::CorruptWeights`] when the rows do not match the tokenizer's ids or
    /// a value is not finite.
    pub fn from_rows(source: &str, tokenizer: WordPiece, dim: usize, rows: &[f32], weighting: Weighting) -> Result<Self> {
        let n = tokenizer.id_bound() as usize;
        if dim == 0 || rows.len() != n.checked_mul(dim).ok_or_else(|| invalid("too many rows"))? {
            return Err(invalid(format!("{} values for {n} tokens of {dim} dimensions", rows.len())));
        }
        if rows.iter().any(|x| !x.is_finite()) {
            return Err(invalid("a value is not finite"));
        }
        let mut scales = Vec::with_capacity(n);
        let mut q = Vec::with_capacity(rows.len());
        for row in rows.chunks(dim) {
            let (scale, r) = quantize_i8(row);
            scales.push(scale);
            q.extend(r);
        }
        let header = StaticHeader {
            source: source.to_string(),
            dim,
            rows: n,
            weighting: weighting.as_str().into(),
            sif: if weighting == Weighting::SifZipf { SIF_A } else { 0.0 },
        };
        Ok(StaticModel { id: static_id(source), header, tokenizer, scales, rows: q })
    }

    /// Reads a `WRS1` file for `tokenizer` (the vocabulary it was distilled with).
    ///
    /// Errors: [`ModelError::CorruptWeights`] for a file that is not `WRS1`, is cut, or whose row
    /// count is not the tokenizer's.
    pub fn from_bytes(tokenizer: WordPiece, bytes: &[u8]) -> Result<Self> {
        if bytes.len() < 8 || &bytes[..4] != MAGIC {
            return Err(invalid("not a WRS1 file"));
        }
        let len = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as usize;
        let body = bytes.get(8..).ok_or_else(|| invalid("cut"))?;
        let head = body.get(..len).ok_or_else(|| invalid("cut in its header"))?;
        let header: StaticHeader = serde_json::from_slice(head).map_err(|e| invalid(format!("header: {e}")))?;
        let n = tokenizer.id_bound() as usize;
        if header.rows != n || header.dim == 0 || header.dim > crate::embed::bert::MAX_HIDDEN {
            return Err(invalid(format!(
                "{} rows of {} dimensions for a vocabulary of {n} ids (at most {} dimensions)",
                header.rows,
                header.dim,
                crate::embed::bert::MAX_HIDDEN
            )));
        }
        let data = &body[len..];
        let want = n.checked_mul(4 + header.dim).ok_or_else(|| invalid("too many rows"))?;
        if data.len() != want {
            return Err(invalid(format!("{} bytes of rows, expected {want}", data.len())));
        }
        let scales: Vec<f32> = data[..n * 4].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        if scales.iter().any(|s| !s.is_finite() || *s < 0.0) {
            return Err(invalid("a row scale is negative or not finite"));
        }
        let rows = data[n * 4..].iter().map(|b| *b as i8).collect();
        Ok(StaticModel { id: static_id(&header.source), header, tokenizer, scales, rows })
    }

    /// Weights every row by its token's inverse document frequency in `texts` (BM25's
    /// `ln(1 + (N − df + 0.5) / (df + 0.5))`; a token absent from them counts as seen once), so a
    /// mean leans on the words that tell this corpus's texts apart: a site build weights the
    /// model by the site's own pages, and the snapshot ships the weighted rows its queries use.
    pub fn weight_by_corpus<T: AsRef<str>>(&mut self, texts: impl IntoIterator<Item = T>) {
        let mut counts = self.corpus_counts();
        for t in texts {
            self.count(&mut counts, t.as_ref());
        }
        self.weight_by_counts(&counts);
    }

    /// Empty document frequencies for this model's tokens, to fill text by text
    /// ([`StaticModel::count`]) where the corpus is read once for something else too (a site
    /// build parses each page once), then [`StaticModel::weight_by_counts`].
    pub fn corpus_counts(&self) -> CorpusCounts {
        CorpusCounts { df: vec![0; self.header.rows], n: 0, seen: Vec::new() }
    }

    /// Counts `text` as one more document of `counts`.
    pub fn count(&self, counts: &mut CorpusCounts, text: &str) {
        let n_rows = counts.df.len();
        counts.n += 1;
        counts.seen.clear();
        counts.seen.extend(self.tokenizer.pieces(text).into_iter().map(|(id, _)| id as usize).filter(|id| *id < n_rows));
        crate::sort::ascending(&mut counts.seen);
        counts.seen.dedup();
        for id in &counts.seen {
            counts.df[*id] += 1;
        }
    }

    /// [`StaticModel::weight_by_corpus`] with the document frequencies already counted (nothing
    /// when no text was).
    pub fn weight_by_counts(&mut self, counts: &CorpusCounts) {
        if counts.n == 0 || counts.df.len() != self.header.rows {
            return;
        }
        let d = self.header.dim;
        for (i, df) in counts.df.iter().enumerate() {
            let idf = corpus_idf(counts.n, *df);
            let row: Vec<f32> = self.rows[i * d..(i + 1) * d].iter().map(|q| self.scales[i] * f32::from(*q) * idf).collect();
            let (scale, q) = quantize_i8(&row);
            self.scales[i] = scale;
            self.rows[i * d..(i + 1) * d].copy_from_slice(&q);
        }
        self.header.weighting = format!("{}+idf", self.header.weighting);
    }

    /// The `WRS1` bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let head = serde_json::to_vec(&self.header).unwrap_or_default();
        let mut b = Vec::with_capacity(8 + head.len() + self.scales.len() * 4 + self.rows.len());
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&(head.len() as u32).to_le_bytes());
        b.extend_from_slice(&head);
        for s in &self.scales {
            b.extend_from_slice(&s.to_le_bytes());
        }
        b.extend(self.rows.iter().map(|v| *v as u8));
        b
    }

    /// The header (source model, dimension, rows).
    pub fn header(&self) -> &StaticHeader {
        &self.header
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &WordPiece {
        &self.tokenizer
    }

    /// Token `id`'s row: its scale and int8 values (`v ≈ scale · q`); `None` past the rows.
    pub fn row(&self, id: u32) -> Option<(f32, &[i8])> {
        let i = id as usize;
        let d = self.header.dim;
        Some((*self.scales.get(i)?, self.rows.get(i * d..(i + 1) * d)?))
    }

    /// The vector of `text`: the L2-normalised mean of its word pieces' rows (`[UNK]` left out);
    /// all zeros for a text without a known piece.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let unk = self.tokenizer.unk();
        self.mean(self.tokenizer.pieces(text).into_iter().map(|(id, _)| id).filter(|id| *id != unk))
    }

    fn mean(&self, ids: impl Iterator<Item = u32>) -> Vec<f32> {
        let mut v = vec![0f32; self.header.dim];
        for id in ids {
            if let Some((s, q)) = self.row(id) {
                for (x, q) in v.iter_mut().zip(q) {
                    *x += s * f32::from(*q);
                }
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        v
    }
}

impl Embedder for StaticModel {
    fn model_id(&self) -> &str {
        &self.id
    }
    fn dim(&self) -> usize {
        self.header.dim
    }
    fn max_tokens(&self) -> usize {
        self.tokenizer.max_len()
    }
    fn token_counter(&self) -> &dyn TokenCounter {
        &self.tokenizer
    }
    async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
    fn preferred_batch(&self) -> usize {
        256
    }
    fn static_model(&self) -> Option<&StaticModel> {
        Some(self)
    }
}
