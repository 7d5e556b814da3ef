//! Opening a knowledge base lazily (docs/vector-index.md, "Index segments"): when the store holds
//! a base of index segments ([`crate::index::segment`]) that describes it, [`LazyEngine::open`]
//! reads the `meta` records, the base's head and the delta's chunks — not the ~3 records per
//! chunk a full [`Engine::open`] reads — and serves searches in every mode from the segments,
//! reading a query's postings blocks and IVF lists on demand (and keeping them), and the
//! pseudo-graph alone for the graph modes. Writes, the document list and single chunks read
//! only the records they need ([`write`]); a filtered search reads its documents' records and
//! its chunks' vectors ([`filtered`]). The first operation that needs more (an export, an
//! upkeep step) loads the whole knowledge base with [`Engine::open`], once.
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

mod ask;
mod filtered;
mod write;

use crate::config::Config;
use crate::embed::Embedder;
use crate::error::{Result, StoreError};
use crate::index::bm25::{Accumulator, Bm25Index, Query, query_weights};
use crate::index::segment::{
    self, Delta, NPROBE, PostingsBlock, QueryCodes, SEGMENT_FORMAT, SegmentHead, SegmentKey, VecBlock, block_postings,
};
use crate::ports::{Clock, Collection, GENERATION_KEY, Record, Store, generation_in, generation_of};
use crate::schema::SCHEMA_VERSION;
use crate::schema::*;
use crate::types::*;

use super::Engine;
use super::open::{check_meta, stored_analyzer};
use super::search::query_vector;
use super::source::{self, SearchOptions};
use crate::text::ANALYZER_VERSION;

/// A knowledge base opened lazily: served from its index segments until something needs it
/// whole, then an [`Engine`].
pub struct LazyEngine<S: Store, E: Embedder> {
    state: State<S, E>,
}

enum State<S: Store, E: Embedder> {
    Reading(Box<Reader<S, E>>),
    Loaded(Box<Engine<S, E>>),
    /// A load failed (the store and the embedder went with it).
    Failed,
}

impl<S: Store, E: Embedder> LazyEngine<S, E> {
    /// Opens a knowledge base: from its index segments when the store holds a valid base of the
    /// current schema for this model (and `lazyOpenChunks` is not 0), else with [`Engine::open`].
    ///
    /// Errors: those of [`Engine::open`].
    pub async fn open(store: S, embedder: E, config: Config, clock: Box<dyn Clock>) -> Result<Self> {
        config.validate()?;
        let reader = if config.lazy_open_chunks == 0 { None } else { Reader::read(&store, &embedder).await? };
        let state = match reader {
            Some(parts) => State::Reading(Box::new(Reader {
                store,
                embedder,
                config,
                clock,
                parts,
                cache: Cache::default(),
                graph: None,
                memory: None,
            })),
            None => State::Loaded(Box::new(Engine::open(store, embedder, config, clock).await?)),
        };
        Ok(LazyEngine { state })
    }

    /// The store's generation the view is of ([`Engine::generation`]).
    pub fn generation(&self) -> u64 {
        match &self.state {
            State::Reading(r) => r.parts.generation,
            State::Loaded(e) => e.generation(),
            State::Failed => 0,
        }
    }

    /// Reads the store's generation; when another engine over the same store (another tab)
    /// committed since this view was read, opens the knowledge base again ([`LazyEngine::open`]:
    /// lazily where it can, keeping the options) and returns `true`. Writes call this first, so
    /// they plan against what is stored; a write that still meets a newer generation fails with
    /// [`StoreError::Conflict`] and writes nothing.
    ///
    /// Errors: those of [`LazyEngine::open`] (the engine is then unusable:
    /// [`StoreError::Backend`]); after a failed load, [`StoreError::Backend`].
    pub async fn refresh(&mut self) -> Result<bool> {
        let held = self.generation();
        let stored = match &self.state {
            State::Reading(r) => r.store.get(Collection::Meta, GENERATION_KEY).await?,
            State::Loaded(e) => e.store().get(Collection::Meta, GENERATION_KEY).await?,
            State::Failed => return Err(failed()),
        };
        if generation_in(stored.as_ref()) == held {
            return Ok(false);
        }
        let (store, embedder, config, clock) = match std::mem::replace(&mut self.state, State::Failed) {
            State::Reading(r) => {
                let Reader { store, embedder, config, clock, .. } = *r;
                (store, embedder, config, clock)
            }
            State::Loaded(e) => e.into_parts(),
            State::Failed => return Err(failed()),
        };
        *self = LazyEngine::open(store, embedder, config, clock).await?;
        Ok(true)
    }

    /// Whether searches are still served from the index segments (nothing else is loaded).
    pub fn is_lazy(&self) -> bool {
        matches!(self.state, State::Reading(_))
    }

