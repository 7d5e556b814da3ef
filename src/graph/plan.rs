//! Planning a write of the graph ([`PseudoGraph::plan_add`], [`PseudoGraph::plan_remove`]: pure)
//! and mirroring it once committed ([`PseudoGraph::apply`]).
use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};

use crate::index::vectors::FlatIndex;
use crate::ports::{Collection, Op, Record};
use crate::schema::{EdgeKey, EdgeKind, GraphEdgeRecord, GraphNodeRecord, NodeId, NodeKind, VectorRecord};

use super::entities::*;
use super::mindmap::{MapNode, MindMap};
use super::params::GraphParams;
use super::pseudo::*;

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
/// `title > route > …`; fact = `title > route > …` + newline + fact (docs/pseudo-graph.md). The
/// path part is cut to its last [`MAX_PATH_CHARS`] characters (the most specific routes): it is
/// copied for every node, and the embedder reads only the first 256 tokens anyway.
pub fn node_inputs(map: &MindMap) -> Vec<String> {
    node_sources(map).into_iter().map(|(input, _)| input).collect()
}

/// The longest path part of a node's embedding input, in characters ([`node_inputs`]).
pub const MAX_PATH_CHARS: usize = 512;

/// A node's embedding input and, for a fact node, `(chunk ordinal, fact)`: its text is a sentence
/// or list item of that chunk (`None` for the topic and routes).
pub type NodeSource<'m> = (String, Option<(u32, &'m str)>);

/// [`node_inputs`], each with the fact it ends in ([`NodeSource`]).
pub fn node_sources(map: &MindMap) -> Vec<NodeSource<'_>> {
    fn walk<'m>(n: &'m MapNode, prefix: &str, out: &mut Vec<NodeSource<'m>>) {
        if n.children.is_empty() {
            out.push((format!("{prefix}\n{}", n.label), n.chunk.map(|c| (c, n.label.as_str()))));
        } else {
            let mut p = format!("{prefix} > {}", n.label);
            if let Some((cut, _)) = p.char_indices().rev().nth(MAX_PATH_CHARS - 1) {
                p.drain(..cut);
            }
            out.push((p.clone(), None));
            for c in &n.children {
                walk(c, &p, out);
            }
        }
    }
    let mut out = vec![(map.topic.clone(), None)];
    for c in &map.children {
        walk(c, &map.topic, &mut out);
    }
    out
}

/// A planned change of the graph: records to delete, then records to write. [`GraphPlan::ops`]
/// gives the store ops; [`PseudoGraph::apply`] mirrors it in memory after the commit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GraphPlan {
    /// Edges to delete.
    pub delete_edges: Vec<EdgeKey>,
    /// Node ids to delete (their vectors too).
    pub delete_nodes: Vec<(String, NodeKind)>,
    /// Nodes to write.
    pub nodes: Vec<PlannedNode>,
    /// Edges to write.
    pub edges: Vec<GraphEdgeRecord>,
}

/// A node a plan writes: its record, the vector of a topic, route or fact, and a fact's chunk's
/// ordinal in its document (the mind map's `chunk`; the record names the chunk by id).
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedNode {
    /// The record.
    pub record: GraphNodeRecord,
    /// Its vector.
    pub vector: Option<Vec<f32>>,
    /// Its chunk's ordinal.
    pub chunk_ordinal: Option<u32>,
}

impl GraphPlan {
    /// The store ops, deletions first.
    pub fn ops(&self) -> Vec<Op> {
        self.ops_kept(&|_| true)
    }

