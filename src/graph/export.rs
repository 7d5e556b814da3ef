//! A document's part of the graph read back out: its mind map, and a topic's part of a static-site
//! snapshot.
use std::collections::HashMap;

use crate::schema::NodeKind;

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
        // One entry per neighbour document, in link order (a map keeps this linear in the links).
        let mut links: Vec<(String, &'static str, Vec<u32>)> = Vec::new();
        let mut at: HashMap<&str, usize> = HashMap::new();
        for l in self.links(t, p) {
            let (Some(to_doc), Some(&via)) = (self.node(l.to).doc.as_ref(), local.get(&l.from)) else { continue };
            if l.to == t {
                continue;
            }
            match at.get(to_doc.as_str()) {
                Some(&i) => {
                    let x = &mut links[i];
                    if !x.2.contains(&via) && x.2.len() < 8 {
                        x.2.push(via);
                    }
                }
                None => {
                    at.insert(to_doc, links.len());
                    links.push((to_doc.clone(), l.kind, vec![via]));
                }
            }
        }
        // The loader's round-robin reads at most `max_topics` links of a list past at most
        // `max_topics` pages it already holds.
        Some(TopicExport { nodes, links: bound_links(links, 2 * p.max_topics) })
    }
}

/// The links a loader can reach, out of `links` (any order): a loader ranks a topic's links by the
/// best similarity of their `via` nodes, ties by page (doc id) order, and reads at most `reach`
/// of them. A link is kept when, for one of its `via` nodes, it is among the first `reach` links
/// (by doc id) through that node: a link dropped has `reach` kept links ranked at least as high
/// whatever the query, so the loader's choice is unchanged, and a topic's links are at most
/// `reach` × its nodes (a super-topic of *n* members no longer makes *n*² bytes). Sorted by doc
/// id.
fn bound_links(mut links: Vec<(String, &'static str, Vec<u32>)>, reach: usize) -> Vec<(String, &'static str, Vec<u32>)> {
    crate::sort::by(&mut links, |a, b| a.0.cmp(&b.0));
    let mut through: HashMap<u32, usize> = HashMap::new();
    links.retain(|(_, _, via)| {
        let mut keep = false;
        for v in via {
            let n = through.entry(*v).or_default();
            keep |= *n < reach;
            *n += 1;
        }
        keep
    });
    links
}

#[cfg(test)]
mod tests {
    use super::bound_links;
    use rand::{Rng, SeedableRng};

    /// The loader's choice (docs/static-site.md): links ranked by their best `via` similarity,
    /// ties by doc id; the first `r`.
    fn top(links: &[(String, &'static str, Vec<u32>)], sims: &[f32], r: usize) -> Vec<String> {
        let mut ranked: Vec<(f32, &str)> =
            links.iter().map(|(d, _, via)| (via.iter().map(|v| sims[*v as usize]).fold(f32::MIN, f32::max), d.as_str())).collect();
        crate::sort::by(&mut ranked, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        ranked.into_iter().take(r).map(|x| x.1.to_string()).collect()
    }

    #[test]
    fn bounded_links_keep_every_choice_the_loader_can_make_and_grow_with_the_nodes_only() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        for round in 0..200 {
            let nodes = rng.random_range(1..6u32);
            let reach = rng.random_range(1..12usize);
            let n = rng.random_range(0..300usize);
            let links: Vec<(String, &'static str, Vec<u32>)> = (0..n)
                .map(|i| {
                    let mut via: Vec<u32> = (0..rng.random_range(1..4)).map(|_| rng.random_range(0..nodes)).collect();
                    crate::sort::ascending(&mut via);
                    via.dedup();
                    (format!("d{:04}", (i * 7919) % 1000), via)
                })
                .collect::<std::collections::BTreeMap<String, Vec<u32>>>()
                .into_iter()
                .map(|(d, via)| (d, "super_topic", via))
                .collect();
            let kept = bound_links(links.clone(), reach);
            assert!(kept.len() <= reach * nodes as usize, "round {round}: {} links kept", kept.len());
            for _ in 0..5 {
                // Coarse similarities make ties, which the loader breaks by page.
                let sims: Vec<f32> = (0..nodes).map(|_| rng.random_range(0..4) as f32 / 4.0).collect();
                assert_eq!(top(&kept, &sims, reach), top(&links, &sims, reach), "round {round}");
            }
        }
    }
}
