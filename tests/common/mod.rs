//! Shared helpers for native tests: the real model, loaded once per test binary.
#![allow(dead_code)]
use std::sync::OnceLock;

pub mod llm_server;

use webrag::embed::CpuEmbedder;

/// all-MiniLM-L6-v2 from `.models/` (installed by `./webrag.sh setup`) or `$WEBRAG_MODEL`.
pub fn model() -> &'static CpuEmbedder {
    static M: OnceLock<CpuEmbedder> = OnceLock::new();
    M.get_or_init(|| {
        let dir = webrag::native::default_model_dir();
        webrag::native::load_embedder(&dir).unwrap_or_else(|e| panic!("model not found in {} ({e}); run ./webrag.sh setup", dir.display()))
    })
}

/// `../shared` beside the checkout.
pub fn shared() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared")
}

pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let (mut d, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        d += *x as f64 * *y as f64;
        na += (*x as f64).powi(2);
        nb += (*y as f64).powi(2);
    }
    d / (na.sqrt() * nb.sqrt()).max(1e-30)
}

/// The model's files as bytes (for a second, owned embedder).
pub fn model_files() -> webrag::embed::ModelFiles {
    webrag::native::read_model_files(&webrag::native::default_model_dir()).expect("model files")
}
