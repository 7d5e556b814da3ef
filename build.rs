//! Ships the GPU kernels without their comments: every `src/embed/gpu/*.wgsl` is written to
//! `OUT_DIR` with `//` comments, trailing spaces and blank lines removed (the lines and their
//! indentation stay, so the variants `embed::gpu::kernels` derives by text still match). The
//! comments are a third of the kernels' gzip size and every page load would pay for them.

use std::{env, fs, path::Path};

fn main() {
    let src = Path::new("src/embed/gpu");
    let out_dir = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out_dir);
    println!("cargo::rerun-if-changed={}", src.display());
    for entry in fs::read_dir(src).expect("src/embed/gpu") {
        let path = entry.expect("src/embed/gpu entry").path();
        if path.extension().is_some_and(|e| e == "wgsl") {
            println!("cargo::rerun-if-changed={}", path.display());
            let text = fs::read_to_string(&path).expect("a .wgsl kernel is UTF-8");
            let name = path.file_name().expect("a file name");
            fs::write(out.join(name), strip_comments(&text)).expect("write OUT_DIR kernel");
        }
    }
}

/// `text` without `//` comments (WGSL has no string literals, so `//` always starts one; it
/// has block comments too, which the kernels do not use), trailing whitespace and blank lines.
fn strip_comments(text: &str) -> String {
    assert!(!text.contains("/*"), "a .wgsl kernel uses a block comment: strip it in build.rs too");
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let code = line.split_once("//").map_or(line, |(code, _)| code).trim_end();
        if !code.trim_start().is_empty() {
            out.push_str(code);
            out.push('\n');
        }
    }
    out
}
