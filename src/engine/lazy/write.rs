//! Writes and the graph on a lazily opened knowledge base, without loading it whole: an `add` or
//! `remove` reads the records of the documents it touches (their chunks are found in the head and
//! the delta, and their atomic questions read),
//! the memory entries, and the pseudo-graph; it commits the same records a loaded engine would
//! (the shared steps of [`crate::engine::write`]), with the delta of the index segments; then the
//! reader's delta — BM25 and vectors of the chunks added since the base, tombstones — follows.
//!
//! The pseudo-graph is read on first need (a write, a graph search): its nodes with their
//! vectors and its edges, not the chunks' vectors, postings or records.
use std::collections::{HashMap, HashSet};

use super::Reader;
use crate::config::Config;
use crate::embed::Embedder;
use crate::engine::segments::next_delta;
use crate::engine::write::{Change, Residency};
use crate::error::{Result, StoreError};
use crate::graph::{GraphPlan, PlannedNode, PseudoGraph};
use crate::index::segment::{Delta, QuestionDelta, SegmentKey};
use crate::ports::{Clock, Collection, Op, Record, Store};
use crate::schema::*;

impl<S: Store, E: Embedder> Reader<S, E> {
    /// Commits `ops` as one batch guarded by the view's generation ([`crate::engine::Engine`]'s
    /// commit: the batch checks the stored generation and stores the next one).
    ///
    /// Errors: [`StoreError::Conflict`] when another engine committed since (nothing is
    /// written); other store errors.
    pub(super) async fn commit(&mut self, ops: Vec<Op>) -> Result<()> {
        self.parts.generation = crate::ports::commit_guarded(&self.store, self.parts.generation, ops).await?;
        self.memory = None;
        Ok(())
    }

    /// The pseudo-graph, read now if not yet: every node with its vector, then every edge (what
    /// does not form a graph is skipped, as the full open does; the full open also deletes it).
    ///
    /// Errors: store errors.
    pub(super) async fn graph(&mut self) -> Result<&PseudoGraph> {
        if self.graph.is_none() {
            let nodes = self.store.scan(Collection::GraphNodes).await?.graph_nodes;
            let edges = self.store.scan(Collection::GraphEdges).await?.graph_edges;
            let ids: Vec<String> = nodes.iter().map(|n| n.id.clone()).collect();
            let vectors = self.store.get_many(Collection::Vectors, &ids).await?;
            let dim = self.embedder.dim();
            let mut plan = GraphPlan::default();
            for (n, v) in nodes.into_iter().zip(vectors) {
                let vector = match v {
                    Some(Record::Vector(v)) => v.to_f32().filter(|d| d.len() == dim),
                    _ => None,
                };
                let chunk_ordinal = n.chunk_id.as_deref().zip(n.doc_id.as_deref()).and_then(|(c, d)| chunk_ordinal(c, d));
                plan.nodes.push(PlannedNode { record: n, vector, chunk_ordinal });
            }
            plan.edges = edges;
            let mut graph = PseudoGraph::with_ann(dim, self.config.ann);
            graph.apply(plan);
            self.graph = Some(graph);
        }
        Ok(self.graph.get_or_insert_with(|| PseudoGraph::with_ann(self.embedder.dim(), self.config.ann)))
    }

    /// The stored records of the documents `ids` that exist.
    pub(super) async fn documents(&self, ids: &[String]) -> Result<HashMap<DocId, DocumentRecord>> {
        let got = self.store.get_many(Collection::Documents, ids).await?;
        Ok(got.into_iter().filter_map(|r| if let Some(Record::Document(d)) = r { Some((d.id.clone(), d)) } else { None }).collect())
    }

