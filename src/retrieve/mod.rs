//! Retrieval glue: reciprocal-rank fusion of ranked lists ([`rrf`]), the fusion of one search's
//! lists by mode with each hit's scores and ranks ([`Ranked::fuse`]), hits ([`hit`]) and
//! query-aware snippets ([`snippet`]). The retrievers themselves are the indexes in
//! [`crate::index`]; the engine runs them over the loaded indexes or the stored segments.
use crate::options::{Doc, Range, Value};
use std::collections::{HashMap, HashSet};

use unicode_segmentation::UnicodeSegmentation;

use crate::schema::{ChunkRecord, DocId, DocumentRecord};
use crate::text::{Language, analyze, analyze_in, is_cjk};
use crate::types::{Hit, Scores, SearchMode, Section, SnippetPart};

/// Weighted reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009, with a weight per
/// list): list `i` contributes `w_i / (k + rank)` (rank from 1) to every item it holds; weights
/// of 1 give plain RRF, a weight of 0 leaves its list out. Returns `(item, score)`, best first;
/// ties keep the order of first appearance.
pub fn rrf(lists: &[(&[u32], f32)], k: f32) -> Vec<(u32, f32)> {
    let mut score: HashMap<u32, f32> = HashMap::new();
    let mut order: Vec<u32> = Vec::new();
    for (list, w) in lists.iter().filter(|(_, w)| *w != 0.0) {
        for (i, &item) in list.iter().enumerate() {
            let e = score.entry(item).or_insert_with(|| {
                order.push(item);
                0.0
            });
            *e += w / (k + (i + 1) as f32);
        }
    }
    let mut v: Vec<(u32, f32)> = order.into_iter().map(|i| (i, score[&i])).collect();
    crate::sort::by(&mut v, |a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    v
}

/// Each retriever's weight in the fused modes (weighted RRF). Default 1 each (plain RRF):
/// `webrag eval --tune-fusion` found no weights that beat it on held-out questions
/// (docs/benchmarks.md, "Fusion weights").
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FusionWeights {
    /// BM25. Range 0..=10.
    pub bm25: f32,
    /// Dense. Range 0..=10.
    pub dense: f32,
    /// The pseudo-graph retriever. Range 0..=10.
    pub graph: f32,
    /// Atomic questions. Range 0..=10.
    pub atomic: f32,
}

impl FusionWeights {
    /// Equal weights: plain RRF.
    pub const EQUAL: FusionWeights = FusionWeights { bm25: 1.0, dense: 1.0, graph: 1.0, atomic: 1.0 };

    /// Each weight's range (the name is the weight's).
    const fn weight(name: &'static str) -> Range {
        Range::new(name, 1.0, 0.0, 10.0)
    }

    /// The options (docs/api.md, "Engine options", `fusionWeights`).
    pub const DOCS: &[Doc] = &[
        Doc::new("bm25", Value::Number(Self::weight("bm25")), "BM25's weight"),
        Doc::new("dense", Value::Number(Self::weight("dense")), "dense retrieval's weight"),
        Doc::new("graph", Value::Number(Self::weight("graph")), "the graph retriever's weight"),
        Doc::new("atomic", Value::Number(Self::weight("atomic")), "the atomic-question list's weight"),
    ];

    /// Checks each weight: finite, 0..=10.
    ///
    /// Errors: [`crate::error::InputError::InvalidOption`] naming the weight.
    pub fn validate(&self) -> Result<(), crate::error::InputError> {
        let pairs = [("bm25", self.bm25), ("dense", self.dense), ("graph", self.graph), ("atomic", self.atomic)];
        pairs.iter().try_for_each(|&(name, w)| Self::weight(name).check("fusionWeights.", w as f64))
    }
}

impl Default for FusionWeights {
    fn default() -> Self {
        FusionWeights::EQUAL
    }
}

/// The second stage of the `hybridGraph` mode: the fused (RRF) list reordered by the graph
/// retriever's evidence. The fused list's first `keep` hits stay where they are; then come the
/// other hits PGR selected (its reverse-DFS fact paths, PG-RAG §4.2) and the graph list's first
/// `candidates` facts after them, in fused order; then everything else, in fused order.
///
/// Why: reciprocal-rank fusion ranks a hit two lists hold above one only the graph list holds,
/// and the graph list's hits are mostly the multi-hop bridges the other lists miss; so the fused
/// list lost to the graph list alone at recall@5 while leading at recall@2.
/// `webrag eval --tune-fusion` reports it on held-out questions (docs/benchmarks.md, "Graph
/// cascade").
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct GraphCascade {
    /// Off: the fused list as reciprocal-rank fusion ranks it. Default on.
    pub enabled: bool,
    /// Fused hits kept ahead of the graph's evidence. Default 2; range 0..=100.
    pub keep: usize,
    /// Graph-list facts PGR did not select that join its selection. Default 1; range 0..=100.
    pub candidates: usize,
}

impl GraphCascade {
    /// The default: on, `keep` 2, `candidates` 1.
    pub const DEFAULT: GraphCascade = GraphCascade { enabled: true, keep: Self::KEEP.count(), candidates: Self::CANDIDATES.count() };
    /// Off.
    pub const OFF: GraphCascade = GraphCascade { enabled: false, ..GraphCascade::DEFAULT };

    /// `graphCascade.keep`.
    pub const KEEP: Range = Range::new("keep", 2.0, 0.0, 100.0);
    /// `graphCascade.candidates`.
    pub const CANDIDATES: Range = Range::new("candidates", 1.0, 0.0, 100.0);
    /// The options (docs/api.md, "Engine options", `graphCascade`).
    pub const DOCS: &[Doc] = &[
        Doc::new("enabled", Value::Flag(true), "off: the fused list as reciprocal-rank fusion ranks it"),
        Doc::new("keep", Value::Number(Self::KEEP), "fused hits kept ahead of the graph's evidence"),
        Doc::new("candidates", Value::Number(Self::CANDIDATES), "graph-list facts PGR did not select that join its selection"),
    ];

    /// Checks `keep` and `candidates`: 0..=100 each.
    ///
    /// Errors: [`crate::error::InputError::InvalidOption`] naming the field.
    pub fn validate(&self) -> Result<(), crate::error::InputError> {
        crate::options::check_all("graphCascade.", &[(Self::KEEP, self.keep as f64), (Self::CANDIDATES, self.candidates as f64)])
    }

    /// Reorders `fused` (best first) by the evidence of `graph` (the graph list, best first,
    /// its first `selected` hits PGR's selection). Items of `graph` that `fused` lacks are
    /// ignored; the result holds exactly the items of `fused`.
    pub fn apply(&self, fused: Vec<(u32, f32)>, graph: &[(u32, f32)], selected: usize) -> Vec<(u32, f32)> {
        if !self.enabled || graph.is_empty() || fused.len() <= self.keep {
            return fused;
        }
        let take = selected.min(graph.len()) + self.candidates;
        let promoted: HashSet<u32> = graph.iter().take(take).map(|x| x.0).collect();
        let (head, tail) = fused.split_at(self.keep);
        let mut out = head.to_vec();
        out.extend(tail.iter().filter(|x| promoted.contains(&x.0)));
        out.extend(tail.iter().filter(|x| !promoted.contains(&x.0)));
        out
    }
}

impl Default for GraphCascade {
    fn default() -> Self {
        GraphCascade::DEFAULT
    }
}

/// The ranked lists of one search, `(slot, score)` best first, by retriever (slots of one
/// numbering: the loaded engine's, or a lazily opened base's ordinals).
#[derive(Debug, Default)]
pub struct Ranked {
    /// BM25.
    pub bm25: Vec<(u32, f32)>,
    /// Dense (cosine over chunk embeddings).
    pub dense: Vec<(u32, f32)>,
    /// The pseudo-graph retriever (PGR).
    pub graph: Vec<(u32, f32)>,
    /// How many of `graph`'s first hits PGR selected (the rest are candidate facts).
    pub graph_selected: usize,
    /// Atomic questions (PIKE-RAG path (b)), each chunk by its best question.
    pub atomic: Vec<(u32, f32)>,
}

impl Ranked {
    /// Sets the graph list from `(slot, score, selected by PGR)`, best first.
    pub fn set_graph(&mut self, list: Vec<(u32, f32, bool)>) {
        self.graph_selected = list.iter().filter(|x| x.2).count();
        self.graph = list.into_iter().map(|(s, v, _)| (s, v)).collect();
    }

    /// The final ranking for `mode` (one list, or their reciprocal-rank fusion with constant
    /// `rrf_k`, each list weighted by `w`; in `HybridGraph` reordered by `cascade`) and every
    /// slot's scores and ranks in each list.
    pub fn fuse(self, mode: SearchMode, rrf_k: f32, w: &FusionWeights, cascade: &GraphCascade) -> (Vec<(u32, f32)>, HashMap<u32, Scores>) {
        use SearchMode::*;
        let mut scores: HashMap<u32, Scores> = HashMap::new();
        for (i, (s, v)) in self.atomic.iter().enumerate() {
            let e = scores.entry(*s).or_default();
            e.atomic = Some(*v);
            e.atomic_rank = Some(i as u32 + 1);
        }
        for (i, (s, v)) in self.bm25.iter().enumerate() {
            let e = scores.entry(*s).or_default();
            e.bm25 = Some(*v);
            e.bm25_rank = Some(i as u32 + 1);
        }
        for (i, (s, v)) in self.dense.iter().enumerate() {
            let e = scores.entry(*s).or_default();
            e.dense = Some(*v);
            e.dense_rank = Some(i as u32 + 1);
        }
        for (i, (s, v)) in self.graph.iter().enumerate() {
            let e = scores.entry(*s).or_default();
            e.graph = Some(*v);
            e.graph_rank = Some(i as u32 + 1);
        }
        let ranked = match mode {
            Bm25 => self.bm25,
            Dense => self.dense,
            Graph => self.graph,
            Atomic if self.atomic.is_empty() => self.dense,
            Hybrid | HybridGraph | Atomic => {
                let ids = |l: &[(u32, f32)]| l.iter().map(|x| x.0).collect::<Vec<u32>>();
                let (a, b, c, d) = (ids(&self.bm25), ids(&self.dense), ids(&self.graph), ids(&self.atomic));
                let mut lists: Vec<(&[u32], f32)> = match mode {
                    Hybrid => vec![(&a, w.bm25), (&b, w.dense)],
                    HybridGraph => vec![(&a, w.bm25), (&b, w.dense), (&c, w.graph)],
                    _ => vec![(&b, w.dense)],
                };
                if !d.is_empty() {
                    lists.push((&d, w.atomic));
                }
                let fused = rrf(&lists, rrf_k);
                for (s, v) in &fused {
                    scores.entry(*s).or_default().rrf = Some(*v);
                }
                if mode == HybridGraph { cascade.apply(fused, &self.graph, self.graph_selected) } else { fused }
            }
        };
        (ranked, scores)
    }
}

/// The stemmer a document's words are analyzed with (BM25 terms): its stored language's, when
/// that language has one in this build ([`Language::from_tag`]).
pub fn stemmer_of(doc: Option<&DocumentRecord>) -> Option<Language> {
    doc.and_then(|d| d.lang.as_deref()).and_then(Language::from_tag)
}

/// A hit on chunk `c` of document `doc`, its snippet around the query `terms` (its words also
/// matched as stemmed in the document's language: [`stemmer_of`]).
pub fn hit(c: &ChunkRecord, doc: Option<&DocumentRecord>, score: f32, scores: Scores, terms: &HashSet<String>) -> Hit {
    Hit {
        doc_id: c.doc_id.clone(),
        chunk_id: c.id.clone(),
        title: doc.map(|d| d.title.clone()).unwrap_or_default(),
        url: doc.and_then(|d| d.url.clone()),
        heading_path: c.heading_path.clone(),
        score,
        scores,
        snippet: snippet(&c.text, terms, 240, stemmer_of(doc)),
        sections: Vec::new(),
    }
}

/// Sections a document-level hit carries at most.
pub const MAX_SECTIONS: usize = 2;

/// Groups ranked chunk hits by document (`Grouping::Document`): a document's first hit stands
/// for it, where it ranks; its next hits (up to [`MAX_SECTIONS`]) become its sections. At most
/// `k` documents.
pub fn group_by_document(hits: Vec<Hit>, k: usize) -> Vec<Hit> {
    let mut out: Vec<Hit> = Vec::new();
    let mut at: HashMap<DocId, usize> = HashMap::new();
    for h in hits {
        match at.get(&h.doc_id) {
            Some(&i) => {
                let d = &mut out[i];
                if d.sections.len() < MAX_SECTIONS {
                    d.sections.push(Section { chunk_id: h.chunk_id, heading_path: h.heading_path, score: h.score, snippet: h.snippet });
                }
            }
            None if out.len() < k => {
                at.insert(h.doc_id.clone(), out.len());
                out.push(h);
            }
            None => {}
        }
    }
    out
}

/// English function words that a snippet does not highlight and an answer's evidence does not
/// count as content (`ask::answer::Evidence`): Lucene's English stop set
/// (`EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`) plus the interrogatives and auxiliaries that open
/// questions, the other forms of `be` and `have`, the third-person pronouns, `from`, `both`,
/// `also` and `than`. Retrieval still scores them (BM25's idf makes them cheap); only
/// highlighting skips them, unless the query has nothing else.
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of", "on", "or", "such",
    "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with", "what", "which", "who", "whom", "how",
    "why", "when", "where", "do", "does", "did", "can", "i", "you", "we", "my", "your", "were", "been", "has", "have", "had", "he", "she",
    "his", "her", "its", "from", "both", "also", "than",
];

