//! The LLM-built parts of a knowledge base: atomic questions, memory, traces, mind maps.
use std::collections::HashSet;

use crate::embed::Embedder;
use crate::error::{InputError, Result};
use crate::graph::mindmap;
use crate::graph::{GraphPlan, NewMap, node_inputs};
use crate::ports::{Collection, Op, Record, Store};
use crate::types::*;

use super::{AtomicHit, Engine};

/// The LLM-built parts of a knowledge base: atomic questions (PIKE-RAG knowledge atomizing), the
/// memory knowledge base, kept traces, and replacing a document's mind map (PG-RAG). The model
/// calls that produce them live in [`crate::ask`]; this is where they are stored and indexed.
impl<S: Store, E: Embedder> Engine<S, E> {
    /// Chunks without atomic questions, in document order (documents by id, chunks by
    /// ordinal): the work an atomizing pass has left, so a pass that stopped resumes here.
    pub fn unatomized(&self) -> Vec<ChunkId> {
        let mut docs: Vec<&DocId> = self.doc_chunks.keys().collect();
        docs.sort();
        docs.into_iter().flat_map(|d| self.doc_chunks[d].iter()).filter(|c| !self.atoms.contains_key(*c)).cloned().collect()
    }

    /// The atomic questions of a chunk (`None`: not atomized).
    pub fn questions(&self, chunk_id: &str) -> Option<&[String]> {
        self.atoms.get(chunk_id).map(Vec::as_slice)
    }

    /// Stores the atomic questions of chunks (replacing any they had), embedded, in one atomic
    /// commit. Chunks that no longer exist are skipped. Returns the questions stored.
    ///
    /// Errors: model and store errors (nothing is written).
    pub async fn put_questions(&mut self, items: Vec<(ChunkId, Vec<String>)>) -> Result<usize> {
        let items: Vec<(ChunkId, Vec<String>)> = items.into_iter().filter(|(c, _)| self.chunks.contains_key(c)).collect();
        let flat: Vec<&str> = items.iter().flat_map(|(_, qs)| qs.iter().map(String::as_str)).collect();
        let total = flat.len();
        let vecs = self.embed_distinct(&flat, "embed", &mut crate::ports::NoProgress).await?;
        drop(flat);
        let mut ops = Vec::new();
        for (cid, _) in &items {
            self.question_deletes(cid, &mut ops);
        }
        let mut at = 0;
        for (cid, qs) in &items {
            let doc_id = self.chunks[cid].doc_id.clone();
            ops.push(Op::Put(Record::Question(QuestionRecord { id: cid.clone(), doc_id, questions: qs.clone() })));
            for i in 0..qs.len() {
                ops.push(Op::Put(Record::Vector(VectorRecord::from_f32(&QuestionKey::new(cid, i).store_id(), "questions", &vecs[at + i]))));
            }
            at += qs.len();
        }
        // A lazy open serves no atomic list: the stored base goes with the first questions.
        ops.extend(self.segment_deletes());
        self.commit(ops).await?;
        self.drop_segments();
        let mut at = 0;
        for (cid, qs) in items {
            let n = qs.len();
            self.index_questions(&cid, qs, &vecs[at..at + n]);
            at += n;
        }
        Ok(total)
    }

    /// Atomic questions nearest the query embedding `qv` with cosine ≥ `delta`, at most `k`,
    /// best first (HNSW over sealed segments, exact over the fresh buffer).
    pub fn atomic_search(&self, qv: &[f32], k: usize, delta: f32) -> Vec<AtomicHit> {
        if self.qslots.is_empty() || qv.len() != self.qvectors.dim() {
            return Vec::new();
        }
        self.qvectors
            .search(qv, k)
            .into_iter()
            .filter(|(_, s)| *s >= delta)
            .filter_map(|(slot, score)| {
                let key = self.qslots.id(slot)?;
                let question = self.atoms.get(&key.chunk)?.get(key.index as usize)?.clone();
                Some(AtomicHit { question, chunk_id: key.chunk.clone(), score })
            })
            .collect()
    }

