//! A segmented vector collection (docs/vector-index.md: "HNSW for sealed segments, exact scan for the
//! fresh buffer"): new vectors go to an exact-scan fresh buffer ([`FlatIndex`]);
//! [`SegmentedIndex::seal`] turns the buffer into an immutable HNSW segment (instant-distance;
//! Malkov & Yashunin 2018, `ef_construction` / `ef_search` as in the paper). A removed or
//! overwritten vector of a sealed segment becomes a tombstone, skipped at search time. A search
//! merges the fresh buffer's exact top k with each segment's approximate top k.
//!
//! Segments are merged in tiers (the logarithmic method): a segment's tier is
//! `⌊log₄(live / seal_at)⌋`; when a seal would leave four segments of one tier, they are rebuilt
//! as one, so `n` vectors live in `O(log n)` segments and each vector is rebuilt `O(log n)` times.
//! A segment more than half tombstones is folded into the next seal.
//!
//! Persistence: [`SegmentedIndex::segment_bytes`] serialises a segment (postcard of the
//! instant-distance map; the points are the vectors, the values local indexes);
//! [`SegmentedIndex::attach`] loads one back over a fresh buffer that already holds the live
//! vectors: a stored point whose id still has the same vector (bit for bit) leaves the fresh buffer
//! for the segment, any other becomes a tombstone. Tombstones are therefore never written: they
//! are derived from the vector records, which stay the source of truth.
use std::collections::HashMap;

use instant_distance::{Builder, HnswMap, Point, Search};
use serde::{Deserialize, Serialize};

use super::vectors::FlatIndex;
use crate::embed::vecmath::dot;

/// The layout of [`SegmentedIndex::segment_bytes`] (`AnnSegmentRecord::format`): postcard of an
/// instant-distance 0.6 `HnswMap<points, u32>`. A stored segment of another format is not
/// attached (its vectors are searched exactly until the next seal rebuilds it).
pub const ANN_FORMAT: u32 = 1;

/// instant-distance's stored graph, read field for field as postcard lays it out (the crate's
/// own types keep them private), to check every link before the crate follows one: a link out
/// of range would panic inside its search.
#[derive(Deserialize)]
struct StoredMap {
    hnsw: StoredHnsw,
    values: Vec<u32>,
}

#[derive(Deserialize)]
struct StoredHnsw {
    ef_search: u64,
    points: Vec<Vec<f32>>,
    zero: Vec<ZeroLinks>,
    layers: Vec<Vec<[u32; 32]>>,
}

/// A layer-0 node's 64 links (`M * 2`; `u32::MAX`: none).
struct ZeroLinks([u32; 64]);

impl<'de> Deserialize<'de> for ZeroLinks {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ZeroLinks;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("64 point ids")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<ZeroLinks, A::Error> {
                let mut out = [0u32; 64];
                for (i, x) in out.iter_mut().enumerate() {
                    *x = seq.next_element()?.ok_or_else(|| serde::de::Error::invalid_length(i, &self))?;
                }
                Ok(ZeroLinks(out))
            }
        }
        d.deserialize_tuple(64, V)
    }
}

/// Checks a stored segment's graph: one layer-0 node and one value per point, upper layers
/// nested prefixes of the points, every link to a node of its own layer (or none).
fn check_graph(bytes: &[u8]) -> Result<(), AttachError> {
    let m: StoredMap = postcard::from_bytes(bytes).map_err(|e| AttachError::Decode(e.to_string()))?;
    let n = m.hnsw.points.len();
    if m.hnsw.ef_search == 0 || m.hnsw.ef_search > 100_000 {
        return Err(AttachError::Shape(format!("ef_search {}", m.hnsw.ef_search)));
    }
    if m.hnsw.zero.len() != n || m.values.len() != n {
        return Err(AttachError::Shape(format!("{n} points, {} layer-0 nodes, {} values", m.hnsw.zero.len(), m.values.len())));
    }
    let ok = |links: &[u32], len: usize| links.iter().all(|&l| l == u32::MAX || (l as usize) < len);
    if !m.hnsw.zero.iter().all(|z| ok(&z.0, n)) {
        return Err(AttachError::Shape("a layer-0 link out of range".into()));
    }
    let mut below = n;
    for layer in &m.hnsw.layers {
        if layer.is_empty() || layer.len() > below || !layer.iter().all(|u| ok(u, layer.len())) {
            return Err(AttachError::Shape("an upper layer that is empty, not nested, or links out of range".into()));
        }
        below = layer.len();
    }
    Ok(())
}

