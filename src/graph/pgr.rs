//! Matrix-based reverse DFS (PG-RAG's PGR, docs/pseudo-graph.md; paper §4.2–4.5).
//!
//! The candidate topics' fact paths are laid out as a **template**: `R` rows (one per fact path,
//! in DFS order, so the paths under one node are contiguous rows) × `L` columns (depth, topic at
//! column 0). Both template matrices are stored **column-major** (`[L, R]`: a column is
//! contiguous), so every step below is a loop over rows that the compiler vectorises (SIMD128 in
//! the page, AVX natively):
//!
//! - `ID[R×L]`: node ids, `-1` past the end of a row;
//! - `S[R×L]` per key point: `sim(KP, node)` gathered from one similarity per distinct node, `0` at
//!   pads.
//!
//! Per key point, the `anchors` rows with the highest leaf similarity are **anchors**. For an
//! anchor at row `r`, leaf column `c`, value `v`, with weight `w(x)` = 1 if `|x − v| ≤ support`,
//! 0.5 if `≤ continue`, else 0:
//!
//! - **control matrix** CM: walking left from `c` while `w > 0` gives the upper bound `col_f` (the
//!   sub-root `ID[r, col_f]`); on every row, from `col_f` rightwards, `CM[i, j] = w·S[i, j]` until
//!   the first `w = 0` (or the row's end);
//! - **path matrix** PM: 1 from `col_f` to each row's end on the contiguous rows whose
//!   `ID[·, col_f]` is the sub-root (the sub-tree under the upper bound), 0 elsewhere;
//! - **dyeing matrix** `D = CM ⊙ PM`, added into the **aggregation matrix** F.
//!
//! CM is only evaluated on PM's support (the rows `[top, bottom)` from `col_f` on): elsewhere the
//! product is 0 whatever CM holds. The selected fact paths are the `top_rows` rows with the largest
//! row sums of F (ties: lower row first; rows summing to 0 are not selected).
//!
//! F ranks rows for the paper's purpose, choosing the context: a sub-tree dyed by several anchors
//! of one key point is counted once per anchor, so a topic with many middling facts outscores
//! one strong fact. To rank the selected rows as search hits, each also carries its **support**:
//! per key point, the largest row sum of one anchor's dyeing matrix `D`, summed over key points
//! (several key points still add up; several anchors of one key point do not).
//!
//! [`super::reference::reverse_dfs`] computes the same thing by walking the tree; a property test
//! checks they agree bit for bit.

use crate::embed::vecmath::dot_i8;

/// PGR thresholds and sizes.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PgrParams {
    /// Support threshold: `|x − v| ≤ support` gives weight 1.
    pub support: f32,
    /// Continue threshold: `support < |x − v| ≤ continue` gives weight 0.5; beyond, 0.
    pub continue_threshold: f32,
    /// Anchors per key point (top rows by leaf similarity). Default 8.
    pub anchors: usize,
    /// Fact paths returned (top rows by aggregated score). Default 8.
    pub top_rows: usize,
}

impl PgrParams {
    /// `graph.pgr.anchors`.
    pub const ANCHORS: crate::options::Range = crate::options::Range::new("anchors", 8.0, 1.0, 100.0);
    /// `graph.pgr.topRows`.
    pub const TOP_ROWS: crate::options::Range = crate::options::Range::new("topRows", 8.0, 1.0, 1000.0);

    /// The options as docs/api.md (`graph`, `pgr.*`) and `index.d.ts` state them.
    pub const DOCS: &[crate::options::Doc] = &[
        crate::options::Doc::new(
            "support",
            crate::options::Value::Other { ts: "number", default: "0.01", accepts: "0 ≤ support ≤ `continueThreshold` ≤ 2" },
            "weight 1 within this of an anchor's similarity",
        ),
        crate::options::Doc::new(
            "continueThreshold",
            crate::options::Value::Other { ts: "number", default: "0.02", accepts: "as above" },
            "weight 0.5 within this; beyond, 0",
        ),
        crate::options::Doc::new("anchors", crate::options::Value::Number(Self::ANCHORS), "anchors per key point"),
        crate::options::Doc::new("topRows", crate::options::Value::Number(Self::TOP_ROWS), "fact paths selected"),
    ];

    /// The thresholds of the PG-RAG reference code: support 0.01, continue 0.02 (the default).
    pub const REFERENCE_CODE: (f32, f32) = (0.01, 0.02);
    /// The thresholds of the PG-RAG paper (§4.3): support 0.03, continue 0.05.
    pub const PAPER: (f32, f32) = (0.03, 0.05);

