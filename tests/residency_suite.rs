#![cfg(not(target_arch = "wasm32"))]
//! The parts' conformance suite: one script of operations — adds (new, replaced, unchanged
//! documents), removals, atomic questions written and rewritten, mind maps replaced, memory
//! entries, kept traces, `forget`, `clearTraces` — run on a knowledge base whose parts are
//! resident (a loaded [`Engine`]) and on one whose parts are read from the store on demand (a
//! lazily opened [`LazyEngine`] that never loads), each over its own store built alike, as
//! `store_suite.rs` runs one script on every store.
//!
//! After every step: both stores hold the same records; every read answers the same — the
//! document list, chunks, each chunk's atomic questions, the counts of `stats()`, the chunks left
//! to atomize, memory entries and their matches for a query (scores included), kept traces, mind
//! maps, graph search (hits and scores), atomic search (hits and scores); and ranked search agrees
//! as far as the stored part's indexes are built to: no hit of a removed document in either, the
//! same best BM25 hit (the lazy idf counts a removed chunk's postings until the next base), and
//! dense and hybrid top-5 lists that overlap by ≥ 0.8 (the stored part's dense scores are 12-bit
//! IVF estimates over the base).
//!
//! A change to either residency alone — a record written differently, a question or a map
//! applied differently to what is resident or to what is read lazily — fails here.
use crate::common;

use std::collections::HashSet;

use webrag::config::Config;
use webrag::embed::Embedder;
use webrag::embed::hashing::HashingEmbedder;
use webrag::engine::{AtomicHit, Engine, Enrichable, LazyEngine, SearchOptions};
use webrag::graph::GraphHit;
use webrag::graph::mindmap::{self, MindMap};
use webrag::ports::{FixedClock, MemoryStore, NoProgress, Op, Store};
use webrag::schema::*;
use webrag::types::{AddReport, DocumentInput, Format, Hit, RemoveReport, SearchMode};

type Emb = HashingEmbedder<'static>;
type Store_ = &'static MemoryStore;

fn embedder() -> Emb {
    HashingEmbedder::new(common::model())
}

/// The pseudo-graph on; a base of index segments from the first chunk; nothing sealed into HNSW
/// (`sealAt` over every collection's size), so the resident part's dense list is an exact scan.
fn config() -> Config {
    let mut c = Config { lazy_open_chunks: 1, ..Config::default() };
    c.graph.enabled = true;
    c.ann.seal_at = 1_000_000;
    c
}

fn doc(id: &str, text: &str) -> DocumentInput {
    DocumentInput { id: id.into(), title: None, text: text.into(), format: Format::Text, ..Default::default() }
}

/// One knowledge base as the suite drives it: the operations of the script and the reads it
/// compares, on either residency.
#[allow(async_fn_in_trait)]
trait Kb: Enrichable<Store_, Emb> {
    async fn add(&mut self, docs: Vec<DocumentInput>) -> AddReport;
    async fn remove(&mut self, ids: &[String]) -> RemoveReport;
    async fn remember(&mut self, entries: Vec<(String, String, Vec<ChunkId>)>) -> Vec<MemoryRecord>;
    async fn keep_trace(&mut self, question: &str, json: String) -> TraceRecord;
    async fn forget(&mut self) -> usize;
    async fn clear_traces(&mut self) -> usize;
    async fn documents(&mut self) -> Vec<DocumentRecord>;
    async fn chunk(&mut self, id: &str) -> Option<ChunkRecord>;
    async fn questions(&mut self, chunk: &str) -> Option<Vec<String>>;
    async fn memory(&mut self) -> Vec<MemoryRecord>;
    async fn memory_matches(&mut self, qv: &[f32], tau: f32) -> Vec<(MemoryRecord, f32)>;
    async fn traces(&mut self) -> Vec<TraceRecord>;
    /// Documents, chunks, questions, atomized chunks.
    fn counts(&self) -> (usize, usize, usize, usize);
    async fn atomic(&mut self, qv: &[f32], k: usize) -> Vec<AtomicHit>;
    async fn graph_hits(&mut self, query: &str, qv: &[f32], k: usize) -> Vec<GraphHit>;
    async fn mind_map(&mut self, doc: &str) -> Option<MindMap>;
    async fn search(&mut self, query: &str, opts: &SearchOptions) -> Vec<Hit>;
}

