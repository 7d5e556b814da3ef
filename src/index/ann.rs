//! A segmented vector collection (DESIGN.md §6–7: "HNSW for sealed segments, exact scan for the
//! fresh buffer"): new vectors go to an exact-scan fresh buffer ([`FlatIndex`]); [`SegmentedIndex::seal`]
//! turns the buffer into an immutable HNSW segment (instant-distance; Malkov & Yashunin 2018,
//! `ef_construction` / `ef_search` as in the paper); a removed or overwritten vector of a sealed
//! segment becomes a tombstone, skipped at search time. A search merges the fresh buffer's exact
//! top k with each segment's approximate top k.
//!
//! Status: the engine does not use it yet (its collections are still exact scans, rebuilt at
//! open); persisting segments in the store (`ann`) and sealing in idle time come next.
use std::collections::{HashMap, HashSet};

use instant_distance::{Builder, HnswMap, Point, Search};

use super::vectors::FlatIndex;
use crate::embed::gemm::dot;

/// HNSW and sealing parameters.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AnnParams {
    /// Candidate list size while building a segment. Default 100.
    pub ef_construction: usize,
    /// Candidate list size while searching a segment (at least `k`). Default 100.
    pub ef_search: usize,
    /// Fresh-buffer size at which [`SegmentedIndex::needs_seal`] says to seal. Default 4096.
    pub seal_at: usize,
    /// Seed of the layer assignment (deterministic segments). Default 1.
    pub seed: u64,
}

impl Default for AnnParams {
    fn default() -> Self {
        AnnParams { ef_construction: 100, ef_search: 100, seal_at: 4096, seed: 1 }
    }
}

/// An L2-normalised vector; distance = 1 − cosine.
#[derive(Debug, Clone)]
struct Unit(Vec<f32>);

impl Point for Unit {
    fn distance(&self, other: &Self) -> f32 {
        1.0 - dot(&self.0, &other.0)
    }
}

struct Segment {
    map: HnswMap<Unit, u32>,
    len: usize,
}

/// Sealed HNSW segments + an exact fresh buffer + tombstones, keyed by slot.
pub struct SegmentedIndex {
    dim: usize,
    params: AnnParams,
    fresh: FlatIndex,
    segments: Vec<Segment>,
    /// Slot → segment holding its live vector.
    sealed: HashMap<u32, usize>,
    tombstones: HashSet<(usize, u32)>,
}

impl SegmentedIndex {
    /// Empty, for `dim`-long vectors.
    pub fn new(dim: usize, params: AnnParams) -> Self {
        SegmentedIndex { dim, params, fresh: FlatIndex::new(dim), segments: Vec::new(), sealed: HashMap::new(), tombstones: HashSet::new() }
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
        (self.fresh.len(), self.segments.len(), self.tombstones.len())
    }
    /// Inserts or overwrites `slot`'s vector (an overwritten sealed vector becomes a tombstone).
    pub fn insert(&mut self, slot: u32, v: &[f32]) {
        self.remove(slot);
        self.fresh.insert(slot, v);
    }
    /// Removes `slot` (no-op if absent).
    pub fn remove(&mut self, slot: u32) {
        if let Some(seg) = self.sealed.remove(&slot) {
            self.tombstones.insert((seg, slot));
        }
        self.fresh.remove(slot);
    }
    /// Whether the fresh buffer reached `seal_at`.
    pub fn needs_seal(&self) -> bool {
        self.fresh.len() >= self.params.seal_at.max(1)
    }
    /// Builds an HNSW segment from the fresh buffer and empties it.
    pub fn seal(&mut self) {
        if self.fresh.is_empty() {
            return;
        }
        let (slots, points): (Vec<u32>, Vec<Unit>) = self.fresh.iter().map(|(s, v)| (s, Unit(v.to_vec()))).unzip();
        let seg = self.segments.len();
        for &s in &slots {
            self.sealed.insert(s, seg);
        }
        let len = slots.len();
        let map = Builder::default()
            .ef_construction(self.params.ef_construction)
            .ef_search(self.params.ef_search)
            .seed(self.params.seed)
            .build(points, slots);
        self.segments.push(Segment { map, len });
        self.fresh = FlatIndex::new(self.dim);
    }
    /// The `k` most similar live vectors: `(slot, cosine)`, best first. Exact over the fresh
    /// buffer, approximate (HNSW) over sealed segments.
    pub fn search(&self, q: &[f32], k: usize) -> Vec<(u32, f32)> {
        let mut out = self.fresh.search(q, k);
        let query = Unit(q.to_vec());
        let mut search = Search::default();
        for (i, seg) in self.segments.iter().enumerate() {
            let hits = seg
                .map
                .search(&query, &mut search)
                .filter(|h| !self.tombstones.contains(&(i, *h.value)))
                .take(k)
                .map(|h| (*h.value, 1.0 - h.distance));
            out.extend(hits);
            debug_assert!(seg.len > 0);
        }
        super::top_k(out.into_iter(), k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        crate::native::XorShift(seed.wrapping_mul(0x9E3779B97F4A7C15) | 1).unit(dim)
    }

    #[test]
    fn sealed_removed_and_overwritten_vectors() {
        let mut ix = SegmentedIndex::new(16, AnnParams { seal_at: 50, ..Default::default() });
        for s in 0..60 {
            ix.insert(s, &unit(s as u64, 16));
        }
        assert!(ix.needs_seal());
        ix.seal();
        assert_eq!(ix.shape(), (0, 1, 0));
        assert_eq!(ix.search(&unit(7, 16), 1)[0].0, 7, "a sealed vector is found");
        ix.remove(7);
        assert!(ix.search(&unit(7, 16), 5).iter().all(|h| h.0 != 7), "a tombstone is skipped");
        ix.insert(8, &unit(1000, 16));
        assert_eq!(ix.search(&unit(1000, 16), 1)[0].0, 8, "the overwrite (fresh) wins");
        assert!(ix.search(&unit(8, 16), 3).iter().all(|h| h.0 != 8 || h.1 > 0.99), "the old sealed vector of 8 is dead");
        assert_eq!(ix.len(), 59);
    }
}
