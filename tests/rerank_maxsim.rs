//! A second stage measured and not adopted: late interaction (MaxSim, ColBERT, Khattab & Zaharia,
//! SIGIR 2020, §3.1) over the embedding model's own token vectors, reranking the passages of the
//! hybrid+graph list's first `N` (default 10). It needs no download beyond the query encoder the
//! page already has, so it is the reranker the static-site page could afford.
//!
//! `cargo test --test suite rerank_maxsim:: -- --ignored --nocapture` (N=… to change the depth) prints,
//! per eval set, R@2 / R@5 / R@10 on all questions and on the even- and odd-numbered halves for:
//! the engine's order (`engine`); MaxSim alone (`maxsim`); reciprocal-rank fusion of the engine's
//! rank and the MaxSim rank with constants 2 and 5 (`rrf2`, `rrf5`); and a second-hop query
//! (the question and the first passage, embedded as one text, scoring the others by cosine; the
//! first passage kept; `hop-rrf5`); and the MaxSim cost per question (token vectors of the
//! question and of the `N` passages, CPU, every core). Figures: docs/benchmarks.md, "Graph
//! cascade". The index is cached in `target/evalcache` (as `webrag eval --cache`).
#![cfg(not(target_arch = "wasm32"))]
use crate::common;

use webrag::embed::Embedder;
use webrag::engine::SearchOptions;
use webrag::native::eval;
use webrag::types::SearchMode;

/// Rows of `x` (`h` wide) scaled to unit length.
fn normalise_rows(x: &mut [f32], h: usize) {
    for r in x.chunks_exact_mut(h) {
        let n = r.iter().map(|a| a * a).sum::<f32>().sqrt().max(1e-12);
        r.iter_mut().for_each(|a| *a /= n);
    }
}

/// Recall@`k` of the passage ranking `ranked` against `gold`.
fn recall(ranked: &[usize], gold: &[usize], k: usize) -> f64 {
    gold.iter().filter(|g| ranked.iter().take(k).any(|r| r == *g)).count() as f64 / gold.len() as f64
}

/// MaxSim of a query's token rows against each passage's (`[CLS]` and `[SEP]` left out on both
/// sides): the mean over query tokens of the best cosine with any passage token.
fn maxsim(q: &[f32], q_len: usize, d: &[f32], d_lens: &[usize], h: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(d_lens.len());
    let mut row = 0;
    for &len in d_lens {
        let mut total = 0f32;
        for qt in 1..q_len.saturating_sub(1) {
            let qr = &q[qt * h..(qt + 1) * h];
            let best = (row + 1..row + len.saturating_sub(1))
                .map(|r| qr.iter().zip(&d[r * h..(r + 1) * h]).map(|(a, b)| a * b).sum::<f32>())
                .fold(f32::MIN, f32::max);
            total += best;
        }
        out.push(total / q_len.saturating_sub(2).max(1) as f32);
        row += len;
    }
    out
}

/// Position of each item when sorted by `s`, best first.
fn ranks(s: &[f32]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..s.len()).collect();
    idx.sort_by(|a, b| s[*b].total_cmp(&s[*a]));
    let mut r = vec![0; s.len()];
    for (pos, i) in idx.iter().enumerate() {
        r[*i] = pos;
    }
    r
}

const VARIANTS: [&str; 5] = ["engine", "maxsim", "rrf2", "rrf5", "hop-rrf5"];

