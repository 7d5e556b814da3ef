//! What a search on a lazily opened base reads through ([`SearchView`]): the reader as it is, or,
//! for a filtered search, without the full load, restricted to the filter: the documents it
//! passes are read from their records (by key when the filter names documents, else every
//! document record: tags and metadata are not in the head), their chunks' slots come from the
//! head (`doc_of`) and the delta, and the dense retriever scans exactly those chunks with their
//! vectors read by key — as the loaded engine scans a filter's chunks exactly.
use std::collections::{HashMap, HashSet};

use super::Reader;
use crate::config::Config;
use crate::embed::Embedder;
use crate::embed::vecmath::dot;
use crate::engine::source::{GraphSource, IndexSource, Lexical, Postings, Records, Vectors};
use crate::error::Result;
use crate::graph::{GraphHit, PseudoGraph};
use crate::index::bm25::Query;
use crate::index::top_k;
use crate::ports::{Collection, Record, Store};
use crate::retrieve::hit;
use crate::schema::{DocId, DocumentRecord};
use crate::text::analyze;
use crate::types::{Hit, Scores, SearchFilter};

/// A [`Reader`] as one search reads it: whole, or restricted to the chunks of the documents a
/// filter passes, with their vectors when the search is dense. (One type for both, so the search
/// pipeline is compiled once for the lazy engine.)
pub(super) struct SearchView<'a, S: Store, E: Embedder> {
    reader: &'a Reader<S, E>,
    /// With a filter: its chunks' slots.
    slots: Option<Vec<u32>>,
    vectors: HashMap<u32, Vec<f32>>,
}

impl<S: Store, E: Embedder> Reader<S, E> {
    /// This reader as a search reads it: whole without a filter, else restricted to what
    /// `filter` passes (with `dense`, the passing chunks' vectors read too).
    ///
    /// Errors: store errors.
    pub(super) async fn view(&self, filter: Option<&SearchFilter>, dense: bool) -> Result<SearchView<'_, S, E>> {
        let Some(filter) = filter else { return Ok(SearchView { reader: self, slots: None, vectors: HashMap::new() }) };
        let docs = self.passing_documents(filter).await?.into_iter().map(|d| d.id).collect();
        let slots = self.slots_of_documents(&docs);
        let vectors = if dense { self.vectors_of(&slots).await? } else { HashMap::new() };
        Ok(SearchView { reader: self, slots: Some(slots), vectors })
    }

    /// The stored documents `filter` passes: those it names, read by key, or every document
    /// record.
    ///
    /// Errors: store errors.
    pub(super) async fn passing_documents(&self, filter: &SearchFilter) -> Result<Vec<DocumentRecord>> {
        let docs = if filter.doc_ids.is_empty() {
            self.store.scan(Collection::Documents).await?.documents
        } else {
            let got = self.store.get_many(Collection::Documents, &filter.doc_ids).await?;
            got.into_iter().filter_map(|r| if let Some(Record::Document(d)) = r { Some(d) } else { None }).collect()
        };
        let m = filter.matcher();
        Ok(docs.into_iter().filter(|d| m.passes(d)).collect())
    }

    /// The live slots of the chunks of `docs`: their base ordinals, then their delta chunks' (one
    /// pass over the head's `doc_of`).
    fn slots_of_documents(&self, docs: &HashSet<DocId>) -> Vec<u32> {
        let head = &self.parts.head;
        let passing: Vec<bool> = head.documents.iter().map(|d| docs.contains(d)).collect();
        let live = |o: usize| !self.parts.dead.get(o).copied().unwrap_or(true);
        let mut slots: Vec<u32> = (0..head.doc_of.len())
            .filter(|&o| passing.get(head.doc_of[o] as usize).copied().unwrap_or(false) && live(o))
            .map(|o| o as u32)
            .collect();
        let base_n = head.chunks.len() as u32;
        let of_doc = |c: &str| c.rsplit_once('#').is_some_and(|(d, _)| docs.contains(d));
        slots.extend(self.parts.delta.added.iter().enumerate().filter(|(_, c)| of_doc(c)).map(|(i, _)| base_n + i as u32));
        slots
    }

    /// The vectors of `slots`: the delta's held, the base's read from their `vectors` records.
    async fn vectors_of(&self, slots: &[u32]) -> Result<HashMap<u32, Vec<f32>>> {
        let base_n = self.parts.head.chunks.len() as u32;
        let (base, delta): (Vec<u32>, Vec<u32>) = slots.iter().partition(|&&s| s < base_n);
        let mut out: HashMap<u32, Vec<f32>> =
            delta.iter().filter_map(|&s| Some((s, self.parts.delta_chunks.get((s - base_n) as usize)?.1.clone()))).collect();
        let ids: Vec<String> = base.iter().filter_map(|&s| self.chunk_id(s).cloned()).collect();
        let dim = self.embedder.dim();
        for (s, r) in base.into_iter().zip(self.store.get_many(Collection::Vectors, &ids).await?) {
            if let Some(v) = r.and_then(|r| if let Record::Vector(v) = r { v.to_f32() } else { None }).filter(|v| v.len() == dim) {
                out.insert(s, v);
            }
        }
        Ok(out)
    }
}

