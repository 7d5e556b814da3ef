//! `webrag bench-embed`: the embedding engine's figures natively, CPU path and GPU path (wgpu on
//! Vulkan; lavapipe on GPU-less machines), at batch 1, 8, 32, 128 and 256 on
//! `../shared/embeddings/bench_sentences.json`, against PyTorch in the same run:
//! - sentences/s, median of 3 runs: CPU at each thread count asked for (a rayon pool of that
//!   size; each run a third of the CPU sentences), GPU over every sentence it is given;
//! - the PyTorch reference (`tests/bench/torch_embed.py`, where `python3` or `$WEBRAG_PYTHON`
//!   imports torch and safetensors) on the same token ids and weights: fp32 at the same thread
//!   counts on the CPU; fp32 (TF32 off), TF32 and fp16 on a CUDA GPU, given order and
//!   length-sorted from batch 128; and webrag ÷ PyTorch for each cell;
//! - cold start: milliseconds from reading the model files (CPU) or opening the device (GPU:
//!   device, pipelines, weight upload) to the first embedding;
//! - GPU objects created per batch after warm-up (must be 0), dispatches per forward pass;
//! - where the adapter has timestamp queries, GPU time per kernel kind at batch 1, 8, 32 and 128,
//!   the pass's span on the GPU, and
//!   the GFLOP/s of the matrix multiplies, next to the rate PyTorch reaches in a plain
//!   8192³ fp32 GEMM on the same card.
//!
//! A software adapter runs the kernels on the CPU hundreds of times slower than real hardware,
//! so there the GPU rows use the first `software_sentences` sentences (printed in the table).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::embed::CpuEmbedder;
use crate::embed::gpu::{Gpu, GpuBert};
use crate::embed::vecmath::median;
use crate::error::Result;

/// Batch sizes of every row.
pub const BATCHES: [usize; 5] = [1, 8, 32, 128, 256];

/// What `bench-embed` measures.
pub struct Params {
    /// The shared folder (embeddings/bench_sentences.json).
    pub shared: PathBuf,
    /// Sentences for the GPU rows on a software adapter.
    pub software_sentences: usize,
    /// Sentences for the CPU rows.
    pub cpu_sentences: usize,
    /// Sentences for the GPU rows on a hardware adapter (0: all of them).
    pub gpu_sentences: usize,
    /// Thread counts of the CPU rows (empty: 1, 2 and every core).
    pub threads: Vec<usize>,
    /// Leave out the PyTorch reference.
    pub no_torch: bool,
}

fn cells(v: &[Option<f64>]) -> String {
    v.iter().map(|x| x.map_or("—".to_string(), |x| format!("{x:.1}"))).collect::<Vec<_>>().join(" | ")
}

