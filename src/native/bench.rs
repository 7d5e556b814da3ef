//! `webrag bench`: native speed figures. Embedding on `../shared/embeddings/bench_sentences.json`
//! (medians of 3 runs); ingest documents/s with the real model; search latency p50/p95 at 1k and
//! at 17,364 documents (the CRUD news corpus).
//!
//! For the latency figures the vectors come from [`HashingEmbedder`] (sparse random indexing of the
//! real tokenizer's word pieces: neighbourhood structure like sentence embeddings at no model
//! cost), because embedding 17k articles on 2 CPU cores would take an hour; after each add the
//! idle-time sealing runs, so dense search goes through HNSW segments as in the page. Query
//! embedding is excluded from the latency, as the target says.
use std::path::Path;
use std::time::Instant;

use crate::config::Config;
use crate::embed::hashing::HashingEmbedder;
use crate::embed::vecmath::median;
use crate::embed::{CpuEmbedder, Embedder};
use crate::engine::{Engine, SearchOptions};
use crate::error::Result;
use crate::ports::{FixedClock, MemoryStore, NoProgress, Store};
use crate::types::{DocumentInput, Format, SearchMode};

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Reads the CRUD news articles (one per line: `[ date ] ，正文：…`).
pub fn crud_news(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names: Vec<_> = std::fs::read_dir(dir)?.flatten().map(|e| e.path()).collect();
    names.sort();
    let mut out = Vec::new();
    for n in names {
        for line in std::fs::read_to_string(n)?.lines() {
            if !line.trim().is_empty() {
                out.push(line.to_string());
            }
        }
    }
    Ok(out)
}

