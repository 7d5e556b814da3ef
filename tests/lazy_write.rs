#![cfg(not(target_arch = "wasm32"))]
//! Writes on a lazily opened knowledge base (docs/vector-index.md, "Index segments"): the same
//! writes through a lazy view and through a loaded engine leave the same records (with and
//! without the pseudo-graph); a write after another tab's commit keeps both; a removal trusts the
//! stored chunks, not a stored count; `ask` and `enrich` on a lazily opened base never load it and
//! store what a loaded one stores. The helpers are `lazy_open.rs`'s.
use crate::common;
use crate::lazy_open::{Emb, atoms, build, config, doc, embedder, ids, lazy, overlap, queries};

use std::collections::HashSet;

use webrag::config::Config;
use webrag::embed::Embedder;
use webrag::engine::{Engine, LazyEngine, SearchOptions};
use webrag::ports::{Collection, FixedClock, MemoryStore, NoProgress, Op, Record, Store};
use webrag::types::{DocumentInput, SearchMode};

/// Asserts two stores hold the same records, naming the first that differs.
fn same(a: &webrag::ports::Contents, b: &webrag::ports::Contents, what: &str) {
    let (x, y) = (a.clone().into_ops(), b.clone().into_ops());
    let key = |o: &Op| match o {
        Op::Put(r) => format!("{}/{}", r.collection().name(), r.key()),
        other => format!("{other:?}"),
    };
    for (p, q) in x.iter().zip(&y) {
        if p != q {
            let short = |o: &Op| format!("{o:?}").chars().take(400).collect::<String>();
            panic!("{what}: {} differs from {}:\n{}\n{}", key(p), key(q), short(p), short(q));
        }
    }
    assert_eq!(x.len(), y.len(), "{what}: record counts");
}

/// Builds `store` as the tests of two residencies start: `articles` as documents `n0`, `n1`, …,
/// with the index segments stored (`cfg`).
async fn build_with(store: &MemoryStore, articles: &[String], cfg: &Config) {
    let mut eng = Engine::open(store, embedder(), cfg.clone(), Box::new(FixedClock(1.0))).await.expect("open");
    let docs = articles.iter().enumerate().map(|(i, t)| doc(&format!("n{i}"), t)).collect();
    eng.add(docs, &mut NoProgress).await.expect("add");
    eng.maintain_all(false).await.expect("maintain");
}

/// `config()` with the pseudo-graph on or off; nothing sealed (`sealAt` over every collection's
/// size), so the graph's candidates come from exact scans in both engines.
fn config_graph(graph: bool) -> Config {
    let mut c = config();
    c.graph.enabled = graph;
    c.ann.seal_at = 1_000_000;
    c
}