/// HNSW and sealing parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AnnParams {
    /// Candidate list size while building a segment. Default 40 (recall@10 vs exact stays
    /// 1.0000 in `tests/ann_recall.rs`; 100 costs 2.3× the build time for no gain there); range
    /// 1..=1000.
    pub ef_construction: usize,
    /// Candidate list size while searching a segment (at least `k`). Default 100; range 1..=1000.
    pub ef_search: usize,
    /// Fresh-buffer size (vectors) at which [`SegmentedIndex::needs_seal`] says to seal. Default
    /// 4096; range 16..=1,000,000.
    pub seal_at: usize,
    /// Seed of the layer assignment (deterministic segments). Default 1.
    pub seed: u64,
}

impl Default for AnnParams {
    fn default() -> Self {
        AnnParams {
            ef_construction: Self::EF_CONSTRUCTION.count(),
            ef_search: Self::EF_SEARCH.count(),
            seal_at: Self::SEAL_AT.count(),
            seed: 1,
        }
    }
}

impl AnnParams {
    /// `ann.efConstruction`.
    pub const EF_CONSTRUCTION: crate::options::Range = crate::options::Range::new("efConstruction", 40.0, 1.0, 1000.0);
    /// `ann.efSearch`.
    pub const EF_SEARCH: crate::options::Range = crate::options::Range::new("efSearch", 100.0, 1.0, 1000.0);
    /// `ann.sealAt`.
    pub const SEAL_AT: crate::options::Range = crate::options::Range::new("sealAt", 4096.0, 16.0, 1_000_000.0);
    /// The options as docs/api.md (`ann`) and `index.d.ts` (`AnnOptions`) state them.
    pub const DOCS: &[crate::options::Doc] = &[
        crate::options::Doc::new(
            "efConstruction",
            crate::options::Value::Number(Self::EF_CONSTRUCTION),
            "candidate list while building a segment",
        ),
        crate::options::Doc::new(
            "efSearch",
            crate::options::Value::Number(Self::EF_SEARCH),
            "candidate list while searching a segment (at least k)",
        ),
        crate::options::Doc::new(
            "sealAt",
            crate::options::Value::Number(Self::SEAL_AT),
            "vectors in the exact fresh buffer before it is sealed into a segment",
        ),
        crate::options::Doc::new(
            "seed",
            crate::options::Value::Other { ts: "number", default: "1", accepts: "any u64" },
            "seed of the layer assignment (deterministic segments)",
        ),
    ];

    /// Checks the ranges; the error names the field (`ann.<field>`).
    pub fn validate(&self) -> Result<(), crate::error::InputError> {
        crate::options::check_all(
            "ann.",
            &[
                (Self::EF_CONSTRUCTION, self.ef_construction as f64),
                (Self::EF_SEARCH, self.ef_search as f64),
                (Self::SEAL_AT, self.seal_at as f64),
            ],
        )
    }
}

/// An L2-normalised vector; distance = 1 − cosine.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Unit(Vec<f32>);

impl Point for Unit {
    fn distance(&self, other: &Self) -> f32 {
        1.0 - dot(&self.0, &other.0)
    }
}

/// Local index of a tombstone in [`Segment::slots`].
const DEAD: u32 = u32::MAX;

struct Segment {
    /// Stable number (the store key), increasing.
    seq: u64,
    /// Points with their local index as value.
    map: HnswMap<Unit, u32>,
    /// Local index → slot, or [`DEAD`].
    slots: Vec<u32>,
    live: usize,
}

impl Segment {
    fn tier(&self, seal_at: usize) -> u32 {
        tier(self.live, seal_at)
    }
    /// Live `(slot, vector)` pairs.
    fn live_points(&self) -> impl Iterator<Item = (u32, &Unit)> + '_ {
        self.map.iter().zip(&self.map.values).filter_map(|((_, p), &local)| {
            let s = self.slots[local as usize];
            (s != DEAD).then_some((s, p))
        })
    }
}