    /// Weight of a node of similarity `x` towards an anchor of similarity `v`.
    #[inline]
    pub fn weight(&self, x: f32, v: f32) -> f32 {
        let d = (x - v).abs();
        if d <= self.support {
            1.0
        } else if d <= self.continue_threshold {
            0.5
        } else {
            0.0
        }
    }
}

impl Default for PgrParams {
    fn default() -> Self {
        let (support, continue_threshold) = Self::REFERENCE_CODE;
        PgrParams { support, continue_threshold, anchors: Self::ANCHORS.count(), top_rows: Self::TOP_ROWS.count() }
    }
}

/// The ID template matrix: fact paths in DFS order, column-major.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Template {
    rows: usize,
    cols: usize,
    /// `[cols, rows]`: `ids[c * rows + r]`, −1 past a row's end.
    ids: Vec<i32>,
    /// Length of each row (its leaf is at column `len − 1`).
    lens: Vec<u32>,
}

impl Template {
    /// Lays out paths (root first, leaf last; node ids ≥ 0) as rows, in the order given. Paths
    /// must come in DFS order (paths sharing a prefix node are contiguous) for the path matrix
    /// to describe sub-trees; [`super::reference::Forest::paths`] yields them so.
    pub fn from_paths<'a>(paths: impl IntoIterator<Item = &'a [u32]>) -> Template {
        let paths: Vec<&[u32]> = paths.into_iter().filter(|p| !p.is_empty()).collect();
        let rows = paths.len();
        let cols = paths.iter().map(|p| p.len()).max().unwrap_or(0);
        let mut ids = vec![-1i32; rows * cols];
        for (r, p) in paths.iter().enumerate() {
            for (c, &id) in p.iter().enumerate() {
                ids[c * rows + r] = id as i32;
            }
        }
        Template { rows, cols, lens: paths.iter().map(|p| p.len() as u32).collect(), ids }
    }
    /// Rows (fact paths).
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Columns (longest path).
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// `ID[r, c]` (−1 at pads).
    pub fn id(&self, r: usize, c: usize) -> i32 {
        self.ids[c * self.rows + r]
    }
    /// Length of row `r`.
    pub fn len(&self, r: usize) -> usize {
        self.lens[r] as usize
    }
    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }
    /// The node ids of row `r`, root first.
    pub fn path(&self, r: usize) -> Vec<u32> {
        (0..self.len(r)).map(|c| self.id(r, c) as u32).collect()
    }
    /// The largest node id + 1 (the length a similarity slice must have).
    pub fn node_bound(&self) -> usize {
        self.ids.iter().map(|&i| i + 1).max().unwrap_or(0).max(0) as usize
    }
}

/// One anchor and the sub-tree it dyed (for the explain view).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Anchor {
    /// Key point index.
    pub kp: u32,
    /// Anchor row and leaf column.
    pub row: u32,
    /// Leaf column of the anchor row.
    pub col: u32,
    /// The anchor's similarity `v`.
    pub value: f32,
    /// Upper bound column `col_f` (the sub-root's depth).
    pub sub_root_col: u32,
    /// First row of the path matrix's support.
    pub top: u32,
    /// One past its last row.
    pub bottom: u32,
}

/// PGR's result.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PgrResult {
    /// Selected rows with their aggregated score (row sum of F), best first.
    pub rows: Vec<(u32, f32)>,
    /// Support of each selected row, in the order of `rows`: per key point the largest row sum of
    /// one anchor's dyeing matrix, summed over key points.
    pub support: Vec<f32>,
    /// Every anchor, key point by key point, in rank order.
    pub anchors: Vec<Anchor>,
}

/// Anchors of one key point: the `k` rows with the highest leaf similarity (ties: lower row).
fn anchors_of(t: &Template, s: &[f32], k: usize) -> Vec<(usize, f32)> {
    let r = t.rows;
    let mut leaf: Vec<(usize, f32)> = (0..r).map(|i| (i, s[(t.lens[i] as usize - 1) * r + i])).collect();
    let k = k.min(leaf.len());
    if k == 0 {
        return Vec::new();
    }
    let cmp = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if k < leaf.len() {
        leaf.select_nth_unstable_by(k - 1, cmp);
        leaf.truncate(k);
    }
    leaf.sort_by(cmp);
    leaf
}