/// The same writes through a lazily opened knowledge base and through a loaded one leave the same
/// records in the store — with and without the pseudo-graph, a memory entry learned from a removed
/// chunk deleted in both — and the lazy one never loads. Afterwards the lazy view answers every
/// mode as a loaded engine over the same store does (the graph modes from the graph read alone).
#[test]
fn lazy_writes_store_what_loaded_writes_store() {
    use webrag::schema::MemoryRecord;
    for graph in [false, true] {
        pollster::block_on(async {
            let articles = common::news(150);
            let cfg = config_graph(graph);
            let open_full = |s| Engine::open(s, embedder(), cfg.clone(), Box::new(FixedClock(1.0)));
            let (a, b) = (MemoryStore::new(), MemoryStore::new());
            for store in [&a, &b] {
                build_with(store, &articles, &cfg).await;
                // A memory entry learned from a chunk of n5, removed below; one from n6, kept.
                let mem = |id: &str, src: &str| {
                    Op::Put(Record::Memory(MemoryRecord {
                        id: id.into(),
                        title: "t".into(),
                        content: "c".into(),
                        sources: vec![src.into()],
                        created_at: 1.0,
                        embedding: webrag::schema::VectorRecord::from_f32(id, "memory", &[0.05; 384]).data,
                    }))
                };
                store.commit(vec![mem("m5", "n5#0"), mem("m6", "n6#0")]).await.expect("memory");
            }
            same(&a.load().await.unwrap(), &b.load().await.unwrap(), "built alike");
            let mut full = open_full(&a).await.expect("open");
            let mut lz = LazyEngine::open(&b, embedder(), cfg.clone(), Box::new(FixedClock(1.0))).await.expect("lazy");
            assert!(lz.is_lazy(), "graph {graph}");
            let batch = vec![
                doc("fresh", "Owls hunt the harvest mouse at night in tall grass. The mouse hides under leaves."),
                doc("n3", "A replaced article about green tea. It grows on hills."),
                doc("n4", &articles[4]),
            ];
            let (x, y) = (full.add(batch.clone(), &mut NoProgress).await.unwrap(), lz.add(batch, &mut NoProgress).await.unwrap());
            assert_eq!(x, y);
            assert_eq!((y.added.len(), y.replaced.len(), y.unchanged.len()), (1, 1, 1));
            let gone: Vec<String> = ["n5", "n7", "nobody", "n5", "fresh"].map(String::from).to_vec();
            let (x, y) = (full.remove(&gone).await.unwrap(), lz.remove(&gone).await.unwrap());
            assert_eq!(x, y);
            let again = vec![doc("fresh", "Owls return to the barn at dawn."), doc("n3", "Green tea, replaced twice.")];
            let (x, y) = (full.add(again.clone(), &mut NoProgress).await.unwrap(), lz.add(again, &mut NoProgress).await.unwrap());
            assert_eq!(x, y);
            assert!(lz.is_lazy(), "the writes did not load the knowledge base (graph {graph})");
            let (sa, sb) = (a.load().await.unwrap(), b.load().await.unwrap());
            assert!(sa.memory.iter().all(|m| m.id != "m5") && sa.memory.iter().any(|m| m.id == "m6"));
            assert_eq!(sa.graph_nodes.is_empty(), !graph);
            same(&sa, &sb, &format!("the same records (graph {graph})"));
            let st = lz.stats().unwrap();
            assert_eq!((st.documents, st.chunks), (full.stats().documents, full.stats().chunks));
            // Searches: the lazy view against a loaded engine over the same store.
            let reopened = open_full(&b).await.expect("open");
            let mut qs = queries(&articles, 15);
            qs.extend(["owls barn dawn".to_string(), "green tea replaced".to_string()]);
            for mode in [SearchMode::Bm25, SearchMode::Dense, SearchMode::Hybrid, SearchMode::Graph, SearchMode::HybridGraph] {
                let mut agree = 0.0;
                for q in &qs {
                    let o = SearchOptions::new(5, mode);
                    let (x, y) = (reopened.search(q, &o).await.unwrap(), lz.search(q, &o).await.unwrap());
                    assert!(y.iter().all(|h| !["n5", "n7"].contains(&h.doc_id.as_str())), "{mode:?} {q}");
                    assert_eq!(x.is_empty(), y.is_empty(), "{mode:?} {q}");
                    match mode {
                        // The graph retriever is the same code over the same graph: the same list.
                        SearchMode::Graph => {
                            assert_eq!(ids(&x), ids(&y), "{mode:?} {q}");
                            assert_eq!(x.iter().map(|h| h.score).collect::<Vec<_>>(), y.iter().map(|h| h.score).collect::<Vec<_>>());
                        }
                        // BM25's idf counts the tombstones until the next base: the same best hit.
                        SearchMode::Bm25 => assert_eq!(x.first().map(|h| &h.chunk_id), y.first().map(|h| &h.chunk_id), "{q}"),
                        // The lazy dense list probes IVF lists: as close as in the test above.
                        _ => agree += overlap(&x, &y),
                    }
                }
                let agree = agree / qs.len() as f64;
                assert!(matches!(mode, SearchMode::Graph | SearchMode::Bm25) || agree >= 0.8, "{mode:?}: top-5 overlap {agree:.3}");
            }
            let top = lz.search("owls barn dawn", &SearchOptions::new(1, SearchMode::Bm25)).await.unwrap();
            assert_eq!(top[0].doc_id, "fresh");
            assert!(lz.is_lazy());
            // Explain data and mind maps from the graph read alone.
            let qv = full.embedder().embed_checked(&["green tea"]).await.unwrap().pop().unwrap();
            let (ex, ey) = (full.graph_search("green tea", &qv, 5), lz.explain_graph("green tea", 5).await.unwrap());
            assert_eq!(ex.hits.len(), ey.hits.len());
            assert_eq!(full.graph().mind_map("n3"), lz.graph().await.unwrap().mind_map("n3"));
            // The document list and a chunk from their records alone.
            assert_eq!(full.corpus().documents(), lz.documents().await.unwrap());
            assert_eq!(full.corpus().chunk("n3#0").cloned(), lz.chunk("n3#0").await.unwrap());
            assert_eq!(lz.chunk("n5#0").await.unwrap(), None);
            assert!(lz.is_lazy());
        })
    }
}