fn tier(len: usize, seal_at: usize) -> u32 {
    let mut t = 0;
    let mut cap = seal_at.max(1) * 4;
    while len >= cap {
        t += 1;
        cap = cap.saturating_mul(4);
    }
    t
}

/// The largest segment number [`SegmentedIndex::attach`] takes (2⁵³ − 1: one seal per
/// nanosecond would take 285 years to reach it); a stored record past it is not attached, so the
/// next number never overflows nor meets [`SealOutcome::created`]'s `u64::MAX`.
pub const MAX_SEQ: u64 = (1 << 53) - 1;

/// What a [`SegmentedIndex::seal`] changed: the segment to write and the ones to delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealOutcome {
    /// Sequence number of the new segment (`u64::MAX` when every vector taken was dead, so no
    /// segment was built).
    pub created: u64,
    /// Sequence numbers of the segments merged into it (to delete from the store).
    pub dropped: Vec<u64>,
    /// Vectors in the new segment.
    pub len: usize,
}

/// Errors of [`SegmentedIndex::attach`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AttachError {
    /// The bytes are not a segment.
    #[error("not a segment: {0}")]
    Decode(String),
    /// The segment's vectors are not of this index's dimension, or its id list does not match.
    #[error("{0}")]
    Shape(String),
}

/// Sealed HNSW segments + an exact fresh buffer + tombstones, keyed by slot.
pub struct SegmentedIndex {
    dim: usize,
    params: AnnParams,
    fresh: FlatIndex,
    segments: Vec<Segment>,
    /// Slot → (segment position, local index) of its live sealed vector.
    sealed: HashMap<u32, (usize, u32)>,
    next_seq: u64,
}

impl SegmentedIndex {
    /// Empty, for `dim`-long vectors.
    pub fn new(dim: usize, params: AnnParams) -> Self {
        SegmentedIndex { dim, params, fresh: FlatIndex::new(dim), segments: Vec::new(), sealed: HashMap::new(), next_seq: 0 }
    }
    /// Dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// The parameters.
    pub fn params(&self) -> AnnParams {
        self.params
    }
    /// Changes the search-time parameter `ef_search` and the sealing threshold (built segments keep
    /// their `ef_construction`).
    pub fn set_params(&mut self, params: AnnParams) {
        self.params = params;
    }
    /// Live vectors.
    pub fn len(&self) -> usize {
        self.fresh.len() + self.sealed.len()
    }
    /// No live vectors.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `(fresh vectors, sealed segments, tombstones)`.
    pub fn shape(&self) -> (usize, usize, usize) {
        let dead = self.segments.iter().map(|s| s.slots.len() - s.live).sum();
        (self.fresh.len(), self.segments.len(), dead)
    }
    /// Sequence numbers of the sealed segments, oldest first.
    pub fn segment_seqs(&self) -> Vec<u64> {
        self.segments.iter().map(|s| s.seq).collect()
    }
    /// Makes room for `n` more fresh vectors.
    pub fn reserve(&mut self, n: usize) {
        self.fresh.reserve(n);
    }
    /// Inserts or overwrites `slot`'s vector (an overwritten sealed vector becomes a tombstone).
    pub fn insert(&mut self, slot: u32, v: &[f32]) {
        self.remove(slot);
        self.fresh.insert(slot, v);
    }
    /// Removes `slot` (no-op if absent).
    pub fn remove(&mut self, slot: u32) {
        if let Some((seg, local)) = self.sealed.remove(&slot) {
            let seg = &mut self.segments[seg];
            seg.slots[local as usize] = DEAD;
            seg.live -= 1;
        }
        self.fresh.remove(slot);
    }
    /// The live vector of `slot` (a linear search of its segment when sealed).
    pub fn get(&self, slot: u32) -> Option<&[f32]> {
        if let Some(v) = self.fresh.get(slot) {
            return Some(v);
        }
        let &(seg, local) = self.sealed.get(&slot)?;
        let seg = &self.segments[seg];
        let i = seg.map.values.iter().position(|&l| l == local)?;
        seg.map.iter().nth(i).map(|(_, p)| p.0.as_slice())
    }
    /// Whether a segment holds a tombstone.
    pub fn has_tombstones(&self) -> bool {
        self.segments.iter().any(|s| s.live < s.slots.len())
    }
    /// Whether the fresh buffer reached `seal_at`.
    pub fn needs_seal(&self) -> bool {
        self.fresh.len() >= self.params.seal_at.max(1)
    }

