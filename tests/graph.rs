#![cfg(not(target_arch = "wasm32"))]
//! The pseudo-graph in the engine, with the real model: structural mind maps, super-topics,
//! entity links, persistence with the chunks (reopen gives the same graph), the graph and
//! hybrid+graph retrievers with provenance, and removal leaving no dangling id in memory or in
//! the store.
use crate::common;

use std::collections::HashSet;

use webrag::config::Config;
use webrag::embed::Embedder;
use webrag::engine::{Engine, SearchOptions};
use webrag::error::StoreError;
use webrag::ports::{Contents, FixedClock, MemoryStore, NoProgress, Store};
use webrag::schema::{EdgeKind, NodeKind};
use webrag::types::{DocumentInput, Format, SearchMode};

fn doc(id: &str, title: &str, text: &str) -> DocumentInput {
    DocumentInput { id: id.into(), title: Some(title.into()), text: text.into(), format: Format::Auto, ..Default::default() }
}

fn corpus() -> Vec<DocumentInput> {
    vec![
        DocumentInput {
            format: Format::Markdown,
            ..doc(
                "owls",
                "Owls",
                "# Owls\n\nOwls are birds of prey that hunt at night.\n\n## Diet\n\n- Field mice\n- Insects\n\nOwls often eat the Harvest mouse.",
            )
        },
        doc("mouse", "Harvest mouse", "The Harvest mouse is a small rodent of Europe and Asia. It builds woven nests in tall grass."),
        doc("owls-2", "Owls", "Owls have very good hearing. Many owls are nocturnal."),
        doc("tea", "Green tea", "Green tea is steeped at about 80 degrees Celsius. It comes from China."),
    ]
}

async fn open(store: &MemoryStore) -> Engine<&MemoryStore, &'static webrag::embed::CpuEmbedder> {
    Engine::open(store, common::model(), Config::default(), Box::new(FixedClock(1.0))).await.expect("open")
}

/// Every stored graph record points at stored records: edge ends are stored nodes, node vectors
/// belong to stored nodes or chunks, and no record names a document that is not stored.
fn assert_store_consistent(c: &Contents) {
    let docs: HashSet<&str> = c.documents.iter().map(|d| d.id.as_str()).collect();
    let nodes: HashSet<&str> = c.graph_nodes.iter().map(|n| n.id.as_str()).collect();
    let chunks: HashSet<&str> = c.chunks.iter().map(|x| x.id.as_str()).collect();
    for n in &c.graph_nodes {
        if let Some(d) = &n.doc_id {
            assert!(docs.contains(d.as_str()), "node {} of missing document {d}", n.id);
        }
        if let Some(ch) = &n.chunk_id {
            assert!(chunks.contains(ch.as_str()), "fact {} of missing chunk {ch}", n.id);
        }
    }
    for e in &c.graph_edges {
        assert!(nodes.contains(e.parent.as_str()) && nodes.contains(e.child.as_str()), "dangling edge {}", e.id);
    }
    for v in &c.vectors {
        assert!(nodes.contains(v.id.as_str()) || chunks.contains(v.id.as_str()), "orphan vector {} ({})", v.id, v.collection);
    }
}

fn assert_memory_consistent(ids: &[String], edges: &[(EdgeKind, String, String)]) {
    let live: HashSet<&str> = ids.iter().map(|s| s.as_str()).collect();
    for (k, a, b) in edges {
        assert!(live.contains(a.as_str()) && live.contains(b.as_str()), "dangling {k:?} edge {a} -> {b}");
    }
}

