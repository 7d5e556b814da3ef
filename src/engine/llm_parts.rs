//! Writes of what language models derive from a loaded knowledge base's documents: atomic
//! questions (PIKE-RAG knowledge atomizing), replaced mind maps (PG-RAG), automatic tags and
//! forward summaries (PIKE-RAG §4.2, [`super::enhance`]), memory entries and kept traces. The
//! model calls that produce them live in [`crate::ask`]; this is where they are stored and
//! indexed, each write one commit.
use std::collections::HashSet;

use crate::embed::Embedder;
use crate::error::{InputError, Result};
use crate::graph::mindmap;
use crate::graph::{GraphPlan, NewMap, node_inputs};
use crate::ports::{Collection, Op, Record, Store};
use crate::schema::*;

use super::Engine;
use super::ask_store::{memory_entries, trace_record};

/// The writes of what language models derive from the documents ([`Engine::enrichment`]).
pub struct Enrichment<'a, S: Store, E: Embedder>(pub(super) &'a mut Engine<S, E>);

impl<S: Store, E: Embedder> Enrichment<'_, S, E> {
    /// Stores the atomic questions of chunks (replacing any they had), embedded, in one atomic
    /// commit. Chunks that no longer exist are skipped. Returns the questions stored.
    ///
    /// Errors: model and store errors (nothing is written).
    pub async fn put_questions(&mut self, items: Vec<(ChunkId, Vec<String>)>) -> Result<usize> {
        let items: Vec<(ChunkId, Vec<String>)> = items.into_iter().filter(|(c, _)| self.0.corpus.chunks.contains_key(c)).collect();
        let flat: Vec<&str> = items.iter().flat_map(|(_, qs)| qs.iter().map(String::as_str)).collect();
        let total = flat.len();
        let vecs = self.0.embed_distinct(&flat, crate::types::Phase::Embed, &mut crate::ports::NoProgress).await?;
        drop(flat);
        let mut ops = Vec::new();
        for (cid, _) in &items {
            self.0.ask.question_deletes(cid, &mut ops);
        }
        let mut at = 0;
        for (cid, qs) in &items {
            let doc_id = self.0.corpus.chunks[cid].doc_id.clone();
            ops.push(Op::Put(Record::Question(QuestionRecord { id: cid.clone(), doc_id, questions: qs.clone() })));
            for i in 0..qs.len() {
                ops.push(Op::Put(Record::Vector(VectorRecord::from_f32(&QuestionKey::new(cid, i).store_id(), "questions", &vecs[at + i]))));
            }
            at += qs.len();
        }
        // The stored base's question delta names the chunks, so a lazy open reads their questions.
        let changed: Vec<ChunkId> = items.iter().map(|(c, _)| c.clone()).collect();
        let delta = self.0.next_question_delta(&changed);
        ops.extend(delta.as_ref().map(|(op, _)| op.clone()));
        self.0.commit(ops).await?;
        self.0.set_question_delta(delta.map(|(_, d)| d));
        let mut at = 0;
        for (cid, qs) in items {
            let n = qs.len();
            self.0.ask.index_questions(&cid, qs, &vecs[at..at + n]);
            at += n;
        }
        Ok(total)
    }

    /// Replaces a document's mind map in the pseudo-graph (embedding its nodes; fusion with the
    /// other documents as at ingest) and records which map it is (`kind`: `"llm"` or
    /// `"structural-fallback"`) in the document record, in one atomic commit.
    ///
    /// `map: None` keeps the graph as it is and only records `kind`.
    ///
    /// Errors: [`InputError::InvalidId`] for an unknown document; model and store errors
    /// (nothing is written).
    pub async fn set_mind_map(&mut self, doc_id: &str, map: Option<&mindmap::MindMap>, kind: crate::schema::MindMapKind) -> Result<()> {
        let Some(rec) = self.0.corpus.docs.get(doc_id).cloned() else {
            return Err(InputError::InvalidId { id: doc_id.chars().take(64).collect() }.into());
        };
        let mut ops = Vec::new();
        let mut plan = GraphPlan::default();
        if let (true, Some(map)) = (self.0.config.graph.enabled, map) {
            let inputs = node_inputs(map);
            let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
            let vecs = self.0.embed_distinct(&refs, crate::types::Phase::Graph, &mut crate::ports::NoProgress).await?;
            let chunk_ids = self.0.corpus.doc_chunks.get(doc_id).cloned().unwrap_or_default();
            let replacing: HashSet<String> = [doc_id.to_string()].into_iter().collect();
            plan = self.0.graph.plan_remove(&[doc_id.to_string()]);
            plan.extend(self.0.graph.plan_add(
                &[NewMap { doc_id, chunk_ids: &chunk_ids, map, vectors: &vecs }],
                &replacing,
                &self.0.config.graph,
            ));
            ops.extend(plan.ops());
        }
        let rec = DocumentRecord { mind_map: Some(kind), ..rec };
        ops.push(Op::Put(Record::Document(rec.clone())));
        self.0.commit(ops).await?;
        self.0.graph.apply(plan);
        self.0.corpus.docs.insert(rec.id.clone(), rec);
        Ok(())
    }

    /// Saves title–content pairs to the memory knowledge base (docs/ask-pipeline.md), each title
    /// embedded, in one commit. Returns the new records.
    /// An entry without a source chunk that is still stored is not saved (nothing could tell
    /// when it goes stale).
    pub async fn remember(&mut self, entries: Vec<(String, String, Vec<ChunkId>)>) -> Result<Vec<MemoryRecord>> {
        let entries: Vec<_> =
            entries.into_iter().filter(|e| !e.2.is_empty() && e.2.iter().all(|c| self.0.corpus.chunks.contains_key(c))).collect();
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let titles: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
        let vecs = self.0.embedder.embed_checked(&titles).await?;
        let recs = memory_entries(entries, vecs, self.0.clock.now_ms(), self.0.ask.memory.len());
        self.0.commit(recs.iter().map(|(r, _)| Op::Put(Record::Memory(r.clone()))).collect()).await?;
        let out = recs.iter().map(|(r, _)| r.clone()).collect();
        self.0.ask.memory.extend(recs);
        Ok(out)
    }

    /// Deletes every memory entry.
    pub async fn forget(&mut self) -> Result<usize> {
        let ops: Vec<Op> = self.0.ask.memory.iter().map(|(m, _)| Op::Delete(Collection::Memory, m.id.clone())).collect();
        let n = ops.len();
        if n > 0 {
            self.0.commit(ops).await?;
        }
        self.0.ask.memory.clear();
        Ok(n)
    }

    /// Keeps one ask trace (`json`: the trace object) in the `traces` collection.
    pub async fn keep_trace(&mut self, question: &str, json: String) -> Result<TraceRecord> {
        let rec = trace_record(question, json, self.0.clock.now_ms(), self.0.generation());
        self.0.commit(vec![Op::Put(Record::Trace(rec.clone()))]).await?;
        self.0.ask.traces.push(rec.clone());
        Ok(rec)
    }

    /// Deletes every kept trace.
    pub async fn clear_traces(&mut self) -> Result<usize> {
        let ops: Vec<Op> = self.0.ask.traces.iter().map(|t| Op::Delete(Collection::Traces, t.id.clone())).collect();
        let n = ops.len();
        if n > 0 {
            self.0.commit(ops).await?;
        }
        self.0.ask.traces.clear();
        Ok(n)
    }
}

impl<S: Store, E: Embedder> Engine<S, E> {
    /// The writes of what language models derive from the documents ([`Enrichment`]).
    pub fn enrichment(&mut self) -> Enrichment<'_, S, E> {
        Enrichment(self)
    }

    /// A stored vector of a chunk (its embedding), if any.
    pub fn chunk_vector(&self, chunk_id: &str) -> Option<&[f32]> {
        self.slots.get(chunk_id).and_then(|s| self.vectors.get(s))
    }
}
