//! The BM25 analyzer: Unicode words (UAX #29), NFKC + lowercase, CJK character bigrams.
use unicode_segmentation::UnicodeSegmentation;

use super::stem::Language;
use crate::ports::{NormalizationForm, normalize};

/// Version of the BM25 postings (what [`analyze`] makes of which text of a chunk), recorded in
/// a knowledge base's `meta` (`analyzer`; a knowledge base without one is of version 1). Bumped
/// whenever the same chunk analyses to other terms: a knowledge base indexed by another version derives its BM25 postings again from its
/// chunks' text when it is opened or imported (docs/vector-index.md).
///
/// - 1: CJK runs end at punctuation and spaces.
/// - 2: a CJK run goes on across punctuation and spaces.
/// - 3: a chunk's forward summary (written by `enrich`) is indexed with it.
pub const ANALYZER_VERSION: u32 = 3;

/// Whether `c` is written without spaces between words (Han, Hiragana, Katakana); such runs are
/// indexed as overlapping character bigrams (a lone character is kept as a unigram).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// Punctuation that UAX #29 allows inside a word (`don't`, `U.S.`, `3.14`, `1,000`, `a:b`) and
/// that the analyzer splits on, so `amy's` also matches `amy` (after NFKC, full-width forms are
/// ASCII). The underscore is kept (`snake_case` is one term).
fn is_mid_punct(c: char) -> bool {
    (c.is_ascii_punctuation() && c != '_')
        || matches!(
            c,
            '\u{00B7}'
                | '\u{0387}'
                | '\u{05F3}'
                | '\u{05F4}'
                | '\u{2018}'
                | '\u{2019}'
                | '\u{2024}'
                | '\u{2027}'
                | '\u{FE50}'
                | '\u{FE52}'
                | '\u{FE54}'
                | '\u{FE55}'
        )
}

/// Splits `text` into index terms, in order (positions matter for phrase queries).
///
/// Words are UAX #29 word segments, normalised with NFKC and lowercased (so `Ｆｕｌｌ` = `full`),
/// then split at inner punctuation (`amy's` → `amy`, `s`; `3.14` → `3`, `14`); pieces without an
/// alphanumeric character are dropped. Adjacent CJK characters form overlapping
/// bigrams (`自然语言` → `自然`, `然语`, `语言`), the usual trick for unsegmented scripts. A run goes
/// on across punctuation and spaces (`消息：目前` → `消息`, `息目`, `目前`), so text typed without
/// them still matches; a word (letters, digits) ends it. Queries are analysed word by word
/// ([`crate::index::bm25::parse_query`]), so a space typed between two CJK words keeps them apart.
pub fn analyze(text: &str) -> Vec<String> {
    analyze_in(text, None)
}

/// [`analyze`] for text in `lang`: each word's terms (not CJK bigrams) are stemmed with the
/// language's Snowball stemmer ([`Language::stem`]; `running` → `run` in English).
pub fn analyze_in(text: &str, lang: Option<Language>) -> Vec<String> {
    let mut out = Vec::new();
    analyze_each_in(text, lang, |t| out.push(t.to_string()));
    out
}

/// [`analyze`]'s terms, in order, each lent to `each` (no allocation per term: a build indexes
/// millions of them).
pub fn analyze_each(text: &str, each: impl FnMut(&str)) {
    analyze_each_in(text, None, each)
}

