//! `webrag eval --tune-fusion`: the fusion weights and the graph cascade chosen on half of each
//! eval set's questions and checked on the other half. One hybrid+graph search per question, as
//! deep as fusion goes, gives every chunk's rank in each retriever's list
//! ([`crate::types::Scores`]) and the graph retriever's selection; weighted reciprocal-rank
//! fusion and the cascade ([`GraphCascade`]) are then recomputed from those ranks for every
//! candidate setting, with no further search.
use crate::embed::Embedder;
use crate::engine::{Engine, SearchOptions};
use crate::error::Result;
use crate::ports::MemoryStore;
use crate::retrieve::{FusionWeights, GraphCascade};
use crate::types::SearchMode;

use super::eval::EvalSet;

/// One question: its gold passages and, per chunk the fusion saw, its passage, its rank in the
/// BM25, dense and graph lists (from 1; `None`: not in that list) and whether PGR selected it.
pub struct Fusable {
    /// Gold passage indices.
    pub gold: Vec<usize>,
    /// `(passage, [bm25 rank, dense rank, graph rank], selected by PGR)` per chunk.
    pub chunks: Vec<(usize, [Option<u32>; 3], bool)>,
}

/// The lists of every question of `set` (the engine's fusion depth each).
pub async fn lists<E: Embedder>(set: &EvalSet, eng: &Engine<MemoryStore, E>) -> Result<Vec<Fusable>> {
    let mut out = Vec::new();
    for (q, gold) in &set.questions {
        if gold.is_empty() {
            continue;
        }
        let qv = eng.embedder().embed(&[q.as_str()]).await?.pop();
        let opts = SearchOptions { literal: true, ..SearchOptions::new(1000, SearchMode::HybridGraph) };
        let hits = eng.search_with(q, qv.as_deref(), &opts)?;
        let graph = qv.as_deref().map(|v| eng.graph_search(q, v, eng.config().fusion_depth)).unwrap_or_default();
        let selected: std::collections::HashSet<&str> = graph.hits.iter().take(graph.selected).map(|h| h.chunk_id.as_str()).collect();
        let chunks = hits
            .iter()
            .map(|h| {
                (
                    h.doc_id.parse().unwrap_or(usize::MAX),
                    [h.scores.bm25_rank, h.scores.dense_rank, h.scores.graph_rank],
                    selected.contains(h.chunk_id.as_str()),
                )
            })
            .collect();
        out.push(Fusable { gold: gold.clone(), chunks });
    }
    Ok(out)
}

/// Recall@`k` (passages) over `qs` of the fusion of the lists with weights `w` (BM25, dense,
/// graph) and constant `rrf_k`, reordered by `cascade`; a weight of 0 leaves its list out (as
/// [`crate::retrieve::rrf`]).
pub fn recall(qs: &[&Fusable], w: [f32; 3], rrf_k: f32, cascade: &GraphCascade, k: usize) -> f64 {
    let mut sum = 0.0;
    for q in qs {
        let mut scored: Vec<(f32, usize)> = q
            .chunks
            .iter()
            .enumerate()
            .filter_map(|(i, (_, ranks, _))| {
                let s: f32 = ranks.iter().zip(w).filter_map(|(r, w)| r.map(|r| w / (rrf_k + r as f32))).sum();
                (s > 0.0).then_some((s, i))
            })
            .collect();
        // Best first; ties in the order the engine gave.
        scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(&b.1)));
        let fused: Vec<(u32, f32)> = scored.iter().map(|&(s, i)| (i as u32, s)).collect();
        // The graph list (chunk indices by graph rank), PGR's selection first as in the engine.
        let mut graph: Vec<(u32, u32, bool)> =
            q.chunks.iter().enumerate().filter_map(|(i, (_, r, sel))| r[2].map(|r| (r, i as u32, *sel))).collect();
        graph.sort_by_key(|g| (!g.2, g.0));
        let selected = graph.iter().filter(|g| g.2).count();
        let graph: Vec<(u32, f32)> = graph.iter().map(|g| (g.1, 0.0)).collect();
        let mut passages: Vec<usize> = Vec::new();
        for (i, _) in cascade.apply(fused, &graph, selected) {
            let p = q.chunks[i as usize].0;
            if !passages.contains(&p) {
                passages.push(p);
            }
            if passages.len() == k {
                break;
            }
        }
        sum += q.gold.iter().filter(|g| passages.contains(g)).count() as f64 / q.gold.len() as f64;
    }
    100.0 * sum / qs.len().max(1) as f64
}

/// The weights tried: the graph's fixed at 1 (RRF ranks do not change when every weight is
/// scaled alike), BM25's and dense's on a grid.
pub fn grid() -> Vec<[f32; 3]> {
    let steps = [0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5];
    let mut g = Vec::new();
    for b in steps {
        for d in steps {
            g.push([b, d, 1.0]);
        }
    }
    g
}