    /// The live chunks of the documents `ids`: the base's (not removed since) in order, then the
    /// delta's. Read from the head and the delta, not from a stored count.
    pub(super) fn old_chunks(&self, ids: &[String]) -> HashMap<DocId, Vec<ChunkId>> {
        let p = &self.parts;
        // The delta's chunks by document, read once (a chunk id is `{doc}#{ordinal}`).
        let mut added: HashMap<&str, Vec<u32>> = HashMap::new();
        for (i, c) in p.delta.added.iter().enumerate() {
            if let Some((doc, _)) = c.rsplit_once('#') {
                added.entry(doc).or_default().push(i as u32);
            }
        }
        // A head not grouped by document is scanned once for all of them.
        let mut scanned: HashMap<&str, Vec<u32>> = HashMap::new();
        if !p.grouped && ids.len() > 1 {
            let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
            for (o, d) in p.head.doc_of.iter().enumerate() {
                if let Some(doc) = p.head.documents.get(*d as usize).filter(|doc| wanted.contains(doc.as_str())) {
                    scanned.entry(doc.as_str()).or_default().push(o as u32);
                }
            }
        }
        ids.iter()
            .map(|doc| {
                let base =
                    if !p.grouped && ids.len() > 1 { scanned.get(doc.as_str()).cloned().unwrap_or_default() } else { self.base_range(doc) };
                let mut cs: Vec<ChunkId> = base
                    .into_iter()
                    .filter(|&o| !p.dead.get(o as usize).copied().unwrap_or(true))
                    .filter_map(|o| p.head.chunks.get(o as usize).cloned())
                    .collect();
                cs.extend(added.get(doc.as_str()).into_iter().flatten().filter_map(|&i| p.delta.added.get(i as usize).cloned()));
                (doc.clone(), cs)
            })
            .collect()
    }

    /// Base ordinals of document `doc`'s chunks. The base lists documents by id and their chunks
    /// together, so they are found by binary search; a head not in that order is scanned.
    fn base_range(&self, doc: &str) -> Vec<u32> {
        let head = &self.parts.head;
        if !self.parts.grouped {
            let named = |d: u32| head.documents.get(d as usize).is_some_and(|n| n == doc);
            return (0..head.doc_of.len() as u32).filter(|&o| named(head.doc_of[o as usize])).collect();
        }
        let Ok(d) = head.documents.binary_search_by(|n| n.as_str().cmp(doc)) else { return Vec::new() };
        let d = d as u32;
        (head.doc_of.partition_point(|&x| x < d) as u32..head.doc_of.partition_point(|&x| x <= d) as u32).collect()
    }

    /// Base ordinals of the chunks of `docs` that the base holds.
    fn base_ordinals(&self, docs: &HashMap<DocId, Vec<ChunkId>>) -> HashMap<ChunkId, u32> {
        let head = &self.parts.head;
        let mut out = HashMap::new();
        for (doc, chunks) in docs {
            let wanted: HashSet<&str> = chunks.iter().map(String::as_str).collect();
            for o in self.base_range(doc) {
                if let Some(id) = head.chunks.get(o as usize).filter(|id| wanted.contains(id.as_str())) {
                    out.insert(id.clone(), o);
                }
            }
        }
        out
    }

    /// The slot of a live chunk: its base ordinal, or the base's size plus its place in the delta.
    pub(super) fn slot_of(&self, chunk: &str, doc: &str) -> Option<u32> {
        let n = self.parts.head.chunks.len() as u32;
        if let Some(i) = self.parts.delta_place.get(chunk) {
            return Some(n + i);
        }
        let head = &self.parts.head;
        let o = self.base_range(doc).into_iter().find(|&o| head.chunks.get(o as usize).is_some_and(|c| c == chunk))?;
        (!self.parts.dead.get(o as usize).copied().unwrap_or(true)).then_some(o)
    }
}

/// A lazily opened knowledge base as the one write path sees it ([`crate::engine::write`]): the
/// documents' records, their chunks (from the head and the delta) and their atomic questions are
/// read, the memory entries scanned when a chunk goes, the pseudo-graph read on first need; a
/// committed write extends the delta, which the reader then follows.
impl<S: Store, E: Embedder> Residency<S, E> for Reader<S, E> {
    fn store(&self) -> &S {
        &self.store
    }

    fn embedder(&self) -> &E {
        &self.embedder
    }

    fn config(&self) -> &Config {
        &self.config
    }

    fn clock(&self) -> &dyn Clock {
        &*self.clock
    }

    fn view_generation(&self) -> u64 {
        self.parts.generation
    }

    fn document_count(&self) -> usize {
        usize::try_from(self.parts.delta.documents).unwrap_or(usize::MAX)
    }

    fn languages(&self) -> &[crate::text::Language] {
        &self.parts.languages
    }

    async fn source_hashes(&self, ids: &[String]) -> Result<HashMap<DocId, String>> {
        Ok(self.documents(ids).await?.into_iter().map(|(id, d)| (id, d.source_hash)).collect())
    }

    fn chunks_of(&self, ids: &[String]) -> HashMap<DocId, Vec<ChunkId>> {
        self.old_chunks(ids)
    }

