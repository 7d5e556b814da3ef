//! The facade: open / add / remove / search / stats / clear over a [`Store`] and an [`Embedder`].
//!
//! The store is the source of truth; the indexes ([`Bm25Index`], `FlatIndex`) are rebuilt
//! from it at [`Engine::open`] and kept in step on every write. A write first builds the whole
//! batch (parse, chunk, embed), then commits it to the store in one atomic batch, and only then
//! touches the in-memory indexes: a failure at any step leaves both store and indexes as they
//! were.
mod ask_store;
mod corpus;
pub mod enhance;
mod input;
mod lazy;
mod llm_parts;
mod maintain;
mod open;
mod search;
mod segments;
mod shared;
pub(crate) mod source;
mod transfer;
mod write;

pub use ask_store::AskStore;
pub use corpus::Corpus;
pub use lazy::LazyEngine;
pub use llm_parts::Enrichment;
pub use search::dense_query_text;
pub use shared::{EngineAccess, Enrichable, Exclusive, add_shared};
pub use source::SearchOptions;
pub(crate) use write::embed_add;

use std::collections::HashMap;

use crate::config::Config;
use crate::embed::Embedder;
use crate::error::{InputError, Result};
use crate::graph::PseudoGraph;
use crate::index::Slots;
use crate::index::ann::SegmentedIndex;
use crate::index::bm25::Bm25Index;
use crate::ports::{Clock, Collection, GENERATION_KEY, Op, Record, Store, generation_in};
use crate::schema::*;
use crate::types::*;

/// A knowledge base: store + embedder + in-memory indexes.
pub struct Engine<S: Store, E: Embedder> {
    store: S,
    embedder: E,
    config: Config,
    clock: Box<dyn Clock>,
    corpus: Corpus,
    slots: Slots,
    bm25: Bm25Index,
    vectors: SegmentedIndex,
    graph: PseudoGraph,
    /// `ann` records that failed to load (deleted by the next [`Engine::maintain`]).
    stale_ann: Vec<String>,
    /// Atomic questions, memory entries and kept traces.
    ask: AskStore,
    /// The index segments' base the store holds, when it describes the stored chunks.
    base: Option<segments::StoredBase>,
    /// Ids of every stored `segments` record.
    segment_ids: Vec<String>,
    /// The store's generation this engine's view is of ([`crate::ports::GENERATION_KEY`]).
    generation: std::cell::Cell<u64>,
    /// The languages its documents are stemmed in ([`stored_languages`]).
    languages: Vec<crate::text::Language>,
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

/// What a maintenance step sealed or stored ([`SealReport::collection`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum Sealed {
    /// Chunk embeddings.
    Chunks,
    /// The pseudo-graph's topic nodes.
    Topics,
    /// The pseudo-graph's fact nodes.
    Facts,
    /// Atomic questions.
    Questions,
    /// A base of index segments stored or deleted.
    Segments,
    /// Nothing sealed: the step only deleted unreadable segments.
    #[serde(rename = "")]
    Nothing,
}

impl std::fmt::Display for Sealed {
    /// The name the page sees (serde's).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = serde_json::to_value(self).ok();
        f.write_str(name.as_ref().and_then(serde_json::Value::as_str).unwrap_or_default())
    }
}

impl From<VectorCollection> for Sealed {
    fn from(c: VectorCollection) -> Self {
        match c {
            VectorCollection::Chunks => Sealed::Chunks,
            VectorCollection::Topics => Sealed::Topics,
            VectorCollection::Facts => Sealed::Facts,
            VectorCollection::Questions => Sealed::Questions,
        }
    }
}

/// What one [`Engine::maintain`] step did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SealReport {
    /// The vector collection sealed: `"chunks"`, `"topics"`, `"facts"` or `"questions"` (empty
    /// when the step only deleted unreadable segments); `"segments"` when the step stored a new
    /// base of index segments (`vectors`: its chunks, `segments`: the records written) or
    /// deleted them (both 0).
    pub collection: Sealed,
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

/// The longest document id, in characters.
pub const MAX_ID_CHARS: usize = 1024;

/// The `meta` record that names the languages a knowledge base's documents are stemmed in
/// (a JSON array of [`crate::text::Language::tag`]s, sorted; absent: none), so that a search
/// — of a lazily opened base too — stems its query in them ([`crate::index::bm25::Query::with_stems`]).
/// It grows with the documents written and is not shrunk by a removal (a stem searched for
/// that no document holds finds nothing).
pub(crate) const LANGUAGES_KEY: &str = "languages";

