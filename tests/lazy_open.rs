#![cfg(not(target_arch = "wasm32"))]
//! Opening lazily from the stored index segments (docs/vector-index.md, "Index segments"): what a
//! lazy open answers against the loaded engine and an exact scan, over ~12k chunks of the CRUD
//! news corpus with hashing vectors (the real tokenizer, no BERT: fast); the delta written with
//! every write (adds, replacements, removals after the base); and every way the segments can be
//! wrong (a corrupt head, a missing block, a corrupt question head) falling back to the full open;
//! atomic questions in the base and written since.
use crate::common;

use std::collections::HashSet;

use webrag::config::Config;
use webrag::embed::Embedder;
use webrag::embed::hashing::HashingEmbedder;
use webrag::engine::{Engine, LazyEngine, SearchOptions};
use webrag::ports::{Collection, FixedClock, MemoryStore, NoProgress, Op, Record, Store};
use webrag::schema::SegmentRecord;
use webrag::types::{DocumentInput, Format, Hit, SearchMode};

pub(crate) type Emb = HashingEmbedder<'static>;

pub(crate) fn embedder() -> Emb {
    HashingEmbedder::new(common::model())
}

pub(crate) fn config() -> Config {
    Config { graph: webrag::graph::GraphParams { enabled: false, ..Default::default() }, lazy_open_chunks: 1, ..Config::default() }
}

pub(crate) fn doc(id: &str, text: &str) -> DocumentInput {
    DocumentInput { id: id.into(), title: None, text: text.into(), format: Format::Text, ..Default::default() }
}

/// 12-character spans of every `step`-th article, as the scale benchmark asks.
pub(crate) fn queries(articles: &[String], step: usize) -> Vec<String> {
    articles.iter().step_by(step).map(|a| a.chars().skip(40).take(12).collect()).collect()
}

async fn loaded(store: &MemoryStore) -> Engine<&MemoryStore, Emb> {
    Engine::open(store, embedder(), config(), Box::new(FixedClock(1.0))).await.expect("open")
}

