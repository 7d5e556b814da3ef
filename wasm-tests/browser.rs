#![cfg(target_arch = "wasm32")]
//! Browser tests (wasm-bindgen-test in real browsers, real IndexedDB): the Store
//! conformance suite on IndexedDB, blocked-open handling, the embedder against the golden
//! vectors, and the engine persisting across connections.
//!
//! Model and golden files are fetched from the static server that `./webrag.sh test` starts on
//! 127.0.0.1:8765 (override at build time with `WEBRAG_ASSETS`).
//!
//! `./webrag.sh test` runs this suite three times: built with relaxed SIMD and with SIMD128 alone
//! (the baseline build's kernels) in headless Chromium, and the baseline in WebKitGTK, the engine
//! of Safari, which has no WebGPU: that build is compiled with `WEBRAG_NO_WEBGPU` set, and the GPU
//! tests then check that the browser offers no adapter and that the embedder stays on the CPU.
use wasm_bindgen_test::*;
use webrag::config::Config;
use webrag::embed::{CpuEmbedder, DEFAULT_MODEL_ID, Embedder};
use webrag::engine::{Engine, SearchOptions};
use webrag::error::{Error, StoreError};
use webrag::ports::{FixedClock, NoProgress, Store};
use webrag::types::{DocumentInput, Format, SearchMode};
use webrag::web::idb_store::IdbStore;

#[path = "../tests/store_suite.rs"]
mod store_suite;

wasm_bindgen_test_configure!(run_in_browser);

const ASSETS: &str = match option_env!("WEBRAG_ASSETS") {
    Some(s) => s,
    None => "http://127.0.0.1:8765",
};

/// Whether the browser this build is for has WebGPU (`WEBRAG_NO_WEBGPU` at build time: it has not).
const WEBGPU: bool = option_env!("WEBRAG_NO_WEBGPU").is_none();

/// Which SIMD the kernels of this build use.
const KERNELS: &str = if cfg!(target_feature = "relaxed-simd") { "relaxed SIMD" } else { "SIMD128 (baseline)" };

async fn model() -> CpuEmbedder {
    // The start function that installs the browser's Unicode normalization does not run here.
    webrag::web::install_platform();
    let files = webrag::web::fetch_model(&webrag::web::ModelSpec::url(&format!("{ASSETS}/.models/all-MiniLM-L6-v2/")), &None)
        .await
        .expect("model files");
    CpuEmbedder::from_files(DEFAULT_MODEL_ID, &files).expect("model")
}

#[wasm_bindgen_test]
async fn idb_store_conforms() {
    let _ = IdbStore::delete("webrag-conformance").await;
    let s = IdbStore::open("webrag-conformance").await.expect("open");
    store_suite::run(&s).await;
    s.close();
}

#[wasm_bindgen_test]
async fn idb_open_blocked_by_older_version_is_typed() {
    let name = "webrag-blocked";
    let _ = IdbStore::delete(name).await;
    // Another "tab" holds version 1 open and ignores versionchange.
    let old = idb::Factory::new().expect("factory").open(name, Some(1)).expect("open v1").await.expect("v1");
    let err = IdbStore::open(name).await.err().expect("must be blocked");
    assert_eq!(err, StoreError::Blocked { name: name.into() });
    assert_eq!(Error::from(err).code(), "STORE_BLOCKED");
    old.close();
    // Once the old connection is gone, opening works and the schema is created.
    let s = IdbStore::open(name).await.expect("open after close");
    store_suite::run(&s).await;
    s.close();
}

fn cosine(a: &[f32], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * y).sum();
    let na: f64 = a.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|y| y * y).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// `../shared/embeddings/all-MiniLM-L6-v2.golden.json`, from the test server; `None` (the test
