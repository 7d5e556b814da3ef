//! The facade: open / add / remove / search / stats / clear over a [`Store`] and an [`Embedder`].
//!
//! The store is the source of truth; the indexes ([`Bm25Index`], [`FlatIndex`]) are rebuilt
//! from it at [`Engine::open`] and kept in step on every write. A write first builds the whole
//! batch (parse, chunk, embed), then commits it to the store in one atomic batch, and only then
//! touches the in-memory indexes: a failure at any step leaves both store and indexes as they
//! were.
use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::embed::Embedder;
use crate::error::{InputError, ModelError, Result, StoreError};
use crate::graph::mindmap;
use crate::graph::{GraphPlan, GraphSearch, NewMap, PseudoGraph, node_inputs};
use crate::index::ann::SegmentedIndex;
use crate::index::bm25::{self, Bm25Index, contains_phrase, parse_query, term_frequencies};
use crate::index::{Slots, top_k};
use crate::ports::{Clock, Collection, Op, Progress, Record, SCHEMA_VERSION, Store};
use crate::retrieve::{rrf, snippet};
use crate::text::{self, analyze};
use crate::types::*;

/// Search options.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SearchOptions {
    /// Hits to return. Default 10; range 1..=1000.
    pub k: usize,
    /// Retriever(s). Default hybrid.
    pub mode: SearchMode,
    /// Read the query as plain text: quotes, `-` and `^` are ordinary characters, so nothing is
    /// filtered or boosted (for natural-language questions). Default false.
    pub literal: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions { k: 10, mode: SearchMode::Hybrid, literal: false }
    }
}

impl SearchOptions {
    /// `k` hits from `mode`, with the query syntax on.
    pub fn new(k: usize, mode: SearchMode) -> Self {
        SearchOptions { k, mode, literal: false }
    }
}

/// A knowledge base: store + embedder + in-memory indexes.
pub struct Engine<S: Store, E: Embedder> {
    store: S,
    embedder: E,
    config: Config,
    clock: Box<dyn Clock>,
    docs: HashMap<DocId, DocumentRecord>,
    chunks: HashMap<ChunkId, ChunkRecord>,
    doc_chunks: HashMap<DocId, Vec<ChunkId>>,
    postings: HashMap<ChunkId, PostingRecord>,
    slots: Slots,
    bm25: Bm25Index,
    vectors: SegmentedIndex,
    graph: PseudoGraph,
    /// `ann` records that failed to load (deleted by the next [`Engine::maintain`]).
    stale_ann: Vec<String>,
    /// Atomic questions by chunk (a chunk with an entry is atomized; docs/ask-pipeline.md).
    atoms: HashMap<ChunkId, Vec<String>>,
    /// Slots of the atomic questions, ids `"{chunk_id}?{i}"`.
    qslots: Slots,
    /// Their embeddings (HNSW segments + fresh buffer).
    qvectors: SegmentedIndex,
    /// The memory knowledge base, with each title's embedding.
    memory: Vec<(MemoryRecord, Vec<f32>)>,
    /// Kept ask traces, oldest first.
    traces: Vec<TraceRecord>,
}

/// The id of atomic question `i` of chunk `chunk_id` (its `vectors` key).
pub fn question_id(chunk_id: &str, i: usize) -> String {
    format!("{chunk_id}?{i}")
}

/// An atomic question found for a query (PIKE-RAG path (b)).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AtomicHit {
    /// The question.
    pub question: String,
    /// The chunk that answers it.
    pub chunk_id: ChunkId,
    /// Cosine similarity of the question to the query.
    pub score: f32,
}

/// What one [`Engine::maintain`] step did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SealReport {
    /// The vector collection sealed: `"chunks"`, `"topics"` or `"facts"` (empty when the step
    /// only deleted unreadable segments).
    pub collection: String,
    /// Vectors in the new segment.
    pub vectors: usize,
    /// Older segments merged into it.
    pub merged: usize,
    /// Sealed segments of the collection afterwards.
    pub segments: usize,
}

fn meta(id: &str, value: serde_json::Value) -> Op {
    Op::Put(Record::Meta(MetaRecord { id: id.into(), value: value.to_string() }))
}

/// Checks a document id: 1..=512 characters.
fn check_id(id: &str) -> Result<()> {
    if id.is_empty() || id.chars().count() > 512 {
        return Err(InputError::InvalidId { id: id.chars().take(64).collect() }.into());
    }
    Ok(())
}

/// Decodes uploaded bytes as UTF-8 (a leading BOM is dropped); invalid bytes are an error with the
/// offset of the first bad sequence, never silently replaced.
pub fn decode_utf8(id: &str, bytes: &[u8]) -> Result<String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_string()),
        Err(e) => Err(InputError::InvalidUtf8 { id: id.to_string(), offset: e.valid_up_to() }.into()),
    }
}