#[test]
fn mind_maps_fusion_links_and_persistence() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut e = open(&store).await;
        e.add(corpus(), &mut NoProgress).await.expect("add");
        let g = e.graph();
        let [topics, routes, facts, super_topics, _] = g.counts();
        assert_eq!(topics, 4);
        assert_eq!(routes, 1, "the Diet heading is the only route (the first heading repeats the title)");
        assert_eq!(facts, 4 + 2 + 2 + 2, "sentences and list items");
        assert_eq!(super_topics, 1, "the two 'Owls' topics share a super-topic");
        let map = g.mind_map("owls").expect("map");
        assert_eq!(map.topic, "Owls");
        assert!(map.children.iter().any(|n| n.label == "Diet" && n.children.iter().any(|f| f.label == "Field mice")));
        let (ids, edges) = g.dump();
        assert!(
            edges.iter().any(|(k, a, b)| *k == EdgeKind::Mention && a.starts_with("owls#f") && b == "mouse#t"),
            "a fact of 'Owls' names 'Harvest mouse': entity link expected; edges {edges:?}"
        );
        assert_memory_consistent(&ids, &edges);
        assert_store_consistent(&store.load().await.expect("load"));
        // Reopening from the store gives the same graph.
        let (mut ids0, mut edges0) = (ids.clone(), edges.clone());
        let e2 = open(&store).await;
        let (mut ids1, mut edges1) = e2.graph().dump();
        ids0.sort();
        ids1.sort();
        edges0.sort_by(|a, b| (a.1.as_str(), a.2.as_str()).cmp(&(b.1.as_str(), b.2.as_str())));
        edges1.sort_by(|a, b| (a.1.as_str(), a.2.as_str()).cmp(&(b.1.as_str(), b.2.as_str())));
        assert_eq!(ids0, ids1);
        assert_eq!(edges0, edges1);
        assert_eq!(e2.graph().mind_map("owls"), Some(map));
    });
}

/// Document ids are never parsed: ids with `|`, `#`, `/`, `?`, spaces, emoji and 1,024
/// characters go through add, search (hybrid and graph), reopen and removal one by one, and the
/// memory and the store stay consistent at every step (a `|` once split edge keys wrongly, so a
/// removal left edges to deleted nodes and a later search panicked).
#[test]
fn odd_document_ids_round_trip() {
    pollster::block_on(async {
        let long = format!("{}.md", "n".repeat(1021));
        let ids = ["owls|birds", "notes/2024/mouse?.md", "owls#2#t", "🦉 tea 🍵", long.as_str()];
        let mut docs = corpus();
        docs.push(doc("barn", "Barn owl", "The Barn owl hunts the Harvest mouse over fields at dusk."));
        assert_eq!(docs.len(), ids.len());
        let docs: Vec<DocumentInput> = docs.into_iter().zip(ids).map(|(d, id)| DocumentInput { id: id.into(), ..d }).collect();
        let store = MemoryStore::new();
        let mut e = open(&store).await;
        e.add(docs, &mut NoProgress).await.expect("add");
        let [_, _, _, super_topics, _] = e.graph().counts();
        assert!(super_topics >= 1, "the two owl documents fuse into a super-topic");
        let q = "Where do the small rodents that owls eat build their nests?";
        let qv = e.embedder().embed(&[q]).await.expect("embed").pop().expect("vector");
        let hits = e.search(q, &SearchOptions { literal: true, ..SearchOptions::new(10, SearchMode::HybridGraph) }).await.expect("search");
        assert!(hits.iter().any(|h| h.doc_id == ids[1]), "{hits:?}");
        assert!(e.graph_search(q, &qv, 10).hits.iter().all(|h| ids.contains(&h.doc_id.as_str())));
        assert!(e.corpus().document(&long).is_some());
        let before = e.graph().dump();
        drop(e);
        let mut e = open(&store).await;
        assert_eq!(e.graph().dump(), before, "reopen gives the same graph");
        for (i, id) in ids.iter().enumerate() {
            e.remove(&[id.to_string()]).await.expect("remove");
            let (nodes, edges) = e.graph().dump();
            assert_memory_consistent(&nodes, &edges);
            assert!(!e.graph().has_doc(id));
            assert_store_consistent(&store.load().await.expect("load"));
            // Searching after the removal (this panicked) and reopening (this was STORE_CORRUPT).
            e.graph_search(q, &qv, 10);
            e.search(q, &SearchOptions { literal: true, ..SearchOptions::new(10, SearchMode::HybridGraph) }).await.expect("search");
            drop(e);
            e = open(&store).await;
            assert_eq!(e.corpus().documents().len(), ids.len() - i - 1);
        }
        let too_long = "x".repeat(1025);
        let err = e.add(vec![doc(&too_long, "x", "text")], &mut NoProgress).await.expect_err("1,025 characters");
        assert_eq!(err.code(), "INVALID_ID");
    });
}

