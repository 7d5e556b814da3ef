#![cfg(not(target_arch = "wasm32"))]
//! HNSW recall: a [`SegmentedIndex`] sealed into segments vs an exact scan of the same vectors,
//! recall@10 over 200 queries, printed and asserted ≥ 0.98 (issue 4). The vectors are
//! clustered like sentence embeddings (a unit centre per cluster plus noise, normalised);
//! uniformly random 384-d vectors have no neighbourhood structure for any index to find.
use webrag::index::ann::{AnnParams, SegmentedIndex};
use webrag::index::vectors::FlatIndex;
use webrag::native::XorShift as Rng;

#[test]
fn hnsw_recall_at_10_vs_exact() {
    let (dim, n, clusters, k) = (384, 12_000, 300, 10);
    let mut rng = Rng(0x5eed);
    let centres: Vec<Vec<f32>> = (0..clusters).map(|_| (0..dim).map(|_| rng.next_f32()).collect()).collect();
    let params = AnnParams { seal_at: 5_000, ..Default::default() };
    let mut ann = SegmentedIndex::new(dim, params);
    let mut exact = FlatIndex::new(dim);
    let t = std::time::Instant::now();
    for s in 0..n as u32 {
        let v = rng.unit_near(&centres[s as usize % clusters], 0.4);
        ann.insert(s, &v);
        exact.insert(s, &v);
        if ann.needs_seal() {
            ann.seal();
        }
    }
    // Deletes: tombstones in sealed segments and removals from the fresh buffer.
    for s in (0..n as u32).step_by(97) {
        ann.remove(s);
        exact.remove(s);
    }
    let build = t.elapsed().as_secs_f64();
    let (fresh, segments, tombstones) = ann.shape();
    let mut found = 0usize;
    let queries = 200;
    for i in 0..queries {
        let q = rng.unit_near(&centres[(i * 7) % clusters], 0.4);
        let truth: Vec<u32> = exact.search(&q, k).into_iter().map(|x| x.0).collect();
        let got: Vec<u32> = ann.search(&q, k).into_iter().map(|x| x.0).collect();
        found += truth.iter().filter(|t| got.contains(t)).count();
    }
    let recall = found as f64 / (queries * k) as f64;
    println!(
        "HNSW recall@{k} vs exact: {recall:.4} ({n} vectors of {dim}-d, {segments} sealed segments + {fresh} fresh, {tombstones} tombstones; ef_construction {}, ef_search {}; built in {build:.1} s)",
        params.ef_construction, params.ef_search
    );
    assert!(segments >= 2 && fresh > 0 && tombstones > 0, "the test must cover segments, the fresh buffer and tombstones");
    assert!(recall >= 0.98, "recall@{k} {recall}");
}
