//! BM25 (Robertson & Zaragoza 2009) over analysed chunk text, with the small query syntax of
//! docs/vector-index.md: `"quoted phrases"`, `-excluded` terms and `term^2` boosts.
//!
//! Score of chunk `d` for query terms `t` with boosts `w_t`:
//! `Σ w_t · idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl))`, with
//! `idf(t) = ln(1 + (N − df + 0.5)/(df + 0.5))` (always positive; the default), or the Okapi
//! `ln((N − df + 0.5)/(df + 0.5))` with negative values floored as rank_bm25 does.
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::collections::HashSet;

use crate::text::{Language, analyze};

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Query {
    /// `(term, boost)` pairs that score (phrase terms included).
    pub terms: Vec<(String, f32)>,
    /// Phrases (analysed term sequences) a hit must contain.
    pub phrases: Vec<Vec<String>>,
    /// Terms a hit must not contain.
    pub excluded: Vec<String>,
    /// `(term, stem)`: a query term and its stem in a language of the knowledge base, where the
    /// two differ ([`Query::with_stems`]); the stem scores and excludes as the term does, and a
    /// phrase's term matches a chunk that holds either.
    pub stems: Vec<(String, String)>,
}

impl Query {
    /// The slots that can hold every phrase: the intersection of the postings (`slots_with`) of
    /// the phrases' distinct terms; `None` when no phrase has a term (nothing to check).
    pub fn phrase_candidates<I: IntoIterator<Item = u32>>(&self, mut slots_with: impl FnMut(&str) -> I) -> Option<HashSet<u32>> {
        let mut terms: Vec<&String> = self.phrases.iter().flatten().collect();
        crate::sort::ascending(&mut terms);
        terms.dedup();
        let mut set: Option<HashSet<u32>> = None;
        for t in terms {
            let mut slots: HashSet<u32> = slots_with(t).into_iter().collect();
            for (_, stem) in self.stems.iter().filter(|(w, _)| w == t) {
                slots.extend(slots_with(stem));
            }
            set = Some(match set {
                None => slots,
                Some(prev) => prev.intersection(&slots).copied().collect(),
            });
        }
        set
    }

    /// The query for a knowledge base whose documents in `langs` are stemmed (their postings hold
    /// stems: [`crate::text::analyze_in`]): each term and excluded word that is not CJK also
    /// stands for its stem in each of `langs` (a word of a document in no language, or in one
    /// without a stemmer, still matches as written). A stem scores with its term's boost, once
    /// however many terms share it.
    pub fn with_stems(mut self, langs: &[Language]) -> Query {
        if langs.is_empty() {
            return self;
        }
        let stems_of = |t: &str| -> Vec<String> {
            if t.chars().any(crate::text::is_cjk) {
                return Vec::new();
            }
            let mut v: Vec<String> = langs.iter().map(|l| l.stem(t)).filter(|s| s != t).map(|s| s.into_owned()).collect();
            crate::sort::ascending(&mut v);
            v.dedup();
            v
        };
        let mut scored: HashSet<String> = self.terms.iter().map(|t| t.0.clone()).collect();
        let mut extra = Vec::new();
        let mut words: Vec<&String> = self.terms.iter().map(|t| &t.0).chain(self.phrases.iter().flatten()).collect();
        crate::sort::ascending(&mut words);
        words.dedup();
        for w in words {
            for s in stems_of(w) {
                self.stems.push((w.clone(), s));
            }
        }
        for (t, boost) in &self.terms {
            for s in stems_of(t) {
                if scored.insert(s.clone()) {
                    extra.push((s, *boost));
                }
            }
        }
        self.terms.extend(extra);
        let excluded: Vec<String> = self.excluded.iter().flat_map(|t| stems_of(t)).collect();
        self.excluded.extend(excluded);
        self
    }

    /// Whether the analysed text `toks` holds every phrase.
    pub fn phrases_in(&self, toks: &[String]) -> bool {
        self.phrases.iter().all(|p| contains_phrase(toks, p))
    }
}