    /// The whole knowledge base, loaded now if it was not yet ([`Engine::open`]).
    ///
    /// Errors: those of [`Engine::open`]; after a failed load, [`StoreError::Backend`].
    pub async fn engine(&mut self) -> Result<&mut Engine<S, E>> {
        if let State::Reading(_) = self.state {
            let State::Reading(r) = std::mem::replace(&mut self.state, State::Failed) else { unreachable!("matched above") };
            let Reader { store, embedder, config, clock, .. } = *r;
            self.state = State::Loaded(Box::new(Engine::open(store, embedder, config, clock).await?));
        }
        match &mut self.state {
            State::Loaded(e) => Ok(e),
            _ => Err(failed()),
        }
    }

    /// The whole knowledge base to write to: [`LazyEngine::refresh`], then
    /// [`LazyEngine::engine`].
    ///
    /// Errors: those of both.
    pub async fn for_write(&mut self) -> Result<&mut Engine<S, E>> {
        self.refresh().await?;
        self.engine().await
    }

    /// The store (none after a failed load).
    pub fn store(&self) -> Option<&S> {
        match &self.state {
            State::Reading(r) => Some(&r.store),
            State::Loaded(e) => Some(e.store()),
            State::Failed => None,
        }
    }

    /// The loaded engine, if loaded.
    pub fn loaded(&self) -> Option<&Engine<S, E>> {
        match &self.state {
            State::Loaded(e) => Some(e),
            _ => None,
        }
    }

    /// The embedder.
    ///
    /// Errors: [`StoreError::Backend`] after a failed load.
    pub fn embedder(&self) -> Result<&E> {
        match &self.state {
            State::Reading(r) => Ok(&r.embedder),
            State::Loaded(e) => Ok(e.embedder()),
            State::Failed => Err(failed()),
        }
    }

    /// [`Engine::search`]: from the segments while lazy (every mode; the graph modes read the
    /// pseudo-graph first, [`LazyEngine::graph`]). A search with a filter loads the knowledge
    /// base (the filter needs every document's tags and metadata). A segment that turns out
    /// missing or unreadable (`STORE_CORRUPT`) loads the knowledge base and searches it there
    /// (the next [`Engine::maintain`] writes a new base).
    pub async fn search(&mut self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        let qv = match &self.state {
            State::Reading(r) => query_vector(&r.embedder, query, opts).await?,
            State::Loaded(e) => query_vector(e.embedder(), query, opts).await?,
            State::Failed => return Err(failed()),
        };
        self.search_with(query, qv.as_deref(), opts).await
    }

    /// [`LazyEngine::search`] with the query embedding given (`None`: BM25 only), as
    /// [`Engine::search_with`].
    ///
    /// Errors: those of [`LazyEngine::search`].
    pub async fn search_with(&mut self, query: &str, qv: Option<&[f32]>, opts: &SearchOptions) -> Result<Vec<Hit>> {
        if let State::Reading(r) = &mut self.state {
            if matches!(opts.mode, SearchMode::Graph | SearchMode::HybridGraph) {
                r.graph().await?;
            }
            let done = match r.view(opts.scope(), qv.is_some() && opts.mode.uses_dense()).await {
                Ok(view) => source::search(&view, query, qv, opts).await,
                Err(e) => Err(e),
            };
            match done {
                Err(crate::error::Error::Store(StoreError::Corrupt { .. })) => {}
                done => return done,
            }
        }
        self.engine().await?.search_with(query, qv, opts)
    }

    /// The pseudo-graph; while lazy, read alone (`Reader::graph`: its nodes, their vectors and
    /// its edges, no chunk).
    ///
    /// Errors: store errors; after a failed load, [`StoreError::Backend`].
    pub async fn graph(&mut self) -> Result<&crate::graph::PseudoGraph> {
        match &mut self.state {
            State::Reading(r) => r.graph().await,
            State::Loaded(e) => Ok(e.graph()),
            State::Failed => Err(failed()),
        }
    }

    /// Embeds `query` and runs the graph retriever alone ([`Engine::graph_search`]): `k` facts
    /// with the mind-map context and the explain data (anchors, row scores, candidate topics);
    /// while lazy, over the pseudo-graph read alone.
    ///
    /// Errors: the embedder's; store errors; after a failed load, [`StoreError::Backend`].
    pub async fn explain_graph(&mut self, query: &str, k: usize) -> Result<crate::graph::GraphSearch> {
        let text = query.trim();
        if text.is_empty() {
            return Ok(crate::graph::GraphSearch::default());
        }
        let qv = self.embedder()?.embed_checked(&[text]).await?.pop().unwrap_or_default();
        self.graph_search(text, &[qv.as_slice()], k).await
    }

