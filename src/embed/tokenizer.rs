//! BERT WordPiece tokenization of a `tokenizer.json` (the Hugging Face `tokenizers` format that
//! sentence-transformers ships), for the pipeline BERT models use and nothing else:
//!
//! 1. added tokens (`[CLS]`, `[MASK]`, …) are matched in the raw text first (leftmost, longest);
//! 2. `BertNormalizer`: drop NUL, U+FFFD and control characters, whitespace → space (`clean_text`);
//!    a space on each side of a CJK ideograph (`handle_chinese_chars`); NFD and no nonspacing marks
//!    (`strip_accents`, which defaults to `lowercase`); lowercase;
//! 3. `BertPreTokenizer`: split on whitespace, each punctuation character its own word;
//! 4. `WordPiece`: greedy longest-match-first with the `##` continuation prefix; a word longer
//!    than `max_input_chars_per_word` or with no match is one `[UNK]`;
//! 5. `[CLS] … [SEP]`, truncated to the model's maximum length.
//!
//! Devlin et al., *BERT* (NAACL 2019) §3 and Wu et al., *Google's Neural Machine Translation
//! System* (2016) §4.1 define the scheme; the character classes are those of the `tokenizers`
//! crate (the same `unicode_categories` tables), and `tests/tokenizer_parity.rs` checks ids and
//! offsets against that crate on real and adversarial text. The general `tokenizers` reader
//! links every normalizer and pre-tokenizer it can deserialise, with their regex engines: about
//! a quarter of the page's `.wasm`, none of it used by a BERT tokenizer.
use std::collections::HashMap;

use serde::Deserialize;
use unicode_categories::UnicodeCategories;

use crate::error::{ModelError, Result};
use crate::ports::{NormalizationForm, normalize};
use crate::text::TokenCounter;

/// The parts of `tokenizer.json` a BERT WordPiece tokenizer uses.
#[derive(Deserialize)]
struct TokenizerJson {
    #[serde(default)]
    added_tokens: Vec<AddedToken>,
    normalizer: Option<NormalizerJson>,
    pre_tokenizer: Option<TypeTag>,
    model: ModelJson,
}

#[derive(Deserialize)]
struct AddedToken {
    id: u32,
    content: String,
}

#[derive(Deserialize)]
struct TypeTag {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct NormalizerJson {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default = "yes")]
    clean_text: bool,
    #[serde(default = "yes")]
    handle_chinese_chars: bool,
    #[serde(default)]
    strip_accents: Option<bool>,
    #[serde(default = "yes")]
    lowercase: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
struct ModelJson {
    #[serde(rename = "type")]
    kind: Option<String>,
    vocab: HashMap<String, u32>,
    #[serde(default = "unk")]
    unk_token: String,
    #[serde(default = "prefix")]
    continuing_subword_prefix: String,
    #[serde(default = "max_chars")]
    max_input_chars_per_word: usize,
}

fn unk() -> String {
    "[UNK]".into()
}
fn prefix() -> String {
    "##".into()
}
fn max_chars() -> usize {
    100
}

/// `BertNormalizer`'s switches.
#[derive(Debug, Clone, Copy)]
struct Normalizer {
    clean_text: bool,
    chinese: bool,
    strip_accents: bool,
    lowercase: bool,
}

/// [`WordPiece::spec`]: what tokenizing as a [`WordPiece`] does needs besides the vocabulary.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct WordPieceSpec {
    /// Drop NUL, U+FFFD and control characters; whitespace becomes a space.
    pub clean_text: bool,
    /// A space on each side of a CJK ideograph.
    pub chinese: bool,
    /// NFD, then no nonspacing marks.
    pub strip_accents: bool,
    /// Lowercase.
    pub lowercase: bool,
    /// The `[UNK]` id.
    pub unk: u32,
    /// The continuation prefix (`##`).
    pub prefix: String,
    /// A longer word (in characters, after normalization) is one `[UNK]`.
    pub max_word_chars: usize,
    /// Added tokens matched in the raw text first (leftmost, then longest): `[text, id]`.
    pub added: Vec<(String, u32)>,
}

