//! Idle-time upkeep: sealing grown fresh buffers into HNSW segments, deleting unreadable ones.

use crate::embed::Embedder;
use crate::error::Result;
use crate::index::ann::SegmentedIndex;
use crate::ports::{Collection, Op, Record, Store};
use crate::types::*;

use super::{Engine, SealReport};

impl<S: Store, E: Embedder> Engine<S, E> {
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
                .map(|&s| self.slots.id(s).cloned().unwrap_or_default())
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
                .map(|&s| self.qslots.id(s).map(QuestionKey::store_id).unwrap_or_default())
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
}
