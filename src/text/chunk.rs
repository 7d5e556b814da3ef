//! Heading-aware chunking bounded by the embedder's tokenizer.
//!
//! Blocks under the same heading path are merged up to a soft target; a chunk never exceeds the
//! hard bound (`max_tokens`, word pieces including `[CLS]`/`[SEP]` and the heading prefix that is
//! embedded with it), so every token of every chunk is embedded (docs/embedding.md). Oversized blocks
//! are split at sentence boundaries (UAX #29), oversized sentences at word-piece boundaries.
use unicode_segmentation::UnicodeSegmentation;

use super::parse::Block;

/// Counts word pieces. Implemented by the embedder's tokenizer.
pub trait TokenCounter {
    /// Byte ranges of the word pieces of `text`, without special tokens.
    fn token_offsets(&self, text: &str) -> Vec<(usize, usize)>;
    /// Number of special tokens added around one sequence (`[CLS]` + `[SEP]` = 2 for BERT).
    fn special_tokens(&self) -> usize {
        2
    }
    /// Word pieces of `text` without special tokens.
    fn count(&self, text: &str) -> usize {
        self.token_offsets(text).len()
    }
}

/// A chunk before it is stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// Headings above it.
    pub heading_path: Vec<String>,
    /// Chunk text.
    pub text: String,
    /// The string that is embedded: heading prefix + newline + text.
    pub embed_input: String,
    /// Word pieces of `embed_input`, special tokens included.
    pub token_count: usize,
}

/// The prefix embedded with a chunk: title and headings, joined by " > " (the first heading is
/// dropped when it repeats the title). At most `max_prefix` word pieces.
fn prefix(title: &str, path: &[String], counter: &dyn TokenCounter, max_prefix: usize) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if !title.is_empty() {
        parts.push(title);
    }
    for (i, h) in path.iter().enumerate() {
        if i == 0 && h == title {
            continue;
        }
        parts.push(h);
    }
    let p = parts.join(" > ");
    let offs = counter.token_offsets(&p);
    if offs.len() <= max_prefix { p } else { p[..offs[max_prefix].0].trim_end().to_string() }
}

/// The text embedded for a chunk of `text` under heading `path` in a document titled `title`:
/// what [`chunk`] gives as [`Chunk::embed_input`] (to embed a stored chunk again).
pub fn embed_input(title: &str, path: &[String], text: &str, counter: &dyn TokenCounter, max_tokens: usize) -> String {
    let pre = prefix(title, path, counter, (max_tokens / 4).max(1));
    if pre.is_empty() { text.to_string() } else { format!("{pre}\n{text}") }
}

/// Splits `blocks` into chunks of at most `max_tokens` word pieces (embedded input, special
/// tokens included), aiming at `target_tokens`.
pub fn chunk(title: &str, blocks: &[Block], counter: &dyn TokenCounter, max_tokens: usize, target_tokens: usize) -> Vec<Chunk> {
    let max_prefix = (max_tokens / 4).max(1);
    let mut out = Vec::new();
    let mut i = 0;
    while i < blocks.len() {
        // A section: consecutive blocks with the same heading path.
        let path = &blocks[i].heading_path;
        let mut j = i;
        while j < blocks.len() && (std::rc::Rc::ptr_eq(&blocks[j].heading_path, path) || blocks[j].heading_path == *path) {
            j += 1;
        }
        let pre = prefix(title, path, counter, max_prefix);
        let pre_tokens = if pre.is_empty() { 0 } else { counter.count(&pre) };
        let budget = max_tokens.saturating_sub(counter.special_tokens() + pre_tokens).max(8);
        let target = target_tokens.saturating_sub(counter.special_tokens() + pre_tokens).clamp(1, budget);
        // Units no larger than the budget.
        let mut units: Vec<(String, usize)> = Vec::new();
        for b in &blocks[i..j] {
            split_unit(&b.text, counter, budget, &mut units);
        }
        let mut cur = String::new();
        let mut cur_tokens = 0;
        for (u, n) in units {
            if !cur.is_empty() && cur_tokens + n > target {
                out.push(make(path, &pre, std::mem::take(&mut cur), counter));
                cur_tokens = 0;
            }
            if !cur.is_empty() {
                cur.push('\n');
            }
            cur.push_str(&u);
            cur_tokens += n;
        }
        if !cur.is_empty() {
            out.push(make(path, &pre, cur, counter));
        }
        i = j;
    }
    out
}

fn make(path: &[String], pre: &str, text: String, counter: &dyn TokenCounter) -> Chunk {
    let embed_input = if pre.is_empty() { text.clone() } else { format!("{pre}\n{text}") };
    let token_count = counter.count(&embed_input) + counter.special_tokens();
    Chunk { heading_path: path.to_vec(), text, embed_input, token_count }
}

