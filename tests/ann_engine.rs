#![cfg(not(target_arch = "wasm32"))]
//! HNSW segments in the engine (issue 4, item 7), with the real model on 40 HotpotQA passages and
//! `sealAt` 16 so every collection (chunks, topics, facts; atomic questions too) seals into segments:
//! maintenance seals and writes segments to the `ann` store, searches agree with the exact scan,
//! a reopen attaches the stored segments instead of rebuilding them, removals become tombstones
//! (derived again after a reopen) and a forced maintenance purges them, and an unreadable segment
//! neither blocks opening nor loses anything.
use crate::common;

use std::collections::HashSet;

use webrag::config::Config;
use webrag::embed::Embedder;
use webrag::engine::{Engine, Sealed, SearchOptions};
use webrag::index::ann::AnnParams;
use webrag::ports::{Collection, MemoryStore, NoProgress, Op, Record, Store};
use webrag::schema::AnnSegmentRecord;
use webrag::types::{DocumentInput, Format, SearchMode};

/// `n` HotpotQA passages (`../shared`), else `n` paragraphs of this repository's docs.
fn passages(n: usize) -> Vec<DocumentInput> {
    let titled: Vec<(String, String)> =
        match common::shared_or("data/hotpotqa/train100_corpus.json", "paragraphs of the repository's docs instead") {
            Some(path) => {
                let corpus: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_slice(&std::fs::read(&path).expect("corpus")).expect("json");
                corpus
                    .iter()
                    .take(n)
                    .map(|(title, sents)| {
                        (title.clone(), sents.as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect::<String>())
                    })
                    .collect()
            }
            None => common::own_passages(n),
        };
    titled
        .into_iter()
        .enumerate()
        .map(|(i, (title, text))| DocumentInput {
            id: format!("p{i}"),
            title: Some(title),
            text,
            format: Format::Text,
            ..Default::default()
        })
        .collect()
}

fn config() -> Config {
    Config { ann: AnnParams { seal_at: 16, ..Default::default() }, ..Config::default() }
}

/// `(fresh vectors, sealed segments, tombstones)` of the chunks', topics' and facts' vectors.
fn ann_shape<S: Store, E: Embedder>(e: &Engine<S, E>) -> [(usize, usize, usize); 3] {
    let a = e.stats().ann;
    [a.chunks, a.topics, a.facts].map(|[f, s, t]| (f, s, t))
}

async fn open(store: &MemoryStore) -> Engine<&MemoryStore, &'static webrag::embed::CpuEmbedder> {
    Engine::open(store, common::model(), config(), Box::new(webrag::ports::FixedClock(1.0))).await.expect("open")
}

const QUERIES: [&str; 4] = ["Which band released the album?", "Where was the actor born?", "American football player", "river in Europe"];

async fn dense_ids(e: &Engine<&MemoryStore, &'static webrag::embed::CpuEmbedder>, mode: SearchMode) -> Vec<Vec<String>> {
    dense_ids_of(e, mode).await
}

async fn dense_ids_of<S: Store>(e: &Engine<S, &'static webrag::embed::CpuEmbedder>, mode: SearchMode) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for q in QUERIES {
        let hits = e.search(q, &SearchOptions { literal: true, ..SearchOptions::new(10, mode) }).await.expect("search");
        out.push(hits.into_iter().map(|h| h.chunk_id).collect());
    }
    out
}

fn overlap(a: &[Vec<String>], b: &[Vec<String>]) -> f64 {
    let (mut hit, mut all) = (0, 0);
    for (x, y) in a.iter().zip(b) {
        all += x.len();
        hit += x.iter().filter(|id| y.contains(id)).count();
    }
    hit as f64 / all.max(1) as f64
}

