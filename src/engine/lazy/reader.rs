//! What a lazy open reads and keeps ([`Reader`]): the base's head, the delta with its chunks
//! and their BM25 ([`Parts`]), the postings blocks and IVF lists read so far ([`Cache`]), the
//! pseudo-graph and the memory entries once read; and the reads and scores a search makes from
//! them.
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::config::Config;
use crate::embed::Embedder;
use crate::error::{Result, StoreError};
use crate::index::bm25::{Accumulator, Bm25Index, Query, query_weights};
use crate::index::segment::{
    self, Delta, NPROBE, PostingsBlock, QueryCodes, QuestionDelta, QuestionHead, SEGMENT_FORMAT, SegmentHead, SegmentKey, VecBlock,
    block_postings,
};
use crate::ports::{Clock, Collection, GENERATION_KEY, Record, Store, generation_of};
use crate::schema::*;
use crate::types::*;

use crate::engine::open::stored_analyzer;
use crate::text::ANALYZER_VERSION;

/// What a lazy open read, kept in step with the writes made lazily since ([`write`]).
pub(super) struct Parts {
    /// The store's generation the view is of.
    pub(super) generation: u64,
    pub(super) head: SegmentHead,
    /// Removed since the base, by base ordinal.
    pub(super) dead: Vec<bool>,
    pub(super) delta: Delta,
    /// Each of the delta's chunks by id: its place in `delta.added`.
    pub(super) delta_place: HashMap<ChunkId, u32>,
    /// The delta's chunks (in `delta.added` order): postings and vectors.
    pub(super) delta_chunks: Vec<(PostingRecord, Vec<f32>)>,
    /// BM25 over the delta's chunks, by position in `delta.added`.
    pub(super) delta_bm25: Bm25Index,
    /// Live chunks and the sum of their lengths.
    pub(super) live: usize,
    pub(super) total_len: u64,
    /// Whether the head lists each document's chunks together, in document order (as
    /// [`segment::build_base`] writes it): a document's chunks are then found by binary search.
    pub(super) grouped: bool,
    /// The base's atomic questions (`q/head`; `None`: none).
    pub(super) questions: Option<QuestionHead>,
    /// The chunks whose questions were written since the base (the stored `q/delta`, in its
    /// order): their base questions no longer count.
    pub(super) question_order: QuestionDelta,
    /// The same chunks, to look up.
    pub(super) question_delta: HashSet<ChunkId>,
    /// The questions of those chunks: `(chunk, index, vector)`.
    pub(super) delta_questions: Vec<(ChunkId, u32, Vec<f32>)>,
    /// The languages the documents are stemmed in (`meta` [`crate::engine::LANGUAGES_KEY`]).
    pub(super) languages: Vec<crate::text::Language>,
}

impl Parts {
    /// `Parts` of `head` with `delta` (`None` when a tombstone names no base chunk).
    pub(super) fn new(generation: u64, head: SegmentHead, delta: Delta, delta_chunks: Vec<(PostingRecord, Vec<f32>)>) -> Option<Parts> {
        let grouped = head.doc_of.is_sorted() && head.documents.is_sorted();
        let mut parts = Parts {
            generation,
            head,
            dead: Vec::new(),
            delta: Delta::default(),
            delta_place: HashMap::new(),
            delta_chunks: Vec::new(),
            delta_bm25: Bm25Index::default(),
            live: 0,
            total_len: 0,
            grouped,
            questions: None,
            question_order: QuestionDelta::new(),
            question_delta: HashSet::new(),
            delta_questions: Vec::new(),
            languages: Vec::new(),
        };
        parts.set_delta(delta, delta_chunks)?;
        Some(parts)
    }

    /// Takes `delta` with its chunks (`None`, and nothing changed, when a tombstone names no
    /// base chunk).
    pub(super) fn set_delta(&mut self, delta: Delta, delta_chunks: Vec<(PostingRecord, Vec<f32>)>) -> Option<()> {
        let mut dead = vec![false; self.head.chunks.len()];
        for &o in &delta.removed {
            *dead.get_mut(o as usize)? = true;
        }
        self.dead = dead;
        self.delta_place = delta.added.iter().enumerate().map(|(i, c)| (c.clone(), i as u32)).collect();
        self.delta = delta;
        self.delta_chunks = delta_chunks;
        self.index_delta();
        Some(())
    }