    /// [`GraphPlan::ops`] without the records of collections the store does not keep
    /// ([`crate::ports::Store::keeps`]): a site build's engine writes its graph to no store.
    pub fn ops_kept(&self, keeps: &dyn Fn(Collection) -> bool) -> Vec<Op> {
        let (nodes, vectors, edges) = (keeps(Collection::GraphNodes), keeps(Collection::Vectors), keeps(Collection::GraphEdges));
        let mut ops = Vec::new();
        for e in &self.delete_edges {
            ops.push(Op::Delete(Collection::GraphEdges, e.id()));
        }
        for (n, kind) in &self.delete_nodes {
            ops.push(Op::Delete(Collection::GraphNodes, n.clone()));
            if vector_collection(*kind).is_some() {
                ops.push(Op::Delete(Collection::Vectors, n.clone()));
            }
        }
        for PlannedNode { record: n, vector: v, .. } in &self.nodes {
            if nodes {
                ops.push(Op::Put(Record::GraphNode(n.clone())));
            }
            if let (true, Some(v), Some(c)) = (vectors, v, vector_collection(n.kind)) {
                ops.push(Op::Put(Record::Vector(VectorRecord::from_f32(&n.id, c, v))));
            }
        }
        if edges {
            for e in &self.edges {
                ops.push(Op::Put(Record::GraphEdge(e.clone())));
            }
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

/// A new node's nearest neighbours in the graph (`(slot, cosine)`, best first) and its nearest
/// earlier node of the same batch (`(batch position, cosine)`).
type Nearest = (Vec<(u32, f32)>, Option<(u32, f32)>);

/// A new node of a mind map being added, in pre-order.
struct New<'a> {
    id: String,
    kind: NodeKind,
    label: String,
    doc: String,
    /// Its vector, in the map's (copied once, into the plan's node).
    v: &'a [f32],
}

/// The nodes of `maps`, pre-order, each topic first: their node records (with vectors and chunk
/// ordinals) and tree edges go into `plan`.
fn new_nodes<'a>(maps: &[NewMap<'a>], plan: &mut GraphPlan) -> Vec<New<'a>> {
    let mut news: Vec<New> = Vec::new();
    for m in maps {
        let mut vi = m.vectors.iter();
        let topic_id = NodeId::Topic(m.doc_id).to_string();
        news.push(New {
            id: topic_id.clone(),
            kind: NodeKind::Topic,
            label: m.map.topic.clone(),
            doc: m.doc_id.into(),
            v: vi.next().map_or(&[], Vec::as_slice),
        });
        let (mut nr, mut nf) = (0, 0);
        #[allow(clippy::too_many_arguments)]
        fn walk<'a>(
            n: &MapNode,
            parent: &str,
            ordinal: u32,
            m: &NewMap<'a>,
            vi: &mut std::slice::Iter<'a, Vec<f32>>,
            nr: &mut u32,
            nf: &mut u32,
            news: &mut Vec<New<'a>>,
            edges: &mut Vec<GraphEdgeRecord>,
            chunks: &mut HashMap<String, (String, u32)>,
        ) {
            let (id, kind) = if n.children.is_empty() {
                *nf += 1;
                (NodeId::Fact(m.doc_id, *nf - 1).to_string(), NodeKind::Fact)
            } else {
                *nr += 1;
                (NodeId::Route(m.doc_id, *nr - 1).to_string(), NodeKind::Route)
            };
            if let Some((o, c)) = n.chunk.and_then(|o| Some((o, m.chunk_ids.get(o as usize)?))) {
                chunks.insert(id.clone(), (c.clone(), o));
            }
            news.push(New { id: id.clone(), kind, label: n.label.clone(), doc: m.doc_id.into(), v: vi.next().map_or(&[], Vec::as_slice) });
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
            let chunk = chunks.get(&n.id);
            plan.nodes.push(PlannedNode {
                record: GraphNodeRecord {
                    id: n.id.clone(),
                    kind: n.kind,
                    label: n.label.clone(),
                    doc_id: Some(n.doc.clone()),
                    chunk_id: chunk.map(|c| c.0.clone()),
                },
                vector: Some(n.v.to_vec()),
                chunk_ordinal: chunk.map(|c| c.1),
            });
        }
    }
    news
}

