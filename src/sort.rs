//! Sorting through one copy of the standard library's stable sort.
//!
//! `slice::sort_by` is generic over its element type and its comparator, so every call site
//! with a closure of its own links another copy of the sort (about 4 KB of wasm each): sorting was
//! a fourteenth of the page's code. [`by`] sorts the elements' positions (`usize`) with the
//! comparator as `&mut dyn FnMut`, one copy in all, then moves the elements into that order in
//! place (a cycle walk: `n` swaps at most). The cost is an indirect call per comparison and one
//! `usize` per element, which no sort here notices (the hot top-k selections use
//! `select_nth_unstable_by` and stay as they are).
use std::cmp::Ordering;

/// Sorts `v` stably by `cmp`, as `v.sort_by(cmp)` does.
pub fn by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    by_dyn(v, &mut cmp);
}

/// Sorts `v` stably in its elements' order, as `v.sort()` does.
pub fn ascending<T: Ord>(v: &mut [T]) {
    by_dyn(v, &mut T::cmp);
}

/// Sorts `v` stably by the key `f` gives, as `v.sort_by_key(f)` does.
pub fn by_key<T, K: Ord>(v: &mut [T], mut f: impl FnMut(&T) -> K) {
    by_dyn(v, &mut |a, b| f(a).cmp(&f(b)));
}

fn by_dyn<T>(v: &mut [T], cmp: &mut dyn FnMut(&T, &T) -> Ordering) {
    let mut order: Vec<usize> = (0..v.len()).collect();
    positions(&mut order, &mut |&a, &b| cmp(&v[a], &v[b]));
    // `order[k]` is the position of the element that goes to `k`. Each cycle of the permutation
    // is walked once, carrying its first element along; a done position points at itself.
    for start in 0..order.len() {
        let mut k = start;
        loop {
            let from = order[k];
            order[k] = k;
            if from == start || from == k {
                break;
            }
            v.swap(k, from);
            k = from;
        }
    }
}

/// The one stable sort: positions by a comparator.
#[inline(never)]
fn positions(order: &mut [usize], cmp: &mut dyn FnMut(&usize, &usize) -> Ordering) {
    order.sort_by(|a, b| cmp(a, b));
}

#[cfg(test)]
mod tests {
    #[test]
    fn sorts_as_the_standard_library_does() {
        for n in [0usize, 1, 2, 3, 20, 257] {
            let v: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % 97).collect();
            let mut ours = v.clone();
            super::ascending(&mut ours);
            let mut std = v;
            std.sort();
            assert_eq!(ours, std, "n = {n}");
        }
        let pairs: Vec<(u32, i64)> = (0..500u32).map(|i| (i.wrapping_mul(2_654_435_761) % 17, i64::from(i) * 7 % 13)).collect();
        let mut ours = pairs.clone();
        super::by(&mut ours, |a, b| a.0.cmp(&b.0));
        let mut std = pairs.clone();
        std.sort_by_key(|p| p.0);
        assert_eq!(ours, std, "stable: equal keys keep their order");
        let mut ours = pairs.clone();
        super::by_key(&mut ours, |p| p.1);
        let mut std = pairs.clone();
        std.sort_by_key(|p| p.1);
        assert_eq!(ours, std);
        let mut ours = pairs.clone();
        super::ascending(&mut ours);
        let mut std = pairs;
        std.sort();
        assert_eq!(ours, std);
    }
}
