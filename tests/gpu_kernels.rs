#![cfg(not(target_arch = "wasm32"))]
//! The WGSL kernels: every `.wgsl` file parses and validates with naga (no GPU needed), and each
//! kernel matches a CPU reference on random inputs on the native adapter (lavapipe here).
//!
//! The random seed is printed; rerun one with `WEBRAG_SEED=<seed> cargo test --test suite gpu_kernels::`.
//! `WEBRAG_SKIP_GPU=1` skips the kernels that need an adapter (the validation test still runs).
use crate::common;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use webrag::embed::gemm::Packed;
use webrag::embed::gpu::{Gpu, KERNELS, MatmulKernel, MatmulTile};
use webrag::embed::ops;

fn seed() -> u64 {
    let s = std::env::var("WEBRAG_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(7));
    eprintln!("seed {s} (WEBRAG_SEED={s} reproduces)");
    s
}

fn gpu() -> Option<std::sync::Arc<Gpu>> {
    if std::env::var_os("WEBRAG_SKIP_GPU").is_some() {
        eprintln!("WEBRAG_SKIP_GPU set: skipping");
        return None;
    }
    let g = pollster::block_on(Gpu::new()).unwrap_or_else(|e| panic!("{e} (install mesa-vulkan-drivers: ./webrag.sh setup)"));
    eprintln!(
        "adapter: {} (software: {}, shader-f16: {}, subgroups: {}, cooperative matrices: {})",
        g.adapter(),
        g.is_software(),
        g.supports_f16(),
        g.uses_subgroups(),
        g.coop_status().1
    );
    Some(std::sync::Arc::new(g))
}

fn random(rng: &mut SmallRng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

/// No function of a kernel keeps an array in function-local memory: drivers place dynamically
/// indexed private arrays in slow local memory instead of registers.
fn assert_no_private_arrays(name: &str, module: &naga::Module) {
    let functions = module.functions.iter().map(|(_, f)| f).chain(module.entry_points.iter().map(|e| &e.function));
    for f in functions {
        for (_, v) in f.local_variables.iter() {
            let inner = &module.types[v.ty].inner;
            assert!(!matches!(inner, naga::TypeInner::Array { .. }), "{name}: function {:?} keeps a private array {:?}", f.name, v.name);
        }
    }
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
    let validate = |name: &str, src: &str| {
        let module = naga::front::wgsl::parse_str(src).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
        let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_no_private_arrays(name, &module);
        // And it translates to SPIR-V, as wgpu's Vulkan backend will (with the capabilities the
        // cooperative-matrix kernel needs).
        let options = naga::back::spv::Options { lang_version: (1, 6), ..Default::default() };
        naga::back::spv::write_vec(&module, &info, &options, None).unwrap_or_else(|e| panic!("{name}: SPIR-V: {e:?}"));
    };
    for (name, src) in KERNELS {
        validate(name, src);
    }
    // The other tile shapes, the f16 matmuls and the subgroup LayerNorm are derived at run time.
    for tile in MatmulTile::ALL {
        for f16 in [false, true] {
            validate(&format!("matmul {tile:?} f16={f16}"), &webrag::embed::gpu::matmul_wgsl(tile, f16));
        }
    }
    validate("layernorm (subgroups)", &webrag::embed::gpu::layernorm_wgsl(true));
    assert_eq!(webrag::embed::gpu::layernorm_wgsl(false), webrag::embed::gpu::LAYERNORM_WGSL);
}

/// The f16-weight path (where the adapter has `shader-f16`) against the golden vectors: cosine
/// ≥ 0.999 on every item, in one batch.
#[test]
fn whole_model_matches_golden_f16() {
    let Some(g) = gpu() else { return };
    if !g.supports_f16() {
        eprintln!("adapter has no shader-f16: skipping the f16 check");
        return;
    }
    let m = common::model();
    let bert = g.upload_f16(m.bert());
    assert!(bert.is_f16());
    let Some(path) = common::shared_data("embeddings/all-MiniLM-L6-v2.golden.json") else { return };
    let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(path).expect("golden file")).expect("golden json");
    let items = golden["items"].as_array().expect("items");
    let ids: Vec<Vec<u32>> = items.iter().map(|i| m.tokenizer().encode(i["text"].as_str().expect("text")).expect("encode")).collect();
    let got = pollster::block_on(bert.embed_ids(&ids)).expect("f16 batch");
    let mut min = f64::MAX;
    for (i, item) in items.iter().enumerate() {
        let want: Vec<f32> = item["embedding"].as_array().expect("emb").iter().map(|v| v.as_f64().expect("f") as f32).collect();
        let c = common::cosine(&got[i], &want);
        min = min.min(c);
        assert!(c >= 0.999, "item {i}: f16 cosine {c}");
    }
    eprintln!("gpu f16 golden: {} items, min cosine {min:.7}", items.len());
}

/// Every matmul kernel the device has (f32 and f16 in every tile shape, cooperative matrices
/// where offered) against an f64 reference on the same inputs (rounded to f16 for the f16
/// kernels). Tolerance per element, with mag = 1 + Σ|a·w|: f32, 1e-5 · mag (f32 sums over k);
/// f16, 2⁻⁶ · mag (each 16-wide slice's 16 products and sums round in f16, unit roundoff 2⁻¹¹,
/// so at most 16 · 2⁻¹¹ of the slice's Σ|a·w|, times GELU's slope ≤ 1.13).
#[test]
fn matmul_bias_gelu_matches_cpu() {
    let Some(g) = gpu() else { return };
    let mut rng = SmallRng::seed_from_u64(seed());
    let mut shapes = vec![(1, 1, 1), (77, 384, 1152), (64, 64, 64), (5, 1536, 384), (70, 32, 40)];
    for _ in 0..4 {
        shapes.push((rng.random_range(1..150), rng.random_range(1..300), rng.random_range(1..200)));
    }
    let mut kernels: Vec<MatmulKernel> = MatmulTile::ALL.into_iter().map(MatmulKernel::F32).collect();
    if g.supports_f16() {
        kernels.extend(MatmulTile::ALL.map(MatmulKernel::F16));
    }
    let (coop, why) = g.coop_status();
    eprintln!("cooperative matrices: {why}");
    if coop {
        kernels.push(MatmulKernel::Coop);
    }
    let half = |v: &[f32]| -> Vec<f32> { v.iter().map(|x| half::f16::from_f32(*x).to_f32()).collect() };
    for (m, k, n) in shapes {
        let (a, w, bias) = (random(&mut rng, m * k), random(&mut rng, k * n), random(&mut rng, n));
        for kernel in &kernels {
            // The cooperative kernel needs K in whole 16-wide slices.
            if *kernel == MatmulKernel::Coop && k % 16 != 0 {
                continue;
            }
            let (ar, wr, tol) = if kernel.is_f16() { (half(&a), half(&w), 1.0 / 64.0) } else { (a.clone(), w.clone(), 1e-5) };
            for gelu in [false, true] {
                let got = pollster::block_on(g.matmul_with(&a, m, &Packed::from_kn(&w, k, n), &bias, gelu, *kernel)).expect("matmul");
                for r in 0..m {
                    for c in 0..n {
                        let (mut s, mut mag) = (bias[c] as f64, bias[c].abs() as f64);
                        for i in 0..k {
                            s += ar[r * k + i] as f64 * wr[i * n + c] as f64;
                            mag += (ar[r * k + i] * wr[i * n + c]).abs() as f64;
                        }
                        let want = if gelu { ops::gelu_erf(s as f32) as f64 } else { s };
                        let e = (got[r * n + c] as f64 - want).abs();
                        assert!(e <= tol * (1.0 + mag), "{m}x{k}x{n} {kernel:?} gelu={gelu} [{r},{c}]: {} vs {want}", got[r * n + c]);
                    }
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
    let Some(path) = common::shared_data("embeddings/all-MiniLM-L6-v2.golden.json") else { return };
    let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(path).expect("golden file")).expect("golden json");
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
    // Batch invariance: an item alone and inside a batch of other lengths.
    for i in [0, 17, 40] {
        let alone = pollster::block_on(bert.embed_ids(&ids[i..i + 1])).expect("alone").pop().expect("one");
        let c = common::cosine(&alone, &batch[i]);
        assert!(c >= 0.99999, "item {i}: alone vs in batch {c}");
    }
    // The workspace now fits 66 items: a warm batch creates no buffer, bind group or pipeline.
    let before = g.counters();
    pollster::block_on(bert.embed_ids(&ids[..20])).expect("warm batch");
    assert_eq!(g.counters(), before, "objects created by a warm batch");
    assert_eq!(bert.dispatches_per_forward(), 3 + 7 * 6);
}

/// Reference attention in f64: per sequence and head, softmax(q·kᵀ/√d)·v.
fn attention_ref(qkv: &[f32], lens: &[usize], h: usize, heads: usize) -> Vec<f64> {
    let d = h / heads;
    let t: usize = lens.iter().sum();
    let mut out = vec![0f64; t * h];
    let mut start = 0;
    for &len in lens {
        for head in 0..heads {
            for i in start..start + len {
                let q = |c: usize| qkv[i * 3 * h + head * d + c] as f64;
                let scores: Vec<f64> = (start..start + len)
                    .map(|j| (0..d).map(|c| q(c) * qkv[j * 3 * h + h + head * d + c] as f64).sum::<f64>() / (d as f64).sqrt())
                    .collect();
                let m = scores.iter().copied().fold(f64::MIN, f64::max);
                let z: f64 = scores.iter().map(|s| (s - m).exp()).sum();
                for (jj, s) in scores.iter().enumerate() {
                    let pj = (s - m).exp() / z;
                    for c in 0..d {
                        out[i * h + head * d + c] += pj * qkv[(start + jj) * 3 * h + 2 * h + head * d + c] as f64;
                    }
                }
            }
        }
        start += len;
    }
    out
}

/// Tolerance: 1e-5 absolute (inputs in [−1, 1], outputs convex combinations of values).
#[test]
fn attention_matches_cpu() {
    let Some(g) = gpu() else { return };
    let mut rng = SmallRng::seed_from_u64(seed());
    // Head dimensions 32, 64, 64, 16 and 48; sequences of one to several 16-token tiles.
    for (h, heads) in [(384usize, 12usize), (768, 12), (64, 1), (128, 8), (96, 2)] {
        let mut lens: Vec<usize> = (0..rng.random_range(1..5)).map(|_| rng.random_range(1..70)).collect();
        lens.push(16);
        let t: usize = lens.iter().sum();
        let qkv = random(&mut rng, t * 3 * h);
        let got = pollster::block_on(g.attention(&qkv, &lens, h, heads)).expect("attention");
        let want = attention_ref(&qkv, &lens, h, heads);
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!((*a as f64 - b).abs() < 1e-5, "h {h} heads {heads} lens {lens:?} [{i}]: {a} vs {b}");
        }
    }
}

/// Mean pooling + L2 and the embedding gather against plain loops. Tolerance 1e-6.
#[test]
fn pool_and_gather_match_cpu() {
    let Some(g) = gpu() else { return };
    let mut rng = SmallRng::seed_from_u64(seed());
    let h = 384;
    let lens = vec![1usize, 7, 30, 2];
    let t: usize = lens.iter().sum();
    let x = random(&mut rng, t * h);
    let got = pollster::block_on(g.mean_pool(&x, &lens, h)).expect("pool");
    let mut start = 0;
    for (b, &len) in lens.iter().enumerate() {
        let mean: Vec<f64> = (0..h).map(|c| (start..start + len).map(|r| x[r * h + c] as f64).sum::<f64>() / len as f64).collect();
        let norm = mean.iter().map(|v| v * v).sum::<f64>().sqrt();
        for c in 0..h {
            assert!((got[b * h + c] as f64 - mean[c] / norm).abs() < 1e-6, "pool seq {b} col {c}");
        }
        start += len;
    }
    let (vocab, max_pos) = (200, 64);
    let (word, position, token_type) = (random(&mut rng, vocab * h), random(&mut rng, max_pos * h), random(&mut rng, 2 * h));
    let ids: Vec<u32> = (0..t).map(|i| if i == 3 { 5000 } else { rng.random_range(0..vocab as u32) }).collect();
    let pos: Vec<u32> = (0..t).map(|i| (i % max_pos) as u32).collect();
    let got = pollster::block_on(g.embed_gather(&ids, &pos, &word, &position, &token_type, h)).expect("gather");
    for r in 0..t {
        let id = if ids[r] as usize >= vocab { 100 } else { ids[r] as usize };
        for c in 0..h {
            let want = word[id * h + c] + position[pos[r] as usize * h + c] + token_type[c];
            assert!((got[r * h + c] - want).abs() < 1e-6, "gather [{r},{c}]");
        }
    }
}

/// The engine's embedder forced onto the GPU (lavapipe here) matches the CPU path; after the
/// device is destroyed, calls still succeed on the CPU and one `GPU_LOST` warning is emitted.
/// `auto` does not pick a software adapter.
#[test]
fn device_embedder_falls_back_to_cpu_on_device_loss() {
    use std::{cell::RefCell, rc::Rc};
    use webrag::embed::{CpuEmbedder, DeviceEmbedder, DevicePreference, EmbedPath, Embedder};
    if std::env::var_os("WEBRAG_SKIP_GPU").is_some() {
        return;
    }
    let load = || CpuEmbedder::from_files(webrag::embed::DEFAULT_MODEL_ID, &common::model_files()).expect("model");
    let texts = ["Owls hunt at night.", "The bee dances to show where the flowers are."];
    let cpu = pollster::block_on(common::model().embed(&texts)).expect("cpu");
    let auto =
        pollster::block_on(DeviceEmbedder::open(load(), DevicePreference::Auto, Box::new(webrag::ports::SystemClock))).expect("auto");
    eprintln!("auto: {:?}", auto.info());
    if auto.info().software_adapter {
        assert_eq!(auto.info().path, EmbedPath::Cpu, "auto must not pick a software adapter");
    }
    let e =
        pollster::block_on(DeviceEmbedder::open(load(), DevicePreference::Gpu, Box::new(webrag::ports::SystemClock))).expect("forced gpu");
    let info = e.info();
    eprintln!("gpu: {info:?}");
    assert_eq!(info.path, EmbedPath::Gpu);
    assert!(info.crossover.is_some());
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = events.clone();
    e.on_event(move |ev| sink.borrow_mut().push(ev.clone()));
    let on_gpu = pollster::block_on(e.embed(&texts)).expect("gpu batch");
    for (a, b) in on_gpu.iter().zip(&cpu) {
        assert!(common::cosine(a, b) >= 0.9999);
    }
    e.gpu().expect("gpu in use").gpu().destroy();
    let after = pollster::block_on(e.embed(&texts)).expect("falls back instead of failing");
    assert_eq!(after, cpu);
    assert_eq!(e.info().path, EmbedPath::Cpu);
    assert_eq!(events.borrow().len(), 1);
    assert_eq!(events.borrow()[0].code, "GPU_LOST");
}

/// A forward pass on a destroyed device is a typed error (`GPU_FAILED`), never a panic or a hang.
#[test]
fn a_destroyed_device_fails_with_gpu_failed() {
    let Some(g) = gpu() else { return };
    let m = common::model();
    let bert = g.upload(m.bert());
    let ids = vec![m.tokenizer().encode("Owls hunt at night.").expect("encode")];
    pollster::block_on(bert.embed_ids(&ids)).expect("a pass before the loss");
    g.destroy();
    let err = pollster::block_on(bert.embed_ids(&ids)).expect_err("the device is gone");
    assert_eq!(webrag::Error::from(err.clone()).code(), "GPU_FAILED", "{err}");
}

/// A 768-d BERT (12 heads of 64, FFN 3072; 2 layers, random weights, built here as safetensors)
/// loads on both paths, and the GPU forward pass matches the CPU one (cosine ≥ 0.9999).
#[test]
fn bert_768_loads_and_gpu_matches_cpu() {
    use webrag::embed::{BertConfig, BertModel};
    let Some(g) = gpu() else { return };
    let mut rng = SmallRng::seed_from_u64(seed());
    let (h, inter, layers, vocab, max_pos) = (768usize, 3072usize, 2usize, 512usize, 512usize);
    let config = format!(
        r#"{{"model_type":"bert","hidden_size":{h},"num_hidden_layers":{layers},"num_attention_heads":12,"intermediate_size":{inter},"max_position_embeddings":{max_pos},"type_vocab_size":2,"vocab_size":{vocab},"layer_norm_eps":1e-12,"hidden_act":"gelu"}}"#
    );
    let mut tensors: Vec<(String, Vec<usize>, Vec<f32>)> = Vec::new();
    let mut t = |name: String, shape: Vec<usize>, scale: f32, offset: f32| {
        let n = shape.iter().product();
        let v = (0..n).map(|_| offset + scale * rng.random_range(-1.0f32..1.0)).collect();
        tensors.push((name, shape, v));
    };
    t("embeddings.word_embeddings.weight".into(), vec![vocab, h], 0.5, 0.0);
    t("embeddings.position_embeddings.weight".into(), vec![max_pos, h], 0.1, 0.0);
    t("embeddings.token_type_embeddings.weight".into(), vec![2, h], 0.1, 0.0);
    t("embeddings.LayerNorm.weight".into(), vec![h], 0.1, 1.0);
    t("embeddings.LayerNorm.bias".into(), vec![h], 0.1, 0.0);
    for l in 0..layers {
        let p = format!("encoder.layer.{l}");
        for part in ["query", "key", "value"] {
            t(format!("{p}.attention.self.{part}.weight"), vec![h, h], 0.05, 0.0);
            t(format!("{p}.attention.self.{part}.bias"), vec![h], 0.05, 0.0);
        }
        t(format!("{p}.attention.output.dense.weight"), vec![h, h], 0.05, 0.0);
        t(format!("{p}.attention.output.dense.bias"), vec![h], 0.05, 0.0);
        t(format!("{p}.attention.output.LayerNorm.weight"), vec![h], 0.1, 1.0);
        t(format!("{p}.attention.output.LayerNorm.bias"), vec![h], 0.1, 0.0);
        t(format!("{p}.intermediate.dense.weight"), vec![inter, h], 0.05, 0.0);
        t(format!("{p}.intermediate.dense.bias"), vec![inter], 0.05, 0.0);
        t(format!("{p}.output.dense.weight"), vec![h, inter], 0.03, 0.0);
        t(format!("{p}.output.dense.bias"), vec![h], 0.05, 0.0);
        t(format!("{p}.output.LayerNorm.weight"), vec![h], 0.1, 1.0);
        t(format!("{p}.output.LayerNorm.bias"), vec![h], 0.1, 0.0);
    }
    let raw: Vec<(String, Vec<usize>, Vec<u8>)> =
        tensors.into_iter().map(|(n, s, v)| (n, s, v.iter().flat_map(|x| x.to_le_bytes()).collect())).collect();
    let views: Vec<(String, safetensors::tensor::TensorView)> = raw
        .iter()
        .map(|(n, s, b)| (n.clone(), safetensors::tensor::TensorView::new(safetensors::Dtype::F32, s.clone(), b).expect("view")))
        .collect();
    let bytes = safetensors::serialize(views, None).expect("serialize");
    let model = BertModel::from_safetensors(BertConfig::from_json(config.as_bytes()).expect("config"), &bytes).expect("768-d model");
    let seqs: Vec<Vec<u32>> = [9usize, 33, 2].iter().map(|&n| (0..n).map(|_| rng.random_range(0..vocab as u32)).collect()).collect();
    let want = model.embed(&seqs);
    let bert = g.upload(&model);
    let got = pollster::block_on(bert.embed_ids(&seqs)).expect("gpu");
    for (i, (a, b)) in got.iter().zip(&want).enumerate() {
        assert_eq!(a.len(), 768);
        let c = common::cosine(a, b);
        assert!(c >= 0.9999, "seq {i}: cosine {c}");
    }
}
