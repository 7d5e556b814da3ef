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
use crate::embed::Embedder;
use crate::engine::segments::next_delta;
use crate::engine::write::{AddPlan, AddVectors, AddWrite, Planner, add_write, graph_plan, remove_write};
use crate::error::{Result, StoreError};
use crate::graph::{GraphPlan, PlannedNode, PseudoGraph};
use crate::ports::{Collection, GENERATION_KEY, Op, Progress, Record, Store};
use crate::schema::*;
use crate::types::*;

impl<S: Store, E: Embedder> Reader<S, E> {
    /// Commits `ops` as one batch guarded by the view's generation ([`crate::engine::Engine`]'s
    /// commit: the batch checks the stored generation and stores the next one).
    ///
    /// Errors: [`StoreError::Conflict`] when another engine committed since (nothing is
    /// written); other store errors.
    pub(super) async fn commit(&mut self, mut ops: Vec<Op>) -> Result<()> {
        let g = self.parts.generation;
        ops.insert(0, Op::CheckGeneration(g));
        let next = g.saturating_add(1);
        ops.push(Op::Put(Record::Meta(MetaRecord { id: GENERATION_KEY.into(), value: next.to_string() })));
        self.store.commit(ops).await?;
        self.parts.generation = next;
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

    /// Step 1 of an `add` ([`crate::engine::Engine::add`]): the batch planned against the
    /// stored records of its documents.
    ///
    /// Errors: the input errors of [`crate::engine::Engine::add`]; store errors.
    pub(super) async fn plan_add(&self, docs: Vec<DocumentInput>, progress: &mut dyn Progress) -> Result<AddPlan> {
        let stored = self.documents(&docs.iter().map(|d| d.id.clone()).collect::<Vec<_>>()).await?;
        let planner = Planner { embedder: &self.embedder, config: &self.config, clock: &*self.clock, generation: self.parts.generation };
        planner.plan(docs, &|id| stored.get(id).map(|d| d.source_hash.as_str()), progress)
    }

    /// Step 3 of an `add`: the loaded engine's commit ([`crate::engine::Engine::add`]), with the
    /// stored records of the documents replaced read now, then the reader's delta.
    ///
    /// Errors: [`StoreError::Conflict`] when the view changed since the plan (plan again);
    /// store errors.
    pub(super) async fn commit_add(&mut self, plan: AddPlan, vectors: AddVectors, progress: &mut dyn Progress) -> Result<AddReport> {
        let AddPlan { mut report, pending, total, generation, .. } = plan;
        if generation != self.parts.generation {
            return Err(StoreError::Conflict { expected: generation, found: self.parts.generation }.into());
        }
        let old = self.old_chunks(&report.replaced);
        let questions = self.question_counts(&old).await?;
        let params = self.config.graph;
        let graph_plan = graph_plan(self.graph().await?, &report.replaced, &pending, &vectors, &params);
        let old_of = |id: &str| old.get(id).cloned().unwrap_or_default();
        let questions_of = |cid: &str| questions.get(cid).copied().unwrap_or(0);
        let AddWrite { mut ops, gone, chunks, .. } = add_write(pending, vectors.chunks, &old_of, &questions_of);
        ops.extend(graph_plan.ops());
        if ops.is_empty() {
            progress.report(ProgressEvent { phase: crate::types::Phase::Done, done: total, total });
            return Ok(report);
        }
        let documents = usize::try_from(self.parts.delta.documents).unwrap_or(usize::MAX).saturating_add(report.added.len());
        report.chunks = chunks.len();
        let added: Vec<(ChunkId, (PostingRecord, Vec<f32>))> = chunks.into_iter().map(|(c, p, v)| (c.id, (p, v))).collect();
        progress.report(ProgressEvent { phase: crate::types::Phase::Store, done: 0, total: 1 });
        self.commit_write(ops, &old, &gone, added, documents, graph_plan).await?;
        progress.report(ProgressEvent { phase: crate::types::Phase::Done, done: total, total });
        Ok(report)
    }

    /// [`crate::engine::Engine::remove`] without loading the knowledge base.
    ///
    /// Errors: store errors ([`StoreError::Conflict`]: nothing written).
    pub(super) async fn remove(&mut self, ids: &[String]) -> Result<RemoveReport> {
        let stored = self.documents(ids).await?;
        let present: Vec<String> = ids.iter().filter(|id| stored.contains_key(*id)).cloned().collect();
        let old = self.old_chunks(&present);
        let questions = self.question_counts(&old).await?;
        let stored_of = |id: &str| stored.contains_key(id);
        let old_of = |id: &str| old.get(id).cloned().unwrap_or_default();
        let questions_of = |cid: &str| questions.get(cid).copied().unwrap_or(0);
        let (report, mut ops, gone) = remove_write(ids, &stored_of, &old_of, &questions_of);
        let graph_plan = self.graph().await?.plan_remove(&report.removed);
        ops.extend(graph_plan.ops());
        if ops.is_empty() {
            return Ok(report);
        }
        let documents = usize::try_from(self.parts.delta.documents).unwrap_or(usize::MAX).saturating_sub(report.removed.len());
        self.commit_write(ops, &old, &gone, Vec::new(), documents, graph_plan).await?;
        Ok(report)
    }

    /// Commits a write's `ops` with the memory entries learned from `gone` chunks deleted and the
    /// next delta; then the reader follows: tombstones, the delta's chunks (`added` appended),
    /// the graph.
    ///
    /// Errors: store errors ([`StoreError::Conflict`]: nothing written, nothing changed).
    async fn commit_write(
        &mut self,
        mut ops: Vec<Op>,
        old: &HashMap<DocId, Vec<ChunkId>>,
        gone: &[ChunkId],
        added: Vec<(ChunkId, (PostingRecord, Vec<f32>))>,
        documents: usize,
        graph_plan: GraphPlan,
    ) -> Result<()> {
        let ordinals = self.base_ordinals(old);
        let new: Vec<ChunkId> = added.iter().map(|(id, _)| id.clone()).collect();
        let (op, delta) = next_delta(&self.parts.delta, &|id| ordinals.get(id).copied(), gone, &new, documents);
        ops.push(op);
        // Memory learned from a deleted chunk goes with it (a write that deletes none reads none).
        if !gone.is_empty() {
            let gone_set: HashSet<&str> = gone.iter().map(String::as_str).collect();
            for m in self.store.scan(Collection::Memory).await?.memory {
                if m.sources.iter().any(|s| gone_set.contains(s.as_str())) {
                    ops.push(Op::Delete(Collection::Memory, m.id));
                }
            }
        }
        self.commit(ops).await?;
        // Committed: the reader follows.
        let mut kept: HashMap<ChunkId, (PostingRecord, Vec<f32>)> =
            self.parts.delta.added.drain(..).zip(std::mem::take(&mut self.parts.delta_chunks)).collect();
        kept.extend(added);
        let chunks: Option<Vec<(PostingRecord, Vec<f32>)>> = delta.added.iter().map(|id| kept.remove(id)).collect();
        // Unreachable: the delta's chunks are those it had and those added; its tombstones are
        // ordinals of the head (`base_ordinals`).
        let unreadable =
            || StoreError::Backend { reason: "the lazily opened delta went out of step; open the knowledge base again".into() };
        self.parts.set_delta(delta, chunks.ok_or_else(unreadable)?).ok_or_else(unreadable)?;
        if let Some(g) = self.graph.as_mut() {
            g.apply(graph_plan);
        }
        Ok(())
    }

    /// The stored records of the documents `ids` that exist.
    async fn documents(&self, ids: &[String]) -> Result<HashMap<DocId, DocumentRecord>> {
        let got = self.store.get_many(Collection::Documents, ids).await?;
        Ok(got.into_iter().filter_map(|r| if let Some(Record::Document(d)) = r { Some((d.id.clone(), d)) } else { None }).collect())
    }

    /// The live chunks of the documents `ids`: the base's (not removed since) in order, then the
    /// delta's. Read from the head and the delta, not from a stored count.
    fn old_chunks(&self, ids: &[String]) -> HashMap<DocId, Vec<ChunkId>> {
        let p = &self.parts;
        ids.iter()
            .map(|doc| {
                let mut cs: Vec<ChunkId> = self
                    .base_range(doc)
                    .into_iter()
                    .filter(|&o| !p.dead.get(o as usize).copied().unwrap_or(true))
                    .filter_map(|o| p.head.chunks.get(o as usize).cloned())
                    .collect();
                cs.extend(p.delta.added.iter().filter(|c| chunk_ordinal(c, doc).is_some()).cloned());
                (doc.clone(), cs)
            })
            .collect()
    }

    /// How many atomic questions each of `old`'s chunks has (those with none are left out).
    async fn question_counts(&self, old: &HashMap<DocId, Vec<ChunkId>>) -> Result<HashMap<ChunkId, usize>> {
        let ids: Vec<ChunkId> = old.values().flatten().cloned().collect();
        let got = self.store.get_many(Collection::Questions, &ids).await?;
        Ok(got.into_iter().filter_map(|r| if let Some(Record::Question(q)) = r { Some((q.id, q.questions.len())) } else { None }).collect())
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
        if let Some(i) = self.parts.delta.added.iter().position(|c| c == chunk) {
            return Some(n + i as u32);
        }
        let head = &self.parts.head;
        let o = self.base_range(doc).into_iter().find(|&o| head.chunks.get(o as usize).is_some_and(|c| c == chunk))?;
        (!self.parts.dead.get(o as usize).copied().unwrap_or(true)).then_some(o)
    }
}

/// The ordinal of chunk `chunk` of document `doc` ([`chunk_id`]'s `{doc}#{ordinal}`).
fn chunk_ordinal(chunk: &str, doc: &str) -> Option<u32> {
    chunk.strip_prefix(doc)?.strip_prefix('#')?.parse().ok()
}