/// [`analyze_in`]'s terms, in order, each lent to `each`.
pub fn analyze_each_in(text: &str, lang: Option<Language>, mut each: impl FnMut(&str)) {
    // The CJK run being read: it goes on across punctuation and spaces (`消息：目前` → `消息`,
    // `息目`, `目前`, so text typed without its punctuation or spaces matches); a word ends it.
    let mut run: Vec<char> = Vec::new();
    let mut term = String::new();
    let mut norm = String::new();
    let mut flush = |run: &mut Vec<char>, each: &mut dyn FnMut(&str)| {
        if run.len() == 1 {
            term.clear();
            term.push(run[0]);
            each(&term);
        } else {
            for w in run.windows(2) {
                term.clear();
                term.extend(w);
                each(&term);
            }
        }
        run.clear();
    };
    for word in text.unicode_words() {
        let mut chars = word.chars();
        let first = chars.next();
        if let (Some(c), None) = (first, chars.clone().next())
            && is_cjk(c)
        {
            run.push(c);
            continue;
        }
        if !run.is_empty() {
            flush(&mut run, &mut each);
        }
        if word.chars().any(is_cjk) {
            // A mixed segment (e.g. katakana run): treat each CJK char as part of a run.
            run.extend(word.chars().filter(|c| is_cjk(*c)));
            continue;
        }
        if word.chars().any(char::is_alphanumeric) {
            norm.clear();
            norm.extend(normalize(word, NormalizationForm::Nfkc).chars().flat_map(char::to_lowercase));
            for piece in norm.split(is_mid_punct).filter(|p| p.chars().any(char::is_alphanumeric)) {
                match lang {
                    Some(l) => each(&l.stem(piece)),
                    None => each(piece),
                }
            }
        }
    }
    if !run.is_empty() {
        flush(&mut run, &mut each);
    }
}

#[cfg(test)]
mod tests {
    use super::analyze;

    #[test]
    fn words_lowercase_nfkc() {
        assert_eq!(analyze("Hello, WORLD! Ｆｕｌｌ e-mail 3.14"), ["hello", "world", "full", "e", "mail", "3", "14"]);
        assert_eq!(analyze("Amy’s U.S. snake_case don't"), ["amy", "s", "u", "s", "snake_case", "don", "t"]);
        // The same case runs in the browser, where the NFKC is the browser's (wasm-tests/browser.rs).
        assert_eq!(analyze("Ｆｕｌｌｗｉｄｔｈ ﬁle Café"), ["fullwidth", "file", "café"]);
    }

    #[test]
    fn cjk_bigrams() {
        assert_eq!(analyze("我爱自然语言"), ["我爱", "爱自", "自然", "然语", "语言"]);
        // a run goes on across punctuation and spaces; a word ends it (a lone character stays a
        // unigram)
        assert_eq!(analyze("中，国 abc 字"), ["中国", "abc", "字"]);
        assert_eq!(analyze("16日，中国科学"), ["16", "日中", "中国", "国科", "科学"]);
        assert_eq!(analyze("(记者 张素)记者"), ["记者", "者张", "张素", "素记", "记者"]);
        assert_eq!(analyze("北京大学 典礼"), ["北京", "京大", "大学", "学典", "典礼"]);
        assert_eq!(analyze("报道》 据"), ["报道", "道据"]);
        assert_eq!(analyze("央视网消息：目前，东北"), ["央视", "视网", "网消", "消息", "息目", "目前", "前东", "东北"]);
        assert_eq!(analyze("央视网消息目前"), ["央视", "视网", "网消", "消息", "息目", "目前"]);
        assert_eq!(analyze("报道 8月"), ["报道", "8", "月"]);
        assert_eq!(analyze("東京は日本"), ["東京", "京は", "は日", "日本"]);
    }

    #[test]
    fn words_are_stemmed_in_their_language_and_cjk_is_not() {
        use super::{Language, analyze_in};
        assert_eq!(analyze_in("Reading files, ran RUNNING", Some(Language::English)), ["read", "file", "ran", "run"]);
        assert_eq!(analyze_in("Reading files", None), ["reading", "files"]);
        assert_eq!(analyze_in("les maisons 中国人", Some(Language::French)), ["le", "maison", "中国", "国人"]);
    }

    #[test]
    fn empty_and_punct() {
        assert!(analyze("").is_empty());
        assert!(analyze("!!! ... ---").is_empty());
    }
}
