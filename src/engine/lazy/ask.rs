//! What the ask pipeline reads and writes on a lazily opened knowledge base, without loading it
//! whole: the memory entries (read once, with their titles' embeddings), new memory entries and
//! kept traces (one commit each), and chunk records with their documents by id.
use std::collections::{HashMap, HashSet};

use super::Reader;
use crate::embed::Embedder;
use crate::engine::ask_store::{memory_entries, memory_entry, sort_memory, trace_record};
use crate::error::Result;
use crate::ports::{Collection, Op, Record, Store};
use crate::schema::*;

impl<S: Store, E: Embedder> Reader<S, E> {
    /// The memory entries, read now if not yet: those of this model's dimension whose source
    /// chunks are all stored (a loaded open deletes the others), oldest first.
    ///
    /// Errors: store errors.
    pub(super) async fn memory(&mut self) -> Result<&[(MemoryRecord, Vec<f32>)]> {
        if self.memory.is_none() {
            let dim = self.embedder.dim();
            let all: Vec<(MemoryRecord, Vec<f32>)> =
                self.store.scan(Collection::Memory).await?.memory.into_iter().filter_map(|m| memory_entry(m, dim)).collect();
            let stored = self.stored_chunks(all.iter().flat_map(|(m, _)| m.sources.iter().cloned()).collect()).await?;
            let mut memory: Vec<_> = all.into_iter().filter(|(m, _)| m.sources.iter().all(|c| stored.contains(c))).collect();
            sort_memory(&mut memory);
            self.memory = Some(memory);
        }
        Ok(self.memory.as_deref().unwrap_or_default())
    }

    /// Which of the chunks `ids` are stored.
    async fn stored_chunks(&self, mut ids: Vec<ChunkId>) -> Result<HashSet<ChunkId>> {
        crate::sort::ascending(&mut ids);
        ids.dedup();
        let got = self.store.get_many(Collection::Chunks, &ids).await?;
        Ok(got.into_iter().filter_map(|r| if let Some(Record::Chunk(c)) = r { Some(c.id) } else { None }).collect())
    }

    /// [`Enrichment::remember`](crate::engine::Enrichment::remember) without loading the knowledge base.
    ///
    /// Errors: the embedder's; store errors ([`crate::error::StoreError::Conflict`]: nothing
    /// written).
    pub(super) async fn remember(&mut self, entries: Vec<(String, String, Vec<ChunkId>)>) -> Result<Vec<MemoryRecord>> {
        let stored = self.stored_chunks(entries.iter().flat_map(|e| e.2.iter().cloned()).collect()).await?;
        let entries: Vec<_> = entries.into_iter().filter(|e| !e.2.is_empty() && e.2.iter().all(|c| stored.contains(c))).collect();
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let base = self.memory().await?.len();
        let titles: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
        let vecs = self.embedder.embed_checked(&titles).await?;
        let recs = memory_entries(entries, vecs, self.clock.now_ms(), base);
        self.commit(recs.iter().map(|(r, _)| Op::Put(Record::Memory(r.clone()))).collect()).await?;
        Ok(recs.into_iter().map(|(r, _)| r).collect())
    }

    /// [`Enrichment::keep_trace`](crate::engine::Enrichment::keep_trace) without loading the knowledge base.
    ///
    /// Errors: store errors.
    pub(super) async fn keep_trace(&mut self, question: &str, json: String) -> Result<TraceRecord> {
        let rec = trace_record(question, json, self.clock.now_ms(), self.parts.generation);
        self.commit(vec![Op::Put(Record::Trace(rec.clone()))]).await?;
        Ok(rec)
    }

    /// The chunk records `ids` that are stored, each with its document's record (when stored),
    /// in two reads.
    ///
    /// Errors: store errors.
    pub(super) async fn chunk_records(&self, ids: &[ChunkId]) -> Result<HashMap<ChunkId, (ChunkRecord, Option<DocumentRecord>)>> {
        let chunks: Vec<ChunkRecord> = self
            .store
            .get_many(Collection::Chunks, ids)
            .await?
            .into_iter()
            .filter_map(|r| if let Some(Record::Chunk(c)) = r { Some(c) } else { None })
            .collect();
        let mut doc_ids: Vec<DocId> = chunks.iter().map(|c| c.doc_id.clone()).collect();
        crate::sort::ascending(&mut doc_ids);
        doc_ids.dedup();
        let docs: HashMap<DocId, DocumentRecord> = self
            .store
            .get_many(Collection::Documents, &doc_ids)
            .await?
            .into_iter()
            .filter_map(|r| if let Some(Record::Document(d)) = r { Some((d.id.clone(), d)) } else { None })
            .collect();
        Ok(chunks
            .into_iter()
            .map(|c| {
                let d = docs.get(&c.doc_id).cloned();
                (c.id.clone(), (c, d))
            })
            .collect())
    }

    /// Deletes the records `ids` of `collection` in one commit; returns how many.
    ///
    /// Errors: store errors.
    pub(super) async fn delete_all(&mut self, collection: Collection, ids: Vec<String>) -> Result<usize> {
        let n = ids.len();
        if n > 0 {
            self.commit(ids.into_iter().map(|id| Op::Delete(collection, id)).collect()).await?;
        }
        Ok(n)
    }
}
