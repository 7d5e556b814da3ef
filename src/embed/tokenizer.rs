//! WordPiece tokenization through the `tokenizers` crate (the same library and `tokenizer.json`
//! that sentence-transformers uses, so ids match exactly).
use tokenizers::{Tokenizer, TruncationParams};

use crate::error::{ModelError, Result};
use crate::text::TokenCounter;

/// A `tokenizer.json` tokenizer with padding off and truncation at the model's maximum length
/// (the shipped file says `max_length: 128, padding: Fixed 128`; sentence-transformers uses 256
/// and no padding).
pub struct WordPiece {
    /// Truncating tokenizer (for embedding).
    truncating: Tokenizer,
    /// Non-truncating tokenizer (for counting and chunk bounds).
    counting: Tokenizer,
    max_len: usize,
}

impl WordPiece {
    /// Parses `tokenizer.json`. `max_len` counts special tokens.
    pub fn from_bytes(bytes: &[u8], max_len: usize) -> Result<Self> {
        let invalid = |e: tokenizers::Error| ModelError::InvalidTokenizer { reason: e.to_string() };
        let mut counting = Tokenizer::from_bytes(bytes).map_err(invalid)?;
        counting.with_padding(None);
        counting.with_truncation(None).map_err(invalid)?;
        let mut truncating = counting.clone();
        truncating.with_truncation(Some(TruncationParams { max_length: max_len, ..Default::default() })).map_err(invalid)?;
        Ok(WordPiece { truncating, counting, max_len })
    }

    /// Maximum sequence length (special tokens included).
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Token ids with `[CLS]`/`[SEP]`, truncated to `max_len` (first `max_len - 1` ids, `[SEP]`).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let enc = self.truncating.encode(text, true).map_err(|e| ModelError::Tokenize { reason: e.to_string() })?;
        Ok(enc.get_ids().to_vec())
    }

    /// Token strings with special tokens (for debugging and tests).
    pub fn tokens(&self, text: &str) -> Result<Vec<String>> {
        let enc = self.truncating.encode(text, true).map_err(|e| ModelError::Tokenize { reason: e.to_string() })?;
        Ok(enc.get_tokens().to_vec())
    }
}

impl TokenCounter for WordPiece {
    fn token_offsets(&self, text: &str) -> Vec<(usize, usize)> {
        match self.counting.encode(text, false) {
            Ok(enc) => enc.get_offsets().to_vec(),
            // Counting never fails on valid UTF-8; be conservative if it does.
            Err(_) => text.char_indices().map(|(i, c)| (i, i + c.len_utf8())).collect(),
        }
    }
}