    /// Builds an HNSW segment from the fresh buffer (and from the segments it merges with: three
    /// of its tier, and any more than half tombstones), empties the buffer, and says what changed.
    /// `None` when the buffer is empty.
    pub fn seal(&mut self) -> Option<SealOutcome> {
        self.seal_purging(false)
    }

    /// [`SegmentedIndex::seal`], and with `purge` also rebuilds every segment that holds a
    /// tombstone, so no removed vector is left anywhere. `None` when there is nothing to build.
    pub fn seal_purging(&mut self, purge: bool) -> Option<SealOutcome> {
        let seal_at = self.params.seal_at;
        let mut take: Vec<usize> = (0..self.segments.len())
            .filter(|&i| {
                let seg = &self.segments[i];
                seg.live * 2 < seg.slots.len() || (purge && seg.live < seg.slots.len())
            })
            .collect();
        if self.fresh.is_empty() && take.is_empty() {
            return None;
        }
        let mut len = self.fresh.len() + take.iter().map(|&i| self.segments[i].live).sum::<usize>();
        loop {
            let t = tier(len, seal_at);
            let mates: Vec<usize> =
                (0..self.segments.len()).filter(|i| !take.contains(i) && self.segments[*i].tier(seal_at) == t).collect();
            if mates.len() < 3 {
                break;
            }
            for &i in &mates[mates.len() - 3..] {
                len += self.segments[i].live;
                take.push(i);
            }
        }
        crate::sort::ascending(&mut take);
        let mut slots: Vec<u32> = Vec::with_capacity(len);
        let mut points: Vec<Unit> = Vec::with_capacity(len);
        for &i in &take {
            for (s, p) in self.segments[i].live_points() {
                slots.push(s);
                points.push(p.clone());
            }
        }
        for (s, v) in self.fresh.iter() {
            slots.push(s);
            points.push(Unit(v.to_vec()));
        }
        let dropped: Vec<u64> = take.iter().map(|&i| self.segments[i].seq).collect();
        for &i in take.iter().rev() {
            self.segments.remove(i);
        }
        self.fresh = FlatIndex::new(self.dim);
        if slots.is_empty() {
            // Only dead segments were taken: nothing to build.
            self.reindex();
            return Some(SealOutcome { created: u64::MAX, dropped, len: 0 });
        }
        let locals: Vec<u32> = (0..slots.len() as u32).collect();
        let map = Builder::default()
            .ef_construction(self.params.ef_construction)
            .ef_search(self.params.ef_search)
            .seed(self.params.seed)
            .build(points, locals);
        let seq = self.next_seq;
        // next_seq ≤ MAX_SEQ + 1 (attach refuses larger numbers), far from u64::MAX.
        self.next_seq = self.next_seq.saturating_add(1);
        let len = slots.len();
        self.segments.push(Segment { seq, map, live: len, slots });
        self.reindex();
        Some(SealOutcome { created: seq, dropped, len })
    }

    fn reindex(&mut self) {
        self.sealed.clear();
        for (i, seg) in self.segments.iter().enumerate() {
            for (local, &s) in seg.slots.iter().enumerate() {
                if s != DEAD {
                    self.sealed.insert(s, (i, local as u32));
                }
            }
        }
    }

    /// The slots of segment `seq`'s points by local index ([`u32::MAX`] for tombstones), to
    /// name them in the store.
    pub fn segment_slots(&self, seq: u64) -> Option<&[u32]> {
        self.segments.iter().find(|s| s.seq == seq).map(|s| s.slots.as_slice())
    }

    /// Segment `seq` serialised (postcard); `None` when there is no such segment (or serialising
    /// failed, which writing to memory does not).
    pub fn segment_bytes(&self, seq: u64) -> Option<Vec<u8>> {
        let seg = self.segments.iter().find(|s| s.seq == seq)?;
        postcard::to_allocvec(&seg.map).ok()
    }

