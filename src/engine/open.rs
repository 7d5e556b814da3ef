//! Opening a knowledge base: schema and model checks, then the indexes rebuilt from the store.
use std::collections::HashMap;

use crate::config::Config;
use crate::embed::Embedder;
use crate::error::{Result, StoreError};
use crate::graph::{GraphPlan, PlannedNode, PseudoGraph};
use crate::index::Slots;
use crate::index::ann::SegmentedIndex;
use crate::index::bm25::{Bm25Index, term_frequencies};
use crate::ports::{Clock, Collection, Contents, NoProgress, Op, Record, Store, generation_of};
use crate::schema::*;
use crate::text::ANALYZER_VERSION;

use super::write::MapSource;
use super::{AskStore, Corpus, Engine};

/// How many times [`Engine::open`] reads the store before a conflict is the caller's.
const OPEN_ATTEMPTS: usize = 5;

impl<S: Store, E: Embedder> Engine<S, E> {
    /// Opens a knowledge base: reads everything from `store`, checks the schema version and the
    /// model recorded in `meta`, and rebuilds the indexes. A new store gets its `meta` written.
    ///
    /// Errors: [`StoreError::VersionTooNew`], [`ModelError::Mismatch`], [`StoreError::Corrupt`],
    /// and any store error.
    pub async fn open(store: S, embedder: E, config: Config, clock: Box<dyn Clock>) -> Result<Self> {
        config.validate()?;
        // Another engine over the same store may commit between the read and a write of the
        // open (the meta of a new store, a migration, a repair): read again then.
        let mut parts = Some((store, embedder, config, clock));
        crate::ports::retry_on_conflict(OPEN_ATTEMPTS, async |_| {
            // Each attempt that meets a conflict puts the parts back; any other end is the last.
            let (store, embedder, config, clock) = parts.take().ok_or_else(|| StoreError::Backend { reason: "open: no store".into() })?;
            let contents = store.load().await?;
            let mut eng = Engine::empty(store, embedder, config, clock);
            match eng.open_from(contents).await {
                Ok(()) => Ok(eng),
                Err(e) => {
                    parts = Some(eng.into_parts());
                    Err(e)
                }
            }
        })
        .await
    }

    /// [`Engine::open`] of an [`Engine::empty`] one over `contents`, read from its store.
    async fn open_from(&mut self, contents: Contents) -> Result<()> {
        self.generation.set(generation_of(&contents.meta));
        let found = self.check_meta(&contents.meta)?;
        if found.is_none() {
            self.write_meta().await?;
        }
        let mut contents = contents;
        let mut repairs = self.embed_missing(&mut contents).await?;
        repairs.extend(self.rebuild(contents)?);
        self.commit(repairs).await?;
        if let Some(m) = found.and_then(migration) {
            self.migrate(m).await?;
        }
        Ok(())
    }

    /// Repairs before a rebuild: chunks without their document are dropped (with their vectors
    /// and postings), and a chunk whose vector is missing or unreadable is embedded again (its
    /// vector joins `contents`). Returns the store writes of both.
    async fn embed_missing(&self, contents: &mut Contents) -> Result<Vec<Op>> {
        let mut ops = Vec::new();
        let titles: HashMap<&str, &str> = contents.documents.iter().map(|d| (d.id.as_str(), d.title.as_str())).collect();
        let dim = self.embedder.dim();
        let good: std::collections::HashSet<&str> =
            contents.vectors.iter().filter(|v| v.to_f32().is_some_and(|d| d.len() == dim)).map(|v| v.id.as_str()).collect();
        let mut orphans = std::collections::HashSet::new();
        let mut missing: Vec<(String, String)> = Vec::new();
        for c in &contents.chunks {
            match titles.get(c.doc_id.as_str()) {
                None => {
                    orphans.insert(c.id.clone());
                    for coll in [Collection::Chunks, Collection::Vectors, Collection::Postings] {
                        ops.push(Op::Delete(coll, c.id.clone()));
                    }
                }
                Some(title) if !good.contains(c.id.as_str()) => {
                    missing.push((c.id.clone(), self.chunk_input(title, c)));
                }
                Some(_) => {}
            }
        }
        drop(titles);
        if !orphans.is_empty() {
            contents.chunks.retain(|c| !orphans.contains(&c.id));
            contents.postings.retain(|p| !orphans.contains(&p.id));
            contents.vectors.retain(|v| !orphans.contains(&v.id));
        }
        for part in missing.chunks(self.embed_batch()) {
            let texts: Vec<&str> = part.iter().map(|(_, t)| t.as_str()).collect();
            let vs = self.embedder.embed_checked(&texts).await?;
            for ((id, _), v) in part.iter().zip(vs) {
                let rec = VectorRecord::from_f32(id, "chunks", &v);
                contents.vectors.retain(|x| &x.id != id);
                contents.vectors.push(rec.clone());
                ops.push(Op::Put(Record::Vector(rec)));
            }
        }
        Ok(ops)
    }