/// A BERT WordPiece tokenizer with padding off and truncation at the model's maximum length.
pub struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
    cls: u32,
    sep: u32,
    prefix: String,
    max_word_chars: usize,
    normalizer: Normalizer,
    /// Added tokens, longest first (matched on the raw text).
    added: Vec<(String, u32)>,
    /// The bytes an added token starts with (a bit set: bit `b % 64` of word `b / 64`).
    added_first: [u64; 4],
    max_len: usize,
    /// This tokenizer's key in the word cache (unique in the process).
    #[cfg(any(not(target_arch = "wasm32"), feature = "builder"))]
    cache_key: u64,
}

/// [`WordPiece::word`]'s buffers, kept across the words of a text: the word, its chars' byte
/// offsets, the vocabulary key being tried.
#[derive(Default)]
struct Scratch {
    word: String,
    at: Vec<usize>,
    key: String,
}

/// A normalized character and the byte range of the original character it came from.
#[derive(Debug, Clone, Copy)]
struct Aligned {
    c: char,
    start: usize,
    end: usize,
}

/// `tokenizers`' BERT character classes.
fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// Class bits of a character ([`classes`]): Unicode category C* (other), BERT punctuation
/// (ASCII punctuation or category P*), category Mn (nonspacing mark), and whether its NFD is
/// itself.
const OTHER: u8 = 1;
const PUNCT: u8 = 2;
const MARK_NONSPACING: u8 = 4;
const NFD_SELF: u8 = 8;
/// Set on a memoised entry.
const KNOWN: u8 = 0x80;

/// The classes of the Basic Multilingual Plane, memoised as they are first asked for: the
/// `unicode_categories` lookups are binary searches over several tables per character (a tenth
/// of a keyword site build in Node before this). Zeros (not yet computed) cost the `.wasm`
/// nothing; the answers are those of the same functions, so nothing changes but the speed.
static CLASSES: [std::sync::atomic::AtomicU8; 0x10000] = [const { std::sync::atomic::AtomicU8::new(0) }; 0x10000];

fn compute_classes(c: char) -> u8 {
    let one = String::from(c);
    let nfd_self = normalize(&one, NormalizationForm::Nfd) == one;
    (c.is_other() as u8 * OTHER)
        | ((c.is_ascii_punctuation() || c.is_punctuation()) as u8 * PUNCT)
        | (c.is_mark_nonspacing() as u8 * MARK_NONSPACING)
        | (nfd_self as u8 * NFD_SELF)
}

fn classes(c: char) -> u8 {
    use std::sync::atomic::Ordering::Relaxed;
    let Some(slot) = CLASSES.get(c as usize) else { return compute_classes(c) };
    match slot.load(Relaxed) {
        0 => {
            let k = compute_classes(c) | KNOWN;
            slot.store(k, Relaxed);
            k
        }
        k => k,
    }
}

fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && classes(c) & OTHER != 0
}

