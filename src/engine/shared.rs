//! An engine reached a step at a time, so a long run that waits on a model between its reads and
//! commits (`enrich`'s stages, [`crate::ask::ingest::enrich`]) does not hold it while it waits:
//! searches and other reads of the same engine run in between.
//!
//! A step sees the engine as it is then; what the run planned from an earlier step may have gone
//! stale (a document replaced or removed in between), so a committing step checks what it read
//! (the document's `sourceHash`) before it writes.
use std::collections::{HashMap, HashSet};

use futures::lock::Mutex;

use super::{Engine, LazyEngine};
use crate::embed::Embedder;
use crate::error::{Result, StoreError};
use crate::graph::mindmap::MindMap;
use crate::ports::{Progress, Store, WRITE_ATTEMPTS, retry_on_conflict};
use crate::schema::*;
use crate::types::{AddReport, DocumentInput};

/// Step-at-a-time access to a knowledge base: [`EngineAccess::with`] holds it for one step.
#[allow(async_fn_in_trait)] // webrag runs on one thread (a worker, or a CLI's block_on)
pub trait EngineAccess<S: Store, E: Embedder> {
    /// The knowledge base a step sees: an [`Engine`], or a [`LazyEngine`] (not loaded for it).
    type Kb: Enrichable<S, E>;
    /// Runs `step` with the knowledge base held; others use it between steps.
    ///
    /// Errors: `step`'s.
    async fn with<R>(&self, step: impl AsyncFnOnce(&mut Self::Kb) -> Result<R>) -> Result<R>;
}

/// What the ingest-time LLM stages ([`crate::ask::ingest::enrich`]) read and write: the
/// atomizing and mind-map stages through the methods here, on whatever is resident (a lazily
/// opened knowledge base reads the records they need and writes without loading); the forward
/// summaries and auto-tagging through [`Enrichable::whole`].
#[allow(async_fn_in_trait)]
pub trait Enrichable<S: Store, E: Embedder> {
    /// The embedder.
    ///
    /// Errors: [`crate::error::StoreError::Backend`] after a failed load.
    fn encoder(&self) -> Result<&E>;
    /// The chunks without atomic questions (of the documents `docs`; `None`: of every document),
    /// by document id, then in document order.
    async fn unatomized(&mut self, docs: Option<&[DocId]>) -> Result<Vec<ChunkId>>;
    /// The chunk records `ids` that are stored, each with its document's record.
    async fn chunks_with_documents(&mut self, ids: &[ChunkId]) -> Result<HashMap<ChunkId, (ChunkRecord, Option<DocumentRecord>)>>;
    /// The `sourceHash` of each of the documents `ids` that is stored.
    async fn hashes(&mut self, ids: &[DocId]) -> Result<HashMap<DocId, String>>;
    /// `(id, title)` of the documents without an LLM mind map (`mindMap` absent or
    /// `"structural"`; of `docs`, or of every document), by id.
    async fn unmapped(&mut self, docs: Option<&[DocId]>) -> Result<Vec<(DocId, String)>>;
    /// The live chunks of document `doc`, `(id, text)` in order.
    async fn document_chunks(&mut self, doc: &str) -> Result<Vec<(ChunkId, String)>>;
    /// [`crate::engine::Enrichment::put_questions`]; a chunk named twice keeps its last questions.
    async fn put_questions(&mut self, items: Vec<(ChunkId, Vec<String>)>) -> Result<usize>;
    /// [`crate::engine::Enrichment::set_mind_map`].
    async fn set_mind_map(&mut self, doc: &str, map: Option<&MindMap>, kind: MindMapKind) -> Result<()>;
    /// The whole knowledge base (a lazily opened one is read again if another tab committed and
    /// loaded now: [`LazyEngine::for_write`]).
    async fn whole<'a>(&'a mut self) -> Result<&'a mut Engine<S, E>>
    where
        S: 'a,
        E: 'a;
}

impl<S: Store, E: Embedder> Enrichable<S, E> for Engine<S, E> {
    fn encoder(&self) -> Result<&E> {
        Ok(self.embedder())
    }

    async fn unatomized(&mut self, docs: Option<&[DocId]>) -> Result<Vec<ChunkId>> {
        let all = self.ask_store().unatomized(self.corpus());
        Ok(match docs {
            None => all,
            Some(docs) => {
                let wanted: HashSet<&str> = docs.iter().map(String::as_str).collect();
                let corpus = self.corpus();
                all.into_iter().filter(|c| corpus.chunk(c).is_some_and(|c| wanted.contains(c.doc_id.as_str()))).collect()
            }
        })
    }

    async fn chunks_with_documents(&mut self, ids: &[ChunkId]) -> Result<HashMap<ChunkId, (ChunkRecord, Option<DocumentRecord>)>> {
        let corpus = self.corpus();
        Ok(ids
            .iter()
            .filter_map(|id| {
                let c = corpus.chunk(id)?;
                Some((id.clone(), (c.clone(), corpus.document(&c.doc_id).cloned())))
            })
            .collect())
    }