/// Runs PGR on a template. `sims[kp][node]` is the similarity of key point `kp` to node `node`
/// (each slice at least [`Template::node_bound`] long).
///
/// One function, longer than most here, on purpose: it is PG-RAG §4.3's matrix algorithm in the
/// paper's order — similarity template, anchors, control matrix, path matrices, dyeing, row
/// aggregation — over flat column-major buffers it allocates once and reuses per anchor; split
/// into functions, each would pass those buffers and their shapes back and forth.
pub fn pgr(t: &Template, sims: &[&[f32]], p: &PgrParams) -> PgrResult {
    let (rows, cols) = (t.rows, t.cols);
    let mut result = PgrResult::default();
    if rows == 0 {
        return result;
    }
    let mut f = vec![0f32; rows * cols]; // aggregation matrix F, column-major
    let mut s = vec![0f32; rows * cols]; // similarity template S of the current key point
    let mut alive = vec![0u8; rows];
    let mut dyed = vec![0f32; rows]; // row sums of the current anchor's D
    let mut best = vec![0f32; rows]; // the largest of those for the current key point
    let mut support = vec![0f32; rows];
    for (kp, sim) in sims.iter().enumerate() {
        // S = sim gathered through ID (0 at pads).
        for (o, &id) in s.iter_mut().zip(&t.ids) {
            *o = if id >= 0 { sim[id as usize] } else { 0.0 };
        }
        for (r, v) in anchors_of(t, &s, p.anchors) {
            let c = t.lens[r] as usize - 1;
            // Control matrix on the anchor row: walk left while the weight is positive.
            let mut col_f = c;
            while col_f > 0 && p.weight(s[(col_f - 1) * rows + r], v) > 0.0 {
                col_f -= 1;
            }
            // Path matrix: the contiguous rows sharing the sub-root ID[r, col_f].
            let col = &t.ids[col_f * rows..(col_f + 1) * rows];
            let root = col[r];
            let mut top = r;
            while top > 0 && col[top - 1] == root {
                top -= 1;
            }
            let mut bottom = r + 1;
            while bottom < rows && col[bottom] == root {
                bottom += 1;
            }
            // D = CM ⊙ PM on the support, column by column: a row stays alive until its first
            // rejected node or its end.
            alive[top..bottom].fill(1);
            dyed[top..bottom].fill(0.0);
            for j in col_f..cols {
                let (sj, fj, idj) = (
                    &s[j * rows + top..j * rows + bottom],
                    &mut f[j * rows + top..j * rows + bottom],
                    &t.ids[j * rows + top..j * rows + bottom],
                );
                let dj = &mut dyed[top..bottom];
                let mut any = 0u8;
                for i in 0..bottom - top {
                    let w = p.weight(sj[i], v);
                    let a = alive[top + i] & (idj[i] >= 0) as u8 & (w > 0.0) as u8;
                    alive[top + i] = a;
                    let x = if a != 0 { w * sj[i] } else { 0.0 };
                    fj[i] += x;
                    dj[i] += x;
                    any |= a;
                }
                if any == 0 {
                    break;
                }
            }
            for (b, d) in best[top..bottom].iter_mut().zip(&dyed[top..bottom]) {
                *b = b.max(*d);
            }
            result.anchors.push(Anchor {
                kp: kp as u32,
                row: r as u32,
                col: c as u32,
                value: v,
                sub_root_col: col_f as u32,
                top: top as u32,
                bottom: bottom as u32,
            });
        }
        for (s, b) in support.iter_mut().zip(best.iter_mut()) {
            *s += *b;
            *b = 0.0;
        }
    }
    // Row sums of F, columns in order.
    let mut sum = vec![0f32; rows];
    for j in 0..cols {
        for (acc, x) in sum.iter_mut().zip(&f[j * rows..(j + 1) * rows]) {
            *acc += *x;
        }
    }
    result.rows = top_rows(&sum, p.top_rows);
    result.support = result.rows.iter().map(|(r, _)| support[*r as usize]).collect();
    result
}

/// The `k` rows with the largest positive score (ties: lower row first).
pub fn top_rows(sum: &[f32], k: usize) -> Vec<(u32, f32)> {
    let mut v: Vec<(u32, f32)> = sum.iter().enumerate().filter(|(_, s)| **s > 0.0).map(|(i, s)| (i as u32, *s)).collect();
    let cmp = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if k < v.len() {
        if k == 0 {
            return Vec::new();
        }
        v.select_nth_unstable_by(k - 1, cmp);
        v.truncate(k);
    }
    v.sort_by(cmp);
    v
}

/// Similarity of each key point to each node of `vectors` (`[n, dim]`, row-major), in f32:
/// `out[kp][node]`. The engine uses the int8 form, [`node_sims_i8`].
pub fn node_sims(vectors: &[f32], dim: usize, kps: &[&[f32]]) -> Vec<Vec<f32>> {
    kps.iter().map(|q| vectors.chunks_exact(dim).map(|v| crate::embed::vecmath::dot(v, q)).collect()).collect()
}