    /// [`Corpus::documents`](super::Corpus::documents) (newest first); while lazy, read from the store's `documents`
    /// records alone.
    ///
    /// Errors: store errors; after a failed load, [`StoreError::Backend`].
    pub async fn documents(&mut self) -> Result<Vec<DocumentRecord>> {
        let State::Reading(r) = &self.state else { return Ok(self.engine().await?.corpus().documents()) };
        Ok(super::newest_first(r.store.scan(Collection::Documents).await?.documents))
    }

    /// The stored documents `filter` passes; while lazy, read from their records (by key when
    /// the filter names documents, else every document record).
    ///
    /// Errors: store errors; after a failed load, [`StoreError::Backend`].
    pub(crate) async fn documents_passing(&mut self, filter: &SearchFilter) -> Result<Vec<DocumentRecord>> {
        match &self.state {
            State::Reading(r) => r.passing_documents(filter).await,
            State::Loaded(e) => {
                let m = filter.matcher();
                Ok(e.corpus().documents().into_iter().filter(|d| m.passes(d)).collect())
            }
            State::Failed => Err(failed()),
        }
    }

    /// [`Corpus::chunk`](crate::engine::Corpus::chunk); while lazy, read from the store.
    ///
    /// Errors: store errors; after a failed load, [`StoreError::Backend`].
    pub async fn chunk(&mut self, id: &str) -> Result<Option<ChunkRecord>> {
        let State::Reading(r) = &self.state else { return Ok(self.engine().await?.corpus().chunk(id).cloned()) };
        Ok(match r.store.get(Collection::Chunks, id).await? {
            Some(Record::Chunk(c)) => Some(c),
            _ => None,
        })
    }

    /// The chunk records `ids` that are stored, each with its document's record; while lazy, read
    /// from the store (two reads).
    ///
    /// Errors: store errors; after a failed load, [`StoreError::Backend`].
    pub async fn chunk_records(&mut self, ids: &[ChunkId]) -> Result<HashMap<ChunkId, (ChunkRecord, Option<DocumentRecord>)>> {
        match &self.state {
            State::Reading(r) => r.chunk_records(ids).await,
            State::Loaded(e) => Ok(ids
                .iter()
                .filter_map(|id| {
                    let c = e.corpus().chunk(id)?;
                    Some((id.clone(), (c.clone(), e.corpus().document(&c.doc_id).cloned())))
                })
                .collect()),
            State::Failed => Err(failed()),
        }
    }

    /// [`crate::graph::PseudoGraph::search`] of `query` with its embeddings `vectors`, at most `k`
    /// facts, with the configured graph parameters; while lazy, over the pseudo-graph read alone.
    ///
    /// Errors: store errors; after a failed load, [`StoreError::Backend`].
    pub async fn graph_search(&mut self, query: &str, vectors: &[&[f32]], k: usize) -> Result<crate::graph::GraphSearch> {
        let params = match &self.state {
            State::Reading(r) => r.config.graph,
            State::Loaded(e) => e.config().graph,
            State::Failed => return Err(failed()),
        };
        Ok(self.graph().await?.search(query, vectors, k, &params))
    }

    /// [`AskStore::memory_matches`](crate::engine::AskStore::memory_matches); while lazy, over the memory entries read alone.
    ///
    /// Errors: store errors; after a failed load, [`StoreError::Backend`].
    pub async fn memory_matches(&mut self, qv: &[f32], tau: f32) -> Result<Vec<(MemoryRecord, f32)>> {
        match &mut self.state {
            State::Reading(r) => Ok(super::ask_store::memory_matches(r.memory().await?, qv, tau)),
            State::Loaded(e) => Ok(e.ask_store().memory_matches(qv, tau)),
            State::Failed => Err(failed()),
        }
    }

    /// How many memory entries there are ([`AskStore::memory_len`](crate::engine::AskStore::memory_len)); while lazy, read alone.
    ///
    /// Errors: store errors; after a failed load, [`StoreError::Backend`].
    pub async fn memory_len(&mut self) -> Result<usize> {
        match &mut self.state {
            State::Reading(r) => Ok(r.memory().await?.len()),
            State::Loaded(e) => Ok(e.ask_store().memory_len()),
            State::Failed => Err(failed()),
        }
    }

    /// Every memory entry, oldest first ([`super::AskStore::memory`]); while lazy, read alone.
    ///
    /// Errors: store errors; after a failed load, [`StoreError::Backend`].
    pub async fn memory(&mut self) -> Result<Vec<MemoryRecord>> {
        match &mut self.state {
            State::Reading(r) => Ok(r.memory().await?.iter().map(|(m, _)| m.clone()).collect()),
            State::Loaded(e) => Ok(e.ask_store().memory()),
            State::Failed => Err(failed()),
        }
    }

