//! The knowledge base as the ask pipeline reads and writes it ([`AskSource`]): a loaded
//! [`Engine`], or a [`LazyEngine`] served from its index segments — searches, the pseudo-graph,
//! the memory entries and the chunks a step names are read as the steps need them, so an `ask`
//! on a large knowledge base opened lazily never loads it whole (docs/ask-pipeline.md), within a
//! scope (a [`SearchFilter`]) too: the scope's documents are read from their records.
use std::collections::HashSet;

use super::{Candidate, KnowledgeBase, Via};
use crate::embed::Embedder;
use crate::engine::{Engine, LazyEngine, SearchOptions};
use crate::error::Result;
use crate::graph::GraphSearch;
use crate::ports::Store;
use crate::schema::{ChunkId, DocumentRecord, MemoryRecord};
use crate::types::{Hit, SearchFilter, SearchMode};

/// What the pipeline ([`super::pipeline::run`]) reads and writes beyond what decomposition
/// ([`KnowledgeBase`]) reads.
#[allow(async_fn_in_trait)] // webrag runs on one thread (a worker, or a CLI's block_on)
pub trait AskSource: KnowledgeBase {
    /// [`Engine::search`].
    async fn search(&mut self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>>;
    /// [`Engine::search_with`] with the query's embedding `qv` given.
    async fn search_with(&mut self, query: &str, qv: &[f32], opts: &SearchOptions) -> Result<Vec<Hit>>;
    /// The embeddings of `texts` (the knowledge base's embedder).
    async fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    /// The graph retriever (PGR) for `query` with the embeddings of its key points, at most `k`
    /// facts; within `scope`, only its documents' facts and the mind maps of their titles.
    async fn graph_search(&mut self, query: &str, vectors: &[&[f32]], k: usize, scope: Option<&SearchFilter>) -> Result<GraphSearch>;
    /// How many memory entries there are.
    async fn memory_len(&mut self) -> Result<usize>;
    /// [`AskStore::memory_matches`](crate::engine::AskStore::memory_matches).
    async fn memory_matches(&mut self, qv: &[f32], tau: f32) -> Result<Vec<(MemoryRecord, f32)>>;
    /// Which of `ids` are stored chunks.
    async fn stored(&mut self, ids: &[ChunkId]) -> Result<HashSet<ChunkId>>;
    /// Whether chunk `id` is stored and its document passes `filter`.
    async fn in_scope(&mut self, id: &str, filter: &SearchFilter) -> Result<bool>;
    /// Every tag of the documents with how many carry it, most common first
    /// ([`crate::types::tag_counts`]).
    async fn tag_counts(&mut self) -> Result<Vec<(String, usize)>>;
    /// [`Enrichment::remember`](crate::engine::Enrichment::remember).
    async fn remember(&mut self, entries: Vec<(String, String, Vec<ChunkId>)>) -> Result<Vec<MemoryRecord>>;
    /// [`Enrichment::keep_trace`](crate::engine::Enrichment::keep_trace).
    async fn keep_trace(&mut self, question: &str, json: String) -> Result<()>;
}

/// The atomic hits for `query` as candidates, one per chunk (its best question), at most `k`.
fn atomic_candidates(hits: Vec<crate::engine::AtomicHit>, k: usize) -> Vec<Candidate> {
    let mut seen = HashSet::new();
    hits.into_iter()
        .filter(|h| seen.insert(h.chunk_id.clone()))
        .take(k)
        .map(|h| Candidate { question: h.question, chunk_id: h.chunk_id, score: h.score, via: Via::Atomic })
        .collect()
}

/// The hits of a literal search as chunk candidates.
fn chunk_candidates(hits: Vec<Hit>) -> Vec<Candidate> {
    hits.into_iter().map(|h| Candidate { question: h.title, chunk_id: h.chunk_id, score: h.score, via: Via::Chunk }).collect()
}

/// `gs` within the documents `passing`: their facts, the mind maps of their titles.
fn scoped_graph(mut gs: GraphSearch, passing: &[DocumentRecord]) -> GraphSearch {
    let ids: HashSet<&str> = passing.iter().map(|d| d.id.as_str()).collect();
    let titles: HashSet<&str> = passing.iter().map(|d| d.title.as_str()).collect();
    gs.hits.retain(|h| ids.contains(h.doc_id.as_str()));
    gs.context.retain(|m| titles.contains(m.topic.as_str()));
    gs
}

/// The engine as the pipeline's knowledge base: atomic questions from its question index (none
/// until [`super::ingest::atomize`] ran), chunks by search (the question read literally).
impl<S: Store, E: Embedder> KnowledgeBase for Engine<S, E> {
    async fn atomic_candidates(&mut self, query: &str, k: usize, delta: f32) -> Result<Vec<Candidate>> {
        if self.ask_store().question_count() == 0 || query.trim().is_empty() {
            return Ok(Vec::new());
        }
        let qv = self.embedder().embed_checked(&[query.trim()]).await?.pop().unwrap_or_default();
        // Several questions of one chunk count once (its best), so ask for more than k.
        Ok(atomic_candidates(self.ask_store().atomic_search(&qv, k * 3, delta), k))
    }

