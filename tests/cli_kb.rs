//! The native CLI on a knowledge-base file (the real binary and model): `index`, then `enrich`
//! against the scripted OpenAI-compatible server on 127.0.0.1 (atomic questions and LLM mind
//! maps, the same core driver as the page's `enrich`), then `export` → `import` into another file
//! answering every search mode exactly as the original; a file that is not a knowledge-base file
//! is refused with its code and the target is left as it was.
#![cfg(not(target_arch = "wasm32"))]
use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn webrag(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webrag")).args(args).output().expect("run webrag")
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn searches(db: &Path) -> Vec<String> {
    let db = db.to_str().unwrap();
    let mut out = Vec::new();
    for q in ["When do owls hunt?", "wading birds", "kestrel voles"] {
        for mode in ["bm25", "dense", "hybrid", "graph", "hybrid+graph", "atomic"] {
            out.push(ok(webrag(&["search", q, "--db", db, "--mode", mode, "--literal"])));
        }
    }
    out
}

/// A fresh temporary folder `webrag-{name}-{pid}` with `notes/{file}` for each of `notes`.
fn with_notes(name: &str, notes: &[(&str, &str)]) -> PathBuf {
    let dir: PathBuf = std::env::temp_dir().join(format!("webrag-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("notes")).unwrap();
    for (file, text) in notes {
        std::fs::write(dir.join("notes").join(file), text).unwrap();
    }
    dir
}

#[test]
fn enrich_export_and_import_from_the_command_line() {
    let dir = with_notes(
        "cli-kb",
        &[
            ("birds.md", "# Birds\n\n## Owls\n\nOwls hunt at night with silent flight.\n\n## Herons\n\nHerons wade in shallow water.\n"),
            ("kestrel.md", "# Kestrel\n\nThe kestrel hovers before it dives on voles.\n"),
        ],
    );
    let (db, copy, file) = (dir.join("kb.json"), dir.join("copy.json"), dir.join("notes.webrag-kb.gz"));
    let s = |p: &Path| p.to_str().unwrap().to_string();
    ok(webrag(&["index", &s(&dir.join("notes")), "--db", &s(&db)]));

    let server = common::llm_server::LlmServer::start();
    server.rules(serde_json::json!([
        { "match": "Task: atomize", "reply": { "content": "{\"questions\": [\"When do owls hunt?\", \"What does the kestrel eat?\"]}" } },
        { "match": "Task: fact-check items", "reply": { "content": "{\"items\": [\"Owls hunt at night with silent flight.\", \"Herons wade in shallow water.\"]}" } },
        { "match": "Task: mind map", "reply": { "content": "{\"Birds\": {\"Night hunters\": \"Owls hunt at night with silent flight.\", \"Waders\": \"Herons wade in shallow water.\"}}" } }
    ]));
    let report: serde_json::Value =
        serde_json::from_str(&ok(webrag(&["enrich", "--db", &s(&db), "--llm-url", &server.base_url(), "--llm-model", "scripted"])))
            .unwrap();
    assert_eq!(report["atomize"]["chunks"], 3, "{report}");
    assert_eq!(report["atomize"]["questions"], 6, "{report}");
    assert_eq!(
        report["mindMaps"]["documents"].as_u64().unwrap() + report["mindMaps"]["fallbacks"].as_array().unwrap().len() as u64,
        2,
        "{report}"
    );
    // Resumable: a second run finds nothing left to atomize.
    let again: serde_json::Value =
        serde_json::from_str(&ok(webrag(&["enrich", "--db", &s(&db), "--llm-url", &server.base_url(), "--no-mind-maps"]))).unwrap();
    assert_eq!((again["atomize"]["chunks"].as_u64(), again["mindMaps"].is_null()), (Some(0), true), "{again}");
    let atomic = ok(webrag(&["search", "When do owls hunt?", "--db", &s(&db), "--mode", "atomic", "--literal"]));
    assert!(atomic.lines().next().is_some_and(|l| l.contains("Birds > Owls")), "{atomic}");

    let want = searches(&db);
    ok(webrag(&["export", &s(&file), "--db", &s(&db)]));
    ok(webrag(&["index", &s(&dir.join("notes/kestrel.md")), "--db", &s(&copy)])); // something to replace
    ok(webrag(&["import", &s(&file), "--db", &s(&copy)]));
    assert_eq!(searches(&copy), want, "the imported knowledge base answers as the original");

    // Not a knowledge-base file: refused with its code, the target unchanged.
    let before = std::fs::read(&copy).unwrap();
    std::fs::write(dir.join("bad.gz"), b"not gzip").unwrap();
    let o = webrag(&["import", &s(&dir.join("bad.gz")), "--db", &s(&copy)]);
    assert!(
        !o.status.success() && String::from_utf8_lossy(&o.stderr).contains("KB_FILE_INVALID"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `webrag enrich --forward-summaries --tags --vocabulary …` and `webrag ask` from the command
/// line against the scripted server: the summaries and tags are stored (a tag filters `search`),
/// and `ask` prints its result as JSON — an answer its sources hold, cited — and with `--tag`
/// stays within the tagged documents.
#[test]
fn enrich_stages_and_ask_from_the_command_line() {
    let dir = with_notes(
        "cli-ask",
        &[
            (
                "acme.md",
                "# Acme Corporation\n\nAcme Corporation was founded by Jane Roe in 1931.\n\n## Later\n\nIt moved to Lyon in 1950.\n",
            ),
            ("tea.md", "# Green tea\n\nGreen tea is steamed soon after picking.\n"),
        ],
    );
    let db = dir.join("kb.json");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    ok(webrag(&["index", &s(&dir.join("notes")), "--db", &s(&db)]));
    let server = common::llm_server::LlmServer::start();
    server.rules(serde_json::json!([
        { "match": "Task: forward summary", "reply": { "content": "{\"summary\": \"Acme Corporation was founded by Jane Roe.\"}" } },
        { "match": "Task: tags", "reply": { "content": "{\"tags\": [\"business\", \"not in the vocabulary\"]}" } },
        { "match": "Task: answer", "reply": { "content": "Jane Roe founded Acme Corporation in 1931 [S1].\nConfidence: high" } }
    ]));
    let url = server.base_url();
    let report: serde_json::Value = serde_json::from_str(&ok(webrag(&[
        "enrich",
        "--db",
        &s(&db),
        "--llm-url",
        &url,
        "--no-atomize",
        "--no-mind-maps",
        "--forward-summaries",
        "--tags",
        "--vocabulary",
        "business",
        "--vocabulary",
        "travel",
    ])))
    .unwrap();
    assert_eq!(report["forwardSummaries"]["chunks"], 1, "one chunk follows another: {report}");
    assert_eq!(report["tags"]["documents"], 2, "{report}");
    assert_eq!(report["tags"]["tags"], 2, "only the vocabulary's tag, once per document: {report}");
    let tagged = ok(webrag(&["search", "Lyon", "--db", &s(&db), "--mode", "bm25", "--tag", "business"]));
    assert!(tagged.contains("Acme"), "{tagged}");
    let none = ok(webrag(&["search", "Lyon", "--db", &s(&db), "--mode", "bm25", "--tag", "travel"]));
    assert!(!none.contains("Acme"), "{none}");

    let ask = |more: &[&str]| -> serde_json::Value {
        let mut argv = vec!["ask", "Who founded Acme Corporation?", "--preset", "light", "--llm-url", &url];
        let db = s(&db);
        argv.extend(["--db", &db]);
        argv.extend(more);
        serde_json::from_str(&ok(webrag(&argv))).unwrap()
    };
    let r = ask(&[]);
    let a = &r["answer"];
    assert_eq!(a["known"], true, "{r}");
    assert!(a["text"].as_str().unwrap().contains("Jane Roe"), "{r}");
    assert!(a["citations"][0].as_str().unwrap().contains("acme.md#"), "{r}");
    assert_eq!(a["support"], 1.0, "every word of the answer is in its source: {r}");
    // Scoped to a tag no document has: nothing to read, so "I don't know."
    let r = ask(&["--tag", "nowhere"]);
    assert!(r["context"].as_array().unwrap().is_empty(), "{r}");
    assert_eq!(r["answer"]["known"], false, "{r}");
    std::fs::remove_dir_all(&dir).unwrap();
}
