//! Stemming for the BM25 analyzer: the Snowball stemmers (rust-stemmers, the 18 languages it
//! generates from snowballstem.org's algorithms) by language, from a page's BCP 47 language tag
//! (`<html lang>`).
//!
//! Which builds carry the stemmers ([`STEMS`]): native ones and the site builder (feature
//! `stem`), and the stemmer modules (src/web/stem_module.rs, one per language), built from this
//! same code so that a query's terms are the page's. The page's engine builds stem through the
//! platform instead ([`crate::ports::platform_stem`]: the stemmer module of the language, which
//! the worker loads), so a note's words are stemmed as a site build stems a page's.
use std::borrow::Cow;

use crate::types::primary_subtag;

/// Whether this build carries the stemmers: natively and with feature `stem`. Without them
/// [`Language::stem`] asks the platform ([`crate::ports::platform_stem`]), which may have none
/// for a language ([`Language::available`]).
pub const STEMS: bool = cfg!(any(not(target_arch = "wasm32"), feature = "stem"));

/// Words longer than this many bytes are not stemmed (by the writer and the reader alike: a
/// query word's terms never depend on a limit of one side), so a term costs the stemmer a
/// bounded time.
pub const MAX_STEM_BYTES: usize = 64;

/// A language with a Snowball stemmer. Its tag ([`Language::tag`]) is the ISO 639-1 code, as a
/// page's `<html lang>` primary subtag writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum Language {
    Arabic,
    Danish,
    Dutch,
    English,
    Finnish,
    French,
    German,
    Greek,
    Hungarian,
    Italian,
    Norwegian,
    Portuguese,
    Romanian,
    Russian,
    Spanish,
    Swedish,
    Tamil,
    Turkish,
}

impl Language {
    /// Every language with a stemmer, in tag order of their names.
    pub const ALL: [Language; 18] = [
        Language::Arabic,
        Language::Danish,
        Language::Dutch,
        Language::English,
        Language::Finnish,
        Language::French,
        Language::German,
        Language::Greek,
        Language::Hungarian,
        Language::Italian,
        Language::Norwegian,
        Language::Portuguese,
        Language::Romanian,
        Language::Russian,
        Language::Spanish,
        Language::Swedish,
        Language::Tamil,
        Language::Turkish,
    ];

    /// The language of a BCP 47 tag (`en`, `en-GB`, `pt_BR`, `NB`): its primary subtag, case
    /// ignored; `nb` and `nn` are Norwegian. `None` for a language without a stemmer (`zh`, `ja`,
    /// `pl`), and for anything that is not a tag.
    pub fn from_tag(tag: &str) -> Option<Language> {
        let primary = primary_subtag(tag)?;
        Language::ALL.into_iter().find(|l| l.tag() == primary || (*l == Language::Norwegian && matches!(primary.as_str(), "nb" | "nn")))
    }