    /// Takes the question delta `d` (the chunks whose questions were written since the base).
    pub(super) fn set_question_delta(&mut self, d: QuestionDelta) {
        self.question_delta = d.iter().cloned().collect();
        self.question_order = d;
    }

    /// Rebuilds the delta's BM25 and the live counts from `delta` and `delta_chunks`.
    pub(super) fn index_delta(&mut self) {
        self.delta_bm25 = Bm25Index::default();
        for (i, (p, _)) in self.delta_chunks.iter().enumerate() {
            self.delta_bm25.insert(i as u32, &p.terms, p.length);
        }
        let (delta_live, delta_len) = self.delta_bm25.totals();
        let base_len: u64 = self.head.lengths.iter().zip(&self.dead).filter(|(_, d)| !**d).map(|(l, _)| *l as u64).sum();
        self.live = self.dead.iter().filter(|d| !**d).count() + delta_live;
        self.total_len = base_len + delta_len;
    }
}

/// Segments read so far (postings blocks, IVF lists), kept for later queries.
#[derive(Default)]
pub(super) struct Cache {
    pub(super) blocks: RefCell<HashMap<u32, Rc<PostingsBlock>>>,
    pub(super) lists: RefCell<HashMap<u32, Rc<VecBlock>>>,
    /// The atomic questions' IVF lists read so far.
    pub(super) question_lists: RefCell<HashMap<u32, Rc<VecBlock>>>,
}

pub(super) struct Reader<S: Store, E: Embedder> {
    pub(super) store: S,
    pub(super) embedder: E,
    pub(super) config: Config,
    pub(super) clock: Box<dyn Clock>,
    pub(super) parts: Parts,
    pub(super) cache: Cache,
    /// The pseudo-graph, once read ([`Reader::graph`]).
    pub(super) graph: Option<crate::graph::PseudoGraph>,
    /// The memory entries with their titles' embeddings, once read ([`Reader::memory`]; every
    /// commit drops them).
    pub(super) memory: Option<Vec<(MemoryRecord, Vec<f32>)>>,
}

pub(super) fn corrupt(key: SegmentKey, reason: impl Into<String>) -> crate::error::Error {
    StoreError::Corrupt { collection: Collection::Segments.name().into(), key: key.store_id(), reason: reason.into() }.into()
}

pub(super) fn segment_bytes(r: Option<Record>) -> Option<Vec<u8>> {
    match r {
        Some(Record::Segment(s)) => Some(s.data),
        _ => None,
    }
}

