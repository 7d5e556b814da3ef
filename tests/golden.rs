#![cfg(not(target_arch = "wasm32"))]
//! The CPU embedder against sentence-transformers' own output
//! (`../shared/embeddings/all-MiniLM-L6-v2.golden.json`): token ids identical, cosine ≥ 0.9999
//! on every item; batch invariance.
use crate::common;

use serde_json::Value;

/// The golden file, or `None` (the test skips) without `../shared`.
fn golden() -> Option<Value> {
    let p = common::shared_data("embeddings/all-MiniLM-L6-v2.golden.json")?;
    Some(serde_json::from_slice(&std::fs::read(&p).expect("golden file")).expect("golden json"))
}

#[test]
fn token_ids_match_exactly() {
    let Some(g) = golden() else { return };
    let m = common::model();
    for (i, item) in g["items"].as_array().expect("items").iter().enumerate() {
        let text = item["text"].as_str().expect("text");
        let want: Vec<u32> = item["input_ids"].as_array().expect("ids").iter().map(|v| v.as_u64().expect("id") as u32).collect();
        let got = m.tokenizer().encode(text).expect("encode");
        assert_eq!(got, want, "item {i} {text:?}");
    }
}

#[test]
fn embeddings_match_golden_fp32() {
    let Some(g) = golden() else { return };
    let m = common::model();
    let items = g["items"].as_array().expect("items");
    let texts: Vec<&str> = items.iter().map(|i| i["text"].as_str().expect("text")).collect();
    let mut min = f64::MAX;
    for (i, item) in items.iter().enumerate() {
        let want: Vec<f32> = item["embedding"].as_array().expect("emb").iter().map(|v| v.as_f64().expect("f") as f32).collect();
        let got = m.embed_sync(&[texts[i]]).expect("embed").pop().expect("one");
        assert_eq!(got.len(), 384);
        let c = common::cosine(&got, &want);
        min = min.min(c);
        assert!(c >= 0.9999, "item {i} {:?}: cosine {c}", texts[i]);
    }
    println!("golden: {} items, min cosine {min:.7}", items.len());
}

#[test]
fn batch_invariance() {
    let Some(g) = golden() else { return };
    let m = common::model();
    let items = g["items"].as_array().expect("items");
    let texts: Vec<&str> = items.iter().map(|i| i["text"].as_str().expect("text")).collect();
    let batch = m.embed_sync(&texts).expect("batch");
    let mut min = f64::MAX;
    for (i, t) in texts.iter().enumerate() {
        let alone = m.embed_sync(&[t]).expect("alone").pop().expect("one");
        let c = common::cosine(&alone, &batch[i]);
        min = min.min(c);
        assert!(c >= 0.99999, "item {i}: alone vs batch cosine {c}");
    }
    println!("batch invariance: min cosine {min:.8} over {} items", texts.len());
}

/// The int8 arithmetic of the CPU forward pass (`Precision::Int8`: int8 weights per column ×
/// 7-bit activations per row) against sentence-transformers' vectors, one text at a time and in
/// one batch (the batch agrees with the single texts: the activations are quantized per row).
#[test]
fn int8_arithmetic_against_golden() {
    use webrag::embed::Precision;
    let Some(g) = golden() else { return };
    let items = g["items"].as_array().expect("items");
    let texts: Vec<&str> = items.iter().map(|i| i["text"].as_str().expect("text")).collect();
    let mut m = webrag::native::load_embedder(&webrag::native::default_model_dir()).expect("model");
    m.set_precision(Precision::Int8);
    assert_eq!(m.precision(), Precision::Int8);
    let batch = m.embed_sync(&texts).expect("batch");
    let (mut min, mut sum, mut min_batch) = (f64::MAX, 0.0, f64::MAX);
    for (i, item) in items.iter().enumerate() {
        let want: Vec<f32> = item["embedding"].as_array().expect("emb").iter().map(|v| v.as_f64().expect("f") as f32).collect();
        let got = m.embed_sync(&[texts[i]]).expect("embed").pop().expect("one");
        let c = common::cosine(&got, &want);
        min = min.min(c);
        sum += c;
        min_batch = min_batch.min(common::cosine(&got, &batch[i]));
        assert!(c >= 0.98, "item {i} {:?}: cosine {c}", texts[i]);
    }
    assert!(min_batch >= 0.99999, "batch vs single texts: cosine {min_batch}");
    println!("int8 arithmetic: {} items, min cosine {min:.6}, mean {:.6} with the golden vectors", items.len(), sum / items.len() as f64);
}

