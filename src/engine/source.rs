//! The index as sources, and the one search over them.
//!
//! A knowledge base answers a search through four reads: its postings (BM25, exclusions,
//! phrases), its chunk vectors (dense, and the atomic questions'), its pseudo-graph and its
//! records (chunk text, documents). [`Postings`], [`Vectors`], [`GraphSource`] and [`Records`]
//! name them; an [`Engine`](super::Engine) implements them over its loaded indexes, the lazily
//! opened base's reader over its stored segments, read on demand, and natively a built
//! static-site snapshot (`native::snapshot_search`, the reference `webrag/static` is checked
//! against). [`search`] parses the query
//! once, asks the source for each list its mode uses, fuses them
//! ([`Ranked::fuse`](crate::retrieve::Ranked::fuse)) and builds the hits: the same steps, so the
//! same results, whichever source answers.
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::task::{Context, Poll, Waker};

use crate::config::Config;
use crate::error::{InputError, Result, StoreError};
use crate::graph::{GraphHit, GraphSearch, PseudoGraph};
use crate::index::bm25::{self, Query, parse_query};
use crate::index::top_k;
use crate::retrieve::Ranked;
use crate::text::Language;
use crate::types::*;

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
                Value::Other { ts: "SearchFilter", default: "none", accepts: "`{tags?, docIds?, meta?, lang?}`" },
                "only documents with at least one of `tags` (given or automatic; case ignored), among `docIds`, with every `meta` entry, and in the language `lang` (a BCP 47 tag, its primary subtag compared) or in none, the query then stemmed in that language only; every retriever is restricted (dense scans the filter's chunks exactly); unknown fields or a `lang` that is not a tag → `INVALID_OPTION`",
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

    /// The languages a query is stemmed in, of the knowledge base's `stemmed`: the filter's
    /// `lang` alone when it names one, else each.
    ///
    /// Errors: [`InputError::InvalidOption`] `filter.lang` for a tag that is not one.
    fn stem_languages(&self, stemmed: &[Language]) -> Result<Vec<Language>> {
        let lang = self.filter.as_ref().map(SearchFilter::language).transpose()?.flatten();
        Ok(match lang {
            None => stemmed.to_vec(),
            Some(tag) => stemmed.iter().copied().filter(|l| Language::from_tag(&tag) == Some(*l)).collect(),
        })
    }
}

