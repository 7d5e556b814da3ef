#![cfg(not(target_arch = "wasm32"))]
//! Frozen stores of every released schema (tests/fixtures/store-schema-{1..5}.json, written by
//! the CLI of the last commit of each schema; tests/fixtures/README.md) open with this build and
//! are migrated: schema 1 gets its pseudo-graph, every one records the current schema, and all
//! answer the same queries with the same chunks (the documents are the same three files). The
//! schema-5 store holds index segments, and opens lazily from them with the same answers.
use crate::common;

use webrag::config::Config;
use webrag::engine::{Engine, LazyEngine, SearchOptions};
use webrag::native::FileStore;
use webrag::ports::{FixedClock, Store};
use webrag::schema::SCHEMA_VERSION;
use webrag::types::SearchMode;

fn fixture(schema: u32) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("webrag-fixture-{}-{schema}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let to = dir.join("kb.json");
    std::fs::copy(format!("{}/tests/fixtures/store-schema-{schema}.json", env!("CARGO_MANIFEST_DIR")), &to).unwrap();
    to
}

async fn open(path: &std::path::Path) -> Engine<FileStore, &'static webrag::embed::CpuEmbedder> {
    Engine::open(FileStore::open(path).await.unwrap(), common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("open")
}

const QUERIES: [(&str, &str); 3] = [
    ("When did Apollo 11 land on the Moon?", "moon.txt"),
    ("which language has a borrow checker", "rust.md"),
    ("what temperature to brew green tea", "tea.md"),
];

async fn answers(eng: &Engine<FileStore, &'static webrag::embed::CpuEmbedder>, modes: &[SearchMode]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (q, want) in QUERIES {
        for &m in modes {
            let hits = eng.search(q, &SearchOptions { literal: true, ..SearchOptions::new(5, m) }).await.unwrap();
            assert!(hits.first().is_some_and(|h| h.doc_id.ends_with(want)), "{q:?} {m:?}: {:?}", hits.first().map(|h| &h.doc_id));
            out.push(hits.iter().map(|h| h.chunk_id.clone()).collect());
        }
    }
    out
}

#[test]
fn every_released_schema_opens_and_is_migrated() {
    pollster::block_on(async {
        let flat = [SearchMode::Bm25, SearchMode::Dense, SearchMode::Hybrid];
        let mut first: Option<Vec<Vec<String>>> = None;
        for schema in 1..=SCHEMA_VERSION {
            let path = fixture(schema);
            let eng = open(&path).await;
            let s = eng.stats();
            assert_eq!((s.documents, s.chunks), (3, 5), "schema {schema}");
            let got = answers(&eng, &flat).await;
            match &first {
                None => first = Some(got),
                Some(f) => assert_eq!(&got, f, "schema {schema} answers as schema 1"),
            }
            // The graph: stored since schema 2, built by the migration for schema 1.
            assert!(eng.graph().counts()[0] >= 3, "schema {schema}: a topic per document");
            answers(&eng, &[SearchMode::Graph, SearchMode::HybridGraph]).await;
            // The store now names the current schema, and reopening it is a plain open.
            let meta = eng.store().load().await.unwrap().meta;
            assert!(meta.iter().any(|m| m.id == "schema" && m.value == SCHEMA_VERSION.to_string()), "schema {schema}: {meta:?}");
            let dump = eng.graph().dump();
            drop(eng);
            let again = open(&path).await;
            assert_eq!(again.graph().dump(), dump, "schema {schema}: the migrated graph was stored");
            assert_eq!(answers(&again, &flat).await, *first.as_ref().unwrap());
            std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
        }
    });
}

#[test]
fn schema_5_segments_open_lazily_with_the_same_answers() {
    pollster::block_on(async {
        let flat = [SearchMode::Bm25, SearchMode::Dense, SearchMode::Hybrid];
        let path = fixture(5);
        let want = answers(&open(&path).await, &flat).await;
        let mut lz = LazyEngine::open(FileStore::open(&path).await.unwrap(), common::model(), Config::default(), Box::new(FixedClock(1.0)))
            .await
            .unwrap();
        assert!(lz.is_lazy(), "the fixture's segments are read");
        let mut got: Vec<Vec<String>> = Vec::new();
        for (q, _) in QUERIES {
            for &m in &flat {
                got.push(
                    lz.search(q, &SearchOptions { literal: true, ..SearchOptions::new(5, m) })
                        .await
                        .unwrap()
                        .iter()
                        .map(|h| h.chunk_id.clone())
                        .collect(),
                );
            }
        }
        assert_eq!(got, want);
        assert!(lz.is_lazy());
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    });
}