#[test]
#[ignore = "a measurement (minutes): cargo test --test suite rerank_maxsim:: -- --ignored --nocapture"]
fn maxsim_rerank_of_the_fused_top_n() {
    pollster::block_on(async {
        let m = common::model();
        let h = m.dim();
        let n_top: usize = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
        for name in ["hotpotqa", "musique"] {
            let Some(dir) = common::shared_data(&format!("data/{name}")) else { return };
            let set = if name == "hotpotqa" { eval::load_hotpotqa(&dir) } else { eval::load_musique(&dir) }.unwrap();
            let cache = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("target/evalcache/{name}.json"));
            let eng = eval::build(&set, m, Some(&cache)).await.unwrap();
            // sums[variant][half][k]
            let mut sums = [[[0f64; 3]; 2]; VARIANTS.len()];
            let mut n = [0usize; 2];
            let mut maxsim_ms = 0f64;
            for (qi, (q, gold)) in set.questions.iter().enumerate() {
                if gold.is_empty() {
                    continue;
                }
                let half = qi % 2;
                n[half] += 1;
                let qv = m.embed(&[q.as_str()]).await.unwrap().pop().unwrap();
                let opts = SearchOptions { literal: true, ..SearchOptions::new(100, SearchMode::HybridGraph) };
                let hits = eng.search_with(q, Some(&qv), &opts).unwrap();
                // Passages in the engine's order, each with its best chunk.
                let (mut ranked, mut best): (Vec<usize>, Vec<String>) = (Vec::new(), Vec::new());
                for hit in &hits {
                    let p: usize = hit.doc_id.parse().unwrap_or(usize::MAX);
                    if !ranked.contains(&p) {
                        ranked.push(p);
                        best.push(hit.chunk_id.clone());
                    }
                }
                let nt = n_top.min(ranked.len());
                if nt == 0 {
                    continue;
                }
                let texts: Vec<String> =
                    (0..nt).map(|i| format!("{}\n{}", set.passages[ranked[i]].0, eng.corpus().chunk(&best[i]).unwrap().text)).collect();
                let started = std::time::Instant::now();
                let q_ids = m.tokenizer().encode(q).unwrap();
                let mut qx = m.bert().forward(std::slice::from_ref(&q_ids));
                normalise_rows(&mut qx, h);
                let seqs: Vec<Vec<u32>> = texts.iter().map(|t| m.tokenizer().encode(t).unwrap()).collect();
                let mut dx = m.bert().forward(&seqs);
                normalise_rows(&mut dx, h);
                let ms = maxsim(&qx, q_ids.len(), &dx, &seqs.iter().map(Vec::len).collect::<Vec<_>>(), h);
                maxsim_ms += started.elapsed().as_secs_f64() * 1000.0;
                let hop_query = format!("{q}\n{}", texts[0]);
                let hv = m.embed(&[hop_query.as_str()]).await.unwrap().pop().unwrap();
                let hop: Vec<f32> =
                    best[..nt].iter().map(|c| eng.chunk_vector(c).unwrap().iter().zip(&hv).map(|(a, b)| a * b).sum()).collect();
                let (msr, hopr) = (ranks(&ms), ranks(&hop));
                for (vi, v) in VARIANTS.iter().enumerate() {
                    let key = |i: usize| -> f64 {
                        let rrf = |k: f64, other: usize| 1.0 / (k + i as f64) + 1.0 / (k + other as f64);
                        match *v {
                            "engine" => -(i as f64),
                            "maxsim" => ms[i] as f64,
                            "rrf2" => rrf(2.0, msr[i]),
                            "rrf5" => rrf(5.0, msr[i]),
                            _ if i == 0 => f64::MAX,
                            _ => rrf(5.0, hopr[i]),
                        }
                    };
                    let mut order: Vec<usize> = (0..nt).collect();
                    order.sort_by(|a, b| key(*b).total_cmp(&key(*a)));
                    let mut reranked: Vec<usize> = order.iter().map(|i| ranked[*i]).collect();
                    reranked.extend_from_slice(&ranked[nt..]);
                    for (ki, k) in [2usize, 5, 10].iter().enumerate() {
                        sums[vi][half][ki] += recall(&reranked, gold, *k);
                    }
                }
            }
            let total = n[0] + n[1];
            println!("{name}: {total} questions, MaxSim over the first {n_top} passages: {:.1} ms a question", maxsim_ms / total as f64);
            let fmt = |s: [f64; 3], d: usize| s.map(|x| format!("{:.1}", 100.0 * x / d as f64)).join(" / ");
            for (vi, v) in VARIANTS.iter().enumerate() {
                let [even, odd] = sums[vi];
                let all = [0, 1, 2].map(|k| even[k] + odd[k]);
                println!("  {v:9} R@2/5/10 all {}   even {}   odd {}", fmt(all, total), fmt(even, n[0]), fmt(odd, n[1]));
            }
        }
    });
}