    /// Kept traces, oldest first ([`super::AskStore::traces`]); while lazy, read from the store.
    ///
    /// Errors: store errors; after a failed load, [`StoreError::Backend`].
    pub async fn traces(&mut self) -> Result<Vec<TraceRecord>> {
        match &self.state {
            State::Reading(r) => {
                let mut traces = r.store.scan(Collection::Traces).await?.traces;
                crate::sort::by(&mut traces, |a, b| {
                    a.created_at.partial_cmp(&b.created_at).unwrap_or(std::cmp::Ordering::Equal).then(a.id.cmp(&b.id))
                });
                Ok(traces)
            }
            State::Loaded(e) => Ok(e.ask_store().traces().to_vec()),
            State::Failed => Err(failed()),
        }
    }

    /// Deletes every memory entry ([`Enrichment::forget`](crate::engine::Enrichment::forget);
    /// [`LazyEngine::refresh`] first); while lazy, the `memory` records alone, in one commit.
    /// Returns how many.
    ///
    /// Errors: store errors ([`StoreError::Conflict`]: nothing deleted).
    pub async fn forget(&mut self) -> Result<usize> {
        self.refresh().await?;
        match &mut self.state {
            State::Reading(r) => {
                let ids: Vec<String> = r.store.scan(Collection::Memory).await?.memory.into_iter().map(|m| m.id).collect();
                r.delete_all(Collection::Memory, ids).await
            }
            State::Loaded(e) => e.enrichment().forget().await,
            State::Failed => Err(failed()),
        }
    }

    /// Deletes every kept trace ([`Enrichment::clear_traces`](crate::engine::Enrichment::clear_traces);
    /// [`LazyEngine::refresh`] first); while lazy, the `traces` records alone, in one commit.
    /// Returns how many.
    ///
    /// Errors: store errors ([`StoreError::Conflict`]: nothing deleted).
    pub async fn clear_traces(&mut self) -> Result<usize> {
        self.refresh().await?;
        match &mut self.state {
            State::Reading(r) => {
                let ids: Vec<String> = r.store.scan(Collection::Traces).await?.traces.into_iter().map(|t| t.id).collect();
                r.delete_all(Collection::Traces, ids).await
            }
            State::Loaded(e) => e.enrichment().clear_traces().await,
            State::Failed => Err(failed()),
        }
    }

    /// The atomic questions of a chunk (`None`: not atomized); while lazy, its `questions` record
    /// alone.
    ///
    /// Errors: store errors; after a failed load, [`StoreError::Backend`].
    pub async fn questions(&mut self, chunk_id: &str) -> Result<Option<Vec<String>>> {
        match &self.state {
            State::Reading(r) => Ok(match r.store.get(Collection::Questions, chunk_id).await? {
                Some(Record::Question(q)) => Some(q.questions),
                _ => None,
            }),
            State::Loaded(e) => Ok(e.ask_store().questions(chunk_id).map(<[String]>::to_vec)),
            State::Failed => Err(failed()),
        }
    }

    /// [`AskStore::atomic_search`](crate::engine::AskStore::atomic_search). A lazily opened knowledge base has no atomic questions (the
    /// first questions stored delete its base of index segments), so none while lazy.
    ///
    /// Errors: after a failed load, [`StoreError::Backend`].
    pub fn atomic_search(&self, qv: &[f32], k: usize, delta: f32) -> Result<Vec<super::AtomicHit>> {
        match &self.state {
            State::Reading(_) => Ok(Vec::new()),
            State::Loaded(e) => Ok(e.ask_store().atomic_search(qv, k, delta)),
            State::Failed => Err(failed()),
        }
    }

    /// [`Enrichment::remember`](crate::engine::Enrichment::remember) ([`LazyEngine::refresh`] first); while lazy, without loading the
    /// knowledge base.
    ///
    /// Errors: those of [`Enrichment::remember`](crate::engine::Enrichment::remember).
    pub async fn remember(&mut self, entries: Vec<(String, String, Vec<ChunkId>)>) -> Result<Vec<MemoryRecord>> {
        self.refresh().await?;
        match &mut self.state {
            State::Reading(r) => r.remember(entries).await,
            State::Loaded(e) => e.enrichment().remember(entries).await,
            State::Failed => Err(failed()),
        }
    }

    /// [`Enrichment::keep_trace`](crate::engine::Enrichment::keep_trace) ([`LazyEngine::refresh`] first); while lazy, without loading the
    /// knowledge base.
    ///
    /// Errors: store errors.
    pub async fn keep_trace(&mut self, question: &str, json: String) -> Result<TraceRecord> {
        self.refresh().await?;
        match &mut self.state {
            State::Reading(r) => r.keep_trace(question, json).await,
            State::Loaded(e) => e.enrichment().keep_trace(question, json).await,
            State::Failed => Err(failed()),
        }
    }

    /// Texts per embedding call at ingest ([`Engine::embed_batch`]).
    ///
    /// Errors: [`StoreError::Backend`] after a failed load.
    pub fn embed_batch(&self) -> Result<usize> {
        match &self.state {
            State::Reading(r) => Ok(super::embed_batch(&r.config, &r.embedder)),
            State::Loaded(e) => Ok(e.embed_batch()),
            State::Failed => Err(failed()),
        }
    }