    /// Replaces a document's mind map in the pseudo-graph (embedding its nodes; fusion with the
    /// other documents as at ingest) and records which map it is (`kind`: `"llm"` or
    /// `"structural-fallback"`) in the document record, in one atomic commit.
    ///
    /// `map: None` keeps the graph as it is and only records `kind`.
    ///
    /// Errors: [`InputError::InvalidId`] for an unknown document; model and store errors
    /// (nothing is written).
    pub async fn set_mind_map(&mut self, doc_id: &str, map: Option<&mindmap::MindMap>, kind: &str) -> Result<()> {
        let Some(rec) = self.docs.get(doc_id).cloned() else {
            return Err(InputError::InvalidId { id: doc_id.chars().take(64).collect() }.into());
        };
        let mut ops = Vec::new();
        let mut plan = GraphPlan::default();
        if let (true, Some(map)) = (self.config.graph.enabled, map) {
            let inputs = node_inputs(map);
            let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
            let vecs = self.embed_distinct(&refs, "graph", &mut crate::ports::NoProgress).await?;
            let chunk_ids = self.doc_chunks.get(doc_id).cloned().unwrap_or_default();
            let replacing: HashSet<String> = [doc_id.to_string()].into_iter().collect();
            plan = self.graph.plan_remove(&[doc_id.to_string()]);
            plan.extend(self.graph.plan_add(
                &[NewMap { doc_id, chunk_ids: &chunk_ids, map, vectors: &vecs }],
                &replacing,
                &self.config.graph,
            ));
            ops.extend(plan.ops());
        }
        let rec = DocumentRecord { mind_map: Some(kind.to_string()), ..rec };
        ops.push(Op::Put(Record::Document(rec.clone())));
        self.commit(ops).await?;
        self.graph.apply(plan);
        self.docs.insert(rec.id.clone(), rec);
        Ok(())
    }

    /// Memory entries whose title has cosine ≥ `tau` with the query embedding `qv`, best first
    /// (the retrieval trigger, docs/ask-pipeline.md).
    pub fn memory_matches(&self, qv: &[f32], tau: f32) -> Vec<(MemoryRecord, f32)> {
        memory_matches(&self.memory, qv, tau)
    }

    /// Memory entries stored.
    pub fn memory_len(&self) -> usize {
        self.memory.len()
    }

    /// Atomic questions indexed.
    pub fn question_count(&self) -> usize {
        self.qslots.len()
    }

    /// Every memory entry, oldest first.
    pub fn memory(&self) -> Vec<MemoryRecord> {
        self.memory.iter().map(|(m, _)| m.clone()).collect()
    }

    /// Saves title–content pairs to the memory knowledge base (docs/ask-pipeline.md), each title
    /// embedded, in one commit. Returns the new records.
    /// An entry without a source chunk that is still stored is not saved (nothing could tell
    /// when it goes stale).
    pub async fn remember(&mut self, entries: Vec<(String, String, Vec<ChunkId>)>) -> Result<Vec<MemoryRecord>> {
        let entries: Vec<_> = entries.into_iter().filter(|e| !e.2.is_empty() && e.2.iter().all(|c| self.chunks.contains_key(c))).collect();
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let titles: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
        let vecs = self.embedder.embed_checked(&titles).await?;
        let recs = memory_entries(entries, vecs, self.clock.now_ms(), self.memory.len());
        self.commit(recs.iter().map(|(r, _)| Op::Put(Record::Memory(r.clone()))).collect()).await?;
        let out = recs.iter().map(|(r, _)| r.clone()).collect();
        self.memory.extend(recs);
        Ok(out)
    }

    /// The memory entries learned from any of the chunks `gone` (edited or removed): their
    /// deletes join `ops`; returns their ids, to drop from memory once committed. What was
    /// learned from a note stands only while the note does.
    pub(super) fn memory_deletes(&self, gone: &[ChunkId], ops: &mut Vec<Op>) -> HashSet<String> {
        let gone: HashSet<&str> = gone.iter().map(String::as_str).collect();
        let stale: HashSet<String> =
            self.memory.iter().filter(|(m, _)| m.sources.iter().any(|s| gone.contains(s.as_str()))).map(|(m, _)| m.id.clone()).collect();
        ops.extend(stale.iter().map(|id| Op::Delete(Collection::Memory, id.clone())));
        stale
    }

    /// Drops the committed `stale` entries from memory.
    pub(super) fn drop_memory(&mut self, stale: &HashSet<String>) {
        if !stale.is_empty() {
            self.memory.retain(|(m, _)| !stale.contains(&m.id));
        }
    }

    /// Deletes every memory entry.
    pub async fn forget(&mut self) -> Result<usize> {
        let ops: Vec<Op> = self.memory.iter().map(|(m, _)| Op::Delete(Collection::Memory, m.id.clone())).collect();
        let n = ops.len();
        if n > 0 {
            self.commit(ops).await?;
        }
        self.memory.clear();
        Ok(n)
    }