async fn latency<E: Embedder>(eng: &Engine<MemoryStore, E>, queries: &[String]) -> Result<(f64, f64)> {
    let mut times = Vec::new();
    for q in queries {
        let qv = eng.embedder().embed(&[q.as_str()]).await?.pop();
        let t = Instant::now();
        let hits = eng.search_with(q, qv.as_deref(), &SearchOptions::new(10, SearchMode::Hybrid))?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        std::hint::black_box(hits);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    Ok((pct(&times, 0.5), pct(&times, 0.95)))
}

/// Runs the native benchmark and prints a table.
pub async fn run(model: &CpuEmbedder, shared: &Path) -> Result<()> {
    let io = |e: std::io::Error| crate::embed::file_error("bench data", e);
    let sentences: Vec<String> = serde_json::from_slice(&std::fs::read(shared.join("embeddings/bench_sentences.json")).map_err(io)?)
        .map_err(|e| crate::embed::file_error("bench_sentences.json", e))?;
    println!("| figure | native |");
    println!("|---|---|");
    // All 1,000 sentences (the set the references were measured on): three runs, each over one
    // third, after a short warm-up.
    let third = sentences.len().div_ceil(3);
    for s in sentences.iter().take(8) {
        std::hint::black_box(model.embed_sync(&[s.as_str()])?);
    }
    for batch in [1usize, 32] {
        let mut rates = Vec::new();
        for run in 0..3 {
            let part: Vec<&str> = sentences.iter().skip(run * third).take(third).map(|s| s.as_str()).collect();
            let t = Instant::now();
            for b in part.chunks(batch) {
                std::hint::black_box(model.embed_sync(b)?);
            }
            rates.push(part.len() as f64 / t.elapsed().as_secs_f64());
        }
        println!("| embedding, batch {batch}, {} sentences: sentences/s (median of 3) | {:.1} |", sentences.len(), median(rates));
    }
    // Ingest with the real model.
    let hp = super::eval::load_hotpotqa(&shared.join("data/hotpotqa")).map_err(io)?;
    let all = hp.documents();
    let docs = all[..200.min(all.len())].to_vec();
    let mut eng = Engine::open(MemoryStore::new(), model, Config::default(), Box::new(FixedClock(0.0))).await?;
    let t = Instant::now();
    eng.add(docs.clone(), &mut NoProgress).await?;
    println!(
        "| ingest (parse + chunk + embed + mind maps + store), HotpotQA passages: documents/s | {:.1} |",
        docs.len() as f64 / t.elapsed().as_secs_f64()
    );
    // Search latency at 1k (HotpotQA, 994) and 17,364 (CRUD news) documents.
    // The latency rows measure BM25 + dense (hybrid) with random vectors: the pseudo-graph is
    // off (its figures come from `webrag bench-graph` and `eval`).
    let hash = HashingEmbedder::new(model);
    let no_graph = Config { graph: crate::graph::GraphParams { enabled: false, ..Default::default() }, ..Config::default() };
    let mut eng = Engine::open(MemoryStore::new(), &hash, no_graph.clone(), Box::new(FixedClock(0.0))).await?;
    eng.add(all, &mut NoProgress).await?;
    eng.maintain_all(false).await?;
    let qs: Vec<String> = hp.questions.iter().map(|q| q.0.clone()).collect();
    let (p50, p95) = latency(&eng, &qs).await?;
    println!(
        "| search latency hybrid k=10, {} docs / {} chunks: p50 / p95 ms | {p50:.2} / {p95:.2} |",
        eng.stats().documents,
        eng.stats().chunks
    );
    let news = crud_news(&shared.join("data/crud_news")).map_err(io)?;
    let t = Instant::now();
    let mut eng = Engine::open(MemoryStore::new(), &hash, no_graph, Box::new(FixedClock(0.0))).await?;
    for (i, part) in news.chunks(2000).enumerate() {
        let docs = part
            .iter()
            .enumerate()
            .map(|(j, x)| DocumentInput {
                id: format!("n{}", i * 2000 + j),
                title: None,
                text: x.clone(),
                format: Format::Text,
                ..Default::default()
            })
            .collect();
        eng.add(docs, &mut NoProgress).await?;
        eng.maintain_all(false).await?;
    }
    let index_s = t.elapsed().as_secs_f64();
    // Queries: 200 spans of 12 characters from articles (a realistic keyword query length).
    let qs: Vec<String> = news.iter().step_by(news.len() / 200).take(200).map(|a| a.chars().skip(40).take(12).collect()).collect();
    let (p50, p95) = latency(&eng, &qs).await?;
    let s = eng.stats();
    println!(
        "| search latency hybrid k=10, {} CRUD news docs / {} chunks: p50 / p95 ms (index built in {index_s:.0} s incl. HNSW sealing, hashing vectors) | {p50:.2} / {p95:.2} |",
        s.documents, s.chunks
    );
    Ok(())
}

/// The scaled CRUD news corpus of the scale benchmarks: every article, then every article again
/// with its sentences (split after `。`) in reverse order, so the copy chunks and embeds
/// differently. 34,728 documents, about 120k chunks.
pub fn crud_news_scaled(news: &[String]) -> Vec<DocumentInput> {
    let doc = |id: String, text: String| DocumentInput { id, title: None, text, format: Format::Text, ..Default::default() };
    let mut out: Vec<DocumentInput> = news.iter().enumerate().map(|(i, a)| doc(format!("n{i}"), a.clone())).collect();
    for (i, a) in news.iter().enumerate() {
        let mut parts: Vec<&str> = a.split_inclusive('。').collect();
        parts.reverse();
        out.push(doc(format!("r{i}"), parts.concat()));
    }
    out
}

/// `webrag bench-scale`: the native counterpart of `tests/e2e/bench-scale.mjs`.
pub async fn scale(model: &CpuEmbedder, shared: &Path) -> Result<()> {
    let io = |e: std::io::Error| crate::embed::file_error("bench data", e);
    let news = crud_news(&shared.join("data/crud_news")).map_err(io)?;
    let docs = crud_news_scaled(&news);
    let hash = HashingEmbedder::new(model);
    let cfg = Config { graph: crate::graph::GraphParams { enabled: false, ..Default::default() }, ..Config::default() };
    let mut eng = Engine::open(MemoryStore::new(), &hash, cfg.clone(), Box::new(FixedClock(0.0))).await?;
    let (mut add_s, mut seal_s) = (0f64, 0f64);
    for (i, part) in docs.chunks(1000).enumerate() {
        let t = Instant::now();
        eng.add(part.to_vec(), &mut NoProgress).await?;
        add_s += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let steps = eng.maintain_all(false).await?;
        seal_s += t.elapsed().as_secs_f64();
        if i % 5 == 4 {
            eprintln!(
                "{} docs, {} chunks: add {add_s:.1} s, seal {seal_s:.1} s ({:?})",
                eng.stats().documents,
                eng.stats().chunks,
                steps.iter().map(|s| (s.vectors, s.merged)).collect::<Vec<_>>()
            );
        }
    }
    let t = Instant::now();
    eng.maintain_all(true).await?;
    seal_s += t.elapsed().as_secs_f64();
    let stats = eng.stats();
    let contents = eng.store().load().await?;
    drop(eng);
    let store = MemoryStore::new();
    store.commit(contents.into_ops()).await?;
    let t = Instant::now();
    let eng = Engine::open(store, &hash, cfg, Box::new(FixedClock(0.0))).await?;
    let open_s = t.elapsed().as_secs_f64();
    let qs: Vec<String> = news.iter().step_by(news.len() / 200).take(200).map(|a| a.chars().skip(40).take(12).collect()).collect();
    println!("| figure (native, hashing vectors, graph off) | value |");
    println!("|---|---|");
    println!("| corpus | {} documents, {} chunks |", stats.documents, stats.chunks);
    println!("| add (batches of 1,000) / sealing | {add_s:.0} s / {seal_s:.0} s |");
    println!("| chunk vectors: [fresh, segments, tombstones] | {:?} |", eng.stats().ann.chunks);
    println!("| open from the store contents (rebuild + attach) | {open_s:.1} s |");
    for mode in [SearchMode::Bm25, SearchMode::Dense, SearchMode::Hybrid] {
        let mut times = Vec::new();
        for q in &qs {
            let qv = eng.embedder().embed(&[q.as_str()]).await?.pop();
            let t = Instant::now();
            std::hint::black_box(eng.search_with(q, qv.as_deref(), &SearchOptions::new(10, mode))?);
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        println!("| search {} k=10: p50 / p95 ms | {:.2} / {:.2} |", mode.name(), pct(&times, 0.5), pct(&times, 0.95));
    }
    Ok(())
}
