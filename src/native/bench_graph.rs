//! `webrag bench-graph`: matrix PGR ([`crate::graph::pgr::pgr`]) against the plain reverse DFS
//! ([`crate::graph::reference::reverse_dfs`]) on synthetic mind-map forests of 1k, 10k and 100k
//! fact paths (384-d vectors, one key point, the reference code's thresholds).
//!
//! Forests look like structural mind maps: a topic per 10 fact paths, half the topics with two
//! routes of five facts, half with ten facts straight under the topic. A route's vector is its
//! topic's plus noise, a fact's its route's plus noise, so similarities along a path are close and
//! the thresholds bite. Vectors are quantised to multiples of 1/128 (int8-like): every dot product
//! is then exact in f32 whatever the summation order, so the two implementations can be compared
//! bit for bit. Both are timed from the same inputs (forest, node vectors, key point) to the
//! selected rows: the matrix version lays out the template (from the fact paths, which the engine
//! caches per topic), computes each node's similarity once from the int8 node vectors the engine
//! keeps for PGR (exact here: the grid is the int8 scale), and runs PGR; the reference walks the
//! tree and computes f32 similarities as it visits nodes.
use std::time::Instant;

use crate::embed::vecmath::median;
use crate::graph::pgr::{PgrParams, QuantVectors, Template, node_sims_i8, pgr};
use crate::graph::reference::{Forest, reverse_dfs};

use super::XorShift as Rng;

fn quantise_unit(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    for x in v.iter_mut() {
        *x = (*x / n * 128.0).round() / 128.0;
    }
}

fn noisy(rng: &mut Rng, base: &[f32], noise: f32) -> Vec<f32> {
    let mut v: Vec<f32> = base.iter().map(|x| x + noise * rng.next_f32()).collect();
    quantise_unit(&mut v);
    v
}

/// A forest of `paths` fact paths with quantised node vectors (`[nodes, dim]`).
pub fn synthetic(paths: usize, dim: usize, seed: u64) -> (Forest, Vec<f32>) {
    let mut rng = Rng(seed | 1);
    let mut f = Forest::default();
    let mut vecs: Vec<f32> = Vec::new();
    let mut made = 0;
    let mut t = 0;
    while made < paths {
        let topic: Vec<f32> = (0..dim).map(|_| rng.next_f32()).collect();
        let root = f.push(None);
        vecs.extend(noisy(&mut rng, &topic, 0.0));
        let routes = if t % 2 == 0 { vec![Some(5), Some(5)] } else { vec![None] };
        for r in routes {
            let (parent, base, n) = match r {
                Some(n) => {
                    let rv = noisy(&mut rng, &topic, 0.15);
                    let id = f.push(Some(root));
                    vecs.extend(&rv);
                    (id, rv, n)
                }
                None => (root, topic.clone(), 10),
            };
            for _ in 0..n {
                if made == paths {
                    break;
                }
                f.push(Some(parent));
                vecs.extend(noisy(&mut rng, &base, 0.3));
                made += 1;
            }
        }
        t += 1;
    }
    (f, vecs)
}

/// Prints the table.
pub fn run(sizes: &[usize], runs: usize) {
    let dim = 384;
    let p = PgrParams::default();
    println!(
        "PGR: matrix vs reference reverse DFS; {dim}-d vectors on a 1/128 grid, 1 key point, support {} / continue {}, {} anchors, top {} rows; median of {runs} runs",
        p.support, p.continue_threshold, p.anchors, p.top_rows
    );
    println!();
    println!(
        "| fact paths | nodes | template R × L | reference DFS ms | matrix PGR ms (layout / similarities / PGR) | speed-up | identical rows and scores |"
    );
    println!("|---|---|---|---|---|---|---|");
    for &n in sizes {
        let (forest, vecs) = synthetic(n, dim, 0x5eed + n as u64);
        // The key point: close to one fact of the middle topic.
        let mut rng = Rng(7);
        let paths = forest.paths();
        let target = *paths[paths.len() / 2].last().expect("path") as usize;
        let kp = noisy(&mut rng, &vecs[target * dim..(target + 1) * dim], 0.05);
        let kps: Vec<&[f32]> = vec![&kp];
        // The node vectors as the engine keeps them for PGR: int8 (here with the grid's own
        // scale 1/128, so the int8 dot products equal the reference's f32 ones exactly).
        let mut quant = QuantVectors::new(dim);
        for v in vecs.chunks_exact(dim) {
            assert!(v.iter().all(|x| x.abs() <= 127.0 / 128.0), "grid value out of int8 range");
            quant.push_scaled(v, 1.0 / 128.0);
        }
        let mut kp_q = QuantVectors::new(dim);
        kp_q.push_scaled(&kp, 1.0 / 128.0);
        let (mut t_ref, mut t_mat, mut t_layout, mut t_sims, mut t_pgr) = (vec![], vec![], vec![], vec![], vec![]);
        let mut same = true;
        let mut shape = (0, 0);
        for _ in 0..runs {
            let t = Instant::now();
            let expected = std::hint::black_box(reverse_dfs(&forest, &vecs, dim, &kps, &p));
            t_ref.push(t.elapsed().as_secs_f64() * 1e3);
            let t0 = Instant::now();
            let template = Template::from_paths(paths.iter().map(|p| p.as_slice()));
            let t1 = Instant::now();
            let ids: Vec<u32> = (0..forest.len() as u32).collect();
            let sims = node_sims_i8(&quant, &ids, &kp_q);
            let t2 = Instant::now();
            let refs: Vec<&[f32]> = sims.iter().map(|s| s.as_slice()).collect();
            let got = std::hint::black_box(pgr(&template, &refs, &p));
            let t3 = Instant::now();
            t_layout.push((t1 - t0).as_secs_f64() * 1e3);
            t_sims.push((t2 - t1).as_secs_f64() * 1e3);
            t_pgr.push((t3 - t2).as_secs_f64() * 1e3);
            t_mat.push((t3 - t0).as_secs_f64() * 1e3);
            let bits = |r: &[(u32, f32)]| r.iter().map(|(i, s)| (*i, s.to_bits())).collect::<Vec<_>>();
            same &= bits(&got.rows) == bits(&expected.rows) && !got.rows.is_empty();
            shape = (template.rows(), template.cols());
        }
        let (r, m) = (median(t_ref), median(t_mat));
        println!(
            "| {n} | {} | {} × {} | {r:.2} | {m:.2} ({:.2} / {:.2} / {:.2}) | {:.1}× | {} |",
            forest.len(),
            shape.0,
            shape.1,
            median(t_layout),
            median(t_sims),
            median(t_pgr),
            r / m,
            if same { "yes" } else { "NO" }
        );
    }
}
