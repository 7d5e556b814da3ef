//! The module map of ARCHITECTURE.md, checked on the source: every module imports only modules
//! of a lower layer (so there are no cycles), and the core (everything but `web` and `native`)
//! never names the browser bindings or the native adapters.
#![cfg(not(target_arch = "wasm32"))]
use std::path::{Path, PathBuf};

/// Layers, bottom first. A module may name modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    &["error"],
    &["types", "options"],
    &["ports"],
    &["text", "kb_file"],
    &["embed"],
    &["index", "llm"],
    &["graph", "retrieve"],
    &["config"],
    &["engine"],
    &["ask", "snapshot"],
    &["web", "native"],
];

/// Names the core must not contain (outside comments).
const PLATFORM_NAMES: &[&str] = &["js_sys", "web_sys", "wasm_bindgen", "JsValue", "crate::native"];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`None` for `lib.rs`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_string())
}

/// The file's code with comments (`//`, `///`, `//!`) blanked, line breaks kept.
fn code(text: &str) -> String {
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The modules `code` names as `crate::name` or in `use crate::{a, b::{…}}` groups (which may
/// span lines), each with the byte offset where it is named.
fn named_modules(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    for (i, _) in code.match_indices("crate::") {
        let at = i + "crate::".len();
        let rest = &code[at..];
        if let Some(group) = rest.strip_prefix('{') {
            // The first identifier of each top-level item of the group.
            let (mut depth, mut start) = (1, true);
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 1 => break,
                    '}' => depth -= 1,
                    ',' if depth == 1 => start = true,
                    c if start && !c.is_whitespace() => {
                        out.push((at + 1 + j, ident(&group[j..])));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.push((at, ident(rest)));
        }
    }
    out
}

fn names(code: &str) -> Vec<String> {
    named_modules(code).into_iter().map(|(_, m)| m).collect()
}

#[test]
fn modules_import_only_lower_layers_and_the_core_names_no_platform() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else { continue };
        let Some(own) = layer(&module) else {
            problems.push(format!("{}: module `{module}` is not in the layer table", file.display()));
            continue;
        };
        let code = code(&std::fs::read_to_string(file).expect("read source"));
        let line = |offset: usize| code[..offset].matches('\n').count() + 1;
        for (at, other) in named_modules(&code) {
            if other != module && layer(&other).is_some_and(|l| l >= own) {
                problems.push(format!("{}:{}: `{module}` names `crate::{other}`, which is not below it", file.display(), line(at)));
            }
        }
        if module != "web" && module != "native" {
            for name in PLATFORM_NAMES {
                for (at, _) in code.match_indices(name) {
                    problems.push(format!("{}:{}: the core names `{name}`", file.display(), line(at)));
                }
            }
        }
    }
    assert!(problems.is_empty(), "architecture violations:\n{}", problems.join("\n"));
}

#[test]
fn the_checker_sees_what_it_must() {
    assert_eq!(names("use crate::{error::Error, ports::Store};"), ["error", "ports"]);
    assert_eq!(names("use crate::{\n    embed::{a, b},\n    index::c,\n};"), ["embed", "index"]);
    assert_eq!(names(&code("let x = crate::native::XorShift(1); // crate::web\n/// crate::ask")), ["native"]);
}
