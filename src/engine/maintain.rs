//! Idle-time upkeep: sealing grown fresh buffers into HNSW segments, deleting unreadable ones.

use crate::embed::Embedder;
use crate::error::Result;
use crate::index::ann::SegmentedIndex;
use crate::ports::{Collection, Op, Record, Store};
use crate::schema::*;

use super::{Engine, SealReport};

impl<S: Store, E: Embedder> Engine<S, E> {
    /// Whether [`Engine::maintain`] has work: a fresh buffer at `ann.sealAt`, unreadable
    /// segments to delete, or index segments to build or delete.
    pub fn needs_maintenance(&self) -> bool {
        !self.stale_ann.is_empty()
            || VectorCollection::ALL.into_iter().any(|c| self.ann_of(c).is_some_and(SegmentedIndex::needs_seal))
            || self.segments_due(false).is_some()
    }

    /// The segmented index of collection `c`.
    pub(super) fn ann_of(&self, c: VectorCollection) -> Option<&SegmentedIndex> {
        match c {
            VectorCollection::Chunks => Some(&self.vectors),
            VectorCollection::Questions => Some(&self.ask.qvectors),
            VectorCollection::Topics => self.graph.ann(NodeKind::Topic),
            VectorCollection::Facts => self.graph.ann(NodeKind::Fact),
        }
    }

    /// The segmented index of collection `c`, to change it.
    pub(super) fn ann_of_mut(&mut self, c: VectorCollection) -> Option<&mut SegmentedIndex> {
        match c {
            VectorCollection::Chunks => Some(&mut self.vectors),
            VectorCollection::Questions => Some(&mut self.ask.qvectors),
            VectorCollection::Topics => self.graph.ann_mut(NodeKind::Topic),
            VectorCollection::Facts => self.graph.ann_mut(NodeKind::Fact),
        }
    }

    /// The stored id of the vector in `slot` of collection `c` (what segments record).
    pub(super) fn owner_id(&self, c: VectorCollection, slot: u32) -> Option<String> {
        match c {
            VectorCollection::Chunks => self.slots.id(slot).cloned(),
            VectorCollection::Questions => self.ask.qslots.id(slot).map(QuestionKey::store_id),
            VectorCollection::Topics | VectorCollection::Facts => self.graph.id_of(slot).map(str::to_string),
        }
    }

    /// One step of background upkeep (the worker runs it when idle): deletes unreadable `ann`
    /// records, else seals the fresh buffer of one vector collection (chunks, topics, facts) that
    /// reached `ann.sealAt` — or, with `force`, any non-empty one, also rebuilding every segment
    /// that holds a removed vector — into an HNSW segment, merging segments by tier, and writes
    /// it (and deletes the merged ones) in one commit; else stores the index segments when due
    /// (with `force`, whenever anything changed since the base). `None`: nothing
    /// to do. Searches see the segment at once; if the commit fails, the next open searches those
    /// vectors exactly again (segments are derived data).
    pub async fn maintain(&mut self, force: bool) -> Result<Option<SealReport>> {
        if !self.stale_ann.is_empty() {
            let ops = self.stale_ann.drain(..).map(|id| Op::Delete(Collection::Ann, id)).collect();
            self.commit(ops).await?;
            return Ok(Some(SealReport { collection: super::Sealed::Nothing, vectors: 0, merged: 0, segments: 0 }));
        }
        match self.due_collection(&VectorCollection::ALL, force) {
            Some(c) => self.seal(c, force).await.map(Some),
            None => self.maintain_segments(force).await,
        }
    }

    /// The first of `among` whose fresh buffer is due for sealing (`force`: any non-empty one, or
    /// one with a removed vector in a segment).
    fn due_collection(&self, among: &[VectorCollection], force: bool) -> Option<VectorCollection> {
        let due = |ix: &SegmentedIndex| if force { ix.shape().0 > 0 || ix.has_tombstones() } else { ix.needs_seal() };
        among.iter().copied().find(|&c| self.ann_of(c).is_some_and(due))
    }

    /// Seals only the collections in `among` that reached `ann.sealAt`, as [`Engine::maintain`]
    /// does, until none is due; the others' fresh buffers keep growing. A bulk build uses it for
    /// the collections its own writes search (the pseudo-graph's topics and facts, which fusion
    /// looks up), leaving the chunks to one seal at the end instead of a rebuild per merge.
    pub async fn seal_due(&mut self, among: &[VectorCollection]) -> Result<Vec<SealReport>> {
        let mut out = Vec::new();
        while let Some(c) = self.due_collection(among, false) {
            out.push(self.seal(c, false).await?);
        }
        Ok(out)
    }

    /// Seals collection `c`'s fresh buffer (with `force`, also purging removed vectors) and
    /// commits the new segment and the deletion of those it merged.
    async fn seal(&mut self, c: VectorCollection, force: bool) -> Result<SealReport> {
        let outcome = self.ann_of_mut(c).and_then(|ix| ix.seal_purging(force)).expect("due: something to seal");
        let ix = self.ann_of(c).expect("sealed just now");
        let ids: Vec<String> =
            ix.segment_slots(outcome.created).unwrap_or(&[]).iter().map(|&s| self.owner_id(c, s).unwrap_or_default()).collect();
        let (bytes, segments, name) = (ix.segment_bytes(outcome.created), ix.shape().1, c.name());
        let mut ops: Vec<Op> = outcome.dropped.iter().map(|&seq| Op::Delete(Collection::Ann, AnnSegmentRecord::key(name, seq))).collect();
        if let Some(data) = bytes {
            ops.push(Op::Put(Record::Ann(AnnSegmentRecord {
                id: AnnSegmentRecord::key(name, outcome.created),
                collection: name.into(),
                seq: outcome.created,
                ids,
                data,
                format: crate::index::ann::ANN_FORMAT,
            })));
        }
        self.commit(ops).await?;
        Ok(SealReport { collection: c.into(), vectors: outcome.len, merged: outcome.dropped.len(), segments })
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
}