impl Kb for Engine<Store_, Emb> {
    async fn add(&mut self, docs: Vec<DocumentInput>) -> AddReport {
        Engine::add(self, docs, &mut NoProgress).await.expect("add")
    }
    async fn remove(&mut self, ids: &[String]) -> RemoveReport {
        Engine::remove(self, ids).await.expect("remove")
    }
    async fn remember(&mut self, entries: Vec<(String, String, Vec<ChunkId>)>) -> Vec<MemoryRecord> {
        self.enrichment().remember(entries).await.expect("remember")
    }
    async fn keep_trace(&mut self, question: &str, json: String) -> TraceRecord {
        self.enrichment().keep_trace(question, json).await.expect("trace")
    }
    async fn forget(&mut self) -> usize {
        self.enrichment().forget().await.expect("forget")
    }
    async fn clear_traces(&mut self) -> usize {
        self.enrichment().clear_traces().await.expect("clear traces")
    }
    async fn documents(&mut self) -> Vec<DocumentRecord> {
        self.corpus().documents()
    }
    async fn chunk(&mut self, id: &str) -> Option<ChunkRecord> {
        self.corpus().chunk(id).cloned()
    }
    async fn questions(&mut self, chunk: &str) -> Option<Vec<String>> {
        self.ask_store().questions(chunk).map(<[String]>::to_vec)
    }
    async fn memory(&mut self) -> Vec<MemoryRecord> {
        self.ask_store().memory()
    }
    async fn memory_matches(&mut self, qv: &[f32], tau: f32) -> Vec<(MemoryRecord, f32)> {
        self.ask_store().memory_matches(qv, tau)
    }
    async fn traces(&mut self) -> Vec<TraceRecord> {
        self.ask_store().traces().to_vec()
    }
    fn counts(&self) -> (usize, usize, usize, usize) {
        let s = self.stats();
        (s.documents, s.chunks, s.questions, s.atomized_chunks)
    }
    async fn atomic(&mut self, qv: &[f32], k: usize) -> Vec<AtomicHit> {
        self.ask_store().atomic_search(qv, k, 0.0)
    }
    async fn graph_hits(&mut self, query: &str, qv: &[f32], k: usize) -> Vec<GraphHit> {
        self.graph_search(query, qv, k).hits
    }
    async fn mind_map(&mut self, doc: &str) -> Option<MindMap> {
        self.graph().mind_map(doc)
    }
    async fn search(&mut self, query: &str, opts: &SearchOptions) -> Vec<Hit> {
        Engine::search(self, query, opts).await.expect("search")
    }
}