pub(crate) async fn lazy(store: &MemoryStore) -> LazyEngine<&MemoryStore, Emb> {
    LazyEngine::open(store, embedder(), config(), Box::new(FixedClock(1.0))).await.expect("lazy open")
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The exact top `k` chunk ids by inner product (a flat scan of every stored vector).
fn exact_top(eng: &Engine<&MemoryStore, Emb>, q: &[f32], k: usize) -> HashSet<String> {
    let mut all: Vec<(f32, String)> = eng
        .corpus()
        .documents()
        .iter()
        .flat_map(|d| eng.corpus().chunk_ids(&d.id).to_vec())
        .map(|c| (dot(q, eng.chunk_vector(&c).expect("vector")), c))
        .collect();
    all.sort_by(|a, b| b.0.total_cmp(&a.0));
    all.into_iter().take(k).map(|x| x.1).collect()
}

pub(crate) fn ids(h: &[Hit]) -> Vec<String> {
    h.iter().map(|h| h.chunk_id.clone()).collect()
}

pub(crate) fn overlap(a: &[Hit], b: &[Hit]) -> f64 {
    let a: HashSet<_> = ids(a).into_iter().collect();
    b.iter().filter(|h| a.contains(&h.chunk_id)).count() as f64 / b.len().max(1) as f64
}

/// Builds a knowledge base of `n` articles with its segments stored.
pub(crate) async fn build(store: &MemoryStore, articles: &[String]) {
    let mut eng = loaded(store).await;
    for (i, batch) in articles.chunks(500).enumerate() {
        let docs = batch.iter().enumerate().map(|(j, t)| doc(&format!("n{}", i * 500 + j), t)).collect();
        eng.add(docs, &mut NoProgress).await.expect("add");
    }
    let steps = eng.maintain_all(false).await.expect("maintain");
    assert!(steps.iter().any(|s| s.collection == webrag::engine::Sealed::Segments), "a base is built: {steps:?}");
}

#[test]
fn lazy_open_answers_as_the_loaded_engine() {
    // Its dense recall bound is about real text: IVF lists over generated articles (no meaning,
    // hashed vectors) probe worse than over news, so this one needs the corpus.
    if common::shared_data("data/crud_news").is_none() {
        return;
    }
    pollster::block_on(async {
        let articles = common::news(2500);
        let store = MemoryStore::new();
        build(&store, &articles).await;
        let full = loaded(&store).await;
        let mut lz = lazy(&store).await;
        assert!(lz.is_lazy());
        let (a, b) = (full.stats(), lz.stats().expect("stats"));
        assert!(b.lazy && !a.lazy);
        assert_eq!((a.documents, a.chunks, a.terms), (b.documents, b.chunks, b.terms));
        assert!(a.chunks > 8 * webrag::index::segment::LIST_SIZE, "more IVF lists than a query probes: {}", a.chunks);

        let qs = queries(&articles, 25);
        let (mut dense_lazy, mut dense_full, mut hybrid) = (0.0, 0.0, 0.0);
        for q in &qs {
            // BM25: the same hits with the same scores (no tombstones yet).
            let o = SearchOptions::new(10, SearchMode::Bm25);
            let (x, y) = (full.search(q, &o).await.expect("bm25"), lz.search(q, &o).await.expect("lazy bm25"));
            assert_eq!(ids(&x), ids(&y), "{q}");
            for (h, g) in x.iter().zip(&y) {
                assert_eq!(h.score, g.score, "{q}");
                assert_eq!((&h.title, &h.snippet, &h.heading_path), (&g.title, &g.snippet, &g.heading_path));
            }
            // Grouped by document, the segments give the loaded engine's documents and sections.
            let o = SearchOptions { group: webrag::types::Grouping::Document, ..SearchOptions::new(10, SearchMode::Bm25) };
            assert_eq!(full.search(q, &o).await.expect("bm25 documents"), lz.search(q, &o).await.expect("lazy bm25 documents"), "{q}");
            // Dense: recall@10 of both against an exact scan (the loaded engine's fresh buffer
            // is exact only before sealing, so compare with the flat scan of every vector).
            let qv = embedder().embed(&[q.as_str()]).await.expect("embed").remove(0);
            let exact = exact_top(&full, &qv, 10);
            let o = SearchOptions::new(10, SearchMode::Dense);
            let (x, y) = (full.search(q, &o).await.expect("dense"), lz.search(q, &o).await.expect("lazy dense"));
            let hit = |h: &[Hit]| h.iter().filter(|h| exact.contains(&h.chunk_id)).count() as f64 / 10.0;
            dense_full += hit(&x);
            dense_lazy += hit(&y);
            for g in &y {
                let s = g.scores.dense.expect("dense score");
                // The IVF lists hold 12-bit values: the score is the f32 cosine within 2e-3.
                assert!((s - dot(&qv, full.chunk_vector(&g.chunk_id).expect("vector"))).abs() < 2e-3, "dense score {s}");
            }
            let o = SearchOptions::new(10, SearchMode::Hybrid);
            hybrid += overlap(&full.search(q, &o).await.expect("hybrid"), &lz.search(q, &o).await.expect("lazy hybrid"));
        }
        let n = qs.len() as f64;
        println!(
            "{} chunks, {} queries: dense recall@10 vs exact — loaded {:.3}, lazy {:.3}; hybrid top-10 overlap lazy/loaded {:.3}",
            a.chunks,
            qs.len(),
            dense_full / n,
            dense_lazy / n,
            hybrid / n
        );
        // Both dense lists are approximate (HNSW, IVF), so their hybrids differ where the dense
        // lists do; the lazy one must be no worse than the loaded one against the exact scan.
        assert!(dense_lazy >= dense_full - 0.02 * n, "lazy dense recall@10 {:.3} vs loaded {:.3}", dense_lazy / n, dense_full / n);
        assert!(hybrid / n >= 0.8, "hybrid overlap {:.3}", hybrid / n);
        // Syntax: an excluded term and a phrase filter lazily as they do loaded.
        let q = format!("\"{}\" -{}", qs[0].chars().take(4).collect::<String>(), qs[1].chars().take(2).collect::<String>());
        let o = SearchOptions::new(10, SearchMode::Hybrid);
        assert_eq!(ids(&full.search(&q, &o).await.unwrap()), ids(&lz.search(&q, &o).await.unwrap()), "{q}");
        // The graph modes read the (here empty) pseudo-graph alone: graph finds nothing on either,
        // and hybrid+graph is each engine's hybrid (whose dense list is approximate, HNSW or IVF,
        // so the two engines' may differ, as the overlap above allows).
        let o = SearchOptions::new(5, SearchMode::Graph);
        assert_eq!(ids(&full.search(&qs[0], &o).await.expect("graph")), Vec::<String>::new());
        assert_eq!(ids(&lz.search(&qs[0], &o).await.expect("lazy graph")), Vec::<String>::new());
        let (o, h) = (SearchOptions::new(5, SearchMode::HybridGraph), SearchOptions::new(5, SearchMode::Hybrid));
        assert_eq!(ids(&full.search(&qs[0], &o).await.expect("hybrid+graph")), ids(&full.search(&qs[0], &h).await.expect("hybrid")));
        assert_eq!(ids(&lz.search(&qs[0], &o).await.expect("lazy hybrid+graph")), ids(&lz.search(&qs[0], &h).await.expect("lazy hybrid")));
        assert!(lz.is_lazy(), "nothing so far needed the whole knowledge base");
    })
}

/// A document of part `i`: tagged `t{i % 5}` (every third also `Even`, a tag in another case),
/// with metadata `part = i % 3`.
fn tagged(id: &str, i: usize, text: &str) -> DocumentInput {
    let mut tags = vec![format!("t{}", i % 5)];
    if i.is_multiple_of(3) {
        tags.push("Even".into());
    }
    let meta = [("part".to_string(), (i % 3).to_string())].into();
    DocumentInput { tags, meta, ..doc(id, text) }
}

#[test]
fn a_filtered_search_reads_its_documents_not_the_whole_base() {
    use webrag::types::SearchFilter;
    pollster::block_on(async {
        let mut articles = common::news(902);
        let extra = articles.split_off(900);
        let store = MemoryStore::new();
        let mut eng = loaded(&store).await;
        let docs = articles.iter().enumerate().map(|(i, t)| tagged(&format!("n{i}"), i, t)).collect();
        eng.add(docs, &mut NoProgress).await.expect("add");
        eng.maintain_all(false).await.expect("maintain");
        drop(eng);
        let mut lz = lazy(&store).await;
        // Writes after the base: a tagged document in the delta, one removed (a tombstone).
        lz.add(vec![tagged("fresh", 2, &extra[0]), tagged("n3", 3, &extra[1])], &mut NoProgress).await.expect("add");
        lz.remove(&["n5".into()]).await.expect("remove");
        assert!(lz.is_lazy());
        let full = loaded(&store).await;
        let filters = [
            SearchFilter { doc_ids: vec!["n1".into(), "n2".into(), "fresh".into(), "n5".into(), "missing".into()], ..Default::default() },
            SearchFilter { tags: vec!["T2".into()], ..Default::default() },
            SearchFilter { tags: vec!["even".into()], meta: [("part".into(), "0".into())].into(), ..Default::default() },
            SearchFilter { meta: [("part".into(), "1".into())].into(), ..Default::default() },
            SearchFilter { tags: vec!["nothing".into()], ..Default::default() },
        ];
        let records: std::collections::HashMap<String, webrag::schema::DocumentRecord> =
            store.load().await.expect("load").documents.into_iter().map(|d| (d.id.clone(), d)).collect();
        let mut compared = 0;
        for q in queries(&articles, 60) {
            let qv = embedder().embed(&[q.as_str()]).await.expect("embed").remove(0);
            for f in &filters {
                for mode in [SearchMode::Bm25, SearchMode::Dense, SearchMode::Hybrid, SearchMode::HybridGraph] {
                    let o = SearchOptions { filter: Some(f.clone()), ..SearchOptions::new(10, mode) };
                    let x = full.search_with(&q, Some(&qv), &o).expect("loaded");
                    let y = lz.search_with(&q, Some(&qv), &o).await.expect("lazy");
                    // The same chunks in the same order (BM25's idf counts the tombstone lazily,
                    // which moves scores by a hair, not the order here); dense scores exact.
                    assert_eq!(ids(&x), ids(&y), "{q} {f:?} {mode:?}");
                    for (h, g) in x.iter().zip(&y) {
                        assert_eq!(h.scores.dense, g.scores.dense, "{q}");
                        assert!(records.get(&g.doc_id).is_some_and(|d| f.matches(d)), "{q}: {} passes {f:?}", g.doc_id);
                    }
                    compared += y.len();
                }
            }
        }
        assert!(compared > 300, "{compared} filtered hits compared");
        assert!(lz.is_lazy(), "filtered searches did not load the knowledge base");
    })
}

#[test]
fn writes_after_the_base_are_in_the_delta() {
    pollster::block_on(async {
        let articles = common::news(300);
        let store = MemoryStore::new();
        build(&store, &articles).await;
        // A write through a lazily opened knowledge base records its delta without loading it.
        let mut lz = lazy(&store).await;
        assert!(lz.is_lazy());
        lz.add(
            vec![doc("fresh", "Owls hunt the harvest mouse at night in tall grass."), doc("n3", "A replaced article about green tea.")],
            &mut NoProgress,
        )
        .await
        .expect("add");
        lz.remove(&["n5".into(), "n7".into()]).await.expect("remove");
        assert!(lz.is_lazy());
        let eng = lz.engine().await.expect("load");
        let want = eng.stats();
        drop(lz);
        let mut lz = lazy(&store).await;
        assert!(lz.is_lazy(), "the delta keeps the base usable");
        let got = lz.stats().unwrap();
        assert_eq!((got.documents, got.chunks), (want.documents, want.chunks));
        let full = loaded(&store).await;
        for (q, mode) in [("harvest mouse owls", SearchMode::Bm25), ("green tea", SearchMode::Hybrid), ("owls at night", SearchMode::Dense)]
        {
            let o = SearchOptions::new(10, mode);
            let (x, y) = (full.search(q, &o).await.unwrap(), lz.search(q, &o).await.unwrap());
            assert!(!y.is_empty(), "{q}");
            assert!(y.iter().all(|h| h.doc_id != "n5" && h.doc_id != "n7"), "removed documents stay removed: {q}");
            assert_eq!(ids(&x)[0], ids(&y)[0], "{q}");
        }
        let top = lz.search("harvest mouse owls", &SearchOptions::new(3, SearchMode::Bm25)).await.unwrap();
        assert_eq!(top[0].doc_id, "fresh");
        let tea = lz.search("replaced article green tea", &SearchOptions::new(3, SearchMode::Bm25)).await.unwrap();
        assert_eq!(tea[0].doc_id, "n3", "the replacement, not the old text");
        // Past the rebuild size the next upkeep writes a new base with an empty delta.
        let eng = lz.engine().await.unwrap();
        let more: Vec<DocumentInput> = common::news(3000)[300..].iter().enumerate().map(|(i, t)| doc(&format!("m{i}"), t)).collect();
        eng.add(more, &mut NoProgress).await.unwrap();
        let steps = eng.maintain_all(false).await.unwrap();
        assert!(steps.iter().any(|s| s.collection == webrag::engine::Sealed::Segments));
        let Some(Record::Segment(d)) = store.get(Collection::Segments, "delta").await.unwrap() else { panic!("delta") };
        let d: webrag::index::segment::Delta = webrag::index::segment::decode(&d.data).unwrap();
        assert!(d.added.is_empty() && d.removed.is_empty());
    })
}

#[test]
fn bad_segments_fall_back_to_the_full_open() {
    pollster::block_on(async {
        let articles = common::news(200);
        let store = MemoryStore::new();
        build(&store, &articles).await;
        let q = queries(&articles, 40);
        let want: Vec<Vec<String>> = {
            let full = loaded(&store).await;
            let mut v = Vec::new();
            for q in &q {
                v.push(ids(&full.search(q, &SearchOptions::new(10, SearchMode::Bm25)).await.unwrap()));
            }
            v
        };
        // A postings block gone: the search that needs it loads the knowledge base instead.
        let blocks: Vec<String> =
            store.load().await.unwrap().segments.into_iter().map(|s| s.id).filter(|id| id.starts_with("t/")).collect();
        store.commit(blocks.iter().map(|b| Op::Delete(Collection::Segments, b.clone())).collect()).await.unwrap();
        let mut lz = lazy(&store).await;
        assert!(lz.is_lazy());
        assert_eq!(ids(&lz.search(&q[0], &SearchOptions::new(10, SearchMode::Bm25)).await.unwrap()), want[0]);
        assert!(!lz.is_lazy(), "loaded after the missing block");
        // …whose open sees the base is incomplete, and upkeep writes a whole new one.
        let eng = lz.engine().await.unwrap();
        assert!(eng.needs_maintenance());
        eng.maintain_all(false).await.unwrap();
        let mut lz = lazy(&store).await;
        assert!(lz.is_lazy());
        for (q, w) in q.iter().zip(&want) {
            assert_eq!(&ids(&lz.search(q, &SearchOptions::new(10, SearchMode::Bm25)).await.unwrap()), w, "{q}");
        }
        // A head that does not decode: a full open, the same answers.
        store.commit(vec![Op::Put(Record::Segment(SegmentRecord { id: "head".into(), data: vec![0xff; 7] }))]).await.unwrap();
        let mut lz = lazy(&store).await;
        assert!(!lz.is_lazy());
        assert_eq!(ids(&lz.search(&q[1], &SearchOptions::new(10, SearchMode::Bm25)).await.unwrap()), want[1]);
        // Atomic questions keep the base (their chunk joins the question delta) and a lazy open
        // reads them; a question head that does not decode: a full open.
        let eng = lz.engine().await.unwrap();
        eng.maintain_all(false).await.unwrap();
        let cid = eng.corpus().chunk_ids("n0")[0].clone();
        eng.enrichment().put_questions(vec![(cid, vec!["What happened?".into()])]).await.unwrap();
        assert!(!store.load().await.unwrap().segments.is_empty());
        let with_questions = lazy(&store).await;
        assert!(with_questions.is_lazy());
        assert_eq!(with_questions.stats().unwrap().questions, 1);
        store.commit(vec![Op::Put(Record::Segment(SegmentRecord { id: "q/head".into(), data: vec![0xff; 7] }))]).await.unwrap();
        assert!(!lazy(&store).await.is_lazy());
    })
}

/// `(chunk, question)` of atomic hits.
pub(crate) fn atoms(h: &[webrag::engine::AtomicHit]) -> Vec<(String, String)> {
    h.iter().map(|h| (h.chunk_id.clone(), h.question.clone())).collect()
}

/// A knowledge base with atomic questions opens lazily: the base holds the questions' IVF lists
/// and a lazy atomic search finds each question as the loaded engine does; questions written
/// after the base (a chunk's replaced, a new chunk's) are read at open and the replaced ones no
/// longer count; a lazy remove drops a document's questions; the ask pipeline's atomic
/// candidates come from the lazy view; and nothing loads the knowledge base.
#[test]
fn a_base_with_atomic_questions_opens_lazily() {
    use webrag::ask::KnowledgeBase;
    pollster::block_on(async {
        let store = MemoryStore::new();
        let articles = common::news(150);
        let mut eng = loaded(&store).await;
        let docs = articles.iter().enumerate().map(|(i, t)| doc(&format!("n{i}"), t)).collect();
        eng.add(docs, &mut NoProgress).await.expect("add");
        // Two questions on every third chunk: spans of its own text (past the articles' dateline).
        let ids: Vec<String> = eng.corpus().chunk_ids_in_order().cloned().collect();
        let items: Vec<(String, Vec<String>)> = ids
            .iter()
            .step_by(3)
            .map(|c| {
                let text: Vec<char> = eng.corpus().chunk(c).unwrap().text.chars().collect();
                let span = |from: usize| text.iter().skip(from).take(24).collect::<String>();
                (c.clone(), vec![span(text.len() / 3), span(text.len() * 2 / 3)])
            })
            .collect();
        eng.enrichment().put_questions(items.clone()).await.expect("questions");
        let steps = eng.maintain_all(false).await.expect("maintain");
        assert!(steps.iter().any(|s| s.collection == webrag::engine::Sealed::Segments), "a base with questions: {steps:?}");
        assert!(store.load().await.unwrap().segments.iter().any(|r| r.id == "q/head"));
        let full = loaded(&store).await;
        let mut lz = lazy(&store).await;
        assert!(lz.is_lazy());
        let (ls, fs) = (lz.stats().unwrap(), full.stats());
        assert_eq!((ls.questions, ls.atomized_chunks), (fs.questions, fs.atomized_chunks));
        // Each question (of a sample) finds its own chunk first, lazily as loaded.
        let (mut same, mut found) = (0, [0usize; 2]);
        let sample: Vec<(&String, &String)> = items.iter().step_by(7).flat_map(|(c, qs)| qs.iter().map(move |q| (c, q))).collect();
        for (c, q) in &sample {
            let qv = embedder().embed_checked(&[q.as_str()]).await.unwrap().pop().unwrap();
            let (x, y) = (full.ask_store().atomic_search(&qv, 5, 0.0), lz.atomic_search(&qv, 5, 0.0).await.unwrap());
            assert_eq!(y.first().map(|h| &h.chunk_id), Some(*c), "{q}");
            same += usize::from(atoms(&x[..1]) == atoms(&y[..1]));
            // The `atomic` search mode ranks with them too (dense fused with the questions' list).
            let o = SearchOptions::new(5, SearchMode::Atomic);
            let (x, y) = (full.search(q, &o).await.unwrap(), lz.search(q, &o).await.unwrap());
            for (n, h) in found.iter_mut().zip([&x, &y]) {
                *n += usize::from(h.iter().any(|h| h.chunk_id == **c));
            }
        }
        assert!(
            found[1] * 10 >= sample.len() * 9 && found[1] + 1 >= found[0],
            "atomic mode finds the question's chunk: {found:?} of {}",
            sample.len()
        );
        assert_eq!(same, sample.len(), "the same first hit lazily and loaded");
        drop(full);
        // Questions written after the base: a base chunk's replaced, an unatomized chunk's added.
        let (old_chunk, old_qs) = items[1].clone();
        let fresh_chunk = ids[1].clone();
        let mut eng = loaded(&store).await;
        eng.enrichment()
            .put_questions(vec![
                (old_chunk.clone(), vec!["Which owl hunts the harvest mouse at dawn?".into()]),
                (fresh_chunk.clone(), vec!["Where does green tea grow on hills?".into()]),
            ])
            .await
            .unwrap();
        drop(eng);
        let mut lz = lazy(&store).await;
        assert!(lz.is_lazy());
        let search = |q: &'static str| async move { embedder().embed_checked(&[q]).await.unwrap().pop().unwrap() };
        let hits = lz.atomic_search(&search("Which owl hunts the harvest mouse at dawn?").await, 3, 0.0).await.unwrap();
        assert_eq!(atoms(&hits[..1]), [(old_chunk.clone(), "Which owl hunts the harvest mouse at dawn?".to_string())]);
        let hits = lz.atomic_search(&search("Where does green tea grow on hills?").await, 3, 0.0).await.unwrap();
        assert_eq!(hits[0].chunk_id, fresh_chunk);
        for q in &old_qs {
            let qv = embedder().embed_checked(&[q.as_str()]).await.unwrap().pop().unwrap();
            let hits = lz.atomic_search(&qv, 10, 0.0).await.unwrap();
            assert!(hits.iter().all(|h| h.question != *q), "a replaced question no longer counts: {q}");
        }
        let (s, f) = (lz.stats().unwrap(), loaded(&store).await.stats());
        assert_eq!((s.questions, s.atomized_chunks), (f.questions, f.atomized_chunks));
        assert_eq!(s.questions, items.len() * 2 - 2 + 1 + 1);
        // The ask pipeline's atomic candidates, lazily.
        let c = lz.atomic_candidates("Which owl hunts the harvest mouse at dawn?", 3, 0.0).await.unwrap();
        assert_eq!(c.first().map(|c| &c.chunk_id), Some(&old_chunk));
        // A lazy remove of the document drops its questions.
        let doc_of = old_chunk.rsplit_once('#').unwrap().0.to_string();
        lz.remove(&[doc_of]).await.unwrap();
        let hits = lz.atomic_search(&search("Which owl hunts the harvest mouse at dawn?").await, 10, 0.0).await.unwrap();
        assert!(hits.iter().all(|h| h.chunk_id != old_chunk));
        assert!(lz.is_lazy(), "nothing loaded the knowledge base");
        let (s, f) = (lz.stats().unwrap(), loaded(&store).await.stats());
        assert_eq!((s.questions, s.atomized_chunks), (f.questions, f.atomized_chunks));
    })
}

/// An export of a lazily opened knowledge base reads the store a page at a time and never loads
/// it: the same file as the loaded engine's export, which imports into a knowledge base that
/// answers as the lazy one does.
#[test]
fn export_while_lazy_does_not_load_the_knowledge_base() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        build(&store, &common::news(100)).await;
        let lz = lazy(&store).await;
        assert!(lz.is_lazy());
        let file = lz.export_kb().await.expect("export");
        assert!(lz.is_lazy(), "the export did not load the knowledge base");
        assert!(file == loaded(&store).await.export_kb().await.expect("export"), "the same file as the loaded engine's");
        let other = MemoryStore::new();
        let mut eng = loaded(&other).await;
        eng.import_kb(&file).await.expect("import");
        let mut lz = lz;
        for q in queries(&common::news(100), 10) {
            let o = SearchOptions::new(5, SearchMode::Bm25);
            assert_eq!(ids(&eng.search(&q, &o).await.unwrap()), ids(&lz.search(&q, &o).await.unwrap()), "{q}");
        }
    })
}

