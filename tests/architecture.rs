//! The module map of ARCHITECTURE.md, checked on the source: every module imports only modules
//! of a lower layer (so there are no cycles), and the core (everything but `web` and `native`)
//! never names the browser bindings or the native adapters.
#![cfg(not(target_arch = "wasm32"))]
use std::path::{Path, PathBuf};

/// Layers, bottom first. A module may name modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    &["error", "sort"],
    &["schema"],
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

/// The module path of a file of `src/` (`engine/lazy/mod.rs` → `engine::lazy`; `lib.rs` → the
/// crate root, empty).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.strip_suffix(".rs").unwrap_or(&last);
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The paths `code` (of module `module`) names through `crate::`, `self::` or `super::` (chains
/// of `super::` included), made absolute; a `{…}` group gives one path per item (its first
/// segment). Test modules are left out (their `super` is the file's own module).
fn module_refs(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let code = code.split("#[cfg(test)]").next().unwrap_or("");
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let starts = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':');
        let (mut base, mut at) = if starts && rest.starts_with("crate::") {
            (Vec::new(), i + "crate::".len())
        } else if starts && rest.starts_with("self::") {
            (module.to_vec(), i + "self::".len())
        } else if starts && rest.starts_with("super::") {
            let mut b = module.to_vec();
            let mut at = i;
            while code[at..].starts_with("super::") {
                b.pop();
                at += "super::".len();
            }
            (b, at)
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        // Segments up to a group or the end of the path.
        loop {
            let seg = ident(&code[at..]);
            if seg.is_empty() {
                break;
            }
            base.push(seg.clone());
            at += seg.len();
            if !code[at..].starts_with("::") {
                break;
            }
            at += 2;
        }
        if code[at..].starts_with('{') {
            let (mut depth, mut start) = (0, true);
            for (j, c) in code[at..].char_indices() {
                match c {
                    '{' => {
                        depth += 1;
                        start = depth == 1;
                    }
                    '}' if depth == 1 => break,
                    '}' => depth -= 1,
                    ',' if depth == 1 => start = true,
                    c if start && depth == 1 && !c.is_whitespace() => {
                        let mut p = base.clone();
                        p.push(ident(&code[at + j..]));
                        out.push(p);
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(base);
        }
        i = at.max(i + 1);
    }
    out
}

/// Within every folder, the modules side by side import one another without a circle: `a` naming
/// `b` (anywhere in `a`'s files) and `b` naming `a` would be one concept split across two files.
#[test]
fn sibling_modules_import_one_another_without_circles() {
    let circles = circles(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(circles.is_empty(), "import circles:\n{}", circles.join("\n"));
}

/// The import circles among sibling modules of the source tree `src`.
fn circles(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let paths: Vec<Vec<String>> = files.iter().map(|f| module_path(src, f)).collect();
    let is_module = |p: &[String]| paths.iter().any(|q| q.as_slice() == p);
    // (folder, from, to) for every reference between two children of one folder.
    let mut edges: std::collections::BTreeSet<(Vec<String>, String, String)> = Default::default();
    for (file, module) in files.iter().zip(&paths) {
        let code = code(&std::fs::read_to_string(file).expect("read source"));
        for r in module_refs(&code, module) {
            for depth in 0..module.len() {
                let folder = &module[..depth];
                if r.len() > depth && r[..depth] == *folder && r[depth] != module[depth] && is_module(&r[..=depth]) {
                    edges.insert((folder.to_vec(), module[depth].clone(), r[depth].clone()));
                }
            }
        }
    }
    let mut circles = Vec::new();
    for (folder, a, b) in &edges {
        if a < b && edges.contains(&(folder.clone(), b.clone(), a.clone())) {
            circles.push(format!("{}: {a} ↔ {b}", if folder.is_empty() { "crate".to_string() } else { folder.join("::") }));
        }
    }
    // Longer circles: a depth-first search per folder.
    let folders: std::collections::BTreeSet<&Vec<String>> = edges.iter().map(|e| &e.0).collect();
    for folder in folders {
        let next = |n: &str| -> Vec<&String> { edges.iter().filter(|e| &e.0 == folder && e.1 == n).map(|e| &e.2).collect() };
        let nodes: std::collections::BTreeSet<&String> = edges.iter().filter(|e| &e.0 == folder).map(|e| &e.1).collect();
        for start in nodes {
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut seen = std::collections::HashSet::new();
            while let Some((n, path)) = stack.pop() {
                for m in next(&n) {
                    if m == start && path.len() > 2 {
                        circles.push(format!("{}: {} → {start}", folder.join("::"), path.join(" → ")));
                    } else if seen.insert(m.clone()) {
                        let mut p = path.clone();
                        p.push(m.clone());
                        stack.push((m.clone(), p));
                    }
                }
            }
        }
    }
    circles
}

#[test]
fn the_circle_checker_resolves_paths() {
    let m: Vec<String> = ["ask", "pipeline"].map(String::from).to_vec();
    let refs = module_refs("use super::{answer::Source, params};\nuse crate::engine::Engine;\n#[cfg(test)]\nuse super::web;", &m);
    let want: Vec<Vec<String>> =
        vec![vec!["ask".into(), "answer".into()], vec!["ask".into(), "params".into()], vec!["engine".into(), "Engine".into()]];
    assert_eq!(refs, want);
    let src = Path::new("/s");
    assert_eq!(module_path(src, Path::new("/s/engine/lazy/mod.rs")), ["engine", "lazy"]);
    assert_eq!(module_path(src, Path::new("/s/engine/lazy/write.rs")), ["engine", "lazy", "write"]);
    // A tree with a circle of two and one of three: both found.
    let dir = std::env::temp_dir().join(format!("webrag-circles-{}", std::process::id()));
    let write = |p: &str, text: &str| {
        let path = dir.join(p);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write("lib.rs", "pub mod a;\npub mod b;");
    write("a/mod.rs", "mod x;\nmod y;");
    write("a/x.rs", "use super::y::Y;");
    write("a/y.rs", "use super::{x::X, z};");
    write("b/mod.rs", "mod p;\nmod q;\nmod r;");
    write("b/p.rs", "use crate::b::q::Q;");
    write("b/q/mod.rs", "mod inner;");
    write("b/q/inner.rs", "use super::super::r::R;");
    write("b/r.rs", "fn f() { super::p::go() }");
    let found = circles(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(found.contains(&"a: x ↔ y".to_string()), "{found:?}");
    assert!(found.iter().any(|c| c.starts_with("b: ") && c.contains("p") && c.contains("q") && c.contains("r")), "{found:?}");
}

/// The most public methods the loaded engine's facade may have (issue 36): what the engine owns
/// beyond them is reached through the types that own it (`Corpus`, `AskStore`, `Enrichment`).
const MAX_ENGINE_METHODS: usize = 25;

/// The public methods of `impl ... Engine<S, E>` blocks in `files` (comments stripped).
fn engine_methods(files: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (name, text) in files {
        let code = code(text);
        let mut depth = 0usize;
        let mut in_engine = false;
        for line in code.lines() {
            if depth == 0 && line.starts_with("impl") && line.contains(" Engine<") && !line.contains(" for ") {
                in_engine = true;
            }
            if in_engine && depth == 1 {
                let l = line.trim_start();
                if let Some(rest) = l.strip_prefix("pub fn ").or_else(|| l.strip_prefix("pub async fn ")) {
                    out.push(format!("{name}: {}", rest.split(['(', '<']).next().unwrap_or(rest)));
                }
            }
            depth += line.matches('{').count();
            depth = depth.saturating_sub(line.matches('}').count());
            if depth == 0 {
                in_engine = false;
            }
        }
    }
    out
}

#[test]
fn the_engine_facade_has_at_most_25_public_methods() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
    let mut paths = Vec::new();
    rust_files(&dir, &mut paths);
    let files: Vec<(String, String)> = paths
        .iter()
        .map(|p| (p.strip_prefix(&dir).unwrap_or(p).display().to_string(), std::fs::read_to_string(p).expect("read")))
        .collect();
    let methods = engine_methods(&files);
    assert!(methods.len() <= MAX_ENGINE_METHODS, "{} public methods on Engine (at most {MAX_ENGINE_METHODS}): {methods:#?}", methods.len());
    // The counter sees what it must: an inherent block's methods, not a trait impl's or another type's.
    let fixture = "impl<S: Store, E: Embedder> Engine<S, E> {\n    pub fn a(&self) {}\n    pub async fn b(&self) { if x { y } }\n    fn c() {}\n}\nimpl<S, E> KnowledgeBase for Engine<S, E> {\n    pub fn d() {}\n}\nimpl Corpus {\n    pub fn e() {}\n}\n";
    assert_eq!(engine_methods(&[("f.rs".into(), fixture.into())]), vec!["f.rs: a", "f.rs: b"]);
}