#[test]
fn graph_retriever_returns_facts_with_provenance() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut e = open(&store).await;
        e.add(corpus(), &mut NoProgress).await.expect("add");
        let q = "Where do the small rodents that owls eat build their nests?";
        let qv = e.embedder().embed(&[q]).await.expect("embed").pop().expect("vector");
        let gs = e.graph_search(q, &qv, 10);
        assert!(!gs.hits.is_empty());
        for h in &gs.hits {
            assert!(e.corpus().chunk(&h.chunk_id).is_some_and(|c| c.doc_id == h.doc_id), "fact {} maps to its chunk", h.fact_id);
        }
        assert!(!gs.explain.anchors.is_empty() && !gs.context.is_empty());
        assert!(
            gs.explain.topics.iter().any(|(d, why)| d == "mouse" && (why == "mention" || why == "fact" || why == "title")),
            "the walk reaches the Harvest mouse: {:?}",
            gs.explain.topics
        );
        for mode in [SearchMode::Graph, SearchMode::HybridGraph] {
            let hits = e.search(q, &SearchOptions { literal: true, ..SearchOptions::new(10, mode) }).await.expect("search");
            assert!(hits.iter().any(|h| h.doc_id == "mouse"), "{mode:?}: {hits:?}");
            assert!(hits.iter().any(|h| h.scores.graph_rank.is_some()));
        }
    });
}

/// Whether node (or chunk) id `id` belongs to document `d`: `{d}#…`, but not a super-node, which
/// keeps the id it was formed with (`{member}#st`) while it has members.
fn of_doc(id: &str, d: &str) -> bool {
    id.strip_prefix(d).is_some_and(|rest| rest.starts_with('#')) && !id.rsplit('#').next().is_some_and(|k| k.starts_with('s'))
}

#[test]
fn removing_documents_leaves_no_dangling_id() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut e = open(&store).await;
        e.add(corpus(), &mut NoProgress).await.expect("add");
        // The mentioned topic, one member of the super-topic, then everything.
        for gone in [vec!["mouse"], vec!["owls"], vec!["owls-2", "tea"]] {
            let ids: Vec<String> = gone.iter().map(|s| s.to_string()).collect();
            e.remove(&ids).await.expect("remove");
            let (nodes, edges) = e.graph().dump();
            for d in &gone {
                assert!(!nodes.iter().any(|n| of_doc(n, d)), "nodes of {d} remain: {nodes:?}");
                assert!(!e.graph().has_doc(d));
            }
            assert_memory_consistent(&nodes, &edges);
            let c = store.load().await.expect("load");
            assert_store_consistent(&c);
            for d in &gone {
                assert!(!c.graph_edges.iter().any(|x| of_doc(&x.parent, d) || of_doc(&x.child, d)));
                assert!(!c.vectors.iter().any(|v| of_doc(&v.id, d)));
            }
        }
        let c = store.load().await.expect("load");
        assert!(c.graph_nodes.is_empty() && c.graph_edges.is_empty() && c.vectors.is_empty(), "empty knowledge base: {c:?}");
        assert_eq!(e.graph().counts(), [0; 5]);
    });
}

#[test]
fn replacing_a_document_relinks_and_a_failed_commit_changes_nothing() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut e = open(&store).await;
        e.add(corpus(), &mut NoProgress).await.expect("add");
        // The mouse document changes: its old nodes go, the Owls fact links to the new topic.
        let changed = doc("mouse", "Harvest mouse", "The Harvest mouse weighs about six grams. It lives in fields.");
        let r = e.add(vec![changed], &mut NoProgress).await.expect("replace");
        assert_eq!(r.replaced, vec!["mouse".to_string()]);
        let (nodes, edges) = e.graph().dump();
        assert!(edges.iter().any(|(k, a, b)| *k == EdgeKind::Mention && a.starts_with("owls#f") && b == "mouse#t"));
        assert!(e.graph().mind_map("mouse").expect("map").children.iter().any(|n| n.label.contains("six grams")));
        assert_memory_consistent(&nodes, &edges);
        assert_store_consistent(&store.load().await.expect("load"));
        // A commit that fails leaves store and graph as they were.
        let before = (e.graph().dump(), store.load().await.expect("load"));
        store.fail_next_commit(StoreError::QuotaExceeded);
        e.add(vec![doc("bees", "Bees", "Bees make honey. Owls do not eat bees.")], &mut NoProgress).await.expect_err("quota");
        assert_eq!(before.0, e.graph().dump());
        assert_eq!(before.1, store.load().await.expect("load"));
        assert!(e.graph().counts()[NodeKind::Topic as usize] == 4);
    });
}

