//! `webrag bench-embed`: the embedding engine's figures natively, for the CPU path and the GPU
//! path (wgpu on Vulkan; lavapipe on GPU-less machines), at batch 1, 8 and 32 on
//! `../shared/embeddings/bench_sentences.json`:
//! - sentences/s, median of 3 runs (CPU: each run one third of the sentences; GPU: each run all
//!   the sentences it is given);
//! - cold start: milliseconds from reading the model files (CPU) or opening the device (GPU:
//!   device, pipelines, weight upload) to the first embedding;
//! - compute dispatches per forward pass, and buffers / bind groups / pipelines created per batch
//!   after warm-up (counted by [`crate::embed::gpu::Gpu::counters`]; must be 0);
//! - where the adapter has timestamp queries, GPU time per kernel kind for one batch of 32.
//!
//! A software adapter runs the kernels on the CPU hundreds of times slower than real hardware, so
//! there the GPU rows use the first `software_sentences` sentences (printed in the table).
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::embed::gpu::Gpu;
use crate::embed::{CpuEmbedder, DEFAULT_MODEL_ID};
use crate::error::Result;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs the benchmark and prints a Markdown table.
pub async fn run(model_dir: &Path, shared: &Path, software_sentences: usize) -> Result<()> {
    let io = |e: std::io::Error| crate::embed::file_error("bench_sentences.json", e);
    let sentences: Vec<String> = serde_json::from_slice(&std::fs::read(shared.join("embeddings/bench_sentences.json")).map_err(io)?)
        .map_err(|e| crate::embed::file_error("bench_sentences.json", e))?;
    // CPU cold start: files → packed model → first vector.
    let t = Instant::now();
    let cpu = CpuEmbedder::from_files(DEFAULT_MODEL_ID, &super::read_model_files(model_dir)?)?;
    cpu.embed_sync(&[sentences[0].as_str()])?;
    let cpu_cold = t.elapsed().as_secs_f64() * 1000.0;
    let ids: Vec<Vec<u32>> = sentences.iter().map(|s| cpu.tokenizer().encode(s)).collect::<Result<_>>()?;
    println!("| path | figure | batch 1 | batch 8 | batch 32 |");
    println!("|---|---|---|---|---|");
    let third = ids.len().div_ceil(3);
    let mut row = Vec::new();
    for batch in [1usize, 8, 32] {
        let mut rates = Vec::new();
        for r in 0..3 {
            let part = &ids[(r * third).min(ids.len())..((r + 1) * third).min(ids.len())];
            let t = Instant::now();
            for b in part.chunks(batch) {
                std::hint::black_box(cpu.embed_ids(b));
            }
            rates.push(part.len() as f64 / t.elapsed().as_secs_f64());
        }
        row.push(format!("{:.1}", median(rates)));
    }
    println!("| cpu | sentences/s ({} sentences, median of 3) | {} |", ids.len(), row.join(" | "));
    println!("| cpu | cold start: model files to first embedding, ms | {cpu_cold:.0} | | |");

    let t = Instant::now();
    let gpu = match Gpu::new().await {
        Ok(g) => Arc::new(g),
        Err(e) => {
            println!("| gpu | unavailable: {e} | | | |");
            return Ok(());
        }
    };
    let bert = gpu.upload(cpu.bert());
    bert.embed_ids(&ids[..1]).await?;
    let gpu_cold = t.elapsed().as_secs_f64() * 1000.0;
    let n = if gpu.is_software() { software_sentences.clamp(1, ids.len()) } else { ids.len() };
    let sample = &ids[..n];
    // Warm-up at the largest batch: the workspace is sized once.
    bert.embed_ids(&sample[..32.min(n)]).await?;
    let mut row = Vec::new();
    let mut created = Vec::new();
    for batch in [1usize, 8, 32] {
        let before = gpu.counters();
        let mut batches = 0;
        let mut rates = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            for b in sample.chunks(batch) {
                std::hint::black_box(bert.embed_ids(b).await?);
                batches += 1;
            }
            rates.push(n as f64 / t.elapsed().as_secs_f64());
        }
        let after = gpu.counters();
        row.push(format!("{:.2}", median(rates)));
        created.push(format!(
            "{} / {} / {}",
            (after.buffers - before.buffers) / batches,
            (after.bind_groups - before.bind_groups) / batches,
            (after.pipelines - before.pipelines) / batches
        ));
    }
    let what = if gpu.is_software() { format!("software adapter: first {n} sentences") } else { format!("{n} sentences") };
    println!("| gpu ({}) | sentences/s ({what}, median of 3) | {} |", gpu.adapter(), row.join(" | "));
    println!("| gpu | cold start: device + pipelines + weight upload + first embedding, ms | {gpu_cold:.0} | | |");
    println!("| gpu | buffers / bind groups / pipelines created per batch after warm-up | {} |", created.join(" | "));
    if gpu.supports_f16() {
        // The f16-weight path, batch 32 only (same sentences).
        let half = gpu.upload_f16(cpu.bert());
        half.embed_ids(&sample[..32.min(n)]).await?;
        let mut rates = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            for b in sample.chunks(32) {
                std::hint::black_box(half.embed_ids(b).await?);
            }
            rates.push(n as f64 / t.elapsed().as_secs_f64());
        }
        println!("| gpu, f16 weights | sentences/s ({what}, median of 3) | | | {:.2} |", median(rates));
    }
    println!(
        "| gpu | compute dispatches per forward pass ({} layers: 3 + 7 per layer) | {} | {} | {} |",
        cpu.bert().config().num_hidden_layers,
        bert.dispatches_per_forward(),
        bert.dispatches_per_forward(),
        bert.dispatches_per_forward()
    );
    match bert.profile(&sample[..32.min(n)], &crate::ports::SystemClock).await? {
        Some(k) => {
            let sum = k.matmul_ms + k.attention_ms + k.layer_norm_ms + k.other_ms;
            println!(
                "| gpu | GPU time, batch of {}: matmul / attention / LayerNorm / gather+pool ms (share of wall time) | {:.1} / {:.1} / {:.1} / {:.1} ms of {:.1} ms wall ({:.0}% matmul, {:.0}% in kernels) | | |",
                32.min(n),
                k.matmul_ms,
                k.attention_ms,
                k.layer_norm_ms,
                k.other_ms,
                k.wall_ms,
                100.0 * k.matmul_ms / sum.max(1e-9),
                100.0 * sum / k.wall_ms.max(1e-9)
            );
        }
        None => println!("| gpu | kernel time split | no timestamp queries on this adapter | | |"),
    }
    Ok(())
}