/// Parses the query syntax: `"a phrase"`, `-term`, `-"a phrase"`, `term^2.5`.
/// Operators apply to the analysed form, so `-Foo` excludes `foo`. Malformed operators are read
/// as plain text (an unclosed quote runs to the end; a bad boost is ignored).
pub fn parse_query(q: &str) -> Query {
    let mut out = Query::default();
    let mut rest = q;
    while !rest.is_empty() {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        let negate = rest.starts_with('-') && rest.len() > 1 && !rest[1..].starts_with(char::is_whitespace);
        let body = if negate { &rest[1..] } else { rest };
        if let Some(stripped) = body.strip_prefix('"') {
            let end = stripped.find('"').unwrap_or(stripped.len());
            let phrase = analyze(&stripped[..end]);
            rest = stripped.get(end + 1..).unwrap_or("");
            if negate {
                out.excluded.extend(phrase);
            } else if !phrase.is_empty() {
                for t in &phrase {
                    out.terms.push((t.clone(), 1.0));
                }
                if phrase.len() > 1 {
                    out.phrases.push(phrase);
                }
            }
            continue;
        }
        let end = body.find(char::is_whitespace).unwrap_or(body.len());
        let word = &body[..end];
        rest = &body[end..];
        let (word, boost) = match word.rsplit_once('^') {
            Some((w, b)) => match b.parse::<f32>() {
                Ok(b) if b.is_finite() && b >= 0.0 => (w, b),
                _ => (w, 1.0),
            },
            None => (word, 1.0),
        };
        let terms = analyze(word);
        if negate {
            out.excluded.extend(terms);
        } else {
            for t in terms {
                out.terms.push((t, boost));
            }
        }
    }
    out
}

/// The query as plain text: every analysed word scores with boost 1; no phrases, no exclusions.
pub fn literal_query(q: &str) -> Query {
    Query { terms: analyze(q).into_iter().map(|t| (t, 1.0)).collect(), ..Query::default() }
}

/// The BM25 idf formula, for `N` live chunks of which `df` hold the term.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Bm25Idf {
    /// `ln(1 + (N − df + 0.5)/(df + 0.5))`, always positive (Lucene; Robertson & Zaragoza 2009
    /// with the +1 that keeps very common terms from scoring negatively).
    Plus1,
    /// `ln((N − df + 0.5)/(df + 0.5))`, negative values floored to `epsilon` × mean idf (the
    /// classic Okapi form as `rank_bm25.BM25Okapi` computes it; the eval references use it).
    Okapi,
}

/// BM25 parameters (see [`crate::config::Config`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25Params {
    /// Term-frequency saturation.
    pub k1: f32,
    /// Length normalisation.
    pub b: f32,
    /// The idf formula.
    pub idf: Bm25Idf,
    /// Floor factor for negative Okapi idf.
    pub epsilon: f32,
}

/// Inverted index: term → postings `(slot, tf)`.
#[derive(Debug, Default, Clone)]
pub struct Bm25Index {
    postings: HashMap<String, Vec<(u32, u32)>>,
    lengths: Vec<u32>,
    live: usize,
    total_len: u64,
}

impl Bm25Index {
    /// Adds (or replaces) the chunk in `slot` with its `(term, tf)` list and length. Replacing
    /// does not know the old list, so it drops the slot from every posting list; a caller that
    /// knows it calls [`Bm25Index::remove`] first, which touches only those lists.
    pub fn insert(&mut self, slot: u32, terms: &[(String, u32)], length: u32) {
        if (slot as usize) < self.lengths.len() && self.lengths[slot as usize] > 0 {
            self.postings.retain(|_, p| {
                p.retain(|&(s, _)| s != slot);
                !p.is_empty()
            });
            self.total_len -= self.lengths[slot as usize] as u64;
            self.lengths[slot as usize] = 0;
            self.live -= 1;
        }
        if self.lengths.len() <= slot as usize {
            self.lengths.resize(slot as usize + 1, 0);
        }
        self.lengths[slot as usize] = length.max(1);
        self.live += 1;
        self.total_len += length.max(1) as u64;
        for (t, tf) in terms {
            match self.postings.get_mut(t.as_str()) {
                Some(p) => p.push((slot, *tf)),
                None => {
                    self.postings.insert(t.clone(), vec![(slot, *tf)]);
                }
            }
        }
    }

