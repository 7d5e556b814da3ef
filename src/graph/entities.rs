//! Entity links between topics: title mentions and shared capitalised names.
use std::collections::HashMap;

use unicode_segmentation::UnicodeSegmentation;

pub(super) struct TitleMatcher {
    pub(super) words: WordMatcher,
    pub(super) topics: Vec<Vec<u32>>,
}

/// The words (UAX #29) of a title as one key, as written (case matters: titles are names, and
/// "Time" the magazine is not "time"), a trailing parenthetical ("Lilu (mythology)") dropped;
/// `None` when under 4 characters, without a letter, or longer than [`MAX_TITLE_WORDS`] words
/// (too ambiguous, or too long to be named in a sentence).
pub fn mention_key(title: &str) -> Option<String> {
    let t = title.trim();
    let t = match (t.ends_with(')'), t.rfind(" (")) {
        (true, Some(i)) if i > 0 => &t[..i],
        _ => t,
    };
    let words: Vec<&str> = t.unicode_words().collect();
    let k = words.join("\u{1f}");
    (k.chars().count() >= 4 && k.chars().any(|c| c.is_alphabetic()) && words.len() <= MAX_TITLE_WORDS).then_some(k)
}

/// Proper names in `text`: maximal runs of capitalised words separated only by spaces, with
/// `of` / `the` / `de` / `von` / `van` / `der` / `la` / `du` allowed inside a run
/// ("Church of England"), a leading function word dropped ("The", "In", "He", ...), each run once.
/// A run never crosses punctuation ("Harare, Zimbabwe" is two names). Words are UAX #29 words.
pub fn entity_spans(text: &str) -> Vec<String> {
    const INNER: [&str; 8] = ["of", "the", "de", "von", "van", "der", "la", "du"];
    const LEADING: [&str; 30] = [
        "The", "A", "An", "In", "On", "At", "He", "She", "It", "They", "His", "Her", "Its", "Their", "This", "That", "These", "Those",
        "There", "After", "Before", "During", "When", "While", "As", "By", "For", "From", "With", "Of",
    ];
    let capital = |w: &str| w.chars().next().is_some_and(char::is_uppercase);
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let mut flush = |run: &mut Vec<&str>| {
        while run.last().is_some_and(|w| !capital(w)) {
            run.pop();
        }
        let skip = run.iter().take_while(|w| LEADING.contains(w)).count();
        let words = &run[skip.min(run.len())..];
        if !words.is_empty() && words.iter().map(|w| w.chars().count()).sum::<usize>() >= 3 {
            let key = words.join(" ");
            if !out.contains(&key) {
                out.push(key);
            }
        }
        run.clear();
    };
    let mut prev_end = 0;
    for (at, w) in text.unicode_word_indices() {
        let joined = !run.is_empty() && text[prev_end..at].chars().all(|c| c == ' ');
        prev_end = at + w.len();
        if capital(w) {
            if !joined {
                flush(&mut run);
            }
            run.push(w);
        } else if joined && INNER.contains(&w) {
            run.push(w);
        } else {
            flush(&mut run);
        }
    }
    flush(&mut run);
    out
}

/// Shared-entity neighbours (derived from the fact labels when first needed, dropped when the
/// graph changes; nothing is stored): entity → the facts naming it and how many topics that is.
pub(super) struct EntityIndex {
    /// Per entity: the facts that name it (slots, ascending).
    pub(super) facts: Vec<Vec<u32>>,
    /// Per entity: distinct topics among those facts.
    pub(super) topics: Vec<usize>,
    /// Fact → its entities.
    pub(super) of_fact: HashMap<u32, Vec<u32>>,
}

/// Longest title (in words) that entity links look for.
pub const MAX_TITLE_WORDS: usize = 12;

/// Finds title keys ([`mention_key`]) in text as whole-word sequences: a trie over the keys'
/// words, numbered. A text's words are looked up once each; a match is walked from a word only
/// while the trie goes on, so a text costs about one lookup per word whatever the keys' length
/// (every run of up to [`MAX_TITLE_WORDS`] words, each joined and hashed, cost twelve times
/// that, and site builds run it over every fact for each batch's new titles).
pub(super) struct WordMatcher {
    /// Every word of a key, numbered.
    vocab: HashMap<Box<str>, u32>,
    /// The trie: (node, word number) → node; node 0 is the root.
    next: HashMap<(u32, u32), u32>,
    /// The key that ends at a node: its first index among the keys given.
    ends: HashMap<u32, usize>,
}