    fn next_question_delta(&self, chunks: &[ChunkId]) -> Option<(Op, QuestionDelta)> {
        let mut d = self.parts.question_order.clone();
        d.extend(chunks.iter().filter(|c| !self.parts.question_delta.contains(*c)).cloned());
        let data = crate::index::segment::encode_question_delta(&d);
        Some((Op::Put(Record::Segment(SegmentRecord { id: SegmentKey::QuestionDelta.store_id(), data })), d))
    }

    async fn document_records(&self, ids: &[String]) -> Result<HashMap<DocId, DocumentRecord>> {
        self.documents(ids).await
    }

    async fn question_counts(&self, chunks: &[ChunkId]) -> Result<HashMap<ChunkId, usize>> {
        let got = self.store.get_many(Collection::Questions, chunks).await?;
        Ok(got.into_iter().filter_map(|r| if let Some(Record::Question(q)) = r { Some((q.id, q.questions.len())) } else { None }).collect())
    }

    async fn graph_for_write(&mut self) -> Result<&PseudoGraph> {
        self.graph().await
    }

    fn next_delta(&self, old: &HashMap<DocId, Vec<ChunkId>>, gone: &[ChunkId], added: &[ChunkId], documents: usize) -> Option<(Op, Delta)> {
        let ordinals = self.base_ordinals(old);
        Some(next_delta(&self.parts.delta, &|id| ordinals.get(id).copied(), gone, added, documents))
    }

    async fn memory_from(&self, gone: &[ChunkId]) -> Result<HashSet<String>> {
        let gone: HashSet<&str> = gone.iter().map(String::as_str).collect();
        let memory = self.store.scan(Collection::Memory).await?.memory;
        Ok(memory.into_iter().filter(|m| m.sources.iter().any(|s| gone.contains(s.as_str()))).map(|m| m.id).collect())
    }

    async fn commit_ops(&mut self, ops: Vec<Op>) -> Result<()> {
        self.commit(ops).await
    }

    /// Follows the committed write: the delta (tombstones, the delta's chunks with the new ones
    /// appended), the atomic questions written since the base, the graph when it was read.
    fn apply(&mut self, change: Change) -> Result<()> {
        // Unreachable: the delta's chunks are those it had and those added; its tombstones are
        // ordinals of the head (`base_ordinals`); a write of chunks always carries a delta here.
        let unreadable =
            || StoreError::Backend { reason: "the lazily opened delta went out of step; open the knowledge base again".into() };
        match change.delta {
            Some(delta) => {
                let mut kept: HashMap<ChunkId, (PostingRecord, Vec<f32>)> =
                    self.parts.delta.added.drain(..).zip(std::mem::take(&mut self.parts.delta_chunks)).collect();
                kept.extend(change.chunks.into_iter().map(|(c, p, v)| (c.id, (p, v))));
                let chunks: Option<Vec<(PostingRecord, Vec<f32>)>> = delta.added.iter().map(|id| kept.remove(id)).collect();
                if chunks.and_then(|c| self.parts.set_delta(delta, c)).is_none() {
                    // Nothing of the delta stands: no chunk of it is live until a new open.
                    self.parts.delta_place.clear();
                    return Err(unreadable().into());
                }
            }
            None if !change.chunks.is_empty() || !change.gone.is_empty() => return Err(unreadable().into()),
            None => {}
        }
        // The questions of a deleted chunk went with it (a chunk id may come back, without them),
        // and a chunk's questions written now replace those it had.
        let gone: HashSet<&str> = change.gone.iter().chain(change.questions.iter().map(|(c, _, _)| c)).map(String::as_str).collect();
        self.parts.delta_questions.retain(|(c, _, _)| !gone.contains(c.as_str()));
        for (c, _, vs) in change.questions {
            self.parts.delta_questions.extend(vs.into_iter().enumerate().map(|(i, v)| (c.clone(), i as u32, v)));
        }
        if let Some(d) = change.question_delta {
            self.parts.set_question_delta(d);
        }
        if let Some(langs) = change.languages {
            self.parts.languages = langs;
        }
        if let Some(g) = self.graph.as_mut() {
            g.apply(change.graph);
        }
        Ok(())
    }
}

/// The ordinal of chunk `chunk` of document `doc` ([`chunk_id`]'s `{doc}#{ordinal}`).
fn chunk_ordinal(chunk: &str, doc: &str) -> Option<u32> {
    chunk.strip_prefix(doc)?.strip_prefix('#')?.parse().ok()
}