#[test]
fn clear_while_lazy_does_not_load_what_it_deletes() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        build(&store, &common::news(100)).await;
        let mut lz = lazy(&store).await;
        assert!(lz.is_lazy());
        lz.clear().await.expect("clear");
        let s = lz.stats().unwrap();
        assert_eq!((s.documents, s.chunks, s.lazy), (0, 0, false));
        let c = store.load().await.unwrap();
        assert!(c.chunks.is_empty() && c.segments.is_empty() && !c.meta.is_empty(), "emptied, the model recorded again");
    })
}

/// A load that fails after a lazy open (here the store now names another model) leaves the engine
/// unusable with a typed error — `MODEL_MISMATCH` for the load, then `STORE_BACKEND` ("open it
/// again") for every later call — never a panic.
#[test]
fn a_failed_load_is_a_typed_error_then_store_backend() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        build(&store, &common::news(100)).await;
        let mut lz = lazy(&store).await;
        assert!(lz.is_lazy());
        let meta = webrag::schema::MetaRecord { id: "dim".into(), value: "768".into() };
        store.commit(vec![Op::Put(Record::Meta(meta))]).await.unwrap();
        assert_eq!(lz.engine().await.err().expect("mismatch").code(), "MODEL_MISMATCH");
        assert_eq!(lz.engine().await.err().expect("failed").code(), "STORE_BACKEND");
        assert_eq!(lz.stats().expect_err("failed").code(), "STORE_BACKEND");
        let q = SearchOptions::new(3, SearchMode::Hybrid);
        assert_eq!(lz.search("news", &q).await.expect_err("failed").code(), "STORE_BACKEND");
    })
}

