#![cfg(not(target_arch = "wasm32"))]
//! Every engine option and ask option, as serde names it, appears in the TypeScript types
//! (`src/web/js/index.d.ts`) and in `docs/api.md`, so the copies of the options cannot drift apart
//! silently (one once lacked `bm25Idf`).
use serde_json::Value;

/// Every key of `v`, dotted (`graph.pgr.anchors`), with whether its value is a group of options.
fn keys(v: &Value, prefix: &str, out: &mut Vec<(String, bool)>) {
    if let Value::Object(m) = v {
        for (k, x) in m {
            let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            out.push((path.clone(), x.is_object()));
            keys(x, &path, out);
        }
    }
}

fn read(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).expect(path)
}

fn check(what: &str, defaults: Value) {
    let (dts, api) = (read("src/web/js/index.d.ts"), read("docs/api.md"));
    let mut all = Vec::new();
    keys(&defaults, "", &mut all);
    assert!(all.len() > 5, "{what}: {all:?}");
    let mut missing = Vec::new();
    for (path, group) in &all {
        let name = path.rsplit('.').next().expect("a key");
        if ![" ", "{", "\n"].iter().any(|before| dts.contains(&format!("{before}{name}?:"))) {
            missing.push(format!("index.d.ts lacks `{name}?:` ({what} `{path}`)"));
        }
        // The docs name a nested option by its path below its table's heading (`pgr.anchors`).
        let parts: Vec<&str> = path.split('.').collect();
        // A group is documented by its members' rows.
        if !group && !(0..parts.len()).any(|i| api.contains(&format!("`{}`", parts[i..].join(".")))) {
            missing.push(format!("docs/api.md lacks `{path}` ({what})"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn engine_options_are_typed_and_documented() {
    check("engine option", serde_json::to_value(webrag::config::Config::default()).expect("json"));
}

#[test]
fn ask_options_are_typed_and_documented() {
    check("ask option", serde_json::to_value(webrag::ask::pipeline::PipelineParams::default()).expect("json"));
}
