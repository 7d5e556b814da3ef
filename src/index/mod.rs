//! In-memory indexes rebuilt from the store at open and updated incrementally on add/remove:
//! [`bm25`] (inverted postings) and [`vectors`] (exact-scan dense vectors); [`ann`] (HNSW
//! segments); and [`segment`], the stored index a knowledge base opens lazily with.
//!
//! Both address chunks by a dense `u32` slot; [`Slots`] maps chunk ids to slots and recycles the
//! slots of removed chunks, so adding one note never rebuilds anything.
pub mod ann;
pub mod bm25;
pub mod segment;
pub mod vectors;

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

/// Key ↔ dense slot map with a free list (chunk ids; the atomic questions' [`QuestionKey`]s).
///
/// [`QuestionKey`]: crate::schema::QuestionKey
#[derive(Debug, Clone)]
pub struct Slots<K = String> {
    ids: Vec<Option<K>>,
    by_id: HashMap<K, u32>,
    free: Vec<u32>,
}

impl<K> Default for Slots<K> {
    fn default() -> Self {
        Slots { ids: Vec::new(), by_id: HashMap::new(), free: Vec::new() }
    }
}

impl<K: Hash + Eq + Clone> Slots<K> {
    /// Slot of `id`, allocating one if new.
    pub fn insert<Q>(&mut self, id: &Q) -> u32
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if let Some(&s) = self.by_id.get(id) {
            return s;
        }
        let s = match self.free.pop() {
            Some(s) => {
                self.ids[s as usize] = Some(id.to_owned());
                s
            }
            None => {
                self.ids.push(Some(id.to_owned()));
                (self.ids.len() - 1) as u32
            }
        };
        self.by_id.insert(id.to_owned(), s);
        s
    }
    /// Frees the slot of `id`, returning it.
    pub fn remove<Q>(&mut self, id: &Q) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let s = self.by_id.remove(id)?;
        self.ids[s as usize] = None;
        self.free.push(s);
        Some(s)
    }
    /// Slot of `id`.
    pub fn get<Q>(&self, id: &Q) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.by_id.get(id).copied()
    }
    /// The key in slot `s`.
    pub fn id(&self, s: u32) -> Option<&K> {
        self.ids.get(s as usize).and_then(|o| o.as_ref())
    }
    /// Live slots.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }
    /// No live slots.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
    /// One past the highest slot ever allocated.
    pub fn capacity(&self) -> usize {
        self.ids.len()
    }
}

/// Makes room in `v` for a batch of `additional` more elements: exactly that much when the
/// batch is large (a site build adds every page at once: no doubling, no second copy while the
/// buffer moves), at least half the length more otherwise (small batches stay amortised).
pub fn reserve_batch<T>(v: &mut Vec<T>, additional: usize) {
    if v.capacity() - v.len() < additional {
        v.reserve_exact(additional.max(v.len() / 2));
    }
}

/// Keeps the `k` best `(score, slot)` pairs; ties broken by lower slot.
pub fn top_k(scores: impl Iterator<Item = (u32, f32)>, k: usize) -> Vec<(u32, f32)> {
    use std::cmp::Ordering;
    use std::collections::BinaryHeap;
    #[derive(PartialEq)]
    struct E(f32, u32);
    impl Eq for E {}
    impl PartialOrd for E {
        fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for E {
        // Min-heap on score (reverse), then prefer lower slot as "better".
        fn cmp(&self, o: &Self) -> Ordering {
            o.0.partial_cmp(&self.0).unwrap_or(Ordering::Equal).then(self.1.cmp(&o.1))
        }
    }
    if k == 0 {
        return Vec::new();
    }
    let mut heap = BinaryHeap::with_capacity(k + 1);
    for (s, v) in scores {
        if v.is_nan() {
            continue;
        }
        // A full heap's root is the k-th best: anything not better is skipped without a push.
        if heap.len() == k && heap.peek().is_some_and(|m: &E| E(v, s).cmp(m) != Ordering::Less) {
            continue;
        }
        heap.push(E(v, s));
        if heap.len() > k {
            heap.pop();
        }
    }
    let mut v: Vec<(u32, f32)> = heap.into_iter().map(|E(v, s)| (s, v)).collect();
    crate::sort::by(&mut v, |a, b| b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal).then(a.0.cmp(&b.0)));
    v
}