impl Kb for LazyEngine<Store_, Emb> {
    async fn add(&mut self, docs: Vec<DocumentInput>) -> AddReport {
        LazyEngine::add(self, docs, &mut NoProgress).await.expect("add")
    }
    async fn remove(&mut self, ids: &[String]) -> RemoveReport {
        LazyEngine::remove(self, ids).await.expect("remove")
    }
    async fn remember(&mut self, entries: Vec<(String, String, Vec<ChunkId>)>) -> Vec<MemoryRecord> {
        LazyEngine::remember(self, entries).await.expect("remember")
    }
    async fn keep_trace(&mut self, question: &str, json: String) -> TraceRecord {
        LazyEngine::keep_trace(self, question, json).await.expect("trace")
    }
    async fn forget(&mut self) -> usize {
        LazyEngine::forget(self).await.expect("forget")
    }
    async fn clear_traces(&mut self) -> usize {
        LazyEngine::clear_traces(self).await.expect("clear traces")
    }
    async fn documents(&mut self) -> Vec<DocumentRecord> {
        LazyEngine::documents(self).await.expect("documents")
    }
    async fn chunk(&mut self, id: &str) -> Option<ChunkRecord> {
        LazyEngine::chunk(self, id).await.expect("chunk")
    }
    async fn questions(&mut self, chunk: &str) -> Option<Vec<String>> {
        LazyEngine::questions(self, chunk).await.expect("questions")
    }
    async fn memory(&mut self) -> Vec<MemoryRecord> {
        LazyEngine::memory(self).await.expect("memory")
    }
    async fn memory_matches(&mut self, qv: &[f32], tau: f32) -> Vec<(MemoryRecord, f32)> {
        LazyEngine::memory_matches(self, qv, tau).await.expect("memory matches")
    }
    async fn traces(&mut self) -> Vec<TraceRecord> {
        LazyEngine::traces(self).await.expect("traces")
    }
    fn counts(&self) -> (usize, usize, usize, usize) {
        let s = self.stats().expect("stats");
        (s.documents, s.chunks, s.questions, s.atomized_chunks)
    }
    async fn atomic(&mut self, qv: &[f32], k: usize) -> Vec<AtomicHit> {
        self.atomic_search(qv, k, 0.0).await.expect("atomic search")
    }
    async fn graph_hits(&mut self, query: &str, qv: &[f32], k: usize) -> Vec<GraphHit> {
        self.graph_search(query, &[qv], k).await.expect("graph search").hits
    }
    async fn mind_map(&mut self, doc: &str) -> Option<MindMap> {
        self.graph().await.expect("graph").mind_map(doc)
    }
    async fn search(&mut self, query: &str, opts: &SearchOptions) -> Vec<Hit> {
        LazyEngine::search(self, query, opts).await.expect("search")
    }
}

/// One step of the script, run on a knowledge base of either residency.
#[derive(Debug, Clone)]
enum Step {
    Add(Vec<DocumentInput>),
    Remove(Vec<String>),
    Questions(Vec<(ChunkId, Vec<String>)>),
    MindMap(String, Option<MindMap>, MindMapKind),
    Remember(Vec<(String, String, Vec<ChunkId>)>),
    Trace(String),
    Forget,
    ClearTraces,
}

/// What a step returned, to compare between the residencies.
async fn run(kb: &mut impl Kb, step: &Step) -> String {
    match step.clone() {
        Step::Add(docs) => format!("{:?}", kb.add(docs).await),
        Step::Remove(ids) => format!("{:?}", kb.remove(&ids).await),
        Step::Questions(items) => format!("{:?}", kb.put_questions(items).await.expect("questions")),
        Step::MindMap(doc, map, kind) => format!("{:?}", kb.set_mind_map(&doc, map.as_ref(), kind).await.expect("mind map")),
        Step::Remember(entries) => format!("{:?}", kb.remember(entries).await),
        Step::Trace(q) => format!("{:?}", kb.keep_trace(&q, "{}".into()).await),
        Step::Forget => format!("{:?}", kb.forget().await),
        Step::ClearTraces => format!("{:?}", kb.clear_traces().await),
    }
}

/// Asserts two stores hold the same records, naming the first that differs.
async fn same_records(a: &MemoryStore, b: &MemoryStore, what: &str) {
    let (x, y) = (a.load().await.expect("load").into_ops(), b.load().await.expect("load").into_ops());
    let key = |o: &Op| match o {
        Op::Put(r) => format!("{}/{}", r.collection().name(), r.key()),
        other => format!("{other:?}"),
    };
    for (p, q) in x.iter().zip(&y) {
        assert!(p == q, "{what}: the stores differ at {} / {}", key(p), key(q));
    }
    assert_eq!(x.len(), y.len(), "{what}: record counts");
}