/// The segments as a search source ([`crate::engine::source::search`]): BM25 with the loaded
/// index's scores (the idf's document frequencies count tombstones until the next base), dense over
/// the [`crate::index::segment::NPROBE`] nearest IVF lists (12-bit integer inner products, within
/// about 1e-3 of the f32 ones) and the delta (exact f32) — within a filter, an exact scan of its
/// chunks' vectors — the pseudo-graph once read ([`Reader::graph`]), the atomic questions' IVF
/// lists.
impl<S: Store, E: Embedder> IndexSource for SearchView<'_, S, E> {
    fn config(&self) -> &Config {
        &self.reader.config
    }

    fn languages(&self) -> &[crate::text::Language] {
        &self.reader.parts.languages
    }
}

impl<S: Store, E: Embedder> Postings for SearchView<'_, S, E> {
    async fn lexical(&self, q: &Query, score: bool) -> Result<Lexical> {
        let r = self.reader;
        let mut names: Vec<&str> = q.terms.iter().map(|t| t.0.as_str()).chain(q.excluded.iter().map(String::as_str)).collect();
        names.extend(q.phrases.iter().flatten().map(String::as_str));
        let blocks = r.blocks(&names).await?;
        let scores = if score { r.bm25_scores(q, &blocks) } else { Vec::new() };
        Ok(Lexical::new(q, |t| r.postings(&blocks, t).0.map(|p| p.0), scores))
    }
}

impl<S: Store, E: Embedder> Vectors for SearchView<'_, S, E> {
    fn dim(&self) -> usize {
        self.reader.embedder.dim()
    }

    async fn nearest(&self, v: &[f32], n: usize) -> Result<Vec<(u32, f32)>> {
        Ok(top_k(self.reader.dense_scores(v).await?.into_iter(), n))
    }

    /// The cosine of `v` with each of `slots` whose vector was read (a filter's chunks).
    fn exact(&self, v: &[f32], slots: &[u32]) -> Vec<(u32, f32)> {
        slots.iter().filter_map(|s| Some((*s, dot(v, self.vectors.get(s)?)))).collect()
    }

    /// The base's questions in the IVF lists nearest `v` and those written since
    /// ([`Reader::atomic_search`]'s scores), as their chunks' slots.
    async fn atomic(&self, v: &[f32], n: usize) -> Result<Vec<(u32, f32)>> {
        let r = self.reader;
        let scored = r.question_scores(v, n, f32::NEG_INFINITY).await?;
        Ok(scored.into_iter().filter_map(|(c, _, score)| Some((r.slot_of(c, c.rsplit_once('#')?.0)?, score))).collect())
    }
}

impl<S: Store, E: Embedder> GraphSource for SearchView<'_, S, E> {
    fn pseudo_graph(&self) -> Option<&PseudoGraph> {
        self.reader.graph.as_ref()
    }

    fn graph_slot(&self, hit: &GraphHit) -> Option<u32> {
        self.reader.slot_of(&hit.chunk_id, &hit.doc_id)
    }
}

impl<S: Store, E: Embedder> Records for SearchView<'_, S, E> {
    /// The slots read for the filter this view was made for (`None` without one).
    fn scope(&self, _: &SearchFilter) -> Option<Vec<u32>> {
        self.slots.clone()
    }

    async fn holding_phrases(&self, q: &Query, slots: &[u32]) -> Result<HashSet<u32>> {
        let chunks = self.reader.chunks(slots).await?;
        Ok(chunks.into_iter().filter(|(_, c)| q.phrases_in(&analyze(&c.text))).map(|(s, _)| s).collect())
    }

    async fn hits(&self, top: &[(u32, f32)], mut scores: HashMap<u32, Scores>, terms: &HashSet<String>) -> Result<Vec<Hit>> {
        let slots: Vec<u32> = top.iter().map(|x| x.0).collect();
        let (chunks, docs) = self.reader.hit_records(&slots).await?;
        Ok(top
            .iter()
            .filter_map(|&(s, score)| {
                let c = chunks.get(&s)?;
                Some(hit(c, docs.get(&c.doc_id), score, scores.remove(&s).unwrap_or_default(), terms))
            })
            .collect())
    }
}