/// The graph retriever's hits as slots (`slot_of`), each chunk once (at its first fact), those
/// that pass `keep`, in order, each flagged by whether it came from PGR's selected rows.
fn graph_candidates(
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

/// Checks `k`: 1..=1000.
///
/// Errors: [`InputError::InvalidOption`].
fn check_k(k: usize) -> Result<()> {
    Ok(SearchOptions::K.check("", k as f64)?)
}

/// What a query's terms select among the chunks ([`Postings::lexical`]).
#[derive(Debug, Default)]
pub(crate) struct Lexical {
    /// BM25 of every live chunk holding a query term, `(slot, score)`, each slot once (empty
    /// unless asked for).
    pub scores: Vec<(u32, f32)>,
    /// Chunks holding an excluded term (`-term`).
    pub excluded: HashSet<u32>,
    /// With phrases: the chunks holding every phrase term (only these can hold the phrases).
    pub phrase_candidates: Option<HashSet<u32>>,
}

impl Lexical {
    /// The lexical facts of `q` from `slots_with` (a term's chunks) and, when asked for, the
    /// BM25 scores.
    pub fn new<I: IntoIterator<Item = u32>>(q: &Query, mut slots_with: impl FnMut(&str) -> I, scores: Vec<(u32, f32)>) -> Self {
        let excluded = q.excluded.iter().flat_map(|t| slots_with(t)).collect();
        let phrase_candidates = q.phrase_candidates(slots_with);
        Lexical { scores, excluded, phrase_candidates }
    }
}

/// A knowledge base's postings.
pub(crate) trait Postings {
    /// For `q`'s terms, excluded terms and phrase terms: [`Lexical`], with the BM25 scores when
    /// `score` (Robertson–Spärck Jones BM25, the knowledge base's `bm25K1`/`bm25B`/idf).
    async fn lexical(&self, q: &Query, score: bool) -> Result<Lexical>;
}

/// A knowledge base's vectors: its chunks' and, once atomized, its atomic questions'.
pub(crate) trait Vectors {
    /// The embedding dimension (a query vector of another is ignored).
    fn dim(&self) -> usize;
    /// About the `n` chunks nearest `v` by cosine, best first (approximate: HNSW or IVF).
    async fn nearest(&self, v: &[f32], n: usize) -> Result<Vec<(u32, f32)>>;
    /// The cosine of `v` with each of `slots` that has a vector (exact).
    fn exact(&self, v: &[f32], slots: &[u32]) -> Vec<(u32, f32)>;
    /// About the `n` atomic questions nearest `v`, best first, as the chunk each answers
    /// (PIKE-RAG path (b)); empty when there are none.
    async fn atomic(&self, v: &[f32], n: usize) -> Result<Vec<(u32, f32)>>;
}

/// A knowledge base's pseudo-graph.
pub(crate) trait GraphSource {
    /// The pseudo-graph, when this source has it read (`None`: no graph list).
    fn pseudo_graph(&self) -> Option<&PseudoGraph>;
    /// The slot of a graph hit's chunk, when it is live.
    fn graph_slot(&self, hit: &GraphHit) -> Option<u32>;
}

/// A knowledge base's records.
pub(crate) trait Records {
    /// The slots of the chunks of the documents `filter` passes, or `None` when this source
    /// cannot tell (it lacks the documents' tags and metadata).
    fn scope(&self, filter: &SearchFilter) -> Option<Vec<u32>>;
    /// Those of `slots` whose chunk text holds every phrase of `q`.
    async fn holding_phrases(&self, q: &Query, slots: &[u32]) -> Result<HashSet<u32>>;
    /// The hits of `top` (slot, fused score), in order, with their per-retriever `scores` and
    /// snippets around `terms` (a slot whose chunk is gone is left out).
    async fn hits(&self, top: &[(u32, f32)], scores: HashMap<u32, Scores>, terms: &HashSet<String>) -> Result<Vec<Hit>>;
}

/// A knowledge base as the search reads it.
pub(crate) trait IndexSource: Postings + Vectors + GraphSource + Records {
    /// Its configuration (fusion, BM25 and graph parameters).
    fn config(&self) -> &Config;
    /// The languages its documents' words are stemmed in (a query's words are searched as
    /// written and as their stems in each: [`Query::with_stems`]).
    fn languages(&self) -> &[Language];
}

/// The ranked slots of a search, before they become hits.
pub(crate) struct Ranking {
    /// `(slot, fused score)`, best first: `k`, or the fused depth when documents are grouped.
    pub top: Vec<(u32, f32)>,
    /// Each ranked slot's per-retriever scores and ranks.
    pub scores: HashMap<u32, Scores>,
    /// The query's terms (for snippets).
    pub terms: HashSet<String>,
}

/// Searches `src` with the query embedding `qv` (`None`: BM25 only). Excluded terms (`-term`)
/// and phrases filter every retriever's list (unless `opts.literal`); hybrid fuses BM25 and dense
/// with RRF. The steps: [`rank`], then the source's [`Records::hits`], grouped as `opts` asks.
///
/// Errors: [`InputError::InvalidOption`] when `k` is 0 or over 1000, or a filter is given to a
/// source that cannot apply it; the source's read errors.
pub(crate) async fn search<Src: IndexSource>(src: &Src, query: &str, qv: Option<&[f32]>, opts: &SearchOptions) -> Result<Vec<Hit>> {
    let Ranking { top, scores, terms } = rank(src, query, qv, opts).await?;
    Ok(opts.grouped(src.hits(&top, scores, &terms).await?))
}

/// The ranking of [`search`]: parse the query, decide which chunks pass (exclusions, phrases,
/// the filter), rank with each retriever the mode uses ([`lists`]), fuse.
///
/// Errors: those of [`search`].
pub(crate) async fn rank<Src: IndexSource>(src: &Src, query: &str, qv: Option<&[f32]>, opts: &SearchOptions) -> Result<Ranking> {
    check_k(opts.k)?;
    let cfg = src.config();
    let q = if opts.literal { bm25::literal_query(query) } else { parse_query(query) }.with_stems(&opts.stem_languages(src.languages())?);
    let depth = cfg.fusion_depth.max(opts.k);
    let lexical = src.lexical(&q, opts.mode.uses_bm25() && !q.terms.is_empty()).await?;
    // The filter's chunks (scanned exactly by the dense retriever: a filter can leave too few of
    // the approximate neighbours).
    let scope = match opts.scope() {
        None => None,
        Some(f) => Some(src.scope(f).ok_or_else(|| InputError::InvalidOption {
            name: "filter".into(),
            reason: "this knowledge base cannot filter before it is loaded".into(),
        })?),
    };
    let lists = lists(src, query, &q, qv, opts.mode, &Passing::new(lexical, scope.as_deref()), depth).await?;
    let (ranked, scores) = lists.fuse(opts.mode, cfg.rrf_k, &cfg.fusion_weights, &cfg.graph_cascade);
    Ok(Ranking { top: ranked.into_iter().take(opts.take(depth)).collect(), scores, terms: q.terms.into_iter().map(|t| t.0).collect() })
}

/// Which chunks a search may return, as its retrievers see it.
struct Passing<'a> {
    lexical: Lexical,
    /// With a filter: the slots of its documents' chunks.
    scope: Option<&'a [u32]>,
    scope_set: Option<HashSet<u32>>,
}