    /// [`Engine::add`]: while lazy, without loading the knowledge base — the documents' stored
    /// records, their chunks' atomic questions, the memory entries and the pseudo-graph are read,
    /// the same records committed, and the delta of the index segments extended.
    ///
    /// Errors: those of [`Engine::add`].
    pub async fn add(&mut self, docs: Vec<DocumentInput>, progress: &mut dyn crate::ports::Progress) -> Result<AddReport> {
        let plan = self.plan_add(docs, progress).await?;
        let vectors = super::embed_add(self.embedder()?, self.embed_batch()?, &plan, progress).await?;
        self.commit_add(plan, vectors, progress).await
    }

    /// Step 1 of [`LazyEngine::add`] ([`LazyEngine::refresh`] first): the batch planned against
    /// what is stored.
    ///
    /// Errors: those of [`Engine::add`]'s planning; store errors.
    pub(crate) async fn plan_add(
        &mut self,
        docs: Vec<DocumentInput>,
        progress: &mut dyn crate::ports::Progress,
    ) -> Result<super::write::AddPlan> {
        self.refresh().await?;
        match &self.state {
            State::Reading(r) => r.plan_add(docs, progress).await,
            State::Loaded(e) => e.plan_add(docs, progress),
            State::Failed => Err(failed()),
        }
    }

    /// Step 3 of [`LazyEngine::add`] ([`LazyEngine::refresh`] first).
    ///
    /// Errors: [`StoreError::Conflict`] when the store changed since the plan (nothing is
    /// written: plan again); store errors.
    pub(crate) async fn commit_add(
        &mut self,
        plan: super::write::AddPlan,
        vectors: super::write::AddVectors,
        progress: &mut dyn crate::ports::Progress,
    ) -> Result<AddReport> {
        self.refresh().await?;
        match &mut self.state {
            State::Reading(r) => r.commit_add(plan, vectors, progress).await,
            State::Loaded(e) => e.commit_add(plan, vectors, progress).await,
            State::Failed => Err(failed()),
        }
    }

    /// [`Engine::remove`] ([`LazyEngine::refresh`] first); while lazy, without loading the
    /// knowledge base.
    ///
    /// Errors: store errors ([`StoreError::Conflict`]: nothing written).
    pub async fn remove(&mut self, ids: &[String]) -> Result<RemoveReport> {
        self.refresh().await?;
        match &mut self.state {
            State::Reading(r) => r.remove(ids).await,
            State::Loaded(e) => e.remove(ids).await,
            State::Failed => Err(failed()),
        }
    }

    /// [`Engine::stats`]; while lazy, the segments' counts (`lazy: true`; `ann` and `memory`
    /// are those of a loaded knowledge base only, 0 here).
    ///
    /// Errors: [`StoreError::Backend`] after a failed load.
    pub fn stats(&self) -> Result<Stats> {
        match &self.state {
            State::Reading(r) => Ok(r.stats()),
            State::Loaded(e) => Ok(e.stats()),
            State::Failed => Err(failed()),
        }
    }

    /// [`Engine::clear`], without loading what it deletes: while lazy, the store is cleared and
    /// the (now empty) knowledge base opened whole.
    ///
    /// Errors: store errors; after a failed load, [`StoreError::Backend`].
    pub async fn clear(&mut self) -> Result<()> {
        if let State::Reading(r) = &self.state {
            super::clear_store(&r.store, r.parts.generation).await?;
        }
        self.engine().await?.clear().await
    }

    /// [`Engine::maintain`]; while lazy there is nothing to do unless `force` (which loads).
    pub async fn maintain(&mut self, force: bool) -> Result<Option<super::SealReport>> {
        if self.is_lazy() && !force {
            return Ok(None);
        }
        self.for_write().await?.maintain(force).await
    }
}

fn failed() -> crate::error::Error {
    StoreError::Backend { reason: "the knowledge base failed to load; open it again".into() }.into()
}

/// What a lazy open read, kept in step with the writes made lazily since ([`write`]).
struct Parts {
    /// The store's generation the view is of.
    generation: u64,
    head: SegmentHead,
    /// Removed since the base, by base ordinal.
    dead: Vec<bool>,
    delta: Delta,
    /// The delta's chunks (in `delta.added` order): postings and vectors.
    delta_chunks: Vec<(PostingRecord, Vec<f32>)>,
    /// BM25 over the delta's chunks, by position in `delta.added`.
    delta_bm25: Bm25Index,
    /// Live chunks and the sum of their lengths.
    live: usize,
    total_len: u64,
    /// Whether the head lists each document's chunks together, in document order (as
    /// [`segment::build_base`] writes it): a document's chunks are then found by binary search.
    grouped: bool,
}

