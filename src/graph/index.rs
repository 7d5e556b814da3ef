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
use std::collections::{HashMap, HashSet};

use unicode_segmentation::UnicodeSegmentation;

use super::mindmap::{MapNode, MindMap};
use super::pgr::{Anchor, PgrParams, QuantVectors, Template, node_sims_i8, pgr};
use crate::embed::gemm::dot;
use crate::error::InputError;
use crate::index::ann::{AnnParams, SegmentedIndex};
use crate::index::vectors::FlatIndex;
use crate::ports::{Collection, Op, Record};
use crate::types::{EdgeKind, GraphEdgeRecord, GraphNodeRecord, NodeKind, VectorRecord};

/// Pseudo-graph options.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct GraphParams {
    /// Build the pseudo-graph at ingest (structural mind maps: one embedding per topic, route and
    /// fact). Default true.
    pub enabled: bool,
    /// Topics with cosine above this share a super-topic. Default 0.92 (docs/pseudo-graph.md); range 0..=1.
    pub super_topic_threshold: f32,
    /// Facts with cosine above this share a super-fact. Default 0.98; range 0..=1.
    pub super_fact_threshold: f32,
    /// Seed topics by title similarity, and again by best fact similarity. Default 3; 1..=50.
    pub seed_topics: usize,
    /// Candidate topics after the super-topic / entity-link walk. Default 10; range 1..=200.
    pub max_topics: usize,
    /// A topic reached by the walk (entity link or super-topic) inherits this share of the
    /// similarity of the node that led to it: its facts rank by `max(own similarity,
    /// link_decay × linking similarity)` after PGR's selected rows. Default 0.9; range 0..=1
    /// (0: facts rank by their own similarity only).
    pub link_decay: f32,
    /// Dense hops per walked topic: from a topic's fact most similar to the query `f`, the
    /// topics owning the facts nearest to `normalise(q + f)` (other than itself) are neighbours
    /// too — a bridge through an entity that is nobody's title, in the manner of multi-hop dense
    /// retrieval (Xiong et al. 2021, query + first-hop passage) without re-encoding. Default 0
    /// (off); range 0..=10.
    pub dense_hops: usize,
    /// Shared-entity links: two topics are neighbours in the walk when a fact of each names the
    /// same proper name ([`entity_spans`]: a run of capitalised words) and at most this many
    /// topics name it (rarer names are better bridges: "Zimbabwe" between the Bubye River and
    /// Victoria Falls, where no passage is titled Zimbabwe). The neighbour is scored by the
    /// similarity of its own fact that names the entity. Default 20 (MuSiQue train100 graph R@5
    /// is 67.7–69.4 for any value from 12 to 100, 64.0 without; README); 0 turns them off;
    /// range 0..=1000.
    pub entity_max_topics: usize,
    /// PGR thresholds and sizes.
    pub pgr: PgrParams,
}

impl Default for GraphParams {
    fn default() -> Self {
        GraphParams {
            enabled: true,
            super_topic_threshold: 0.92,
            super_fact_threshold: 0.98,
            seed_topics: 3,
            max_topics: 10,
            link_decay: 0.9,
            dense_hops: 0,
            entity_max_topics: 20,
            pgr: PgrParams::default(),
        }
    }
}

impl GraphParams {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), InputError> {
        let bad = |name: &str, reason: String| Err(InputError::InvalidOption { name: format!("graph.{name}"), reason });
        for (name, v) in [("superTopicThreshold", self.super_topic_threshold), ("superFactThreshold", self.super_fact_threshold)] {
            if !(0.0..=1.0).contains(&v) {
                return bad(name, format!("{v} is outside 0..=1"));
            }
        }
        if !(0.0..=2.0).contains(&self.pgr.support) || !(self.pgr.support..=2.0).contains(&self.pgr.continue_threshold) {
            return bad(
                "pgr",
                format!("need 0 ≤ support ({}) ≤ continueThreshold ({}) ≤ 2", self.pgr.support, self.pgr.continue_threshold),
            );
        }
        if !(0.0..=1.0).contains(&self.link_decay) {
            return bad("linkDecay", format!("{} is outside 0..=1", self.link_decay));
        }
        if self.dense_hops > 10 {
            return bad("denseHops", format!("{} is outside 0..=10", self.dense_hops));
        }
        if self.entity_max_topics > 1000 {
            return bad("entityMaxTopics", format!("{} is outside 0..=1000", self.entity_max_topics));
        }
        if !(1..=50).contains(&self.seed_topics) {
            return bad("seedTopics", format!("{} is outside 1..=50", self.seed_topics));
        }
        if !(1..=200).contains(&self.max_topics) {
            return bad("maxTopics", format!("{} is outside 1..=200", self.max_topics));
        }
        if !(1..=100).contains(&self.pgr.anchors) || !(1..=1000).contains(&self.pgr.top_rows) {
            return bad("pgr", "anchors must be in 1..=100 and topRows in 1..=1000".into());
        }
        Ok(())
    }
}

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
struct Node {
    id: String,
    kind: NodeKind,
    label: String,
    doc: Option<String>,
    chunk: Option<String>,
    parent: Option<u32>,
    ordinal: u32,
    children: Vec<u32>,
    sup: Option<u32>,
}

/// A document's mind map with the embedding of each node, in [`node_inputs`] order.
#[derive(Debug, Clone)]
pub struct NewMap<'a> {
    /// Document id.
    pub doc_id: &'a str,
    /// The document's chunk ids by ordinal (fact provenance).
    pub chunk_ids: &'a [String],
    /// The mind map.
    pub map: &'a MindMap,
    /// One vector per node, in [`node_inputs`] order.
    pub vectors: &'a [Vec<f32>],
}

/// The texts embedded for a mind map's nodes, in pre-order (topic first): topic = title; route =
/// `title > route > …`; fact = `title > route > …` + newline + fact (docs/pseudo-graph.md).
pub fn node_inputs(map: &MindMap) -> Vec<String> {
    fn walk(n: &MapNode, prefix: &str, out: &mut Vec<String>) {
        if n.children.is_empty() {
            out.push(format!("{prefix}\n{}", n.label));
        } else {
            let p = format!("{prefix} > {}", n.label);
            out.push(p.clone());
            for c in &n.children {
                walk(c, &p, out);
            }
        }
    }
    let mut out = vec![map.topic.clone()];
    for c in &map.children {
        walk(c, &map.topic, &mut out);
    }
    out
}

