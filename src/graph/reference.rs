//! The reference reverse DFS: PGR (docs/pseudo-graph.md) written plainly from its definition, by walking
//! the tree with parent and child links and computing each similarity when a node is visited.
//! It is the oracle for [`super::pgr::pgr`] (property test `tests/pgr_equivalence.rs`) and the
//! baseline of `webrag bench-graph`; the engine does not use it.
//!
//! For each key point: the anchors are the `anchors` leaves with the highest similarity `v`
//! (ties: earlier leaf in DFS order). From an anchor, walk up while the parent's weight `w` is
//! positive; the last node reached is the sub-root. Then, for every fact path under the sub-root,
//! walk down from the sub-root and credit each node `w·sim` to that path, stopping the path at its
//! first node of weight 0. A path's score is the sum of its credits over all anchors of all key
//! points, depth by depth; the best `top_rows` paths are selected.
use super::pgr::{PgrParams, PgrResult, top_rows};

/// A forest of mind maps: node `i` has `parent[i]` and `children[i]` (in order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Forest {
    /// Parent of each node (`None` for a topic).
    pub parent: Vec<Option<u32>>,
    /// Children of each node, in order.
    pub children: Vec<Vec<u32>>,
    /// Topics (roots), in order.
    pub roots: Vec<u32>,
}

impl Forest {
    /// Adds a node under `parent` (a root when `None`); returns its id.
    pub fn push(&mut self, parent: Option<u32>) -> u32 {
        let id = self.parent.len() as u32;
        self.parent.push(parent);
        self.children.push(Vec::new());
        match parent {
            Some(p) => self.children[p as usize].push(id),
            None => self.roots.push(id),
        }
        id
    }
    /// Nodes.
    pub fn len(&self) -> usize {
        self.parent.len()
    }
    /// No nodes.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }
    /// Every root-to-leaf path, in DFS order (the template's row order).
    pub fn paths(&self) -> Vec<Vec<u32>> {
        let mut out = Vec::new();
        let mut stack: Vec<u32> = Vec::new();
        for &r in &self.roots {
            self.collect(r, &mut stack, &mut out);
        }
        out
    }
    fn collect(&self, n: u32, stack: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        stack.push(n);
        if self.children[n as usize].is_empty() {
            out.push(stack.clone());
        } else {
            for &c in &self.children[n as usize] {
                self.collect(c, stack, out);
            }
        }
        stack.pop();
    }
    fn leaves(&self, n: u32, out: &mut Vec<u32>) {
        if self.children[n as usize].is_empty() {
            out.push(n);
        }
        for &c in &self.children[n as usize] {
            self.leaves(c, out);
        }
    }
    fn depth(&self, mut n: u32) -> usize {
        let mut d = 0;
        while let Some(p) = self.parent[n as usize] {
            n = p;
            d += 1;
        }
        d
    }
}

/// Plain dot product, as the definition reads (`sim = cos` of L2-normalised vectors).
fn sim(vectors: &[f32], dim: usize, node: u32, kp: &[f32]) -> f32 {
    let v = &vectors[node as usize * dim..(node as usize + 1) * dim];
    v.iter().zip(kp).map(|(a, b)| a * b).sum()
}

/// PGR by reverse DFS over `forest`, node `i`'s vector at `vectors[i*dim..]`. Rows are fact paths
/// numbered in DFS order, as in [`Forest::paths`].
pub fn reverse_dfs(forest: &Forest, vectors: &[f32], dim: usize, kps: &[&[f32]], p: &PgrParams) -> PgrResult {
    let mut leaves = Vec::new();
    for &r in &forest.roots {
        forest.leaves(r, &mut leaves);
    }
    let row_of: std::collections::HashMap<u32, usize> = leaves.iter().enumerate().map(|(i, &l)| (l, i)).collect();
    let depth_max = leaves.iter().map(|&l| forest.depth(l) + 1).max().unwrap_or(0);
    // credit[row][depth]
    let mut credit = vec![vec![0f32; depth_max]; leaves.len()];
    let mut support = vec![0f32; leaves.len()];
    for kp in kps {
        let mut best = vec![0f32; leaves.len()];
        let mut ranked: Vec<(usize, f32)> = leaves.iter().enumerate().map(|(i, &l)| (i, sim(vectors, dim, l, kp))).collect();
        crate::sort::by(&mut ranked, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for &(row, v) in ranked.iter().take(p.anchors) {
            // Walk up from the anchor while the parent supports it.
            let mut root = leaves[row];
            while let Some(up) = forest.parent[root as usize] {
                if p.weight(sim(vectors, dim, up, kp), v) > 0.0 {
                    root = up;
                } else {
                    break;
                }
            }
            // Walk down every path under the sub-root.
            // (this anchor's credit alone first: its row sums are the rows' support from it.)
            let mut path: Vec<(usize, f32)> = Vec::new();
            let mut mine = vec![vec![0f32; depth_max]; leaves.len()];
            descend(forest, vectors, dim, kp, p, v, root, forest.depth(root), &mut path, &row_of, &mut mine);
            for ((all, own), b) in credit.iter_mut().zip(&mine).zip(best.iter_mut()) {
                for (a, x) in all.iter_mut().zip(own) {
                    *a += x;
                }
                *b = b.max(own.iter().fold(0.0, |a, x| a + x));
            }
        }
        for (s, b) in support.iter_mut().zip(&best) {
            *s += b;
        }
    }
    let sums: Vec<f32> = credit.iter().map(|c| c.iter().fold(0.0, |a, x| a + x)).collect();
    let rows = top_rows(&sums, p.top_rows);
    let support = rows.iter().map(|(r, _)| support[*r as usize]).collect();
    PgrResult { rows, support, anchors: Vec::new() }
}

#[allow(clippy::too_many_arguments)]
fn descend(
    forest: &Forest,
    vectors: &[f32],
    dim: usize,
    kp: &[f32],
    p: &PgrParams,
    v: f32,
    node: u32,
    depth: usize,
    path: &mut Vec<(usize, f32)>,
    row_of: &std::collections::HashMap<u32, usize>,
    credit: &mut [Vec<f32>],
) {
    let s = sim(vectors, dim, node, kp);
    let w = p.weight(s, v);
    let pushed = w > 0.0;
    if pushed {
        path.push((depth, w * s));
    }
    if forest.children[node as usize].is_empty() {
        // A path that stopped early still ends here: credit what it collected.
        for &(d, x) in path.iter() {
            credit[row_of[&node]][d] += x;
        }
    } else {
        for &c in &forest.children[node as usize] {
            if pushed {
                descend(forest, vectors, dim, kp, p, v, c, depth + 1, path, row_of, credit);
            } else {
                // Stopped: the leaves below keep only the credits gathered above.
                descend_stopped(forest, c, path, row_of, credit);
            }
        }
    }
    if pushed {
        path.pop();
    }
}

fn descend_stopped(
    forest: &Forest,
    node: u32,
    path: &[(usize, f32)],
    row_of: &std::collections::HashMap<u32, usize>,
    credit: &mut [Vec<f32>],
) {
    if forest.children[node as usize].is_empty() {
        for &(d, x) in path {
            credit[row_of[&node]][d] += x;
        }
    }
    for &c in &forest.children[node as usize] {
        descend_stopped(forest, c, path, row_of, credit);
    }
}