fn ids(h: &[Hit]) -> Vec<&str> {
    h.iter().map(|h| h.chunk_id.as_str()).collect()
}

/// Every read of the suite, compared between the resident `r` and the stored `s` after `what`.
async fn same_reads(r: &mut Engine<Store_, Emb>, s: &mut LazyEngine<Store_, Emb>, probes: &[String], removed: &[String], what: &str) {
    assert_eq!(r.counts(), s.counts(), "{what}: stats");
    assert_eq!(Kb::documents(r).await, Kb::documents(s).await, "{what}: documents");
    assert_eq!(r.unatomized(None).await.expect("unatomized"), s.unatomized(None).await.expect("unatomized"), "{what}: left to atomize");
    let docs: Vec<String> = Kb::documents(r).await.into_iter().map(|d| d.id).collect();
    for d in &docs {
        assert_eq!(r.document_chunks(d).await.expect("chunks"), s.document_chunks(d).await.expect("chunks"), "{what}: chunks of {d}");
        assert_eq!(r.mind_map(d).await, s.mind_map(d).await, "{what}: mind map of {d}");
        for (c, _) in r.document_chunks(d).await.expect("chunks") {
            assert_eq!(Kb::chunk(r, &c).await, Kb::chunk(s, &c).await, "{what}: chunk {c}");
            assert_eq!(Kb::questions(r, &c).await, Kb::questions(s, &c).await, "{what}: questions of {c}");
        }
    }
    assert_eq!(Kb::memory(r).await, Kb::memory(s).await, "{what}: memory");
    assert_eq!(Kb::traces(r).await, Kb::traces(s).await, "{what}: traces");
    let mut dense = 0.0;
    for q in probes {
        let qv = r.embedder().embed_checked(&[q.as_str()]).await.expect("embed").pop().expect("vector");
        assert_eq!(r.atomic(&qv, 8).await, s.atomic(&qv, 8).await, "{what}: atomic search {q}");
        assert_eq!(r.graph_hits(q, &qv, 5).await, s.graph_hits(q, &qv, 5).await, "{what}: graph search {q}");
        assert_eq!(Kb::memory_matches(r, &qv, 0.0).await, Kb::memory_matches(s, &qv, 0.0).await, "{what}: memory matches {q}");
        for mode in [SearchMode::Bm25, SearchMode::Dense, SearchMode::Hybrid] {
            let o = SearchOptions::new(5, mode);
            let (x, y) = (Kb::search(r, q, &o).await, Kb::search(s, q, &o).await);
            for h in x.iter().chain(&y) {
                assert!(!removed.contains(&h.doc_id), "{what}: {mode:?} {q}: a removed document's chunk {}", h.chunk_id);
            }
            match mode {
                SearchMode::Bm25 => assert_eq!(ids(&x).first(), ids(&y).first(), "{what}: the best BM25 hit for {q}"),
                _ => {
                    let seen: HashSet<&str> = ids(&x).into_iter().collect();
                    dense += y.iter().filter(|h| seen.contains(h.chunk_id.as_str())).count() as f64 / y.len().max(1) as f64;
                }
            }
        }
    }
    let agree = dense / (2 * probes.len()) as f64;
    assert!(agree >= 0.8, "{what}: dense and hybrid top-5 overlap {agree:.3}");
}