/// Whether `term` (an analysed term) is an English function word: snippets leave it
/// unhighlighted, and an answer's evidence does not count it.
pub fn is_function_word(term: &str) -> bool {
    FUNCTION_WORDS.contains(&term)
}

/// A window of about `width` characters of `text` around the first query-term match, split into
/// plain and matching parts. Matching is on analysed terms (so `Rust` matches `rust`); a CJK
/// character matches when it occurs in a query term; a word of a text in `lang` also matches by
/// its stem (a stemmed document's terms: `kettle` matches a query's `kettl`). Function words
/// ([`is_function_word`]) are not highlighted unless the query holds nothing but function words.
pub fn snippet(text: &str, query_terms: &HashSet<String>, width: usize, lang: Option<Language>) -> Vec<SnippetPart> {
    let content: HashSet<String> = query_terms.iter().filter(|t| !is_function_word(t)).cloned().collect();
    let query_terms = if content.is_empty() { query_terms } else { &content };
    let cjk_chars: HashSet<char> = query_terms.iter().flat_map(|t| t.chars()).filter(|c| is_cjk(*c)).collect();
    // Byte ranges of matching words.
    let mut hits: Vec<(usize, usize)> = Vec::new();
    for (start, word) in text.unicode_word_indices() {
        let first = word.chars().next();
        if first.is_some_and(is_cjk) {
            for (i, c) in word.char_indices() {
                if cjk_chars.contains(&c) {
                    hits.push((start + i, start + i + c.len_utf8()));
                }
            }
        } else if analyze(word).iter().any(|t| query_terms.contains(t))
            || lang.is_some_and(|l| analyze_in(word, Some(l)).iter().any(|t| query_terms.contains(t)))
        {
            hits.push((start, start + word.len()));
        }
    }
    // Window: start ~1/4 width before the first hit, on a char boundary.
    let char_idx: Vec<usize> = text.char_indices().map(|(i, _)| i).chain(std::iter::once(text.len())).collect();
    let nchars = char_idx.len() - 1;
    let first_hit_char = hits.first().map(|h| char_idx.partition_point(|&b| b < h.0)).unwrap_or(0);
    let start_c = first_hit_char.saturating_sub(width / 4);
    let end_c = (start_c + width).min(nchars);
    let (a, b) = (char_idx[start_c], char_idx[end_c]);
    let mut parts = Vec::new();
    if start_c > 0 {
        parts.push(SnippetPart { text: "…".into(), hit: false });
    }
    let mut pos = a;
    for &(hs, he) in hits.iter().filter(|h| h.0 >= a && h.1 <= b) {
        if hs > pos {
            parts.push(SnippetPart { text: text[pos..hs].to_string(), hit: false });
        }
        // Merge adjacent hits into one part.
        match parts.last_mut() {
            Some(last) if last.hit && hs == pos => last.text.push_str(&text[hs..he]),
            _ => parts.push(SnippetPart { text: text[hs..he].to_string(), hit: true }),
        }
        pos = he;
    }
    if pos < b {
        parts.push(SnippetPart { text: text[pos..b].to_string(), hit: false });
    }
    if end_c < nchars {
        parts.push(SnippetPart { text: "…".into(), hit: false });
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rrf_fuses() {
        let a = [1, 2, 3];
        let b = [3, 1, 4];
        let f = rrf(&[(&a, 1.0), (&b, 1.0)], 60.0);
        assert_eq!(f[0].0, 1);
        assert_eq!(f[1].0, 3);
        assert_eq!(f.len(), 4);
        assert!((f[0].1 - (1.0 / 61.0 + 1.0 / 62.0)).abs() < 1e-6);
        // A heavier second list puts its first item first; a weight of 0 adds nothing.
        let f = rrf(&[(&a, 1.0), (&b, 3.0)], 60.0);
        assert_eq!(f[0].0, 3);
        assert!((f[0].1 - (1.0 / 63.0 + 3.0 / 61.0)).abs() < 1e-6);
        let f = rrf(&[(&a, 1.0), (&b, 0.0)], 60.0);
        assert_eq!(f.iter().map(|x| x.0).collect::<Vec<_>>(), [1, 2, 3]);
    }

    #[test]
    fn graph_cascade_promotes_the_selection_behind_the_kept_head() {
        let fused: Vec<(u32, f32)> = (1..=8).map(|i| (i, 1.0 / i as f32)).collect();
        // Graph list: 7 and 5 selected by PGR, then candidates 8 and 2, then 9 (not fused).
        let graph = [(7, 0.9), (5, 0.8), (8, -1.5), (2, -1.6), (9, -1.7)];
        let ids = |v: Vec<(u32, f32)>| v.into_iter().map(|x| x.0).collect::<Vec<_>>();
        let c = GraphCascade::DEFAULT;
        assert_eq!(ids(c.apply(fused.clone(), &graph, 2)), [1, 2, 5, 7, 8, 3, 4, 6]);
        // No candidates: the selection alone; keep 0: the selection leads.
        let c0 = GraphCascade { candidates: 0, keep: 0, ..c };
        assert_eq!(ids(c0.apply(fused.clone(), &graph, 2)), [5, 7, 1, 2, 3, 4, 6, 8]);
        // Off, an empty graph list, or a fused list no longer than `keep`: unchanged.
        assert_eq!(GraphCascade::OFF.apply(fused.clone(), &graph, 2), fused);
        assert_eq!(c.apply(fused.clone(), &[], 0), fused);
        assert_eq!(c.apply(fused[..2].to_vec(), &graph, 2), fused[..2].to_vec());
        // The scores travel with their items.
        assert!(c.apply(fused.clone(), &graph, 2).iter().all(|(i, s)| (*s - 1.0 / *i as f32).abs() < 1e-9));
        assert!(GraphCascade { keep: 101, ..c }.validate().is_err());
        assert!(GraphCascade { candidates: 101, ..c }.validate().is_err());
    }

    #[test]
    fn snippet_marks_hits() {
        let q: HashSet<String> = ["rust".to_string(), "语言".to_string()].into();
        let parts = snippet("I like Rust and the 语言 of <b>code</b>.", &q, 200, None);
        let hits: Vec<_> = parts.iter().filter(|p| p.hit).map(|p| p.text.as_str()).collect();
        assert_eq!(hits, vec!["Rust", "语言"]);
        let all: String = parts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(all, "I like Rust and the 语言 of <b>code</b>.");
    }

    #[test]
    fn snippet_skips_stop_words_unless_nothing_else() {
        let q: HashSet<String> = ["what", "is", "the", "borrow", "checker"].map(String::from).into();
        let parts = snippet("What is the borrow checker? It is the part that checks.", &q, 200, None);
        let hits: Vec<_> = parts.iter().filter(|p| p.hit).map(|p| p.text.as_str()).collect();
        assert_eq!(hits, vec!["borrow", "checker"]);
        let only: HashSet<String> = ["the", "who"].map(String::from).into();
        let parts = snippet("The Who played.", &only, 200, None);
        assert_eq!(parts.iter().filter(|p| p.hit).count(), 2, "{parts:?}");
    }
}
