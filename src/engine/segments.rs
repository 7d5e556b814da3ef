//! The stored index segments ([`crate::index::segment`]) as the loaded engine keeps them: which
//! base is stored, the delta written with every write, and the idle-time step that builds a new
//! base ([`Engine::maintain`]).
use std::collections::{HashMap, HashSet};

use crate::embed::Embedder;
use crate::error::Result;
use crate::index::segment::{self, BaseChunk, BaseQuestion, Delta, QuestionDelta, QuestionHead, SEGMENT_FORMAT, SegmentHead, SegmentKey};
use crate::ports::{Collection, Op, Record, Store};
use crate::schema::*;

use super::{Engine, SealReport};

/// `delta` after a write that removes `gone` chunks and adds `new` ones, leaving `documents`
/// documents (`ordinal` gives a chunk's base ordinal), with the `Put` that stores it.
pub(super) fn next_delta(
    delta: &Delta,
    ordinal: &dyn Fn(&str) -> Option<u32>,
    gone: &[ChunkId],
    new: &[ChunkId],
    documents: usize,
) -> (Op, Delta) {
    let mut d = delta.clone();
    let gone_set: HashSet<&str> = gone.iter().map(String::as_str).collect();
    d.added.retain(|id| !gone_set.contains(id.as_str()));
    for id in gone {
        if let Some(o) = ordinal(id)
            && let Err(at) = d.removed.binary_search(&o)
        {
            d.removed.insert(at, o);
        }
    }
    d.added.extend(new.iter().cloned());
    d.documents = documents as u64;
    let op = Op::Put(Record::Segment(SegmentRecord { id: SegmentKey::Delta.store_id(), data: segment::encode_delta(&d) }));
    (op, d)
}

/// The base the store holds, as the loaded engine tracks it.
#[derive(Debug, Default)]
pub(super) struct StoredBase {
    /// Base ordinal of each chunk id in the base.
    ords: HashMap<ChunkId, u32>,
    /// The delta since the base.
    delta: Delta,
    /// The chunks whose atomic questions were written since the base.
    questions: QuestionDelta,
}

impl StoredBase {
    /// Changes since the base: chunks added and removed, chunks whose questions were written.
    fn changes(&self) -> usize {
        self.delta.changes() + self.questions.len()
    }
}

impl<S: Store, E: Embedder> Engine<S, E> {
    /// Reads the stored segments at open: the base counts only if its head decodes, matches this
    /// model, every block and list is there, and base − tombstones + delta is exactly the stored
    /// chunks; otherwise it is left for [`Engine::maintain`] to replace. Nothing here can fail the
    /// open: segments are derived data.
    pub(super) fn attach_segments(&mut self, recs: Vec<SegmentRecord>) {
        self.segment_ids = recs.iter().map(|r| r.id.clone()).collect();
        self.base = None;
        let by_id: HashMap<&str, &SegmentRecord> = recs.iter().map(|r| (r.id.as_str(), r)).collect();
        let get = |k: SegmentKey| by_id.get(k.store_id().as_str()).map(|r| r.data.as_slice());
        let Some(head) = get(SegmentKey::Head).and_then(|b| segment::decode::<SegmentHead>(b).ok()) else { return };
        let Some(delta) = get(SegmentKey::Delta).and_then(|b| segment::decode::<Delta>(b).ok()) else { return };
        if head.format != SEGMENT_FORMAT || head.dim as usize != self.embedder.dim() {
            return;
        }
        // The stored counts name at most the records present (a count of u32::MAX must not
        // allocate its list of keys).
        let named = (head.blocks as usize).saturating_add(head.lists() as usize).saturating_add(2);
        if named > recs.len() || !SegmentKey::all(head.blocks, head.lists()).into_iter().all(|k| get(k).is_some()) {
            return;
        }
        let removed: HashSet<u32> = delta.removed.iter().copied().collect();
        let live_base = head.chunks.iter().enumerate().filter(|(o, _)| !removed.contains(&(*o as u32)));
        let mut count = 0usize;
        for (_, id) in live_base {
            if !self.corpus.chunks.contains_key(id) {
                return;
            }
            count += 1;
        }
        if count + delta.added.len() != self.corpus.chunks.len() || delta.added.iter().any(|id| !self.corpus.chunks.contains_key(id)) {
            return;
        }
        let Some(questions) = self.attach_questions(&get, &head, &removed, recs.len()) else { return };
        let ords = head.chunks.into_iter().enumerate().map(|(o, id)| (id, o as u32)).collect();
        self.base = Some(StoredBase { ords, delta, questions });
    }