    /// The ISO 639-1 code: `en`, `fr`, `no` (Norwegian: Bokmål and Nynorsk share a stemmer).
    pub const fn tag(self) -> &'static str {
        match self {
            Language::Arabic => "ar",
            Language::Danish => "da",
            Language::Dutch => "nl",
            Language::English => "en",
            Language::Finnish => "fi",
            Language::French => "fr",
            Language::German => "de",
            Language::Greek => "el",
            Language::Hungarian => "hu",
            Language::Italian => "it",
            Language::Norwegian => "no",
            Language::Portuguese => "pt",
            Language::Romanian => "ro",
            Language::Russian => "ru",
            Language::Spanish => "es",
            Language::Swedish => "sv",
            Language::Tamil => "ta",
            Language::Turkish => "tr",
        }
    }

    /// Whether this build can stem in the language: always where it carries the stemmers
    /// ([`STEMS`]), else when the platform has its stemmer module loaded.
    pub fn available(self) -> bool {
        STEMS || self.on_platform()
    }

    #[cfg(any(not(target_arch = "wasm32"), feature = "stem"))]
    fn on_platform(self) -> bool {
        false
    }

    #[cfg(not(any(not(target_arch = "wasm32"), feature = "stem")))]
    fn on_platform(self) -> bool {
        crate::ports::platform_stem(self.tag(), "a").is_some()
    }

    /// The stem of `word`, a lowercased analyzer term (Snowball's algorithm for the language,
    /// snowballstem.org). A word over [`MAX_STEM_BYTES`] is returned as it is, and so is every
    /// word where the stemmer is not [`Language::available`].
    pub fn stem(self, word: &str) -> Cow<'_, str> {
        if word.len() > MAX_STEM_BYTES {
            return Cow::Borrowed(word);
        }
        self.snowball(word)
    }

    #[cfg(any(not(target_arch = "wasm32"), feature = "stem"))]
    fn snowball(self, word: &str) -> Cow<'_, str> {
        use rust_stemmers::{Algorithm, Stemmer};
        let algorithm = match self {
            Language::Arabic => Algorithm::Arabic,
            Language::Danish => Algorithm::Danish,
            Language::Dutch => Algorithm::Dutch,
            Language::English => Algorithm::English,
            Language::Finnish => Algorithm::Finnish,
            Language::French => Algorithm::French,
            Language::German => Algorithm::German,
            Language::Greek => Algorithm::Greek,
            Language::Hungarian => Algorithm::Hungarian,
            Language::Italian => Algorithm::Italian,
            Language::Norwegian => Algorithm::Norwegian,
            Language::Portuguese => Algorithm::Portuguese,
            Language::Romanian => Algorithm::Romanian,
            Language::Russian => Algorithm::Russian,
            Language::Spanish => Algorithm::Spanish,
            Language::Swedish => Algorithm::Swedish,
            Language::Tamil => Algorithm::Tamil,
            Language::Turkish => Algorithm::Turkish,
        };
        // A stemmer never makes an empty term of a word (the analyzer drops empty ones).
        let stem = Stemmer::create(algorithm).stem(word);
        if stem.is_empty() { Cow::Borrowed(word) } else { stem }
    }

    #[cfg(not(any(not(target_arch = "wasm32"), feature = "stem")))]
    fn snowball(self, word: &str) -> Cow<'_, str> {
        match crate::ports::platform_stem(self.tag(), word) {
            Some(stem) if !stem.is_empty() => Cow::Owned(stem),
            _ => Cow::Borrowed(word),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_languages_by_their_primary_subtag() {
        assert_eq!(Language::from_tag("en"), Some(Language::English));
        assert_eq!(Language::from_tag(" EN-gb "), Some(Language::English));
        assert_eq!(Language::from_tag("pt_BR"), Some(Language::Portuguese));
        assert_eq!(Language::from_tag("nb-NO"), Some(Language::Norwegian));
        assert_eq!(Language::from_tag("nn"), Some(Language::Norwegian));
        assert_eq!(Language::from_tag("zh-Hans"), None, "no stemmer");
        assert_eq!(Language::from_tag("english"), None, "a name, not a tag");
        assert_eq!(Language::from_tag(""), None);
        assert_eq!(Language::from_tag("e"), None);
        assert_eq!(primary_subtag("zh-Hans-CN").as_deref(), Some("zh"));
        assert_eq!(primary_subtag("x1"), None);
        assert_eq!(primary_subtag("-en"), None);
        for l in Language::ALL {
            assert_eq!(Language::from_tag(l.tag()), Some(l));
        }
    }

    #[test]
    fn snowball_stems_each_language() {
        let cases = [
            (Language::English, "running", "run"),
            (Language::English, "files", "file"),
            (Language::French, "continuellement", "continuel"),
            (Language::German, "häuser", "haus"),
            (Language::Spanish, "corriendo", "corr"),
            (Language::Russian, "книги", "книг"),
            (Language::Dutch, "lichamelijk", "licham"),
        ];
        for (l, word, stem) in cases {
            assert_eq!(l.stem(word), stem, "{l:?} {word}");
        }
        // Too long to stem: as it is.
        let long = "running".repeat(10);
        assert_eq!(Language::English.stem(&long), long.as_str());
    }

    #[test]
    fn no_input_panics_or_empties_a_term() {
        let words = ["", "a", "'", "ſ", "ﬀ", "İ", "123", "a\u{0301}", "ŉ", "𝔞𝔟", "\u{10FFFF}", "ßßß", "ее", "ــــ"];
        for l in Language::ALL {
            for w in words {
                let s = l.stem(w);
                assert!(w.is_empty() || !s.is_empty(), "{l:?} {w:?}");
            }
        }
    }
}