/// A lazy write after another engine over the same store (another tab) committed reads the store
/// again first ([`LazyEngine::refresh`], lazily), so both writes are kept.
#[test]
fn a_lazy_write_after_another_tabs_commit_keeps_both() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        build(&store, &common::news(100)).await;
        let mut lz = lazy(&store).await;
        let plan_docs = vec![doc("late", "A note written while another tab wrote.")];
        let mut other = lazy(&store).await;
        other.add(vec![doc("other", "The other tab's note.")], &mut NoProgress).await.unwrap();
        let before = store.load().await.unwrap();
        lz.add(plan_docs, &mut NoProgress).await.expect("read again, then written");
        assert!(lz.is_lazy());
        let after = store.load().await.unwrap();
        assert!(after.documents.iter().any(|d| d.id == "late") && after.documents.iter().any(|d| d.id == "other"));
        assert_eq!(after.documents.len(), before.documents.len() + 1);
        let s = lz.stats().unwrap();
        assert_eq!(s.documents, after.documents.len());
    })
}

/// A lazy write finds a document's chunks in the head and the delta, never from the stored
/// record's `chunkCount`: a record whose count was set to 4 billion (a hostile or corrupt store)
/// neither allocates for it nor leaves chunks behind.
#[test]
fn a_lazy_remove_ignores_a_stored_chunk_count() {
    use webrag::schema::DocumentRecord;
    pollster::block_on(async {
        let store = MemoryStore::new();
        build(&store, &common::news(100)).await;
        let Some(Record::Document(d)) = store.get(Collection::Documents, "n3").await.unwrap() else { panic!("n3") };
        let had = store.load().await.unwrap().chunks.iter().filter(|c| c.doc_id == "n3").count();
        assert!(had > 0);
        store.commit(vec![Op::Put(Record::Document(DocumentRecord { chunk_count: u32::MAX, ..d }))]).await.unwrap();
        let mut lz = lazy(&store).await;
        assert!(lz.is_lazy());
        assert_eq!(lz.remove(&["n3".into()]).await.unwrap().removed, vec!["n3".to_string()]);
        let c = store.load().await.unwrap();
        assert!(c.chunks.iter().all(|c| c.doc_id != "n3") && c.postings.iter().all(|p| !p.id.starts_with("n3#")));
        assert!(c.vectors.iter().all(|v| !v.id.starts_with("n3#")));
        assert_eq!(lz.stats().unwrap().documents, 99);
        let hits = lz.search("n3", &SearchOptions::new(10, SearchMode::Bm25)).await.unwrap();
        assert!(hits.iter().all(|h| h.doc_id != "n3"));
        assert!(lz.is_lazy());
    })
}