impl<S: Store, E: Embedder> Engine<S, E> {
    /// Opens a knowledge base: reads everything from `store`, checks the schema version and the
    /// model recorded in `meta`, and rebuilds the indexes. A new store gets its `meta` written.
    ///
    /// Errors: [`StoreError::VersionTooNew`], [`ModelError::Mismatch`], [`StoreError::Corrupt`],
    /// and any store error.
    pub async fn open(store: S, embedder: E, config: Config, clock: Box<dyn Clock>) -> Result<Self> {
        config.validate()?;
        let contents = store.load().await?;
        let mut eng = Engine {
            vectors: SegmentedIndex::new(embedder.dim(), config.ann),
            graph: PseudoGraph::with_ann(embedder.dim(), config.ann),
            stale_ann: Vec::new(),
            atoms: HashMap::new(),
            qslots: Slots::default(),
            qvectors: SegmentedIndex::new(embedder.dim(), config.ann),
            memory: Vec::new(),
            traces: Vec::new(),
            store,
            embedder,
            config,
            clock,
            docs: HashMap::new(),
            chunks: HashMap::new(),
            doc_chunks: HashMap::new(),
            postings: HashMap::new(),
            slots: Slots::default(),
            bm25: Bm25Index::default(),
        };
        let metas: HashMap<&str, &str> = contents.meta.iter().map(|m| (m.id.as_str(), m.value.as_str())).collect();
        let corrupt = |key: &str, reason: String| StoreError::Corrupt { collection: "meta".into(), key: key.into(), reason };
        match metas.get("schema") {
            Some(v) => {
                let found: u32 = serde_json::from_str(v).map_err(|e| corrupt("schema", e.to_string()))?;
                if found > SCHEMA_VERSION {
                    return Err(StoreError::VersionTooNew { name: String::new(), found, supported: SCHEMA_VERSION }.into());
                }
                let model: String = metas
                    .get("model")
                    .map(|v| serde_json::from_str(v).map_err(|e| corrupt("model", e.to_string())))
                    .transpose()?
                    .unwrap_or_default();
                let dim: usize =
                    metas.get("dim").map(|v| serde_json::from_str(v).map_err(|e| corrupt("dim", e.to_string()))).transpose()?.unwrap_or(0);
                if model != eng.embedder.model_id() || dim != eng.embedder.dim() {
                    return Err(ModelError::Mismatch {
                        stored: model,
                        stored_dim: dim,
                        loaded: eng.embedder.model_id().into(),
                        loaded_dim: eng.embedder.dim(),
                    }
                    .into());
                }
            }
            None => eng.write_meta().await?,
        }
        let mut vectors: HashMap<String, Vec<f32>> = HashMap::new();
        for v in contents.vectors {
            let data = v.to_f32().filter(|d| d.len() == eng.embedder.dim()).ok_or_else(|| StoreError::Corrupt {
                collection: "vectors".into(),
                key: v.id.clone(),
                reason: format!("expected {} f32 values, found {} bytes", eng.embedder.dim(), v.data.len()),
            })?;
            vectors.insert(v.id, data);
        }
        let mut postings: HashMap<String, PostingRecord> = contents.postings.into_iter().map(|p| (p.id.clone(), p)).collect();
        for d in contents.documents {
            eng.docs.insert(d.id.clone(), d);
        }
        for c in contents.chunks {
            let p = match postings.remove(&c.id) {
                Some(p) => p,
                None => {
                    let (terms, length) = term_frequencies(&c.text);
                    PostingRecord { id: c.id.clone(), length, terms }
                }
            };
            let v = vectors.remove(&c.id).ok_or_else(|| StoreError::Corrupt {
                collection: "vectors".into(),
                key: c.id.clone(),
                reason: "chunk has no vector".into(),
            })?;
            eng.index_chunk(c, p, &v);
        }
        for ids in eng.doc_chunks.values_mut() {
            ids.sort_by_key(|id| id.rsplit('#').next().and_then(|n| n.parse::<u32>().ok()).unwrap_or(0));
        }
        // The pseudo-graph: every stored node with its vector, then every edge.
        let mut plan = GraphPlan::default();
        for n in contents.graph_nodes {
            let v = vectors.remove(&n.id);
            plan.nodes.push((n, v));
        }
        plan.edges = contents.graph_edges;
        let skipped = eng.graph.apply(plan);
        if let Some(e) = skipped.first() {
            return Err(StoreError::Corrupt {
                collection: "graph_edges".into(),
                key: e.clone(),
                reason: "an end of the edge is not stored".into(),
            }
            .into());
        }
        // Atomic questions: a record whose chunk is gone or whose vectors are missing is skipped
        // (the chunk counts as not atomized, so the next pass redoes it).
        for q in contents.questions {
            if !eng.chunks.contains_key(&q.id) {
                continue;
            }
            let vs: Option<Vec<Vec<f32>>> = (0..q.questions.len()).map(|i| vectors.remove(&question_id(&q.id, i))).collect();
            if let Some(vs) = vs {
                eng.index_questions(&q.id, q.questions, &vs);
            }
        }
        for m in contents.memory {
            let v = VectorRecord { id: m.id.clone(), collection: "memory".into(), data: m.embedding.clone() }.to_f32().unwrap_or_default();
            if v.len() == eng.embedder.dim() {
                eng.memory.push((m, v));
            }
        }
        eng.memory
            .sort_by(|a, b| a.0.created_at.partial_cmp(&b.0.created_at).unwrap_or(std::cmp::Ordering::Equal).then(a.0.id.cmp(&b.0.id)));
        eng.traces = contents.traces;
        // Sealed HNSW segments, over the fresh buffers that now hold every live vector. A segment
        // that does not load is only a lost speed-up: its vectors stay in the exact buffer.
        for r in contents.ann {
            let attached = match r.collection.as_str() {
                "chunks" => {
                    let slots: Vec<Option<u32>> = r.ids.iter().map(|id| eng.slots.get(id)).collect();
                    eng.vectors.attach(r.seq, &r.data, &slots).is_ok()
                }
                "questions" => {
                    let slots: Vec<Option<u32>> = r.ids.iter().map(|id| eng.qslots.get(id)).collect();
                    eng.qvectors.attach(r.seq, &r.data, &slots).is_ok()
                }
                "topics" | "facts" => {
                    let kind = if r.collection == "topics" { NodeKind::Topic } else { NodeKind::Fact };
                    let slots: Vec<Option<u32>> = r.ids.iter().map(|id| eng.graph.slot_of(id)).collect();
                    eng.graph.ann_mut(kind).is_some_and(|ix| ix.attach(r.seq, &r.data, &slots).is_ok())
                }
                _ => false,
            };
            if !attached {
                eng.stale_ann.push(r.id);
            }
        }
        Ok(eng)
    }