/// skips, saying so on the console) where `../shared` is missing, a failure when the suite was
/// built with `CI=true`.
async fn golden() -> Option<serde_json::Value> {
    let reply = gloo_net::http::Request::get(&format!("{ASSETS}/shared/embeddings/all-MiniLM-L6-v2.golden.json"))
        .send()
        .await
        .expect("fetch golden");
    if reply.status() == 404 {
        let what = "../shared/embeddings/all-MiniLM-L6-v2.golden.json is missing (the shared evaluation data, a folder `shared` beside the checkout)";
        assert!(option_env!("CI") != Some("true"), "{what}: with CI=true the data-bound tests must run");
        web_sys::console::log_1(&format!("SKIP the golden check: {what}").into());
        return None;
    }
    Some(serde_json::from_slice(&reply.binary().await.expect("body")).expect("json"))
}

#[wasm_bindgen_test]
async fn embeddings_match_golden_in_browser() {
    let Some(g) = golden().await else { return };
    let m = model().await;
    let mut min = f64::MAX;
    for (i, item) in g["items"].as_array().expect("items").iter().enumerate() {
        let text = item["text"].as_str().expect("text");
        let want_ids: Vec<u32> = item["input_ids"].as_array().expect("ids").iter().map(|v| v.as_u64().expect("id") as u32).collect();
        assert_eq!(m.tokenizer().encode(text).expect("encode"), want_ids, "ids of item {i}");
        let want: Vec<f64> = item["embedding"].as_array().expect("emb").iter().map(|v| v.as_f64().expect("f")).collect();
        let got = m.embed(&[text]).await.expect("embed").pop().expect("one");
        let c = cosine(&got, &want);
        min = min.min(c);
        assert!(c >= 0.9999, "item {i}: cosine {c}");
    }
    web_sys::console::log_1(&format!("golden in browser: min cosine {min:.7}").into());
}

#[wasm_bindgen_test]
async fn engine_persists_in_indexeddb_and_rejects_bad_input() {
    let name = "webrag-engine-test";
    let _ = IdbStore::delete(name).await;
    let doc =
        |id: &str, text: &str| DocumentInput { id: id.into(), title: None, text: text.into(), format: Format::Auto, ..Default::default() };
    {
        let store = IdbStore::open(name).await.expect("open");
        let mut e = Engine::open(store, model().await, Config::default(), Box::new(FixedClock(1.0))).await.expect("engine");
        e.add(vec![doc("owls.md", "# Owls\n\nOwls hunt at night."), doc("bees", "Bees make honey.")], &mut NoProgress).await.expect("add");
        let err = e.add(vec![doc("new", "fine"), doc("empty", "  ")], &mut NoProgress).await.expect_err("empty");
        assert_eq!(err.code(), "EMPTY_DOCUMENT");
        let err = e.add(vec![doc("d", "a"), doc("d", "b")], &mut NoProgress).await.expect_err("dup");
        assert_eq!(err.code(), "DUPLICATE_ID");
    }
    // A new connection (as after a reload) sees exactly what was committed.
    let store = IdbStore::open(name).await.expect("reopen");
    let contents = store.load().await.expect("load");
    assert_eq!(contents.documents.len(), 2);
    let mut e = Engine::open(store, model().await, Config::default(), Box::new(FixedClock(1.0))).await.expect("engine");
    assert_eq!(e.stats().documents, 2);
    let hits = e.search("nocturnal birds", &SearchOptions::new(1, SearchMode::Hybrid)).await.expect("search");
    assert_eq!(hits[0].doc_id, "owls.md");
    let r = e.remove(&["bees".into(), "unknown".into()]).await.expect("remove");
    assert_eq!((r.removed.len(), r.unknown.len()), (1, 1));
    assert_eq!(e.stats().documents, 1);
}