#[test]
fn bad_graph_options_get_typed_errors() {
    pollster::block_on(async {
        use webrag::error::{Error, InputError};
        use webrag::graph::GraphParams;
        use webrag::graph::pgr::PgrParams;
        let cases = [
            GraphParams { super_topic_threshold: 1.5, ..Default::default() },
            GraphParams { max_topics: 0, ..Default::default() },
            GraphParams { link_decay: -0.1, ..Default::default() },
            GraphParams { dense_hops: 11, ..Default::default() },
            GraphParams { entity_max_topics: 1001, ..Default::default() },
            GraphParams { pgr: PgrParams { support: 0.05, continue_threshold: 0.02, ..Default::default() }, ..Default::default() },
            GraphParams { pgr: PgrParams { anchors: 0, ..Default::default() }, ..Default::default() },
        ];
        for g in cases {
            let cfg = Config { graph: g, ..Config::default() };
            let err = Engine::open(MemoryStore::new(), common::model(), cfg, Box::new(FixedClock(1.0))).await.err().expect("rejected");
            match err {
                Error::Input(InputError::InvalidOption { name, .. }) => assert!(name.starts_with("graph."), "{name}"),
                other => panic!("expected INVALID_OPTION, got {other:?}"),
            }
        }
    });
}

/// Document ids named like the ids the graph generates (super-nodes of either form, other
/// documents' topics, routes and facts) cannot take a generated node's id: documents that fuse
/// into a super-topic, then documents named after every node id there is (and after the old
/// `st:` form), added one batch after another, keep every topic and fact in memory and in the
/// store, and a reopen gives the same graph.
#[test]
fn document_ids_named_like_generated_ids_do_not_collide() {
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut e = open(&store).await;
        let owl = |id: &str| doc(id, "Owls", "Owls are birds of prey that hunt at night. Owls have very good hearing.");
        e.add(vec![owl("a"), owl("b")], &mut NoProgress).await.expect("add");
        let (ids, _) = e.graph().dump();
        assert!(e.graph().counts()[3] >= 1, "a super-topic formed: {ids:?}");
        let mut names: Vec<String> = ids.iter().flat_map(|id| [id.clone(), format!("st:{id}"), format!("sf:{id}")]).collect();
        // `st:a` was the collision of the old form: its topic `st:a#t` was the super-topic of `a#t`.
        names.extend(["st:a", "st:b", "sf:a", "st:a#t", "a#t#st~2", "b#t#st"].map(String::from));
        names.sort();
        names.dedup();
        for chunk in names.chunks(3) {
            e.add(chunk.iter().map(|n| owl(n)).collect(), &mut NoProgress).await.expect("add");
        }
        let docs = 2 + names.len();
        let [topics, _, facts, _, _] = e.graph().counts();
        assert_eq!((topics, facts), (docs, 2 * docs), "every document keeps its topic and facts");
        let (ids, edges) = e.graph().dump();
        assert_memory_consistent(&ids, &edges);
        let stored = store.load().await.expect("load");
        assert_store_consistent(&stored);
        assert_eq!(stored.graph_nodes.len(), ids.len(), "memory and store hold the same nodes");
        let before = e.graph().dump();
        drop(e);
        let e = open(&store).await;
        assert_eq!(e.graph().dump(), before, "reopen gives the same graph");
    });
}