impl<S: Store, E: Embedder> Reader<S, E> {
    /// Reads `meta`, the head, the delta and the delta's chunks. `None` when a lazy open does not
    /// apply (a new or older-schema store, postings of another analyzer version, no base, a base
    /// of another format or dimension, a delta chunk missing): the full open then handles (and
    /// repairs) it.
    ///
    /// Errors: [`crate::error::ModelError::Mismatch`], [`StoreError::VersionTooNew`], store errors.
    pub(super) async fn read(store: &S, embedder: &E) -> Result<Option<Parts>> {
        // meta, head and delta in one read transaction: one generation's view.
        let mut keys: Vec<(Collection, String)> = ["schema", "model", "dim", "analyzer", crate::engine::LANGUAGES_KEY, GENERATION_KEY]
            .map(|k| (Collection::Meta, k.to_string()))
            .to_vec();
        for k in [SegmentKey::Head, SegmentKey::Delta, SegmentKey::QuestionHead, SegmentKey::QuestionDelta] {
            keys.push((Collection::Segments, k.store_id()));
        }
        let mut got = store.get_batch(&keys).await?;
        let segs = got.split_off(6);
        let meta: Vec<MetaRecord> = got.into_iter().filter_map(|r| if let Some(Record::Meta(m)) = r { Some(m) } else { None }).collect();
        // Postings of another analyzer version: the full open derives them again.
        if check_meta(&meta, embedder.model_id(), embedder.dim())? != Some(SCHEMA_VERSION) || stored_analyzer(&meta) != ANALYZER_VERSION {
            return Ok(None);
        }
        let generation = generation_of(&meta);
        let mut got = segs.into_iter();
        let (Some(h), Some(d)) = (segment_bytes(got.next().flatten()), segment_bytes(got.next().flatten())) else { return Ok(None) };
        let (qh, qd) = (segment_bytes(got.next().flatten()), segment_bytes(got.next().flatten()));
        let (Ok(head), Ok(delta)) = (segment::decode::<SegmentHead>(&h), segment::decode::<Delta>(&d)) else { return Ok(None) };
        drop((h, d));
        let shaped = head.lengths.len() == head.chunks.len()
            && head.doc_of.len() == head.chunks.len()
            && head.doc_of.iter().all(|d| (*d as usize) < head.documents.len());
        if head.format != SEGMENT_FORMAT || head.dim as usize != embedder.dim() || !shaped {
            return Ok(None);
        }
        let postings = store.get_many(Collection::Postings, &delta.added).await?;
        let vectors = store.get_many(Collection::Vectors, &delta.added).await?;
        let mut delta_chunks = Vec::with_capacity(delta.added.len());
        for (p, v) in postings.into_iter().zip(vectors) {
            let (Some(Record::Posting(p)), Some(Record::Vector(v))) = (p, v) else { return Ok(None) };
            let Some(v) = v.to_f32().filter(|v| v.len() == embedder.dim()) else { return Ok(None) };
            delta_chunks.push((p, v));
        }
        let Some(mut parts) = Parts::new(generation, head, delta, delta_chunks) else { return Ok(None) };
        parts.languages = crate::engine::stored_languages(&meta);
        // The atomic questions: the base's head, and those written since, read whole.
        if let Some(b) = qh {
            let Ok(q) = segment::decode::<QuestionHead>(&b) else { return Ok(None) };
            if q.dim as usize != embedder.dim() || q.entries.iter().any(|(o, _)| *o as usize >= parts.head.chunks.len()) {
                return Ok(None);
            }
            parts.questions = Some(q);
        }
        let changed: QuestionDelta = match qd.map(|b| segment::decode::<QuestionDelta>(&b)) {
            Some(Ok(d)) => d,
            Some(Err(_)) => return Ok(None),
            None => QuestionDelta::new(),
        };
        let records = store.get_many(Collection::Questions, &changed).await?;
        let keys: Vec<(ChunkId, u32)> = records
            .into_iter()
            .flatten()
            .filter_map(|r| if let Record::Question(q) = r { Some(q) } else { None })
            .flat_map(|q| (0..q.questions.len() as u32).map(move |i| (q.id.clone(), i)))
            .collect();
        let ids: Vec<String> = keys.iter().map(|(c, i)| QuestionKey::new(c, *i as usize).store_id()).collect();
        for ((c, i), v) in keys.into_iter().zip(store.get_many(Collection::Vectors, &ids).await?) {
            let Some(Record::Vector(v)) = v else { return Ok(None) };
            let Some(v) = v.to_f32().filter(|v| v.len() == embedder.dim()) else { return Ok(None) };
            parts.delta_questions.push((c, i, v));
        }
        parts.set_question_delta(changed);
        Ok(Some(parts))
    }

    pub(super) fn stats(&self) -> Stats {
        let p = &self.parts;
        Stats {
            documents: usize::try_from(p.delta.documents).unwrap_or(usize::MAX),
            chunks: p.live,
            terms: usize::try_from(p.head.terms).unwrap_or(usize::MAX),
            dim: self.embedder.dim(),
            model: self.embedder.model_id().to_string(),
            ann: AnnStats::default(),
            atomized_chunks: self.atomized().len(),
            questions: self.live_questions().count(),
            memory: 0,
            lazy: true,
            languages: p.languages.iter().map(|l| l.tag().to_string()).collect(),
        }
    }

    /// The live atomic questions: `(chunk, index)` of the base's (their chunk not removed, its
    /// questions not written since) and of the chunks written since (their chunk still stored).
    pub(super) fn live_questions(&self) -> impl Iterator<Item = (&ChunkId, u32)> {
        let p = &self.parts;
        let base = p.questions.iter().flat_map(|q| q.entries.iter()).filter_map(|&(o, i)| {
            let c = p.head.chunks.get(o as usize)?;
            (!p.dead.get(o as usize).copied().unwrap_or(true) && !p.question_delta.contains(c)).then_some((c, i))
        });
        base.chain(p.delta_questions.iter().filter(|(c, _, _)| self.is_live(c)).map(|(c, i, _)| (c, *i)))
    }