    async fn chunk_candidates(&mut self, query: &str, k: usize, mode: SearchMode) -> Result<Vec<Candidate>> {
        Scoped { kb: self, filter: None }.chunk_candidates(query, k, mode).await
    }

    async fn chunk_text(&mut self, chunk_id: &str) -> Result<Option<(String, String)>> {
        let Some(c) = self.corpus().chunk(chunk_id) else { return Ok(None) };
        let title = self.corpus().document(&c.doc_id).map(|d| d.title.clone()).unwrap_or_default();
        Ok(Some((title, source_text(c))))
    }
}

impl<S: Store, E: Embedder> AskSource for Engine<S, E> {
    async fn search(&mut self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        Engine::search(self, query, opts).await
    }

    async fn search_with(&mut self, query: &str, qv: &[f32], opts: &SearchOptions) -> Result<Vec<Hit>> {
        Engine::search_with(self, query, Some(qv), opts)
    }

    async fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embedder().embed_checked(texts).await
    }

    async fn graph_search(&mut self, query: &str, vectors: &[&[f32]], k: usize, scope: Option<&SearchFilter>) -> Result<GraphSearch> {
        let gs = self.graph().search(query, vectors, k, &self.config().graph);
        let Some(f) = scope else { return Ok(gs) };
        let m = f.matcher();
        let passing: Vec<DocumentRecord> = self.corpus().documents().into_iter().filter(|d| m.passes(d)).collect();
        Ok(scoped_graph(gs, &passing))
    }

    async fn memory_len(&mut self) -> Result<usize> {
        Ok(self.ask_store().memory_len())
    }

    async fn memory_matches(&mut self, qv: &[f32], tau: f32) -> Result<Vec<(MemoryRecord, f32)>> {
        Ok(self.ask_store().memory_matches(qv, tau))
    }

    async fn stored(&mut self, ids: &[ChunkId]) -> Result<HashSet<ChunkId>> {
        Ok(ids.iter().filter(|c| self.corpus().chunk(c).is_some()).cloned().collect())
    }

    async fn in_scope(&mut self, id: &str, filter: &SearchFilter) -> Result<bool> {
        let corpus = self.corpus();
        Ok(corpus.chunk(id).and_then(|c| corpus.document(&c.doc_id)).is_some_and(|d| filter.matches(d)))
    }

    async fn tag_counts(&mut self) -> Result<Vec<(String, usize)>> {
        Ok(crate::types::tag_counts(self.corpus().document_records()))
    }

    async fn remember(&mut self, entries: Vec<(String, String, Vec<ChunkId>)>) -> Result<Vec<MemoryRecord>> {
        self.enrichment().remember(entries).await
    }

    async fn keep_trace(&mut self, question: &str, json: String) -> Result<()> {
        self.enrichment().keep_trace(question, json).await.map(|_| ())
    }
}

/// A lazily opened knowledge base as the pipeline's: read as the steps need it (the atomic
/// questions from the base's question lists and those written since).
impl<S: Store, E: Embedder> KnowledgeBase for LazyEngine<S, E> {
    async fn atomic_candidates(&mut self, query: &str, k: usize, delta: f32) -> Result<Vec<Candidate>> {
        if !self.has_questions()? || query.trim().is_empty() {
            return Ok(Vec::new());
        }
        let qv = self.embedder()?.embed_checked(&[query.trim()]).await?.pop().unwrap_or_default();
        // Several questions of one chunk count once (its best), so ask for more than k.
        Ok(atomic_candidates(self.atomic_search(&qv, k * 3, delta).await?, k))
    }

    async fn chunk_candidates(&mut self, query: &str, k: usize, mode: SearchMode) -> Result<Vec<Candidate>> {
        Scoped { kb: self, filter: None }.chunk_candidates(query, k, mode).await
    }

