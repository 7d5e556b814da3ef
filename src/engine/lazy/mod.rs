//! Opening a knowledge base lazily (docs/vector-index.md, "Index segments"): when the store holds
//! a base of index segments ([`crate::index::segment`]) that describes it, [`LazyEngine::open`]
//! reads the `meta` records, the base's head and the delta's chunks, and the atomic questions
//! written since the base — not the ~3 records per chunk a full [`Engine::open`] reads — and
//! serves searches in every mode from the segments, reading a query's postings blocks and IVF
//! lists (the chunks' and the atomic questions') on demand (and keeping them), and the
//! pseudo-graph alone for the graph modes. Writes, the document list and single chunks read
//! only the records they need ([`write`]); a filtered search reads its documents' records and
//! its chunks' vectors ([`filtered`]); `enrich`'s atomizing and mind maps read the records they
//! need ([`enrich`]); an export reads the store a page at a time. The first operation that needs
//! more (forward summaries or tags, a forced upkeep step) loads the whole knowledge base with
//! [`Engine::open`], once.
use std::collections::HashMap;

mod ask;
mod enrich;
mod filtered;
mod reader;
mod write;

use crate::config::Config;
use crate::embed::Embedder;
use crate::error::{Result, StoreError};
use crate::ports::{Clock, Collection, GENERATION_KEY, Record, Store, generation_in};
use crate::schema::*;
use crate::types::*;

use super::Engine;
use super::search::query_vector;
use super::source::{self, SearchOptions};
use reader::{Cache, Reader};

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
        match &mut self.state {
            State::Reading(r) => r.chunk_records(ids).await,
            State::Loaded(e) => super::Enrichable::chunks_with_documents(&mut **e, ids).await,
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

    /// [`AskStore::atomic_search`](crate::engine::AskStore::atomic_search); while lazy, over the
    /// base's atomic questions (their IVF lists read on demand) and those written since.
    ///
    /// Errors: store errors; after a failed load, [`StoreError::Backend`].
    pub async fn atomic_search(&self, qv: &[f32], k: usize, delta: f32) -> Result<Vec<super::AtomicHit>> {
        match &self.state {
            State::Reading(r) => r.atomic_search(qv, k, delta).await,
            State::Loaded(e) => Ok(e.ask_store().atomic_search(qv, k, delta)),
            State::Failed => Err(failed()),
        }
    }

    /// Whether the knowledge base has atomic questions.
    ///
    /// Errors: after a failed load, [`StoreError::Backend`].
    pub fn has_questions(&self) -> Result<bool> {
        match &self.state {
            State::Reading(r) => Ok(r.live_questions().next().is_some()),
            State::Loaded(e) => Ok(e.ask_store().question_count() > 0),
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
            State::Reading(r) => super::write::plan_add(&**r, docs, progress).await,
            State::Loaded(e) => e.plan_add(docs, progress).await,
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
            State::Reading(r) => super::write::commit_add(&mut **r, plan, vectors, progress).await,
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
            State::Reading(r) => super::write::remove(&mut **r, ids).await,
            State::Loaded(e) => e.remove(ids).await,
            State::Failed => Err(failed()),
        }
    }

    /// [`Engine::export_kb`], read from the store a page of records at a time whether loaded or
    /// not ([`crate::kb_file::export`]): an export never loads the knowledge base.
    ///
    /// Errors: store errors ([`StoreError::Conflict`] when another engine committed meanwhile:
    /// call again); after a failed load, [`StoreError::Backend`].
    pub async fn export_kb(&self) -> Result<Vec<u8>> {
        self.export_kb_to(Vec::new()).await
    }

    /// [`LazyEngine::export_kb`] into `sink` as the file is written ([`crate::kb_file::export_to`]).
    ///
    /// Errors: those of [`LazyEngine::export_kb`]; [`StoreError::Backend`] when the sink fails.
    pub async fn export_kb_to<W: std::io::Write>(&self, sink: W) -> Result<W> {
        let store = self.store().ok_or_else(failed)?;
        let e = self.embedder()?;
        crate::kb_file::export_to(store, e.model_id(), e.dim(), flate2::Compression::default(), sink).await
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
