//! The `Store` conformance suite. Included by `tests/store_conformance.rs` (native: MemoryStore,
//! FileStore) and by `wasm-tests/browser.rs` (IndexedDB in headless Chromium), so every
//! implementation is held to the same contract.
#![allow(dead_code)]
use webrag::ports::{Collection, Op, Record, Store};
use webrag::schema::{
    AnnSegmentRecord, ChunkRecord, DocumentRecord, EdgeKind, GraphEdgeRecord, GraphNodeRecord, MemoryRecord, MetaRecord, NodeKind,
    QuestionRecord, TraceRecord, VectorRecord,
};

fn doc(id: &str) -> Record {
    Record::Document(DocumentRecord {
        id: id.into(),
        title: format!("title of {id}"),
        url: None,
        source_hash: "h".into(),
        added_at: 1.0,
        chunk_count: 1,
        status: "indexed".into(),
        mind_map: Some(webrag::schema::MindMapKind::Llm),
        tags: vec!["notes".into()],
        auto_tags: vec!["baking".into()],
        tagged: true,
        meta: [("lang".to_string(), "en".to_string())].into(),
        lang: Some("en".into()),
    })
}

fn chunk(id: &str, doc: &str) -> Record {
    Record::Chunk(ChunkRecord {
        id: id.into(),
        doc_id: doc.into(),
        ordinal: 0,
        heading_path: vec!["A".into(), "B — ü 中文".into()],
        text: "text with unicode: ünïcødé 中文 🚀".into(),
        token_count: 12,
        forward_summary: Some("What came before — ü.".into()),
    })
}