/// Unicode normalization in the page's builds is the browser's (`String.prototype.normalize`,
/// installed at start): the analyzer's NFKC and the BERT normalizer's accent stripping (NFD) give
/// what the native tables give (the same cases pass natively in `text::analyze`'s and the
/// tokenizer parity tests).
#[wasm_bindgen_test]
async fn unicode_normalization_is_the_browsers() {
    use webrag::ports::{NormalizationForm, normalize};
    webrag::web::install_platform();
    assert_eq!(normalize("ﬁｎｅ Ⅻ ｶ", NormalizationForm::Nfkc), "fine XII カ");
    assert_eq!(normalize("é", NormalizationForm::Nfd), "e\u{301}");
    assert_eq!(webrag::text::analyze("Ｆｕｌｌｗｉｄｔｈ ﬁle Café"), ["fullwidth", "file", "café"]);
    let e = model().await;
    // Accents stripped (NFD, then no nonspacing marks); BERT's normalizer has no NFKC, so the
    // fullwidth word is no word piece of the vocabulary.
    assert_eq!(e.tokenizer().tokens("Café Ｆｕｌｌ naïve").expect("tokens"), ["[CLS]", "cafe", "[UNK]", "naive", "[SEP]"]);
}

/// The SIMD128 row kernels (GELU, softmax, LayerNorm, residual add) agree with their scalar definitions.
#[wasm_bindgen_test]
fn simd_row_kernels_match_scalar() {
    use webrag::embed::ops;
    let x: Vec<f32> = (0..1001).map(|i| (i as f32 * 0.37).sin() * 6.0 + (i % 7) as f32).collect();
    let mut g = x.clone();
    ops::gelu(&mut g);
    for (a, v) in g.iter().zip(&x) {
        assert!((a - ops::gelu_erf(*v)).abs() < 2e-6 * v.abs().max(1.0), "gelu({v}) = {a}");
    }
    let mut s = x.clone();
    ops::softmax(&mut s, 0.5);
    let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let z: f64 = x.iter().map(|v| (((v - m) * 0.5) as f64).exp()).sum();
    for (a, v) in s.iter().zip(&x) {
        let want = (((v - m) * 0.5) as f64).exp() / z;
        assert!((*a as f64 - want).abs() < 1e-6 * want.max(1e-3), "softmax: {a} vs {want}");
    }
    let mut a = x.clone();
    ops::add(&mut a, &g);
    assert!(a.iter().zip(x.iter().zip(&g)).all(|(s, (p, q))| *s == p + q));
    // LayerNorm over two 384-wide rows (the SIMD path needs a width divisible by 4).
    let (h, rows) = (384, &x[..768]);
    let (wt, b): (Vec<f32>, Vec<f32>) = ((0..h).map(|i| 1.0 + i as f32 * 0.01).collect(), (0..h).map(|i| (i % 5) as f32 * 0.1).collect());
    let mut l = rows.to_vec();
    ops::layer_norm(&mut l, &wt, &b, 1e-12);
    for (got, row) in l.chunks(h).zip(rows.chunks(h)) {
        let mean = row.iter().map(|v| *v as f64).sum::<f64>() / h as f64;
        let var = row.iter().map(|v| (*v as f64 - mean).powi(2)).sum::<f64>() / h as f64;
        for i in 0..h {
            let want = (row[i] as f64 - mean) / (var + 1e-12).sqrt() * wt[i] as f64 + b[i] as f64;
            assert!((got[i] as f64 - want).abs() < 1e-5, "layer_norm[{i}]: {} vs {want}", got[i]);
        }
    }
}