/// A knowledge base indexed by another analyzer version (`meta.analyzer`; none was recorded before
/// version 2) derives its BM25 postings again when opened: a lazy open falls back to the full open,
/// which writes the current postings and drops the base built from the stale ones (upkeep builds a
/// new one), and a knowledge-base file of that version imports with the current postings. When the
/// postings come out the same, only the version is recorded and the base stays.
#[test]
fn postings_of_another_analyzer_version_are_derived_again() {
    use webrag::schema::PostingRecord;
    use webrag::text::ANALYZER_VERSION;
    pollster::block_on(async {
        let articles = common::news(200);
        let store = MemoryStore::new();
        build(&store, &articles).await;
        let qs = queries(&articles, 40);
        let bm25 = SearchOptions::new(10, SearchMode::Bm25);
        let mut want = Vec::new();
        {
            let full = loaded(&store).await;
            for q in &qs {
                want.push(ids(&full.search(q, &bm25).await.unwrap()));
            }
        }
        let analyzer = |c: &webrag::ports::Contents| c.meta.iter().find(|m| m.id == "analyzer").map(|m| m.value.clone());
        let current = store.load().await.unwrap();
        assert_eq!(analyzer(&current), Some(ANALYZER_VERSION.to_string()));

        // No version recorded, postings as the current analyzer gives them: the version is written,
        // the base stays.
        store.commit(vec![Op::Delete(Collection::Meta, "analyzer".into())]).await.unwrap();
        assert!(!lazy(&store).await.is_lazy(), "another version: the full open");
        let after = store.load().await.unwrap();
        assert_eq!(analyzer(&after), Some(ANALYZER_VERSION.to_string()));
        assert_eq!((after.postings.len(), after.segments.len()), (current.postings.len(), current.segments.len()));
        assert!(lazy(&store).await.is_lazy());

        // Stale postings (a term no text holds stands for another version's terms).
        let mut ops: Vec<Op> = current
            .postings
            .iter()
            .map(|p| Op::Put(Record::Posting(PostingRecord { terms: vec![("stale".into(), 1)], length: 1, ..p.clone() })))
            .collect();
        ops.push(Op::Delete(Collection::Meta, "analyzer".into()));
        store.commit(ops).await.unwrap();
        let old = store.load().await.unwrap();
        let file = webrag::kb_file::encode(&old, embedder().model_id(), embedder().dim(), flate2::Compression::fast()).unwrap();
        let mut lz = lazy(&store).await;
        assert!(!lz.is_lazy(), "another version: the full open");
        for (q, w) in qs.iter().zip(&want) {
            assert_eq!(&ids(&lz.search(q, &bm25).await.unwrap()), w, "{q}");
        }
        let repaired = store.load().await.unwrap();
        assert_eq!(analyzer(&repaired), Some(ANALYZER_VERSION.to_string()));
        assert_eq!(repaired.postings, current.postings, "the current analyzer's postings, stored");
        assert!(repaired.segments.is_empty(), "the base of the stale postings is gone");
        lz.engine().await.unwrap().maintain_all(false).await.unwrap();
        let mut lz = lazy(&store).await;
        assert!(lz.is_lazy(), "upkeep built a new base");
        for (q, w) in qs.iter().zip(&want) {
            assert_eq!(&ids(&lz.search(q, &bm25).await.unwrap()), w, "{q}");
        }

        // The knowledge-base file of the stale store imports with the current postings.
        let other = MemoryStore::new();
        let mut eng = loaded(&other).await;
        eng.import_kb(&file).await.expect("import");
        for (q, w) in qs.iter().zip(&want) {
            assert_eq!(&ids(&eng.search(q, &bm25).await.unwrap()), w, "{q}");
        }
        let imported = other.load().await.unwrap();
        assert_eq!(imported.postings, current.postings);
        assert_eq!(analyzer(&imported), Some(ANALYZER_VERSION.to_string()));
    })
}