impl Parts {
    /// `Parts` of `head` with `delta` (`None` when a tombstone names no base chunk).
    fn new(generation: u64, head: SegmentHead, delta: Delta, delta_chunks: Vec<(PostingRecord, Vec<f32>)>) -> Option<Parts> {
        let grouped = head.doc_of.is_sorted() && head.documents.is_sorted();
        let mut parts = Parts {
            generation,
            head,
            dead: Vec::new(),
            delta: Delta::default(),
            delta_chunks: Vec::new(),
            delta_bm25: Bm25Index::default(),
            live: 0,
            total_len: 0,
            grouped,
        };
        parts.set_delta(delta, delta_chunks)?;
        Some(parts)
    }

    /// Takes `delta` with its chunks (`None`, and nothing changed, when a tombstone names no
    /// base chunk).
    fn set_delta(&mut self, delta: Delta, delta_chunks: Vec<(PostingRecord, Vec<f32>)>) -> Option<()> {
        let mut dead = vec![false; self.head.chunks.len()];
        for &o in &delta.removed {
            *dead.get_mut(o as usize)? = true;
        }
        self.dead = dead;
        self.delta = delta;
        self.delta_chunks = delta_chunks;
        self.index_delta();
        Some(())
    }

    /// Rebuilds the delta's BM25 and the live counts from `delta` and `delta_chunks`.
    fn index_delta(&mut self) {
        self.delta_bm25 = Bm25Index::default();
        for (i, (p, _)) in self.delta_chunks.iter().enumerate() {
            self.delta_bm25.insert(i as u32, &p.terms, p.length);
        }
        let (delta_live, delta_len) = self.delta_bm25.totals();
        let base_len: u64 = self.head.lengths.iter().zip(&self.dead).filter(|(_, d)| !**d).map(|(l, _)| *l as u64).sum();
        self.live = self.dead.iter().filter(|d| !**d).count() + delta_live;
        self.total_len = base_len + delta_len;
    }
}

/// Segments read so far (postings blocks, IVF lists), kept for later queries.
#[derive(Default)]
struct Cache {
    blocks: RefCell<HashMap<u32, Rc<PostingsBlock>>>,
    lists: RefCell<HashMap<u32, Rc<VecBlock>>>,
}

struct Reader<S: Store, E: Embedder> {
    store: S,
    embedder: E,
    config: Config,
    clock: Box<dyn Clock>,
    parts: Parts,
    cache: Cache,
    /// The pseudo-graph, once read ([`Reader::graph`]).
    graph: Option<crate::graph::PseudoGraph>,
    /// The memory entries with their titles' embeddings, once read ([`Reader::memory`]; every
    /// commit drops them).
    memory: Option<Vec<(MemoryRecord, Vec<f32>)>>,
}

fn corrupt(key: SegmentKey, reason: impl Into<String>) -> crate::error::Error {
    StoreError::Corrupt { collection: Collection::Segments.name().into(), key: key.store_id(), reason: reason.into() }.into()
}

fn segment_bytes(r: Option<Record>) -> Option<Vec<u8>> {
    match r {
        Some(Record::Segment(s)) => Some(s.data),
        _ => None,
    }
}

impl<S: Store, E: Embedder> Reader<S, E> {
    /// Reads `meta`, the head, the delta and the delta's chunks. `None` when a lazy open does not
    /// apply (a new or older-schema store, postings of another analyzer version, no base, a base
    /// of another format or dimension, a delta chunk missing): the full open then handles (and
    /// repairs) it.
    ///
    /// Errors: [`crate::error::ModelError::Mismatch`], [`StoreError::VersionTooNew`], store errors.
    async fn read(store: &S, embedder: &E) -> Result<Option<Parts>> {
        // meta, head and delta in one read transaction: one generation's view.
        let mut keys: Vec<(Collection, String)> =
            ["schema", "model", "dim", "analyzer", GENERATION_KEY].map(|k| (Collection::Meta, k.to_string())).to_vec();
        keys.push((Collection::Segments, SegmentKey::Head.store_id()));
        keys.push((Collection::Segments, SegmentKey::Delta.store_id()));
        let mut got = store.get_batch(&keys).await?;
        let segs = got.split_off(5);
        let meta: Vec<MetaRecord> = got.into_iter().filter_map(|r| if let Some(Record::Meta(m)) = r { Some(m) } else { None }).collect();
        // Postings of another analyzer version: the full open derives them again.
        if check_meta(&meta, embedder.model_id(), embedder.dim())? != Some(SCHEMA_VERSION) || stored_analyzer(&meta) != ANALYZER_VERSION {
            return Ok(None);
        }
        let generation = generation_of(&meta);
        let mut got = segs.into_iter();
        let (Some(h), Some(d)) = (segment_bytes(got.next().flatten()), segment_bytes(got.next().flatten())) else { return Ok(None) };
        let (Ok(head), Ok(delta)) = (segment::decode::<SegmentHead>(&h), segment::decode::<Delta>(&d)) else { return Ok(None) };
        drop((h, d));
        let shaped = head.lengths.len() == head.chunks.len()
            && head.doc_of.len() == head.chunks.len()
            && head.doc_of.iter().all(|d| (*d as usize) < head.documents.len());
        if head.format != SEGMENT_FORMAT || head.dim as usize != embedder.dim() || !shaped {
            return Ok(None);
        }
        let postings = store.get_many(Collection::Postings, &delta.added).await?;
        let vectors = store.get_many(Collection::Vectors, &delta.added).await?;
        let mut delta_chunks = Vec::with_capacity(delta.added.len());
        for (p, v) in postings.into_iter().zip(vectors) {
            let (Some(Record::Posting(p)), Some(Record::Vector(v))) = (p, v) else { return Ok(None) };
            let Some(v) = v.to_f32().filter(|v| v.len() == embedder.dim()) else { return Ok(None) };
            delta_chunks.push((p, v));
        }
        Ok(Parts::new(generation, head, delta, delta_chunks))
    }

