#![cfg(not(target_arch = "wasm32"))]
//! The knowledge-base file (`export_kb` / `import_kb`) with the real model: an import answers
//! every retriever exactly as the exporting knowledge base did (also after a reopen), replaces
//! what was there in one commit, and a bad file — not ours, another model, records that do not
//! form a knowledge base — is a typed error that leaves the stored knowledge base untouched.
mod common;

use webrag::config::Config;
use webrag::engine::{Engine, SearchOptions};
use webrag::kb_file;
use webrag::ports::{Contents, FixedClock, MemoryStore, NoProgress, Store};
use webrag::types::{DocumentInput, Format, Hit, SearchMode};

type Eng<'a> = Engine<&'a MemoryStore, &'static webrag::embed::CpuEmbedder>;

fn doc(id: &str, text: &str) -> DocumentInput {
    DocumentInput { id: id.into(), title: None, text: text.into(), format: Format::Auto, ..Default::default() }
}

fn corpus() -> Vec<DocumentInput> {
    vec![
        doc("notes/owls.md", "# Owls\n\nOwls are birds of prey that hunt at night.\n\n## Diet\n\nOwls often eat the Harvest mouse."),
        doc("a|b #c/d?e f 🦉", "The Harvest mouse is a small rodent of Europe and Asia. It builds woven nests in tall grass."),
        doc(&"x".repeat(1024), "Green tea is steeped at about 80 degrees Celsius. Longjing comes from Hangzhou."),
        doc("apollo", "Apollo 11 landed on the Moon in July 1969; Armstrong and Aldrin walked on the surface."),
    ]
}

async fn open(store: &MemoryStore) -> Eng<'_> {
    Engine::open(store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("open")
}

const QUERIES: [&str; 4] = ["what do owls eat", "rodent nests", "tea temperature", "moon landing 1969"];
const MODES: [SearchMode; 5] = [SearchMode::Bm25, SearchMode::Dense, SearchMode::Hybrid, SearchMode::Graph, SearchMode::HybridGraph];

async fn answers(eng: &Eng<'_>) -> Vec<Vec<Hit>> {
    let mut out = Vec::new();
    for q in QUERIES {
        for m in MODES {
            out.push(eng.search(q, &SearchOptions::new(5, m)).await.expect("search"));
        }
    }
    out
}

#[test]
fn import_answers_as_the_export_did() {
    pollster::block_on(async {
        let a_store = MemoryStore::new();
        let mut a = open(&a_store).await;
        a.add(corpus(), &mut NoProgress).await.unwrap();
        a.maintain_all(true).await.unwrap(); // sealed HNSW segments travel too
        a.add(vec![doc("late", "A late note about owls and mice, still in the fresh buffer.")], &mut NoProgress).await.unwrap();
        let want = answers(&a).await;
        assert!(want.iter().all(|h| !h.is_empty()));
        let bytes = a.export_kb().await.unwrap();

        // Into a knowledge base that already holds something: replaced whole.
        let b_store = MemoryStore::new();
        let mut b = open(&b_store).await;
        b.add(vec![doc("other", "Something unrelated about volcanoes.")], &mut NoProgress).await.unwrap();
        let stats = b.import_kb(&bytes).await.unwrap();
        assert_eq!(stats, a.stats());
        assert!(b.corpus().document("other").is_none());
        assert_eq!(answers(&b).await, want);
        // The store holds exactly the exported records (its own commit count aside).
        let without_generation = |mut c: Contents| {
            c.meta.retain(|m| m.id != webrag::ports::GENERATION_KEY);
            c
        };
        assert_eq!(without_generation(b_store.load().await.unwrap()), without_generation(a_store.load().await.unwrap()));
        drop(b);
        let b = open(&b_store).await;
        assert_eq!(answers(&b).await, want, "after a reopen");
    });
}