    /// The chunks with live atomic questions.
    pub(super) fn atomized(&self) -> HashSet<&ChunkId> {
        self.live_questions().map(|(c, _)| c).collect()
    }

    /// Whether chunk `id` (`{doc}#{ordinal}`) is stored: a live chunk of the base or one of the
    /// delta's.
    pub(super) fn is_live(&self, id: &str) -> bool {
        id.rsplit_once('#').is_some_and(|(doc, _)| self.slot_of(id, doc).is_some())
    }

    /// Atomic questions nearest the query embedding `qv` with cosine ≥ `delta`, at most `k`,
    /// best first ([`crate::engine::AskStore::atomic_search`]): estimated cosines (12-bit
    /// integer inner products) of the base's questions in the [`NPROBE`] IVF lists nearest `qv`,
    /// exact ones of the questions written since; the questions' texts read from their chunks'
    /// records.
    ///
    /// Errors: store errors; [`StoreError::Corrupt`] for a question list missing or unreadable.
    pub(super) async fn atomic_search(&self, qv: &[f32], k: usize, delta: f32) -> Result<Vec<crate::engine::AtomicHit>> {
        let scored = self.question_scores(qv, k, delta).await?;
        let mut ids: Vec<ChunkId> = scored.iter().map(|(c, _, _)| (*c).clone()).collect();
        crate::sort::ascending(&mut ids);
        ids.dedup();
        let texts: HashMap<ChunkId, Vec<String>> = self
            .store
            .get_many(Collection::Questions, &ids)
            .await?
            .into_iter()
            .flatten()
            .filter_map(|r| if let Record::Question(q) = r { Some((q.id, q.questions)) } else { None })
            .collect();
        Ok(scored
            .into_iter()
            .filter_map(|(c, i, score)| {
                let question = texts.get(c)?.get(i as usize)?.clone();
                Some(crate::engine::AtomicHit { question, chunk_id: c.clone(), score })
            })
            .collect())
    }

    /// The `k` live atomic questions nearest `qv` with cosine ≥ `delta`, best first:
    /// `(chunk, index, score)` ([`Reader::atomic_search`] without the texts).
    ///
    /// Errors: as [`Reader::atomic_search`].
    pub(super) async fn question_scores(&self, qv: &[f32], k: usize, delta: f32) -> Result<Vec<(&ChunkId, u32, f32)>> {
        let p = &self.parts;
        let mut scored: Vec<(&ChunkId, u32, f32)> = Vec::new();
        if let Some(q) = &p.questions {
            let codes = QueryCodes::new(qv);
            for l in self.question_lists(q, &q.nearest_lists(qv, NPROBE)).await? {
                for (n, score) in l.scores(&codes) {
                    let Some(&(o, i)) = q.entries.get(n as usize) else { continue };
                    let Some(c) = p.head.chunks.get(o as usize) else { continue };
                    if !p.dead.get(o as usize).copied().unwrap_or(true) && !p.question_delta.contains(c) {
                        scored.push((c, i, score));
                    }
                }
            }
        }
        for (c, i, v) in &p.delta_questions {
            if self.is_live(c) {
                scored.push((c, *i, crate::embed::vecmath::dot(qv, v)));
            }
        }
        scored.retain(|(_, _, s)| *s >= delta);
        crate::sort::by(&mut scored, |a, b| b.2.total_cmp(&a.2).then(a.0.cmp(b.0)).then(a.1.cmp(&b.1)));
        scored.truncate(k);
        Ok(scored)
    }

    /// The question IVF lists `ls` of `q`, read now if not yet.
    async fn question_lists(&self, q: &QuestionHead, ls: &[u32]) -> Result<Vec<Rc<VecBlock>>> {
        let what = "the base's atomic questions";
        self.ivf_lists(&self.cache.question_lists, ls, SegmentKey::QuestionList, q.dim as usize, what).await
    }

