#![cfg(not(target_arch = "wasm32"))]
//! The knowledge-base file (`export_kb` / `import_kb`) with the real model: an import answers
//! every retriever exactly as the exporting knowledge base did (also after a reopen), replaces
//! what was there in one commit, and a bad file — not ours, another model, records that do not
//! form a knowledge base — is a typed error that leaves the stored knowledge base untouched.
use crate::common;

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

/// A store of `n` documents with a chunk and a vector each, a `meta` generation record, three
/// sealed HNSW segments and up to 40 index segments.
async fn paged_store(n: usize) -> MemoryStore {
    use webrag::ports::{Op, Record};
    use webrag::schema::{ChunkRecord, DocumentRecord, MetaRecord, VectorRecord};
    let store = MemoryStore::new();
    let mut ops = vec![
        Op::Put(Record::Meta(MetaRecord { id: "schema".into(), value: webrag::schema::SCHEMA_VERSION.to_string() })),
        Op::Put(Record::Meta(MetaRecord { id: webrag::ports::GENERATION_KEY.into(), value: "7".into() })),
    ];
    for i in 0..n {
        let id = format!("d{i:05}");
        let cid = format!("{id}#0");
        ops.push(Op::Put(Record::Document(DocumentRecord {
            id: id.clone(),
            title: format!("title {i} — ü"),
            url: None,
            source_hash: "h".into(),
            added_at: 1.0,
            chunk_count: 1,
            status: "indexed".into(),
            mind_map: None,
            tags: Vec::new(),
            auto_tags: Vec::new(),
            tagged: false,
            meta: Default::default(),
            lang: None,
        })));
        let text = format!("text {i}");
        ops.push(Op::Put(Record::Chunk(ChunkRecord {
            id: cid.clone(),
            doc_id: id,
            ordinal: 0,
            heading_path: Vec::new(),
            text,
            token_count: 2,
            forward_summary: None,
        })));
        ops.push(Op::Put(Record::Vector(VectorRecord::from_f32(&cid, "chunks", &[i as f32, -1.0, 0.5]))));
    }
    // Large records, read a few at a time: sealed HNSW segments and index segments.
    for i in 0..3u64 {
        let ann = webrag::schema::AnnSegmentRecord {
            id: webrag::schema::AnnSegmentRecord::key("chunks", i),
            collection: "chunks".into(),
            seq: i,
            ids: vec![format!("d{i:05}#0")],
            data: (0..=255u8).cycle().take(1000 + i as usize).collect(),
            format: 1,
        };
        ops.push(Op::Put(Record::Ann(ann)));
    }
    for i in 0..(n.min(40)) {
        ops.push(Op::Put(Record::Segment(webrag::schema::SegmentRecord { id: format!("t/{i:05}"), data: vec![i as u8; 33] })));
    }
    store.commit(ops).await.expect("commit");
    store
}

/// The streamed export reads the store a page of `EXPORT_PAGE` records at a time and writes the
/// bytes `encode` writes of the whole store's contents (without the generation record), at page
/// boundaries too (a collection of exactly one page, one more, two pages); the file reads back
/// as those contents.
#[test]
fn the_streamed_export_writes_what_encode_writes() {
    pollster::block_on(async {
        let p = kb_file::EXPORT_PAGE;
        for n in [0, 1, p - 1, p, p + 1, 2 * p, 2 * p + 3] {
            let store = paged_store(n).await;
            let streamed = kb_file::export(&store, "m", 3, flate2::Compression::fast()).await.expect("export");
            let mut contents: Contents = store.load().await.expect("load");
            contents.meta.retain(|m| m.id != webrag::ports::GENERATION_KEY);
            let whole = kb_file::encode(&contents, "m", 3, flate2::Compression::fast()).expect("encode");
            assert!(streamed == whole, "{n} documents: the streamed file differs from the encoded one");
            let back = kb_file::decode(&streamed).expect("decode");
            assert_eq!(back.contents, contents, "{n} documents");
            assert_eq!((back.model.as_str(), back.dim), ("m", 3));
        }
    })
}

/// A store that commits a record (as another tab would) once it has served `after` pages.
struct WritesMidway<'a> {
    inner: &'a MemoryStore,
    pages: std::cell::Cell<usize>,
    after: usize,
}

impl webrag::ports::Store for WritesMidway<'_> {
    async fn get(&self, c: webrag::ports::Collection, k: &str) -> Result<Option<webrag::ports::Record>, webrag::error::StoreError> {
        self.inner.get(c, k).await
    }
    async fn scan_page(
        &self,
        c: webrag::ports::Collection,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<webrag::ports::Record>, webrag::error::StoreError> {
        self.pages.set(self.pages.get() + 1);
        if self.pages.get() == self.after {
            let next = webrag::ports::commit_guarded(
                self.inner,
                7,
                vec![webrag::ports::Op::Delete(webrag::ports::Collection::Documents, "d00001".into())],
            );
            next.await.expect("the other tab's commit");
        }
        self.inner.scan_page(c, after, limit).await
    }
    async fn load(&self) -> Result<Contents, webrag::error::StoreError> {
        self.inner.load().await
    }
    async fn commit(&self, ops: Vec<webrag::ports::Op>) -> Result<(), webrag::error::StoreError> {
        self.inner.commit(ops).await
    }
    async fn clear(&self) -> Result<(), webrag::error::StoreError> {
        self.inner.clear().await
    }
}

/// Another engine's commit while the pages are read makes the export a typed
/// `StoreError::Conflict` (the file would mix two states), not a file; read again, it succeeds.
#[test]
fn a_commit_during_a_streamed_export_is_a_conflict() {
    pollster::block_on(async {
        let store = paged_store(3 * kb_file::EXPORT_PAGE).await;
        let midway = WritesMidway { inner: &store, pages: std::cell::Cell::new(0), after: 4 };
        let first = kb_file::export(&midway, "m", 3, flate2::Compression::fast()).await;
        assert!(
            matches!(first, Err(webrag::error::Error::Store(webrag::error::StoreError::Conflict { expected: 7, found: 8 }))),
            "{first:?}"
        );
        let again = webrag::ports::retry_on_conflict(webrag::ports::WRITE_ATTEMPTS, async |_| {
            kb_file::export(&midway, "m", 3, flate2::Compression::fast()).await
        })
        .await
        .expect("read again");
        let back = kb_file::decode(&again).expect("decode");
        assert_eq!(back.contents.documents.len(), 3 * kb_file::EXPORT_PAGE - 1);
    })
}