impl WordMatcher {
    /// Key `i` of `keys` (words joined by U+001F) is reported as `i` (a repeated key: its first index).
    pub(super) fn new<'a>(keys: impl IntoIterator<Item = &'a str>) -> Self {
        let mut m = WordMatcher { vocab: HashMap::new(), next: HashMap::new(), ends: HashMap::new() };
        let mut nodes = 1u32;
        for (i, k) in keys.into_iter().enumerate() {
            let mut node = 0u32;
            for w in k.split('\u{1f}') {
                let n = m.vocab.len() as u32;
                let w = *m.vocab.entry(w.into()).or_insert(n);
                node = *m.next.entry((node, w)).or_insert_with(|| {
                    nodes += 1;
                    nodes - 1
                });
            }
            m.ends.entry(node).or_insert(i);
        }
        m
    }

    /// Indices of the keys found in `text`, sorted, each once.
    pub(super) fn find(&self, text: &str) -> Vec<usize> {
        let words: Vec<Option<u32>> = text.unicode_words().map(|w| self.vocab.get(w).copied()).collect();
        let mut out = Vec::new();
        for i in 0..words.len() {
            let mut node = 0u32;
            for w in &words[i..] {
                let Some(next) = w.and_then(|w| self.next.get(&(node, w))) else { break };
                node = *next;
                if let Some(&k) = self.ends.get(&node) {
                    out.push(k);
                }
            }
        }
        crate::sort::ascending(&mut out);
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{WordMatcher, entity_spans};
    use unicode_segmentation::UnicodeSegmentation;

    /// Every run of words joined and looked up: what the trie must equal.
    fn brute(keys: &[&str], text: &str) -> Vec<usize> {
        let words: Vec<&str> = text.unicode_words().collect();
        let mut out: Vec<usize> = (0..words.len())
            .flat_map(|i| (i + 1..=words.len()).map(move |j| (i, j)))
            .filter_map(|(i, j)| keys.iter().position(|k| *k == words[i..j].join("\u{1f}")))
            .collect();
        crate::sort::ascending(&mut out);
        out.dedup();
        out
    }

    #[test]
    fn the_word_trie_finds_whole_word_keys_as_every_run_would() {
        let keys = ["New\u{1f}York", "New\u{1f}York\u{1f}City", "York", "New\u{1f}York", "中\u{1f}国\u{1f}银\u{1f}行", "City"];
        let m = WordMatcher::new(keys);
        assert_eq!(m.find("She left New York City for Yorkshire."), vec![0, 1, 2, 5]);
        assert_eq!(m.find("Newark, Yorkshire and the new york"), Vec::<usize>::new());
        assert_eq!(m.find("他在中国银行工作"), vec![4]);
        assert_eq!(m.find(""), Vec::<usize>::new());
        // Random keys and texts over a small vocabulary against the reference (seeded).
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(29);
        let vocab = ["a", "b", "ab", "New", "York", "City", "中", "国"];
        let pick =
            |rng: &mut rand::rngs::SmallRng, n: usize| -> Vec<&str> { (0..n).map(|_| vocab[rng.random_range(0..vocab.len())]).collect() };
        for _ in 0..400 {
            let nk = rng.random_range(1..8);
            let ks: Vec<String> = (0..nk)
                .map(|_| {
                    let n = rng.random_range(1..4);
                    pick(&mut rng, n).join("\u{1f}")
                })
                .collect();
            let refs: Vec<&str> = ks.iter().map(String::as_str).collect();
            let n = rng.random_range(0..20);
            let text = pick(&mut rng, n).join(" ");
            assert_eq!(WordMatcher::new(refs.iter().copied()).find(&text), brute(&refs, &text), "keys {refs:?}, text {text:?}");
        }
    }

    #[test]
    pub(super) fn entity_spans_are_capitalised_runs() {
        assert_eq!(
            entity_spans("The Bubye River is a river in Zimbabwe, near Harare, Zimbabwe. It joins the Limpopo."),
            vec!["Bubye River", "Zimbabwe", "Harare", "Limpopo"]
        );
        assert_eq!(
            entity_spans("He led the Church of England and the Anglican Communion of the"),
            vec!["Church of England", "Anglican Communion"]
        );
        assert_eq!(entity_spans("In 1960 it was published by Wiley-Blackwell."), vec!["Wiley", "Blackwell"]);
        assert!(entity_spans("no names here at all. A b").is_empty());
    }
}