/// A planned change of the graph: records to delete, then records to write. [`GraphPlan::ops`]
/// gives the store ops; [`PseudoGraph::apply`] mirrors it in memory after the commit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GraphPlan {
    /// Edge keys to delete.
    pub delete_edges: Vec<String>,
    /// Node ids to delete (their vectors too).
    pub delete_nodes: Vec<(String, NodeKind)>,
    /// Nodes to write, with the vector of topics, routes and facts.
    pub nodes: Vec<(GraphNodeRecord, Option<Vec<f32>>)>,
    /// Edges to write.
    pub edges: Vec<GraphEdgeRecord>,
}

impl GraphPlan {
    /// The store ops, deletions first.
    pub fn ops(&self) -> Vec<Op> {
        let mut ops = Vec::new();
        for e in &self.delete_edges {
            ops.push(Op::Delete(Collection::GraphEdges, e.clone()));
        }
        for (n, kind) in &self.delete_nodes {
            ops.push(Op::Delete(Collection::GraphNodes, n.clone()));
            if vector_collection(*kind).is_some() {
                ops.push(Op::Delete(Collection::Vectors, n.clone()));
            }
        }
        for (n, v) in &self.nodes {
            ops.push(Op::Put(Record::GraphNode(n.clone())));
            if let (Some(v), Some(c)) = (v, vector_collection(n.kind)) {
                ops.push(Op::Put(Record::Vector(VectorRecord::from_f32(&n.id, c, v))));
            }
        }
        for e in &self.edges {
            ops.push(Op::Put(Record::GraphEdge(e.clone())));
        }
        ops
    }
    /// Appends `other` (applied after this one).
    pub fn extend(&mut self, other: GraphPlan) {
        self.delete_edges.extend(other.delete_edges);
        self.delete_nodes.extend(other.delete_nodes);
        self.nodes.extend(other.nodes);
        self.edges.extend(other.edges);
    }
}

/// One fact found by the graph retriever.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphHit {
    /// The fact's chunk (provenance).
    pub chunk_id: String,
    /// The fact's document.
    pub doc_id: String,
    /// Fact node id.
    pub fact_id: String,
    /// Aggregated PGR score of the fact path (row sum of F); facts not selected by PGR follow
    /// with their leaf similarity − 2, so they sort after every selected row.
    pub score: f32,
    /// Template row of the fact path.
    pub row: u32,
}

/// What the graph retriever did, for the explain view.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphExplain {
    /// Candidate topics (document ids) with how each was reached: `query`, `title`, `fact`,
    /// `super_topic`, `mention`.
    pub topics: Vec<(String, String)>,
    /// Template size: rows (fact paths) × columns.
    pub template: (usize, usize),
    /// Anchors (row, leaf column, value, sub-root column, support rows).
    pub anchors: Vec<Anchor>,
    /// Node labels of each template row, topic first (only the selected rows).
    pub rows: Vec<(u32, f32, Vec<String>)>,
}

/// The graph retriever's answer.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphSearch {
    /// Facts, best first: PGR's selected rows, then the other candidate facts.
    pub hits: Vec<GraphHit>,
    /// The selected fact paths merged back into mind maps (topic → routes → facts): the context.
    pub context: Vec<MindMap>,
    /// How it got there.
    pub explain: GraphExplain,
}

struct TitleMatcher {
    words: WordMatcher,
    topics: Vec<Vec<u32>>,
}

/// The words (UAX #29) of a title as one key, as written (case matters: titles are names, and
/// "Time" the magazine is not "time"), a trailing parenthetical ("Lilu (mythology)") dropped;
/// `None` when under 4 characters, without a letter, or longer than [`MAX_TITLE_WORDS`] words
/// (too ambiguous, or too long to be named in a sentence).
pub fn mention_key(title: &str) -> Option<String> {
    let t = title.trim();
    let t = match (t.ends_with(')'), t.rfind(" (")) {
        (true, Some(i)) if i > 0 => &t[..i],
        _ => t,
    };
    let words: Vec<&str> = t.unicode_words().collect();
    let k = words.join("\u{1f}");
    (k.chars().count() >= 4 && k.chars().any(|c| c.is_alphabetic()) && words.len() <= MAX_TITLE_WORDS).then_some(k)
}

/// Proper names in `text`: maximal runs of capitalised words separated only by spaces, with
/// `of` / `the` / `de` / `von` / `van` / `der` / `la` / `du` allowed inside a run
/// ("Church of England"), a leading function word dropped ("The", "In", "He", ...), each run once.
/// A run never crosses punctuation ("Harare, Zimbabwe" is two names). Words are UAX #29 words.
pub fn entity_spans(text: &str) -> Vec<String> {
    const INNER: [&str; 8] = ["of", "the", "de", "von", "van", "der", "la", "du"];
    const LEADING: [&str; 30] = [
        "The", "A", "An", "In", "On", "At", "He", "She", "It", "They", "His", "Her", "Its", "Their", "This", "That", "These", "Those",
        "There", "After", "Before", "During", "When", "While", "As", "By", "For", "From", "With", "Of",
    ];
    let capital = |w: &str| w.chars().next().is_some_and(char::is_uppercase);
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let mut flush = |run: &mut Vec<&str>| {
        while run.last().is_some_and(|w| !capital(w)) {
            run.pop();
        }
        let skip = run.iter().take_while(|w| LEADING.contains(w)).count();
        let words = &run[skip.min(run.len())..];
        if !words.is_empty() && words.iter().map(|w| w.chars().count()).sum::<usize>() >= 3 {
            let key = words.join(" ");
            if !out.contains(&key) {
                out.push(key);
            }
        }
        run.clear();
    };
    let mut prev_end = 0;
    for (at, w) in text.unicode_word_indices() {
        let joined = !run.is_empty() && text[prev_end..at].chars().all(|c| c == ' ');
        prev_end = at + w.len();
        if capital(w) {
            if !joined {
                flush(&mut run);
            }
            run.push(w);
        } else if joined && INNER.contains(&w) {
            run.push(w);
        } else {
            flush(&mut run);
        }
    }
    flush(&mut run);
    out
}