impl<'a> Passing<'a> {
    fn new(lexical: Lexical, scope: Option<&'a [u32]>) -> Self {
        Passing { scope_set: scope.map(|s| s.iter().copied().collect()), lexical, scope }
    }

    /// Whether `slot` passes the exclusions, the phrases' terms and the filter (the phrases
    /// themselves are checked on the text, [`keep_phrases`]).
    fn passes(&self, slot: u32) -> bool {
        !self.lexical.excluded.contains(&slot)
            && self.lexical.phrase_candidates.as_ref().is_none_or(|c| c.contains(&slot))
            && self.scope_set.as_ref().is_none_or(|s| s.contains(&slot))
    }

    /// Whether exclusions or phrases may drop candidates (an approximate list fetches more).
    fn filtering(&self) -> bool {
        self.lexical.phrase_candidates.is_some() || !self.lexical.excluded.is_empty()
    }
}

/// Each list `mode` uses, at most `depth` long, of the chunks that pass: BM25 (when the query has
/// terms), dense, the graph retriever's and the atomic questions' (with a query vector).
async fn lists<Src: IndexSource>(
    src: &Src,
    query: &str,
    q: &Query,
    qv: Option<&[f32]>,
    mode: SearchMode,
    pass: &Passing<'_>,
    depth: usize,
) -> Result<Ranked> {
    let mut lists = Ranked::default();
    let passing = |l: Vec<(u32, f32)>| l.into_iter().filter(|(s, _)| pass.passes(*s));
    if mode.uses_bm25() && !q.terms.is_empty() {
        let scores = pass.lexical.scores.iter().copied().filter(|(s, _)| pass.passes(*s));
        // With phrases, every candidate in order until `depth` hold them; else the best `depth`.
        let n = if q.phrases.is_empty() { depth } else { pass.lexical.scores.len() };
        lists.bm25 = keep_phrases(src, top_k(scores, n), q, depth).await?;
    }
    let Some(v) = qv.filter(|v| v.len() == src.dim()) else { return Ok(lists) };
    if mode.uses_dense() {
        let cands = match pass.scope {
            Some(slots) => {
                let exact: Vec<(u32, f32)> = passing(src.exact(v, slots)).collect();
                let n = exact.len();
                top_k(exact.into_iter(), n)
            }
            None => passing(src.nearest(v, if pass.filtering() { depth * 4 } else { depth }).await?).collect(),
        };
        lists.dense = keep_phrases(src, cands, q, depth).await?;
    }
    if let (true, Some(g)) = (mode.uses_graph(), src.pseudo_graph()) {
        let gs = g.search(query, &[v], depth, &src.config().graph);
        let cands = graph_candidates(&gs, |h| src.graph_slot(h), |s| pass.passes(s));
        let selected: HashSet<u32> = cands.iter().filter(|c| c.2).map(|c| c.0).collect();
        let kept = keep_phrases(src, cands.into_iter().map(|(s, v, _)| (s, v)).collect(), q, depth).await?;
        lists.set_graph(kept.into_iter().map(|(s, v)| (s, v, selected.contains(&s))).collect());
    }
    if mode.uses_atomic() {
        // Each chunk ranked by its best question.
        let mut seen = HashSet::new();
        let cands = src.atomic(v, depth * 3).await?.into_iter().filter(|(s, _)| seen.insert(*s) && pass.passes(*s)).collect();
        lists.atomic = keep_phrases(src, cands, q, depth).await?;
    }
    Ok(lists)
}

/// The first `depth` of `cands` (in order) whose text holds every phrase of `q`, read a batch of
/// `depth` candidates at a time.
async fn keep_phrases<Src: Records>(src: &Src, cands: Vec<(u32, f32)>, q: &Query, depth: usize) -> Result<Vec<(u32, f32)>> {
    if q.phrases.is_empty() {
        return Ok(cands.into_iter().take(depth).collect());
    }
    let mut kept = Vec::with_capacity(depth);
    for batch in cands.chunks(depth.max(1)) {
        let slots: Vec<u32> = batch.iter().map(|c| c.0).collect();
        let holding = src.holding_phrases(q, &slots).await?;
        kept.extend(batch.iter().filter(|c| holding.contains(&c.0)).take(depth - kept.len()));
        if kept.len() == depth {
            break;
        }
    }
    Ok(kept)
}

/// Runs a future that never waits (a loaded source's reads are all in memory) to its end.
///
/// Errors: [`StoreError::Backend`] if it would wait (a source read that is not in memory).
pub(crate) fn in_memory<T>(f: impl Future<Output = Result<T>>) -> Result<T> {
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(r) => r,
        Poll::Pending => Err(StoreError::Backend { reason: "an in-memory search waited for a read".into() }.into()),
    }
}