/// The most levels a tree of the graph may have below its topic (a fact at most this deep). The
/// trees the engine builds have at most 8 (a heading path of 6, or an LLM mind map of 8 levels,
/// and its fact); a stored edge that would go deeper is not applied (and deleted at open).
pub const MAX_TREE_DEPTH: usize = 32;

impl PseudoGraph {
    /// Plans adding mind maps (documents being replaced must be listed in `replacing`: their old
    /// nodes are ignored, and [`PseudoGraph::plan_remove`] of them goes first in the same commit).
    /// The steps: the maps' nodes and tree edges (`new_nodes`), the new topics and facts fused
    /// into super-nodes (`plan_fusion`), the entity links
    /// (`plan_links`).
    pub fn plan_add(&self, maps: &[NewMap<'_>], replacing: &HashSet<String>, p: &GraphParams) -> GraphPlan {
        let mut plan = GraphPlan::default();
        let news = new_nodes(maps, &mut plan);
        self.plan_fusion(&news, replacing, p, &mut plan);
        self.plan_links(&news, replacing, &mut plan);
        plan
    }

    /// Whether node `s` is live and not of a document in `replacing`.
    fn kept(&self, s: u32, replacing: &HashSet<String>) -> bool {
        self.nodes[s as usize].as_ref().is_some_and(|n| n.doc.as_ref().is_none_or(|d| !replacing.contains(d)))
    }

    /// Fusion: each new topic / fact joins the super-node of its nearest neighbour (existing or
    /// earlier in this batch) when the cosine exceeds the threshold. A threshold of 1 fuses
    /// nothing: no neighbour is searched (site snapshots, which export no fact super-nodes).
    fn plan_fusion(&self, news: &[New], replacing: &HashSet<String>, p: &GraphParams, plan: &mut GraphPlan) {
        let live = |s: u32| self.kept(s, replacing);
        let mut taken: HashSet<String> = HashSet::new();
        for (kind, sup_kind, threshold, index) in [
            (NodeKind::Topic, NodeKind::SuperTopic, p.super_topic_threshold, &self.topics),
            (NodeKind::Fact, NodeKind::SuperFact, p.super_fact_threshold, &self.facts),
        ] {
            if threshold >= 1.0 {
                continue;
            }
            // super-node id per member id, for memberships decided in this plan
            let mut sup_of: HashMap<String, String> = HashMap::new();
            // Each new node's nearest neighbours in the graph as it stood, and its nearest
            // earlier node of this batch: independent of the decisions below, so natively they
            // are searched on every core first.
            let depth = 1 + replacing.len().min(16);
            let batch_ids: Vec<usize> = (0..news.len()).filter(|&i| news[i].kind == kind && news[i].v.len() == self.dim).collect();
            let mut batch = FlatIndex::new(self.dim);
            for (b, &ni) in batch_ids.iter().enumerate() {
                batch.insert(b as u32, news[ni].v);
            }
            let nearest = |b: usize| -> Nearest {
                let v = &news[batch_ids[b]].v;
                (index.search(v, depth), batch.search_first(v, b, 1).into_iter().next())
            };
            #[cfg(not(target_arch = "wasm32"))]
            let nearest: Vec<_> = {
                use rayon::prelude::*;
                (0..batch_ids.len()).into_par_iter().map(nearest).collect()
            };
            #[cfg(target_arch = "wasm32")]
            let nearest: Vec<_> = (0..batch_ids.len()).map(nearest).collect();
            for (&ni, (existing, fresh)) in batch_ids.iter().zip(nearest) {
                let n = &news[ni];
                let existing = existing.into_iter().find(|(s, _)| live(*s));
                let best: Option<(String, Option<String>, f32)> = match (existing, fresh) {
                    (Some((_, a)), Some((b, bs))) if bs > a => Some((news[batch_ids[b as usize]].id.clone(), None, bs)),
                    (Some((s, a)), _) => {
                        let node = self.node(s);
                        Some((node.id.clone(), node.sup.map(|x| self.node(x).id.clone()), a))
                    }
                    (None, Some((b, bs))) => Some((news[batch_ids[b as usize]].id.clone(), None, bs)),
                    (None, None) => None,
                };
                let Some((other, other_sup, sim)) = best else { continue };
                if sim <= threshold {
                    continue;
                }
                let sup = match other_sup.or_else(|| sup_of.get(&other).cloned()) {
                    Some(s) => s,
                    None => {
                        let mut k = 0;
                        let mut id = NodeId::Super(sup_kind, &other, k).to_string();
                        while self.by_id.contains_key(&id) || taken.contains(&id) {
                            k += 1;
                            id = NodeId::Super(sup_kind, &other, k).to_string();
                        }
                        taken.insert(id.clone());
                        plan.nodes.push(PlannedNode {
                            record: GraphNodeRecord { id: id.clone(), kind: sup_kind, label: String::new(), doc_id: None, chunk_id: None },
                            vector: None,
                            chunk_ordinal: None,
                        });
                        plan.edges.push(GraphEdgeRecord::new(EdgeKind::Similar, &id, &other, 0));
                        sup_of.insert(other.clone(), id.clone());
                        id
                    }
                };
                plan.edges.push(GraphEdgeRecord::new(EdgeKind::Similar, &sup, &n.id, 0));
                sup_of.insert(n.id.clone(), sup);
            }
        }
    }

    /// Entity links: (a) new facts × every live or new title, (b) live facts × new titles.
    fn plan_links(&self, news: &[New], replacing: &HashSet<String>, plan: &mut GraphPlan) {
        let live = |s: u32| self.kept(s, replacing);
        let mut titles: Vec<(String, String, String)> = Vec::new(); // (key, topic id, doc)
        for n in news.iter().filter(|n| n.kind == NodeKind::Topic) {
            if let Some(k) = mention_key(&n.label) {
                titles.push((k, n.id.clone(), n.doc.clone()));
            }
        }
        let new_titles = titles.len();
        let mut existing_topics: Vec<u32> = self.doc_topic.values().copied().collect();
        crate::sort::ascending(&mut existing_topics);
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
                        link(plan, &n.id, &n.doc, &titles[j]);
                    }
                }
            }
        }
        if new_titles > 0 {
            // Every live fact is read for the new titles: natively on every core, in order.
            let m = WordMatcher::new(titles[..new_titles].iter().map(|t| t.0.as_str()));
            let found = |n: &Node| -> Vec<usize> {
                if n.kind != NodeKind::Fact || n.doc.as_ref().is_some_and(|d| replacing.contains(d)) {
                    return Vec::new();
                }
                m.find(&n.label)
            };
            #[cfg(not(target_arch = "wasm32"))]
            let found: Vec<Vec<usize>> = {
                use rayon::prelude::*;
                self.nodes.par_iter().flatten().map(found).collect()
            };
            #[cfg(target_arch = "wasm32")]
            let found: Vec<Vec<usize>> = self.nodes.iter().flatten().map(found).collect();
            for (n, hits) in self.nodes.iter().flatten().zip(found) {
                for i in hits {
                    for &j in by_key[titles[i].0.as_str()].iter().filter(|j| **j < new_titles) {
                        link(plan, &n.id, n.doc.as_deref().unwrap_or(""), &titles[j]);
                    }
                }
            }
        }
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
        crate::sort::ascending(&mut order);
        let mut edges: Vec<EdgeKey> = Vec::new();
        let mut emptied: Vec<u32> = Vec::new();
        for &s in &order {
            let n = self.node(s);
            if let Some(p) = n.parent {
                edges.push(GraphEdgeRecord::new(EdgeKind::Tree, &self.node(p).id, &n.id, 0).key());
            }
            if let Some(sup) = n.sup {
                edges.push(GraphEdgeRecord::new(EdgeKind::Similar, &self.node(sup).id, &n.id, 0).key());
                if self.members[&sup].iter().all(|m| gone_nodes.contains(m)) && !emptied.contains(&sup) {
                    emptied.push(sup);
                }
            }
            for t in self.mentions.get(&s).into_iter().flatten() {
                edges.push(GraphEdgeRecord::new(EdgeKind::Mention, &n.id, &self.node(*t).id, 0).key());
            }
            for f in self.mentioned_by.get(&s).into_iter().flatten() {
                if !gone_nodes.contains(f) {
                    edges.push(GraphEdgeRecord::new(EdgeKind::Mention, &self.node(*f).id, &n.id, 0).key());
                }
            }
            plan.delete_nodes.push((n.id.clone(), n.kind));
        }
        crate::sort::ascending(&mut emptied);
        for s in emptied {
            let n = self.node(s);
            plan.delete_nodes.push((n.id.clone(), n.kind));
        }
        crate::sort::ascending(&mut edges);
        edges.dedup();
        plan.delete_edges = edges;
        plan
    }

    // ---- applying ----

    pub(super) fn alloc(&mut self, n: Node) -> u32 {
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

    /// Mirrors a committed plan (or, at open, every stored record as one plan). What would not
    /// form a graph is skipped: a node whose id is already live, and (reported by id; open
    /// deletes them from the store) an edge with a missing end, from a node to
    /// itself, of a kind its ends do not have (a tree edge to or from a super-node or down to a topic, a similar edge
    /// from anything but a super-node, a mention edge not from a fact to a topic), a second
    /// parent, or a tree edge that would close a cycle.
    pub fn apply(&mut self, plan: GraphPlan) -> Vec<String> {
        let mut skipped = Vec::new();
        let mut touched: HashSet<u32> = HashSet::new();
        for key in &plan.delete_edges {
            self.unlink(key, &mut touched);
        }
        for (id, _) in &plan.delete_nodes {
            self.delete_node(id, &mut touched);
        }
        // Room for the new nodes at once (a site build applies all its pages in one plan).
        let fresh = plan.nodes.len().saturating_sub(self.free.len());
        crate::index::reserve_batch(&mut self.nodes, fresh);
        crate::index::reserve_batch(&mut self.vecs, fresh * self.dim);
        self.quant.reserve(fresh);
        self.by_id.reserve(plan.nodes.len());
        let count = |k: NodeKind| plan.nodes.iter().filter(|n| n.record.kind == k).count();
        if self.fact_index {
            self.facts.reserve(count(NodeKind::Fact));
        }
        self.topics.reserve(count(NodeKind::Topic));
        for node in plan.nodes {
            if let Some(id) = self.insert_node(node, &mut touched) {
                skipped.push(id);
            }
        }
        for e in plan.edges {
            if !self.link(&e, &mut touched) {
                skipped.push(e.id);
            }
        }
        self.refresh_paths(touched);
        self.matcher = OnceCell::new();
        self.entities = OnceCell::new();
        skipped
    }

    /// Takes edge `key` out of the in-memory graph (a tree edge's parent joins `touched`).
    fn unlink(&mut self, key: &EdgeKey, touched: &mut HashSet<u32>) {
        let (Some(&a), Some(&b)) = (self.by_id.get(&key.parent), self.by_id.get(&key.child)) else { return };
        match key.kind {
            EdgeKind::Tree => {
                if let Some(n) = self.nodes[a as usize].as_mut() {
                    n.children.retain(|c| *c != b);
                }
                if let Some(n) = self.nodes[b as usize].as_mut() {
                    n.parent = None;
                }
                touched.insert(a);
            }
            EdgeKind::Similar => {
                if let Some(m) = self.members.get_mut(&a) {
                    m.retain(|x| *x != b);
                }
                if let Some(n) = self.nodes[b as usize].as_mut() {
                    n.sup = None;
                }
            }
            EdgeKind::Mention => {
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

    /// Deletes node `id` from the in-memory graph, its slot freed.
    fn delete_node(&mut self, id: &str, touched: &mut HashSet<u32>) {
        let Some(s) = self.by_id.remove(id) else { return };
        let Some(n) = self.nodes[s as usize].take() else { return };
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

    /// Adds a planned node (a topic joins `touched`); `Some(id)` when the id is already live
    /// (skipped).
    fn insert_node(&mut self, node: PlannedNode, touched: &mut HashSet<u32>) -> Option<String> {
        let PlannedNode { record: r, vector: v, chunk_ordinal } = node;
        if self.by_id.contains_key(&r.id) {
            return Some(r.id);
        }
        let s = self.alloc(Node {
            id: r.id,
            kind: r.kind,
            label: r.label,
            doc: r.doc_id,
            chunk: r.chunk_id,
            chunk_ordinal,
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
            NodeKind::Fact if self.fact_index => self.facts.insert(s, &v),
            _ => {}
        }
        None
    }

    /// Adds edge `e` (a tree edge's parent joins `touched`); false when it would not form a
    /// graph ([`PseudoGraph::apply`]).
    fn link(&mut self, e: &GraphEdgeRecord, touched: &mut HashSet<u32>) -> bool {
        let (Some(&a), Some(&b)) = (self.by_id.get(&e.parent), self.by_id.get(&e.child)) else {
            return false;
        };
        if !self.edge_fits(e.kind, a, b) {
            return false;
        }
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
        true
    }

    /// Recomputes the fact paths of every topic whose tree changed (holding a node of `touched`).
    fn refresh_paths(&mut self, touched: HashSet<u32>) {
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
    }
    /// Whether an edge `kind` from slot `a` to slot `b` keeps the graph one
    /// ([`PseudoGraph::apply`]).
    fn edge_fits(&self, kind: EdgeKind, a: u32, b: u32) -> bool {
        let (na, nb) = (self.node(a), self.node(b));
        if a == b {
            return false;
        }
        let is_super = |k| matches!(k, NodeKind::SuperTopic | NodeKind::SuperFact);
        match kind {
            EdgeKind::Tree => {
                if is_super(na.kind) || is_super(nb.kind) || nb.kind == NodeKind::Topic || nb.parent.is_some() {
                    return false;
                }
                // `a`'s ancestors must not include `b` (the trees are acyclic, so this ends), and
                // the tree stays within MAX_TREE_DEPTH levels (a stored chain of any length
                // otherwise costs quadratic time here and deep recursion in every tree walk).
                let (mut t, mut depth) = (a, 0);
                while let Some(up) = self.node(t).parent {
                    if up == b {
                        return false;
                    }
                    t = up;
                    depth += 1;
                }
                depth + 1 + self.height(b, MAX_TREE_DEPTH) <= MAX_TREE_DEPTH
            }
            EdgeKind::Similar => {
                matches!((na.kind, nb.kind), (NodeKind::SuperTopic, NodeKind::Topic) | (NodeKind::SuperFact, NodeKind::Fact))
                    && nb.sup.is_none_or(|s| s == a)
            }
            EdgeKind::Mention => na.kind == NodeKind::Fact && nb.kind == NodeKind::Topic,
        }
    }

    /// Levels below `s` in its tree, counted up to `cap + 1` (a walk of at most the nodes within
    /// that many levels: every tree already fits [`MAX_TREE_DEPTH`], so each node is walked
    /// from at most that many ancestors over a whole [`PseudoGraph::apply`]).
    fn height(&self, s: u32, cap: usize) -> usize {
        let mut stack = vec![(s, 0usize)];
        let mut h = 0;
        while let Some((n, d)) = stack.pop() {
            h = h.max(d);
            if d <= cap {
                stack.extend(self.node(n).children.iter().map(|&c| (c, d + 1)));
            }
        }
        h
    }

    pub(super) fn collect_paths(&self, s: u32, stack: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
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
}