    /// Carries out a [`Migration`] ([`migration`] says what one from an older schema takes) in
    /// one commit, the meta record then naming [`SCHEMA_VERSION`] (tests/fixtures: a store of
    /// each schema).
    pub(super) async fn migrate(&mut self, m: Migration) -> Result<()> {
        let mut plan = GraphPlan::default();
        if m.structural_mind_maps && self.config.graph.enabled {
            let mut ids: Vec<&DocId> = self.corpus.docs.keys().filter(|d| !self.graph.has_doc(d)).collect();
            crate::sort::ascending(&mut ids);
            let sources: Vec<MapSource<'_>> = ids
                .iter()
                .map(|id| MapSource {
                    doc_id: id.as_str(),
                    title: &self.corpus.docs[*id].title,
                    chunks: self
                        .corpus
                        .doc_chunks
                        .get(*id)
                        .into_iter()
                        .flatten()
                        .filter_map(|c| self.corpus.chunks.get(c))
                        .map(|c| (c.heading_path.clone(), c.text.clone()))
                        .collect(),
                })
                .collect();
            plan = self.plan_mind_maps(&sources, &Default::default(), &mut NoProgress).await?;
        }
        let mut ops = plan.ops();
        ops.push(super::meta("schema", SCHEMA_VERSION.into()));
        self.commit(ops).await?;
        self.graph.apply(plan);
        Ok(())
    }

    /// An engine with nothing indexed.
    pub(super) fn empty(store: S, embedder: E, config: Config, clock: Box<dyn Clock>) -> Self {
        Engine {
            vectors: SegmentedIndex::new(embedder.dim(), config.ann),
            graph: PseudoGraph::with_ann(embedder.dim(), config.ann),
            stale_ann: Vec::new(),
            ask: AskStore::new(embedder.dim(), config.ann),
            base: None,
            segment_ids: Vec::new(),
            generation: std::cell::Cell::new(0),
            languages: Vec::new(),
            store,
            embedder,
            config,
            clock,
            corpus: Corpus::default(),
            slots: Slots::default(),
            bm25: Bm25Index::default(),
        }
    }

    /// Empties every in-memory index (before [`Engine::rebuild`] over other contents).
    pub(super) fn reset_indexes(&mut self) {
        let dim = self.embedder.dim();
        self.vectors = SegmentedIndex::new(dim, self.config.ann);
        self.graph = PseudoGraph::with_ann(dim, self.config.ann);
        self.stale_ann.clear();
        self.ask = AskStore::new(dim, self.config.ann);
        self.base = None;
        self.segment_ids.clear();
        self.corpus = Corpus::default();
        self.slots = Slots::default();
        self.bm25 = Bm25Index::default();
        self.languages.clear();
    }

    /// [`check_meta`] against the loaded model.
    pub(super) fn check_meta(&self, meta: &[MetaRecord]) -> Result<Option<u32>> {
        crate::schema::check_meta(meta, self.embedder.model_id(), self.embedder.dim())
    }