fn is_chinese_char(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F | 0x2B740..=0x2B81F | 0x2B920..=0x2CEAF
        | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

fn is_bert_punctuation(c: char) -> bool {
    classes(c) & PUNCT != 0
}

impl WordPiece {
    /// Parses `tokenizer.json`. `max_len` counts the special tokens.
    ///
    /// Errors: [`ModelError::InvalidTokenizer`] for a file that is not JSON, is not a WordPiece
    /// model with a BERT normalizer and pre-tokenizer, or lacks `[UNK]`, `[CLS]` or `[SEP]`.
    pub fn from_bytes(bytes: &[u8], max_len: usize) -> Result<Self> {
        let invalid = |reason: String| ModelError::InvalidTokenizer { reason };
        let json: TokenizerJson = serde_json::from_slice(bytes).map_err(|e| invalid(e.to_string()))?;
        if json.model.kind.as_deref().is_some_and(|k| k != "WordPiece") {
            return Err(
                invalid(format!("model type {:?}: webrag reads BERT WordPiece tokenizers", json.model.kind.unwrap_or_default())).into()
            );
        }
        let normalizer = match &json.normalizer {
            Some(n) if n.kind == "BertNormalizer" => Normalizer {
                clean_text: n.clean_text,
                chinese: n.handle_chinese_chars,
                strip_accents: n.strip_accents.unwrap_or(n.lowercase),
                lowercase: n.lowercase,
            },
            Some(n) => return Err(invalid(format!("normalizer {:?}: webrag reads BertNormalizer", n.kind)).into()),
            None => Normalizer { clean_text: false, chinese: false, strip_accents: false, lowercase: false },
        };
        if let Some(p) = &json.pre_tokenizer
            && p.kind != "BertPreTokenizer"
        {
            return Err(invalid(format!("pre-tokenizer {:?}: webrag reads BertPreTokenizer", p.kind)).into());
        }
        let vocab = json.model.vocab;
        let id = |t: &str| vocab.get(t).copied().ok_or_else(|| invalid(format!("the vocabulary has no {t}")));
        let (unk, cls, sep) = (id(&json.model.unk_token)?, id("[CLS]")?, id("[SEP]")?);
        let mut added: Vec<(String, u32)> =
            json.added_tokens.into_iter().filter(|t| !t.content.is_empty()).map(|t| (t.content, t.id)).collect();
        crate::sort::by(&mut added, |a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        let mut added_first = [0u64; 4];
        for (t, _) in &added {
            let b = t.as_bytes()[0];
            added_first[b as usize / 64] |= 1 << (b % 64);
        }
        Ok(WordPiece {
            vocab,
            unk,
            cls,
            sep,
            prefix: json.model.continuing_subword_prefix,
            max_word_chars: json.model.max_input_chars_per_word,
            normalizer,
            added,
            added_first,
            max_len,
            #[cfg(any(not(target_arch = "wasm32"), feature = "builder"))]
            cache_key: word_cache::new_key(),
        })
    }

    /// Every vocabulary entry: its piece (continuations with their prefix, `##ing`) and id.
    pub fn vocab(&self) -> impl Iterator<Item = (&str, u32)> {
        self.vocab.iter().map(|(t, i)| (t.as_str(), *i))
    }

    /// One more than the largest id of the vocabulary and the added tokens.
    pub fn id_bound(&self) -> u32 {
        self.vocab.values().chain(self.added.iter().map(|(_, i)| i)).max().map_or(0, |m| m.saturating_add(1))
    }

    /// The settings a reader of the vocabulary elsewhere needs to tokenize as this does (the
    /// static tier's WordPiece in `webrag/static`): normalizer switches, `[UNK]`, the
    /// continuation prefix, the word length bound and the added tokens.
    pub fn spec(&self) -> WordPieceSpec {
        let n = self.normalizer;
        WordPieceSpec {
            clean_text: n.clean_text,
            chinese: n.chinese,
            strip_accents: n.strip_accents,
            lowercase: n.lowercase,
            unk: self.unk,
            prefix: self.prefix.clone(),
            max_word_chars: self.max_word_chars,
            added: self.added.clone(),
        }
    }

    /// Maximum sequence length (special tokens included).
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// The `[CLS]` id.
    pub fn cls(&self) -> u32 {
        self.cls
    }

    /// The `[UNK]` id.
    pub fn unk(&self) -> u32 {
        self.unk
    }

    /// The `[SEP]` id.
    pub fn sep(&self) -> u32 {
        self.sep
    }

    /// Token ids with `[CLS]`/`[SEP]`, truncated to `max_len` (`[CLS]`, the first `max_len - 2`
    /// ids, `[SEP]`).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let mut ids = Vec::with_capacity(text.len() / 4 + 2);
        ids.push(self.cls);
        ids.extend(self.pieces(text).into_iter().take(self.max_len.saturating_sub(2)).map(|(id, _)| id));
        ids.push(self.sep);
        Ok(ids)
    }

    /// Token strings with special tokens (for debugging and tests).
    pub fn tokens(&self, text: &str) -> Result<Vec<String>> {
        let by_id: HashMap<u32, &str> =
            self.vocab.iter().map(|(t, i)| (*i, t.as_str())).chain(self.added.iter().map(|(t, i)| (*i, t.as_str()))).collect();
        Ok(self.encode(text)?.into_iter().map(|i| by_id.get(&i).copied().unwrap_or("[UNK]").to_string()).collect())
    }

    /// Every token of `text` (no special tokens added, no truncation) with the byte range of the
    /// original text it stands for.
    pub fn pieces(&self, text: &str) -> Vec<(u32, (usize, usize))> {
        let mut out = Vec::new();
        let mut rest = 0;
        while rest < text.len() {
            let next = self.next_added(text, rest);
            let end = next.map_or(text.len(), |(at, _, _)| at);
            self.segment(text, rest, end, &mut out);
            match next {
                Some((at, len, id)) => {
                    out.push((id, (at, at + len)));
                    rest = at + len;
                }
                None => rest = text.len(),
            }
        }
        out
    }

    /// The next added token in `text` from byte `from`: the leftmost, the longest where several
    /// start there (`added` is longest first). `(start, length, id)`. One pass over the bytes:
    /// a token can only start at a byte some token starts with, and that byte (a UTF-8 lead
    /// byte) is a char boundary.
    fn next_added(&self, text: &str, from: usize) -> Option<(usize, usize, u32)> {
        let bytes = text.as_bytes();
        (from..bytes.len())
            .filter(|&at| self.added_first[bytes[at] as usize / 64] & (1 << (bytes[at] % 64)) != 0)
            .find_map(|at| self.added.iter().find(|(t, _)| bytes[at..].starts_with(t.as_bytes())).map(|(t, id)| (at, t.len(), *id)))
    }

    /// Normalizes, splits and word-pieces `text[from..to]` (no added token inside).
    /// Regions of whole words (split at ASCII whitespace, which both paths split at and keep no
    /// part of) go to [`WordPiece::segment_printable_ascii`] where every word is printable ASCII,
    /// else to [`WordPiece::segment_any`].
    fn segment(&self, text: &str, from: usize, to: usize, out: &mut Vec<(u32, (usize, usize))>) {
        let bytes = text.as_bytes();
        let flush = |start: usize, end: usize, ascii: bool, out: &mut Vec<(u32, (usize, usize))>| match ascii {
            true => self.segment_printable_ascii(text, start, end, out),
            false => self.segment_any(text, start, end, out),
        };
        let (mut region, mut region_ascii) = (from, true);
        let (mut word, mut word_ascii) = (from, true);
        for i in from..=to {
            match bytes.get(i).filter(|_| i < to) {
                Some(b' ' | b'\t' | b'\n' | b'\r') | None => {
                    if word < i && word_ascii != region_ascii {
                        flush(region, word, region_ascii, out);
                        (region, region_ascii) = (word, word_ascii);
                    }
                    (word, word_ascii) = (i + 1, true);
                }
                Some(b' '..=b'~') => {}
                Some(_) => word_ascii = false,
            }
        }
        flush(region, to, region_ascii, out);
    }

    /// [`WordPiece::segment`] for any text.
    fn segment_any(&self, text: &str, from: usize, to: usize, out: &mut Vec<(u32, (usize, usize))>) {
        let n = self.normalizer;
        let mut norm: Vec<Aligned> = Vec::with_capacity(to - from);
        let mut decomposed = String::new();
        for (i, c) in text[from..to].char_indices() {
            let (start, end) = (from + i, from + i + c.len_utf8());
            if c.is_ascii() {
                // What the general path below does, for a character with no case but ASCII's,
                // no decomposition, no mark and no CJK padding.
                if n.clean_text && (c == '\0' || is_control(c)) {
                    continue;
                }
                let c = if n.clean_text && is_whitespace(c) { ' ' } else { c };
                norm.push(Aligned { c: if n.lowercase { c.to_ascii_lowercase() } else { c }, start, end });
                continue;
            }
            if n.clean_text && (c == '\0' || c == '\u{FFFD}' || is_control(c)) {
                continue;
            }
            let c = if n.clean_text && is_whitespace(c) { ' ' } else { c };
            let pad = n.chinese && is_chinese_char(c);
            if pad {
                norm.push(Aligned { c: ' ', start, end });
            }
            let mut push = |c: char| {
                if n.lowercase {
                    norm.extend(c.to_lowercase().map(|c| Aligned { c, start, end }));
                } else {
                    norm.push(Aligned { c, start, end });
                }
            };
            if n.strip_accents && classes(c) & NFD_SELF != 0 {
                if classes(c) & MARK_NONSPACING == 0 {
                    push(c);
                }
            } else if n.strip_accents {
                decomposed.clear();
                decomposed.push(c);
                for d in normalize(&decomposed, NormalizationForm::Nfd).chars().filter(|d| !d.is_mark_nonspacing()) {
                    push(d);
                }
            } else {
                push(c);
            }
            if pad {
                norm.push(Aligned { c: ' ', start, end });
            }
        }
        // BertPreTokenizer: whitespace splits (and goes), punctuation is a word of its own.
        let mut scratch = Scratch::default();
        let mut word_start = 0;
        for i in 0..=norm.len() {
            let boundary = i == norm.len() || norm[i].c.is_whitespace() || is_bert_punctuation(norm[i].c);
            if !boundary {
                continue;
            }
            for chars in [&norm[word_start..i], norm.get(i..i + 1).filter(|c| !c[0].c.is_whitespace()).unwrap_or_default()] {
                scratch.word.clear();
                scratch.word.extend(chars.iter().map(|a| a.c));
                self.word(chars.len(), &mut scratch, |first, end| (chars[first].start, chars[end - 1].end), out);
            }
            word_start = i + 1;
        }
    }

    /// [`WordPiece::segment`] for text of printable ASCII, tabs and line breaks only (most of a
    /// site's text), with the same answers: such a text has nothing the normalizer drops,
    /// decomposes or pads, each byte is one char, and the words are the runs between whitespace,
    /// each ASCII punctuation mark one of its own.
    fn segment_printable_ascii(&self, text: &str, from: usize, to: usize, out: &mut Vec<(u32, (usize, usize))>) {
        let bytes = &text.as_bytes()[from..to];
        let lowercase = self.normalizer.lowercase;
        let mut scratch = Scratch::default();
        let mut word_start = 0;
        for i in 0..=bytes.len() {
            let b = bytes.get(i).copied();
            let boundary = b.is_none_or(|b| b.is_ascii_whitespace() || b.is_ascii_punctuation());
            if !boundary {
                continue;
            }
            let punct = b.filter(u8::is_ascii_punctuation).map(|_| i..i + 1);
            for w in [word_start..i, punct.unwrap_or(i..i)] {
                let (start, len) = (from + w.start, w.len());
                scratch.word.clear();
                scratch.word.extend(bytes[w].iter().map(|&b| char::from(if lowercase { b.to_ascii_lowercase() } else { b })));
                self.word(len, &mut scratch, |first, end| (start + first, start + end), out);
            }
            word_start = i + 1;
        }
    }

    /// WordPiece over one pre-tokenized word of `chars` normalized chars, `scratch.word`;
    /// `span(first, end)` is the byte range of the original text that chars `first..end` stand
    /// for.
    fn word(
        &self,
        chars: usize,
        scratch: &mut Scratch,
        span: impl Fn(usize, usize) -> (usize, usize),
        out: &mut Vec<(u32, (usize, usize))>,
    ) {
        if chars == 0 {
            return;
        }
        let whole = span(0, chars);
        if chars > self.max_word_chars {
            out.push((self.unk, whole));
            return;
        }
        let Scratch { word, at, key } = scratch;
        #[cfg(any(not(target_arch = "wasm32"), feature = "builder"))]
        if let Some(()) = word_cache::get(self.cache_key, word, |pieces| match pieces {
            [] => out.push((self.unk, whole)),
            _ => out.extend(pieces.iter().map(|&(id, s, e)| (id, span(s as usize, e as usize)))),
        }) {
            return;
        }
        // Byte offset in `word` of each char, and the end.
        at.clear();
        at.extend(word.char_indices().map(|(i, _)| i).chain(std::iter::once(word.len())));
        let found_from = out.len();
        // (id, first char, char after the last) of each piece, for the word cache.
        #[cfg(any(not(target_arch = "wasm32"), feature = "builder"))]
        let mut pieces: Vec<(u32, usize, usize)> = Vec::new();
        let mut start = 0; // char index
        while start < chars {
            let mut end = chars;
            let mut hit = None;
            while start < end {
                key.clear();
                if start > 0 {
                    key.push_str(&self.prefix);
                }
                key.push_str(&word[at[start]..at[end]]);
                if let Some(&id) = self.vocab.get(key.as_str()) {
                    hit = Some(id);
                    break;
                }
                end -= 1;
            }
            let Some(id) = hit else {
                out.truncate(found_from);
                out.push((self.unk, whole));
                #[cfg(any(not(target_arch = "wasm32"), feature = "builder"))]
                word_cache::put(self.cache_key, word, &[]);
                return;
            };
            out.push((id, span(start, end)));
            #[cfg(any(not(target_arch = "wasm32"), feature = "builder"))]
            pieces.push((id, start, end));
            start = end;
        }
        #[cfg(any(not(target_arch = "wasm32"), feature = "builder"))]
        word_cache::put(self.cache_key, word, &pieces);
    }
}

/// The pieces of the words a thread has split lately, for one tokenizer at a time. A site build
/// tokenizes each text three or four times (weighting the static model, chunking, embedding),
/// and a word that is not one vocabulary entry costs a lookup per length tried. Only the builds
/// that index sites keep it (native, the site builder's `.wasm`): the page tokenizes little next
/// to its forward pass, and its `.wasm` size is a budget. Answers are those of
/// [`WordPiece::word`] itself, so nothing changes but the speed.
#[cfg(any(not(target_arch = "wasm32"), feature = "builder"))]
mod word_cache {
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Words held at most; the next one empties the cache (a few MB at most).
    const MAX_WORDS: usize = 1 << 15;
    /// A longer word (in normalized characters) is not cached.
    pub const MAX_CHARS: usize = 64;

    /// A word's pieces: vocabulary id, first char, char after the last; empty: the word is one
    /// `[UNK]`.
    type Pieces = Box<[(u32, u8, u8)]>;

    #[derive(Default)]
    struct Cache {
        owner: u64,
        words: HashMap<Box<str>, Pieces, foldhash::fast::RandomState>,
    }

    thread_local! {
        static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
    }

    static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

    /// A key no other tokenizer of this process has.
    pub fn new_key() -> u64 {
        NEXT_KEY.fetch_add(1, Ordering::Relaxed)
    }

    /// `found(pieces)` of `word` when tokenizer `owner` split it lately.
    pub fn get(owner: u64, word: &str, found: impl FnOnce(&[(u32, u8, u8)])) -> Option<()> {
        CACHE.with_borrow(|c| (c.owner == owner).then(|| c.words.get(word)).flatten().map(|p| found(p)))
    }

    /// Remembers `word`'s pieces (id, first char, char after the last) for `owner`.
    pub fn put(owner: u64, word: &str, pieces: &[(u32, usize, usize)]) {
        if word.chars().count() > MAX_CHARS {
            return;
        }
        CACHE.with_borrow_mut(|c| {
            if c.owner != owner || c.words.len() >= MAX_WORDS {
                c.words.clear();
                c.owner = owner;
            }
            c.words.insert(word.into(), pieces.iter().map(|&(id, s, e)| (id, s as u8, e as u8)).collect());
        });
    }
}

impl TokenCounter for WordPiece {
    fn token_offsets(&self, text: &str) -> Vec<(usize, usize)> {
        self.pieces(text).into_iter().map(|(_, o)| o).collect()
    }
    fn count(&self, text: &str) -> usize {
        self.pieces(text).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenizer(vocab: &[&str]) -> WordPiece {
        let vocab: serde_json::Map<String, serde_json::Value> = vocab.iter().enumerate().map(|(i, t)| (t.to_string(), i.into())).collect();
        let json = serde_json::json!({
            "normalizer": { "type": "BertNormalizer", "lowercase": true },
            "pre_tokenizer": { "type": "BertPreTokenizer" },
            "model": { "type": "WordPiece", "vocab": vocab, "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100 },
        });
        WordPiece::from_bytes(json.to_string().as_bytes(), 16).expect("tokenizer")
    }

    fn ids(t: &WordPiece, text: &str) -> Vec<u32> {
        t.pieces(text).into_iter().map(|(id, _)| id).collect()
    }

    /// The printable-ASCII path splits, word-pieces and aligns as the path for any text does,
    /// on text of every printable ASCII character, tabs and line breaks: punctuation runs, case,
    /// words with no piece (`[UNK]`), words past `max_input_chars_per_word`, continuations.
    #[test]
    fn printable_ascii_text_tokenizes_as_any_text_does() {
        let t = tokenizer(&["[UNK]", "[CLS]", "[SEP]", "foo", "##bar", "x", "a", "##b", "!", "(", ")", "~", "##1", "1"]);
        let all: String = (b' '..=b'~').map(char::from).collect();
        let long = "ab".repeat(60);
        let texts = [
            all.as_str(),
            "FooBar foobar zz",
            "x\tfoo\r\nbar  (x)!!~",
            "a1b1 ab1 1a ##b",
            &long,
            "",
            "   ",
            "!",
            "foo.bar,x;'\"",
            "Ab AB aB ab abb abbb a-b a_b a`b",
            "\t\n\r",
        ];
        for text in texts {
            let (mut fast, mut any) = (Vec::new(), Vec::new());
            t.segment_printable_ascii(text, 0, text.len(), &mut fast);
            t.segment_any(text, 0, text.len(), &mut any);
            assert_eq!(fast, any, "{text:?}");
            // And from an offset, as `pieces` calls it between added tokens.
            let (mut fast, mut any) = (Vec::new(), Vec::new());
            t.segment_printable_ascii(text, text.len() / 2, text.len(), &mut fast);
            t.segment_any(text, text.len() / 2, text.len(), &mut any);
            assert_eq!(fast, any, "{text:?} from its middle");
        }
        // Mixed text: regions of each kind, split where the paths agree.
        for text in
            ["Foo café\u{0001}bar x", "é foo\tbar\u{00a0}x  ÉTÉ a-b ", "foo\u{4e2d}x bar", "\u{0001} foo", "x\u{000b}foo bar\u{2028}(x)"]
        {
            let mut any = Vec::new();
            t.segment_any(text, 0, text.len(), &mut any);
            assert_eq!(t.pieces(text), any, "{text:?}");
        }
    }

    /// The word cache answers for the tokenizer that split the word, not for another one used in
    /// between, and a repeated word (cached) splits and aligns as the first did.
    #[test]
    fn the_word_cache_keeps_each_tokenizer_its_own_pieces() {
        let a = tokenizer(&["[UNK]", "[CLS]", "[SEP]", "foo", "##bar", "x"]);
        let b = tokenizer(&["[UNK]", "[CLS]", "[SEP]", "foobar", "foo"]);
        for _ in 0..2 {
            assert_eq!(ids(&a, "FooBar foobar zz"), [3, 4, 3, 4, 0]);
            assert_eq!(ids(&b, "foobar FOOBAR zz"), [3, 3, 0]);
        }
        assert_eq!(a.pieces("x foobar Foobar"), [(5, (0, 1)), (3, (2, 5)), (4, (5, 8)), (3, (9, 12)), (4, (12, 15))]);
    }
}