    /// The base's atomic questions at open (`q/head`, its lists, `q/delta`; absent: none): the
    /// question delta when they are exactly the stored questions — every live base entry names
    /// a question its chunk has, and those plus the questions of the delta's chunks are all of
    /// them — else `None` (the base is left for [`Engine::maintain`] to replace).
    fn attach_questions<'a>(
        &self,
        get: &dyn Fn(SegmentKey) -> Option<&'a [u8]>,
        head: &SegmentHead,
        removed: &HashSet<u32>,
        records: usize,
    ) -> Option<QuestionDelta> {
        let delta: QuestionDelta = match get(SegmentKey::QuestionDelta) {
            Some(b) => segment::decode(b).ok()?,
            None => QuestionDelta::new(),
        };
        let changed: HashSet<&str> = delta.iter().map(String::as_str).collect();
        let mut count: usize = changed.iter().map(|c| self.ask.atoms.get(*c).map_or(0, Vec::len)).sum();
        if let Some(b) = get(SegmentKey::QuestionHead) {
            let q: QuestionHead = segment::decode(b).ok()?;
            let lists = q.lists();
            if q.dim as usize != self.embedder.dim()
                || lists as usize > records
                || !(0..lists).all(|l| get(SegmentKey::QuestionList(l)).is_some())
            {
                return None;
            }
            for &(o, i) in &q.entries {
                let chunk = head.chunks.get(o as usize)?;
                if removed.contains(&o) || changed.contains(chunk.as_str()) {
                    continue;
                }
                if self.ask.atoms.get(chunk).is_none_or(|qs| qs.len() <= i as usize) {
                    return None;
                }
                count += 1;
            }
        }
        (count == self.ask.question_count()).then_some(delta)
    }

    /// The question delta after atomic questions are written for `chunks` (`None` without a
    /// base): its `Put` joins the write's commit, and [`Engine::set_question_delta`] records it.
    pub(super) fn next_question_delta(&self, chunks: &[ChunkId]) -> Option<(Op, QuestionDelta)> {
        let base = self.base.as_ref()?;
        let mut d = base.questions.clone();
        let had: HashSet<String> = d.iter().cloned().collect();
        d.extend(chunks.iter().filter(|c| !had.contains(*c)).cloned());
        let op =
            Op::Put(Record::Segment(SegmentRecord { id: SegmentKey::QuestionDelta.store_id(), data: segment::encode_question_delta(&d) }));
        Some((op, d))
    }

    /// Records a committed question delta.
    pub(super) fn set_question_delta(&mut self, d: Option<QuestionDelta>) {
        if let (Some(base), Some(d)) = (self.base.as_mut(), d) {
            if !self.segment_ids.iter().any(|id| *id == SegmentKey::QuestionDelta.store_id()) {
                self.segment_ids.push(SegmentKey::QuestionDelta.store_id());
            }
            base.questions = d;
        }
    }

    /// The delta after a write that removes `gone` chunks and adds `new` ones, leaving
    /// `documents` documents (`None` without a base): its `Put` joins the write's commit, and
    /// [`Engine::set_delta`] records it once committed.
    pub(super) fn next_delta(&self, gone: &[ChunkId], new: &[ChunkId], documents: usize) -> Option<(Op, Delta)> {
        let base = self.base.as_ref()?;
        Some(next_delta(&base.delta, &|id| base.ords.get(id).copied(), gone, new, documents))
    }

    /// Records a committed delta.
    pub(super) fn set_delta(&mut self, d: Option<Delta>) {
        if let (Some(base), Some(d)) = (self.base.as_mut(), d) {
            base.delta = d;
        }
    }

    /// Deletes of every stored segment record (the base no longer describes the knowledge base).
    pub(super) fn segment_deletes(&self) -> Vec<Op> {
        self.segment_ids.iter().map(|id| Op::Delete(Collection::Segments, id.clone())).collect()
    }

    /// Forgets the stored base after a commit of [`Engine::segment_deletes`].
    pub(super) fn drop_segments(&mut self) {
        self.base = None;
        self.segment_ids.clear();
    }

    /// Whether the stored base should be (re)built: the knowledge base has at least
    /// `lazyOpenChunks` chunks, and there is no valid base or its delta (chunks and atomic
    /// questions) is [`segment::rebuild_due`] — with `force`, any change. Below the size, stored
    /// segments are deleted instead.
    pub(super) fn segments_due(&self, force: bool) -> Option<bool> {
        let wanted = self.config.lazy_open_chunks > 0 && self.corpus.chunks.len() >= self.config.lazy_open_chunks;
        match (&self.base, wanted) {
            (None, true) => Some(true),
            (Some(b), true) if segment::rebuild_due(b.ords.len(), b.changes()) || (force && b.changes() > 0) => Some(true),
            (Some(_), true) => None,
            (_, false) if !self.segment_ids.is_empty() => Some(false),
            _ => None,
        }
    }

    /// The maintenance step of the stored segments: builds a new base over every chunk (documents
    /// by id, chunks by ordinal) and replaces the old records in one commit, or deletes them when
    /// no base is wanted. `None`: nothing to do.
    pub(super) async fn maintain_segments(&mut self, force: bool) -> Result<Option<SealReport>> {
        let Some(build) = self.segments_due(force) else { return Ok(None) };
        if !build {
            self.commit(self.segment_deletes()).await?;
            self.drop_segments();
            return Ok(Some(SealReport { collection: super::Sealed::Segments, vectors: 0, merged: 0, segments: 0 }));
        }
        let mut doc_ids: Vec<&DocId> = self.corpus.doc_chunks.keys().collect();
        crate::sort::ascending(&mut doc_ids);
        let chunks: Vec<BaseChunk<'_>> = doc_ids
            .iter()
            .flat_map(|d| self.corpus.doc_chunks[*d].iter())
            .filter_map(|id| {
                Some(BaseChunk {
                    id,
                    doc_id: &self.corpus.chunks.get(id)?.doc_id,
                    posting: self.corpus.postings.get(id)?,
                    vector: self.chunk_vector(id)?,
                })
            })
            .collect();
        let mut recs = segment::build_base(&chunks, self.corpus.docs.len() as u64, self.embedder.dim());
        let ask = &self.ask;
        let mut questions: Vec<BaseQuestion<'_>> = Vec::new();
        for (o, c) in chunks.iter().enumerate() {
            for i in 0..ask.atoms.get(c.id).map_or(0, Vec::len) {
                if let Some(vector) = ask.question_vector(c.id, i) {
                    questions.push(BaseQuestion { chunk: o as u32, index: i as u32, vector });
                }
            }
        }
        recs.extend(segment::build_questions(&questions, self.embedder.dim()));
        drop(questions);
        let ords: HashMap<ChunkId, u32> = chunks.iter().enumerate().map(|(o, c)| (c.id.to_string(), o as u32)).collect();
        let vectors = chunks.len();
        drop(chunks);
        let ids: Vec<String> = recs.iter().map(|(k, _)| k.store_id()).collect();
        let keep: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let mut ops: Vec<Op> = self
            .segment_ids
            .iter()
            .filter(|id| !keep.contains(id.as_str()))
            .map(|id| Op::Delete(Collection::Segments, id.clone()))
            .collect();
        let segments = recs.len();
        ops.extend(recs.into_iter().map(|(k, data)| Op::Put(Record::Segment(SegmentRecord { id: k.store_id(), data }))));
        self.commit(ops).await?;
        self.segment_ids = ids;
        self.base = Some(StoredBase {
            ords,
            delta: Delta { documents: self.corpus.docs.len() as u64, ..Delta::default() },
            questions: QuestionDelta::new(),
        });
        Ok(Some(SealReport { collection: super::Sealed::Segments, vectors, merged: 0, segments }))
    }
}