/// A stored tree of any depth (a crafted store or knowledge-base file: a chain of 60,000 routes)
/// opens in linear time without deep recursion: the edges past `MAX_TREE_DEPTH` levels are not
/// applied and are deleted from the store; everything above stays, searchable.
#[test]
fn a_stored_chain_of_any_depth_is_cut_at_the_depth_bound() {
    use webrag::graph::plan::MAX_TREE_DEPTH;
    use webrag::ports::{Op, Record};
    use webrag::schema::{GraphEdgeRecord, GraphNodeRecord};
    pollster::block_on(async {
        let store = MemoryStore::new();
        let mut e = open(&store).await;
        e.add(corpus(), &mut NoProgress).await.expect("add");
        drop(e);
        let n = 60_000;
        let node = |i: usize| format!("owls#deep{i}");
        let mut ops = Vec::new();
        for i in 0..n {
            let kind = if i + 1 == n { NodeKind::Fact } else { NodeKind::Route };
            let rec = GraphNodeRecord { id: node(i), kind, label: format!("level {i}"), doc_id: Some("owls".into()), chunk_id: None };
            ops.push(Op::Put(Record::GraphNode(rec)));
            let parent = if i == 0 { "owls#t".to_string() } else { node(i - 1) };
            ops.push(Op::Put(Record::GraphEdge(GraphEdgeRecord::new(EdgeKind::Tree, &parent, &node(i), 99))));
        }
        store.commit(ops).await.expect("commit");
        let e = open(&store).await;
        let (ids, edges) = e.graph().dump();
        assert_memory_consistent(&ids, &edges);
        fn levels(n: &webrag::graph::mindmap::MapNode) -> usize {
            1 + n.children.iter().map(levels).max().unwrap_or(0)
        }
        let map = e.graph().mind_map("owls").expect("map");
        let depth = map.children.iter().map(levels).max().unwrap_or(0);
        assert!((2..=MAX_TREE_DEPTH).contains(&depth), "the tree keeps at most {MAX_TREE_DEPTH} levels, not {depth}");
        assert!(map.children.iter().any(|n| n.label == "Diet"), "the document's own tree is intact");
        // Every tree in memory, rooted at a topic or not, is within the bound.
        let parent: std::collections::HashMap<&str, &str> =
            edges.iter().filter(|(k, _, _)| *k == EdgeKind::Tree).map(|(_, a, b)| (b.as_str(), a.as_str())).collect();
        for mut x in parent.keys().copied() {
            let mut up = 0;
            while let Some(p) = parent.get(x) {
                (x, up) = (p, up + 1);
            }
            assert!(up <= MAX_TREE_DEPTH, "a node {up} levels deep");
        }
        let applied = edges.iter().filter(|(k, _, b)| *k == EdgeKind::Tree && b.starts_with("owls#deep")).count();
        assert!(applied < n, "{applied} of {n} chain edges applied");
        let stored = store.load().await.expect("load");
        let stored_deep = stored.graph_edges.iter().filter(|r| r.child.starts_with("owls#deep")).count();
        assert_eq!(stored_deep, applied, "the edges not applied were deleted at open");
        assert!(e.graph().mind_map("owls").is_some());
        let hits = e.search("owls hunt at night", &SearchOptions::new(3, SearchMode::Graph)).await.expect("graph search");
        assert!(!hits.is_empty());
    });
}

/// A fact super-node threshold of 1 fuses no facts (site snapshots set it: their graph files
/// carry no fact super-nodes) and leaves everything else as it was: topics still fuse, the
/// same mind maps and mention links.
#[test]
fn a_fact_threshold_of_one_fuses_no_facts_and_changes_nothing_else() {
    pollster::block_on(async {
        use webrag::graph::GraphParams;
        let mut docs = corpus();
        // The same sentence in two documents: a super-fact at the default threshold.
        docs.push(doc("owls-3", "Owls", "Owls have very good hearing. Night birds fly in silence."));
        let build = async |g: GraphParams| {
            let cfg = Config { graph: g, ..Config::default() };
            let mut e = Engine::open(MemoryStore::new(), common::model(), cfg, Box::new(FixedClock(1.0))).await.expect("open");
            e.add(docs.clone(), &mut NoProgress).await.expect("add");
            let counts = e.graph().counts();
            let (ids, edges) = e.graph().dump();
            let strip = |s: &str| !s.contains("#sf") && !s.starts_with("sf");
            let mut ids: Vec<String> = ids.into_iter().filter(|i| strip(i)).collect();
            let mut edges: Vec<_> = edges.into_iter().filter(|(_, a, b)| strip(a) && strip(b)).collect();
            ids.sort();
            edges.sort_by(|a, b| (a.1.as_str(), a.2.as_str()).cmp(&(b.1.as_str(), b.2.as_str())));
            (counts, ids, edges)
        };
        // Facts embedded alone (not late-chunked in their passage): the repeated sentence's two
        // facts get the same vector.
        let alone = GraphParams { late_chunking: false, ..Default::default() };
        let (fused, ids0, edges0) = build(alone).await;
        let (unfused, ids1, edges1) = build(GraphParams { super_fact_threshold: 1.0, ..alone }).await;
        assert!(fused[NodeKind::SuperFact as usize] >= 1, "the repeated sentence forms a super-fact: {fused:?}");
        assert_eq!(unfused[NodeKind::SuperFact as usize], 0, "{unfused:?}");
        assert_eq!(fused[NodeKind::SuperTopic as usize], unfused[NodeKind::SuperTopic as usize]);
        assert_eq!((ids0, edges0), (ids1, edges1), "everything but the fact super-nodes is the same");
    });
}