/// An `ask` on a lazily opened knowledge base — every step of the `ask` preset, the low-level
/// searchers and summarize included, with the memory update and a kept trace, against the
/// scripted server — reads what its steps need and never loads it: its chunk sources are the
/// stored chunks' texts, a loaded open reads what it wrote, and a later question the memory
/// answers is answered from the entries read lazily.
#[test]
fn an_ask_on_a_lazily_opened_base_never_loads_it() {
    use common::llm_server::{LlmServer, readable};
    use webrag::ask::pipeline::{NoWeb, PipelineParams, run};
    pollster::block_on(async {
        let articles = common::news(150);
        let cfg = config_graph(true);
        let store = MemoryStore::new();
        {
            let mut eng = Engine::open(&store, embedder(), cfg.clone(), Box::new(FixedClock(1.0))).await.expect("open");
            let docs = articles.iter().enumerate().map(|(i, t)| doc(&format!("n{i}"), t)).collect();
            eng.add(docs, &mut NoProgress).await.expect("add");
            eng.maintain_all(false).await.expect("maintain");
        }
        let mut lz = LazyEngine::open(&store, embedder(), cfg.clone(), Box::new(FixedClock(2.0))).await.expect("lazy");
        assert!(lz.is_lazy());
        let s = LlmServer::start();
        s.rules(readable(false));
        let p: PipelineParams = serde_json::from_value(serde_json::json!({"preset": "ask", "keepTrace": true})).expect("options");
        let (mut remembered, mut steps) = (0, HashSet::new());
        let questions = queries(&articles, 50);
        for q in &questions {
            let r = run(&s.client(), &mut lz, None::<&NoWeb>, q, &p, &FixedClock(2.0), &mut |_| {}, &mut |e| {
                steps.insert(e.step);
            })
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
            assert!(r.answer.as_ref().is_some_and(|a| a.known), "{q}: {:?}", r.answer);
            let chunks: Vec<_> = r.context.iter().filter(|c| !c.source.id.contains(':')).collect();
            assert!(!chunks.is_empty(), "{q}: chunk sources");
            for c in chunks {
                let Some(Record::Chunk(stored)) = store.get(Collection::Chunks, &c.source.id).await.unwrap() else {
                    panic!("{}", c.source.id)
                };
                assert_eq!(c.source.text, stored.text, "{}", c.source.id);
            }
            remembered += r.remembered;
            assert!(lz.is_lazy(), "{q}: the ask did not load the knowledge base");
        }
        use webrag::ask::Step::*;
        for step in [Rewrite, Route, KeyPoints, Propose, Select, Verify, Sparse, Dense, Summarize, Filter, Answer, Memory] {
            assert!(steps.contains(&step), "step {step} ran: {steps:?}");
        }
        assert!(remembered >= questions.len(), "{remembered} memory entries");
        // The memory now answers the rewritten question (θ = 3 entries titled with it), read lazily.
        let r = run(&s.client(), &mut lz, None::<&NoWeb>, "Who founded Acme Corporation?", &p, &FixedClock(3.0), &mut |_| {}, &mut |_| {})
            .await
            .expect("ask");
        assert_eq!(r.route, webrag::ask::pipeline::Route::Memory);
        assert!(lz.is_lazy());
        // Within a scope: every chunk source is one of its documents, and nothing loads.
        let scoped: PipelineParams =
            serde_json::from_value(serde_json::json!({"preset": "ask", "filter": {"docIds": ["n3", "n4", "n60"]}})).expect("options");
        for q in [&questions[0], &questions[1]] {
            let r = run(&s.client(), &mut lz, None::<&NoWeb>, q, &scoped, &FixedClock(3.0), &mut |_| {}, &mut |_| {})
                .await
                .unwrap_or_else(|e| panic!("{q}: {e}"));
            let docs: Vec<&str> =
                r.context.iter().filter(|c| !c.source.id.contains(':')).map(|c| c.source.id.split('#').next().unwrap_or("")).collect();
            assert!(!docs.is_empty() && docs.iter().all(|d| ["n3", "n4", "n60"].contains(d)), "{q}: {docs:?}");
        }
        assert!(lz.is_lazy(), "a scoped ask did not load the knowledge base");
        let remembered = lz.memory_len().await.expect("memory");
        // A loaded open reads what the lazy asks wrote.
        let full = Engine::open(&store, embedder(), cfg.clone(), Box::new(FixedClock(4.0))).await.expect("open");
        assert_eq!(full.ask_store().memory_len(), remembered);
        assert_eq!(full.ask_store().traces().len(), questions.len() + 1);
        // The page's memory(), traces(), questions(), forget() and clearTraces() lazily.
        assert_eq!(lz.memory().await.unwrap(), full.ask_store().memory());
        assert_eq!(lz.traces().await.unwrap(), full.ask_store().traces());
        assert_eq!(lz.questions("n0#0").await.unwrap(), None);
        assert_eq!(lz.clear_traces().await.unwrap(), questions.len() + 1);
        assert_eq!(lz.forget().await.unwrap(), remembered);
        assert!(lz.is_lazy(), "forget and clearTraces did not load the knowledge base");
        assert!(lz.traces().await.unwrap().is_empty() && lz.memory().await.unwrap().is_empty());
        let full = Engine::open(&store, embedder(), cfg, Box::new(FixedClock(5.0))).await.expect("open");
        assert_eq!((full.ask_store().memory_len(), full.ask_store().traces().len()), (0, 0));
        assert_eq!(full.corpus().documents().len(), articles.len(), "nothing else deleted");
    })
}

