//! Search: sparse (BM25), dense, hybrid (RRF) and the graph retriever over the knowledge base.
use std::collections::{HashMap, HashSet};

use crate::config::Config;
use crate::embed::Embedder;
use crate::error::Result;
use crate::graph::{GraphHit, GraphSearch, PseudoGraph};
use crate::index::bm25::{self, Query};
use crate::ports::Store;
use crate::retrieve::hit;
use crate::schema::*;
use crate::text::analyze;
use crate::types::*;

use super::Engine;
use super::source::{self, GraphSource, IndexSource, Lexical, Postings, Records, SearchOptions, Vectors, in_memory};

impl<S: Store, E: Embedder> Engine<S, E> {
    /// Embeds the query (for dense or hybrid mode) and searches. See [`Engine::search_with`].
    pub async fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        let qv = query_vector(&self.embedder, query, opts).await?;
        self.search_with(query, qv.as_deref(), opts)
    }

    /// Searches with a precomputed query embedding (`None`: BM25 only): `source::search` over
    /// the loaded indexes. Excluded terms (`-term`) and phrases filter every retriever's list
    /// (unless `opts.literal`); hybrid fuses BM25 and dense with RRF.
    ///
    /// Errors: [`crate::error::InputError::InvalidOption`] when `k` is 0 or over 1000.
    pub fn search_with(&self, query: &str, qv: Option<&[f32]>, opts: &SearchOptions) -> Result<Vec<Hit>> {
        in_memory(source::search(self, query, qv, opts))
    }

    /// The chunk record of `slot`.
    fn chunk_at(&self, slot: u32) -> Option<&ChunkRecord> {
        self.slots.id(slot).and_then(|id| self.corpus.chunks.get(id))
    }
}

impl<S: Store, E: Embedder> IndexSource for Engine<S, E> {
    fn config(&self) -> &Config {
        &self.config
    }

    fn languages(&self) -> &[crate::text::Language] {
        &self.languages
    }
}

impl<S: Store, E: Embedder> Postings for Engine<S, E> {
    async fn lexical(&self, q: &Query, score: bool) -> Result<Lexical> {
        let scores = if score { self.bm25.score(q, &self.config.bm25()) } else { Vec::new() };
        Ok(Lexical::new(q, |t| self.bm25.slots_with(t).collect::<Vec<_>>(), scores))
    }
}

impl<S: Store, E: Embedder> Vectors for Engine<S, E> {
    fn dim(&self) -> usize {
        self.vectors.dim()
    }

    async fn nearest(&self, v: &[f32], n: usize) -> Result<Vec<(u32, f32)>> {
        Ok(self.vectors.search(v, n))
    }

    fn exact(&self, v: &[f32], slots: &[u32]) -> Vec<(u32, f32)> {
        slots.iter().filter_map(|&s| Some((s, crate::embed::vecmath::dot(self.vectors.get(s)?, v)))).collect()
    }

    async fn atomic(&self, v: &[f32], n: usize) -> Result<Vec<(u32, f32)>> {
        if self.ask.qslots.is_empty() || v.len() != self.ask.qvectors.dim() {
            return Ok(Vec::new());
        }
        let chunk = |s: u32| self.slots.get(&self.ask.qslots.id(s)?.chunk);
        Ok(self.ask.qvectors.search(v, n).into_iter().filter_map(|(s, score)| Some((chunk(s)?, score))).collect())
    }
}

impl<S: Store, E: Embedder> GraphSource for Engine<S, E> {
    fn pseudo_graph(&self) -> Option<&PseudoGraph> {
        Some(&self.graph)
    }

    fn graph_slot(&self, hit: &GraphHit) -> Option<u32> {
        self.slots.get(&hit.chunk_id)
    }
}

impl<S: Store, E: Embedder> Records for Engine<S, E> {
    fn scope(&self, filter: &SearchFilter) -> Option<Vec<u32>> {
        let m = filter.matcher();
        let docs = self.corpus.docs.values().filter(|d| m.passes(d));
        Some(docs.flat_map(|d| self.corpus.doc_chunks.get(&d.id).into_iter().flatten()).filter_map(|c| self.slots.get(c)).collect())
    }

    async fn holding_phrases(&self, q: &Query, slots: &[u32]) -> Result<HashSet<u32>> {
        Ok(slots.iter().copied().filter(|&s| self.chunk_at(s).is_some_and(|c| q.phrases_in(&analyze(&c.text)))).collect())
    }

    async fn hits(&self, top: &[(u32, f32)], mut scores: HashMap<u32, Scores>, terms: &HashSet<String>) -> Result<Vec<Hit>> {
        Ok(top
            .iter()
            .filter_map(|&(s, score)| {
                let c = self.chunk_at(s)?;
                Some(hit(c, self.corpus.docs.get(&c.doc_id), score, scores.remove(&s).unwrap_or_default(), terms))
            })
            .collect())
    }
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

/// The query text the dense retriever embeds: operators stripped, excluded terms dropped.
pub fn dense_query_text(query: &str) -> String {
    let q = bm25::parse_query(query);
    if q.excluded.is_empty() && !query.contains(['"', '^']) {
        return query.trim().to_string();
    }
    q.terms.iter().map(|t| t.0.as_str()).collect::<Vec<_>>().join(" ")
}
