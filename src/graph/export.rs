//! A document's part of the graph read back out: its mind map, and a topic's part of a static-site
//! snapshot.
use std::collections::HashMap;

use crate::types::NodeKind;

use super::mindmap::{MapNode, MindMap};
use super::params::GraphParams;
use super::pseudo::*;

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

impl PseudoGraph {
    /// The mind map of a document, rebuilt from its nodes.
    pub fn mind_map(&self, doc: &str) -> Option<MindMap> {
        let t = *self.doc_topic.get(doc)?;
        fn build(g: &PseudoGraph, s: u32) -> MapNode {
            let n = g.node(s);
            MapNode { label: n.label.clone(), children: n.children.iter().map(|c| build(g, *c)).collect(), chunk: n.chunk_ordinal }
        }
        let n = self.node(t);
        Some(MindMap { topic: n.label.clone(), children: n.children.iter().map(|c| build(self, *c)).collect() })
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
}