/// `enrich` (atomizing and LLM mind maps) of a few documents through a lazily opened knowledge
/// base stores the same records as through a loaded one, never loads, and the lazy view finds what
/// it wrote (its atomic questions, the new mind map) at once and after a lazy reopen; both views
/// list the same chunks left to atomize.
#[test]
fn enrich_while_lazy_stores_what_a_loaded_enrich_stores() {
    use common::llm_server::{LlmServer, reply};
    use futures::lock::Mutex;
    use webrag::ask::ingest::{EnrichParams, enrich};
    use webrag::engine::{Enrichable, Exclusive};
    pollster::block_on(async {
        let articles = common::news(150);
        let cfg = config_graph(true);
        let open_full = |s| Engine::open(s, embedder(), cfg.clone(), Box::new(FixedClock(1.0)));
        let (a, b) = (MemoryStore::new(), MemoryStore::new());
        for store in [&a, &b] {
            build_with(store, &articles, &cfg).await;
        }
        let mut full = open_full(&a).await.expect("open");
        let mut lz = LazyEngine::open(&b, embedder(), cfg.clone(), Box::new(FixedClock(1.0))).await.expect("lazy");
        assert!(lz.is_lazy());
        let fresh = vec![doc("fresh", "Owls hunt the harvest mouse at night in tall grass. The mouse hides under leaves.")];
        full.add(fresh.clone(), &mut NoProgress).await.expect("add");
        lz.add(fresh, &mut NoProgress).await.expect("add");
        let s = LlmServer::start();
        s.rules(serde_json::json!([
            { "match": "Task: atomize", "reply": reply(serde_json::json!({"questions": ["Which bird hunts the harvest mouse at night?", "Where does the mouse hide?"]})) },
            { "match": "Task: fact-check items", "reply": reply(serde_json::json!({"items": ["Owls hunt the harvest mouse at night."]})) },
            { "match": "Task: mind map", "reply": reply(serde_json::json!({"Owls": {"Hunting": "Owls hunt the harvest mouse at night."}})) }
        ]));
        let p: EnrichParams =
            serde_json::from_value(serde_json::json!({"documents": ["fresh", "n3"], "mindMaps": {"regenerations": 0}})).expect("options");
        let x = enrich(&Exclusive::new(&mut full), &s.client(), &p, &FixedClock(2.0), &mut NoProgress, &mut |_| {})
            .await
            .expect("enrich loaded");
        let shared = Mutex::new(lz);
        let y = enrich(&shared, &s.client(), &p, &FixedClock(2.0), &mut NoProgress, &mut |_| {}).await.expect("enrich lazily");
        let mut lz = shared.into_inner();
        assert_eq!(x, y);
        let (atomized, maps) = (y.atomize.as_ref().unwrap(), y.mind_maps.as_ref().unwrap());
        assert!(atomized.chunks >= 2 && atomized.questions == 2 * atomized.chunks && atomized.remaining == 0, "{atomized:?}");
        assert_eq!(maps.documents + maps.fallbacks.len(), 2, "{maps:?}");
        assert!(lz.is_lazy(), "enrich did not load the knowledge base");
        same(&a.load().await.unwrap(), &b.load().await.unwrap(), "the same records after enrich");
        // What it wrote is found at once, and after a lazy reopen.
        let qv = full.embedder().embed_checked(&["Which bird hunts the harvest mouse at night?"]).await.unwrap().pop().unwrap();
        let want = atoms(&full.ask_store().atomic_search(&qv, 10, 0.5));
        assert!(want.iter().any(|(c, _)| c == "fresh#0"), "{want:?}");
        assert_eq!(atoms(&lz.atomic_search(&qv, 10, 0.5).await.unwrap()), want);
        assert_eq!(full.graph().mind_map("fresh"), lz.graph().await.unwrap().mind_map("fresh"));
        assert_eq!(lz.documents().await.unwrap(), full.corpus().documents());
        let left = Enrichable::unatomized(&mut full, None).await.unwrap();
        assert_eq!(Enrichable::unatomized(&mut lz, None).await.unwrap(), left);
        assert_eq!(left.len(), full.stats().chunks - atomized.chunks);
        let mut again = LazyEngine::open(&b, embedder(), cfg.clone(), Box::new(FixedClock(3.0))).await.expect("lazy");
        assert!(again.is_lazy());
        assert_eq!(atoms(&again.atomic_search(&qv, 10, 0.5).await.unwrap()), want);
        assert_eq!(Enrichable::unatomized(&mut again, None).await.unwrap(), left);
        assert_eq!(again.stats().unwrap().questions, full.stats().questions);
        // A second pass over the same documents has nothing left to do.
        let shared = Mutex::new(again);
        let z = enrich(&shared, &s.client(), &p, &FixedClock(4.0), &mut NoProgress, &mut |_| {}).await.expect("enrich again");
        assert_eq!((z.atomize.unwrap().chunks, z.mind_maps.unwrap().documents), (0, 0));
        assert!(shared.into_inner().is_lazy());
    })
}