/// The languages [`LANGUAGES_KEY`] names (tags this build has no stemmer for left out).
pub(crate) fn stored_languages(meta: &[MetaRecord]) -> Vec<crate::text::Language> {
    let tags: Vec<String> =
        meta.iter().find(|m| m.id == LANGUAGES_KEY).and_then(|m| serde_json::from_str(&m.value).ok()).unwrap_or_default();
    let mut langs: Vec<crate::text::Language> = tags.iter().filter_map(|t| crate::text::Language::from_tag(t)).collect();
    crate::sort::by(&mut langs, |a, b| a.tag().cmp(b.tag()));
    langs.dedup();
    langs
}

/// `had` with the languages of `docs` added, and the `meta` record naming them when that is more
/// than `had` (`None`: nothing new).
pub(crate) fn grown_languages<'a>(
    had: &[crate::text::Language],
    docs: impl IntoIterator<Item = &'a DocumentRecord>,
) -> Option<(Op, Vec<crate::text::Language>)> {
    let mut langs = had.to_vec();
    langs.extend(docs.into_iter().filter_map(|d| crate::retrieve::stemmer_of(Some(d))));
    crate::sort::by(&mut langs, |a, b| a.tag().cmp(b.tag()));
    langs.dedup();
    if langs.len() == had.len() {
        return None;
    }
    let tags: Vec<&str> = langs.iter().map(|l| l.tag()).collect();
    Some((meta(LANGUAGES_KEY, serde_json::json!(tags)), langs))
}

/// Checks a document id: 1..=[`MAX_ID_CHARS`] characters.
pub(crate) fn check_id(id: &str) -> Result<()> {
    if id.is_empty() || id.chars().count() > MAX_ID_CHARS {
        return Err(InputError::InvalidId { id: id.chars().take(64).collect() }.into());
    }
    Ok(())
}

/// Decodes uploaded bytes as UTF-8 in place (a leading BOM is dropped; no copy is made);
/// invalid bytes are an error with the offset of the first bad sequence, never silently
/// replaced.
pub fn decode_utf8(id: &str, mut bytes: Vec<u8>) -> Result<String> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| InputError::InvalidUtf8 { id: id.to_string(), offset: e.utf8_error().valid_up_to() }.into())
}

/// Empties `store` ([`Store::clear`]) and stores a generation past the one it held, so that
/// every engine over it with an older view sees the change. Returns that generation.
pub(crate) async fn clear_store<S: Store>(store: &S, held: u64) -> Result<u64> {
    let stored = generation_in(store.get(Collection::Meta, GENERATION_KEY).await?.as_ref());
    let next = stored.max(held).saturating_add(1);
    store.clear().await?;
    store.commit(vec![meta(GENERATION_KEY, next.into())]).await?;
    Ok(next)
}

impl<S: Store, E: Embedder> Engine<S, E> {
    async fn write_meta(&self) -> Result<()> {
        self.commit(vec![
            meta("schema", SCHEMA_VERSION.into()),
            meta("model", self.embedder.model_id().into()),
            meta("dim", self.embedder.dim().into()),
            meta("analyzer", crate::text::ANALYZER_VERSION.into()),
        ])
        .await
    }

    /// Commits `ops` as one batch guarded by this engine's generation
    /// ([`crate::ports::commit_guarded`]).
    ///
    /// Errors: [`crate::error::StoreError::Conflict`] when another engine over the same store
    /// (another tab) committed since — nothing is written, and the caller opens the store again
    /// ([`LazyEngine::refresh`]); other store errors.
    async fn commit(&self, ops: Vec<Op>) -> Result<()> {
        self.generation.set(crate::ports::commit_guarded(&self.store, self.generation.get(), ops).await?);
        Ok(())
    }

    /// The store's generation this engine's view is of: it changes with every commit, this
    /// engine's or (after [`LazyEngine::refresh`]) another's.
    pub fn generation(&self) -> u64 {
        self.generation.get()
    }

    /// The store, the embedder, the options and the clock, to open the store again.
    pub(crate) fn into_parts(self) -> (S, E, Config, Box<dyn Clock>) {
        (self.store, self.embedder, self.config, self.clock)
    }

    fn index_chunk(&mut self, c: ChunkRecord, p: PostingRecord, v: &[f32]) {
        let slot = self.slots.insert(&c.id);
        self.bm25.insert(slot, &p.terms, p.length);
        self.vectors.insert(slot, v);
        self.corpus.doc_chunks.entry(c.doc_id.clone()).or_default().push(c.id.clone());
        self.corpus.postings.insert(c.id.clone(), p);
        self.corpus.chunks.insert(c.id.clone(), c);
    }