/// Node vectors quantised to int8 for the similarity template (docs/vector-index.md: vectors may be
/// stored as int8): `x ≈ q · scale`, one scale per vector. A 384-d dot product of int8 vectors is
/// exact in i32 and reads a quarter of the bytes of f32, which is what bounds the similarity
/// step on large templates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuantVectors {
    dim: usize,
    data: Vec<i8>,
    scales: Vec<f32>,
}

impl QuantVectors {
    /// Empty, for `dim`-long vectors.
    pub fn new(dim: usize) -> Self {
        QuantVectors { dim, data: Vec::new(), scales: Vec::new() }
    }
    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.scales.len()
    }
    /// No vectors.
    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }
    /// Appends `v` with its own scale ([`crate::embed::vecmath::quantize_i8`]).
    pub fn push(&mut self, v: &[f32]) {
        assert_eq!(v.len(), self.dim, "vector dimension");
        let (scale, q) = crate::embed::vecmath::quantize_i8(v);
        self.data.extend(q);
        self.scales.push(scale);
    }
    /// Appends `v` quantised with a given scale (values are rounded and clamped to ±127).
    pub fn push_scaled(&mut self, v: &[f32], scale: f32) {
        assert_eq!(v.len(), self.dim, "vector dimension");
        self.data.extend(v.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8));
        self.scales.push(scale);
    }
    /// Overwrites vector `i` (per-vector scale).
    pub fn set(&mut self, i: usize, v: &[f32]) {
        let mut one = QuantVectors::new(self.dim);
        one.push(v);
        self.data[i * self.dim..(i + 1) * self.dim].copy_from_slice(&one.data);
        self.scales[i] = one.scales[0];
    }
    /// Makes room for `n` more vectors ([`crate::index::reserve_batch`]).
    pub fn reserve(&mut self, n: usize) {
        crate::index::reserve_batch(&mut self.data, n * self.dim);
        crate::index::reserve_batch(&mut self.scales, n);
    }
    /// Grows to `n` vectors (zeros).
    pub fn resize(&mut self, n: usize) {
        self.data.resize(n * self.dim, 0);
        self.scales.resize(n, 1.0);
    }
    /// Similarity of vector `i` to a quantised key point.
    #[inline]
    pub fn sim(&self, i: usize, kp: &QuantVectors, k: usize) -> f32 {
        let (a, b) = (&self.data[i * self.dim..(i + 1) * self.dim], &kp.data[k * kp.dim..(k + 1) * kp.dim]);
        dot_i8(a, b) as f32 * (self.scales[i] * kp.scales[k])
    }
}

/// int8 similarities: `out[kp][j]` for the vectors `ids` of `nodes`.
pub fn node_sims_i8(nodes: &QuantVectors, ids: &[u32], kps: &QuantVectors) -> Vec<Vec<f32>> {
    (0..kps.len()).map(|k| ids.iter().map(|&i| nodes.sim(i as usize, kps, k)).collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Topic A (node 0) with one strong fact (1) and a weaker one (2); topic B (3) whose two
    /// middling facts (4, 5) sit within the thresholds of each other and of B, so each dyes both.
    fn two_topics() -> (Template, Vec<f32>) {
        let t = Template::from_paths([[0u32, 1].as_slice(), &[0, 2], &[3, 4], &[3, 5]]);
        (t, vec![0.527, 0.541, 0.480, 0.285, 0.293, 0.301])
    }

    #[test]
    fn support_counts_one_anchor_per_key_point_where_the_aggregation_counts_every_one() {
        let (t, sims) = two_topics();
        let r = pgr(&t, &[&sims], &PgrParams::default());
        let order: Vec<u32> = r.rows.iter().map(|x| x.0).collect();
        // The paper's aggregation: B's rows are dyed by both of B's anchors and outscore A's strong fact.
        assert_eq!(order[0], 3, "rows by F: {:?}", r.rows);
        assert_eq!(r.support.len(), r.rows.len());
        let support = |row: u32| r.support[order.iter().position(|x| *x == row).expect("selected")];
        // One anchor's dyeing at most: A's strong fact first, whatever the count of B's facts.
        assert!(support(0) > support(3) && support(0) > support(2), "support {:?} of rows {order:?}", r.support);
        assert!((support(0) - (0.5 * 0.527 + 0.541)).abs() < 1e-6, "{:?}", r.support);
        // Two key points both supporting a row add up.
        let r2 = pgr(&t, &[&sims, &sims], &PgrParams::default());
        let i = r2.rows.iter().position(|x| x.0 == 0).expect("row 0");
        assert!((r2.support[i] - 2.0 * support(0)).abs() < 1e-6);
    }
}