#[test]
fn segments_seal_persist_and_reattach() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut e = open(&store).await;
        // Five adds, each followed by the idle-time maintenance the worker runs.
        let mut steps = Vec::new();
        let docs = passages(40);
        for part in docs.chunks(8) {
            e.add(part.to_vec(), &mut NoProgress).await.expect("add");
            steps.extend(e.maintain_all(false).await.expect("maintain"));
        }
        let exact = {
            let mut x = Engine::open(MemoryStore::new(), common::model(), Config::default(), Box::new(webrag::ports::FixedClock(1.0)))
                .await
                .unwrap();
            x.add(docs.clone(), &mut NoProgress).await.unwrap();
            (dense_ids_of(&x, SearchMode::Dense).await, dense_ids_of(&x, SearchMode::Graph).await)
        };
        let (exact, exact_graph) = exact;
        let sealed: HashSet<Sealed> = steps.iter().map(|s| s.collection).collect();
        assert_eq!(sealed, HashSet::from([Sealed::Chunks, Sealed::Topics, Sealed::Facts]), "{steps:?}");
        assert!(steps.iter().any(|s| s.merged > 0), "tiers merge: {steps:?}");
        let shape = ann_shape(&e);
        for (name, (fresh, segments, dead)) in ["chunks", "topics", "facts"].iter().zip(shape) {
            assert!(fresh < 16 && segments >= 1 && dead == 0, "{name}: {fresh} fresh, {segments} segments, {dead} dead");
        }
        let stored = store.load().await.unwrap().ann;
        assert_eq!(stored.len(), shape.iter().map(|s| s.1).sum::<usize>(), "one ann record per live segment");
        let approx = dense_ids(&e, SearchMode::Dense).await;
        let approx_graph = dense_ids(&e, SearchMode::Graph).await;
        let (d, g) = (overlap(&exact, &approx), overlap(&exact_graph, &approx_graph));
        println!("top-10 overlap with the exact scan after sealing: dense {d:.3}, graph {g:.3}");
        assert!(d >= 0.95 && g >= 0.95, "dense {d}, graph {g}");

        // Reopen: the segments are attached, not rebuilt; the same results.
        drop(e);
        let mut e = open(&store).await;
        assert_eq!(ann_shape(&e), shape, "the reopened index has the same fresh buffers and segments");
        assert!(!e.needs_maintenance());
        assert_eq!(dense_ids(&e, SearchMode::Dense).await, approx);
        assert_eq!(dense_ids(&e, SearchMode::Graph).await, approx_graph);

        // Removal: tombstones, skipped by search, derived again after a reopen, purged by force.
        let gone: Vec<String> = (0..10).map(|i| format!("p{i}")).collect();
        e.remove(&gone).await.expect("remove");
        let dead_after_remove = ann_shape(&e);
        assert!(dead_after_remove.iter().all(|s| s.2 > 0), "{dead_after_remove:?}");
        let is_gone = |id: &str| gone.iter().any(|g| id.starts_with(&format!("{g}#")));
        for ids in dense_ids(&e, SearchMode::Dense).await.iter().chain(&dense_ids(&e, SearchMode::Graph).await) {
            assert!(ids.iter().all(|id| !is_gone(id)), "a removed chunk was returned: {ids:?}");
        }
        drop(e);
        let mut e = open(&store).await;
        assert_eq!(ann_shape(&e), dead_after_remove, "tombstones are derived from the vector records at open");
        e.maintain_all(true).await.expect("purge");
        assert!(ann_shape(&e).iter().all(|s| s.0 == 0 && s.2 == 0), "{:?}", ann_shape(&e));
        let c = store.load().await.unwrap();
        for r in &c.ann {
            assert!(r.ids.iter().all(|id| !is_gone(id)), "{} still names a removed id", r.id);
        }
        drop(e);
        let e = open(&store).await;
        assert!(ann_shape(&e).iter().all(|s| s.0 == 0 && s.2 == 0));
    })
}

#[test]
fn unreadable_segment_is_dropped_without_loss() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut e = open(&store).await;
        e.add(passages(12), &mut NoProgress).await.expect("add");
        e.maintain_all(true).await.expect("seal");
        let before = dense_ids(&e, SearchMode::Dense).await;
        drop(e);
        let mut c = store.load().await.unwrap().ann;
        let chunks = c.iter_mut().find(|r| r.collection == "chunks").expect("a chunk segment");
        chunks.data.truncate(chunks.data.len() / 2);
        let broken = chunks.id.clone();
        let junk = AnnSegmentRecord {
            id: "nonsense/0000000000".into(),
            collection: "nonsense".into(),
            seq: 0,
            ids: vec![],
            data: vec![1, 2, 3],
            format: 1,
        };
        store.commit(vec![Op::Put(Record::Ann(chunks.clone())), Op::Put(Record::Ann(junk))]).await.unwrap();
        let mut e = open(&store).await;
        let (fresh, segments, _) = ann_shape(&e)[0];
        assert!(fresh > 0 && segments == 0, "the truncated segment's vectors are searched exactly");
        assert_eq!(overlap(&before, &dense_ids(&e, SearchMode::Dense).await), 1.0, "nothing lost");
        assert!(e.needs_maintenance());
        e.maintain(false).await.expect("maintain");
        assert!(store.get(Collection::Ann, &broken).await.unwrap().is_none(), "the unreadable record is deleted");
        assert!(store.get(Collection::Ann, "nonsense/0000000000").await.unwrap().is_none());
    })
}

#[test]
fn corrupted_segment_bytes_never_panic() {
    // Every byte of a stored segment changed in turn (a foreign or damaged record): the open
    // either attaches it or drops it, and a dense search answers from the same vectors.
    use rand::{Rng, SeedableRng};
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut e = open(&store).await;
        e.add(passages(12), &mut NoProgress).await.expect("add");
        e.maintain_all(true).await.expect("seal");
        drop(e);
        let good = store.load().await.unwrap().ann.into_iter().find(|r| r.collection == "chunks").expect("a chunk segment");
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mut dropped = 0;
        for i in 0..good.data.len().min(400) {
            let mut bad = good.clone();
            let at = if i < 200 { i } else { rng.random_range(0..bad.data.len()) };
            bad.data[at] = bad.data[at].wrapping_add(rng.random_range(1..=255));
            store.commit(vec![Op::Put(Record::Ann(bad))]).await.unwrap();
            let e = open(&store).await;
            dropped += usize::from(ann_shape(&e)[0].1 == 0);
            let hits = dense_ids(&e, SearchMode::Dense).await;
            assert!(!hits.is_empty(), "byte {at}: the search answers");
        }
        assert!(dropped > 0, "some corruptions were caught and dropped");
    })
}

