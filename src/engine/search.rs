//! Search: sparse (BM25), dense, hybrid (RRF) and the graph retriever over the knowledge base.
use std::collections::HashSet;

use crate::embed::Embedder;
use crate::error::Result;
use crate::graph::GraphSearch;
use crate::index::bm25::{self, parse_query};
use crate::index::top_k;
use crate::ports::Store;
use crate::retrieve::{Ranked, hit};
use crate::text::analyze;
use crate::types::*;

use super::Engine;

/// Search options.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SearchOptions {
    /// Hits to return. Default 10; range 1..=1000.
    pub k: usize,
    /// Retriever(s). Default hybrid.
    pub mode: SearchMode,
    /// Read the query as plain text: quotes, `-` and `^` are ordinary characters, so nothing is
    /// filtered or boosted (for natural-language questions). Default false.
    pub literal: bool,
    /// Only documents that pass ([`SearchFilter`]: tags, ids, metadata). Default none.
    pub filter: Option<SearchFilter>,
    /// Chunks (default) or documents: `k` documents, each its best chunk with its next matching
    /// chunks as sections, from the first `fusionDepth` of the ranked list.
    pub group: Grouping,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions { k: Self::K.count(), mode: SearchMode::Hybrid, literal: false, filter: None, group: Grouping::Chunk }
    }
}

impl SearchOptions {
    /// `k`.
    pub const K: crate::options::Range = crate::options::Range::new("k", 10.0, 1.0, 1000.0);
    /// The options as docs/api.md ("Search") and `index.d.ts` (`SearchOptions`) state them.
    pub const DOCS: &[crate::options::Doc] = {
        use crate::options::{Doc, Value};
        &[
            Doc::new("k", Value::Number(Self::K), "hits returned"),
            Doc::new("mode", Value::Other { ts: "SearchMode", default: "`'hybrid'`", accepts: "see below" }, "retrievers"),
            Doc::new(
                "literal",
                Value::Flag(false),
                "read the query as plain text: no phrases, exclusions or boosts (for natural-language questions)",
            ),
            Doc::new(
                "filter",
                Value::Other { ts: "SearchFilter", default: "none", accepts: "`{tags?, docIds?, meta?}`" },
                "only documents with at least one of `tags` (given or automatic; case ignored), among `docIds`, and with every `meta` entry; every retriever is restricted (dense scans the filter's chunks exactly); unknown fields → `INVALID_OPTION`",
            ),
            Doc::new(
                "group",
                Value::Other { ts: "'chunk' | 'document'", default: "`'chunk'`", accepts: "`'chunk'`, `'document'`" },
                "`'document'`: `k` documents, each its best chunk (ranked where it is), its next matching chunks in the first `fusionDepth` (100) of the ranked list as `sections` (at most 2)",
            ),
        ]
    };

    /// `k` hits from `mode`, with the query syntax on.
    pub fn new(k: usize, mode: SearchMode) -> Self {
        SearchOptions { k, mode, ..SearchOptions::default() }
    }

    /// How many of the ranked list to turn into hits: `k`, or with documents grouped the whole
    /// fused depth (a document's chunks may rank anywhere in it).
    pub(super) fn take(&self, depth: usize) -> usize {
        match self.group {
            Grouping::Chunk => self.k,
            Grouping::Document => depth.max(self.k),
        }
    }

    /// `hits` as the caller asked: unchanged, or grouped by document.
    pub(super) fn grouped(&self, hits: Vec<Hit>) -> Vec<Hit> {
        match self.group {
            Grouping::Chunk => hits,
            Grouping::Document => crate::retrieve::group_by_document(hits, self.k),
        }
    }

    /// The filter, when it has a condition.
    pub fn scope(&self) -> Option<&SearchFilter> {
        self.filter.as_ref().filter(|f| !f.is_empty())
    }
}

