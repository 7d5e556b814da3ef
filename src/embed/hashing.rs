//! Sparse random indexing (Kanerva et al. 2000; Achlioptas 2003's sparse projections): each word
//! piece of the real tokenizer adds ±1 at [`NNZ`] positions chosen by hashing its id, and the sum
//! is L2-normalised. Texts sharing word pieces get similar vectors, so a vector index sees
//! neighbourhood structure like that of sentence embeddings, at no model cost.
//!
//! For benchmarks only (`device: 'hashing'` in the page, the latency rows of `webrag bench`):
//! the vectors carry no meaning beyond word overlap. The model id gets a `+hashing` suffix, so a
//! knowledge base built this way never opens with the real model.
use super::{CpuEmbedder, Embedder, WordPiece};
use crate::error::Result;
use crate::text::TokenCounter;

/// Non-zeros per word piece.
pub const NNZ: usize = 8;

/// The sparse random-indexing vector of word-piece `ids` (`[CLS]`/`[SEP]` included), `dim` long,
/// L2-normalised (a zero vector stays zero).
pub fn hashing_vector(ids: &[u32], dim: usize) -> Vec<f32> {
    let mut v = vec![0f32; dim];
    for &id in ids {
        let mut s = (id as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        for _ in 0..NNZ {
            s ^= s >> 31;
            s = s.wrapping_mul(0xBF58_476D_1CE4_E5B9);
            s ^= s >> 29;
            let pos = (s >> 1) as usize % dim.max(1);
            v[pos] += if s & 1 == 0 { 1.0 } else { -1.0 };
        }
    }
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
    v
}

/// The tokenizer a [`HashingEmbedder`] reads: a model's, or one of its own.
enum Tokens<'a> {
    Borrowed(&'a WordPiece),
    Owned(WordPiece),
}

/// [`hashing_vector`]s through a real model's tokenizer (which also bounds the chunks).
pub struct HashingEmbedder<'a> {
    tokenizer: Tokens<'a>,
    dim: usize,
    id: String,
}

impl<'a> HashingEmbedder<'a> {
    /// Uses `model`'s tokenizer and dimension.
    pub fn new(model: &'a CpuEmbedder) -> Self {
        HashingEmbedder { tokenizer: Tokens::Borrowed(model.tokenizer()), dim: model.dim(), id: format!("{}+hashing", model.model_id()) }
    }

    /// A model's tokenizer alone (no weights): keyword-only static-site snapshots, whose chunks
    /// the tokenizer bounds; `model_id` and `dim` are the model's.
    pub fn from_tokenizer(tokenizer: WordPiece, model_id: &str, dim: usize) -> HashingEmbedder<'static> {
        HashingEmbedder { tokenizer: Tokens::Owned(tokenizer), dim, id: format!("{model_id}+hashing") }
    }

    fn tokenizer(&self) -> &WordPiece {
        match &self.tokenizer {
            Tokens::Borrowed(t) => t,
            Tokens::Owned(t) => t,
        }
    }
}

impl Embedder for HashingEmbedder<'_> {
    fn model_id(&self) -> &str {
        &self.id
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn max_tokens(&self) -> usize {
        self.tokenizer().max_len()
    }
    fn token_counter(&self) -> &dyn TokenCounter {
        self.tokenizer()
    }
    async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        texts.iter().map(|t| Ok(hashing_vector(&self.tokenizer().encode(t)?, self.dim))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_means_similarity() {
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        let a = hashing_vector(&[101, 2000, 2001, 2002, 102], 384);
        let b = hashing_vector(&[101, 2000, 2001, 2003, 102], 384);
        let c = hashing_vector(&[101, 3000, 3001, 3002, 102], 384);
        assert!((dot(&a, &a) - 1.0).abs() < 1e-5);
        assert!(dot(&a, &b) > 0.6 && dot(&a, &c) < dot(&a, &b), "{} {}", dot(&a, &b), dot(&a, &c));
        assert_eq!(hashing_vector(&[], 8), vec![0.0; 8]);
    }
}