    async fn hashes(&mut self, ids: &[DocId]) -> Result<HashMap<DocId, String>> {
        super::write::Residency::source_hashes(self, ids).await
    }

    async fn unmapped(&mut self, docs: Option<&[DocId]>) -> Result<Vec<(DocId, String)>> {
        let records = match docs {
            None => self.corpus().documents(),
            Some(ids) => ids.iter().filter_map(|id| self.corpus().document(id).cloned()).collect(),
        };
        Ok(unmapped(records))
    }

    async fn document_chunks(&mut self, doc: &str) -> Result<Vec<(ChunkId, String)>> {
        Ok(self.corpus().chunks_of(doc).into_iter().map(|c| (c.id.clone(), c.text.clone())).collect())
    }

    async fn put_questions(&mut self, items: Vec<(ChunkId, Vec<String>)>) -> Result<usize> {
        self.enrichment().put_questions(items).await
    }

    async fn set_mind_map(&mut self, doc: &str, map: Option<&MindMap>, kind: MindMapKind) -> Result<()> {
        self.enrichment().set_mind_map(doc, map, kind).await
    }

    async fn whole<'a>(&'a mut self) -> Result<&'a mut Engine<S, E>>
    where
        S: 'a,
        E: 'a,
    {
        Ok(self)
    }
}

/// `(id, title)` of `docs` without an LLM mind map, by id.
pub(super) fn unmapped(docs: Vec<DocumentRecord>) -> Vec<(DocId, String)> {
    let mut out: Vec<(DocId, String)> =
        docs.into_iter().filter(|d| matches!(d.mind_map, None | Some(MindMapKind::Structural))).map(|d| (d.id, d.title)).collect();
    crate::sort::ascending(&mut out);
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// An engine borrowed by one run alone (the CLI, tests): every step gets it at once.
pub struct Exclusive<'a, S: Store, E: Embedder>(Mutex<&'a mut Engine<S, E>>);

impl<'a, S: Store, E: Embedder> Exclusive<'a, S, E> {
    /// Step-at-a-time access to `eng` for one run.
    pub fn new(eng: &'a mut Engine<S, E>) -> Self {
        Exclusive(Mutex::new(eng))
    }
}

impl<S: Store, E: Embedder> EngineAccess<S, E> for Exclusive<'_, S, E> {
    type Kb = Engine<S, E>;

    async fn with<R>(&self, step: impl AsyncFnOnce(&mut Engine<S, E>) -> Result<R>) -> Result<R> {
        let mut eng = self.0.lock().await;
        step(&mut **eng).await
    }
}

/// An engine shared by concurrent calls (the page's worker): each step waits for the lock.
impl<S: Store, E: Embedder> EngineAccess<S, E> for Mutex<LazyEngine<S, E>> {
    type Kb = LazyEngine<S, E>;

    async fn with<R>(&self, step: impl AsyncFnOnce(&mut LazyEngine<S, E>) -> Result<R>) -> Result<R> {
        let mut lazy = self.lock().await;
        step(&mut lazy).await
    }
}

/// [`LazyEngine::add`] on an engine shared by concurrent calls (the page's worker): the engine is
/// held to plan the batch and to commit it, not during the forward passes (`super::embed_add`),
/// so searches and other reads answer meanwhile. A commit that meets another engine's commit
/// (another tab, `STORE_CONFLICT`: nothing written) plans the batch again against the store as it
/// now is ([`retry_on_conflict`], [`WRITE_ATTEMPTS`] plans); the vectors already computed are
/// kept when the new plan embeds the same texts (`super::write::AddPlan::same_input`), so the
/// retry costs no forward pass.
///
/// Errors: those of [`LazyEngine::add`]; [`StoreError::Conflict`] after the last plan.
pub async fn add_shared<S: Store, E: Embedder + Clone>(
    lazy: &Mutex<LazyEngine<S, E>>,
    docs: Vec<DocumentInput>,
    progress: &mut dyn Progress,
) -> Result<AddReport> {
    let mut done: Option<(super::write::AddPlan, super::write::AddVectors)> = None;
    retry_on_conflict(WRITE_ATTEMPTS, async |attempt| {
        let (plan, embedder, batch) = {
            let mut core = lazy.lock().await;
            let plan = core.plan_add(docs.clone(), progress).await?;
            (plan, core.embedder()?.clone(), core.embed_batch()?)
        };
        let vectors = match done.take() {
            Some((before, vectors)) if before.same_input(&plan) => vectors,
            _ => super::embed_add(&embedder, batch, &plan, progress).await?,
        };
        let mut core = lazy.lock().await;
        // Another engine committed while this one embedded: plan again, keeping the vectors.
        core.refresh().await?;
        if core.generation() != plan.generation && attempt < WRITE_ATTEMPTS {
            let conflict = StoreError::Conflict { expected: plan.generation, found: core.generation() };
            done = Some((plan, vectors));
            return Err(conflict.into());
        }
        core.commit_add(plan, vectors, progress).await
    })
    .await
}