/// The SIMD128 dot product (vector search: the fresh buffer's exact scan, HNSW distances, the
/// graph) equals its scalar definition bit for bit: 8 lane sums, the lanes in order, the tail.
#[wasm_bindgen_test]
fn simd_dot_matches_scalar_bit_for_bit() {
    use webrag::embed::vecmath::dot;
    let x: Vec<f32> = (0..1001).map(|i| (i as f32 * 0.37).sin() * 6.0 + (i % 7) as f32).collect();
    let y: Vec<f32> = (0..1001).map(|i| (i as f32 * 0.11).cos() - 0.5).collect();
    for n in [0, 1, 7, 8, 9, 384, 385, 1001] {
        let (a, b) = (&x[..n], &y[..n]);
        let mut lanes = [0f32; 8];
        for c in 0..n / 8 {
            for l in 0..8 {
                lanes[l] += a[c * 8 + l] * b[c * 8 + l];
            }
        }
        let mut want: f32 = lanes.iter().sum();
        for i in n / 8 * 8..n {
            want += a[i] * b[i];
        }
        assert_eq!(dot(a, b).to_bits(), want.to_bits(), "dot over {n}");
    }
    assert_eq!(dot(&x[..10], &y[..4]), dot(&x[..4], &y[..4]), "the shorter length counts");
}

/// This build's f32 GEMM kernel (relaxed SIMD's fused multiply-add, or the baseline's SIMD128
/// multiply and add; 2×16 blocks, odd rows, a partial last panel, strided views, GELU in the
/// store) against a plain triple loop.
#[wasm_bindgen_test]
fn simd_gemm_matches_naive() {
    use webrag::embed::gemm::{Packed, matmul_bias, matmul_bias_gelu, matmul_strided};
    use webrag::embed::ops::gelu_erf;
    let (m, k, n) = (7, 37, 21);
    let a: Vec<f32> = (0..m * k).map(|i| ((i * 7919) % 97) as f32 / 97.0 - 0.5).collect();
    let w: Vec<f32> = (0..n * k).map(|i| ((i * 104729) % 89) as f32 / 89.0 - 0.5).collect();
    let bias: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
    let want: Vec<f32> = (0..m * n).map(|e| bias[e % n] + (0..k).map(|c| a[(e / n) * k + c] * w[(e % n) * k + c]).sum::<f32>()).collect();
    let p = Packed::from_linear(&w, n, k);
    let (mut out, mut act) = (vec![f32::NAN; m * n], vec![f32::NAN; m * n]);
    matmul_bias(&a, m, &p, &bias, &mut out);
    matmul_bias_gelu(&a, m, &p, &bias, &mut act);
    for e in 0..m * n {
        assert!((out[e] - want[e]).abs() < 1e-4, "[{e}] {} vs {}", out[e], want[e]);
        assert!((act[e] - gelu_erf(want[e])).abs() < 1e-4, "gelu [{e}] {} vs {}", act[e], gelu_erf(want[e]));
    }
    // Rows of a with stride 2k; output with stride n + 3 whose padding stays untouched.
    let wide: Vec<f32> = a.chunks(k).flat_map(|r| r.iter().chain(r.iter()).copied().collect::<Vec<_>>()).collect();
    let mut strided = vec![-7f32; m * (n + 3)];
    matmul_strided(&wide, m, 2 * k, &p, &mut strided, n + 3);
    for i in 0..m {
        for j in 0..n + 3 {
            let want = if j < n { want[i * n + j] - bias[j] } else { -7.0 };
            assert!((strided[i * (n + 3) + j] - want).abs() < 1e-4, "strided [{i},{j}]");
        }
    }
}