/// The query encoder's smaller copies (`webrag quantize`): int8 with per-row scales and f16,
/// loaded back and compared with sentence-transformers' vectors; their weights' share of the
/// f32 file.
#[test]
fn quantized_copies_against_golden() {
    use webrag::embed::{CpuEmbedder, DEFAULT_MODEL_ID, ModelFiles, WeightFormat, quantize_weights};
    let Some(g) = golden() else { return };
    let items = g["items"].as_array().expect("items");
    let texts: Vec<&str> = items.iter().map(|i| i["text"].as_str().expect("text")).collect();
    let files = common::model_files();
    for (format, floor, max_share) in [(WeightFormat::Int8, 0.99, 0.27), (WeightFormat::F16, 0.9999, 0.51)] {
        let weights = quantize_weights(&files.weights, format).expect("quantize");
        let share = weights.len() as f64 / files.weights.len() as f64;
        assert!(share <= max_share, "{format:?}: {share:.3} of the f32 bytes");
        let m = CpuEmbedder::from_files(DEFAULT_MODEL_ID, &ModelFiles { weights, ..files.clone() }).expect("load");
        let got = m.embed_sync(&texts).expect("embed");
        let mut min = f64::MAX;
        for (i, item) in items.iter().enumerate() {
            let want: Vec<f32> = item["embedding"].as_array().expect("emb").iter().map(|v| v.as_f64().expect("f") as f32).collect();
            let c = common::cosine(&got[i], &want);
            min = min.min(c);
            assert!(c >= floor, "{format:?} item {i} {:?}: cosine {c}", texts[i]);
        }
        println!("{format:?}: {:.3} of the f32 bytes; min cosine with the golden vectors {min:.6} over {} items", share, items.len());
    }
}

/// A multilingual choice: moka-ai/m3e-small (Chinese BERT, 4 layers, 512-d; WordPiece over the
/// bert-base-chinese vocabulary, no lowercasing), fetched by `./webrag.sh setup` to
/// `.models/m3e-small` (or `$WEBRAG_M3E`), against Hugging Face transformers' BERT on the same
/// weights (`tests/golden/m3e-small.golden.json`, written by `tests/models/golden.py`): token
/// ids identical, cosine ≥ 0.9999 on every sentence (Chinese news, English, mixed, empty, a text
/// past the 256-id truncation).
#[test]
fn m3e_small_against_its_reference() {
    let dir = std::env::var_os("WEBRAG_M3E")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".models/m3e-small"));
    let m = webrag::native::load_embedder(&dir)
        .unwrap_or_else(|e| panic!("m3e-small not found in {} ({e}); run ./webrag.sh setup", dir.display()));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/m3e-small.golden.json");
    let g: Value = serde_json::from_slice(&std::fs::read(&path).expect("golden file")).expect("golden json");
    let items = g["items"].as_array().expect("items");
    let mut min = f64::MAX;
    for (i, item) in items.iter().enumerate() {
        let text = item["text"].as_str().expect("text");
        let want_ids: Vec<u32> = item["input_ids"].as_array().expect("ids").iter().map(|v| v.as_u64().expect("id") as u32).collect();
        assert_eq!(m.tokenizer().encode(text).expect("encode"), want_ids, "item {i} {text:?}");
        let want: Vec<f32> = item["embedding"].as_array().expect("emb").iter().map(|v| v.as_f64().expect("f") as f32).collect();
        let got = m.embed_sync(&[text]).expect("embed").pop().expect("one");
        assert_eq!(got.len(), 512);
        let c = common::cosine(&got, &want);
        min = min.min(c);
        assert!(c >= 0.9999, "item {i} {text:?}: cosine {c}");
    }
    println!("m3e-small: {} items, min cosine {min:.7} with transformers' BERT", items.len());
}