fn ratios(a: &[Option<f64>], b: &[Option<f64>]) -> String {
    a.iter()
        .zip(b)
        .map(|(x, y)| match (x, y) {
            (Some(x), Some(y)) if *y > 0.0 => format!("{:.2}×", x / y),
            _ => "—".into(),
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// One line of the PyTorch script's output.
#[derive(serde::Deserialize, Debug)]
struct TorchLine {
    kind: String,
    mode: Option<String>,
    order: Option<String>,
    batch: Option<usize>,
    sentences_per_s: Option<f64>,
    tflops: Option<f64>,
    min_cosine: Option<f64>,
    device: Option<String>,
    torch: Option<String>,
}

/// PyTorch's figures: sentences/s by (mode, order) per batch of [`BATCHES`], the large-GEMM
/// rate, the check, and what ran.
#[derive(Default)]
struct TorchRows {
    rows: BTreeMap<(String, String), Vec<Option<f64>>>,
    gemm_tflops: Option<f64>,
    min_cosine: Option<f64>,
    what: String,
}

/// Runs `tests/bench/torch_embed.py` on `ids`; `Err` says why there is no reference.
fn torch(model_dir: &Path, ids: &[Vec<u32>], device: &str, threads: usize, check: &[Vec<f32>]) -> std::result::Result<TorchRows, String> {
    let python = std::env::var("WEBRAG_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = ["tests/bench/torch_embed.py", concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bench/torch_embed.py")]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .ok_or("tests/bench/torch_embed.py not found (run from the repository root)")?;
    let job = serde_json::json!({
        "model_dir": model_dir, "ids": ids, "batches": BATCHES, "device": device, "threads": threads,
        "sorted_from": 128, "check": check,
    });
    let path = std::env::temp_dir().join(format!("webrag-torch-job-{}.json", std::process::id()));
    std::fs::write(&path, job.to_string()).map_err(|e| e.to_string())?;
    let out = std::process::Command::new(&python).arg(&script).arg(&path).output();
    let _ = std::fs::remove_file(&path);
    let out = out.map_err(|e| format!("{python}: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{python} {}: {}", script.display(), err.lines().last().unwrap_or("failed")));
    }
    let mut t = TorchRows::default();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(l) = serde_json::from_str::<TorchLine>(line) else { continue };
        match l.kind.as_str() {
            "info" => t.what = format!("PyTorch {} on {}", l.torch.unwrap_or_default(), l.device.unwrap_or_default()),
            "gemm" => t.gemm_tflops = l.tflops,
            "check" => t.min_cosine = l.min_cosine,
            "embed" => {
                let (Some(mode), Some(order), Some(batch), Some(r)) = (l.mode, l.order, l.batch, l.sentences_per_s) else { continue };
                let row = t.rows.entry((mode, order)).or_insert_with(|| vec![None; BATCHES.len()]);
                if let Some(i) = BATCHES.iter().position(|&b| b == batch) {
                    row[i] = Some(r);
                }
            }
            _ => {}
        }
    }
    Ok(t)
}