/// This build's int8 micro-kernel (relaxed SIMD's i8 × i7 dot products, or in the baseline build
/// SIMD128's i16 pair sums) against the f32 product of its dequantized operands: the integer sums
/// are exact, so the two agree to f32 rounding. Shapes cover row and column remainders, `k` not a
/// multiple of 4 and a product of the model's width; GELU applied in the store.
#[wasm_bindgen_test]
fn simd_gemm_i8_matches_dequantized() {
    use webrag::embed::gemm_i8::{PackedI8, QuantRows, matmul_bias_i8};
    web_sys::console::log_1(&format!("int8 kernel: {KERNELS}").into());
    for &(m, k, n) in &[(7, 33, 37), (1, 5, 3), (13, 64, 16), (9, 40, 24), (77, 384, 120)] {
        // In u64: usize is 32 bits here.
        let a: Vec<f32> = (0..(m * k) as u64).map(|i| ((i * 7919) % 97) as f32 / 97.0 - 0.3).collect();
        let w: Vec<f32> = (0..(n * k) as u64).map(|i| ((i * 104729) % 89) as f32 / 89.0 - 0.5).collect();
        let bias: Vec<f32> = (0..n).map(|i| i as f32 * 0.01).collect();
        let p = PackedI8::from_linear(&w, n, k);
        let mut q = QuantRows::default();
        q.quantize(&a, m, k, None);
        let (da, dw) = (q.dequantized(k), p.dequantized());
        let exact: Vec<f32> =
            (0..m * n).map(|e| bias[e % n] + (0..k).map(|c| da[(e / n) * k + c] * dw[(e % n) * k + c]).sum::<f32>()).collect();
        let scale = exact.iter().fold(1f32, |s, x| s.max(x.abs()));
        let (mut out, mut act) = (vec![f32::NAN; m * n], vec![f32::NAN; m * n]);
        matmul_bias_i8(&a, m, &p, None, &bias, &mut out, false, &mut q);
        matmul_bias_i8(&a, m, &p, None, &bias, &mut act, true, &mut q);
        for e in 0..m * n {
            assert!((out[e] - exact[e]).abs() <= 1e-4 * scale, "{KERNELS} {m}x{k}x{n} [{e}]: {} vs {}", out[e], exact[e]);
            assert_eq!(act[e], webrag::embed::ops::gelu_erf(out[e]), "{KERNELS} gelu [{e}]");
        }
    }
}

/// In a browser without WebGPU (a build with `WEBRAG_NO_WEBGPU`): no adapter, a typed
/// `Unavailable`; `auto` embeds on the CPU, and forcing the GPU is that error.
async fn no_webgpu_is_typed() {
    use webrag::embed::{DeviceEmbedder, DevicePreference, EmbedPath};
    use webrag::error::GpuError;
    let err = webrag::embed::gpu::Gpu::new().await.err().expect("this browser has no WebGPU");
    assert!(matches!(err, GpuError::Unavailable { .. }), "{err}");
    let auto = DeviceEmbedder::open(model().await, DevicePreference::Auto, Box::new(webrag::web::platform::JsClock)).await.expect("auto");
    assert_eq!(auto.info().path, EmbedPath::Cpu);
    let forced = DeviceEmbedder::open(model().await, DevicePreference::Gpu, Box::new(webrag::web::platform::JsClock)).await;
    assert!(matches!(forced.err(), Some(Error::Gpu(GpuError::Unavailable { .. }))), "forcing the GPU without WebGPU");
}