#[test]
fn bad_files_leave_the_knowledge_base_as_it_was() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut eng = open(&store).await;
        eng.add(corpus(), &mut NoProgress).await.unwrap();
        let before = store.load().await.unwrap();
        let want = answers(&eng).await;
        let good = kb_file::decode(&eng.export_kb().await.unwrap()).unwrap();

        let mut bad: Vec<(&str, Vec<u8>)> = vec![("KB_FILE_INVALID", b"plain text".to_vec())];
        bad.push(("MODEL_MISMATCH", kb_file::encode(&good.contents, "another/model", 384, flate2::Compression::default()).unwrap()));
        // A chunk whose vector is missing.
        let mut c: Contents = good.contents.clone();
        c.vectors.retain(|v| !v.id.starts_with("apollo#"));
        bad.push(("STORE_CORRUPT", kb_file::encode(&c, &good.model, good.dim, flate2::Compression::default()).unwrap()));
        // An edge to a node that is not there: stale derived data, dropped (below).
        let mut dangling = good.contents.clone();
        let gone =
            dangling.graph_nodes.iter().position(|n| dangling.graph_edges.iter().any(|e| e.child == n.id)).expect("a node with an edge");
        let gone = dangling.graph_nodes.remove(gone).id;
        // A store schema from the future.
        let mut c = good.contents.clone();
        c.meta.iter_mut().filter(|m| m.id == "schema").for_each(|m| m.value = "99".into());
        bad.push(("STORE_VERSION_TOO_NEW", kb_file::encode(&c, &good.model, good.dim, flate2::Compression::default()).unwrap()));
        // A document id `add` refuses (over 1,024 characters).
        let mut c = good.contents.clone();
        c.documents[0].id = "y".repeat(1025);
        bad.push(("KB_FILE_INVALID", kb_file::encode(&c, &good.model, good.dim, flate2::Compression::default()).unwrap()));
        // A gzip bomb: a valid start, then 300 MiB of one string.
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(
            &mut e,
            br#"{"format":"webrag-kb","version":2,"schema":4,"model":"m","dim":384,"contents":{"meta":[{"id":"x","value":""#,
        )
        .unwrap();
        for _ in 0..300 {
            std::io::Write::write_all(&mut e, &[b' '; 1 << 20]).unwrap();
        }
        bad.push(("KB_FILE_TOO_LARGE", e.finish().unwrap()));
        for (code, bytes) in bad {
            let err = eng.import_kb(&bytes).await.expect_err(code);
            assert_eq!(err.code(), code, "{err}");
            assert_eq!(store.load().await.unwrap(), before, "{code}: nothing written");
            assert_eq!(answers(&eng).await, want, "{code}: the indexes are as they were");
        }
        eng.import_kb(&kb_file::encode(&dangling, &good.model, good.dim, flate2::Compression::default()).unwrap())
            .await
            .expect("a file with a stale edge imports");
        let edges = store.load().await.unwrap().graph_edges;
        assert!(!edges.is_empty() && edges.iter().all(|e| e.child != gone && e.parent != gone), "the edges to {gone} were dropped");
        // A chunk of a document the file lacks, without its vector: the check's open drops it,
        // and what is written is what the check left (the read-back used to meet the chunk and
        // fail with STORE_CORRUPT after the swap). Found by the `import_swap` fuzz target.
        let mut orphan = good.contents.clone();
        let lost = orphan.chunks[0].id.clone();
        orphan.chunks[0].doc_id = "no such document".into();
        orphan.vectors.retain(|v| v.id != lost);
        eng.import_kb(&kb_file::encode(&orphan, &good.model, good.dim, flate2::Compression::default()).unwrap())
            .await
            .expect("a file with an orphan chunk imports");
        let stored = store.load().await.unwrap();
        assert!(stored.chunks.iter().all(|c| c.id != lost) && stored.postings.iter().all(|p| p.id != lost), "{lost} was dropped");
        assert_eq!(stored.chunks.len(), good.contents.chunks.len() - 1);

        // Records listed twice (a chunk, its vector, a graph edge): one record each, as a store
        // holds them; the import equals the one of the file without repeats.
        let clean = MemoryStore::new();
        open(&clean)
            .await
            .import_kb(&kb_file::encode(&good.contents, &good.model, good.dim, flate2::Compression::default()).unwrap())
            .await
            .unwrap();
        let mut twice = good.contents.clone();
        twice.chunks.push(twice.chunks[0].clone());
        twice.vectors.push(twice.vectors[0].clone());
        twice.graph_edges.push(twice.graph_edges[0].clone());
        twice.graph_edges.reverse();
        let dup = MemoryStore::new();
        let mut d = open(&dup).await;
        d.import_kb(&kb_file::encode(&twice, &good.model, good.dim, flate2::Compression::default()).unwrap())
            .await
            .expect("repeats import");
        let strip = |mut c: Contents| {
            c.meta.retain(|m| m.id != webrag::ports::GENERATION_KEY);
            c
        };
        assert_eq!(strip(dup.load().await.unwrap()), strip(clean.load().await.unwrap()), "no record lost to a repeat");
        drop(d);
        let reopened = open(&dup).await;
        assert_eq!(answers(&reopened).await, want, "the repeated file answers as the export did");
    });
}