    fn unindex_doc(&mut self, doc_id: &str) {
        for cid in self.corpus.doc_chunks.remove(doc_id).unwrap_or_default() {
            self.ask.unindex_questions(&cid);
            if let Some(slot) = self.slots.remove(&cid) {
                if let Some(p) = self.corpus.postings.remove(&cid) {
                    self.bm25.remove(slot, &p.terms);
                }
                self.vectors.remove(slot);
            }
            self.corpus.chunks.remove(&cid);
        }
        self.corpus.docs.remove(doc_id);
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The pseudo-graph.
    pub fn graph(&self) -> &PseudoGraph {
        &self.graph
    }

    /// For an engine that is built to be written out (a site build): its graph leaves the facts
    /// out of their ANN index ([`PseudoGraph::leave_out_fact_index`]) when it fuses no facts
    /// (`graph.superFactThreshold` 1); else nothing changes. Returns whether it did.
    pub(crate) fn leave_out_fact_index(&mut self) -> bool {
        let unfused = self.config.graph.super_fact_threshold >= 1.0;
        if unfused {
            self.graph.leave_out_fact_index();
        }
        unfused
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
        embed_batch(&self.config, &self.embedder)
    }

    /// [`embed_distinct`] with this engine's embedder and [`Engine::embed_batch`].
    ///
    /// Errors: the embedder's ([`Embedder::embed_checked`]).
    pub(crate) async fn embed_distinct(
        &self,
        texts: &[&str],
        phase: crate::types::Phase,
        progress: &mut dyn crate::ports::Progress,
    ) -> Result<Vec<Vec<f32>>> {
        embed_distinct(&self.embedder, self.embed_batch(), texts, phase, progress).await
    }

    /// Changes the options that only act at search time (BM25 parameters, `rrf_k`,
    /// `fusion_depth`, `fusion_weights`, `graph_cascade`, the graph's seeds, candidates and PGR parameters); the
    /// others keep their values.
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
            fusion_weights: search.fusion_weights,
            graph_cascade: search.graph_cascade,
            graph: crate::graph::GraphParams {
                enabled: self.config.graph.enabled,
                super_topic_threshold: self.config.graph.super_topic_threshold,
                super_fact_threshold: self.config.graph.super_fact_threshold,
                late_chunking: self.config.graph.late_chunking,
                ..search.graph
            },
            ..self.config.clone()
        };
        next.validate()?;
        self.config = next;
        Ok(())
    }

    /// `(fresh vectors, sealed segments, tombstones)` of each vector collection: chunks, topics,
    /// facts.
    fn ann_shape(&self) -> [(usize, usize, usize); 3] {
        let g = |k| self.graph.ann(k).map(|ix: &SegmentedIndex| ix.shape()).unwrap_or_default();
        [self.vectors.shape(), g(NodeKind::Topic), g(NodeKind::Fact)]
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        Stats {
            documents: self.corpus.docs.len(),
            chunks: self.corpus.chunks.len(),
            terms: self.bm25.terms(),
            dim: self.embedder.dim(),
            model: self.embedder.model_id().to_string(),
            ann: {
                let [c, t, f] = self.ann_shape();
                let a = |x: (usize, usize, usize)| [x.0, x.1, x.2];
                AnnStats { chunks: a(c), topics: a(t), facts: a(f), questions: a(self.ask.qvectors.shape()) }
            },
            atomized_chunks: self.ask.atoms.len(),
            questions: self.ask.question_count(),
            memory: self.ask.memory_len(),
            lazy: false,
            languages: self.languages.iter().map(|l| l.tag().to_string()).collect(),
        }
    }

    /// The documents and chunks held.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// The atomic questions, memory entries and kept traces held.
    pub fn ask_store(&self) -> &AskStore {
        &self.ask
    }
}

/// `docs` most recently added first (then by id).
fn newest_first(mut docs: Vec<DocumentRecord>) -> Vec<DocumentRecord> {
    crate::sort::by(&mut docs, |a, b| b.added_at.partial_cmp(&a.added_at).unwrap_or(std::cmp::Ordering::Equal).then(a.id.cmp(&b.id)));
    docs
}

/// Texts per embedding call at ingest: `embedBatch`, else the embedder's preferred batch.
fn embed_batch<E: Embedder>(config: &Config, embedder: &E) -> usize {
    config.embed_batch.unwrap_or_else(|| embedder.preferred_batch()).max(1)
}

