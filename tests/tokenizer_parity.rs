//! webrag's BERT WordPiece tokenizer ([`webrag::embed::WordPiece`]) against the `tokenizers`
//! crate (the library sentence-transformers uses) on the same `tokenizer.json`: token ids and
//! byte offsets identical on HotpotQA passages, Chinese news, hand-picked edge cases and random
//! strings over a hostile alphabet (seed printed); and the truncated encoding.
#![cfg(not(target_arch = "wasm32"))]
use crate::common;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use webrag::embed::WordPiece;
use webrag::text::TokenCounter;

struct Pair {
    ours: WordPiece,
    reference: tokenizers::Tokenizer,
    truncating: tokenizers::Tokenizer,
}

fn pair() -> Pair {
    let bytes = common::model_files().tokenizer;
    let ours = WordPiece::from_bytes(&bytes, 256).expect("our tokenizer");
    let mut reference = tokenizers::Tokenizer::from_bytes(&bytes).expect("reference tokenizer");
    reference.with_padding(None);
    reference.with_truncation(None).expect("no truncation");
    let mut truncating = reference.clone();
    truncating.with_truncation(Some(tokenizers::TruncationParams { max_length: 256, ..Default::default() })).expect("truncation");
    Pair { ours, reference, truncating }
}

/// The first difference between the two tokenizations of `text`, if any.
fn differs(p: &Pair, text: &str) -> Option<String> {
    let enc = p.reference.encode(text, false).expect("reference encodes");
    let want: Vec<(u32, (usize, usize))> = enc.get_ids().iter().copied().zip(enc.get_offsets().iter().copied()).collect();
    let got = p.ours.pieces(text);
    if got != want {
        let i = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
        return Some(format!(
            "{text:?}: first difference at token {i}: ours {:?}, tokenizers {:?} ({} vs {} tokens)",
            got.get(i),
            want.get(i),
            got.len(),
            want.len()
        ));
    }
    assert_eq!(p.ours.token_offsets(text), want.iter().map(|x| x.1).collect::<Vec<_>>());
    let truncated = p.truncating.encode(text, true).expect("reference encodes");
    if p.ours.encode(text).expect("encodes") != truncated.get_ids() {
        return Some(format!("{text:?}: the truncated encodings differ"));
    }
    None
}

fn check_all<'a>(p: &Pair, texts: impl IntoIterator<Item = &'a str>) -> usize {
    let mut n = 0;
    let mut bad = Vec::new();
    for t in texts {
        n += 1;
        if let Some(d) = differs(p, t) {
            bad.push(d);
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {n} texts differ; first ones:\n{}",
        bad.len(),
        bad.iter().take(5).cloned().collect::<Vec<_>>().join("\n")
    );
    n
}

#[test]
fn matches_tokenizers_on_hotpotqa_and_chinese_news() {
    let Some(hotpot) = common::shared_data("data/hotpotqa/train100_corpus.json") else { return };
    let Some(news) = common::shared_data("data/crud_news/documents_dup_part_1_part_1") else { return };
    let p = pair();
    let corpus: serde_json::Value = serde_json::from_slice(&std::fs::read(hotpot).expect("HotpotQA corpus")).expect("JSON");
    let passages: Vec<String> = corpus
        .as_object()
        .expect("object")
        .iter()
        .map(|(title, v)| {
            format!("{title}\n{}", v.as_array().map(|a| a.iter().filter_map(|s| s.as_str()).collect::<String>()).unwrap_or_default())
        })
        .collect();
    let news = std::fs::read_to_string(news).expect("news");
    let articles: Vec<&str> = news.lines().filter(|l| !l.trim().is_empty()).take(300).collect();
    let n = check_all(&p, passages.iter().map(String::as_str).chain(articles));
    println!("{n} texts tokenized identically");
}

#[test]
fn matches_tokenizers_on_edge_cases() {
    let p = pair();
    let long = "x".repeat(101);
    let cases = [
        "",
        " ",
        "Hello, World!",
        "Crème brûlée à la carte; naïve café",
        "İstanbul ǅemal ΣΊΣΥΦΟΣ ß ﬁ",
        "tabs\tand\nnewlines\r\nand\u{00A0}nbsp\u{2003}em-space",
        "NUL\u{0}and\u{FFFD}replacement\u{200B}zero-width\u{200D}joiner\u{00AD}soft-hyphen",
        "controls \u{1}\u{7f}\u{9f} and private use \u{E000}",
        "emoji 👩‍👩‍👧 🇫🇷 ✈️ and 1️⃣",
        "中文分词测试，标点。日本語のテキスト、カタカナ。한국어 텍스트",
        "[CLS] literal [MASK] tokens[SEP]inside and [UNK][PAD]",
        "a[MASK]b [mask] [ MASK ]",
        &long,
        "supercalifragilisticexpialidocious antidisestablishmentarianism",
        "don't U.S.A. 3.14 1,000 a:b snake_case e-mail",
        "\u{0301}leading combining mark, e\u{0301} decomposed, ḗ composed",
        "Ǆ ǅ ǆ Å Ω K ﬃ ㎒ ①",
        "𝐌𝐚𝐭𝐡 𝔉𝔯𝔞𝔨𝔱𝔲𝔯 and astral 𠀀𪚥",
        "¿Qué? ¡Sí! «quotes» „low“ ‘single’ — dash – en … ellipsis",
        "العربية עברית हिन्दी ไทย",
    ];
    check_all(&p, cases.iter().copied());
}

#[test]
fn matches_tokenizers_on_random_hostile_strings() {
    let seed: u64 = std::env::var("WEBRAG_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    println!("seed {seed} (WEBRAG_SEED={seed} repeats this run)");
    let mut rng = SmallRng::seed_from_u64(seed);
    let alphabet: Vec<char> = "aZé\u{0301}ß İ中文。，、！?.,;:'\"()[]{}-_/\\ \t\n\r\u{0}\u{7}\u{FFFD}\u{200B}\u{00A0}\u{E000}😀🇫\u{FE0F}#@$%^&*~`|<>+=0123456789ᵃ①ﬁ"
        .chars()
        .chain("[MASK][CLS]".chars())
        .collect();
    let words = ["[MASK]", "[SEP]", "running", "unaffable", "Ω", "##ing", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"];
    let texts: Vec<String> = (0..3000)
        .map(|_| {
            let len = rng.random_range(0..60);
            let mut s = String::new();
            for _ in 0..len {
                if rng.random_bool(0.1) {
                    s.push_str(words[rng.random_range(0..words.len())]);
                } else {
                    s.push(alphabet[rng.random_range(0..alphabet.len())]);
                }
            }
            s
        })
        .collect();
    check_all(&pair(), texts.iter().map(String::as_str));
}

#[test]
fn a_tokenizer_that_is_not_bert_wordpiece_is_a_typed_error() {
    let bad = [
        &b"not json"[..],
        br#"{"model": {"type": "BPE", "vocab": {}}}"#,
        br#"{"normalizer": {"type": "NFC"}, "model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2}}}"#,
        br#"{"pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2}}}"#,
        br#"{"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 1}}}"#,
    ];
    for b in bad {
        let e = WordPiece::from_bytes(b, 256).err().unwrap_or_else(|| panic!("{} must be refused", String::from_utf8_lossy(b)));
        assert_eq!(e.code(), "MODEL_TOKENIZER_INVALID", "{e}");
    }
}