    /// The postings blocks holding `terms`, read now if not yet.
    pub(super) async fn blocks(&self, terms: &[&str]) -> Result<HashMap<u32, Rc<PostingsBlock>>> {
        let blocks = self.parts.head.blocks;
        let mut want: Vec<u32> = terms.iter().map(|t| segment::block_of(t, blocks)).collect();
        crate::sort::ascending(&mut want);
        want.dedup();
        let missing: Vec<u32> = want.iter().copied().filter(|b| !self.cache.blocks.borrow().contains_key(b)).collect();
        let keys: Vec<String> = missing.iter().map(|&b| SegmentKey::Terms(b).store_id()).collect();
        for (b, r) in missing.iter().zip(self.store.get_many(Collection::Segments, &keys).await?) {
            let key = SegmentKey::Terms(*b);
            let bytes = segment_bytes(r).ok_or_else(|| corrupt(key, "a postings block of the base is missing"))?;
            let block: PostingsBlock = segment::decode(&bytes).map_err(|e| corrupt(key, e))?;
            self.cache.blocks.borrow_mut().insert(*b, Rc::new(block));
        }
        let cache = self.cache.blocks.borrow();
        Ok(want.into_iter().filter_map(|b| Some((b, cache.get(&b)?.clone()))).collect())
    }

    /// The IVF lists `ls`, read now if not yet.
    pub(super) async fn lists(&self, ls: &[u32]) -> Result<Vec<Rc<VecBlock>>> {
        self.ivf_lists(&self.cache.lists, ls, SegmentKey::List, self.parts.head.dim as usize, "the base's chunks").await
    }

    /// The IVF lists `ls` of `what` (stored as `key(l)`, vectors of `dim`), read into `cache`
    /// now where they are not yet.
    ///
    /// Errors: store errors; [`StoreError::Corrupt`] for a list missing or not a `WRL1` block of
    /// `dim`.
    async fn ivf_lists(
        &self,
        cache: &RefCell<HashMap<u32, Rc<VecBlock>>>,
        ls: &[u32],
        key: fn(u32) -> SegmentKey,
        dim: usize,
        what: &str,
    ) -> Result<Vec<Rc<VecBlock>>> {
        let missing: Vec<u32> = ls.iter().copied().filter(|l| !cache.borrow().contains_key(l)).collect();
        let keys: Vec<String> = missing.iter().map(|&l| key(l).store_id()).collect();
        for (l, r) in missing.iter().zip(self.store.get_many(Collection::Segments, &keys).await?) {
            let bytes = segment_bytes(r).ok_or_else(|| corrupt(key(*l), format!("an IVF list of {what} is missing")))?;
            let block = VecBlock::parse(&bytes)
                .filter(|b| b.dim == dim)
                .ok_or_else(|| corrupt(key(*l), format!("not a WRL1 vector block of {what}' dimension")))?;
            cache.borrow_mut().insert(*l, Rc::new(block));
        }
        let cache = cache.borrow();
        Ok(ls.iter().filter_map(|l| cache.get(l).cloned()).collect())
    }

    /// The chunk id of `slot`: base ordinals first, then the delta's chunks.
    pub(super) fn chunk_id(&self, slot: u32) -> Option<&ChunkId> {
        let n = self.parts.head.chunks.len();
        let s = slot as usize;
        if s < n { self.parts.head.chunks.get(s) } else { self.parts.delta.added.get(s - n) }
    }

    /// The chunk records of `slots` and their documents' records, in one read (a delta chunk's
    /// document, which the head does not name, in a second).
    pub(super) async fn hit_records(&self, slots: &[u32]) -> Result<(HashMap<u32, ChunkRecord>, HashMap<String, DocumentRecord>)> {
        let head = &self.parts.head;
        let mut keys: Vec<(Collection, String)> =
            slots.iter().filter_map(|s| Some((Collection::Chunks, self.chunk_id(*s)?.clone()))).collect();
        let mut doc_ids: Vec<&String> = slots.iter().filter_map(|&s| head.documents.get(*head.doc_of.get(s as usize)? as usize)).collect();
        crate::sort::ascending(&mut doc_ids);
        doc_ids.dedup();
        keys.extend(doc_ids.into_iter().map(|d| (Collection::Documents, d.clone())));
        let mut chunks = HashMap::new();
        let mut docs = HashMap::new();
        let mut by_id: HashMap<String, u32> = slots.iter().filter_map(|s| Some((self.chunk_id(*s)?.clone(), *s))).collect();
        for r in self.store.get_batch(&keys).await?.into_iter().flatten() {
            match r {
                Record::Chunk(c) => {
                    if let Some(s) = by_id.remove(&c.id) {
                        chunks.insert(s, c);
                    }
                }
                Record::Document(d) => {
                    docs.insert(d.id.clone(), d);
                }
                _ => {}
            }
        }
        let missing: Vec<String> = chunks.values().filter(|c| !docs.contains_key(&c.doc_id)).map(|c| c.doc_id.clone()).collect();
        for r in self.store.get_many(Collection::Documents, &missing).await?.into_iter().flatten() {
            if let Record::Document(d) = r {
                docs.insert(d.id.clone(), d);
            }
        }
        Ok((chunks, docs))
    }

