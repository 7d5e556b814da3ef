#![cfg(not(target_arch = "wasm32"))]
//! Two engines over one store — what two browser tabs over one IndexedDB database are: every
//! commit is guarded by the store's generation (`STORE_CONFLICT`, nothing written, when another
//! engine committed since), `LazyEngine::refresh` reads the store again, and an open repairs
//! stale derived data (graph edges to deleted nodes, cycles, missing vectors) instead of refusing
//! the knowledge base.
use crate::common;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use webrag::config::Config;
use webrag::embed::hashing::HashingEmbedder;
use webrag::engine::{Engine, LazyEngine, SearchOptions};
use webrag::error::{Error, StoreError};
use webrag::ports::{Collection, FixedClock, MemoryStore, NoProgress, Op, Record, Store};
use webrag::schema::{EdgeKind, GraphEdgeRecord, NodeKind};
use webrag::types::{DocumentInput, Format, SearchMode};

type Emb = HashingEmbedder<'static>;
type Tab<'a> = LazyEngine<&'a MemoryStore, Emb>;

fn embedder() -> Emb {
    HashingEmbedder::new(common::model())
}

fn doc(id: &str, text: &str) -> DocumentInput {
    DocumentInput { id: id.into(), title: None, text: text.into(), format: Format::Markdown, ..Default::default() }
}

async fn tab(store: &MemoryStore) -> Tab<'_> {
    LazyEngine::open(store, embedder(), Config::default(), Box::new(FixedClock(1.0))).await.expect("open")
}

/// Documents whose topics fuse (one title), so that a super-topic links them across documents.
fn note(i: usize) -> DocumentInput {
    doc(&format!("note|{i} #a/b?"), &format!("# Sourdough starter\n\n## Feeding {i}\n\nFeed the starter flour and water, day {i}.\n"))
}

fn is_conflict(e: &Error) -> bool {
    matches!(e, Error::Store(StoreError::Conflict { .. }))
}

#[test]
fn a_stale_tab_cannot_write_over_another_tabs_commit() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut a = tab(&store).await;
        a.engine().await.unwrap().add(vec![note(1)], &mut NoProgress).await.expect("A adds");
        let mut b = tab(&store).await;
        b.engine().await.unwrap().add(vec![note(2)], &mut NoProgress).await.expect("B adds");
        let fused = b.engine().await.unwrap().graph().counts()[3];
        assert_eq!(fused, 1, "the two topics fused into one super-topic");
        // A still holds the view from before B's add: its remove would leave B's similar edge
        // pointing at a deleted node. It is refused, and nothing is written.
        let before = store.load().await.unwrap();
        let err = a.engine().await.unwrap().remove(&["note|1 #a/b?".into()]).await.expect_err("stale write");
        assert!(is_conflict(&err), "{err:?}");
        assert_eq!(err.code(), "STORE_CONFLICT");
        assert_eq!(store.load().await.unwrap(), before, "nothing written");
        // Read again, the remove goes through.
        assert!(a.refresh().await.unwrap(), "A saw B's commit");
        assert!(!a.refresh().await.unwrap(), "and nothing since");
        let r = a.engine().await.unwrap().remove(&["note|1 #a/b?".into()]).await.expect("remove");
        assert_eq!(r.removed.len(), 1);
        // B refreshes and both agree; a fresh open succeeds and agrees too.
        assert!(b.refresh().await.unwrap());
        let fresh = Engine::open(&store, embedder(), Config::default(), Box::new(FixedClock(1.0))).await.expect("reopen");
        for t in [&mut a, &mut b] {
            let e = t.engine().await.unwrap();
            assert_eq!(e.graph().dump(), fresh.graph().dump());
            assert_eq!(e.stats().documents, 1);
        }
        let hits = fresh.search("starter flour", &SearchOptions::new(5, SearchMode::HybridGraph)).await.expect("search");
        assert!(hits.iter().all(|h| h.doc_id == "note|2 #a/b?"), "{hits:?}");
    });
}

#[test]
fn interleaved_writes_of_two_tabs_converge() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut tabs = [tab(&store).await, tab(&store).await];
        let mut rng = SmallRng::seed_from_u64(19);
        let mut conflicts = 0;
        for step in 0..120 {
            let t = &mut tabs[rng.random_range(0..2)];
            // Half the time the tab refreshes first (it heard the other tab's broadcast); the
            // other half it writes from a possibly stale view and must be refused, then retries.
            if rng.random_bool(0.5) {
                t.refresh().await.expect("refresh");
            }
            let i = rng.random_range(0..12);
            for attempt in 0..3 {
                let e = t.engine().await.expect("engine");
                let r = if rng.random_bool(0.6) {
                    e.add(vec![note(i)], &mut NoProgress).await.map(|_| ())
                } else {
                    e.remove(&[format!("note|{i} #a/b?")]).await.map(|_| ())
                };
                match r {
                    Ok(()) => break,
                    Err(err) if is_conflict(&err) && attempt < 2 => {
                        conflicts += 1;
                        t.refresh().await.expect("refresh");
                    }
                    Err(err) => panic!("step {step}: {err:?}"),
                }
            }
            let q = t.search("starter feeding", &SearchOptions::new(5, SearchMode::HybridGraph)).await;
            assert!(q.is_ok(), "step {step}: {q:?}");
        }
        assert!(conflicts > 0, "stale writes were tried");
        let fresh = Engine::open(&store, embedder(), Config::default(), Box::new(FixedClock(1.0))).await.expect("reopen");
        for t in &mut tabs {
            t.refresh().await.expect("refresh");
            let e = t.engine().await.unwrap();
            assert_eq!(e.graph().dump(), fresh.graph().dump());
            let ids = |e: &Engine<&MemoryStore, Emb>| e.corpus().documents().into_iter().map(|d| d.id).collect::<Vec<_>>();
            assert_eq!(ids(e), ids(&fresh));
        }
    });
}

