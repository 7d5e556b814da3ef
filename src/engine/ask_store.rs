//! What the ask pipeline keeps in a loaded knowledge base: atomic questions (PIKE-RAG knowledge
//! atomizing) with their embeddings, the memory knowledge base (four-module RAG's memory, each
//! title embedded) and kept traces. The engine owns it because its writes must keep it in step
//! with the documents in the same commit (a removed chunk takes its questions and the memory
//! learned from it); the ask pipeline reads it through [`super::Engine::ask_store`] and writes it
//! through [`super::Enrichment`].
use std::collections::{HashMap, HashSet};

use crate::index::Slots;
use crate::index::ann::AnnParams;
use crate::index::ann::SegmentedIndex;
use crate::schema::*;

use super::{AtomicHit, Corpus};

/// The ask pipeline's records in a loaded knowledge base.
pub struct AskStore {
    /// Atomic questions by chunk (a chunk with an entry is atomized; docs/ask-pipeline.md).
    pub(super) atoms: HashMap<ChunkId, Vec<String>>,
    /// Slots of the atomic questions.
    pub(super) qslots: Slots<QuestionKey>,
    /// Their embeddings (HNSW segments + fresh buffer).
    pub(super) qvectors: SegmentedIndex,
    /// The memory knowledge base, with each title's embedding, oldest first.
    pub(super) memory: Vec<(MemoryRecord, Vec<f32>)>,
    /// Kept ask traces, oldest first.
    pub(super) traces: Vec<TraceRecord>,
}

impl AskStore {
    /// An empty store for embeddings of `dim` dimensions.
    pub(super) fn new(dim: usize, ann: AnnParams) -> Self {
        AskStore {
            atoms: HashMap::new(),
            qslots: Slots::default(),
            qvectors: SegmentedIndex::new(dim, ann),
            memory: Vec::new(),
            traces: Vec::new(),
        }
    }

    /// Chunks with atomic questions.
    pub fn atomized(&self) -> usize {
        self.atoms.len()
    }

    /// Chunks of `corpus` without atomic questions, in document order (documents by id, chunks
    /// by ordinal): the work an atomizing pass has left, so a pass that stopped resumes here.
    pub fn unatomized(&self, corpus: &Corpus) -> Vec<ChunkId> {
        corpus.chunk_ids_in_order().filter(|c| !self.atoms.contains_key(*c)).cloned().collect()
    }

    /// The atomic questions of a chunk (`None`: not atomized).
    pub fn questions(&self, chunk_id: &str) -> Option<&[String]> {
        self.atoms.get(chunk_id).map(Vec::as_slice)
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

    /// Kept traces, oldest first.
    pub fn traces(&self) -> &[TraceRecord] {
        &self.traces
    }

    /// The embedding of a chunk's `i`-th atomic question.
    pub fn question_vector(&self, chunk_id: &str, i: usize) -> Option<&[f32]> {
        self.qslots.get(&QuestionKey::new(chunk_id, i)).and_then(|s| self.qvectors.get(s))
    }

    /// The ids of the memory entries learned from any of the chunks `gone` (edited or removed),
    /// to delete with them and drop from memory once committed. What was learned from a note
    /// stands only while the note does.
    pub(super) fn memory_from(&self, gone: &[ChunkId]) -> HashSet<String> {
        let gone: HashSet<&str> = gone.iter().map(String::as_str).collect();
        self.memory.iter().filter(|(m, _)| m.sources.iter().any(|s| gone.contains(s.as_str()))).map(|(m, _)| m.id.clone()).collect()
    }

    /// Drops the committed `stale` entries from memory.
    pub(super) fn drop_memory(&mut self, stale: &HashSet<String>) {
        if !stale.is_empty() {
            self.memory.retain(|(m, _)| !stale.contains(&m.id));
        }
    }

    pub(super) fn index_questions(&mut self, cid: &str, qs: Vec<String>, vs: &[Vec<f32>]) {
        self.unindex_questions(cid);
        for (i, v) in vs.iter().enumerate() {
            let slot = self.qslots.insert(&QuestionKey::new(cid, i));
            self.qvectors.insert(slot, v);
        }
        self.atoms.insert(cid.to_string(), qs);
    }

    pub(super) fn unindex_questions(&mut self, cid: &str) {
        if let Some(qs) = self.atoms.remove(cid) {
            for i in 0..qs.len() {
                if let Some(slot) = self.qslots.remove(&QuestionKey::new(cid, i)) {
                    self.qvectors.remove(slot);
                }
            }
        }
    }
}

/// The entries of `memory` whose title has cosine ≥ `tau` with `qv`, best first.
pub(super) fn memory_matches(memory: &[(MemoryRecord, Vec<f32>)], qv: &[f32], tau: f32) -> Vec<(MemoryRecord, f32)> {
    let mut out: Vec<(MemoryRecord, f32)> = memory
        .iter()
        .map(|(m, v)| (m, crate::embed::vecmath::dot(qv, v)))
        .filter(|(_, s)| *s >= tau)
        .map(|(m, s)| (m.clone(), s))
        .collect();
    crate::sort::by(&mut out, |a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
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
    crate::sort::by(memory, |a, b| {
        a.0.created_at.partial_cmp(&b.0.created_at).unwrap_or(std::cmp::Ordering::Equal).then(a.0.id.cmp(&b.0.id))
    });
}

/// The record of a kept trace, created at `now` (ms) by the commit after store generation
/// `generation` (ids sort oldest first and never repeat within a store).
pub(super) fn trace_record(question: &str, json: String, now: f64, generation: u64) -> TraceRecord {
    TraceRecord { id: format!("t{:015}-{generation:020}", now as u64), created_at: now, question: question.to_string(), json }
}
