//! `webrag/static`'s page ranking pinned from the Rust side: every search stage of
//! `tests/e2e/static-rank.fixture.json` (hand-written inputs: fragments, lists, queries) ranked
//! by `webrag::native::page_rank` must give the results in `tests/e2e/static-rank.expected.json`
//! (pages, shown chunks, sections, the retrievers that found them, graph paths, scores), which
//! this test writes, and `tests/e2e/static-rank.test.mjs` checks the page's `static-rank.js`
//! against the same file: a change to either side's ranking alone fails one of the two. After a
//! deliberate change to both (or a new stage in the fixture), write the file from this side and
//! say why in the commit:
//!   WEBRAG_WRITE_FIXTURE=1 cargo test --test suite static_rank::
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;
use webrag::native::page_rank::{Fragment, Fusion, Group, Lists, Ranked, Stage, rank};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Fixture {
    fusion: Fusion,
    fragment_size: u32,
    k: usize,
    sections: usize,
    fragments: HashMap<u32, Fragment>,
    scenarios: Vec<Scenario>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Scenario {
    name: String,
    query: String,
    group: Group,
    lists: Lists,
    #[serde(default)]
    scores: Option<HashMap<u32, f64>>,
    #[serde(default)]
    paths: Option<HashMap<u32, Value>>,
    #[serde(default)]
    no_pages_file: bool,
    #[serde(default)]
    unreadable: Vec<u32>,
}

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/e2e").join(name)
}

fn ranked(f: &Fixture, s: &Scenario) -> Vec<Ranked> {
    let fragment = |c: u32| if s.unreadable.contains(&c) { None } else { f.fragments.get(&c) };
    let pages = |c: u32| f.fragments.get(&c).and_then(|x| x.page);
    rank(&Stage {
        lists: &s.lists,
        scores: s.scores.as_ref(),
        paths: s.paths.as_ref(),
        group: s.group,
        pages: if s.no_pages_file { None } else { Some(&pages) },
        fragment: &fragment,
        query: &s.query,
        k: f.k,
        sections: f.sections,
        fusion: &f.fusion,
        fragment_size: f.fragment_size,
    })
}

#[test]
fn the_rust_page_ranking_gives_the_fixtures_results() {
    let fixture: Fixture = serde_json::from_str(&std::fs::read_to_string(path("static-rank.fixture.json")).unwrap()).unwrap();
    assert!(fixture.scenarios.len() >= 5, "the fixture's stages are read");
    let got: BTreeMap<&str, Vec<Ranked>> = fixture.scenarios.iter().map(|s| (s.name.as_str(), ranked(&fixture, s))).collect();
    assert_eq!(got.len(), fixture.scenarios.len(), "stage names are distinct");
    if std::env::var_os("WEBRAG_WRITE_FIXTURE").is_some() {
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, serde_json::ser::PrettyFormatter::with_indent(b" "));
        serde::Serialize::serialize(&got, &mut ser).unwrap();
        out.push(b'\n');
        std::fs::write(path("static-rank.expected.json"), out).unwrap();
        return;
    }
    let expected: BTreeMap<String, Vec<Ranked>> =
        serde_json::from_str(&std::fs::read_to_string(path("static-rank.expected.json")).unwrap()).unwrap();
    assert_eq!(
        expected.keys().map(String::as_str).collect::<Vec<_>>(),
        got.keys().copied().collect::<Vec<_>>(),
        "the expected results are of the fixture's stages (WEBRAG_WRITE_FIXTURE=1 writes them)"
    );
    for (name, got) in &got {
        let want = &expected[*name];
        let shape = |r: &[Ranked]| r.iter().map(|x| Ranked { score: 0.0, ..x.clone() }).collect::<Vec<_>>();
        assert_eq!(shape(got), shape(want), "{name}: results");
        for (i, (g, e)) in got.iter().zip(want).enumerate() {
            assert!((g.score - e.score).abs() <= 1e-6, "{name} #{}: score {} vs {}", i + 1, g.score, e.score);
        }
    }
}
