//! Writes of what language models derive from a knowledge base's documents: atomic questions
//! (PIKE-RAG knowledge atomizing) and replaced mind maps (PG-RAG) over either residency
//! ([`put_questions`], [`set_mind_map`]: one write path with `add`); automatic tags and forward
//! summaries (PIKE-RAG §4.2, [`super::enhance`]), memory entries and kept traces on a loaded one. The
//! model calls that produce them live in [`crate::ask`]; this is where they are stored and
//! indexed, each write one commit.
use std::collections::{HashMap, HashSet};

use crate::embed::Embedder;
use crate::error::{InputError, Result};
use crate::graph::mindmap;
use crate::graph::{GraphPlan, NewMap, node_inputs};
use crate::ports::{Collection, Op, Record, Store};
use crate::schema::*;

use super::Engine;
use super::ask_store::{memory_entries, trace_record};
use super::write::{Change, Residency};

/// The writes of what language models derive from the documents ([`Engine::enrichment`]).
pub struct Enrichment<'a, S: Store, E: Embedder>(pub(super) &'a mut Engine<S, E>);

impl<S: Store, E: Embedder> Enrichment<'_, S, E> {
    /// Stores the atomic questions of chunks (replacing any they had), embedded, in one atomic
    /// commit ([`put_questions`]). Chunks that no longer exist are skipped. Returns the questions
    /// stored.
    ///
    /// Errors: model and store errors (nothing is written).
    pub async fn put_questions(&mut self, items: Vec<(ChunkId, Vec<String>)>) -> Result<usize> {
        put_questions(self.0, items).await
    }

    /// Replaces a document's mind map in the pseudo-graph ([`set_mind_map`]).
    ///
    /// Errors: [`InputError::InvalidId`] for an unknown document; model and store errors
    /// (nothing is written).
    pub async fn set_mind_map(&mut self, doc_id: &str, map: Option<&mindmap::MindMap>, kind: MindMapKind) -> Result<()> {
        set_mind_map(self.0, doc_id, map, kind).await
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

/// Stores the atomic questions of chunks (replacing any they had), embedded, in one commit with
/// the index segments' question delta (so a lazy open reads them); then the parts take them
/// (indexed in memory, or the reader's questions since the base). Chunks that are no longer
/// stored are skipped; a chunk named twice keeps its last questions. Returns the questions
/// stored.
///
/// Errors: model and store errors (nothing is written).
pub(super) async fn put_questions<S: Store, E: Embedder>(
    kb: &mut impl Residency<S, E>,
    items: Vec<(ChunkId, Vec<String>)>,
) -> Result<usize> {
    let mut docs: Vec<DocId> = items.iter().filter_map(|(c, _)| Some(c.rsplit_once('#')?.0.to_string())).collect();
    crate::sort::ascending(&mut docs);
    docs.dedup();
    let doc_of: HashMap<ChunkId, DocId> =
        kb.chunks_of(&docs).into_iter().flat_map(|(d, cs)| cs.into_iter().map(move |c| (c, d.clone()))).collect();
    let items: Vec<(ChunkId, Vec<String>)> = items.into_iter().filter(|(c, _)| doc_of.contains_key(c)).collect();
    let flat: Vec<&str> = items.iter().flat_map(|(_, qs)| qs.iter().map(String::as_str)).collect();
    let total = flat.len();
    let batch = super::embed_batch(kb.config(), kb.embedder());
    let mut vecs = super::embed_distinct(kb.embedder(), batch, &flat, crate::types::Phase::Embed, &mut crate::ports::NoProgress).await?;
    drop(flat);
    let changed: Vec<ChunkId> = items.iter().map(|(c, _)| c.clone()).collect();
    let had = kb.question_counts(&changed).await?;
    let mut ops = Vec::new();
    for cid in &changed {
        if let Some(&n) = had.get(cid) {
            ops.push(Op::Delete(Collection::Questions, cid.clone()));
            ops.extend((0..n).map(|i| Op::Delete(Collection::Vectors, QuestionKey::new(cid, i).store_id())));
        }
    }
    let mut at = 0;
    for (cid, qs) in &items {
        ops.push(Op::Put(Record::Question(QuestionRecord { id: cid.clone(), doc_id: doc_of[cid].clone(), questions: qs.clone() })));
        for (i, v) in vecs[at..at + qs.len()].iter().enumerate() {
            ops.push(Op::Put(Record::Vector(VectorRecord::from_f32(&QuestionKey::new(cid, i).store_id(), "questions", v))));
        }
        at += qs.len();
    }
    let delta = kb.next_question_delta(&changed);
    ops.extend(delta.as_ref().map(|(op, _)| op.clone()));
    kb.commit_ops(ops).await?;
    let mut questions = Vec::with_capacity(items.len());
    for (cid, qs) in items.into_iter().rev() {
        let vs = vecs.split_off(vecs.len() - qs.len());
        questions.push((cid, qs, vs));
    }
    questions.reverse();
    kb.apply(Change { questions, question_delta: delta.map(|(_, d)| d), ..Change::default() })?;
    Ok(total)
}

/// Replaces a document's mind map in the pseudo-graph (embedding its nodes; fusion with the
/// other documents as at ingest) and records which map it is (`kind`: `"llm"` or
/// `"structural-fallback"`) in the document record, in one atomic commit; then the parts take it.
///
/// `map: None` keeps the graph as it is and only records `kind`.
///
/// Errors: [`InputError::InvalidId`] for an unknown document; model and store errors (nothing is
/// written).
pub(super) async fn set_mind_map<S: Store, E: Embedder>(
    kb: &mut impl Residency<S, E>,
    doc_id: &str,
    map: Option<&mindmap::MindMap>,
    kind: MindMapKind,
) -> Result<()> {
    let id = doc_id.to_string();
    let Some(rec) = kb.document_records(std::slice::from_ref(&id)).await?.remove(doc_id) else {
        return Err(InputError::InvalidId { id: doc_id.chars().take(64).collect() }.into());
    };
    let mut ops = Vec::new();
    let mut graph = GraphPlan::default();
    let params = kb.config().graph;
    if let (true, Some(map)) = (params.enabled, map) {
        let inputs = node_inputs(map);
        let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let batch = super::embed_batch(kb.config(), kb.embedder());
        let vecs = super::embed_distinct(kb.embedder(), batch, &refs, crate::types::Phase::Graph, &mut crate::ports::NoProgress).await?;
        let chunk_ids = kb.chunks_of(std::slice::from_ref(&id)).remove(doc_id).unwrap_or_default();
        let replacing: HashSet<String> = [id.clone()].into_iter().collect();
        let g = kb.graph_for_write().await?;
        graph = g.plan_remove(std::slice::from_ref(&id));
        graph.extend(g.plan_add(&[NewMap { doc_id, chunk_ids: &chunk_ids, map, vectors: &vecs }], &replacing, &params));
        ops.extend(graph.ops());
    }
    let rec = DocumentRecord { mind_map: Some(kind), ..rec };
    ops.push(Op::Put(Record::Document(rec.clone())));
    kb.commit_ops(ops).await?;
    kb.apply(Change { docs: vec![rec], graph, ..Change::default() })
}