/// Runs every check against `store`, which must be empty. Panics on the first violation.
pub async fn run<S: Store>(store: &S) {
    // empty
    let c = store.load().await.expect("load empty");
    assert!(c.documents.is_empty() && c.chunks.is_empty() && c.meta.is_empty(), "store not empty at start");
    assert_eq!(store.get(Collection::Documents, "nope").await.expect("get"), None);

    // a batch across collections, read back exactly (incl. unicode and bytes)
    let v = VectorRecord::from_f32("d1#0", "chunks", &[0.5, -1.25, f32::MIN_POSITIVE, 3.0e38]);
    store
        .commit(vec![
            Op::Put(doc("d1")),
            Op::Put(chunk("d1#0", "d1")),
            Op::Put(Record::Vector(v.clone())),
            Op::Put(Record::Meta(MetaRecord { id: "schema".into(), value: "1".into() })),
        ])
        .await
        .expect("commit");
    assert_eq!(store.get(Collection::Documents, "d1").await.expect("get"), Some(doc("d1")));
    assert_eq!(store.get(Collection::Chunks, "d1#0").await.expect("get"), Some(chunk("d1#0", "d1")));
    let got = store.get(Collection::Vectors, "d1#0").await.expect("get");
    assert_eq!(got, Some(Record::Vector(v.clone())));
    if let Some(Record::Vector(g)) = got {
        assert_eq!(g.to_f32().expect("f32"), vec![0.5, -1.25, f32::MIN_POSITIVE, 3.0e38]);
    }

    // pseudo-graph records (schema 2), read back exactly
    let node = Record::GraphNode(GraphNodeRecord {
        id: "d1#f0".into(),
        kind: NodeKind::Fact,
        label: "Owls hunt at night — 夜".into(),
        doc_id: Some("d1".into()),
        chunk_id: Some("d1#0".into()),
    });
    let edge = Record::GraphEdge(GraphEdgeRecord::new(EdgeKind::Mention, "d1#f0", "d9#t", 0));
    store.commit(vec![Op::Put(node.clone()), Op::Put(edge.clone())]).await.expect("graph commit");
    assert_eq!(store.get(Collection::GraphNodes, "d1#f0").await.expect("get"), Some(node));
    assert_eq!(store.get(Collection::GraphEdges, "mention|d1#f0|d9#t").await.expect("get"), Some(edge));
    let c = store.load().await.expect("load");
    assert_eq!((c.graph_nodes.len(), c.graph_edges.len()), (1, 1));
    store
        .commit(vec![Op::Delete(Collection::GraphNodes, "d1#f0".into()), Op::Delete(Collection::GraphEdges, "mention|d1#f0|d9#t".into())])
        .await
        .expect("graph delete");

    // HNSW segment records (schema 3): bytes (every value 0..=255) and ids read back exactly
    let seg = Record::Ann(AnnSegmentRecord {
        id: AnnSegmentRecord::key("facts", 7),
        collection: "facts".into(),
        seq: 7,
        ids: vec!["d1#f0".into(), "d1#f1".into()],
        data: (0..=255u8).chain(0..=255u8).collect(),
        format: 1,
    });
    store.commit(vec![Op::Put(seg.clone())]).await.expect("ann commit");
    assert_eq!(store.get(Collection::Ann, "facts/0000000007").await.expect("get"), Some(seg));
    assert_eq!(store.load().await.expect("load").ann.len(), 1);
    store.commit(vec![Op::Delete(Collection::Ann, "facts/0000000007".into())]).await.expect("ann delete");

    // Schema 4: atomic questions, memory entries (embedding bytes), kept traces
    let q =
        Record::Question(QuestionRecord {
            id: "d1#0".into(), doc_id: "d1".into(), questions: vec!["Who? — ü".into(), "中文？".into()]
        });
    let m = Record::Memory(MemoryRecord {
        id: "m1".into(),
        title: "Who founded Acme?".into(),
        content: "Jane Roe".into(),
        sources: vec!["d1#0".into()],
        created_at: 2.5,
        embedding: (0..=255u8).collect(),
    });
    let t = Record::Trace(TraceRecord { id: "t1".into(), created_at: 3.0, question: "q".into(), json: "{\"events\":[]}".into() });
    store.commit(vec![Op::Put(q.clone()), Op::Put(m.clone()), Op::Put(t.clone())]).await.expect("schema 4 commit");
    assert_eq!(store.get(Collection::Questions, "d1#0").await.expect("get"), Some(q));
    assert_eq!(store.get(Collection::Memory, "m1").await.expect("get"), Some(m));
    assert_eq!(store.get(Collection::Traces, "t1").await.expect("get"), Some(t));
    let c = store.load().await.expect("load");
    assert_eq!((c.questions.len(), c.memory.len(), c.traces.len()), (1, 1, 1));
    store
        .commit(vec![
            Op::Delete(Collection::Questions, "d1#0".into()),
            Op::Delete(Collection::Memory, "m1".into()),
            Op::Delete(Collection::Traces, "t1".into()),
        ])
        .await
        .expect("schema 4 delete");

    // overwrite + ops apply in order (put then delete in one batch = absent)
    store.commit(vec![Op::Put(doc("d2")), Op::Delete(Collection::Documents, "d2".into()), Op::Put(doc("d3"))]).await.expect("commit");
    assert_eq!(store.get(Collection::Documents, "d2").await.expect("get"), None);
    assert!(store.get(Collection::Documents, "d3").await.expect("get").is_some());

    // deleting absent keys is fine
    store.commit(vec![Op::Delete(Collection::Chunks, "never".into())]).await.expect("delete absent");

    // load returns every collection, sorted by key
    store.commit(vec![Op::Put(doc("a0")), Op::Put(doc("z9"))]).await.expect("commit");
    let c = store.load().await.expect("load");
    let ids: Vec<_> = c.documents.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, vec!["a0", "d1", "d3", "z9"]);

    // scan_page: a collection a page at a time, in key order, after a key (exclusive)
    let page_ids = |p: Vec<Record>| p.iter().map(|r| r.key().to_string()).collect::<Vec<_>>();
    let page = |after: Option<&'static str>, limit: usize| store.scan_page(Collection::Documents, after, limit);
    assert_eq!(page_ids(page(None, 2).await.expect("page")), ["a0", "d1"]);
    assert_eq!(page_ids(page(Some("d1"), 2).await.expect("page")), ["d3", "z9"]);
    assert_eq!(page_ids(page(Some("d2"), 10).await.expect("page")), ["d3", "z9"], "after a key that is not stored");
    assert_eq!(page_ids(page(Some("z9"), 10).await.expect("page")), Vec::<String>::new(), "past the end");
    assert_eq!(page_ids(page(None, 0).await.expect("page")), Vec::<String>::new(), "limit 0");
    assert_eq!(page_ids(page(None, usize::MAX).await.expect("page")), ["a0", "d1", "d3", "z9"], "no limit");
    assert_eq!(page(None, 1).await.expect("page"), vec![doc("a0")], "the records themselves");
    assert!(store.scan_page(Collection::Traces, None, 10).await.expect("page").is_empty(), "an empty collection");
    // Paged through, the pages are the collection's scan.
    let mut paged = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let p = store.scan_page(Collection::Documents, after.as_deref(), 3).await.expect("page");
        let n = p.len();
        after = p.last().map(|r| r.key().to_string());
        paged.extend(p);
        if n < 3 {
            break;
        }
    }
    assert_eq!(
        paged,
        store
            .scan(Collection::Documents)
            .await
            .expect("scan")
            .into_ops()
            .into_iter()
            .filter_map(|o| if let Op::Put(r) = o { Some(r) } else { None })
            .collect::<Vec<_>>()
    );
    // scan: one collection, as load gives it; an empty one is empty
    let scanned = store.scan(Collection::Documents).await.expect("scan");
    assert_eq!(scanned, webrag::ports::Contents { documents: c.documents.clone(), ..Default::default() });
    assert_eq!(store.scan(Collection::Memory).await.expect("scan empty"), webrag::ports::Contents::default());
    assert_eq!(c.chunks.len(), 1);
    assert_eq!(c.vectors.len(), 1);
    assert_eq!(c.meta.len(), 1);

    // a larger batch (one transaction)
    let ops: Vec<Op> = (0..500).map(|i| Op::Put(chunk(&format!("big#{i:03}"), "big"))).collect();
    store.commit(ops).await.expect("big commit");
    assert_eq!(store.load().await.expect("load").chunks.len(), 501);

    // the generation check: a batch whose `CheckGeneration` does not hold writes nothing
    let generation = |g: u64| Op::Put(Record::Meta(MetaRecord { id: webrag::ports::GENERATION_KEY.into(), value: g.to_string() }));
    store.commit(vec![Op::CheckGeneration(0), generation(1)]).await.expect("absent counts as 0");
    let before = store.load().await.expect("load");
    let stale = store.commit(vec![Op::CheckGeneration(0), Op::Put(doc("stale")), generation(1)]).await;
    assert_eq!(stale, Err(webrag::error::StoreError::Conflict { expected: 0, found: 1 }));
    assert_eq!(store.load().await.expect("load"), before, "a refused batch writes nothing");
    store.commit(vec![Op::CheckGeneration(1), Op::Put(doc("fresh")), generation(2)]).await.expect("current generation");
    assert!(store.get(Collection::Documents, "fresh").await.expect("get").is_some());
    store
        .commit(vec![Op::Delete(Collection::Documents, "fresh".into()), Op::Delete(Collection::Meta, "generation".into())])
        .await
        .expect("undo");

    // clear
    store.clear().await.expect("clear");
    let c = store.load().await.expect("load");
    assert!(c.documents.is_empty() && c.chunks.is_empty() && c.vectors.is_empty() && c.meta.is_empty());
}