/// The script: each step is run on both residencies, then every record and read compared.
#[test]
fn resident_and_stored_parts_give_the_same_records_and_reads() {
    pollster::block_on(async {
        let articles = common::news(120);
        // Stores that live as long as the test binary (the engines borrow them).
        let (a, b): (Store_, Store_) = (Box::leak(Box::new(MemoryStore::new())), Box::leak(Box::new(MemoryStore::new())));
        for store in [a, b] {
            let mut eng = Engine::open(store, embedder(), config(), Box::new(FixedClock(1.0))).await.expect("open");
            let docs = articles.iter().enumerate().map(|(i, t)| doc(&format!("n{i}"), t)).collect();
            eng.add(docs, &mut NoProgress).await.expect("add");
            eng.maintain_all(false).await.expect("maintain");
        }
        same_records(a, b, "built alike").await;
        let mut resident = Engine::open(a, embedder(), config(), Box::new(FixedClock(2.0))).await.expect("open");
        let mut stored = LazyEngine::open(b, embedder(), config(), Box::new(FixedClock(2.0))).await.expect("lazy open");
        assert!(stored.is_lazy(), "the stored residency reads the index segments");
        let owls = "Owls hunt the harvest mouse at night in tall grass. The mouse hides under leaves.";
        let map =
            mindmap::structural("Owls", &[(vec!["Hunting".into()], "Owls hunt at night. The harvest mouse hides under leaves.".into())]);
        let q = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let script = vec![
            Step::Add(vec![
                doc("fresh", owls),
                doc("n3", "A replaced article about green tea. It grows on hills."),
                doc("n4", &articles[4]),
            ]),
            Step::Questions(vec![
                ("n1#0".into(), q(&["What does the first article report?", "Who is named in it?"])),
                ("fresh#0".into(), q(&["Which bird hunts the harvest mouse?"])),
                ("n2#0".into(), q(&["What happened in the second article?"])),
                ("gone#0".into(), q(&["A chunk that was never stored"])),
            ]),
            Step::MindMap("fresh".into(), Some(map), MindMapKind::Llm),
            Step::MindMap("n4".into(), None, MindMapKind::StructuralFallback),
            Step::Remember(vec![
                ("Which bird hunts the harvest mouse?".into(), "Owls.".into(), vec!["fresh#0".into()]),
                ("What did the sixth article say?".into(), "See it.".into(), vec!["n6#0".into()]),
            ]),
            Step::Trace("Which bird hunts the harvest mouse?".into()),
            Step::Remove(q(&["n6", "n2", "nobody"])),
            Step::Questions(vec![("n1#0".into(), q(&["A rewritten question about the first article?"]))]),
            Step::Add(vec![doc("fresh", "Owls return to the barn at dawn."), doc("n3", "Green tea, replaced twice.")]),
            Step::Forget,
            Step::ClearTraces,
        ];
        let mut probes: Vec<String> = articles.iter().step_by(20).map(|a| a.chars().take(40).collect()).collect();
        probes.extend(q(&["Which bird hunts the harvest mouse?", "green tea hills", "owls barn dawn", "the first article"]));
        let mut removed = Vec::new();
        for (n, step) in script.iter().enumerate() {
            let what = format!("step {n} ({step:?})").chars().take(160).collect::<String>();
            let (x, y) = (run(&mut resident, step).await, run(&mut stored, step).await);
            assert_eq!(x, y, "{what}: what it returned");
            if let Step::Remove(ids) = step {
                removed.extend(ids.iter().cloned());
            }
            if let Step::Add(docs) = step {
                removed.retain(|r| !docs.iter().any(|d| d.id == *r));
            }
            same_records(a, b, &what).await;
            same_reads(&mut resident, &mut stored, &probes, &removed, &what).await;
            assert!(stored.is_lazy(), "{what}: the stored residency did not load");
        }
        // What the stored residency wrote is what a fresh open of either kind reads.
        let mut reopened = LazyEngine::open(b, embedder(), config(), Box::new(FixedClock(3.0))).await.expect("lazy open");
        assert!(reopened.is_lazy());
        same_reads(&mut resident, &mut reopened, &probes, &removed, "reopened lazily").await;
        let mut loaded = Engine::open(b, embedder(), config(), Box::new(FixedClock(3.0))).await.expect("open");
        assert_eq!(loaded.counts(), resident.counts());
        assert_eq!(Kb::documents(&mut loaded).await, Kb::documents(&mut resident).await);
    })
}