    /// Keeps one ask trace (`json`: the trace object) in the `traces` collection.
    pub async fn keep_trace(&mut self, question: &str, json: String) -> Result<TraceRecord> {
        let rec = trace_record(question, json, self.clock.now_ms(), self.generation());
        self.commit(vec![Op::Put(Record::Trace(rec.clone()))]).await?;
        self.traces.push(rec.clone());
        Ok(rec)
    }

    /// Kept traces, oldest first.
    pub fn traces(&self) -> &[TraceRecord] {
        &self.traces
    }

    /// Deletes every kept trace.
    pub async fn clear_traces(&mut self) -> Result<usize> {
        let ops: Vec<Op> = self.traces.iter().map(|t| Op::Delete(Collection::Traces, t.id.clone())).collect();
        let n = ops.len();
        if n > 0 {
            self.commit(ops).await?;
        }
        self.traces.clear();
        Ok(n)
    }

    /// The chunk ids of a document, by ordinal.
    pub fn doc_chunk_ids(&self, doc_id: &str) -> &[ChunkId] {
        self.doc_chunks.get(doc_id).map(Vec::as_slice).unwrap_or(&[])
    }

    /// A chunk's BM25 terms with their frequencies, and its length.
    pub fn posting(&self, chunk_id: &str) -> Option<&PostingRecord> {
        self.postings.get(chunk_id)
    }

    /// A stored vector of a chunk (its embedding), if any.
    pub fn chunk_vector(&self, chunk_id: &str) -> Option<&[f32]> {
        self.slots.get(chunk_id).and_then(|s| self.vectors.get(s))
    }

    /// The embedding of a chunk's `i`-th atomic question.
    pub fn question_vector(&self, chunk_id: &str, i: usize) -> Option<&[f32]> {
        self.qslots.get(&QuestionKey::new(chunk_id, i)).and_then(|s| self.qvectors.get(s))
    }
}

/// The entries of `memory` whose title has cosine ≥ `tau` with `qv`, best first.
pub(super) fn memory_matches(memory: &[(MemoryRecord, Vec<f32>)], qv: &[f32], tau: f32) -> Vec<(MemoryRecord, f32)> {
    let mut out: Vec<(MemoryRecord, f32)> =
        memory.iter().map(|(m, v)| (m, crate::embed::gemm::dot(qv, v))).filter(|(_, s)| *s >= tau).map(|(m, s)| (m.clone(), s)).collect();
    out.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    out
}

/// New memory records for title–content–sources `entries` with their titles' embeddings `vecs`,
/// created at `now` (ms), numbered from `base` (the entries already stored).
pub(super) fn memory_entries(
    entries: Vec<(String, String, Vec<ChunkId>)>,
    vecs: Vec<Vec<f32>>,
    now: f64,
    base: usize,
) -> Vec<(MemoryRecord, Vec<f32>)> {
    entries
        .into_iter()
        .zip(vecs)
        .enumerate()
        .map(|(i, ((title, content, sources), v))| {
            let embedding = VectorRecord::from_f32("", "memory", &v).data;
            (MemoryRecord { id: format!("m{:015}-{}", now as u64, base + i), title, content, sources, created_at: now, embedding }, v)
        })
        .collect()
}

/// A stored memory entry with its title's embedding (`None`: not of dimension `dim`).
pub(super) fn memory_entry(m: MemoryRecord, dim: usize) -> Option<(MemoryRecord, Vec<f32>)> {
    let v = VectorRecord { id: m.id.clone(), collection: "memory".into(), data: m.embedding.clone() }.to_f32()?;
    (v.len() == dim).then_some((m, v))
}

/// Memory entries oldest first (ties by id).
pub(super) fn sort_memory(memory: &mut [(MemoryRecord, Vec<f32>)]) {
    memory.sort_by(|a, b| a.0.created_at.partial_cmp(&b.0.created_at).unwrap_or(std::cmp::Ordering::Equal).then(a.0.id.cmp(&b.0.id)));
}

/// The record of a kept trace, created at `now` (ms) by the commit after store generation
/// `generation` (ids sort oldest first and never repeat within a store).
pub(super) fn trace_record(question: &str, json: String, now: f64, generation: u64) -> TraceRecord {
    TraceRecord { id: format!("t{:015}-{generation:020}", now as u64), created_at: now, question: question.to_string(), json }
}
