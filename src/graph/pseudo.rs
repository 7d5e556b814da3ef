//! The live pseudo-graph of a knowledge base (docs/pseudo-graph.md): mind-map nodes with their vectors,
//! super-topics and super-facts (similarity clusters), entity links, and the PGR retriever.
//!
//! The stored records (`graph_nodes`, `graph_edges`, node vectors) are the source of truth; the
//! in-memory graph is rebuilt from them at open by [`PseudoGraph::apply`], the same function that
//! mirrors a committed write. A write is first **planned** against the current graph
//! ([`PseudoGraph::plan_add`], [`PseudoGraph::plan_remove`]: pure, nothing changes), its ops are
//! committed with the document's chunks in one transaction, and only then applied. Fusion is
//! incremental: a new topic (fact) joins the super-node of its most similar existing topic
//! (fact) when the cosine exceeds the threshold; nothing is re-clustered. A super-node lives while
//! it has a member.
use std::cell::OnceCell;
use std::collections::HashMap;

use crate::index::ann::{AnnParams, SegmentedIndex};
use crate::schema::{EdgeKind, NodeKind};

use super::entities::{EntityIndex, TitleMatcher, WordMatcher, entity_spans, mention_key};
use super::pgr::QuantVectors;

/// The vector collection of a node kind (`vectors` records of the graph).
pub fn vector_collection(kind: NodeKind) -> Option<&'static str> {
    match kind {
        NodeKind::Topic => Some("topics"),
        NodeKind::Route => Some("routes"),
        NodeKind::Fact => Some("facts"),
        _ => None,
    }
}

#[derive(Debug, Clone)]
pub(super) struct Node {
    pub(super) id: String,
    pub(super) kind: NodeKind,
    pub(super) label: String,
    pub(super) doc: Option<String>,
    pub(super) chunk: Option<String>,
    /// The chunk's ordinal in its document.
    pub(super) chunk_ordinal: Option<u32>,
    pub(super) parent: Option<u32>,
    pub(super) ordinal: u32,
    pub(super) children: Vec<u32>,
    pub(super) sup: Option<u32>,
}

/// The pseudo-graph of a knowledge base.
pub struct PseudoGraph {
    pub(super) dim: usize,
    pub(super) nodes: Vec<Option<Node>>,
    pub(super) free: Vec<u32>,
    pub(super) by_id: HashMap<String, u32>,
    /// `[slot, dim]` node vectors (zeros for super-nodes): fusion and the candidate walk.
    pub(super) vecs: Vec<f32>,
    /// The same, int8: PGR's similarity template.
    pub(super) quant: QuantVectors,
    /// Topic (title) vectors: seeds by title, super-topic fusion.
    pub(super) topics: SegmentedIndex,
    /// Fact vectors: seeds by best fact, super-fact fusion (empty when
    /// [`PseudoGraph::leave_out_fact_index`] was called).
    pub(super) facts: SegmentedIndex,
    /// Whether facts join `facts` (true unless left out).
    pub(super) fact_index: bool,
    pub(super) doc_topic: HashMap<String, u32>,
    /// Fact paths (slots, topic first) per topic, DFS order.
    pub(super) paths: HashMap<u32, Vec<Vec<u32>>>,
    pub(super) members: HashMap<u32, Vec<u32>>,
    pub(super) mentions: HashMap<u32, Vec<u32>>,
    pub(super) mentioned_by: HashMap<u32, Vec<u32>>,
    pub(super) matcher: OnceCell<TitleMatcher>,
    pub(super) entities: OnceCell<EntityIndex>,
}
impl PseudoGraph {
    /// An empty graph for `dim`-dimensional vectors, with default HNSW parameters.
    pub fn new(dim: usize) -> Self {
        Self::with_ann(dim, AnnParams::default())
    }

    /// Leaves the facts out of their ANN index from now on (and empties it), for a graph that is
    /// built to be written out and never searched nor fused by fact (a site build without a
    /// knowledge-base file: `superFactThreshold` 1): each fact's vector is then held twice (f32
    /// for the walk, int8 for PGR) instead of three times. The graph search then seeds by title
    /// and walk alone. Until the graph is made again (a clear or an import).
    pub fn leave_out_fact_index(&mut self) {
        self.fact_index = false;
        self.facts = SegmentedIndex::new(self.dim, self.facts.params());
    }

    /// An empty graph whose topic and fact collections use `ann`.
    pub fn with_ann(dim: usize, ann: AnnParams) -> Self {
        PseudoGraph {
            dim,
            nodes: Vec::new(),
            free: Vec::new(),
            by_id: HashMap::new(),
            vecs: Vec::new(),
            quant: QuantVectors::new(dim),
            topics: SegmentedIndex::new(dim, ann),
            facts: SegmentedIndex::new(dim, ann),
            fact_index: true,
            doc_topic: HashMap::new(),
            paths: HashMap::new(),
            members: HashMap::new(),
            mentions: HashMap::new(),
            mentioned_by: HashMap::new(),
            matcher: OnceCell::new(),
            entities: OnceCell::new(),
        }
    }

    /// The segmented vector collection of `kind`'s nodes (topics or facts; the others have none).
    pub fn ann(&self, kind: NodeKind) -> Option<&SegmentedIndex> {
        match kind {
            NodeKind::Topic => Some(&self.topics),
            NodeKind::Fact => Some(&self.facts),
            _ => None,
        }
    }