impl<S: Store, E: Embedder> Engine<S, E> {
    /// Embeds the query (for dense or hybrid mode) and searches. See [`Engine::search_with`].
    pub async fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        let qv = query_vector(&self.embedder, query, opts).await?;
        self.search_with(query, qv.as_deref(), opts)
    }

    /// Searches with a precomputed query embedding (`None`: BM25 only). Excluded terms (`-term`)
    /// and phrases filter every retriever's list (unless `opts.literal`); hybrid fuses BM25 and
    /// dense with RRF. The steps: parse the query, decide which chunks pass (exclusions, phrases,
    /// the filter), rank with each retriever the mode uses ([`Engine::lists`]), fuse, build hits.
    ///
    /// Errors: [`InputError::InvalidOption`] when `k` is 0 or over 1000.
    pub fn search_with(&self, query: &str, qv: Option<&[f32]>, opts: &SearchOptions) -> Result<Vec<Hit>> {
        check_k(opts.k)?;
        let q = if opts.literal { bm25::literal_query(query) } else { parse_query(query) };
        let depth = self.config.fusion_depth.max(opts.k);
        let excluded: HashSet<u32> = q.excluded.iter().flat_map(|t| self.bm25.slots_with(t)).collect();
        // Chunks holding every phrase term (postings intersection): only these can contain the
        // phrases, so only these are re-analysed for the contiguity check.
        let phrase_candidates = q.phrase_candidates(|t| self.bm25.slots_with(t).collect::<Vec<_>>());
        // The filter's documents, and the slots of their chunks (scanned exactly by the dense
        // retriever: a filter can leave too few of the approximate neighbours).
        let allowed: Option<HashSet<&str>> =
            opts.scope().map(|f| self.corpus.docs.values().filter(|d| f.matches(d)).map(|d| d.id.as_str()).collect());
        let allowed_slots: Option<Vec<u32>> = allowed.as_ref().map(|docs| {
            docs.iter().flat_map(|d| self.corpus.doc_chunks.get(*d).into_iter().flatten()).filter_map(|c| self.slots.get(c)).collect()
        });
        let chunk = |slot: u32| self.slots.id(slot).and_then(|id| self.corpus.chunks.get(id));
        let passes = |slot: u32| -> bool {
            if excluded.contains(&slot)
                || allowed.as_ref().is_some_and(|docs| !chunk(slot).is_some_and(|c| docs.contains(c.doc_id.as_str())))
            {
                return false;
            }
            let Some(cands) = &phrase_candidates else { return true };
            cands.contains(&slot) && chunk(slot).is_some_and(|c| q.phrases_in(&analyze(&c.text)))
        };
        let filtering = phrase_candidates.is_some() || !excluded.is_empty();
        let lists = self.lists(query, &q, qv, opts.mode, &Passing { passes: &passes, filtering, slots: allowed_slots.as_deref() }, depth);
        let (ranked, mut scores) = lists.fuse(opts.mode, self.config.rrf_k, &self.config.fusion_weights, &self.config.graph_cascade);
        let terms: HashSet<String> = q.terms.iter().map(|t| t.0.clone()).collect();
        let mut hits = Vec::with_capacity(opts.k);
        for (slot, score) in ranked.into_iter().take(opts.take(depth)) {
            let Some(c) = chunk(slot) else { continue };
            hits.push(hit(c, self.corpus.docs.get(&c.doc_id), score, scores.remove(&slot).unwrap_or_default(), &terms));
        }
        Ok(opts.grouped(hits))
    }

    /// Each list `mode` uses, at most `depth` long, of the chunks that pass: BM25 (when the query
    /// has terms), dense, the graph retriever's and the atomic questions' (with a query vector).
    fn lists(&self, query: &str, q: &bm25::Query, qv: Option<&[f32]>, mode: SearchMode, pass: &Passing<'_>, depth: usize) -> Ranked {
        let mut lists = Ranked::default();
        if mode.uses_bm25() && !q.terms.is_empty() {
            let scores = self.bm25.score(q, &self.config.bm25());
            lists.bm25 = top_k(scores.into_iter().filter(|(s, _)| (pass.passes)(*s)), depth);
        }
        let Some(v) = qv.filter(|v| v.len() == self.vectors.dim()) else { return lists };
        if mode.uses_dense() {
            lists.dense = match pass.slots {
                Some(slots) => top_k(
                    slots
                        .iter()
                        .filter(|s| (pass.passes)(**s))
                        .filter_map(|&s| Some((s, crate::embed::vecmath::dot(self.vectors.get(s)?, v)))),
                    depth,
                ),
                None => {
                    let raw = self.vectors.search(v, if pass.filtering { depth * 4 } else { depth });
                    raw.into_iter().filter(|(s, _)| (pass.passes)(*s)).take(depth).collect()
                }
            };
        }
        if mode.uses_graph() {
            let gs = self.graph.search(query, &[v], depth, &self.config.graph);
            let cands = graph_candidates(&gs, |h| self.slots.get(&h.chunk_id), pass.passes);
            lists.set_graph(cands.into_iter().take(depth).collect());
        }
        // Atomic questions (path (b)): each chunk ranked by its best question, once the knowledge
        // base is atomized.
        if mode.uses_atomic() && !self.ask.qslots.is_empty() && v.len() == self.ask.qvectors.dim() {
            let mut seen = HashSet::new();
            lists.atomic = self
                .ask
                .qvectors
                .search(v, depth * 3)
                .into_iter()
                .filter_map(|(s, score)| Some((self.slots.get(&self.ask.qslots.id(s)?.chunk)?, score)))
                .filter(|(s, _)| seen.insert(*s) && (pass.passes)(*s))
                .take(depth)
                .collect();
        }
        lists
    }
}