    fn stats(&self) -> Stats {
        let p = &self.parts;
        Stats {
            documents: usize::try_from(p.delta.documents).unwrap_or(usize::MAX),
            chunks: p.live,
            terms: usize::try_from(p.head.terms).unwrap_or(usize::MAX),
            dim: self.embedder.dim(),
            model: self.embedder.model_id().to_string(),
            ann: AnnStats::default(),
            atomized_chunks: 0,
            questions: 0,
            memory: 0,
            lazy: true,
        }
    }

    /// The postings blocks holding `terms`, read now if not yet.
    async fn blocks(&self, terms: &[&str]) -> Result<HashMap<u32, Rc<PostingsBlock>>> {
        let blocks = self.parts.head.blocks;
        let mut want: Vec<u32> = terms.iter().map(|t| segment::block_of(t, blocks)).collect();
        crate::sort::ascending(&mut want);
        want.dedup();
        let missing: Vec<u32> = want.iter().copied().filter(|b| !self.cache.blocks.borrow().contains_key(b)).collect();
        let keys: Vec<String> = missing.iter().map(|&b| SegmentKey::Terms(b).store_id()).collect();
        for (b, r) in missing.iter().zip(self.store.get_many(Collection::Segments, &keys).await?) {
            let key = SegmentKey::Terms(*b);
            let bytes = segment_bytes(r).ok_or_else(|| corrupt(key, "a postings block of the base is missing"))?;
            let block: PostingsBlock = segment::decode(&bytes).map_err(|e| corrupt(key, e))?;
            self.cache.blocks.borrow_mut().insert(*b, Rc::new(block));
        }
        let cache = self.cache.blocks.borrow();
        Ok(want.into_iter().filter_map(|b| Some((b, cache.get(&b)?.clone()))).collect())
    }

    /// The IVF lists `ls`, read now if not yet.
    async fn lists(&self, ls: &[u32]) -> Result<Vec<Rc<VecBlock>>> {
        let missing: Vec<u32> = ls.iter().copied().filter(|l| !self.cache.lists.borrow().contains_key(l)).collect();
        let keys: Vec<String> = missing.iter().map(|&l| SegmentKey::List(l).store_id()).collect();
        for (l, r) in missing.iter().zip(self.store.get_many(Collection::Segments, &keys).await?) {
            let key = SegmentKey::List(*l);
            let bytes = segment_bytes(r).ok_or_else(|| corrupt(key, "an IVF list of the base is missing"))?;
            let block = VecBlock::parse(&bytes)
                .filter(|b| b.dim == self.parts.head.dim as usize)
                .ok_or_else(|| corrupt(key, "not a WRL1 vector block of the head's dimension"))?;
            self.cache.lists.borrow_mut().insert(*l, Rc::new(block));
        }
        let cache = self.cache.lists.borrow();
        Ok(ls.iter().filter_map(|l| cache.get(l).cloned()).collect())
    }

    /// The chunk id of `slot`: base ordinals first, then the delta's chunks.
    fn chunk_id(&self, slot: u32) -> Option<&ChunkId> {
        let n = self.parts.head.chunks.len();
        let s = slot as usize;
        if s < n { self.parts.head.chunks.get(s) } else { self.parts.delta.added.get(s - n) }
    }

