//! Property test: the matrix PGR ([`webrag::graph::pgr::pgr`]) returns the same rows with the same
//! scores and support as the plain reverse DFS ([`webrag::graph::reference::reverse_dfs`]) on random forests,
//! key points and thresholds. Vectors are on a 1/64 grid, so every dot product is exact in f32 and
//! both implementations see bit-identical similarities whatever their summation order; scores are
//! then compared bit for bit. `WEBRAG_SEED` reproduces a run; `WEBRAG_CASES` sets the case count.
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use webrag::graph::pgr::{PgrParams, Template, node_sims, pgr};
use webrag::graph::reference::{Forest, reverse_dfs};

/// A random forest: 1..=6 topics, depth 1..=4 below the topic, 1..=4 children per inner node.
fn random_forest(rng: &mut SmallRng) -> Forest {
    let mut f = Forest::default();
    for _ in 0..rng.random_range(1..=6) {
        let root = f.push(None);
        let depth = rng.random_range(1..=4);
        grow(&mut f, rng, root, depth);
    }
    f
}

fn grow(f: &mut Forest, rng: &mut SmallRng, node: u32, depth: u32) {
    if depth == 0 {
        return;
    }
    for _ in 0..rng.random_range(1..=4) {
        let c = f.push(Some(node));
        // Ragged trees: some branches end early.
        let d = if rng.random_bool(0.3) { 0 } else { depth - 1 };
        grow(f, rng, c, d);
    }
}

/// Grid vectors: a few base directions plus small grid noise, so many similarities fall within
/// the thresholds of each other (the interesting cases) and some are exactly equal (ties).
fn random_vectors(rng: &mut SmallRng, n: usize, dim: usize, bases: &[Vec<i32>]) -> Vec<f32> {
    let mut v = Vec::with_capacity(n * dim);
    for _ in 0..n {
        let b = &bases[rng.random_range(0..bases.len())];
        for &base in &b[..dim] {
            let noise = if rng.random_bool(0.3) { rng.random_range(-2..=2) } else { 0 };
            v.push((base + noise) as f32 / 64.0);
        }
    }
    v
}

#[test]
fn matrix_pgr_equals_reference_reverse_dfs() {
    let seed: u64 = std::env::var("WEBRAG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1));
    let cases: usize = std::env::var("WEBRAG_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(2000);
    println!("pgr equivalence: seed {seed} (WEBRAG_SEED={seed} reproduces), {cases} cases");
    let mut rng = SmallRng::seed_from_u64(seed);
    let dim = 8;
    let (mut rows_checked, mut nonempty, mut partial_walks) = (0usize, 0usize, 0usize);
    for case in 0..cases {
        let forest = random_forest(&mut rng);
        let bases: Vec<Vec<i32>> = (0..rng.random_range(1..=3)).map(|_| (0..dim).map(|_| rng.random_range(-4..=4)).collect()).collect();
        let vectors = random_vectors(&mut rng, forest.len(), dim, &bases);
        let n_kps = rng.random_range(1..=3);
        let kps_owned = random_vectors(&mut rng, n_kps, dim, &bases);
        let kps: Vec<&[f32]> = kps_owned.chunks_exact(dim).collect();
        let (support, cont) = match rng.random_range(0..3) {
            0 => PgrParams::REFERENCE_CODE,
            1 => PgrParams::PAPER,
            _ => {
                let s = rng.random_range(0..40) as f32 / 64.0;
                (s, s + rng.random_range(0..40) as f32 / 64.0)
            }
        };
        let p = PgrParams { support, continue_threshold: cont, anchors: rng.random_range(1..=10), top_rows: rng.random_range(1..=12) };
        let expected = reverse_dfs(&forest, &vectors, dim, &kps, &p);
        let paths = forest.paths();
        let t = Template::from_paths(paths.iter().map(|p| p.as_slice()));
        let sims = node_sims(&vectors, dim, &kps);
        let sims_ref: Vec<&[f32]> = sims.iter().map(|s| s.as_slice()).collect();
        let got = pgr(&t, &sims_ref, &p);
        // Rows, scores and support, bit for bit.
        let bits = |r: &webrag::graph::PgrResult| {
            let rows: Vec<(u32, u32)> = r.rows.iter().map(|(i, s)| (*i, s.to_bits())).collect();
            (rows, r.support.iter().map(|s| s.to_bits()).collect::<Vec<_>>())
        };
        assert_eq!(
            bits(&got),
            bits(&expected),
            "case {case} (seed {seed}): matrix {:?} / {:?} vs reference {:?} / {:?}; params {p:?}; forest {forest:?}",
            got.rows,
            got.support,
            expected.rows,
            expected.support
        );
        rows_checked += got.rows.len();
        nonempty += (!got.rows.is_empty()) as usize;
        partial_walks += got.anchors.iter().filter(|a| a.sub_root_col > 0 && a.sub_root_col < a.col).count();
    }
    println!(
        "pgr equivalence: {cases} cases, {nonempty} with selected rows, {rows_checked} rows compared, {partial_walks} anchors stopped between topic and leaf"
    );
    assert!(nonempty > cases / 2, "too few cases select anything: the generator does not exercise PGR");
    assert!(partial_walks > 0, "no anchor stopped below the topic: thresholds never bite");
}