/// Pushes `text` as one unit if it fits `budget`, else its sentences, else word-piece windows.
fn split_unit(text: &str, counter: &dyn TokenCounter, budget: usize, out: &mut Vec<(String, usize)>) {
    let n = counter.count(text);
    if n <= budget {
        if n > 0 {
            out.push((text.to_string(), n));
        }
        return;
    }
    let sentences: Vec<&str> = text.split_sentence_bounds().collect();
    if sentences.len() > 1 {
        // Greedily pack sentences into units ≤ budget.
        let mut cur = String::new();
        let mut cur_n = 0;
        for s in sentences {
            let sn = counter.count(s);
            if sn > budget {
                if !cur.trim().is_empty() {
                    out.push((cur.trim().to_string(), cur_n));
                }
                cur.clear();
                cur_n = 0;
                split_tokens(s, counter, budget, out);
                continue;
            }
            if cur_n + sn > budget && !cur.trim().is_empty() {
                out.push((cur.trim().to_string(), cur_n));
                cur.clear();
                cur_n = 0;
            }
            cur.push_str(s);
            cur_n += sn;
        }
        if !cur.trim().is_empty() {
            out.push((cur.trim().to_string(), cur_n));
        }
    } else {
        split_tokens(text, counter, budget, out);
    }
}

/// Cuts `text` into windows of at most `budget` word pieces, preferring whitespace cuts.
fn split_tokens(text: &str, counter: &dyn TokenCounter, budget: usize, out: &mut Vec<(String, usize)>) {
    let offs = counter.token_offsets(text);
    let mut start_tok = 0;
    while start_tok < offs.len() {
        let mut end_tok = (start_tok + budget).min(offs.len());
        if end_tok < offs.len() {
            // Back off to a token that starts after whitespace (a word start), if one is near.
            let mut k = end_tok;
            while k > start_tok + budget / 2 {
                let s = offs[k].0;
                if s > 0 && text[..s].ends_with(char::is_whitespace) {
                    break;
                }
                k -= 1;
            }
            if k > start_tok + budget / 2 {
                end_tok = k;
            }
        }
        let a = offs[start_tok].0;
        // Re-count the window on its own: a cut inside a word makes the rest of that word start a
        // new word, which can take more word pieces (`Sourdou|gh` → `g h`); shrink it until it fits.
        let (piece, n) = loop {
            let b = if end_tok < offs.len() { offs[end_tok].0 } else { text.len() };
            let piece = text[a..b].trim();
            let n = counter.count(piece);
            if n <= budget || end_tok <= start_tok + 1 {
                break (piece, n);
            }
            end_tok -= 1;
        };
        if !piece.is_empty() {
            out.push((piece.to_string(), n));
        }
        start_tok = end_tok;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whitespace counter: one token per whitespace-separated word.
    struct Words;
    impl TokenCounter for Words {
        fn token_offsets(&self, text: &str) -> Vec<(usize, usize)> {
            let mut v = Vec::new();
            let mut start = None;
            for (i, c) in text.char_indices() {
                match (c.is_whitespace(), start) {
                    (false, None) => start = Some(i),
                    (true, Some(s)) => {
                        v.push((s, i));
                        start = None
                    }
                    _ => {}
                }
            }
            if let Some(s) = start {
                v.push((s, text.len()));
            }
            v
        }
    }

    fn block(path: &[&str], text: &str) -> Block {
        Block { heading_path: path.iter().map(|s| s.to_string()).collect::<Vec<_>>().into(), text: text.into() }
    }

    #[test]
    fn merges_within_section_and_splits_on_headings() {
        let blocks = vec![block(&["A"], "a b c"), block(&["A"], "d e"), block(&["B"], "f g")];
        let c = chunk("T", &blocks, &Words, 32, 32);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].text, "a b c\nd e");
        assert_eq!(c[0].embed_input, "T > A\na b c\nd e");
        assert_eq!(c[0].token_count, 2 + 3 + 5);
    }

    #[test]
    fn never_exceeds_bound() {
        let long = (0..1000).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
        let sentences = (0..50).map(|i| format!("Sentence number {i} has some words in it.")).collect::<Vec<_>>().join(" ");
        let blocks = vec![block(&["H"], &long), block(&["H"], &sentences)];
        for max in [16, 32, 100] {
            let c = chunk("Title", &blocks, &Words, max, max);
            assert!(c.len() > 1);
            for ch in &c {
                assert!(ch.token_count <= max, "{} > {max}", ch.token_count);
            }
            // nothing lost
            let words: usize = c.iter().map(|ch| Words.count(&ch.text)).sum();
            assert_eq!(words, 1000 + 50 * 8);
        }
    }
}