    async fn write_meta(&self) -> Result<()> {
        self.store
            .commit(vec![
                meta("schema", SCHEMA_VERSION.into()),
                meta("model", self.embedder.model_id().into()),
                meta("dim", self.embedder.dim().into()),
            ])
            .await?;
        Ok(())
    }

    fn index_chunk(&mut self, c: ChunkRecord, p: PostingRecord, v: &[f32]) {
        let slot = self.slots.insert(&c.id);
        self.bm25.insert(slot, &p.terms, p.length);
        self.vectors.insert(slot, v);
        self.doc_chunks.entry(c.doc_id.clone()).or_default().push(c.id.clone());
        self.postings.insert(c.id.clone(), p);
        self.chunks.insert(c.id.clone(), c);
    }

    fn index_questions(&mut self, cid: &str, qs: Vec<String>, vs: &[Vec<f32>]) {
        self.unindex_questions(cid);
        for (i, v) in vs.iter().enumerate() {
            let slot = self.qslots.insert(&question_id(cid, i));
            self.qvectors.insert(slot, v);
        }
        self.atoms.insert(cid.to_string(), qs);
    }

    fn unindex_questions(&mut self, cid: &str) {
        if let Some(qs) = self.atoms.remove(cid) {
            for i in 0..qs.len() {
                if let Some(slot) = self.qslots.remove(&question_id(cid, i)) {
                    self.qvectors.remove(slot);
                }
            }
        }
    }

    /// Store deletes of a chunk's atomic questions and their vectors.
    fn question_deletes(&self, cid: &str, ops: &mut Vec<Op>) {
        if let Some(qs) = self.atoms.get(cid) {
            ops.push(Op::Delete(Collection::Questions, cid.to_string()));
            for i in 0..qs.len() {
                ops.push(Op::Delete(Collection::Vectors, question_id(cid, i)));
            }
        }
    }

