#![cfg(not(target_arch = "wasm32"))]
//! The option tables of docs/api.md and the option interfaces of `index.d.ts` are generated from
//! the components' `DOCS` tables (`webrag surface`, src/native/surface.rs): the committed files
//! must be what the generator writes, every serde field of an options struct must have its row,
//! and each row's default must be the one the struct's `Default` gives.
use serde_json::Value as Json;
use webrag::options::{Doc, Value};

#[test]
fn the_generated_blocks_of_api_md_index_d_ts_and_static_d_ts_are_current() {
    let stale = webrag::native::surface::stale(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))).expect("every block is there");
    let names: Vec<String> = stale.iter().map(|(p, _)| p.display().to_string()).collect();
    assert!(names.is_empty(), "stale: {names:?}; run `./webrag.sh surface`");
}

#[test]
fn a_missing_block_is_an_error_naming_it() {
    use webrag::native::surface::{Target, regenerate};
    let e = regenerate(Target::ApiMarkdown, "# no blocks\n").unwrap_err();
    assert!(e.contains("docs/api.md") && e.contains("engine-options"), "{e}");
    let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/web/js/index.d.ts")).expect("index.d.ts");
    // A hand edit inside a block is undone by the generator.
    let edited = text.replace("Hits returned. Default 10", "Hits returned. Default 20");
    assert_ne!(edited, text);
    assert_eq!(regenerate(Target::IndexTypes, &edited).expect("blocks"), text);
}

/// What a default written in words is as JSON, where it is a literal (`'plus1'`, `true`, 20,000);
/// `None` where the words describe it (`the preset's`).
fn literal(words: &str) -> Option<Json> {
    let w = words.trim_matches('`');
    match w {
        "none" => Some(Json::Null),
        "required" => Some(Json::String(String::new())),
        "{}" => Some(serde_json::json!({})),
        "[]" => Some(serde_json::json!([])),
        _ if w.starts_with('\'') && w.ends_with('\'') && w.len() > 1 => Some(Json::String(w[1..w.len() - 1].into())),
        _ => w.replace(',', "").parse::<f64>().ok().map(|x| serde_json::json!(x)),
    }
}

fn same(a: &Json, b: &Json) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-6 * x.abs().max(1.0),
        _ => a == b,
    }
}

/// Checks `docs` against `defaults` (the serialized `Default` of the struct they describe).
fn check(what: &str, docs: &[Doc], defaults: &Json, unserialized: &[&str], problems: &mut Vec<String>) {
    let Json::Object(fields) = defaults else { return problems.push(format!("{what}: not an object")) };
    for key in fields.keys() {
        if !docs.iter().any(|d| d.name == key) {
            problems.push(format!("{what}.{key}: a serde field without a row in its DOCS table"));
        }
    }
    for d in docs {
        let path = format!("{what}.{}", d.name);
        let Some(v) = fields.get(d.name) else {
            if !unserialized.contains(&d.name) {
                problems.push(format!("{path}: a row without a serde field"));
            }
            continue;
        };
        let expected = match d.value {
            Value::Number(r) => Some(serde_json::json!(r.default)),
            Value::NumberDefault(..) => Some(Json::Null),
            Value::Flag(b) => Some(Json::Bool(b)),
            Value::Other { default, .. } => literal(default),
            Value::Group(members) => {
                check(&path, members, v, &[], problems);
                None
            }
            Value::Table { .. } => v.is_object().then_some(v.clone()),
        };
        if let Some(e) = expected.filter(|e| !same(e, v)) {
            problems.push(format!("{path}: the row says default {e}, Default gives {v}"));
        }
    }
}

#[test]
fn every_option_has_one_row_whose_default_is_the_structs() {
    let json = |v: serde_json::Result<Json>| v.expect("json");
    let engine = json(serde_json::to_value(webrag::config::Config::default()));
    let ask = json(serde_json::to_value(webrag::ask::pipeline::PipelineParams::default()));
    let mut problems = Vec::new();
    check("options", webrag::config::Config::DOCS, &engine, &[], &mut problems);
    check("graph", webrag::graph::GraphParams::DOCS, &engine["graph"], &[], &mut problems);
    check("ann", webrag::index::ann::AnnParams::DOCS, &engine["ann"], &[], &mut problems);
    check("ask", webrag::ask::pipeline::PipelineParams::DOCS, &ask, &[], &mut problems);
    check("decompose", webrag::ask::DecomposeParams::DOCS, &ask["decompose"], &[], &mut problems);
    check(
        "search",
        webrag::engine::SearchOptions::DOCS,
        &json(serde_json::to_value(webrag::engine::SearchOptions::default())),
        &[],
        &mut problems,
    );
    // `apiKey` is never serialised (it stays in the worker's memory).
    check("llm", webrag::llm::LlmConfig::DOCS, &json(serde_json::to_value(webrag::llm::LlmConfig::default())), &["apiKey"], &mut problems);
    for (what, docs, defaults) in [
        (
            "forwardSummaries",
            webrag::ask::enhance::SummaryParams::DOCS,
            serde_json::to_value(webrag::ask::enhance::SummaryParams::default()),
        ),
        ("tags", webrag::ask::enhance::TaggingParams::DOCS, serde_json::to_value(webrag::ask::enhance::TaggingParams::default())),
        ("atomize", webrag::ask::ingest::AtomizeParams::DOCS, serde_json::to_value(webrag::ask::ingest::AtomizeParams::default())),
        ("mindMaps", webrag::ask::ingest::MindMapParams::DOCS, serde_json::to_value(webrag::ask::ingest::MindMapParams::default())),
    ] {
        check(what, docs, &json(defaults), &[], &mut problems);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The codes `static.js` raises are the table's (`error::SNAPSHOT_CODES`), each of them raised,
/// so the generated `SnapshotError` of `static.d.ts` and the docs name exactly what the loader does.
#[test]
fn the_loader_raises_exactly_the_snapshot_error_codes() {
    let js = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/web/js/static.js")).expect("static.js");
    let mut raised: Vec<&str> =
        js.split('\'').filter(|s| s.starts_with("SNAPSHOT_") && s.chars().all(|c| c.is_ascii_uppercase() || c == '_')).collect();
    raised.sort();
    raised.dedup();
    let mut table: Vec<&str> = webrag::error::SNAPSHOT_CODES.iter().map(|c| c.code).collect();
    table.sort();
    assert!(raised.len() >= 5, "{raised:?}");
    assert_eq!(raised, table, "static.js raises {raised:?}, error::SNAPSHOT_CODES lists {table:?}");
}
