//! Shared helpers for native tests: the real model, loaded once per test binary.
#![allow(dead_code)]
use std::io::Write;
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

/// The shared evaluation data: `../shared` beside the checkout, or `$WEBRAG_SHARED`.
fn shared() -> std::path::PathBuf {
    std::env::var_os("WEBRAG_SHARED")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

/// A file or folder of the shared evaluation data (`../shared/<rel>`), or `None` when it is
/// missing: the caller skips, and one line on stderr (past the test harness's capture) names the
/// test, what is missing and where it goes. With `CI=true` a missing file is a failure, so CI can
/// never go green by skipping.
pub fn shared_data(rel: &str) -> Option<std::path::PathBuf> {
    shared_or(rel, "skipped")
}

/// As [`shared_data`], for a test that makes its own data instead (`instead` says what) where
/// the shared data is missing: the line it prints says so.
pub fn shared_or(rel: &str, instead: &str) -> Option<std::path::PathBuf> {
    let path = shared().join(rel);
    if path.exists() {
        return Some(path);
    }
    let what = format!("../shared/{rel} is missing (the shared evaluation data, a folder `shared` beside the checkout)");
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{what}: with CI=true the data-bound tests must run");
    let test = std::thread::current().name().unwrap_or("a test").to_string();
    let tag = if instead == "skipped" { "SKIP" } else { "OWN DATA" };
    let _ = writeln!(std::io::stderr(), "{tag} {test}: {what}; {instead}");
    None
}

/// `n` paragraphs of this repository's own prose (README.md, ARCHITECTURE.md, docs/*.md; tables,
/// code and headings left out), for tests that need real English passages but no particular
/// data set.
pub fn own_passages(n: usize) -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs")).expect("docs/").map(|e| e.expect("entry").path()).collect();
    docs.sort();
    files.extend(docs.into_iter().filter(|p| p.extension().is_some_and(|e| e == "md")));
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read a doc");
        let (mut heading, mut in_code) = (String::new(), false);
        for para in text.split("\n\n") {
            let para = para.trim();
            if let Some(rest) = para.strip_prefix("```") {
                in_code = !rest.contains("```");
                continue;
            }
            if in_code {
                in_code = !para.contains("```");
                continue;
            }
            if let Some(h) = para.strip_prefix('#') {
                heading = h.trim_start_matches('#').trim().to_string();
                continue;
            }
            if para.len() >= 200 && !para.starts_with('|') && !para.starts_with('<') {
                // The title: the section's heading and the paragraph's first words (sections
                // hold several paragraphs; titles stay distinct).
                let words: Vec<&str> = para.split_whitespace().take(5).collect();
                out.push((format!("{heading}: {}", words.join(" ")), para.replace('\n', " ")));
                if out.len() == n {
                    return out;
                }
            }
        }
    }
    assert!(out.len() == n, "the repository's docs hold {} paragraphs, {n} asked", out.len());
    out
}

/// `n` articles in Chinese made by the test itself (a seeded generator over 2,500 CJK ideographs:
/// sentences of 8 to 30 characters, 25 to 74 sentences; each article on one of 40 topics, four
/// characters in five from its topic's own 120, so that articles cluster as a news corpus's do):
/// for tests that compare two ways of searching the same base rather than the quality of one.
pub fn own_articles(n: usize) -> Vec<String> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m
    };
    (0..n)
        .map(|_| {
            let topic = next(40);
            let mut a = String::new();
            for _ in 0..25 + next(50) {
                for _ in 0..8 + next(23) {
                    // The topic's characters, else any, skewed towards the first (as word
                    // frequencies are).
                    let k = if next(5) < 4 { 100 + topic * 60 + next(120) } else { next(2500).min(next(2500)) };
                    a.push(char::from_u32(0x4E00 + k as u32).expect("a CJK ideograph"));
                }
                a.push('。');
            }
            a
        })
        .collect()
}

/// The first `n` CRUD news articles (`../shared/data/crud_news`), or as many the test makes
/// itself where the shared data is missing: these tests compare the lazily opened base with the
/// loaded one, which any text can show.
pub fn news(n: usize) -> Vec<String> {
    let Some(dir) = shared_news() else { return own_articles(n) };
    let mut files: Vec<_> = std::fs::read_dir(&dir).expect("crud_news").map(|e| e.expect("entry").path()).collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).expect("read");
        out.extend(text.lines().filter(|l| !l.trim().is_empty()).map(str::to_string));
        if out.len() >= n {
            break;
        }
    }
    out.truncate(n);
    out
}

/// The CRUD news folder, looked up once per test binary (one line when it is missing).
fn shared_news() -> Option<std::path::PathBuf> {
    static DIR: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| shared_or("data/crud_news", "generated articles instead")).clone()
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
