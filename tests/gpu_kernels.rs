#![cfg(not(target_arch = "wasm32"))]
//! The WGSL kernels: every `.wgsl` file parses and validates with naga (no GPU needed), and each
//! kernel matches a CPU reference on random inputs on the native adapter (lavapipe here).
//!
//! The random seed is printed; rerun one with `WEBRAG_SEED=<seed> cargo test --test gpu_kernels`.
//! `WEBRAG_SKIP_GPU=1` skips the kernels that need an adapter (the validation test still runs).
mod common;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use webrag::embed::gemm::Packed;
use webrag::embed::gpu::{Gpu, KERNELS};
use webrag::embed::ops;

fn seed() -> u64 {
    let s = std::env::var("WEBRAG_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(7)
    });
    eprintln!("seed {s} (WEBRAG_SEED={s} reproduces)");
    s
}

fn gpu() -> Option<Gpu> {
    if std::env::var_os("WEBRAG_SKIP_GPU").is_some() {
        eprintln!("WEBRAG_SKIP_GPU set: skipping");
        return None;
    }
    let g = pollster::block_on(Gpu::new()).unwrap_or_else(|e| panic!("{e} (install mesa-vulkan-drivers: ./webrag.sh setup)"));
    eprintln!("adapter: {}", g.adapter());
    Some(g)
}

fn random(rng: &mut SmallRng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

#[test]
fn every_wgsl_file_validates_with_naga() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/embed/gpu");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("src/embed/gpu")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".wgsl"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = KERNELS.iter().map(|(n, _)| n.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "every .wgsl file must be listed in gpu::KERNELS");
    for name in on_disk {
        let src = std::fs::read_to_string(dir.join(&name)).expect("read");
        let module = naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(&src)));
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }
}

/// Tolerance: |gpu − f64 reference| ≤ 1e-5 · (1 + Σ|a·w|) per element (f32 accumulation over k).
#[test]
fn matmul_bias_gelu_matches_cpu() {
    let Some(g) = gpu() else { return };
    let mut rng = SmallRng::seed_from_u64(seed());
    let mut shapes = vec![(1, 1, 1), (77, 384, 1152), (64, 64, 64), (5, 1536, 384)];
    for _ in 0..4 {
        shapes.push((rng.random_range(1..150), rng.random_range(1..300), rng.random_range(1..200)));
    }
    for (m, k, n) in shapes {
        let (a, w, bias) = (random(&mut rng, m * k), random(&mut rng, k * n), random(&mut rng, n));
        for gelu in [false, true] {
            let got = pollster::block_on(g.matmul(&a, m, &Packed::from_kn(&w, k, n), &bias, gelu)).expect("matmul");
            for r in 0..m {
                for c in 0..n {
                    let (mut s, mut mag) = (bias[c] as f64, bias[c].abs() as f64);
                    for i in 0..k {
                        s += a[r * k + i] as f64 * w[i * n + c] as f64;
                        mag += (a[r * k + i] * w[i * n + c]).abs() as f64;
                    }
                    let want = if gelu { ops::gelu_erf(s as f32) as f64 } else { s };
                    let e = (got[r * n + c] as f64 - want).abs();
                    assert!(e <= 1e-5 * (1.0 + mag), "{m}x{k}x{n} gelu={gelu} [{r},{c}]: {} vs {want}", got[r * n + c]);
                }
            }
        }
    }
}

/// Tolerance: 1e-4 absolute on unit-scale outputs.
#[test]
fn residual_layer_norm_matches_cpu() {
    let Some(g) = gpu() else { return };
    let mut rng = SmallRng::seed_from_u64(seed());
    for (rows, h) in [(1usize, 384usize), (77, 384), (3, 768), (9, 100), (4, 1)] {
        let (x, res) = (random(&mut rng, rows * h), random(&mut rng, rows * h));
        let gamma: Vec<f32> = (0..h).map(|_| rng.random_range(0.5f32..1.5)).collect();
        let beta = random(&mut rng, h);
        for with_res in [false, true] {
            let got = pollster::block_on(g.layer_norm(&x, with_res.then_some(&res[..]), &gamma, &beta, 1e-12)).expect("layer_norm");
            let mut want = x.clone();
            if with_res {
                ops::add(&mut want, &res);
            }
            ops::layer_norm(&mut want, &gamma, &beta, 1e-12);
            for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                assert!((a - b).abs() < 1e-4, "rows {rows} h {h} res={with_res} [{i}]: {a} vs {b}");
            }
        }
    }
}

/// The whole model on the GPU against sentence-transformers' golden vectors: cosine ≥ 0.9999 on
/// every item (fp32) in one packed batch of all 66, and on every 8th item alone (a forward pass
/// on lavapipe takes about 1.5 s, so not all 66 alone).
#[test]
fn whole_model_matches_golden_fp32() {
    let Some(g) = gpu() else { return };
    let m = common::model();
    let bert = g.upload(m.bert());
    let golden: serde_json::Value = serde_json::from_slice(
        &std::fs::read(common::shared().join("embeddings/all-MiniLM-L6-v2.golden.json")).expect("golden file"),
    )
    .expect("golden json");
    let items = golden["items"].as_array().expect("items");
    let ids: Vec<Vec<u32>> = items.iter().map(|i| m.tokenizer().encode(i["text"].as_str().expect("text")).expect("encode")).collect();
    let want: Vec<Vec<f32>> =
        items.iter().map(|i| i["embedding"].as_array().expect("emb").iter().map(|v| v.as_f64().expect("f") as f32).collect()).collect();
    let batch = pollster::block_on(bert.embed_ids(&ids)).expect("batch");
    let (mut min_alone, mut min_batch) = (f64::MAX, f64::MAX);
    for (i, w) in want.iter().enumerate() {
        let cb = common::cosine(&batch[i], w);
        min_batch = min_batch.min(cb);
        assert!(cb >= 0.9999, "item {i}: cosine in batch {cb}");
        if i % 8 == 0 {
            let alone = pollster::block_on(bert.embed_ids(&ids[i..i + 1])).expect("alone").pop().expect("one");
            let ca = common::cosine(&alone, w);
            min_alone = min_alone.min(ca);
            assert!(ca >= 0.9999, "item {i}: cosine alone {ca}");
        }
    }
    eprintln!("gpu golden: {} items, min cosine alone {min_alone:.7}, in one batch {min_batch:.7}", items.len());
}
