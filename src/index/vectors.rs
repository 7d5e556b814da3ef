//! Dense vectors with exact (brute-force) cosine search. Rows are contiguous `[rows, dim]` f32;
//! removal swaps the last row in, so the matrix stays dense. (Sealed HNSW segments come with the
//! pseudo-graph milestone; this is the fresh-buffer half of that design.)
use std::collections::HashMap;

/// Row-major `[rows, dim]` matrix of L2-normalised vectors keyed by slot.
#[derive(Debug, Clone)]
pub struct FlatIndex {
    dim: usize,
    data: Vec<f32>,
    slots: Vec<u32>,
    row_of: HashMap<u32, usize>,
}

impl FlatIndex {
    /// An empty index of dimension `dim`.
    pub fn new(dim: usize) -> Self {
        FlatIndex { dim, data: Vec::new(), slots: Vec::new(), row_of: HashMap::new() }
    }
    /// Dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Rows.
    pub fn len(&self) -> usize {
        self.slots.len()
    }
    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
    /// Makes room for `n` more vectors ([`super::reserve_batch`]).
    pub fn reserve(&mut self, n: usize) {
        super::reserve_batch(&mut self.data, n * self.dim);
        super::reserve_batch(&mut self.slots, n);
        self.row_of.reserve(n);
    }
    /// Inserts or overwrites the vector of `slot`. `v.len()` must equal `dim`.
    pub fn insert(&mut self, slot: u32, v: &[f32]) {
        assert_eq!(v.len(), self.dim, "vector dimension");
        if let Some(&r) = self.row_of.get(&slot) {
            self.data[r * self.dim..(r + 1) * self.dim].copy_from_slice(v);
            return;
        }
        self.row_of.insert(slot, self.slots.len());
        self.slots.push(slot);
        self.data.extend_from_slice(v);
    }
    /// Removes the vector of `slot` (no-op if absent).
    pub fn remove(&mut self, slot: u32) {
        let Some(r) = self.row_of.remove(&slot) else { return };
        let last = self.slots.len() - 1;
        if r != last {
            let moved = self.slots[last];
            self.slots[r] = moved;
            self.row_of.insert(moved, r);
            let (head, tail) = self.data.split_at_mut(last * self.dim);
            head[r * self.dim..(r + 1) * self.dim].copy_from_slice(&tail[..self.dim]);
        }
        self.slots.pop();
        self.data.truncate(last * self.dim);
    }
    /// Every `(slot, vector)`, in row order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &[f32])> + '_ {
        self.slots.iter().copied().zip(self.data.chunks_exact(self.dim.max(1)))
    }
    /// The vector of `slot`.
    pub fn get(&self, slot: u32) -> Option<&[f32]> {
        let r = *self.row_of.get(&slot)?;
        Some(&self.data[r * self.dim..(r + 1) * self.dim])
    }
    /// Whether `slot` has a vector here.
    pub fn contains(&self, slot: u32) -> bool {
        self.row_of.contains_key(&slot)
    }
    /// The `k` rows with the highest dot product with `q` (= cosine, vectors being normalised):
    /// `(slot, score)`, best first.
    pub fn search(&self, q: &[f32], k: usize) -> Vec<(u32, f32)> {
        let d = self.dim;
        super::top_k(self.data.chunks_exact(d).zip(&self.slots).map(|(row, &s)| (s, dot(row, q))), k)
    }
    /// [`FlatIndex::search`] over the first `rows` rows inserted (as the index stood then, when
    /// nothing was overwritten or removed since).
    pub fn search_first(&self, q: &[f32], rows: usize, k: usize) -> Vec<(u32, f32)> {
        let d = self.dim;
        super::top_k(self.data.chunks_exact(d).zip(&self.slots).take(rows).map(|(row, &s)| (s, dot(row, q))), k)
    }
}

use crate::embed::vecmath::dot;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_search_remove() {
        let mut ix = FlatIndex::new(2);
        ix.insert(5, &[1.0, 0.0]);
        ix.insert(7, &[0.0, 1.0]);
        ix.insert(9, &[std::f32::consts::FRAC_1_SQRT_2; 2]);
        assert_eq!(ix.search(&[1.0, 0.0], 2).iter().map(|x| x.0).collect::<Vec<_>>(), vec![5, 9]);
        ix.remove(5);
        assert_eq!(ix.len(), 2);
        assert_eq!(ix.search(&[1.0, 0.0], 1)[0].0, 9);
        ix.remove(42);
        assert_eq!(ix.search(&[0.0, 1.0], 3).iter().map(|x| x.0).collect::<Vec<_>>(), vec![7, 9]);
    }
}