/// Super-fact links (PG-RAG §3.3, `graph.superFactLinks`): two topics that share a fact (the
/// same sentence in two documents, fused into a super-fact) are neighbours in the walk when the
/// option is on, and only then. With one seed per kind and no entity links, the walk from the
/// question's topic reaches the other document through the super-fact alone, and its facts
/// join the graph retriever's hits.
#[test]
fn super_fact_links_join_topics_that_share_a_fact_only_when_on() {
    pollster::block_on(async {
        use webrag::graph::GraphParams;
        let shared = "Its handle stays cool to the touch because it is wrapped in thick cork, which a craftsman glues on by hand and replaces every few years when the old layer cracks and crumbles.";
        let mut docs = vec![
            doc("kettle", "Copper kettles", &format!("Copper kettles heat water quickly on a gas flame. {shared}")),
            doc("shed", "Garden sheds", &format!("Garden sheds store rakes and spades over winter. {shared}")),
        ];
        for (id, title, text) in [
            ("tea", "Green tea", "Green tea is steeped at about 80 degrees. It comes from China."),
            ("owls", "Owls", "Owls are birds of prey that hunt at night."),
            ("bread", "Sourdough bread", "Sourdough rises slowly with wild yeast."),
        ] {
            docs.push(doc(id, title, text));
        }
        // A fact's vector carries its topic's title (the heading prefix): the shared sentence
        // under these two titles is at cosine 0.69, so at the default threshold (0.98) only facts
        // under near-identical titles fuse, and those topics are super-topic siblings already.
        // Here: facts embedded alone, fused above 0.6, no super-topics, one seed per kind and no
        // entity links, so nothing but the super-fact leads from the kettle to the shed.
        let base = GraphParams {
            late_chunking: false,
            super_fact_threshold: 0.6,
            super_topic_threshold: 1.0,
            seed_topics: 1,
            entity_max_topics: 0,
            ..Default::default()
        };
        let q = "How quickly do copper kettles heat water?";
        let walk = async |g: GraphParams| {
            let cfg = Config { graph: g, ..Config::default() };
            let mut e = Engine::open(MemoryStore::new(), common::model(), cfg, Box::new(FixedClock(1.0))).await.expect("open");
            e.add(docs.clone(), &mut NoProgress).await.expect("add");
            assert!(e.graph().counts()[NodeKind::SuperFact as usize] >= 1, "the shared sentence forms a super-fact");
            let qv = e.embedder().embed(&[q]).await.expect("embed").pop().expect("vector");
            let gs = e.graph_search(q, &qv, 10);
            let reached: Vec<(String, String)> = gs.explain.topics.clone();
            let hit_docs: Vec<String> = gs.hits.iter().map(|h| h.doc_id.clone()).collect();
            (reached, hit_docs)
        };
        let (off, off_hits) = walk(base).await;
        assert!(off.iter().any(|(d, _)| d == "kettle"), "the question's topic is a seed: {off:?}");
        assert!(!off.iter().any(|(d, _)| d == "shed"), "without super-fact links nothing leads to the shed: {off:?}");
        assert!(!off_hits.iter().any(|d| d == "shed"), "{off_hits:?}");
        let (on, on_hits) = walk(GraphParams { super_fact_links: true, ..base }).await;
        assert!(on.iter().any(|(d, why)| d == "shed" && why == "super_fact"), "the super-fact leads to the shed: {on:?}");
        assert!(on_hits.iter().any(|d| d == "shed"), "the shed's facts are candidates: {on_hits:?}");
    });
}