/// The whole model on WebGPU (SwiftShader's CPU adapter in headless Chromium) against the golden
/// vectors: cosine ≥ 0.9999 for the first 12 items in one packed batch (SwiftShader is slow).
#[wasm_bindgen_test]
async fn gpu_embeddings_match_golden_in_browser() {
    if !WEBGPU {
        return no_webgpu_is_typed().await;
    }
    let m = model().await;
    #[allow(clippy::arc_with_non_send_sync)] // wgpu's WebGPU backend is single-threaded
    let gpu = std::sync::Arc::new(webrag::embed::gpu::Gpu::new().await.expect("WebGPU adapter (--enable-unsafe-webgpu)"));
    web_sys::console::log_1(
        &format!("webgpu adapter: {} (software: {}, shader-f16: {})", gpu.adapter(), gpu.is_software(), gpu.supports_f16()).into(),
    );
    let bert = gpu.upload(m.bert());
    let Some(g) = golden().await else { return };
    let items: Vec<&serde_json::Value> = g["items"].as_array().expect("items").iter().take(12).collect();
    let ids: Vec<Vec<u32>> = items.iter().map(|i| m.tokenizer().encode(i["text"].as_str().expect("text")).expect("encode")).collect();
    // Minimum cosine of `got` to the golden vectors, each item checked against `floor`.
    let check = |got: &[Vec<f32>], floor: f64, what: &str| {
        let mut min = f64::MAX;
        for (i, item) in items.iter().enumerate() {
            let want: Vec<f64> = item["embedding"].as_array().expect("emb").iter().map(|v| v.as_f64().expect("f")).collect();
            let c = cosine(&got[i], &want);
            min = min.min(c);
            assert!(c >= floor, "{what} item {i}: cosine {c}");
        }
        web_sys::console::log_1(&format!("gpu golden in browser ({what}): {} items, min cosine {min:.7}", items.len()).into());
    };
    let got = bert.embed_ids(&ids).await.expect("gpu forward");
    check(&got, 0.9999, "f32");
    // The f16-weight path where the adapter has shader-f16: cosine ≥ 0.999.
    if gpu.supports_f16() {
        check(&gpu.upload_f16(m.bert()).embed_ids(&ids).await.expect("f16 forward"), 0.999, "f16 weights");
    }
    // A warm batch that fits the workspace creates no buffer, bind group or pipeline.
    let before = gpu.counters();
    let again = bert.embed_ids(&ids[..3]).await.expect("warm batch");
    assert_eq!(gpu.counters(), before, "objects created by a warm batch");
    for i in 0..3 {
        assert!(cosine(&again[i], &got[i].iter().map(|v| *v as f64).collect::<Vec<_>>()) >= 0.99999, "item {i} alone vs in batch");
    }
}

/// The engine's embedder in the page: forced onto WebGPU it matches the CPU path; when the device
/// is destroyed mid-session the next call still succeeds (on the CPU), a `GPU_LOST` warning is
/// emitted and the info says CPU. `auto` never picks a software adapter.
#[wasm_bindgen_test]
async fn device_embedder_falls_back_to_cpu_on_device_loss() {
    if !WEBGPU {
        return no_webgpu_is_typed().await;
    }
    use std::{cell::RefCell, rc::Rc};
    use webrag::embed::{DeviceEmbedder, DevicePreference, EmbedPath};
    let texts = ["Owls hunt at night.", "The bee dances to show where the flowers are."];
    let cpu = model().await.embed(&texts).await.expect("cpu");
    let auto = DeviceEmbedder::open(model().await, DevicePreference::Auto, Box::new(webrag::web::platform::JsClock)).await.expect("auto");
    let info = auto.info();
    web_sys::console::log_1(&format!("auto: {info:?}").into());
    if info.software_adapter {
        assert_eq!(info.path, EmbedPath::Cpu, "auto must not pick a software adapter");
    }
    let e = DeviceEmbedder::open(model().await, DevicePreference::Gpu, Box::new(webrag::web::platform::JsClock)).await.expect("forced gpu");
    assert_eq!(e.info().path, EmbedPath::Gpu);
    assert!(e.info().crossover.is_some(), "crossover measured");
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = events.clone();
    e.on_event(move |ev| sink.borrow_mut().push(ev.clone()));
    let on_gpu = e.embed(&texts).await.expect("gpu batch");
    for (g, c) in on_gpu.iter().zip(&cpu) {
        assert!(cosine(g, &c.iter().map(|v| *v as f64).collect::<Vec<_>>()) >= 0.9999);
    }
    e.gpu().expect("gpu in use").gpu().destroy();
    let after = e.embed(&texts).await.expect("falls back instead of failing");
    assert_eq!(after, cpu, "the fallback is the CPU path");
    assert_eq!(e.info().path, EmbedPath::Cpu);
    let ev = events.borrow();
    assert_eq!(ev.len(), 1, "one warning");
    assert_eq!((ev[0].kind.as_str(), ev[0].code.as_str()), ("warning", "GPU_LOST"));
}