    /// Removes the chunk in `slot`; `terms` must be the list it was inserted with.
    pub fn remove(&mut self, slot: u32, terms: &[(String, u32)]) {
        let Some(len) = self.lengths.get_mut(slot as usize) else { return };
        if *len == 0 {
            return;
        }
        self.total_len -= *len as u64;
        *len = 0;
        self.live -= 1;
        for (t, _) in terms {
            if let Some(p) = self.postings.get_mut(t) {
                p.retain(|&(s, _)| s != slot);
                if p.is_empty() {
                    self.postings.remove(t);
                }
            }
        }
    }

    /// Distinct terms.
    pub fn terms(&self) -> usize {
        self.postings.len()
    }

    /// Slots containing `term`.
    pub fn slots_with(&self, term: &str) -> impl Iterator<Item = u32> + '_ {
        self.postings.get(term).into_iter().flatten().map(|&(s, _)| s)
    }

    /// Scores every chunk matching at least one query term: `(slot, score)` pairs, each slot
    /// once, in the order first reached (deterministic). Excluded terms and phrases are applied
    /// by the caller (they need chunk text). Term-at-a-time through an [`Accumulator`].
    pub fn score(&self, query: &Query, params: &Bm25Params) -> Vec<(u32, f32)> {
        if self.live == 0 {
            return Vec::new();
        }
        let n = self.live as f32;
        // rank_bm25's floor for negative Okapi idf: epsilon × the mean idf over the vocabulary.
        let floor = match params.idf {
            Bm25Idf::Plus1 => 0.0,
            Bm25Idf::Okapi => {
                let sum: f64 = self.postings.values().map(|v| okapi_idf(n, v.len() as f32) as f64).sum();
                params.epsilon * (sum / self.postings.len().max(1) as f64) as f32
            }
        };
        let mut acc = Accumulator::new(self.lengths.len(), params, self.total_len as f32 / n);
        for (t, w) in query_weights(query) {
            let Some(p) = self.postings.get(t) else { continue };
            let scale = acc.scale(w, params.idf(n, p.len() as f32, floor));
            for &(slot, tf) in p {
                acc.add(slot, tf, self.lengths[slot as usize], scale);
            }
        }
        acc.finish()
    }

    /// The postings `(slot, tf)` of `term`.
    pub fn postings(&self, term: &str) -> &[(u32, u32)] {
        self.postings.get(term).map_or(&[], Vec::as_slice)
    }

    /// The length of the chunk in `slot` (0: none).
    pub fn length(&self, slot: u32) -> u32 {
        self.lengths.get(slot as usize).copied().unwrap_or(0)
    }

    /// Live chunks and the sum of their lengths.
    pub fn totals(&self) -> (usize, u64) {
        (self.live, self.total_len)
    }
}

/// The Okapi idf `ln((N − df + 0.5)/(df + 0.5))` (negative for a term in over half the chunks).
pub fn okapi_idf(n: f32, df: f32) -> f32 {
    ((n - df + 0.5) / (df + 0.5)).ln()
}

impl Bm25Params {
    /// The idf of a term in `df` of `n` chunks; `floor` replaces a negative Okapi idf.
    pub fn idf(&self, n: f32, df: f32, floor: f32) -> f32 {
        match self.idf {
            Bm25Idf::Plus1 => (1.0 + (n - df + 0.5) / (df + 0.5)).ln(),
            Bm25Idf::Okapi => Some(okapi_idf(n, df)).filter(|x| *x >= 0.0).unwrap_or(floor),
        }
    }
}

/// The query's scoring terms with their weights: duplicates merged (boosts add up: a term typed
/// twice counts twice), in the order of first occurrence so the float sums are the same on every
/// run.
pub fn query_weights(query: &Query) -> Vec<(&str, f32)> {
    let mut weights: Vec<(&str, f32)> = Vec::new();
    for (t, w) in &query.terms {
        match weights.iter_mut().find(|(u, _)| *u == t.as_str()) {
            Some(e) => e.1 += w,
            None => weights.push((t.as_str(), *w)),
        }
    }
    weights
}