    /// Builds the in-memory indexes of an [`Engine::empty`] one from the store's contents (every
    /// chunk with its vector: [`Engine::embed_missing`] first). Returns the deletes of what it
    /// dropped as stale derived data (graph edges that do not form a graph).
    ///
    /// Errors: [`StoreError::Corrupt`] for a chunk without its vector.
    pub(super) fn rebuild(&mut self, contents: Contents) -> Result<Vec<Op>> {
        let Contents { meta, documents, chunks, vectors, postings, graph_nodes, graph_edges, ann, questions, memory, traces, segments } =
            contents;
        let mut repairs = Vec::new();
        // An unreadable vector is as good as none: a chunk's is embedded again before the
        // rebuild, a node's is zeros, a question's makes its chunk count as not atomized.
        let dim = self.embedder.dim();
        let mut vectors: HashMap<String, Vec<f32>> =
            vectors.into_iter().filter_map(|v| Some((v.id.clone(), v.to_f32().filter(|d| d.len() == dim)?))).collect();
        // Postings of another analyzer version are derived again from the chunks; when one
        // changes, the stored base's postings blocks (of that version too) are dropped.
        let reanalyze = stored_analyzer(&meta) != ANALYZER_VERSION;
        // The stemmed languages: those `meta` names and any of a document (a base written before
        // the record existed gets it here).
        self.languages = super::stored_languages(&meta);
        if let Some((op, langs)) = super::grown_languages(&self.languages, &documents) {
            repairs.push(op);
            self.languages = langs;
        }
        for d in documents {
            self.corpus.docs.insert(d.id.clone(), d);
        }
        let reanalyzed = self.rebuild_chunks(chunks, postings, &mut vectors, reanalyze, &mut repairs)?;
        // The pseudo-graph: every stored node with its vector, then every edge. What does not
        // form a graph (an edge to a deleted node, a cycle, a second parent) is derived data gone
        // stale: dropped here and deleted from the store.
        let mut plan = GraphPlan::default();
        for n in graph_nodes {
            let v = vectors.remove(&n.id);
            let chunk_ordinal = n.chunk_id.as_ref().and_then(|c| self.corpus.chunks.get(c)).map(|c| c.ordinal);
            plan.nodes.push(PlannedNode { record: n, vector: v, chunk_ordinal });
        }
        plan.edges = graph_edges;
        repairs.extend(self.graph.apply(plan).into_iter().map(|id| Op::Delete(Collection::GraphEdges, id)));
        self.rebuild_ask(questions, memory, traces, &mut vectors, &mut repairs);
        self.attach_ann(ann);
        if reanalyzed {
            repairs.extend(segments.into_iter().map(|r| Op::Delete(Collection::Segments, r.id)));
        } else {
            self.attach_segments(segments);
        }
        if reanalyze {
            repairs.push(super::meta("analyzer", ANALYZER_VERSION.into()));
        }
        Ok(repairs)
    }

    /// Indexes every chunk with its postings (derived again when `reanalyze` or missing; a
    /// changed one joins `repairs`) and its vector; true when a stored posting changed.
    ///
    /// Errors: [`StoreError::Corrupt`] for a chunk without its vector.
    fn rebuild_chunks(
        &mut self,
        chunks: Vec<ChunkRecord>,
        postings: Vec<PostingRecord>,
        vectors: &mut HashMap<String, Vec<f32>>,
        reanalyze: bool,
        repairs: &mut Vec<Op>,
    ) -> Result<bool> {
        let mut reanalyzed = false;
        let mut postings: HashMap<String, PostingRecord> = postings.into_iter().map(|p| (p.id.clone(), p)).collect();
        for c in chunks {
            let stored = postings.remove(&c.id);
            let p = match stored {
                Some(p) if !reanalyze => p,
                stored => {
                    let doc = self.corpus.docs.get(&c.doc_id);
                    let title = doc.map_or("", |d| d.title.as_str());
                    let (terms, length) = term_frequencies(&self.chunk_input(title, &c), crate::retrieve::stemmer_of(doc));
                    let p = PostingRecord { id: c.id.clone(), length, terms };
                    if stored.as_ref() != Some(&p) {
                        reanalyzed |= stored.is_some();
                        repairs.push(Op::Put(Record::Posting(p.clone())));
                    }
                    p
                }
            };
            let v = vectors.remove(&c.id).ok_or_else(|| StoreError::Corrupt {
                collection: "vectors".into(),
                key: c.id.clone(),
                reason: "chunk has no vector".into(),
            })?;
            self.index_chunk(c, p, &v);
        }
        for ids in self.corpus.doc_chunks.values_mut() {
            crate::sort::by_key(ids, |id| self.corpus.chunks.get(id).map_or(0, |c| c.ordinal));
        }
        Ok(reanalyzed)
    }