    fn unindex_doc(&mut self, doc_id: &str) {
        for cid in self.doc_chunks.remove(doc_id).unwrap_or_default() {
            self.unindex_questions(&cid);
            if let Some(slot) = self.slots.remove(&cid) {
                if let Some(p) = self.postings.remove(&cid) {
                    self.bm25.remove(slot, &p.terms);
                }
                self.vectors.remove(slot);
            }
            self.chunks.remove(&cid);
        }
        self.docs.remove(doc_id);
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The pseudo-graph.
    pub fn graph(&self) -> &PseudoGraph {
        &self.graph
    }

    /// The embedder.
    pub fn embedder(&self) -> &E {
        &self.embedder
    }

    /// The options in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Texts per embedding call at ingest: `embedBatch`, else the embedder's preferred batch.
    pub fn embed_batch(&self) -> usize {
        self.config.embed_batch.unwrap_or_else(|| self.embedder.preferred_batch()).max(1)
    }

    /// Changes the options that only act at search time (BM25 parameters, `rrf_k`,
    /// `fusion_depth`, the graph's seeds, candidates and PGR parameters); the others keep their
    /// values.
    ///
    /// Errors: [`InputError::InvalidOption`] when `search` fails [`Config::validate`].
    pub fn set_search_config(&mut self, search: &Config) -> Result<()> {
        let next = Config {
            bm25_k1: search.bm25_k1,
            bm25_b: search.bm25_b,
            bm25_idf: search.bm25_idf,
            bm25_epsilon: search.bm25_epsilon,
            rrf_k: search.rrf_k,
            fusion_depth: search.fusion_depth,
            graph: crate::graph::GraphParams {
                enabled: self.config.graph.enabled,
                super_topic_threshold: self.config.graph.super_topic_threshold,
                super_fact_threshold: self.config.graph.super_fact_threshold,
                ..search.graph
            },
            ..self.config.clone()
        };
        next.validate()?;
        self.config = next;
        Ok(())
    }

    /// Adds documents as one atomic batch.
    ///
    /// Per document: unchanged (same id and same hash of format, title and text) → nothing is
    /// written; changed → its old chunks, vectors and postings are replaced in the same
    /// transaction; new → inserted. The whole batch is validated, parsed, chunked and embedded
    /// before anything is written.
    ///
    /// Errors (nothing is written): [`InputError::DuplicateId`], [`InputError::InvalidId`],
    /// [`InputError::TooLarge`] (over `max_document_bytes`), [`InputError::EmptyDocument`] (no
    /// text after parsing), model and store errors.
    pub async fn add(&mut self, docs: Vec<DocumentInput>, progress: &mut dyn Progress) -> Result<AddReport> {
        let mut seen = HashSet::new();
        for d in &docs {
            check_id(&d.id)?;
            if !seen.insert(d.id.as_str()) {
                return Err(InputError::DuplicateId { id: d.id.clone() }.into());
            }
            if d.text.len() > self.config.max_document_bytes {
                return Err(InputError::TooLarge { id: d.id.clone(), bytes: d.text.len(), limit: self.config.max_document_bytes }.into());
            }
        }
        let mut report = AddReport::default();
        // (record, chunks) of documents to write
        let mut pending: Vec<(DocumentRecord, Vec<text::Chunk>)> = Vec::new();
        let total = docs.len();
        for (i, d) in docs.into_iter().enumerate() {
            let format = text::resolve_format(d.format, d.url.as_deref(), &d.text);
            let hash = {
                let mut h = Sha256::new();
                h.update(format!("{format:?}\0{}\0", d.title.as_deref().unwrap_or("")).as_bytes());
                h.update(d.text.as_bytes());
                h.finalize().iter().map(|b| format!("{b:02x}")).collect::<String>()
            };
            if self.docs.get(&d.id).is_some_and(|old| old.source_hash == hash) {
                report.unchanged.push(d.id);
                continue;
            }
            let parsed = text::parse(&d.text, format);
            let title = d.title.clone().filter(|t| !t.trim().is_empty()).or(parsed.title.clone()).unwrap_or_else(|| d.id.clone());
            let chunks = text::chunk(
                &title,
                &parsed.blocks,
                self.embedder.token_counter(),
                self.config.max_chunk_tokens.min(self.embedder.max_tokens()),
                self.config.target_chunk_tokens,
            );
            if chunks.is_empty() {
                return Err(InputError::EmptyDocument { id: d.id }.into());
            }
            let rec = DocumentRecord {
                id: d.id.clone(),
                title,
                url: d.url,
                source_hash: hash,
                added_at: self.clock.now_ms(),
                chunk_count: chunks.len() as u32,
                status: "indexed".into(),
                mind_map: None,
            };
            if self.docs.contains_key(&d.id) {
                report.replaced.push(d.id);
            } else {
                report.added.push(d.id);
            }
            pending.push((rec, chunks));
            progress.report(ProgressEvent { phase: "parse".into(), done: i + 1, total });
        }
        // Embed every new chunk, in batches.
        let inputs: Vec<&str> = pending.iter().flat_map(|(_, cs)| cs.iter().map(|c| c.embed_input.as_str())).collect();
        let mut vectors: Vec<Vec<f32>> = Vec::with_capacity(inputs.len());
        let batch = self.embed_batch();
        for part in inputs.chunks(batch) {
            vectors.extend(self.embedder.embed(part).await?);
            progress.report(ProgressEvent { phase: "embed".into(), done: vectors.len(), total: inputs.len() });
        }
        // Mind maps (structural), their node embeddings, and the graph plan against the current
        // graph (documents being replaced are removed first, in the same commit).
        let mut graph_plan = GraphPlan::default();
        if self.config.graph.enabled && !pending.is_empty() {
            let maps: Vec<mindmap::MindMap> = pending
                .iter()
                .map(|(rec, cs)| {
                    let parts: Vec<(Vec<String>, String)> = cs.iter().map(|c| (c.heading_path.clone(), c.text.clone())).collect();
                    mindmap::structural(&rec.title, &parts)
                })
                .collect();
            let inputs: Vec<Vec<String>> = maps.iter().map(node_inputs).collect();
            let flat: Vec<&str> = inputs.iter().flatten().map(|s| s.as_str()).collect();
            let mut node_vecs: Vec<Vec<f32>> = Vec::with_capacity(flat.len());
            for part in flat.chunks(batch) {
                node_vecs.extend(self.embedder.embed(part).await?);
                progress.report(ProgressEvent { phase: "graph".into(), done: node_vecs.len(), total: flat.len() });
            }
            let chunk_ids: Vec<Vec<String>> =
                pending.iter().map(|(rec, cs)| (0..cs.len()).map(|o| chunk_id(&rec.id, o)).collect()).collect();
            let mut at = 0;
            let mut new_maps = Vec::new();
            for (i, (rec, _)) in pending.iter().enumerate() {
                let n = inputs[i].len();
                new_maps.push(NewMap { doc_id: &rec.id, chunk_ids: &chunk_ids[i], map: &maps[i], vectors: &node_vecs[at..at + n] });
                at += n;
            }
            let replacing: HashSet<String> = report.replaced.iter().cloned().collect();
            graph_plan = self.graph.plan_remove(&report.replaced);
            graph_plan.extend(self.graph.plan_add(&new_maps, &replacing, &self.config.graph));
        } else if !report.replaced.is_empty() {
            graph_plan = self.graph.plan_remove(&report.replaced);
        }
        // One atomic batch of writes.
        let mut ops = Vec::new();
        let mut new_chunks = Vec::new();
        let mut vi = vectors.into_iter();
        let mut docs_written = Vec::new();
        for (rec, chunks) in pending {
            for cid in self.doc_chunks.get(&rec.id).into_iter().flatten() {
                for c in [Collection::Chunks, Collection::Vectors, Collection::Postings] {
                    ops.push(Op::Delete(c, cid.clone()));
                }
                self.question_deletes(cid, &mut ops);
            }
            for (ordinal, c) in chunks.into_iter().enumerate() {
                let id = chunk_id(&rec.id, ordinal);
                let v = vi.next().unwrap_or_default();
                // BM25 indexes the heading prefix (title, headings) with the text, as a field.
                let (terms, length) = term_frequencies(&c.embed_input);
                let cr = ChunkRecord {
                    id: id.clone(),
                    doc_id: rec.id.clone(),
                    ordinal: ordinal as u32,
                    heading_path: c.heading_path,
                    text: c.text,
                    token_count: c.token_count as u32,
                };
                let pr = PostingRecord { id: id.clone(), length, terms };
                ops.push(Op::Put(Record::Chunk(cr.clone())));
                ops.push(Op::Put(Record::Vector(VectorRecord::from_f32(&id, "chunks", &v))));
                ops.push(Op::Put(Record::Posting(pr.clone())));
                new_chunks.push((cr, pr, v));
            }
            ops.push(Op::Put(Record::Document(rec.clone())));
            docs_written.push(rec);
        }
        ops.extend(graph_plan.ops());
        if ops.is_empty() {
            progress.report(ProgressEvent { phase: "done".into(), done: total, total });
            return Ok(report);
        }
        progress.report(ProgressEvent { phase: "store".into(), done: 0, total: 1 });
        self.store.commit(ops).await?;
        // Committed: now mirror it in memory.
        for id in &report.replaced {
            self.unindex_doc(id);
        }
        report.chunks = new_chunks.len();
        for (c, p, v) in new_chunks {
            self.index_chunk(c, p, &v);
        }
        for d in docs_written {
            self.docs.insert(d.id.clone(), d);
        }
        self.graph.apply(graph_plan);
        progress.report(ProgressEvent { phase: "done".into(), done: total, total });
        Ok(report)
    }

    /// Removes documents (their chunks, vectors and postings) in one atomic batch. Unknown ids
    /// are reported in `unknown`, not an error.
    pub async fn remove(&mut self, ids: &[String]) -> Result<RemoveReport> {
        let mut report = RemoveReport::default();
        let mut ops = Vec::new();
        for id in ids {
            if !self.docs.contains_key(id) || report.removed.contains(id) {
                if !report.removed.contains(id) {
                    report.unknown.push(id.clone());
                }
                continue;
            }
            for cid in self.doc_chunks.get(id).into_iter().flatten() {
                for c in [Collection::Chunks, Collection::Vectors, Collection::Postings] {
                    ops.push(Op::Delete(c, cid.clone()));
                }
                self.question_deletes(cid, &mut ops);
            }
            ops.push(Op::Delete(Collection::Documents, id.clone()));
            report.removed.push(id.clone());
        }
        let graph_plan = self.graph.plan_remove(&report.removed);
        ops.extend(graph_plan.ops());
        if !ops.is_empty() {
            self.store.commit(ops).await?;
        }
        for id in &report.removed {
            self.unindex_doc(id);
        }
        self.graph.apply(graph_plan);
        Ok(report)
    }

    /// Deletes everything (the model metadata is written again).
    pub async fn clear(&mut self) -> Result<()> {
        self.store.clear().await?;
        self.write_meta().await?;
        self.docs.clear();
        self.chunks.clear();
        self.doc_chunks.clear();
        self.postings.clear();
        self.slots = Slots::default();
        self.bm25 = Bm25Index::default();
        self.vectors = SegmentedIndex::new(self.embedder.dim(), self.config.ann);
        self.graph = PseudoGraph::with_ann(self.embedder.dim(), self.config.ann);
        self.stale_ann.clear();
        self.atoms.clear();
        self.qslots = Slots::default();
        self.qvectors = SegmentedIndex::new(self.embedder.dim(), self.config.ann);
        self.memory.clear();
        self.traces.clear();
        Ok(())
    }

    /// Whether [`Engine::maintain`] has work: a fresh buffer at `ann.sealAt`, or unreadable
    /// segments to delete.
    pub fn needs_maintenance(&self) -> bool {
        !self.stale_ann.is_empty()
            || self.vectors.needs_seal()
            || self.qvectors.needs_seal()
            || [NodeKind::Topic, NodeKind::Fact].iter().any(|&k| self.graph.ann(k).is_some_and(|ix| ix.needs_seal()))
    }

    /// One step of background upkeep (the worker runs it when idle): deletes unreadable `ann`
    /// records, else seals the fresh buffer of one vector collection (chunks, topics, facts) that
    /// reached `ann.sealAt` — or, with `force`, any non-empty one, also rebuilding every segment
    /// that holds a removed vector — into an HNSW segment, merging segments by tier, and writes
    /// it (and deletes the merged ones) in one commit. `None`: nothing
    /// to do. Searches see the segment at once; if the commit fails, the next open searches those
    /// vectors exactly again (segments are derived data).
    pub async fn maintain(&mut self, force: bool) -> Result<Option<SealReport>> {
        if !self.stale_ann.is_empty() {
            let ops = self.stale_ann.drain(..).map(|id| Op::Delete(Collection::Ann, id)).collect();
            self.store.commit(ops).await?;
            return Ok(Some(SealReport { collection: String::new(), vectors: 0, merged: 0, segments: 0 }));
        }
        let due = |ix: &SegmentedIndex| if force { ix.shape().0 > 0 || ix.has_tombstones() } else { ix.needs_seal() };
        let (name, outcome, ids, bytes, segments) = if due(&self.vectors) {
            let o = self.vectors.seal_purging(force).expect("due: something to seal");
            let ids: Vec<String> = self
                .vectors
                .segment_slots(o.created)
                .unwrap_or(&[])
                .iter()
                .map(|&s| self.slots.id(s).unwrap_or_default().to_string())
                .collect();
            ("chunks", o.clone(), ids, self.vectors.segment_bytes(o.created), self.vectors.shape().1)
        } else if let Some((name, kind)) =
            [("topics", NodeKind::Topic), ("facts", NodeKind::Fact)].into_iter().find(|(_, k)| self.graph.ann(*k).is_some_and(due))
        {
            let ix = self.graph.ann_mut(kind).expect("topics and facts have one");
            let o = ix.seal_purging(force).expect("due: something to seal");
            let ix = self.graph.ann(kind).expect("topics and facts have one");
            let ids: Vec<String> =
                ix.segment_slots(o.created).unwrap_or(&[]).iter().map(|&s| self.graph.id_of(s).unwrap_or_default().to_string()).collect();
            (name, o.clone(), ids, ix.segment_bytes(o.created), ix.shape().1)
        } else if due(&self.qvectors) {
            let o = self.qvectors.seal_purging(force).expect("due: something to seal");
            let ids: Vec<String> = self
                .qvectors
                .segment_slots(o.created)
                .unwrap_or(&[])
                .iter()
                .map(|&s| self.qslots.id(s).unwrap_or_default().to_string())
                .collect();
            ("questions", o.clone(), ids, self.qvectors.segment_bytes(o.created), self.qvectors.shape().1)
        } else {
            return Ok(None);
        };
        let mut ops: Vec<Op> = outcome.dropped.iter().map(|&seq| Op::Delete(Collection::Ann, AnnSegmentRecord::key(name, seq))).collect();
        if let Some(data) = bytes {
            ops.push(Op::Put(Record::Ann(AnnSegmentRecord {
                id: AnnSegmentRecord::key(name, outcome.created),
                collection: name.into(),
                seq: outcome.created,
                ids,
                data,
            })));
        }
        self.store.commit(ops).await?;
        Ok(Some(SealReport { collection: name.into(), vectors: outcome.len, merged: outcome.dropped.len(), segments }))
    }

    /// Runs [`Engine::maintain`] until nothing is left (`force`: seal every non-empty buffer).
    /// Returns the steps taken.
    pub async fn maintain_all(&mut self, force: bool) -> Result<Vec<SealReport>> {
        let mut out = Vec::new();
        while let Some(r) = self.maintain(force).await? {
            out.push(r);
        }
        Ok(out)
    }

    /// `(fresh vectors, sealed segments, tombstones)` of each vector collection: chunks, topics,
    /// facts.
    pub fn ann_shape(&self) -> [(usize, usize, usize); 3] {
        let g = |k| self.graph.ann(k).map(|ix: &SegmentedIndex| ix.shape()).unwrap_or_default();
        [self.vectors.shape(), g(NodeKind::Topic), g(NodeKind::Fact)]
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        Stats {
            documents: self.docs.len(),
            chunks: self.chunks.len(),
            terms: self.bm25.terms(),
            dim: self.embedder.dim(),
            model: self.embedder.model_id().to_string(),
            ann: {
                let [c, t, f] = self.ann_shape();
                let a = |x: (usize, usize, usize)| [x.0, x.1, x.2];
                AnnStats { chunks: a(c), topics: a(t), facts: a(f), questions: a(self.qvectors.shape()) }
            },
            atomized_chunks: self.atoms.len(),
            questions: self.question_count(),
            memory: self.memory_len(),
        }
    }

    /// Stored documents, most recently added first.
    pub fn documents(&self) -> Vec<DocumentRecord> {
        let mut v: Vec<_> = self.docs.values().cloned().collect();
        v.sort_by(|a, b| b.added_at.partial_cmp(&a.added_at).unwrap_or(std::cmp::Ordering::Equal).then(a.id.cmp(&b.id)));
        v
    }

    /// One document by id.
    pub fn document(&self, id: &str) -> Option<&DocumentRecord> {
        self.docs.get(id)
    }

    /// One chunk by id.
    pub fn chunk(&self, id: &str) -> Option<&ChunkRecord> {
        self.chunks.get(id)
    }

    /// Embeds the query (for dense or hybrid mode) and searches. See [`Engine::search_with`].
    pub async fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        let dense_text = if opts.literal { query.trim().to_string() } else { dense_query_text(query) };
        let qv = match opts.mode {
            SearchMode::Bm25 => None,
            _ if dense_text.trim().is_empty() => None,
            _ => self.embedder.embed(&[dense_text.as_str()]).await?.into_iter().next(),
        };
        self.search_with(query, qv.as_deref(), opts)
    }