    /// Chunk records of `slots`.
    pub(super) async fn chunks(&self, slots: &[u32]) -> Result<HashMap<u32, ChunkRecord>> {
        let ids: Vec<String> = slots.iter().filter_map(|s| self.chunk_id(*s).cloned()).collect();
        let got = self.store.get_many(Collection::Chunks, &ids).await?;
        Ok(slots.iter().zip(got).filter_map(|(s, r)| if let Some(Record::Chunk(c)) = r { Some((*s, c)) } else { None }).collect())
    }

    /// A term's live postings, `(slot, tf)`: base ordinals (tombstones skipped), then delta slots
    /// (numbered after the base); and its document frequency, tombstones counted.
    pub(super) fn postings<'a>(
        &'a self,
        blocks: &'a HashMap<u32, Rc<PostingsBlock>>,
        t: &str,
    ) -> (impl Iterator<Item = (u32, u32)> + use<'a, S, E>, usize) {
        let base_n = self.parts.head.chunks.len() as u32;
        let dead = &self.parts.dead;
        let base = blocks.get(&segment::block_of(t, self.parts.head.blocks)).map_or(&[][..], |b| block_postings(b, t));
        let delta = self.parts.delta_bm25.postings(t);
        let live = base
            .iter()
            .filter(|(o, _)| !dead.get(*o as usize).copied().unwrap_or(true))
            .copied()
            .chain(delta.iter().map(move |&(s, tf)| (base_n + s, tf)));
        (live, base.len() + delta.len())
    }

    /// BM25 of every live chunk holding a query term, with the loaded index's scores (the idf's
    /// document frequencies count tombstones until the next base).
    pub(super) fn bm25_scores(&self, q: &Query, blocks: &HashMap<u32, Rc<PostingsBlock>>) -> Vec<(u32, f32)> {
        let base_n = self.parts.head.chunks.len() as u32;
        let params = self.config.bm25();
        let n = self.parts.live.max(1) as f32;
        let floor = params.epsilon * (self.parts.head.okapi_idf_sum / self.parts.head.terms.max(1) as f64) as f32;
        let mut acc = Accumulator::new((base_n as usize) + self.parts.delta.added.len(), &params, self.parts.total_len as f32 / n);
        for (t, w) in query_weights(q) {
            let (live, df) = self.postings(blocks, t);
            if df == 0 {
                continue;
            }
            let scale = acc.scale(w, params.idf(n, df as f32, floor));
            for (s, tf) in live {
                let dl = if s < base_n { self.parts.head.lengths[s as usize] } else { self.parts.delta_bm25.length(s - base_n) };
                acc.add(s, tf, dl, scale);
            }
        }
        acc.finish()
    }

    /// Estimated cosines of the live chunks in the [`NPROBE`] IVF lists nearest `v` (12-bit
    /// integer inner products) and exact ones of the delta's chunks.
    pub(super) async fn dense_scores(&self, v: &[f32]) -> Result<Vec<(u32, f32)>> {
        let base_n = self.parts.head.chunks.len() as u32;
        let probe = self.lists(&self.parts.head.nearest_lists(v, NPROBE)).await?;
        let codes = QueryCodes::new(v);
        Ok(probe
            .iter()
            .flat_map(|l| l.scores(&codes))
            .filter(|(o, _)| !self.parts.dead.get(*o as usize).copied().unwrap_or(true))
            .chain(self.parts.delta_chunks.iter().enumerate().map(|(i, (_, d))| (base_n + i as u32, crate::embed::vecmath::dot(v, d))))
            .collect())
    }
}