    /// Loads a stored segment over the fresh buffer. `slots[local]` is the current slot of the
    /// segment's point `local` (`None`: its owner is gone). A point whose slot holds the same
    /// vector in the fresh buffer moves from the buffer to the segment; any other point is a
    /// tombstone. Later seals number their segments after `seq`.
    ///
    /// Errors: [`AttachError`] when the bytes do not decode or do not fit (nothing changes then).
    pub fn attach(&mut self, seq: u64, bytes: &[u8], slots: &[Option<u32>]) -> Result<(), AttachError> {
        if seq > MAX_SEQ {
            return Err(AttachError::Shape(format!("segment number {seq} is past {MAX_SEQ}")));
        }
        check_graph(bytes)?;
        let map: HnswMap<Unit, u32> = postcard::from_bytes(bytes).map_err(|e| AttachError::Decode(e.to_string()))?;
        let n = map.values.len();
        if n != slots.len() {
            return Err(AttachError::Shape(format!("{n} points but {} ids", slots.len())));
        }
        let mut local_of = vec![DEAD; n];
        for ((_, p), &local) in map.iter().zip(&map.values) {
            if p.0.len() != self.dim {
                return Err(AttachError::Shape(format!("a {}-d point in a {}-d index", p.0.len(), self.dim)));
            }
            if local as usize >= n || local_of[local as usize] != DEAD {
                return Err(AttachError::Shape(format!("local index {local} out of range or repeated")));
            }
            local_of[local as usize] = local;
        }
        let mut seg_slots = vec![DEAD; n];
        let mut live = 0;
        for ((_, p), &local) in map.iter().zip(&map.values) {
            let Some(s) = slots[local as usize] else { continue };
            let same = self.fresh.get(s).is_some_and(|v| v.iter().zip(&p.0).all(|(a, b)| a.to_bits() == b.to_bits()));
            if same && !self.sealed.contains_key(&s) {
                self.fresh.remove(s);
                seg_slots[local as usize] = s;
                live += 1;
            }
        }
        let pos = self.segments.len();
        for (local, &s) in seg_slots.iter().enumerate() {
            if s != DEAD {
                self.sealed.insert(s, (pos, local as u32));
            }
        }
        self.segments.push(Segment { seq, map, slots: seg_slots, live });
        self.next_seq = self.next_seq.max(seq + 1);
        Ok(())
    }