    /// Mutable [`PseudoGraph::ann`]: to seal a collection or attach a stored segment.
    pub fn ann_mut(&mut self, kind: NodeKind) -> Option<&mut SegmentedIndex> {
        match kind {
            NodeKind::Topic => Some(&mut self.topics),
            NodeKind::Fact => Some(&mut self.facts),
            _ => None,
        }
    }

    /// Slot of node `id`.
    pub fn slot_of(&self, id: &str) -> Option<u32> {
        self.by_id.get(id).copied()
    }

    /// Id of the node in `slot`.
    pub fn id_of(&self, slot: u32) -> Option<&str> {
        self.nodes.get(slot as usize).and_then(|n| n.as_ref()).map(|n| n.id.as_str())
    }

    /// The topic (mind-map root) above node `s`.
    pub(super) fn topic_of(&self, s: u32) -> u32 {
        let mut t = s;
        while let Some(up) = self.node(t).parent {
            t = up;
        }
        t
    }

    pub(super) fn node(&self, s: u32) -> &Node {
        self.nodes[s as usize].as_ref().expect("live slot")
    }

    pub(super) fn vec_of(&self, s: u32) -> &[f32] {
        &self.vecs[s as usize * self.dim..(s as usize + 1) * self.dim]
    }

    /// Number of live nodes of each kind: topics, routes, facts, super-topics, super-facts.
    pub fn counts(&self) -> [usize; 5] {
        let mut c = [0; 5];
        for n in self.nodes.iter().flatten() {
            c[n.kind as usize] += 1;
        }
        c
    }

    /// Number of edges of each kind: tree, similar, mention.
    pub fn edge_counts(&self) -> [usize; 3] {
        let tree = self.nodes.iter().flatten().filter(|n| n.parent.is_some()).count();
        let similar = self.members.values().map(|m| m.len()).sum();
        let mention = self.mentions.values().map(|m| m.len()).sum();
        [tree, similar, mention]
    }

    /// Documents that have a mind map.
    pub fn has_doc(&self, doc: &str) -> bool {
        self.doc_topic.contains_key(doc)
    }

    /// Every node id, and every edge as `(kind, parent id, child id)`, sorted: for integrity checks.
    pub fn dump(&self) -> (Vec<String>, Vec<(EdgeKind, String, String)>) {
        let mut ids: Vec<String> = self.nodes.iter().flatten().map(|n| n.id.clone()).collect();
        crate::sort::ascending(&mut ids);
        let mut edges = Vec::new();
        for n in self.nodes.iter().flatten() {
            if let Some(p) = n.parent {
                edges.push((EdgeKind::Tree, self.node(p).id.clone(), n.id.clone()));
            }
        }
        for (s, ms) in &self.members {
            for m in ms {
                edges.push((EdgeKind::Similar, self.node(*s).id.clone(), self.node(*m).id.clone()));
            }
        }
        for (f, ts) in &self.mentions {
            for t in ts {
                edges.push((EdgeKind::Mention, self.node(*f).id.clone(), self.node(*t).id.clone()));
            }
        }
        crate::sort::ascending(&mut edges);
        (ids, edges)
    }
}

/// The entity index and the title matcher, built on first use from the graph's nodes.
impl PseudoGraph {
    pub(super) fn entity_index(&self) -> &EntityIndex {
        self.entities.get_or_init(|| {
            let mut at: HashMap<String, u32> = HashMap::new();
            let mut ix = EntityIndex { facts: Vec::new(), topics: Vec::new(), of_fact: HashMap::new() };
            for (slot, n) in self.nodes.iter().enumerate() {
                let Some(n) = n.as_ref().filter(|n| n.kind == NodeKind::Fact) else { continue };
                let mut mine = Vec::new();
                for e in entity_spans(&n.label) {
                    let next = ix.facts.len() as u32;
                    let i = *at.entry(e).or_insert(next);
                    if i == next {
                        ix.facts.push(Vec::new());
                    }
                    ix.facts[i as usize].push(slot as u32);
                    mine.push(i);
                }
                if !mine.is_empty() {
                    ix.of_fact.insert(slot as u32, mine);
                }
            }
            ix.topics = ix
                .facts
                .iter()
                .map(|fs| {
                    let mut t: Vec<u32> = fs.iter().map(|f| self.topic_of(*f)).collect();
                    crate::sort::ascending(&mut t);
                    t.dedup();
                    t.len()
                })
                .collect();
            ix
        })
    }

    pub(super) fn title_matcher(&self) -> &TitleMatcher {
        self.matcher.get_or_init(|| {
            let mut keys: Vec<String> = Vec::new();
            let mut topics: Vec<Vec<u32>> = Vec::new();
            let mut at: HashMap<String, usize> = HashMap::new();
            let mut sorted: Vec<u32> = self.doc_topic.values().copied().collect();
            crate::sort::ascending(&mut sorted);
            for s in sorted {
                if let Some(k) = mention_key(&self.node(s).label) {
                    let i = *at.entry(k.clone()).or_insert_with(|| {
                        keys.push(k);
                        topics.push(Vec::new());
                        keys.len() - 1
                    });
                    topics[i].push(s);
                }
            }
            TitleMatcher { words: WordMatcher::new(keys.iter().map(|k| k.as_str())), topics }
        })
    }
}