/// Which chunks a search may return, as its retrievers see it.
struct Passing<'a> {
    /// Whether a slot passes the exclusions, the phrases and the filter.
    passes: &'a dyn Fn(u32) -> bool,
    /// Whether exclusions or phrases may drop candidates (approximate lists fetch more).
    filtering: bool,
    /// With a filter: the slots of its documents' chunks (dense scans them exactly).
    slots: Option<&'a [u32]>,
}

/// The graph retriever's hits as slots (`slot_of`), each chunk once (at its first fact), those
/// that pass `keep`, in order, each flagged by whether it came from PGR's selected rows.
pub(super) fn graph_candidates(
    gs: &GraphSearch,
    slot_of: impl Fn(&crate::graph::GraphHit) -> Option<u32>,
    keep: impl Fn(u32) -> bool,
) -> Vec<(u32, f32, bool)> {
    let mut seen = HashSet::new();
    gs.hits
        .iter()
        .enumerate()
        .filter_map(|(i, h)| slot_of(h).map(|s| (s, h.score, i < gs.selected)))
        .filter(|(s, _, _)| seen.insert(*s) && keep(*s))
        .collect()
}

impl<S: Store, E: Embedder> Engine<S, E> {
    /// The graph retriever alone, with its context (the selected fact paths as mind maps) and
    /// its explain data (candidate topics, anchors, row scores). `qv` is the query embedding.
    pub fn graph_search(&self, query: &str, qv: &[f32], k: usize) -> GraphSearch {
        self.graph.search(query, &[qv], k, &self.config.graph)
    }
}

/// The query's embedding when `opts.mode` needs one (not for BM25, nor for an empty query).
pub(super) async fn query_vector<E: Embedder>(embedder: &E, query: &str, opts: &SearchOptions) -> Result<Option<Vec<f32>>> {
    let dense_text = if opts.literal { query.trim().to_string() } else { dense_query_text(query) };
    Ok(match opts.mode {
        SearchMode::Bm25 => None,
        _ if dense_text.trim().is_empty() => None,
        _ => embedder.embed_checked(&[dense_text.as_str()]).await?.into_iter().next(),
    })
}

/// Checks `k`: 1..=1000.
///
/// Errors: [`InputError::InvalidOption`].
pub(super) fn check_k(k: usize) -> Result<()> {
    Ok(SearchOptions::K.check("", k as f64)?)
}

/// The query text the dense retriever embeds: operators stripped, excluded terms dropped.
pub fn dense_query_text(query: &str) -> String {
    let q = bm25::parse_query(query);
    if q.excluded.is_empty() && !query.contains(['"', '^']) {
        return query.trim().to_string();
    }
    q.terms.iter().map(|t| t.0.as_str()).collect::<Vec<_>>().join(" ")
}