/// Shared-entity neighbours (derived from the fact labels when first needed, dropped when the
/// graph changes; nothing is stored): entity → the facts naming it and how many topics that is.
struct EntityIndex {
    /// Per entity: the facts that name it (slots, ascending).
    facts: Vec<Vec<u32>>,
    /// Per entity: distinct topics among those facts.
    topics: Vec<usize>,
    /// Fact → its entities.
    of_fact: HashMap<u32, Vec<u32>>,
}

/// Longest title (in words) that entity links look for.
pub const MAX_TITLE_WORDS: usize = 12;

/// Finds title keys ([`mention_key`]) in text as whole-word sequences: every run of up to
/// [`MAX_TITLE_WORDS`] consecutive words is looked up in a hash map.
struct WordMatcher {
    keys: HashMap<String, usize>,
    longest: usize,
}

impl WordMatcher {
    /// Key `i` of `keys` is reported as `i` (a repeated key: its first index).
    fn new<'a>(keys: impl IntoIterator<Item = &'a str>) -> Self {
        let mut map = HashMap::new();
        let mut longest = 0;
        for (i, k) in keys.into_iter().enumerate() {
            longest = longest.max(k.split('\u{1f}').count());
            map.entry(k.to_string()).or_insert(i);
        }
        WordMatcher { keys: map, longest }
    }
    /// Indices of the keys found in `text`, sorted, each once.
    fn find(&self, text: &str) -> Vec<usize> {
        let words: Vec<&str> = text.unicode_words().collect();
        let mut out = Vec::new();
        let mut key = String::new();
        for i in 0..words.len() {
            key.clear();
            for (n, w) in words[i..].iter().take(self.longest).enumerate() {
                if n > 0 {
                    key.push('\u{1f}');
                }
                key.push_str(w);
                if let Some(&k) = self.keys.get(key.as_str()) {
                    out.push(k);
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// A neighbour in the candidate walk ([`PseudoGraph::links`]).
struct Link {
    /// The neighbour topic.
    to: u32,
    /// `super_topic`, `mention` or `entity`.
    kind: &'static str,
    /// The node whose similarity to the query scores the link in [`PseudoGraph::search`].
    scored_by: u32,
    /// The node of the source topic that leads there (the topic itself for super-topic
    /// siblings and incoming mentions).
    from: u32,
}

/// A mind-map node of [`TopicExport`].
#[derive(Debug, Clone, Copy)]
pub struct ExportNode<'a> {
    /// Parent's index in the export (`None` for the topic).
    pub parent: Option<u32>,
    /// Label (topic title, route heading, or the fact).
    pub label: &'a str,
    /// Topic, route or fact.
    pub kind: NodeKind,
    /// A fact's chunk id.
    pub chunk: Option<&'a str>,
    /// The node's embedding.
    pub vector: &'a [f32],
}

/// [`PseudoGraph::export_topic`]'s result.
#[derive(Debug, Clone)]
pub struct TopicExport<'a> {
    /// The topic first, then its routes and facts in pre-order.
    pub nodes: Vec<ExportNode<'a>>,
    /// Neighbour documents: `(doc id, kind of the first link, indexes of this topic's nodes that
    /// lead there)` (at most 8 per neighbour), kinds `super_topic`, `mention`, `entity`.
    pub links: Vec<(String, &'static str, Vec<u32>)>,
}

/// The pseudo-graph of a knowledge base.
pub struct PseudoGraph {
    dim: usize,
    nodes: Vec<Option<Node>>,
    free: Vec<u32>,
    by_id: HashMap<String, u32>,
    /// `[slot, dim]` node vectors (zeros for super-nodes): fusion and the candidate walk.
    vecs: Vec<f32>,
    /// The same, int8: PGR's similarity template.
    quant: QuantVectors,
    /// Topic (title) vectors: seeds by title, super-topic fusion.
    topics: SegmentedIndex,
    /// Fact vectors: seeds by best fact, super-fact fusion.
    facts: SegmentedIndex,
    doc_topic: HashMap<String, u32>,
    /// Fact paths (slots, topic first) per topic, DFS order.
    paths: HashMap<u32, Vec<Vec<u32>>>,
    members: HashMap<u32, Vec<u32>>,
    mentions: HashMap<u32, Vec<u32>>,
    mentioned_by: HashMap<u32, Vec<u32>>,
    matcher: OnceCell<TitleMatcher>,
    entities: OnceCell<EntityIndex>,
}

impl PseudoGraph {
    /// An empty graph for `dim`-dimensional vectors, with default HNSW parameters.
    pub fn new(dim: usize) -> Self {
        Self::with_ann(dim, AnnParams::default())
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
    fn topic_of(&self, s: u32) -> u32 {
        let mut t = s;
        while let Some(up) = self.node(t).parent {
            t = up;
        }
        t
    }

    fn node(&self, s: u32) -> &Node {
        self.nodes[s as usize].as_ref().expect("live slot")
    }

    fn vec_of(&self, s: u32) -> &[f32] {
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

    /// Every node id, and every edge as `(kind, parent id, child id)`: for integrity checks.
    pub fn dump(&self) -> (Vec<String>, Vec<(EdgeKind, String, String)>) {
        let ids = self.nodes.iter().flatten().map(|n| n.id.clone()).collect();
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
        (ids, edges)
    }

    /// The mind map of a document, rebuilt from its nodes.
    pub fn mind_map(&self, doc: &str) -> Option<MindMap> {
        let t = *self.doc_topic.get(doc)?;
        fn build(g: &PseudoGraph, s: u32) -> MapNode {
            let n = g.node(s);
            MapNode {
                label: n.label.clone(),
                children: n.children.iter().map(|c| build(g, *c)).collect(),
                chunk: n.chunk.as_ref().and_then(|c| c.rsplit('#').next()?.parse().ok()),
            }
        }
        let n = self.node(t);
        Some(MindMap { topic: n.label.clone(), children: n.children.iter().map(|c| build(self, *c)).collect() })
    }

    /// The neighbours of topic `s` in the candidate walk: super-topic siblings (`s` itself
    /// among them), the topics its facts mention, the topics whose facts mention it, and topics
    /// sharing a proper name named by at most `p.entity_max_topics` topics.
    fn links(&self, s: u32, p: &GraphParams) -> Vec<Link> {
        let mut out = Vec::new();
        if let Some(sup) = self.node(s).sup {
            for &o in &self.members[&sup] {
                out.push(Link { to: o, kind: "super_topic", scored_by: o, from: s });
            }
        }
        for path in self.paths.get(&s).into_iter().flatten() {
            let f = *path.last().expect("non-empty path");
            for &t in self.mentions.get(&f).into_iter().flatten() {
                out.push(Link { to: t, kind: "mention", scored_by: f, from: f });
            }
        }
        for &f in self.mentioned_by.get(&s).into_iter().flatten() {
            out.push(Link { to: self.topic_of(f), kind: "mention", scored_by: f, from: s });
        }
        if p.entity_max_topics > 0 {
            let ents = self.entity_index();
            for path in self.paths.get(&s).into_iter().flatten() {
                let f = *path.last().expect("non-empty path");
                for &e in ents.of_fact.get(&f).into_iter().flatten() {
                    if ents.topics[e as usize] > p.entity_max_topics {
                        continue;
                    }
                    for &g in &ents.facts[e as usize] {
                        let t = self.topic_of(g);
                        if t != s {
                            out.push(Link { to: t, kind: "entity", scored_by: g, from: f });
                        }
                    }
                }
            }
        }
        out
    }

    /// A topic's part of a static-site snapshot (`webrag index --out`, docs/static-site.md): its
    /// mind-map nodes in pre-order with their vectors, and its neighbours in the candidate walk
    /// of [`PseudoGraph::search`] — super-topic siblings, mentions both ways and shared-entity
    /// links (`p.entity_max_topics`) — each with the nodes **of this topic** that lead there, so
    /// a loader can rank neighbours before fetching them (the live search scores some links by
    /// the neighbour's own node instead). `None` when `doc` has no mind map.
    pub fn export_topic(&self, doc: &str, p: &GraphParams) -> Option<TopicExport<'_>> {
        let t = *self.doc_topic.get(doc)?;
        let mut order: Vec<u32> = Vec::new();
        let mut stack = vec![t];
        while let Some(s) = stack.pop() {
            order.push(s);
            stack.extend(self.node(s).children.iter().rev());
        }
        let local: HashMap<u32, u32> = order.iter().enumerate().map(|(i, s)| (*s, i as u32)).collect();
        let nodes = order
            .iter()
            .map(|&s| {
                let n = self.node(s);
                ExportNode {
                    parent: n.parent.and_then(|p| local.get(&p).copied()),
                    label: &n.label,
                    kind: n.kind,
                    chunk: n.chunk.as_deref(),
                    vector: self.vec_of(s),
                }
            })
            .collect();
        let mut links: Vec<(String, &'static str, Vec<u32>)> = Vec::new();
        for l in self.links(t, p) {
            let (Some(to_doc), Some(&via)) = (self.node(l.to).doc.as_ref(), local.get(&l.from)) else { continue };
            if l.to == t {
                continue;
            }
            match links.iter_mut().find(|x| &x.0 == to_doc) {
                Some(x) if !x.2.contains(&via) && x.2.len() < 8 => x.2.push(via),
                Some(_) => {}
                None => links.push((to_doc.clone(), l.kind, vec![via])),
            }
        }
        Some(TopicExport { nodes, links })
    }

    // ---- planning ----

    /// Plans adding mind maps (documents being replaced must be listed in `replacing`: their old
    /// nodes are ignored, and [`PseudoGraph::plan_remove`] of them goes first in the same commit).
    pub fn plan_add(&self, maps: &[NewMap<'_>], replacing: &HashSet<String>, p: &GraphParams) -> GraphPlan {
        let mut plan = GraphPlan::default();
        let live =
            |s: u32| -> bool { self.nodes[s as usize].as_ref().is_some_and(|n| n.doc.as_ref().is_none_or(|d| !replacing.contains(d))) };
        // New nodes, pre-order, with tree edges.
        struct New {
            id: String,
            kind: NodeKind,
            label: String,
            doc: String,
            v: Vec<f32>,
        }
        let mut news: Vec<New> = Vec::new();
        for m in maps {
            let mut vi = m.vectors.iter();
            let topic_id = format!("{}#t", m.doc_id);
            news.push(New {
                id: topic_id.clone(),
                kind: NodeKind::Topic,
                label: m.map.topic.clone(),
                doc: m.doc_id.into(),
                v: vi.next().cloned().unwrap_or_default(),
            });
            let (mut nr, mut nf) = (0, 0);
            #[allow(clippy::too_many_arguments)]
            fn walk(
                n: &MapNode,
                parent: &str,
                ordinal: u32,
                m: &NewMap<'_>,
                vi: &mut std::slice::Iter<'_, Vec<f32>>,
                nr: &mut u32,
                nf: &mut u32,
                news: &mut Vec<New>,
                edges: &mut Vec<GraphEdgeRecord>,
                chunks: &mut HashMap<String, String>,
            ) {
                let (id, kind) = if n.children.is_empty() {
                    *nf += 1;
                    (format!("{}#f{}", m.doc_id, *nf - 1), NodeKind::Fact)
                } else {
                    *nr += 1;
                    (format!("{}#r{}", m.doc_id, *nr - 1), NodeKind::Route)
                };
                if let Some(c) = n.chunk.and_then(|o| m.chunk_ids.get(o as usize)) {
                    chunks.insert(id.clone(), c.clone());
                }
                news.push(New {
                    id: id.clone(),
                    kind,
                    label: n.label.clone(),
                    doc: m.doc_id.into(),
                    v: vi.next().cloned().unwrap_or_default(),
                });
                edges.push(GraphEdgeRecord::new(EdgeKind::Tree, parent, &id, ordinal));
                for (i, c) in n.children.iter().enumerate() {
                    walk(c, &id, i as u32, m, vi, nr, nf, news, edges, chunks);
                }
            }
            let mut chunks = HashMap::new();
            for (i, c) in m.map.children.iter().enumerate() {
                walk(c, &topic_id, i as u32, m, &mut vi, &mut nr, &mut nf, &mut news, &mut plan.edges, &mut chunks);
            }
            let start = news.len() - (nr + nf) as usize - 1;
            for n in &news[start..] {
                plan.nodes.push((
                    GraphNodeRecord {
                        id: n.id.clone(),
                        kind: n.kind,
                        label: n.label.clone(),
                        doc_id: Some(n.doc.clone()),
                        chunk_id: chunks.get(&n.id).cloned(),
                    },
                    Some(n.v.clone()),
                ));
            }
        }
        // Fusion: each new topic / fact joins the super-node of its nearest neighbour (existing or
        // earlier in this batch) when the cosine exceeds the threshold.
        let mut taken: HashSet<String> = HashSet::new();
        for (kind, sup_kind, prefix, threshold, index) in [
            (NodeKind::Topic, NodeKind::SuperTopic, "st", p.super_topic_threshold, &self.topics),
            (NodeKind::Fact, NodeKind::SuperFact, "sf", p.super_fact_threshold, &self.facts),
        ] {
            let mut batch = FlatIndex::new(self.dim);
            let mut batch_ids: Vec<usize> = Vec::new();
            // super-node id per member id, for memberships decided in this plan
            let mut sup_of: HashMap<String, String> = HashMap::new();
            for (ni, n) in news.iter().enumerate() {
                if n.kind != kind || n.v.len() != self.dim {
                    continue;
                }
                let existing = index.search(&n.v, 1 + replacing.len().min(16)).into_iter().find(|(s, _)| live(*s));
                let fresh = batch.search(&n.v, 1).into_iter().next();
                let best: Option<(String, Option<String>, f32)> = match (existing, fresh) {
                    (Some((_, a)), Some((b, bs))) if bs > a => Some((news[batch_ids[b as usize]].id.clone(), None, bs)),
                    (Some((s, a)), _) => {
                        let node = self.node(s);
                        Some((node.id.clone(), node.sup.map(|x| self.node(x).id.clone()), a))
                    }
                    (None, Some((b, bs))) => Some((news[batch_ids[b as usize]].id.clone(), None, bs)),
                    (None, None) => None,
                };
                batch.insert(batch_ids.len() as u32, &n.v);
                batch_ids.push(ni);
                let Some((other, other_sup, sim)) = best else { continue };
                if sim <= threshold {
                    continue;
                }
                let sup = match other_sup.or_else(|| sup_of.get(&other).cloned()) {
                    Some(s) => s,
                    None => {
                        let mut id = format!("{prefix}:{other}");
                        let mut k = 2;
                        while self.by_id.contains_key(&id) || taken.contains(&id) {
                            id = format!("{prefix}:{other}~{k}");
                            k += 1;
                        }
                        taken.insert(id.clone());
                        plan.nodes.push((
                            GraphNodeRecord { id: id.clone(), kind: sup_kind, label: String::new(), doc_id: None, chunk_id: None },
                            None,
                        ));
                        plan.edges.push(GraphEdgeRecord::new(EdgeKind::Similar, &id, &other, 0));
                        sup_of.insert(other.clone(), id.clone());
                        id
                    }
                };
                plan.edges.push(GraphEdgeRecord::new(EdgeKind::Similar, &sup, &n.id, 0));
                sup_of.insert(n.id.clone(), sup);
            }
        }
        // Entity links: (a) new facts × every live or new title, (b) live facts × new titles.
        let mut titles: Vec<(String, String, String)> = Vec::new(); // (key, topic id, doc)
        for n in news.iter().filter(|n| n.kind == NodeKind::Topic) {
            if let Some(k) = mention_key(&n.label) {
                titles.push((k, n.id.clone(), n.doc.clone()));
            }
        }
        let new_titles = titles.len();
        let mut existing_topics: Vec<u32> = self.doc_topic.values().copied().collect();
        existing_topics.sort();
        for s in existing_topics {
            if live(s) {
                let n = self.node(s);
                if let Some(k) = mention_key(&n.label) {
                    titles.push((k, n.id.clone(), n.doc.clone().unwrap_or_default()));
                }
            }
        }
        let mut seen: HashSet<(String, String)> = HashSet::new();
        let mut link = |plan: &mut GraphPlan, fact: &str, fact_doc: &str, t: &(String, String, String)| {
            if t.2 != fact_doc && seen.insert((fact.to_string(), t.1.clone())) {
                plan.edges.push(GraphEdgeRecord::new(EdgeKind::Mention, fact, &t.1, 0));
            }
        };
        // Titles sharing a key are all linked: `by_key` lists them.
        let mut by_key: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, t) in titles.iter().enumerate() {
            by_key.entry(t.0.as_str()).or_default().push(i);
        }
        if !titles.is_empty() {
            let m = WordMatcher::new(titles.iter().map(|t| t.0.as_str()));
            for n in news.iter().filter(|n| n.kind == NodeKind::Fact) {
                for i in m.find(&n.label) {
                    for &j in &by_key[titles[i].0.as_str()] {
                        link(&mut plan, &n.id, &n.doc, &titles[j]);
                    }
                }
            }
        }
        if new_titles > 0 {
            let m = WordMatcher::new(titles[..new_titles].iter().map(|t| t.0.as_str()));
            for n in self.nodes.iter().flatten() {
                if n.kind != NodeKind::Fact || n.doc.as_ref().is_some_and(|d| replacing.contains(d)) {
                    continue;
                }
                for i in m.find(&n.label) {
                    for &j in by_key[titles[i].0.as_str()].iter().filter(|j| **j < new_titles) {
                        link(&mut plan, &n.id, n.doc.as_deref().unwrap_or(""), &titles[j]);
                    }
                }
            }
        }
        plan
    }

    /// Plans removing documents' mind maps: their nodes and vectors, tree edges, memberships,
    /// entity links in both directions, and super-nodes left without members.
    pub fn plan_remove(&self, docs: &[String]) -> GraphPlan {
        let mut plan = GraphPlan::default();
        let mut gone_nodes: HashSet<u32> = HashSet::new();
        for d in docs {
            let Some(&t) = self.doc_topic.get(d) else { continue };
            let mut stack = vec![t];
            while let Some(s) = stack.pop() {
                gone_nodes.insert(s);
                stack.extend(self.node(s).children.iter().copied());
            }
        }
        let mut order: Vec<u32> = gone_nodes.iter().copied().collect();
        order.sort();
        let mut edges: Vec<String> = Vec::new();
        let mut emptied: Vec<u32> = Vec::new();
        for &s in &order {
            let n = self.node(s);
            if let Some(p) = n.parent {
                edges.push(GraphEdgeRecord::new(EdgeKind::Tree, &self.node(p).id, &n.id, 0).id);
            }
            if let Some(sup) = n.sup {
                edges.push(GraphEdgeRecord::new(EdgeKind::Similar, &self.node(sup).id, &n.id, 0).id);
                if self.members[&sup].iter().all(|m| gone_nodes.contains(m)) && !emptied.contains(&sup) {
                    emptied.push(sup);
                }
            }
            for t in self.mentions.get(&s).into_iter().flatten() {
                edges.push(GraphEdgeRecord::new(EdgeKind::Mention, &n.id, &self.node(*t).id, 0).id);
            }
            for f in self.mentioned_by.get(&s).into_iter().flatten() {
                if !gone_nodes.contains(f) {
                    edges.push(GraphEdgeRecord::new(EdgeKind::Mention, &self.node(*f).id, &n.id, 0).id);
                }
            }
            plan.delete_nodes.push((n.id.clone(), n.kind));
        }
        emptied.sort();
        for s in emptied {
            let n = self.node(s);
            plan.delete_nodes.push((n.id.clone(), n.kind));
        }
        edges.sort();
        edges.dedup();
        plan.delete_edges = edges;
        plan
    }

    // ---- applying ----

    fn alloc(&mut self, n: Node) -> u32 {
        let s = match self.free.pop() {
            Some(s) => s,
            None => {
                self.nodes.push(None);
                self.vecs.resize(self.nodes.len() * self.dim, 0.0);
                self.quant.resize(self.nodes.len());
                (self.nodes.len() - 1) as u32
            }
        };
        self.by_id.insert(n.id.clone(), s);
        self.nodes[s as usize] = Some(n);
        s
    }

    /// Mirrors a committed plan (or, at open, every stored record as one plan). Edges whose ends
    /// are missing are skipped and reported by id.
    pub fn apply(&mut self, plan: GraphPlan) -> Vec<String> {
        let mut skipped = Vec::new();
        let mut touched: HashSet<u32> = HashSet::new();
        for key in &plan.delete_edges {
            let mut parts = key.splitn(3, '|');
            let (Some(kind), Some(a), Some(b)) = (parts.next(), parts.next(), parts.next()) else { continue };
            let (Some(&a), Some(&b)) = (self.by_id.get(a), self.by_id.get(b)) else { continue };
            match kind {
                "tree" => {
                    if let Some(n) = self.nodes[a as usize].as_mut() {
                        n.children.retain(|c| *c != b);
                    }
                    if let Some(n) = self.nodes[b as usize].as_mut() {
                        n.parent = None;
                    }
                    touched.insert(a);
                }
                "similar" => {
                    if let Some(m) = self.members.get_mut(&a) {
                        m.retain(|x| *x != b);
                    }
                    if let Some(n) = self.nodes[b as usize].as_mut() {
                        n.sup = None;
                    }
                }
                _ => {
                    if let Some(m) = self.mentions.get_mut(&a) {
                        m.retain(|x| *x != b);
                        if m.is_empty() {
                            self.mentions.remove(&a);
                        }
                    }
                    if let Some(m) = self.mentioned_by.get_mut(&b) {
                        m.retain(|x| *x != a);
                        if m.is_empty() {
                            self.mentioned_by.remove(&b);
                        }
                    }
                }
            }
        }
        for (id, _) in &plan.delete_nodes {
            let Some(s) = self.by_id.remove(id) else { continue };
            let n = self.nodes[s as usize].take().expect("live");
            match n.kind {
                NodeKind::Topic => {
                    self.topics.remove(s);
                    if let Some(d) = &n.doc {
                        self.doc_topic.remove(d);
                    }
                    self.paths.remove(&s);
                }
                NodeKind::Fact => self.facts.remove(s),
                NodeKind::SuperTopic | NodeKind::SuperFact => {
                    self.members.remove(&s);
                }
                NodeKind::Route => {}
            }
            self.mentions.remove(&s);
            self.mentioned_by.remove(&s);
            touched.remove(&s);
            self.free.push(s);
        }
        for (r, v) in plan.nodes {
            let s = self.alloc(Node {
                id: r.id,
                kind: r.kind,
                label: r.label,
                doc: r.doc_id,
                chunk: r.chunk_id,
                parent: None,
                ordinal: 0,
                children: Vec::new(),
                sup: None,
            });
            let v = v.filter(|v| v.len() == self.dim).unwrap_or_else(|| vec![0.0; self.dim]);
            self.vecs[s as usize * self.dim..(s as usize + 1) * self.dim].copy_from_slice(&v);
            self.quant.set(s as usize, &v);
            match r.kind {
                NodeKind::Topic => {
                    self.topics.insert(s, &v);
                    if let Some(d) = self.node(s).doc.clone() {
                        self.doc_topic.insert(d, s);
                    }
                    touched.insert(s);
                }
                NodeKind::Fact => self.facts.insert(s, &v),
                _ => {}
            }
        }
        for e in plan.edges {
            let (Some(&a), Some(&b)) = (self.by_id.get(&e.parent), self.by_id.get(&e.child)) else {
                skipped.push(e.id);
                continue;
            };
            match e.kind {
                EdgeKind::Tree => {
                    if let Some(n) = self.nodes[b as usize].as_mut() {
                        n.parent = Some(a);
                        n.ordinal = e.ordinal;
                    }
                    let pos = {
                        let kids = &self.node(a).children;
                        kids.partition_point(|c| self.node(*c).ordinal <= e.ordinal)
                    };
                    if let Some(n) = self.nodes[a as usize].as_mut() {
                        n.children.insert(pos, b);
                    }
                    touched.insert(a);
                }
                EdgeKind::Similar => {
                    let m = self.members.entry(a).or_default();
                    if !m.contains(&b) {
                        m.push(b);
                    }
                    if let Some(n) = self.nodes[b as usize].as_mut() {
                        n.sup = Some(a);
                    }
                }
                EdgeKind::Mention => {
                    let m = self.mentions.entry(a).or_default();
                    if !m.contains(&b) {
                        m.push(b);
                        self.mentioned_by.entry(b).or_default().push(a);
                    }
                }
            }
        }
        // Recompute the fact paths of every topic whose tree changed.
        let mut topics: HashSet<u32> = HashSet::new();
        for s in touched {
            if self.nodes[s as usize].is_none() {
                continue;
            }
            let mut t = s;
            while let Some(p) = self.node(t).parent {
                t = p;
            }
            if self.node(t).kind == NodeKind::Topic {
                topics.insert(t);
            }
        }
        for t in topics {
            let mut out = Vec::new();
            let mut stack = Vec::new();
            self.collect_paths(t, &mut stack, &mut out);
            self.paths.insert(t, out);
        }
        self.matcher = OnceCell::new();
        self.entities = OnceCell::new();
        skipped
    }

    fn collect_paths(&self, s: u32, stack: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        stack.push(s);
        let n = self.node(s);
        if n.children.is_empty() {
            if n.kind == NodeKind::Fact {
                out.push(stack.clone());
            }
        } else {
            for &c in &n.children {
                self.collect_paths(c, stack, out);
            }
        }
        stack.pop();
    }

    // ---- retrieval ----

    fn entity_index(&self) -> &EntityIndex {
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
                    t.sort_unstable();
                    t.dedup();
                    t.len()
                })
                .collect();
            ix
        })
    }

    fn title_matcher(&self) -> &TitleMatcher {
        self.matcher.get_or_init(|| {
            let mut keys: Vec<String> = Vec::new();
            let mut topics: Vec<Vec<u32>> = Vec::new();
            let mut at: HashMap<String, usize> = HashMap::new();
            let mut sorted: Vec<u32> = self.doc_topic.values().copied().collect();
            sorted.sort();
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

    /// PGR retrieval (docs/pseudo-graph.md): key points → candidate topics (seeds by title and by best
    /// fact, topics named in `query`, then the walk through super-topics and entity links) →
    /// template matrices → anchors, control / path / dyeing / aggregation matrices → the top fact
    /// paths. `kps[0]` (the question) drives the candidate walk; every key point takes part in
    /// PGR. `k` facts are returned.
    pub fn search(&self, query: &str, kps: &[&[f32]], k: usize, p: &GraphParams) -> GraphSearch {
        let mut out = GraphSearch::default();
        let Some(q) = kps.first().filter(|q| q.len() == self.dim) else { return out };
        // The walk's neighbours of a topic: super-topic siblings and entity links both ways,
        // each with the similarity of the node that leads there.
        let neighbours = |s: u32| -> Vec<(f32, u32, &'static str)> {
            let mut next: Vec<(f32, u32, &'static str)> =
                self.links(s, p).into_iter().map(|l| (dot(self.vec_of(l.scored_by), q), l.to, l.kind)).collect();
            if p.dense_hops > 0 {
                let best = self
                    .paths
                    .get(&s)
                    .into_iter()
                    .flatten()
                    .map(|path| *path.last().expect("non-empty path"))
                    .map(|f| (dot(self.vec_of(f), q), f))
                    .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
                if let Some((sim, f)) = best {
                    let mut q2: Vec<f32> = q.iter().zip(self.vec_of(f)).map(|(a, b)| a + b).collect();
                    let n = q2.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                    q2.iter_mut().for_each(|x| *x /= n);
                    let mut hops: Vec<u32> = Vec::new();
                    for (g, _) in self.facts.search(&q2, 8 * p.dense_hops) {
                        let t = self.topic_of(g);
                        if t != s && !hops.contains(&t) {
                            hops.push(t);
                            next.push((sim, t, "hop"));
                            if hops.len() == p.dense_hops {
                                break;
                            }
                        }
                    }
                }
            }
            next
        };
        let mut cand: Vec<u32> = Vec::new();
        let mut why: Vec<&'static str> = Vec::new();
        let mut inherited: HashMap<u32, f32> = HashMap::new();
        let add = |cand: &mut Vec<u32>, why: &mut Vec<&'static str>, t: u32, w: &'static str, cap: usize| {
            if !cand.contains(&t) && cand.len() < cap {
                cand.push(t);
                why.push(w);
            }
        };
        // Neighbours are taken round-robin over the source topics (each source's best link
        // first), so one source with many links cannot crowd out another's bridge.
        let mut walk = |cand: &mut Vec<u32>, why: &mut Vec<&'static str>, from: &[u32], cap: usize| {
            let mut lists: Vec<Vec<(f32, u32, &'static str)>> = from
                .iter()
                .map(|s| {
                    let mut l = neighbours(*s);
                    l.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    l
                })
                .collect();
            let longest = lists.iter().map(|l| l.len()).max().unwrap_or(0);
            for r in 0..longest {
                for l in lists.iter_mut() {
                    let Some(&(sim, t, w)) = l.get(r) else { continue };
                    if cand.len() < cap && !cand.contains(&t) {
                        inherited.insert(t, sim * p.link_decay);
                        cand.push(t);
                        why.push(w);
                    }
                }
            }
        };
        // Tier 1: topics the query names, and their neighbours (the likeliest bridges), leaving
        // room for the similarity seeds.
        let tier1 = p.max_topics.saturating_sub(p.seed_topics).max(1);
        let m = self.title_matcher();
        for i in m.words.find(query) {
            for &t in &m.topics[i] {
                add(&mut cand, &mut why, t, "query", tier1);
            }
        }
        let named = cand.clone();
        walk(&mut cand, &mut why, &named, tier1);
        // Tier 2: seeds by best fact and by title similarity, interleaved, then their neighbours.
        let by_title: Vec<u32> = self.topics.search(q, p.seed_topics).into_iter().map(|x| x.0).collect();
        let mut by_fact: Vec<u32> = Vec::new();
        for (f, _) in self.facts.search(q, p.seed_topics * 8) {
            let mut t = f;
            while let Some(up) = self.node(t).parent {
                t = up;
            }
            if !by_fact.contains(&t) {
                by_fact.push(t);
                if by_fact.len() == p.seed_topics {
                    break;
                }
            }
        }
        let before = cand.len();
        for i in 0..p.seed_topics {
            if let Some(&t) = by_fact.get(i) {
                add(&mut cand, &mut why, t, "fact", p.max_topics);
            }
            if let Some(&t) = by_title.get(i) {
                add(&mut cand, &mut why, t, "title", p.max_topics);
            }
        }
        let seeds: Vec<u32> = cand[before..].to_vec();
        walk(&mut cand, &mut why, &seeds, p.max_topics);
        // Template over the candidates' fact paths, node ids compacted.
        let mut compact: HashMap<u32, u32> = HashMap::new();
        let mut slots: Vec<u32> = Vec::new();
        let mut rows: Vec<Vec<u32>> = Vec::new();
        for &t in &cand {
            for path in self.paths.get(&t).into_iter().flatten() {
                rows.push(
                    path.iter()
                        .map(|s| {
                            *compact.entry(*s).or_insert_with(|| {
                                slots.push(*s);
                                (slots.len() - 1) as u32
                            })
                        })
                        .collect(),
                );
            }
        }
        let template = Template::from_paths(rows.iter().map(|r| r.as_slice()));
        let mut kq = QuantVectors::new(self.dim);
        for kp in kps.iter().filter(|k| k.len() == self.dim) {
            kq.push(kp);
        }
        let sims = node_sims_i8(&self.quant, &slots, &kq);
        let sim_refs: Vec<&[f32]> = sims.iter().map(|s| s.as_slice()).collect();
        let result = pgr(&template, &sim_refs, &p.pgr);
        // Hits: selected rows, then the other candidate facts by leaf similarity.
        let fact_hit = |row: u32, score: f32| -> Option<GraphHit> {
            let leaf = slots[*rows[row as usize].last()? as usize];
            let n = self.node(leaf);
            Some(GraphHit { chunk_id: n.chunk.clone()?, doc_id: n.doc.clone()?, fact_id: n.id.clone(), score, row })
        };
        let mut chosen: HashSet<u32> = HashSet::new();
        for &(r, s) in &result.rows {
            chosen.insert(r);
            out.hits.extend(fact_hit(r, s));
        }
        let mut rest: Vec<(u32, f32)> = (0..rows.len() as u32)
            .filter(|r| !chosen.contains(r))
            .map(|r| {
                let row = &rows[r as usize];
                let own = sims[0][*row.last().expect("row") as usize];
                (r, own.max(inherited.get(&slots[row[0] as usize]).copied().unwrap_or(f32::MIN)))
            })
            .collect();
        rest.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (r, s) in rest.into_iter().take(k.saturating_sub(out.hits.len())) {
            out.hits.extend(fact_hit(r, s - 2.0));
        }
        // Context: the selected rows merged back into mind maps.
        let mut maps: Vec<MindMap> = Vec::new();
        for &(r, _) in &result.rows {
            let labels: Vec<&str> = rows[r as usize].iter().map(|c| self.node(slots[*c as usize]).label.as_str()).collect();
            let chunk = self
                .node(slots[*rows[r as usize].last().expect("row") as usize])
                .chunk
                .as_ref()
                .and_then(|c| c.rsplit('#').next()?.parse().ok());
            let map = match maps.iter_mut().find(|m| m.topic == labels[0]) {
                Some(m) => m,
                None => {
                    maps.push(MindMap { topic: labels[0].to_string(), children: Vec::new() });
                    maps.last_mut().expect("pushed")
                }
            };
            let mut level = &mut map.children;
            for (i, l) in labels[1..].iter().enumerate() {
                let leaf = i + 2 == labels.len();
                let pos = level.iter().position(|n| n.label == *l && n.children.is_empty() == leaf);
                let pos = match pos {
                    Some(x) => x,
                    None => {
                        level.push(MapNode { label: l.to_string(), children: Vec::new(), chunk: if leaf { chunk } else { None } });
                        level.len() - 1
                    }
                };
                level = &mut level[pos].children;
            }
        }
        out.context = maps;
        out.explain = GraphExplain {
            topics: cand.iter().zip(&why).map(|(t, w)| (self.node(*t).doc.clone().unwrap_or_default(), w.to_string())).collect(),
            template: (template.rows(), template.cols()),
            anchors: result.anchors.clone(),
            rows: result
                .rows
                .iter()
                .map(|(r, s)| (*r, *s, rows[*r as usize].iter().map(|c| self.node(slots[*c as usize]).label.clone()).collect()))
                .collect(),
        };
        out.hits.truncate(k.max(result.rows.len()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::entity_spans;

    #[test]
    fn entity_spans_are_capitalised_runs() {
        assert_eq!(
            entity_spans("The Bubye River is a river in Zimbabwe, near Harare, Zimbabwe. It joins the Limpopo."),
            vec!["Bubye River", "Zimbabwe", "Harare", "Limpopo"]
        );
        assert_eq!(
            entity_spans("He led the Church of England and the Anglican Communion of the"),
            vec!["Church of England", "Anglican Communion"]
        );
        assert_eq!(entity_spans("In 1960 it was published by Wiley-Blackwell."), vec!["Wiley", "Blackwell"]);
        assert!(entity_spans("no names here at all. A b").is_empty());
    }
}