    /// The `k` most similar live vectors: `(slot, cosine)`, best first. Exact over the fresh
    /// buffer, approximate (HNSW, `ef_search` candidates) over sealed segments.
    pub fn search(&self, q: &[f32], k: usize) -> Vec<(u32, f32)> {
        let mut out = self.fresh.search(q, k);
        if self.segments.is_empty() {
            return out;
        }
        let query = Unit(q.to_vec());
        let mut search = Search::default();
        for seg in &self.segments {
            let hits = seg
                .map
                .search(&query, &mut search)
                .filter_map(|h| {
                    let s = seg.slots[*h.value as usize];
                    (s != DEAD).then_some((s, 1.0 - h.distance))
                })
                .take(k);
            out.extend(hits);
        }
        super::top_k(out.into_iter(), k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let v: Vec<f32> = (0..dim).map(|_| rng.random::<f32>() - 0.5).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        v.into_iter().map(|x| x / n).collect()
    }

    #[test]
    fn sealed_removed_and_overwritten_vectors() {
        let mut ix = SegmentedIndex::new(16, AnnParams { seal_at: 50, ..Default::default() });
        for s in 0..60 {
            ix.insert(s, &unit(s as u64, 16));
        }
        assert!(ix.needs_seal());
        assert_eq!(ix.seal(), Some(SealOutcome { created: 0, dropped: vec![], len: 60 }));
        assert_eq!(ix.shape(), (0, 1, 0));
        assert_eq!(ix.search(&unit(7, 16), 1)[0].0, 7, "a sealed vector is found");
        assert_eq!(ix.get(7), Some(unit(7, 16).as_slice()));
        ix.remove(7);
        assert!(ix.search(&unit(7, 16), 5).iter().all(|h| h.0 != 7), "a tombstone is skipped");
        ix.insert(8, &unit(1000, 16));
        assert_eq!(ix.search(&unit(1000, 16), 1)[0].0, 8, "the overwrite (fresh) wins");
        assert!(ix.search(&unit(8, 16), 3).iter().all(|h| h.0 != 8 || h.1 > 0.99), "the old sealed vector of 8 is dead");
        assert_eq!(ix.len(), 59);
        assert_eq!(ix.shape(), (1, 1, 2));
    }

    #[test]
    fn tiers_merge_and_half_dead_segments_fold() {
        let mut ix = SegmentedIndex::new(8, AnnParams { seal_at: 16, ..Default::default() });
        let mut s = 0u32;
        let mut fill = |ix: &mut SegmentedIndex| {
            for _ in 0..16 {
                ix.insert(s, &unit(s as u64, 8));
                s += 1;
            }
            ix.seal().unwrap()
        };
        fill(&mut ix);
        fill(&mut ix);
        fill(&mut ix);
        assert_eq!(ix.shape().1, 3);
        let o = fill(&mut ix);
        assert_eq!((o.dropped, o.len), (vec![0, 1, 2], 64), "four tier-0 segments become one tier-1 segment");
        assert_eq!(ix.segment_seqs(), vec![3]);
        for slot in 0..40 {
            ix.remove(slot);
        }
        let o = fill(&mut ix);
        assert_eq!((o.dropped, o.len), (vec![3], 24 + 16), "a segment more than half dead is folded in");
        assert_eq!(ix.len(), 40);
        for slot in 40..80 {
            assert_eq!(ix.search(&unit(slot as u64, 8), 1)[0].0, slot);
        }
    }

    #[test]
    fn attach_restores_and_derives_tombstones() {
        let params = AnnParams { seal_at: 16, ..Default::default() };
        let mut a = SegmentedIndex::new(8, params);
        for s in 0..20 {
            a.insert(s, &unit(s as u64, 8));
        }
        let o = a.seal().unwrap();
        let bytes = a.segment_bytes(o.created).unwrap();
        let ids: Vec<u32> = a.segment_slots(o.created).unwrap().to_vec();
        // Reopen: slot 3 was removed, slot 4 overwritten, the others unchanged (new slots +100).
        let mut b = SegmentedIndex::new(8, params);
        for s in 0..20u32 {
            match s {
                3 => {}
                4 => b.insert(104, &unit(999, 8)),
                _ => b.insert(s + 100, &unit(s as u64, 8)),
            }
        }
        let map: Vec<Option<u32>> = ids.iter().map(|&s| (s != 3).then_some(s + 100)).collect();
        b.attach(o.created, &bytes, &map).unwrap();
        assert_eq!(b.shape(), (1, 1, 2), "slot 104 stays fresh; 3 and the old 4 are tombstones");
        assert_eq!(b.search(&unit(5, 8), 1)[0].0, 105);
        assert_eq!(b.search(&unit(999, 8), 1)[0].0, 104);
        assert_eq!(b.seal().unwrap().created, o.created + 1);
        assert!(matches!(b.attach(9, b"\x01\x02", &[None]), Err(AttachError::Decode(_))));
        let mut c = SegmentedIndex::new(4, params);
        assert!(matches!(c.attach(0, &bytes, &map), Err(AttachError::Shape(_))));
        // Stored segment numbers are bounded: the next one never overflows (debug builds
        // panicked on u64::MAX) nor becomes the "nothing built" u64::MAX.
        let mut d = SegmentedIndex::new(8, params);
        for seq in [u64::MAX, u64::MAX - 1, MAX_SEQ + 1] {
            assert!(matches!(d.attach(seq, &bytes, &map), Err(AttachError::Shape(_))), "{seq}");
        }
        assert_eq!(d.shape(), (0, 0, 0), "a refused segment changes nothing");
        d.attach(MAX_SEQ, &bytes, &map).unwrap();
        d.insert(1, &unit(1, 8));
        assert_eq!(d.seal().unwrap().created, MAX_SEQ + 1);
    }
}