/// Sentences/s of `embed` over `ids` at each of [`BATCHES`], median of 3 runs: over a third of
/// `ids` each when `thirds` (the CPU), over all of them each otherwise (the GPU).
async fn rates<'a, F, Fut>(ids: &'a [Vec<u32>], thirds: bool, mut embed: F) -> Result<Vec<Option<f64>>>
where
    F: FnMut(&'a [Vec<u32>]) -> Fut,
    Fut: std::future::Future<Output = Result<()>>,
{
    let mut row = Vec::new();
    let third = ids.len().div_ceil(3);
    for batch in BATCHES {
        let mut rs = Vec::new();
        for r in 0..3 {
            let part = if thirds { &ids[(r * third).min(ids.len())..((r + 1) * third).min(ids.len())] } else { ids };
            let t = Instant::now();
            for b in part.chunks(batch) {
                embed(b).await?;
            }
            rs.push(part.len() as f64 / t.elapsed().as_secs_f64());
        }
        row.push(Some(median(rs)));
    }
    Ok(row)
}

/// Multiply-adds ×2 of the linear layers for `tokens` tokens (the matmul kernels' work).
fn matmul_flops(bert: &crate::embed::bert::BertModel, tokens: usize) -> f64 {
    let c = bert.config();
    let (h, i) = (c.hidden_size as f64, c.intermediate_size as f64);
    2.0 * tokens as f64 * c.num_hidden_layers as f64 * (3.0 * h * h + h * h + 2.0 * h * i)
}

/// Runs the benchmark and prints Markdown tables.
pub async fn run(model_dir: &Path, p: &Params) -> Result<()> {
    let io = |e: std::io::Error| crate::embed::file_error("bench_sentences.json", e);
    let sentences: Vec<String> = serde_json::from_slice(&std::fs::read(p.shared.join("embeddings/bench_sentences.json")).map_err(io)?)
        .map_err(|e| crate::embed::file_error("bench_sentences.json", e))?;
    // CPU cold start: files → packed model → first vector.
    let t = Instant::now();
    let cpu = CpuEmbedder::from_files(&super::model_id(), &super::read_model_files(model_dir)?)?;
    cpu.embed_sync(&[sentences[0].as_str()])?;
    let cpu_cold = t.elapsed().as_secs_f64() * 1000.0;
    let ids: Vec<Vec<u32>> = sentences.iter().map(|s| cpu.tokenizer().encode(s)).collect::<Result<_>>()?;
    let tokens: usize = ids.iter().map(|s| s.len()).sum();
    let check = cpu.embed_ids(&ids[..16.min(ids.len())]);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut threads = if p.threads.is_empty() { vec![1, 2, cores] } else { p.threads.clone() };
    threads.retain(|&t| t >= 1);
    threads.sort_unstable();
    threads.dedup();
    println!("{} sentences, {} word pieces (mean {:.1}); {} CPU cores", ids.len(), tokens, tokens as f64 / ids.len() as f64, cores);
    println!();

    // CPU path against PyTorch fp32 on the same cores (none with --cpu-sentences 0).
    if p.cpu_sentences > 0 {
        let mut int8 = CpuEmbedder::from_files(&super::model_id(), &super::read_model_files(model_dir)?)?;
        int8.set_precision(crate::embed::Precision::Int8);
        cpu_rows(model_dir, &[&cpu, &int8], &ids[..p.cpu_sentences.min(ids.len())], &threads, p.no_torch, &check)?;
    }
    println!("| webrag CPU cold start: model files to first embedding, ms | {cpu_cold:.0} |");
    println!();
    gpu_rows(model_dir, &cpu, &ids, p, &check).await
}

/// The CPU table: webrag at each thread count and precision (`cpus`: the f32 embedder first),
/// PyTorch fp32 at the same count, the ratios.
fn cpu_rows(
    model_dir: &Path,
    cpus: &[&CpuEmbedder],
    sample: &[Vec<u32>],
    threads: &[usize],
    no_torch: bool,
    check: &[Vec<f32>],
) -> Result<()> {
    let header = format!("| {} |", BATCHES.map(|b| format!("batch {b}")).join(" | "));
    let rule = "|---".repeat(BATCHES.len() + 2) + "|";
    println!("CPU, sentences/s (first {} sentences; median of 3 runs of a third each for webrag):", sample.len());
    println!();
    println!("| path | threads {header}");
    println!("{rule}");
    for &t in threads {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .map_err(|e| crate::error::InputError::InvalidOption { name: "threads".into(), reason: e.to_string() })?;
        let mut mine = Vec::new();
        for cpu in cpus {
            let row = pool.install(|| {
                pollster::block_on(rates(sample, true, |b| {
                    std::hint::black_box(cpu.embed_ids(b));
                    std::future::ready(Ok(()))
                }))
            })?;
            println!("| webrag CPU {} | {t} | {} |", format!("{:?}", cpu.precision()).to_lowercase(), cells(&row));
            mine.push(row);
        }
        if let [f32_row, int8_row, ..] = mine.as_slice() {
            println!("| webrag int8 ÷ f32 | {t} | {} |", ratios(int8_row, f32_row));
        }
        let mine = mine.swap_remove(0);
        if no_torch {
            continue;
        }
        match torch(model_dir, sample, "cpu", t, check) {
            Ok(r) => {
                for ((mode, order), row) in &r.rows {
                    println!("| {} {mode}, {order} order | {t} | {} |", r.what, cells(row));
                }
                if let Some(given) = r.rows.get(&("fp32".to_string(), "given".to_string())) {
                    println!("| webrag ÷ PyTorch fp32 (given order) | {t} | {} |", ratios(&mine, given));
                }
                if let Some(sorted) = r.rows.get(&("fp32".to_string(), "sorted".to_string())) {
                    println!("| webrag ÷ PyTorch fp32 (length-sorted) | {t} | {} |", ratios(&mine, sorted));
                }
                if let Some(c) = r.min_cosine {
                    println!("| PyTorch vs webrag vectors: min cosine | | {c:.6} | | | | |");
                }
            }
            Err(e) => println!("| PyTorch reference | {t} | not run: {e} | | | | |"),
        }
    }
    Ok(())
}

/// The f16 path's rows (f16 weights and products), and where the device has cooperative
/// matrices, the same without them, to show what the tensor cores add.
async fn f16_rows(gpu: &Arc<Gpu>, cpu: &CpuEmbedder, sample: &[Vec<u32>]) -> Result<Vec<(&'static str, GpuBert, Vec<Option<f64>>)>> {
    let n = sample.len();
    let (coop, _) = gpu.coop_status();
    let mut halves: Vec<(&'static str, GpuBert, Vec<Option<f64>>)> = Vec::new();
    if gpu.supports_f16() {
        let mut variants = vec![(if coop { "f16, tensor cores" } else { "f16" }, coop)];
        if coop {
            variants.push(("f16, no tensor cores", false));
        }
        for (label, on) in variants {
            let mut half = gpu.upload_f16(cpu.bert());
            half.use_coop(on);
            half.embed_ids(&sample[..256.min(n)]).await?;
            let row = rates(sample, false, |b| {
                let half = &half;
                async move { half.embed_ids(b).await.map(drop).map_err(Into::into) }
            })
            .await?;
            println!("| webrag GPU, {label} | {} |", cells(&row));
            halves.push((label, half, row));
        }
    }
    Ok(halves)
}

/// PyTorch CUDA's rows and webrag's ratios to them, from the same sentences.
fn reference_rows(r: &TorchRows, f32_row: &[Option<f64>], halves: &[(&str, GpuBert, Vec<Option<f64>>)]) {
    for ((mode, order), row) in &r.rows {
        println!("| {} {mode}, {order} order | {} |", r.what, cells(row));
    }
    let get = |m: &str, o: &str| r.rows.get(&(m.to_string(), o.to_string()));
    if let Some(g) = get("fp32", "given") {
        println!("| webrag f32 ÷ PyTorch fp32 (TF32 off), given order | {} |", ratios(f32_row, g));
    }
    if let Some(s) = get("fp32", "sorted") {
        println!("| webrag f32 ÷ PyTorch fp32 (TF32 off), length-sorted | {} |", ratios(f32_row, s));
    }
    if let Some(s) = get("fp32+tf32", "sorted") {
        for (label, _, h) in halves {
            println!("| webrag {label} ÷ PyTorch TF32, length-sorted | {} |", ratios(h, s));
        }
    }
    if let Some(c) = r.min_cosine {
        println!("| PyTorch vs webrag vectors: min cosine | {c:.6} | | | | |");
    }
}

/// GPU time per kernel kind of one forward pass at batches 1, 8, 32 and 128 (timestamp queries),
/// the pass's span on the GPU (kernels and the gaps between them) and its wall time, per precision.
async fn kernel_split(cpu: &CpuEmbedder, kernels: Vec<(&str, &GpuBert)>, sample: &[Vec<u32>]) -> Result<()> {
    let n = sample.len();
    println!("GPU time per kernel kind, one forward pass (timestamp queries):");
    println!();
    println!(
        "| precision | batch | tokens | matmul ms | attention ms | LayerNorm ms | gather + pool ms | GPU span ms | wall ms | matmul GFLOP/s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (w, b) in kernels {
        for batch in [1usize, 8, 32, 128] {
            if batch > n && batch != 1 {
                continue;
            }
            let seqs = &sample[..batch.min(n)];
            let toks: usize = seqs.iter().map(|s| s.len()).sum();
            match b.profile(seqs, &crate::ports::SystemClock).await? {
                Some(k) => println!(
                    "| {w} | {} | {toks} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1} | {:.1} |",
                    seqs.len(),
                    k.matmul_ms,
                    k.attention_ms,
                    k.layer_norm_ms,
                    k.other_ms,
                    k.span_ms,
                    k.wall_ms,
                    matmul_flops(cpu.bert(), toks) / (k.matmul_ms * 1e-3) / 1e9
                ),
                None => println!("| {w} | {} | {toks} | no timestamp queries on this adapter | | | | | | |", seqs.len()),
            }
        }
    }
    Ok(())
}

/// The GPU tables: webrag f32 / f16 (with and without tensor cores where the device has them),
/// PyTorch on CUDA where it runs, ratios, kernel split.
async fn gpu_rows(model_dir: &Path, cpu: &CpuEmbedder, ids: &[Vec<u32>], p: &Params, check: &[Vec<f32>]) -> Result<()> {
    let header = format!("| {} |", BATCHES.map(|b| format!("batch {b}")).join(" | "));
    let t = Instant::now();
    let gpu = match Gpu::new().await {
        Ok(g) => Arc::new(g),
        Err(e) => {
            println!("GPU: unavailable: {e}");
            return Ok(());
        }
    };
    let bert = gpu.upload(cpu.bert());
    bert.embed_ids(&ids[..1]).await?;
    let gpu_cold = t.elapsed().as_secs_f64() * 1000.0;
    let n = match (gpu.is_software(), p.gpu_sentences) {
        (true, _) => p.software_sentences.clamp(1, ids.len()),
        (false, 0) => ids.len(),
        (false, k) => k.min(ids.len()),
    };
    let sample = &ids[..n];
    let what = match (gpu.is_software(), n == ids.len()) {
        (true, _) => format!("software adapter, first {n} sentences"),
        (false, true) => format!("{n} sentences"),
        (false, false) => format!("first {n} sentences"),
    };
    println!("GPU: {} ({what}), sentences/s, median of 3 runs over all of them:", gpu.adapter());
    println!();
    println!("| path {header}");
    println!("{}", "|---".repeat(BATCHES.len() + 1) + "|");
    // Warm-up at the largest batch: the workspace is sized once.
    bert.embed_ids(&sample[..256.min(n)]).await?;
    let before = gpu.counters();
    let mut batches = 0u64;
    let f32_row = rates(sample, false, |b| {
        batches += 1;
        let bert = &bert;
        async move { bert.embed_ids(b).await.map(drop).map_err(Into::into) }
    })
    .await?;
    let after = gpu.counters();
    println!("| webrag GPU, f32 | {} |", cells(&f32_row));
    let (_, coop_why) = gpu.coop_status();
    let halves = f16_rows(&gpu, cpu, sample).await?;
    let reference = if p.no_torch || gpu.is_software() {
        None
    } else {
        match torch(model_dir, sample, "cuda", 0, check) {
            Ok(r) => Some(r),
            Err(e) => {
                println!("| PyTorch CUDA reference: not run: {e} | | | | | |");
                None
            }
        }
    };
    if let Some(r) = &reference {
        reference_rows(r, &f32_row, &halves);
    }
    println!("| cold start: device + pipelines + weight upload + first embedding, ms | {gpu_cold:.0} | | | | |");
    println!(
        "| buffers / bind groups / pipelines created per batch after warm-up (all batch sizes) | {} / {} / {} | | | | |",
        (after.buffers - before.buffers) / batches.max(1),
        (after.bind_groups - before.bind_groups) / batches.max(1),
        (after.pipelines - before.pipelines) / batches.max(1)
    );
    println!("| compute dispatches per forward pass (3 + 7 per layer) | {} | | | | |", bert.dispatches_per_forward());
    println!();
    println!("Subgroup LayerNorm: {}. Cooperative matrices: {coop_why}.", if gpu.uses_subgroups() { "yes" } else { "no" });
    println!();
    let mut kernels: Vec<(&str, &GpuBert)> = vec![("f32", &bert)];
    for (label, h, _) in &halves {
        kernels.push((label, h));
    }
    kernel_split(cpu, kernels, sample).await?;
    if let Some(g) = reference.as_ref().and_then(|r| r.gemm_tflops) {
        println!();
        println!("PyTorch fp32 GEMM 8192 × 8192 × 8192 (TF32 off) on this card: {g:.1} TFLOP/s");
    }
    Ok(())
}