#[test]
fn bad_ann_options_are_typed_errors() {
    pollster::block_on(async {
        for (ann, field) in [
            (AnnParams { seal_at: 0, ..Default::default() }, "ann.sealAt"),
            (AnnParams { ef_search: 0, ..Default::default() }, "ann.efSearch"),
            (AnnParams { ef_construction: 5000, ..Default::default() }, "ann.efConstruction"),
        ] {
            let store = MemoryStore::new();
            let cfg = Config { ann, ..Config::default() };
            let err = Engine::open(&store, common::model(), cfg, Box::new(webrag::ports::FixedClock(1.0))).await.err().expect("rejected");
            assert_eq!(err.code(), "INVALID_OPTION");
            assert!(err.to_string().contains(field), "{err}");
        }
    })
}

/// Atomic questions are a vector collection like the others: they seal into `questions`
/// segments, a reopen attaches those segments (nothing left in the fresh buffer) and atomic
/// search finds the same questions before and after.
#[test]
fn question_segments_seal_persist_and_reattach() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut e = open(&store).await;
        e.add(passages(12), &mut NoProgress).await.expect("add");
        let chunks = e.ask_store().unatomized(e.corpus());
        let items: Vec<(String, Vec<String>)> = chunks
            .iter()
            .map(|c| {
                let text = e.corpus().chunk(c).expect("chunk").text.clone();
                let words: Vec<&str> = text.split_whitespace().collect();
                (
                    c.clone(),
                    vec![
                        format!("What is said about {}?", words[..words.len().min(6)].join(" ")),
                        format!("Which {}?", words[words.len().saturating_sub(5)..].join(" ")),
                    ],
                )
            })
            .collect();
        let n = e.enrichment().put_questions(items).await.expect("questions");
        assert!(n >= 16, "enough questions to seal ({n})");
        let steps = e.maintain_all(true).await.expect("maintain");
        assert!(steps.iter().any(|s| s.collection == Sealed::Questions), "{steps:?}");
        let [_, sealed, _] = e.stats().ann.questions;
        assert!(sealed >= 1);
        let stored: Vec<AnnSegmentRecord> = store.load().await.unwrap().ann.into_iter().filter(|r| r.collection == "questions").collect();
        assert_eq!(stored.len(), sealed);
        assert!(stored.iter().all(|r| r.ids.iter().all(|id| id.contains('?'))));
        let q = e.embedder().embed(&["Which band released the album?"]).await.unwrap().remove(0);
        let before: Vec<(String, String)> =
            e.ask_store().atomic_search(&q, 10, 0.0).into_iter().map(|h| (h.chunk_id, h.question)).collect();
        assert_eq!(before.len(), 10);
        drop(e);
        let e = open(&store).await;
        assert_eq!(e.stats().ann.questions, [0, sealed, 0], "attached, nothing rebuilt into the fresh buffer");
        let after: Vec<(String, String)> = e.ask_store().atomic_search(&q, 10, 0.0).into_iter().map(|h| (h.chunk_id, h.question)).collect();
        assert_eq!(after, before);
    });
}

/// `seal_due` (a bulk build's per-batch upkeep) seals only the collections it names: the
/// pseudo-graph's topics and facts get segments while the chunks' fresh buffer keeps growing, and
/// a later `maintain_all` seals the chunks; searches agree before and after.
#[test]
fn seal_due_seals_only_the_named_collections() {
    use webrag::schema::VectorCollection;
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut e = open(&store).await;
        let mut steps = Vec::new();
        for part in passages(24).chunks(8) {
            e.add(part.to_vec(), &mut NoProgress).await.expect("add");
            steps.extend(e.seal_due(&[VectorCollection::Topics, VectorCollection::Facts]).await.expect("seal_due"));
        }
        let sealed: HashSet<Sealed> = steps.iter().map(|s| s.collection).collect();
        assert!(sealed.contains(&Sealed::Facts), "facts sealed: {sealed:?}");
        assert!(!sealed.contains(&Sealed::Chunks), "chunks left in their buffer: {sealed:?}");
        let ann = e.stats().ann;
        assert!(
            ann.chunks[0] >= 16 && ann.chunks[1] == 0,
            "chunks: fresh {} ≥ sealAt, no segment ({} segments)",
            ann.chunks[0],
            ann.chunks[1]
        );
        assert!(ann.facts[1] > 0, "fact segments");
        let before = dense_ids(&e, SearchMode::Dense).await;
        let later = e.maintain_all(false).await.expect("maintain");
        assert!(later.iter().any(|s| s.collection == Sealed::Chunks), "maintain_all seals the chunks: {later:?}");
        assert_eq!(e.stats().ann.chunks[0], 0, "the chunks' buffer is empty after the seal");
        let after = dense_ids(&e, SearchMode::Dense).await;
        assert!(overlap(&before, &after) >= 0.9, "dense results agree across the seal: {before:?} vs {after:?}");
    });
}