/// A model whose first call stands for another tab replacing document `fresh` while the model
/// answers; it answers each `enrich` step by its task marker.
struct ReplacingTab<'a> {
    other: std::cell::RefCell<Option<LazyEngine<&'a MemoryStore, Emb>>>,
}

impl webrag::llm::LanguageModel for ReplacingTab<'_> {
    async fn chat(&self, messages: &[webrag::llm::ChatMessage], _: &webrag::llm::ChatOptions) -> Result<String, webrag::error::LlmError> {
        let other = self.other.borrow_mut().take();
        if let Some(mut other) = other {
            other
                .add(vec![doc("fresh", "Hawks, not owls, hunt the field vole by day. The vole hides in burrows.")], &mut NoProgress)
                .await
                .expect("replace");
        }
        let asked = messages.last().map(|m| m.content.as_str()).unwrap_or("");
        Ok(if asked.starts_with("Task: atomize") {
            r#"{"questions": ["Which bird hunts here?"]}"#.into()
        } else if asked.starts_with("Task: fact-check items") {
            r#"{"items": ["A bird hunts a small animal."]}"#.into()
        } else {
            r#"{"Birds": {"Hunting": "A bird hunts a small animal."}}"#.into()
        })
    }
}

/// An `enrich` keeps nothing of a reply about a document another tab replaced while the model
/// answered — whether the knowledge base was opened lazily or loaded — and a later call does
/// that document again; repeated ids in `documents` count once.
#[test]
fn enrich_keeps_nothing_of_a_document_replaced_meanwhile() {
    use futures::lock::Mutex;
    use webrag::ask::ingest::{EnrichParams, enrich};
    for lazy_open in [true, false] {
        pollster::block_on(async {
            let articles = common::news(150);
            let cfg = Config { lazy_open_chunks: if lazy_open { 1 } else { 0 }, ..config_graph(true) };
            let store = MemoryStore::new();
            {
                let mut eng = Engine::open(&store, embedder(), cfg.clone(), Box::new(FixedClock(1.0))).await.expect("open");
                let mut docs: Vec<DocumentInput> = articles.iter().enumerate().map(|(i, t)| doc(&format!("n{i}"), t)).collect();
                docs.push(doc("fresh", "Owls hunt the harvest mouse at night in tall grass. The mouse hides under leaves."));
                eng.add(docs, &mut NoProgress).await.expect("add");
                eng.maintain_all(false).await.expect("maintain");
            }
            let open = || LazyEngine::open(&store, embedder(), cfg.clone(), Box::new(FixedClock(2.0)));
            let (lz, other) = (open().await.expect("open"), open().await.expect("open"));
            assert_eq!(lz.is_lazy(), lazy_open);
            let model = ReplacingTab { other: std::cell::RefCell::new(Some(other)) };
            let p: EnrichParams =
                serde_json::from_value(serde_json::json!({"documents": ["fresh", "fresh"], "mindMaps": {"regenerations": 0}}))
                    .expect("options");
            let shared = Mutex::new(lz);
            let r = enrich(&shared, &model, &p, &FixedClock(3.0), &mut NoProgress, &mut |_| {}).await.expect("enrich");
            let a = r.atomize.expect("atomize");
            assert_eq!((a.chunks, a.questions, a.remaining), (0, 0, 1), "lazy {lazy_open}: the reply about the old text was dropped");
            let m = r.mind_maps.expect("mind maps");
            assert_eq!(m.documents + m.fallbacks.len(), 1, "lazy {lazy_open}: `fresh` mapped once, from its new text: {m:?}");
            let mut lz = shared.into_inner();
            assert_eq!(lz.questions("fresh#0").await.expect("questions"), None);
            assert_eq!(lz.is_lazy(), lazy_open, "enrich did not load the knowledge base");
            // The next call atomizes the new text.
            let shared = Mutex::new(lz);
            let r = enrich(&shared, &model, &p, &FixedClock(4.0), &mut NoProgress, &mut |_| {}).await.expect("enrich again");
            assert_eq!(r.atomize.expect("atomize").chunks, 1);
            let mut lz = shared.into_inner();
            assert_eq!(lz.questions("fresh#0").await.expect("questions"), Some(vec!["Which bird hunts here?".to_string()]));
            let full = Engine::open(&store, embedder(), cfg.clone(), Box::new(FixedClock(5.0))).await.expect("open");
            assert!(full.corpus().chunk("fresh#0").expect("chunk").text.contains("Hawks"));
            assert_eq!(full.corpus().document("fresh").expect("doc").mind_map, Some(webrag::schema::MindMapKind::Llm));
        })
    }
}