/// Term-at-a-time BM25 over a dense accumulator (one `f32` per slot, allocated per query), so the
/// cost is one array update per posting: at 120k chunks a `HashMap` accumulator was the whole of
/// BM25's tail latency in wasm. Every BM25 scorer of the crate sums through it.
pub struct Accumulator {
    /// NEG_INFINITY marks a slot no term has reached yet.
    acc: Vec<f32>,
    touched: Vec<u32>,
    k1: f32,
    base: f32,
    norm: f32,
}

impl Accumulator {
    /// An accumulator over `slots` slots, for chunks of mean length `avgdl`.
    pub fn new(slots: usize, params: &Bm25Params, avgdl: f32) -> Self {
        let (k1, b) = (params.k1, params.b);
        Accumulator { acc: vec![f32::NEG_INFINITY; slots], touched: Vec::new(), k1, base: k1 * (1.0 - b), norm: k1 / avgdl * b }
    }
    /// The factor of a term with query weight `w` and idf `idf`.
    pub fn scale(&self, w: f32, idf: f32) -> f32 {
        w * idf * (self.k1 + 1.0)
    }
    /// Adds a term's part for the chunk in `slot` (term frequency `tf`, length `dl`).
    pub fn add(&mut self, slot: u32, tf: u32, dl: u32, scale: f32) {
        let tf = tf as f32;
        let s = scale * tf / (tf + self.base + self.norm * dl as f32);
        let Some(a) = self.acc.get_mut(slot as usize) else { return };
        if *a == f32::NEG_INFINITY {
            self.touched.push(slot);
            *a = 0.0;
        }
        *a += s;
    }
    /// `(slot, score)` of every slot reached, in the order first reached.
    pub fn finish(self) -> Vec<(u32, f32)> {
        let acc = self.acc;
        self.touched.into_iter().map(|s| (s, acc[s as usize])).collect()
    }
}

/// `(term, tf)` pairs (sorted by term) and the length of analysed `text`, its words stemmed in
/// `lang` ([`crate::text::analyze_in`]).
pub fn term_frequencies(text: &str, lang: Option<crate::text::Language>) -> (Vec<(String, u32)>, u32) {
    // Every term into one buffer, then sorted and counted in runs: a string is made per
    // distinct term, not per occurrence, and no map is built (the result is sorted by term).
    let mut all = String::new();
    let mut at: Vec<(usize, usize)> = Vec::new();
    crate::text::analyze_each_in(text, lang, |t| {
        at.push((all.len(), all.len() + t.len()));
        all.push_str(t);
    });
    let term = |&(from, to): &(usize, usize)| &all[from..to];
    crate::sort::by(&mut at, |a, b| term(a).cmp(term(b)));
    let mut v: Vec<(String, u32)> = Vec::new();
    for r in &at {
        match v.last_mut() {
            Some((last, n)) if last == term(r) => *n += 1,
            _ => v.push((term(r).to_string(), 1)),
        }
    }
    (v, at.len() as u32)
}

