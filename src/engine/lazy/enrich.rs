//! The ingest-time LLM stages on a lazily opened knowledge base ([`Enrichable`]): atomizing and
//! LLM mind maps read the records they need (chunks without questions from the head, the delta
//! and the question delta; the documents' records; a document's chunks) and write through the one
//! write path ([`crate::engine::llm_parts`]), without loading; forward summaries and auto-tagging
//! rewrite chunks and documents wholesale and load the knowledge base first.
use std::collections::{BTreeMap, HashMap};

use super::{LazyEngine, Reader, State, failed};
use crate::embed::Embedder;
use crate::engine::Engine;
use crate::engine::shared::{Enrichable, unmapped};
use crate::engine::write::Residency;
use crate::error::{Result, StoreError};
use crate::graph::mindmap::MindMap;
use crate::ports::{Collection, Record, Store};
use crate::schema::*;

impl<S: Store, E: Embedder> Reader<S, E> {
    /// The live chunks without atomic questions, of `docs` (or of every document), by document
    /// id, then in document order.
    fn unatomized(&self, docs: Option<&[DocId]>) -> Vec<ChunkId> {
        let p = &self.parts;
        let atomized = self.atomized();
        if let Some(docs) = docs {
            let mut docs = docs.to_vec();
            crate::sort::ascending(&mut docs);
            docs.dedup();
            let chunks = self.old_chunks(&docs);
            return docs.iter().flat_map(|d| chunks.get(d).into_iter().flatten()).filter(|c| !atomized.contains(c)).cloned().collect();
        }
        let mut by_doc: BTreeMap<&str, Vec<&ChunkId>> = BTreeMap::new();
        for (o, c) in p.head.chunks.iter().enumerate() {
            let doc = p.head.doc_of.get(o).and_then(|d| p.head.documents.get(*d as usize));
            if let (false, Some(doc)) = (p.dead.get(o).copied().unwrap_or(true), doc) {
                by_doc.entry(doc.as_str()).or_default().push(c);
            }
        }
        for c in &p.delta.added {
            if let Some((doc, _)) = c.rsplit_once('#') {
                by_doc.entry(doc).or_default().push(c);
            }
        }
        by_doc.into_values().flatten().filter(|c| !atomized.contains(c)).cloned().collect()
    }

    /// The live chunks of `doc`, `(id, text)` in order, read from their records.
    async fn document_chunks(&self, doc: &str) -> Result<Vec<(ChunkId, String)>> {
        let ids = self.old_chunks(&[doc.to_string()]).remove(doc).unwrap_or_default();
        let got = self.store.get_many(Collection::Chunks, &ids).await?;
        Ok(got.into_iter().filter_map(|r| if let Some(Record::Chunk(c)) = r { Some((c.id, c.text)) } else { None }).collect())
    }
}

impl<S: Store, E: Embedder> LazyEngine<S, E> {
    /// [`LazyEngine::refresh`]; [`StoreError::Conflict`] when it read the store again (another tab
    /// committed): what the caller read before may be stale.
    async fn still_current(&mut self) -> Result<()> {
        let held = self.generation();
        if self.refresh().await? {
            return Err(StoreError::Conflict { expected: held, found: self.generation() }.into());
        }
        Ok(())
    }
}

impl<S: Store, E: Embedder> Enrichable<S, E> for LazyEngine<S, E> {
    fn encoder(&self) -> Result<&E> {
        self.embedder()
    }

    async fn unatomized(&mut self, docs: Option<&[DocId]>) -> Result<Vec<ChunkId>> {
        match &mut self.state {
            State::Reading(r) => Ok(r.unatomized(docs)),
            State::Loaded(e) => e.unatomized(docs).await,
            State::Failed => Err(failed()),
        }
    }

    async fn chunks_with_documents(&mut self, ids: &[ChunkId]) -> Result<HashMap<ChunkId, (ChunkRecord, Option<DocumentRecord>)>> {
        self.chunk_records(ids).await
    }

    /// [`LazyEngine::refresh`] first: a stage checks a reply against the documents as they are
    /// stored now, another tab's commits included.
    async fn hashes(&mut self, ids: &[DocId]) -> Result<HashMap<DocId, String>> {
        self.refresh().await?;
        match &mut self.state {
            State::Reading(r) => Residency::source_hashes(&**r, ids).await,
            State::Loaded(e) => e.hashes(ids).await,
            State::Failed => Err(failed()),
        }
    }

    async fn unmapped(&mut self, docs: Option<&[DocId]>) -> Result<Vec<(DocId, String)>> {
        match &mut self.state {
            State::Reading(r) => Ok(unmapped(match docs {
                Some(ids) => r.documents(ids).await?.into_values().collect(),
                None => r.store.scan(Collection::Documents).await?.documents,
            })),
            State::Loaded(e) => e.unmapped(docs).await,
            State::Failed => Err(failed()),
        }
    }

    async fn document_chunks(&mut self, doc: &str) -> Result<Vec<(ChunkId, String)>> {
        match &mut self.state {
            State::Reading(r) => r.document_chunks(doc).await,
            State::Loaded(e) => e.document_chunks(doc).await,
            State::Failed => Err(failed()),
        }
    }

    /// While lazy, without loading ([`crate::engine::llm_parts::put_questions`] over the reader).
    /// [`StoreError::Conflict`] (nothing written) when another tab committed since the view the
    /// caller checked its replies against.
    async fn put_questions(&mut self, items: Vec<(ChunkId, Vec<String>)>) -> Result<usize> {
        self.still_current().await?;
        match &mut self.state {
            State::Reading(r) => crate::engine::llm_parts::put_questions(&mut **r, items).await,
            State::Loaded(e) => e.enrichment().put_questions(items).await,
            State::Failed => Err(failed()),
        }
    }

    /// While lazy, without loading (the pseudo-graph read alone). [`StoreError::Conflict`] as
    /// [`Enrichable::put_questions`].
    async fn set_mind_map(&mut self, doc: &str, map: Option<&MindMap>, kind: MindMapKind) -> Result<()> {
        self.still_current().await?;
        match &mut self.state {
            State::Reading(r) => crate::engine::llm_parts::set_mind_map(&mut **r, doc, map, kind).await,
            State::Loaded(e) => e.enrichment().set_mind_map(doc, map, kind).await,
            State::Failed => Err(failed()),
        }
    }

    async fn whole<'a>(&'a mut self) -> Result<&'a mut Engine<S, E>>
    where
        S: 'a,
        E: 'a,
    {
        self.for_write().await
    }
}
