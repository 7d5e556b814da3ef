//! `webrag bench`: native speed figures. Embedding on `../shared/embeddings/bench_sentences.json`
//! (medians of 3 runs); ingest documents/s with the real model; search latency p50/p95 at 1k and
//! at 17,364 documents (the CRUD news corpus).
//!
//! For the latency figures the chunk vectors come from [`HashEmbedder`] (deterministic random unit
//! vectors of the model's dimension, real tokenizer for chunking): an exact scan costs the same
//! whatever the values, and embedding 17k articles on 2 CPU cores would take an hour. Query
//! embedding is excluded from the latency, as the target says.
use std::path::Path;
use std::time::Instant;

use crate::config::Config;
use crate::embed::{CpuEmbedder, Embedder};
use crate::engine::{Engine, SearchOptions};
use crate::error::Result;
use crate::ports::{FixedClock, MemoryStore, NoProgress};
use crate::text::TokenCounter;
use crate::types::{DocumentInput, Format, SearchMode};

/// Random unit vectors seeded by the text's hash; the real tokenizer for chunk bounds.
pub struct HashEmbedder<'a> {
    /// Tokenizer and dimension donor.
    pub model: &'a CpuEmbedder,
}

impl Embedder for HashEmbedder<'_> {
    fn model_id(&self) -> &str {
        self.model.model_id()
    }
    fn dim(&self) -> usize {
        self.model.dim()
    }
    fn max_tokens(&self) -> usize {
        self.model.max_tokens()
    }
    fn token_counter(&self) -> &dyn TokenCounter {
        self.model.token_counter()
    }
    async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut s: u64 = 0xcbf29ce484222325;
                for b in t.bytes() {
                    s = (s ^ b as u64).wrapping_mul(0x100000001b3);
                }
                super::XorShift(s).unit(self.dim())
            })
            .collect())
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}

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
    let sentences: Vec<String> =
        serde_json::from_slice(&std::fs::read(shared.join("embeddings/bench_sentences.json")).map_err(io)?)
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
    println!("| ingest (parse + chunk + embed + mind maps + store), HotpotQA passages: documents/s | {:.1} |", docs.len() as f64 / t.elapsed().as_secs_f64());
    // Search latency at 1k (HotpotQA, 994) and 17,364 (CRUD news) documents.
    // The latency rows measure BM25 + dense (hybrid) with random vectors: the pseudo-graph is
    // off (its figures come from `webrag bench-graph` and `eval`).
    let hash = HashEmbedder { model };
    let no_graph = Config { graph: crate::graph::index::GraphParams { enabled: false, ..Default::default() }, ..Config::default() };
    let mut eng = Engine::open(MemoryStore::new(), &hash, no_graph.clone(), Box::new(FixedClock(0.0))).await?;
    eng.add(all, &mut NoProgress).await?;
    let qs: Vec<String> = hp.questions.iter().map(|q| q.0.clone()).collect();
    let (p50, p95) = latency(&eng, &qs).await?;
    println!("| search latency hybrid k=10, {} docs / {} chunks: p50 / p95 ms | {p50:.2} / {p95:.2} |", eng.stats().documents, eng.stats().chunks);
    let news = crud_news(&shared.join("data/crud_news")).map_err(io)?;
    let t = Instant::now();
    let mut eng = Engine::open(MemoryStore::new(), &hash, no_graph, Box::new(FixedClock(0.0))).await?;
    for (i, part) in news.chunks(2000).enumerate() {
        let docs = part.iter().enumerate()
            .map(|(j, x)| DocumentInput { id: format!("n{}", i * 2000 + j), title: None, text: x.clone(), format: Format::Text, url: None })
            .collect();
        eng.add(docs, &mut NoProgress).await?;
    }
    let index_s = t.elapsed().as_secs_f64();
    // Queries: 200 spans of 12 characters from articles (a realistic keyword query length).
    let qs: Vec<String> = news.iter().step_by(news.len() / 200).take(200)
        .map(|a| a.chars().skip(40).take(12).collect()).collect();
    let (p50, p95) = latency(&eng, &qs).await?;
    let s = eng.stats();
    println!("| search latency hybrid k=10, {} CRUD news docs / {} chunks: p50 / p95 ms (index built in {index_s:.0} s, random vectors) | {p50:.2} / {p95:.2} |", s.documents, s.chunks);
    Ok(())
}