    async fn chunk_text(&mut self, chunk_id: &str) -> Result<Option<(String, String)>> {
        let mut got = self.chunk_records(&[chunk_id.to_string()]).await?;
        Ok(got.remove(chunk_id).map(|(c, d)| (d.map(|d| d.title).unwrap_or_default(), source_text(&c))))
    }
}

impl<S: Store, E: Embedder> AskSource for LazyEngine<S, E> {
    async fn search(&mut self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        LazyEngine::search(self, query, opts).await
    }

    async fn search_with(&mut self, query: &str, qv: &[f32], opts: &SearchOptions) -> Result<Vec<Hit>> {
        LazyEngine::search_with(self, query, Some(qv), opts).await
    }

    async fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embedder()?.embed_checked(texts).await
    }

    async fn graph_search(&mut self, query: &str, vectors: &[&[f32]], k: usize, scope: Option<&SearchFilter>) -> Result<GraphSearch> {
        let gs = LazyEngine::graph_search(self, query, vectors, k).await?;
        let Some(f) = scope else { return Ok(gs) };
        Ok(scoped_graph(gs, &self.documents_passing(f).await?))
    }

    async fn memory_len(&mut self) -> Result<usize> {
        LazyEngine::memory_len(self).await
    }

    async fn memory_matches(&mut self, qv: &[f32], tau: f32) -> Result<Vec<(MemoryRecord, f32)>> {
        LazyEngine::memory_matches(self, qv, tau).await
    }

    async fn stored(&mut self, ids: &[ChunkId]) -> Result<HashSet<ChunkId>> {
        Ok(self.chunk_records(ids).await?.into_keys().collect())
    }

    async fn in_scope(&mut self, id: &str, filter: &SearchFilter) -> Result<bool> {
        let mut got = self.chunk_records(&[id.to_string()]).await?;
        Ok(got.remove(id).and_then(|(_, d)| d).is_some_and(|d| filter.matches(&d)))
    }

    async fn tag_counts(&mut self) -> Result<Vec<(String, usize)>> {
        Ok(crate::types::tag_counts(&self.documents().await?))
    }

    async fn remember(&mut self, entries: Vec<(String, String, Vec<ChunkId>)>) -> Result<Vec<MemoryRecord>> {
        LazyEngine::remember(self, entries).await
    }

    async fn keep_trace(&mut self, question: &str, json: String) -> Result<()> {
        LazyEngine::keep_trace(self, question, json).await.map(|_| ())
    }
}

/// A knowledge base limited to the documents `filter` passes (`None`: all).
pub struct Scoped<'a, K: AskSource> {
    /// The knowledge base.
    pub kb: &'a mut K,
    /// The documents allowed.
    pub filter: Option<&'a SearchFilter>,
}

impl<K: AskSource> KnowledgeBase for Scoped<'_, K> {
    async fn atomic_candidates(&mut self, query: &str, k: usize, delta: f32) -> Result<Vec<Candidate>> {
        let Some(f) = self.filter else { return self.kb.atomic_candidates(query, k, delta).await };
        // Out-of-scope chunks are dropped, so more are asked for.
        let mut out = Vec::new();
        for c in self.kb.atomic_candidates(query, k * 8, delta).await? {
            if out.len() < k && self.kb.in_scope(&c.chunk_id, f).await? {
                out.push(c);
            }
        }
        Ok(out)
    }

    async fn chunk_candidates(&mut self, query: &str, k: usize, mode: SearchMode) -> Result<Vec<Candidate>> {
        let opts = SearchOptions { literal: true, filter: self.filter.cloned(), ..SearchOptions::new(k, mode) };
        Ok(chunk_candidates(self.kb.search(query, &opts).await?))
    }

    async fn chunk_text(&mut self, chunk_id: &str) -> Result<Option<(String, String)>> {
        self.kb.chunk_text(chunk_id).await
    }
}

/// A chunk as the pipeline's prompts read it: its forward summary (PIKE-RAG §4.2, written by
/// `enrich`), where it has one, before its text, so a chunk that goes on from the one before
/// ("It closed in 1999") carries what it is about into the answer.
pub fn source_text(c: &crate::schema::ChunkRecord) -> String {
    match c.forward_summary.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) => format!("(Before this passage: {s})\n{}", c.text),
        None => c.text.clone(),
    }
}