#[test]
fn open_repairs_stale_derived_data() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut a = tab(&store).await;
        a.engine().await.unwrap().add(vec![note(1), note(2)], &mut NoProgress).await.expect("add");
        let good = a.engine().await.unwrap().graph().dump();
        // What a stale writer (or a crash of an older build) left: an edge to a deleted node,
        // a tree cycle, a second parent, an edge of the wrong kind, a chunk without its vector.
        let nodes = store.load().await.unwrap().graph_nodes;
        let topic = nodes.iter().find(|n| n.kind == NodeKind::Topic).expect("a topic").id.clone();
        let leaf = nodes.iter().find(|n| n.kind == NodeKind::Fact).expect("a fact").id.clone();
        let edge = |kind: EdgeKind, parent: &str, child: &str| {
            let mut r = GraphEdgeRecord { id: String::new(), parent: parent.into(), child: child.into(), kind, ordinal: 0 };
            r.id = r.key().id();
            Op::Put(Record::GraphEdge(r))
        };
        let chunk = store.load().await.unwrap().chunks[0].id.clone();
        store
            .commit(vec![
                edge(EdgeKind::Similar, "st:gone", &topic),
                edge(EdgeKind::Tree, &leaf, &topic),
                edge(EdgeKind::Tree, &topic, &topic),
                edge(EdgeKind::Mention, &topic, &leaf),
                Op::Delete(Collection::Vectors, chunk.clone()),
            ])
            .await
            .unwrap();
        let e = Engine::open(&store, embedder(), Config::default(), Box::new(FixedClock(1.0))).await.expect("open repairs");
        assert_eq!(e.graph().dump(), good, "the bad edges were dropped");
        let stored = store.load().await.unwrap();
        assert_eq!(stored.graph_edges.len(), good.1.len(), "and deleted from the store");
        assert!(stored.vectors.iter().any(|v| v.id == chunk), "the chunk's vector was embedded again");
        let hits = e.search("starter flour", &SearchOptions::new(5, SearchMode::Dense)).await.unwrap();
        assert_eq!(hits.len(), 4.min(e.stats().chunks));
    });
}

/// Another tab's commit, run once.
type Commit<'a> = Box<dyn FnOnce() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + 'a>> + 'a>;

/// An embedder that counts the texts it embeds and, during its first call, lets another tab
/// commit (a write landing while this tab's batch is in its forward passes).
struct Interrupted<'a> {
    inner: Emb,
    texts: std::cell::Cell<usize>,
    other: std::cell::RefCell<Option<Commit<'a>>>,
}

impl webrag::embed::Embedder for Interrupted<'_> {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn max_tokens(&self) -> usize {
        self.inner.max_tokens()
    }
    fn token_counter(&self) -> &dyn webrag::text::TokenCounter {
        self.inner.token_counter()
    }
    async fn embed(&self, texts: &[&str]) -> webrag::error::Result<Vec<Vec<f32>>> {
        self.texts.set(self.texts.get() + texts.len());
        let other = self.other.borrow_mut().take();
        if let Some(commit) = other {
            commit().await;
        }
        self.inner.embed(texts).await
    }
}

/// A batch whose commit meets another tab's commit (made while the batch was being embedded) is
/// planned again against the store as it now is and committed with the vectors it already has:
/// no text is embedded twice, and both tabs' documents are kept.
#[test]
fn a_conflicting_add_plans_again_without_embedding_again() {
    use std::rc::Rc;
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut other = tab(&store).await;
        other.add(vec![note(0)], &mut NoProgress).await.unwrap();
        let other = futures::lock::Mutex::new(other);
        let emb = Rc::new(Interrupted { inner: embedder(), texts: Default::default(), other: Default::default() });
        let lazy = LazyEngine::open(&store, emb.clone(), Config::default(), Box::new(FixedClock(1.0))).await.unwrap();
        let shared = futures::lock::Mutex::new(lazy);
        let other = &other;
        *emb.other.borrow_mut() = Some(Box::new(move || {
            Box::pin(async move {
                other.lock().await.add(vec![note(1)], &mut NoProgress).await.expect("the other tab's write");
            })
        }));
        let batch = vec![doc("mine", "# Rye bread\n\nRye needs a long, cool rise.\n\nShape it wet.\n")];
        let report = webrag::engine::add_shared(&shared, batch.clone(), &mut NoProgress).await.expect("planned again, committed");
        assert_eq!(report.added, vec!["mine".to_string()]);
        assert!(emb.other.borrow().is_none(), "the other tab committed during the forward passes");
        let embedded = emb.texts.get();
        // What one plan of this batch embeds, counted on a fresh store.
        let fresh = MemoryStore::new();
        let once = Rc::new(Interrupted { inner: embedder(), texts: Default::default(), other: Default::default() });
        let mut solo = LazyEngine::open(&fresh, once.clone(), Config::default(), Box::new(FixedClock(1.0))).await.unwrap();
        solo.add(batch, &mut NoProgress).await.unwrap();
        assert_eq!(embedded, once.texts.get(), "the retry embedded nothing again");
        let ids: Vec<String> = store.load().await.unwrap().documents.into_iter().map(|d| d.id).collect();
        assert!(ids.contains(&"mine".to_string()) && ids.iter().filter(|i| i.starts_with("note|")).count() == 2, "{ids:?}");
    })
}