/// Whether the analysed `tokens` contain `phrase` contiguously.
pub fn contains_phrase(tokens: &[String], phrase: &[String]) -> bool {
    !phrase.is_empty() && tokens.windows(phrase.len()).any(|w| w == phrase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserting_over_an_occupied_slot_drops_its_old_terms() {
        let terms = |t: &[&str]| -> Vec<(String, u32)> { t.iter().map(|w| (w.to_string(), 1)).collect() };
        let mut ix = Bm25Index::default();
        ix.insert(0, &terms(&["kettle", "copper"]), 2);
        ix.insert(1, &terms(&["copper"]), 1);
        ix.insert(0, &terms(&["shed"]), 1);
        assert_eq!(ix.postings("kettle"), &[] as &[(u32, u32)], "a term only the old text had");
        assert_eq!(ix.postings("copper"), &[(1, 1)]);
        assert_eq!(ix.postings("shed"), &[(0, 1)]);
        assert_eq!((ix.terms(), ix.totals()), (2, (2, 2)), "distinct terms, live chunks and total length");
        // Removing with the list it was inserted with, then inserting, is the same.
        ix.remove(0, &terms(&["shed"]));
        ix.insert(0, &terms(&["kettle"]), 1);
        assert_eq!(ix.postings("kettle"), &[(0, 1)]);
        assert_eq!(ix.postings("shed"), &[] as &[(u32, u32)]);
    }

    #[test]
    fn term_frequencies_count_each_distinct_term_once_sorted() {
        let (tf, len) = term_frequencies("b a B, a b 中国中国", None);
        assert_eq!(len, 8);
        let want: Vec<(String, u32)> = [("a", 2), ("b", 3), ("中国", 2), ("国中", 1)].iter().map(|(t, n)| (t.to_string(), *n)).collect();
        assert_eq!(tf, want);
        assert_eq!(term_frequencies("", None), (Vec::new(), 0));
    }

    #[test]
    fn query_syntax() {
        let q = parse_query(r#"rust "web assembly" -java wasm^2 bad^x -"big data""#);
        assert_eq!(
            q.terms,
            vec![("rust".into(), 1.0), ("web".into(), 1.0), ("assembly".into(), 1.0), ("wasm".into(), 2.0), ("bad".into(), 1.0)]
        );
        assert_eq!(q.phrases, vec![vec!["web".to_string(), "assembly".to_string()]]);
        assert_eq!(q.excluded, vec!["java".to_string(), "big".to_string(), "data".to_string()]);
        // stray operators are harmless
        let q = parse_query(r#"- "unclosed phrase"#);
        assert_eq!(q.phrases.len(), 1);
    }

    #[test]
    fn bm25_prefers_rarer_and_denser() {
        let mut ix = Bm25Index::default();
        let docs = ["apple banana", "apple apple apple cherry", "banana cherry date", "elder"];
        for (i, d) in docs.iter().enumerate() {
            let (t, l) = term_frequencies(d, None);
            ix.insert(i as u32, &t, l);
        }
        let p = Bm25Params { k1: 1.2, b: 0.75, idf: Bm25Idf::Plus1, epsilon: 0.25 };
        let s: HashMap<u32, f32> = ix.score(&parse_query("apple"), &p).into_iter().collect();
        assert!(s[&1] > s[&0]);
        assert!(!s.contains_key(&2));
        let (t, _) = term_frequencies(docs[1], None);
        ix.remove(1, &t);
        let s = ix.score(&parse_query("apple"), &p);
        assert_eq!(s.len(), 1);
        assert_eq!(ix.terms(), 5); // apple (still in 0), banana, cherry, date, elder
    }

    /// Scores printed by `rank_bm25.BM25Okapi` (k1 1.5, b 0.75, epsilon 0.25) for the same
    /// whitespace-tokenised corpus; "banana" (df 3 of 5) has a negative idf and takes the floor.
    #[test]
    fn okapi_matches_rank_bm25() {
        let mut ix = Bm25Index::default();
        let docs = ["apple banana apple", "banana cherry", "cherry date elder", "apple", "fig grape banana cherry"];
        for (i, d) in docs.iter().enumerate() {
            let (t, l) = term_frequencies(d, None);
            ix.insert(i as u32, &t, l);
        }
        let p = Bm25Params { k1: 1.5, b: 0.75, idf: Bm25Idf::Okapi, epsilon: 0.25 };
        let expect: [(&str, [f64; 5]); 3] = [
            ("apple", [0.4580250341440595, 0.0, 0.0, 0.4653339442633796, 0.0]),
            ("banana", [0.13554393611168022, 0.1617219495238073, 0.0, 0.0, 0.1166601060032418]),
            ("cherry apple", [0.4580250341440595, 0.1617219495238073, 0.13554393611168022, 0.4653339442633796, 0.1166601060032418]),
        ];
        for (q, want) in expect {
            let got: HashMap<u32, f32> = ix.score(&parse_query(q), &p).into_iter().collect();
            for (slot, w) in want.iter().enumerate() {
                let g = got.get(&(slot as u32)).copied().unwrap_or(0.0) as f64;
                assert!((g - w).abs() < 1e-5, "{q:?} slot {slot}: {g} vs rank_bm25 {w}");
            }
        }
    }
}