/// The cascades tried (equal weights): `keep` and `candidates` 0..=3 each, the default first.
pub fn cascade_grid() -> Vec<GraphCascade> {
    let mut g = vec![GraphCascade::DEFAULT];
    for keep in 0..=3 {
        for candidates in 0..=3 {
            let c = GraphCascade { enabled: true, keep, candidates };
            if c != GraphCascade::DEFAULT {
                g.push(c);
            }
        }
    }
    g
}

/// What `--tune-fusion` prints: per set, recall@2/5/10 on the held-out half for each single
/// retriever, equal weights, the tuned weights, the default cascade and the tuned one.
pub struct Tuned {
    /// The weights (no cascade) with the best mean of R@2, R@5 and R@10 over the sets' tuning
    /// halves.
    pub weights: FusionWeights,
    /// That mean on the tuning halves, and equal weights'.
    pub tuning: (f64, f64),
    /// The cascade (equal weights) with the best mean on the tuning halves (the default unless
    /// another is strictly better).
    pub cascade: GraphCascade,
    /// That mean on the tuning halves, and the default cascade's.
    pub cascade_tuning: (f64, f64),
    /// `(dataset, row, R@2, R@5, R@10)` on the held-out halves.
    pub rows: Vec<(String, String, f64, f64, f64)>,
}

/// Tunes on the even-numbered questions of every set and reports on the odd-numbered ones,
/// beside the `shipped` weights (what a build uses today).
pub fn tune(sets: &[(String, Vec<Fusable>)], rrf_k: f32, shipped: FusionWeights) -> Tuned {
    fn half(qs: &[Fusable], odd: usize) -> Vec<&Fusable> {
        qs.iter().enumerate().filter(|(i, _)| i % 2 == odd).map(|x| x.1).collect()
    }
    // The objective: mean over the sets of R@2 + R@5 + R@10 on the tuning half. (R@5 alone
    // picks the graph list by itself, which loses at R@2 and R@10; on these sets no fusion
    // weights reach the graph list's R@5 on both tuning halves.)
    let objective = |w: [f32; 3], c: &GraphCascade| {
        sets.iter().map(|(_, qs)| [2, 5, 10].iter().map(|&k| recall(&half(qs, 0), w, rrf_k, c, k)).sum::<f64>() / 3.0).sum::<f64>()
            / sets.len().max(1) as f64
    };
    let debug = std::env::var_os("WEBRAG_EVAL_DEBUG").is_some();
    let mut best = ([1.0, 1.0, 1.0], f64::MIN);
    for w in grid() {
        let r = objective(w, &GraphCascade::OFF);
        if debug {
            eprintln!("fusion weights {w:?}: {r:.2}");
        }
        if r > best.1 + 1e-9 {
            best = (w, r);
        }
    }
    let equal = objective([1.0, 1.0, 1.0], &GraphCascade::OFF);
    let mut best_cascade = (GraphCascade::DEFAULT, f64::MIN);
    for c in cascade_grid() {
        let r = objective([1.0, 1.0, 1.0], &c);
        if debug {
            eprintln!("graph cascade keep {} candidates {}: {r:.2}", c.keep, c.candidates);
        }
        if r > best_cascade.1 + 1e-9 {
            best_cascade = (c, r);
        }
    }
    let default_cascade = objective([1.0, 1.0, 1.0], &GraphCascade::DEFAULT);
    let c = best_cascade.0;
    let tuned_label = format!("hybrid+graph, tuned cascade (keep {}, candidates {})", c.keep, c.candidates);
    let mut rows = Vec::new();
    for (name, qs) in sets {
        let held = half(qs, 1);
        let off = GraphCascade::OFF;
        let shipped_label =
            format!("hybrid+graph, shipped weights (bm25 {}, dense {}, graph {}), no cascade", shipped.bm25, shipped.dense, shipped.graph);
        let rows_of: [(&str, [f32; 3], GraphCascade); 8] = [
            ("bm25", [1.0, 0.0, 0.0], off),
            ("dense", [0.0, 1.0, 0.0], off),
            ("graph", [0.0, 0.0, 1.0], off),
            ("hybrid+graph, equal weights, no cascade", [1.0, 1.0, 1.0], off),
            ("hybrid+graph, tuned weights, no cascade", best.0, off),
            (shipped_label.as_str(), [shipped.bm25, shipped.dense, shipped.graph], off),
            ("hybrid+graph, graph cascade (keep 2, candidates 1: the default)", [1.0, 1.0, 1.0], GraphCascade::DEFAULT),
            (tuned_label.as_str(), [1.0, 1.0, 1.0], c),
        ];
        for (label, w, c) in rows_of {
            rows.push((
                name.clone(),
                label.to_string(),
                recall(&held, w, rrf_k, &c, 2),
                recall(&held, w, rrf_k, &c, 5),
                recall(&held, w, rrf_k, &c, 10),
            ));
        }
    }
    let [bm25, dense, graph] = best.0;
    Tuned {
        weights: FusionWeights { bm25, dense, graph, atomic: 1.0 },
        tuning: (best.1, equal),
        cascade: c,
        cascade_tuning: (best_cascade.1, default_cascade),
        rows,
    }
}