    /// Searches with a precomputed query embedding (`None`: BM25 only). Excluded terms (`-term`)
    /// and phrases filter every retriever's list (unless `opts.literal`); hybrid fuses BM25 and
    /// dense with RRF.
    ///
    /// Errors: [`InputError::InvalidOption`] when `k` is 0 or over 1000.
    pub fn search_with(&self, query: &str, qv: Option<&[f32]>, opts: &SearchOptions) -> Result<Vec<Hit>> {
        if opts.k == 0 || opts.k > 1000 {
            return Err(InputError::InvalidOption { name: "k".into(), reason: format!("{} is outside 1..=1000", opts.k) }.into());
        }
        let q = if opts.literal { bm25::literal_query(query) } else { parse_query(query) };
        let depth = self.config.fusion_depth.max(opts.k);
        let excluded: HashSet<u32> = q.excluded.iter().flat_map(|t| self.bm25.slots_with(t)).collect();
        // Chunks holding every phrase term (postings intersection): only these can contain the
        // phrases, so only these are re-analysed for the contiguity check.
        let phrase_candidates: Option<HashSet<u32>> = if q.phrases.is_empty() {
            None
        } else {
            let mut terms: Vec<&String> = q.phrases.iter().flatten().collect();
            terms.sort();
            terms.dedup();
            let mut set: Option<HashSet<u32>> = None;
            for t in terms {
                let slots: HashSet<u32> = self.bm25.slots_with(t).collect();
                set = Some(match set {
                    None => slots,
                    Some(prev) => prev.intersection(&slots).copied().collect(),
                });
            }
            set
        };
        let passes = |slot: u32| -> bool {
            if excluded.contains(&slot) {
                return false;
            }
            let Some(cands) = &phrase_candidates else { return true };
            if !cands.contains(&slot) {
                return false;
            }
            let Some(c) = self.slots.id(slot).and_then(|id| self.chunks.get(id)) else { return false };
            let toks = analyze(&c.text);
            q.phrases.iter().all(|p| contains_phrase(&toks, p))
        };
        use SearchMode::*;
        let want_bm25 = matches!(opts.mode, Bm25 | Hybrid | HybridGraph);
        let want_dense = matches!(opts.mode, Dense | Hybrid | HybridGraph | Atomic);
        let want_graph = matches!(opts.mode, Graph | HybridGraph);
        let bm25_list: Vec<(u32, f32)> = if want_bm25 && !q.terms.is_empty() {
            let scores = self.bm25.score(&q, &self.config.bm25());
            top_k(scores.into_iter().filter(|(s, _)| passes(*s)), depth)
        } else {
            Vec::new()
        };
        let dense_list: Vec<(u32, f32)> = match (want_dense, qv) {
            (true, Some(v)) if v.len() == self.vectors.dim() => {
                let filtering = !q.phrases.is_empty() || !excluded.is_empty();
                let raw = self.vectors.search(v, if filtering { depth * 4 } else { depth });
                raw.into_iter().filter(|(s, _)| passes(*s)).take(depth).collect()
            }
            _ => Vec::new(),
        };
        let graph_list: Vec<(u32, f32)> = match (want_graph, qv) {
            (true, Some(v)) if v.len() == self.vectors.dim() => {
                let gs = self.graph.search(query, &[v], depth, &self.config.graph);
                let mut seen = HashSet::new();
                gs.hits
                    .iter()
                    .filter_map(|h| self.slots.get(&h.chunk_id).map(|s| (s, h.score)))
                    .filter(|(s, _)| seen.insert(*s) && passes(*s))
                    .take(depth)
                    .collect()
            }
            _ => Vec::new(),
        };
        // Atomic questions (path (b)): each chunk ranked by its best question; in `atomic` mode
        // and, once the knowledge base is atomized, in the hybrid modes.
        let want_atomic = matches!(opts.mode, Atomic | Hybrid | HybridGraph);
        let atomic_list: Vec<(u32, f32)> = match (want_atomic, qv) {
            (true, Some(v)) if !self.qslots.is_empty() && v.len() == self.qvectors.dim() => {
                let mut seen = HashSet::new();
                self.qvectors
                    .search(v, depth * 3)
                    .into_iter()
                    .filter_map(|(s, score)| {
                        let cid = self.qslots.id(s)?.rsplit_once('?')?.0;
                        Some((self.slots.get(cid)?, score))
                    })
                    .filter(|(s, _)| seen.insert(*s) && passes(*s))
                    .take(depth)
                    .collect()
            }
            _ => Vec::new(),
        };
        let mut scores: HashMap<u32, Scores> = HashMap::new();
        for (i, (s, v)) in atomic_list.iter().enumerate() {
            let e = scores.entry(*s).or_default();
            e.atomic = Some(*v);
            e.atomic_rank = Some(i as u32 + 1);
        }
        for (i, (s, v)) in bm25_list.iter().enumerate() {
            let e = scores.entry(*s).or_default();
            e.bm25 = Some(*v);
            e.bm25_rank = Some(i as u32 + 1);
        }
        for (i, (s, v)) in dense_list.iter().enumerate() {
            let e = scores.entry(*s).or_default();
            e.dense = Some(*v);
            e.dense_rank = Some(i as u32 + 1);
        }
        for (i, (s, v)) in graph_list.iter().enumerate() {
            let e = scores.entry(*s).or_default();
            e.graph = Some(*v);
            e.graph_rank = Some(i as u32 + 1);
        }
        let ranked: Vec<(u32, f32)> = match opts.mode {
            Bm25 => bm25_list,
            Dense => dense_list,
            Graph => graph_list,
            Atomic if atomic_list.is_empty() => dense_list,
            Hybrid | HybridGraph | Atomic => {
                let ids = |l: &[(u32, f32)]| l.iter().map(|x| x.0).collect::<Vec<u32>>();
                let (a, b, c, d) = (ids(&bm25_list), ids(&dense_list), ids(&graph_list), ids(&atomic_list));
                let mut lists: Vec<&[u32]> = match opts.mode {
                    Hybrid => vec![&a, &b],
                    HybridGraph => vec![&a, &b, &c],
                    _ => vec![&b],
                };
                if !d.is_empty() {
                    lists.push(&d);
                }
                let fused = rrf(&lists, self.config.rrf_k);
                for (s, v) in &fused {
                    scores.entry(*s).or_default().rrf = Some(*v);
                }
                fused
            }
        };
        let terms: HashSet<String> = q.terms.iter().map(|t| t.0.clone()).collect();
        let mut hits = Vec::with_capacity(opts.k);
        for (slot, score) in ranked.into_iter().take(opts.k) {
            let Some(c) = self.slots.id(slot).and_then(|id| self.chunks.get(id)) else { continue };
            let doc = self.docs.get(&c.doc_id);
            hits.push(Hit {
                doc_id: c.doc_id.clone(),
                chunk_id: c.id.clone(),
                title: doc.map(|d| d.title.clone()).unwrap_or_default(),
                url: doc.and_then(|d| d.url.clone()),
                heading_path: c.heading_path.clone(),
                score,
                scores: scores.remove(&slot).unwrap_or_default(),
                snippet: snippet(&c.text, &terms, 240),
            });
        }
        Ok(hits)
    }
}

