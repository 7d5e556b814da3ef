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

/// Each numeric option's default and range, as its component defines them once
/// ([`webrag::options::Range`]): the component's `Default` has that default, and docs/api.md's
/// row and index.d.ts's comment for the option state both the default and the range.
#[test]
fn defaults_and_ranges_are_defined_once_and_documented_as_defined() {
    use webrag::options::Range;
    let engine = serde_json::to_value(webrag::config::Config::default()).expect("json");
    let ask = serde_json::to_value(webrag::ask::pipeline::PipelineParams::default()).expect("json");
    let enrich = serde_json::json!({
        "atomize": webrag::ask::ingest::AtomizeParams::default(),
        "mindMaps": webrag::ask::ingest::MindMapParams::default(),
    });
    let groups: [(&str, &Value, &[Range]); 8] = [
        ("", &engine, webrag::config::Config::OPTIONS),
        ("graph", &engine, webrag::graph::GraphParams::OPTIONS),
        ("graph.pgr", &engine, webrag::graph::pgr::PgrParams::OPTIONS),
        ("ann", &engine, webrag::index::ann::AnnParams::OPTIONS),
        ("", &ask, webrag::ask::pipeline::PipelineParams::OPTIONS),
        ("decompose", &ask, webrag::ask::DecomposeParams::OPTIONS),
        ("atomize", &enrich, webrag::ask::ingest::AtomizeParams::OPTIONS),
        ("mindMaps", &enrich, webrag::ask::ingest::MindMapParams::OPTIONS),
    ];
    let (dts, api) = (read("src/web/js/index.d.ts"), read("docs/api.md").replace(',', ""));
    let mut problems = Vec::new();
    let mut n = 0;
    for (group, defaults, ranges) in groups {
        for r in ranges {
            n += 1;
            let path = if group.is_empty() { r.name.to_string() } else { format!("{group}.{}", r.name) };
            let pointer = format!("/{}", path.replace('.', "/"));
            match defaults.pointer(&pointer) {
                Some(Value::Null) => {} // decided at run time (embedBatch: the embedder's own)
                Some(v) if v.as_f64().is_some_and(|x| (x - r.default).abs() <= 1e-6 * r.default.abs().max(1.0)) => {}
                other => problems.push(format!("{path}: Default gives {other:?}, the range says {}", r.default)),
            }
            let (default, range) = (r.default.to_string(), format!("{}..={}", r.min, r.max));
            // docs/api.md: the option's table row (named by its path below the table's heading).
            let suffix = path.rsplit_once("graph.").map(|(_, s)| s.to_string()).unwrap_or(path.clone());
            let row = api.lines().find(|l| l.starts_with(&format!("| `{}`", r.name)) || l.starts_with(&format!("| `{suffix}`")));
            match row {
                Some(row) if row.contains(&range) && row.contains(&default) => {}
                _ => problems.push(format!("docs/api.md: the row of `{path}` should state default {default} and range {range}: {row:?}")),
            }
            // index.d.ts: the doc comment just before `name?:`.
            let comment = dts.find(&format!(" */ {}?:", r.name)).and_then(|end| dts[..end].rfind("/** ").map(|start| &dts[start + 4..end]));
            match comment {
                Some(c) if c.contains(&range) && c.contains(&default) => {}
                _ => problems.push(format!(
                    "index.d.ts: the comment of `{}?:` should state default {default} and range {range}: {comment:?}",
                    r.name
                )),
            }
        }
    }
    assert!(n > 30, "{n} ranges");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