/// One vector per text of `texts`, in order, each distinct text embedded once (a batch of
/// documents repeats titles, headings, boilerplate and whole passages), in calls of `batch`
/// texts, [`Embedder::parallelism`] of them in flight; after each call (in order) `progress`
/// gets `phase` with the distinct texts embedded so far.
///
/// Errors: the embedder's ([`Embedder::embed_checked`]).
pub(crate) async fn embed_distinct<E: Embedder>(
    embedder: &E,
    batch: usize,
    texts: &[&str],
    phase: crate::types::Phase,
    progress: &mut dyn crate::ports::Progress,
) -> Result<Vec<Vec<f32>>> {
    use futures::StreamExt;
    let mut slot: HashMap<&str, usize> = HashMap::with_capacity(texts.len());
    let mut distinct: Vec<&str> = Vec::new();
    let at: Vec<usize> = texts
        .iter()
        .map(|&t| {
            *slot.entry(t).or_insert_with(|| {
                distinct.push(t);
                distinct.len() - 1
            })
        })
        .collect();
    let mut vectors: Vec<Vec<f32>> = Vec::with_capacity(distinct.len());
    // With workers, twice their number in flight (one that finishes finds its next batch
    // queued); else one call at a time (the GPU path's buffers serve one pass at a time).
    let par = embedder.parallelism();
    let in_flight = if par > 1 { 2 * par } else { 1 };
    let mut calls = futures::stream::iter(distinct.chunks(batch.max(1))).map(|part| embedder.embed_checked(part)).buffered(in_flight);
    while let Some(part) = calls.next().await {
        vectors.extend(part?);
        progress.report(ProgressEvent { phase, done: vectors.len(), total: distinct.len() });
    }
    Ok(spread(vectors, &at))
}

/// `values[at[0]], values[at[1]], …`: each value moved to the last position that names it and
/// cloned for earlier ones, so a batch of distinct texts (the usual case) copies no vector.
fn spread<T: Clone + Default>(mut values: Vec<T>, at: &[usize]) -> Vec<T> {
    let mut last = vec![usize::MAX; values.len()];
    for (pos, &i) in at.iter().enumerate() {
        last[i] = pos;
    }
    at.iter().enumerate().map(|(pos, &i)| if last[i] == pos { std::mem::take(&mut values[i]) } else { values[i].clone() }).collect()
}

/// [`Embedder::embed_late`] over `texts` with their `pools`, each distinct text once (its first
/// occurrence's pools), in calls of `batch` texts with [`Embedder::parallelism`] in flight,
/// reporting `phase` as [`embed_distinct`] does. `Ok(None)` where the embedder cannot.
///
/// Errors: the embedder's; [`crate::error::ModelError::BadOutput`] for a result of the wrong
/// shape.
pub(crate) async fn embed_late_distinct<E: Embedder>(
    embedder: &E,
    batch: usize,
    texts: &[&str],
    pools: &[crate::embed::LatePools],
    phase: crate::types::Phase,
    progress: &mut dyn crate::ports::Progress,
) -> Result<Option<Vec<crate::embed::LateVectors>>> {
    use futures::StreamExt;
    let mut slot: HashMap<&str, usize> = HashMap::with_capacity(texts.len());
    let mut distinct: Vec<usize> = Vec::new();
    let at: Vec<usize> = texts
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            *slot.entry(t).or_insert_with(|| {
                distinct.push(i);
                distinct.len() - 1
            })
        })
        .collect();
    let parts: Vec<(Vec<&str>, Vec<crate::embed::LatePools>)> = distinct
        .chunks(batch.max(1))
        .map(|c| (c.iter().map(|&i| texts[i]).collect(), c.iter().map(|&i| pools.get(i).cloned().unwrap_or_default()).collect()))
        .collect();
    let par = embedder.parallelism();
    let in_flight = if par > 1 { 2 * par } else { 1 };
    let mut calls = futures::stream::iter(&parts).map(|(t, p)| embedder.embed_late(t, p)).buffered(in_flight);
    let mut out: Vec<crate::embed::LateVectors> = Vec::with_capacity(distinct.len());
    let mut k = 0;
    while let Some(r) = calls.next().await {
        let Some(vs) = r? else { return Ok(None) };
        let (want, pools) = (&parts[k].0, &parts[k].1);
        let bad = vs.len() != want.len()
            || vs.iter().zip(pools).any(|((w, ps), p)| {
                ps.len() != p.len()
                    || std::iter::once(w).chain(ps.iter().flatten()).any(|v| v.len() != embedder.dim() || v.iter().any(|x| !x.is_finite()))
            });
        if bad {
            return Err(crate::error::ModelError::BadOutput { reason: "late chunking: vectors of the wrong shape".into() }.into());
        }
        out.extend(vs);
        k += 1;
        progress.report(ProgressEvent { phase, done: out.len(), total: distinct.len() });
    }
    Ok(Some(spread(out, &at)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn spread_moves_last_uses_and_copies_earlier_ones() {
        let values = vec![vec![1.0f32], vec![2.0], vec![3.0]];
        let ptr = values[2].as_ptr();
        let out = super::spread(values, &[0, 1, 0, 2, 1]);
        assert_eq!(out, [vec![1.0], vec![2.0], vec![1.0], vec![3.0], vec![2.0]]);
        assert_eq!(out[3].as_ptr(), ptr, "a value used once is moved, not copied");
        assert!(super::spread(Vec::<Vec<f32>>::new(), &[]).is_empty());
    }
}