    /// The ask pipeline's records: atomic questions (a record whose chunk is gone or whose
    /// vectors are missing is skipped: the chunk counts as not atomized, so the next pass redoes
    /// it), memory entries (one learned from a chunk that is gone is stale: deleted) and traces.
    fn rebuild_ask(
        &mut self,
        questions: Vec<QuestionRecord>,
        memory: Vec<MemoryRecord>,
        traces: Vec<TraceRecord>,
        vectors: &mut HashMap<String, Vec<f32>>,
        repairs: &mut Vec<Op>,
    ) {
        for q in questions {
            if !self.corpus.chunks.contains_key(&q.id) {
                continue;
            }
            let vs: Option<Vec<Vec<f32>>> =
                (0..q.questions.len()).map(|i| vectors.remove(&QuestionKey::new(&q.id, i).store_id())).collect();
            if let Some(vs) = vs {
                self.ask.index_questions(&q.id, q.questions, &vs);
            }
        }
        for m in memory {
            // An entry learned from a chunk that is gone went stale (its note was edited or
            // removed where this build did not yet tie memory to its sources): deleted.
            if m.sources.iter().any(|c| !self.corpus.chunks.contains_key(c)) {
                repairs.push(Op::Delete(Collection::Memory, m.id));
                continue;
            }
            self.ask.memory.extend(super::ask_store::memory_entry(m, self.embedder.dim()));
        }
        super::ask_store::sort_memory(&mut self.ask.memory);
        self.ask.traces = traces;
    }

    /// Attaches the sealed HNSW segments over the fresh buffers that now hold every live vector.
    /// A segment that does not load is only a lost speed-up: its vectors stay in the exact
    /// buffer (its record is deleted at the next upkeep).
    fn attach_ann(&mut self, ann: Vec<crate::schema::AnnSegmentRecord>) {
        // The segments name questions by their store ids.
        let question_slots: HashMap<String, u32> =
            (0..self.ask.qslots.capacity() as u32).filter_map(|s| Some((self.ask.qslots.id(s)?.store_id(), s))).collect();
        for r in ann {
            // A record stored under another segment's key would be deleted by the wrong key
            // when merged (and two could share one number): stale, like one that does not load.
            let attached = r.format == crate::index::ann::ANN_FORMAT
                && r.id == crate::schema::AnnSegmentRecord::key(&r.collection, r.seq)
                && VectorCollection::from_name(&r.collection).is_some_and(|c| {
                    let slots: Vec<Option<u32>> = r
                        .ids
                        .iter()
                        .map(|id| match c {
                            VectorCollection::Chunks => self.slots.get(id),
                            VectorCollection::Questions => question_slots.get(id).copied(),
                            VectorCollection::Topics | VectorCollection::Facts => self.graph.slot_of(id),
                        })
                        .collect();
                    self.ann_of_mut(c).is_some_and(|ix| ix.attach(r.seq, &r.data, &slots).is_ok())
                });
            if !attached {
                self.stale_ann.push(r.id);
            }
        }
    }
}

/// The analyzer version the `meta` records name ([`ANALYZER_VERSION`]): 1 for a knowledge base
/// written before it was recorded, the current one for a store never written.
pub(super) fn stored_analyzer(meta: &[MetaRecord]) -> u32 {
    let get = |k: &str| meta.iter().find(|m| m.id == k).map(|m| m.value.as_str());
    match (get("schema"), get("analyzer")) {
        (None, None) => ANALYZER_VERSION,
        (_, None) => 1,
        // Unreadable: as good as another version (the postings are derived again).
        (_, Some(v)) => serde_json::from_str(v).unwrap_or(0),
    }
}