    /// The chunk records of `slots` and their documents' records, in one read (a delta chunk's
    /// document, which the head does not name, in a second).
    async fn hit_records(&self, slots: &[u32]) -> Result<(HashMap<u32, ChunkRecord>, HashMap<String, DocumentRecord>)> {
        let head = &self.parts.head;
        let mut keys: Vec<(Collection, String)> =
            slots.iter().filter_map(|s| Some((Collection::Chunks, self.chunk_id(*s)?.clone()))).collect();
        let mut doc_ids: Vec<&String> = slots.iter().filter_map(|&s| head.documents.get(*head.doc_of.get(s as usize)? as usize)).collect();
        crate::sort::ascending(&mut doc_ids);
        doc_ids.dedup();
        keys.extend(doc_ids.into_iter().map(|d| (Collection::Documents, d.clone())));
        let mut chunks = HashMap::new();
        let mut docs = HashMap::new();
        let mut by_id: HashMap<String, u32> = slots.iter().filter_map(|s| Some((self.chunk_id(*s)?.clone(), *s))).collect();
        for r in self.store.get_batch(&keys).await?.into_iter().flatten() {
            match r {
                Record::Chunk(c) => {
                    if let Some(s) = by_id.remove(&c.id) {
                        chunks.insert(s, c);
                    }
                }
                Record::Document(d) => {
                    docs.insert(d.id.clone(), d);
                }
                _ => {}
            }
        }
        let missing: Vec<String> = chunks.values().filter(|c| !docs.contains_key(&c.doc_id)).map(|c| c.doc_id.clone()).collect();
        for r in self.store.get_many(Collection::Documents, &missing).await?.into_iter().flatten() {
            if let Record::Document(d) = r {
                docs.insert(d.id.clone(), d);
            }
        }
        Ok((chunks, docs))
    }

    /// Chunk records of `slots`.
    async fn chunks(&self, slots: &[u32]) -> Result<HashMap<u32, ChunkRecord>> {
        let ids: Vec<String> = slots.iter().filter_map(|s| self.chunk_id(*s).cloned()).collect();
        let got = self.store.get_many(Collection::Chunks, &ids).await?;
        Ok(slots.iter().zip(got).filter_map(|(s, r)| if let Some(Record::Chunk(c)) = r { Some((*s, c)) } else { None }).collect())
    }

    /// A term's live postings, `(slot, tf)`: base ordinals (tombstones skipped), then delta slots
    /// (numbered after the base); and its document frequency, tombstones counted.
    fn postings<'a>(
        &'a self,
        blocks: &'a HashMap<u32, Rc<PostingsBlock>>,
        t: &str,
    ) -> (impl Iterator<Item = (u32, u32)> + use<'a, S, E>, usize) {
        let base_n = self.parts.head.chunks.len() as u32;
        let dead = &self.parts.dead;
        let base = blocks.get(&segment::block_of(t, self.parts.head.blocks)).map_or(&[][..], |b| block_postings(b, t));
        let delta = self.parts.delta_bm25.postings(t);
        let live = base
            .iter()
            .filter(|(o, _)| !dead.get(*o as usize).copied().unwrap_or(true))
            .copied()
            .chain(delta.iter().map(move |&(s, tf)| (base_n + s, tf)));
        (live, base.len() + delta.len())
    }

    /// BM25 of every live chunk holding a query term, with the loaded index's scores (the idf's
    /// document frequencies count tombstones until the next base).
    fn bm25_scores(&self, q: &Query, blocks: &HashMap<u32, Rc<PostingsBlock>>) -> Vec<(u32, f32)> {
        let base_n = self.parts.head.chunks.len() as u32;
        let params = self.config.bm25();
        let n = self.parts.live.max(1) as f32;
        let floor = params.epsilon * (self.parts.head.okapi_idf_sum / self.parts.head.terms.max(1) as f64) as f32;
        let mut acc = Accumulator::new((base_n as usize) + self.parts.delta.added.len(), &params, self.parts.total_len as f32 / n);
        for (t, w) in query_weights(q) {
            let (live, df) = self.postings(blocks, t);
            if df == 0 {
                continue;
            }
            let scale = acc.scale(w, params.idf(n, df as f32, floor));
            for (s, tf) in live {
                let dl = if s < base_n { self.parts.head.lengths[s as usize] } else { self.parts.delta_bm25.length(s - base_n) };
                acc.add(s, tf, dl, scale);
            }
        }
        acc.finish()
    }

    /// Estimated cosines of the live chunks in the [`NPROBE`] IVF lists nearest `v` (12-bit
    /// integer inner products) and exact ones of the delta's chunks.
    async fn dense_scores(&self, v: &[f32]) -> Result<Vec<(u32, f32)>> {
        let base_n = self.parts.head.chunks.len() as u32;
        let probe = self.lists(&self.parts.head.nearest_lists(v, NPROBE)).await?;
        let codes = QueryCodes::new(v);
        Ok(probe
            .iter()
            .flat_map(|l| l.scores(&codes))
            .filter(|(o, _)| !self.parts.dead.get(*o as usize).copied().unwrap_or(true))
            .chain(self.parts.delta_chunks.iter().enumerate().map(|(i, (_, d))| (base_n + i as u32, crate::embed::vecmath::dot(v, d))))
            .collect())
    }
}
