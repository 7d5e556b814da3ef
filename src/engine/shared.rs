//! An engine reached a step at a time, so a long run that waits on a model between its reads and
//! commits (`enrich`'s stages, [`crate::ask::ingest::enrich`]) does not hold it while it waits:
//! searches and other reads of the same engine run in between.
//!
//! A step sees the engine as it is then; what the run planned from an earlier step may have gone
//! stale (a document replaced or removed in between), so a committing step checks what it read
//! (the document's `sourceHash`) before it writes.
use futures::lock::Mutex;

use super::{Engine, LazyEngine};
use crate::embed::Embedder;
use crate::error::{Result, StoreError};
use crate::ports::{Progress, Store, WRITE_ATTEMPTS, retry_on_conflict};
use crate::types::{AddReport, DocumentInput};

/// Step-at-a-time access to an [`Engine`]: [`EngineAccess::with`] holds it for one step.
#[allow(async_fn_in_trait)] // webrag runs on one thread (a worker, or a CLI's block_on)
pub trait EngineAccess<S: Store, E: Embedder> {
    /// Runs `step` with the engine held (loaded whole first when it was opened lazily); others
    /// use it between steps.
    ///
    /// Errors: `step`'s; loading a lazily opened engine: those of [`LazyEngine::engine`].
    async fn with<R>(&self, step: impl AsyncFnOnce(&mut Engine<S, E>) -> Result<R>) -> Result<R>;
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
    async fn with<R>(&self, step: impl AsyncFnOnce(&mut Engine<S, E>) -> Result<R>) -> Result<R> {
        let mut eng = self.0.lock().await;
        step(&mut **eng).await
    }
}

/// An engine shared by concurrent calls (the page's worker): each step waits for the lock.
impl<S: Store, E: Embedder> EngineAccess<S, E> for Mutex<LazyEngine<S, E>> {
    async fn with<R>(&self, step: impl AsyncFnOnce(&mut Engine<S, E>) -> Result<R>) -> Result<R> {
        let mut lazy = self.lock().await;
        step(lazy.engine().await?).await
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