impl<S: Store, E: Embedder> Engine<S, E> {
    /// Embeds `query` and runs [`Engine::graph_search`]: `k` facts with the mind-map context and
    /// the explain data (anchors, row scores, candidate topics).
    pub async fn explain_graph(&self, query: &str, k: usize) -> Result<GraphSearch> {
        let text = query.trim();
        if text.is_empty() {
            return Ok(GraphSearch::default());
        }
        let qv = self.embedder.embed(&[text]).await?.pop().unwrap_or_default();
        Ok(self.graph_search(text, &qv, k))
    }

    /// The graph retriever alone, with its context (the selected fact paths as mind maps) and
    /// its explain data (candidate topics, anchors, row scores). `qv` is the query embedding.
    pub fn graph_search(&self, query: &str, qv: &[f32], k: usize) -> GraphSearch {
        self.graph.search(query, &[qv], k, &self.config.graph)
    }
}

/// The query text the dense retriever embeds: operators stripped, excluded terms dropped.
pub fn dense_query_text(query: &str) -> String {
    let q = bm25::parse_query(query);
    if q.excluded.is_empty() && !query.contains(['"', '^']) {
        return query.trim().to_string();
    }
    q.terms.iter().map(|t| t.0.as_str()).collect::<Vec<_>>().join(" ")
}

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
        let mut vecs: Vec<Vec<f32>> = Vec::with_capacity(total);
        for part in flat.chunks(self.embed_batch()) {
            vecs.extend(self.embedder.embed(part).await?);
        }
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
                ops.push(Op::Put(Record::Vector(VectorRecord::from_f32(&question_id(cid, i), "questions", &vecs[at + i]))));
            }
            at += qs.len();
        }
        self.store.commit(ops).await?;
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
                let qid = self.qslots.id(slot)?;
                let (cid, i) = qid.rsplit_once('?')?;
                let question = self.atoms.get(cid)?.get(i.parse::<usize>().ok()?)?.clone();
                Some(AtomicHit { question, chunk_id: cid.to_string(), score })
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
            let mut vecs: Vec<Vec<f32>> = Vec::with_capacity(inputs.len());
            for part in inputs.chunks(self.embed_batch()) {
                let refs: Vec<&str> = part.iter().map(String::as_str).collect();
                vecs.extend(self.embedder.embed(&refs).await?);
            }
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
        self.store.commit(ops).await?;
        self.graph.apply(plan);
        self.docs.insert(rec.id.clone(), rec);
        Ok(())
    }

    /// Memory entries whose title has cosine ≥ `tau` with the query embedding `qv`, best first
    /// (the retrieval trigger, docs/ask-pipeline.md).
    pub fn memory_matches(&self, qv: &[f32], tau: f32) -> Vec<(MemoryRecord, f32)> {
        let mut out: Vec<(MemoryRecord, f32)> = self
            .memory
            .iter()
            .map(|(m, v)| (m, crate::embed::gemm::dot(qv, v)))
            .filter(|(_, s)| *s >= tau)
            .map(|(m, s)| (m.clone(), s))
            .collect();
        out.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
        out
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
    pub async fn remember(&mut self, entries: Vec<(String, String, Vec<ChunkId>)>) -> Result<Vec<MemoryRecord>> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let titles: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
        let vecs = self.embedder.embed(&titles).await?;
        let now = self.clock.now_ms();
        let base = self.memory.len();
        let mut recs = Vec::new();
        for (i, ((title, content, sources), v)) in entries.into_iter().zip(vecs).enumerate() {
            let embedding = VectorRecord::from_f32("", "memory", &v).data;
            recs.push((
                MemoryRecord { id: format!("m{:015}-{}", now as u64, base + i), title, content, sources, created_at: now, embedding },
                v,
            ));
        }
        self.store.commit(recs.iter().map(|(r, _)| Op::Put(Record::Memory(r.clone()))).collect()).await?;
        let out = recs.iter().map(|(r, _)| r.clone()).collect();
        self.memory.extend(recs);
        Ok(out)
    }

    /// Deletes every memory entry.
    pub async fn forget(&mut self) -> Result<usize> {
        let ops: Vec<Op> = self.memory.iter().map(|(m, _)| Op::Delete(Collection::Memory, m.id.clone())).collect();
        let n = ops.len();
        if n > 0 {
            self.store.commit(ops).await?;
        }
        self.memory.clear();
        Ok(n)
    }

    /// Keeps one ask trace (`json`: the trace object) in the `traces` collection.
    pub async fn keep_trace(&mut self, question: &str, json: String) -> Result<TraceRecord> {
        let now = self.clock.now_ms();
        let id = format!("t{:015}-{:06}", now as u64, self.traces.len());
        let rec = TraceRecord { id, created_at: now, question: question.to_string(), json };
        self.store.commit(vec![Op::Put(Record::Trace(rec.clone()))]).await?;
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
            self.store.commit(ops).await?;
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
        self.qslots.get(&question_id(chunk_id, i)).and_then(|s| self.qvectors.get(s))
    }
}
