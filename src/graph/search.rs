//! The PGR retriever over the live graph: key points → candidate topics (seeds and the
//! candidate walk over super-topics, mentions and entities) → template → PGR → facts and context.
use std::collections::{HashMap, HashSet};

use crate::embed::vecmath::dot;

use super::mindmap::{MapNode, MindMap};
use super::params::GraphParams;
use super::pgr::{Anchor, QuantVectors, Template, node_sims_i8, pgr};
use super::pseudo::*;

/// One fact found by the graph retriever.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct GraphHit {
    /// The fact's chunk (provenance).
    pub chunk_id: String,
    /// The fact's document.
    pub doc_id: String,
    /// Fact node id.
    pub fact_id: String,
    /// PGR support of the fact path (per key point the largest row sum of one anchor's dyeing
    /// matrix, summed over key points: [`super::pgr::PgrResult::support`]); facts not selected by
    /// PGR follow with their leaf similarity − 2, so they sort after every selected row.
    pub score: f32,
    /// Template row of the fact path.
    pub row: u32,
}

/// What the graph retriever did, for the explain view.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
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
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct GraphSearch {
    /// Facts, best first: PGR's selected rows, then the other candidate facts.
    pub hits: Vec<GraphHit>,
    /// How many of `hits` come first from PGR's selected rows.
    #[serde(default)]
    pub selected: usize,
    /// The selected fact paths merged back into mind maps (topic → routes → facts): the context.
    pub context: Vec<MindMap>,
    /// How it got there.
    pub explain: GraphExplain,
}

/// A neighbour in the candidate walk ([`PseudoGraph::links`]).
pub(super) struct Link {
    /// The neighbour topic.
    pub(super) to: u32,
    /// `super_topic`, `mention` or `entity`.
    pub(super) kind: &'static str,
    /// The node whose similarity to the query scores the link in [`PseudoGraph::search`].
    pub(super) scored_by: u32,
    /// The node of the source topic that leads there (the topic itself for super-topic
    /// siblings and incoming mentions).
    pub(super) from: u32,
}

impl PseudoGraph {
    /// The neighbours of topic `s` in the candidate walk: super-topic siblings (`s` itself
    /// among them), the topics its facts mention, the topics whose facts mention it, and topics
    /// sharing a proper name named by at most `p.entity_max_topics` topics.
    pub(super) fn links(&self, s: u32, p: &GraphParams) -> Vec<Link> {
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
        if p.super_fact_links {
            for path in self.paths.get(&s).into_iter().flatten() {
                let f = *path.last().expect("non-empty path");
                let Some(sf) = self.node(f).sup else { continue };
                for &g in self.members.get(&sf).into_iter().flatten() {
                    let t = self.topic_of(g);
                    if t != s {
                        out.push(Link { to: t, kind: "super_fact", scored_by: g, from: f });
                    }
                }
            }
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
    /// PGR retrieval (docs/pseudo-graph.md): key points → candidate topics (seeds by title and by best
    /// fact, topics named in `query`, then the walk through super-topics and entity links) →
    /// template matrices → anchors, control / path / dyeing / aggregation matrices → the top fact
    /// paths. `kps[0]` (the question) drives the candidate walk; every key point takes part in
    /// PGR. `k` facts are returned.
    pub fn search(&self, query: &str, kps: &[&[f32]], k: usize, p: &GraphParams) -> GraphSearch {
        let Some(q) = kps.first().filter(|q| q.len() == self.dim) else { return GraphSearch::default() };
        let walked = self.candidates(query, q, p);
        // Template over the candidates' fact paths, node ids compacted.
        let paths = Paths::of(self, &walked.topics);
        let template = Template::from_paths(paths.rows.iter().map(|r| r.as_slice()));
        let mut kq = QuantVectors::new(self.dim);
        for kp in kps.iter().filter(|k| k.len() == self.dim) {
            kq.push(kp);
        }
        let sims = node_sims_i8(&self.quant, &paths.slots, &kq);
        let sim_refs: Vec<&[f32]> = sims.iter().map(|s| s.as_slice()).collect();
        let result = pgr(&template, &sim_refs, &p.pgr);
        // Hits: the rows PGR's aggregation selected, by their support (the aggregation counts a
        // sub-tree once per anchor that dyes it, which would rank a topic with many middling facts
        // above one strong fact), then the other candidate facts by leaf similarity.
        let mut selected: Vec<(u32, f32, f32)> =
            result.rows.iter().zip(&result.support).map(|(&(r, sum), &support)| (r, support, sum)).collect();
        crate::sort::by(&mut selected, |a, b| b.1.total_cmp(&a.1).then(b.2.total_cmp(&a.2)).then(a.0.cmp(&b.0)));
        let mut out = GraphSearch::default();
        out.hits.extend(selected.iter().filter_map(|&(r, support, _)| self.fact_hit(&paths, r, support)));
        out.selected = out.hits.len();
        let chosen: HashSet<u32> = selected.iter().map(|x| x.0).collect();
        let mut rest: Vec<(u32, f32)> = (0..paths.rows.len() as u32)
            .filter(|r| !chosen.contains(r))
            .map(|r| {
                let row = &paths.rows[r as usize];
                let own = sims[0][*row.last().expect("row") as usize];
                (r, own.max(walked.inherited.get(&paths.slots[row[0] as usize]).copied().unwrap_or(f32::MIN)))
            })
            .collect();
        crate::sort::by(&mut rest, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (r, s) in rest.into_iter().take(k.saturating_sub(out.hits.len())) {
            out.hits.extend(self.fact_hit(&paths, r, s - 2.0));
        }
        out.context = self.context(&paths, selected.iter().map(|x| x.0));
        out.explain = GraphExplain {
            topics: walked
                .topics
                .iter()
                .zip(&walked.why)
                .map(|(t, w)| (self.node(*t).doc.clone().unwrap_or_default(), w.to_string()))
                .collect(),
            template: (template.rows(), template.cols()),
            anchors: result.anchors.clone(),
            rows: result.rows.iter().map(|(r, s)| (*r, *s, paths.labels(self, *r).into_iter().map(str::to_string).collect())).collect(),
        };
        out.hits.truncate(k.max(result.rows.len()));
        out
    }

    /// The candidate topics of a search, in two tiers: the topics `query` names and their
    /// neighbours, leaving room for the similarity seeds; then the seeds by best fact and by
    /// title similarity to `q`, interleaved, and their neighbours (at most `p.max_topics` in all).
    fn candidates(&self, query: &str, q: &[f32], p: &GraphParams) -> Walked {
        let mut w = Walked::default();
        let tier1 = p.max_topics.saturating_sub(p.seed_topics).max(1);
        let m = self.title_matcher();
        for i in m.words.find(query) {
            for &t in &m.topics[i] {
                w.add(t, "query", tier1);
            }
        }
        let named = w.topics.clone();
        self.walk(&mut w, &named, q, p, tier1);
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
        let before = w.topics.len();
        for i in 0..p.seed_topics {
            if let Some(&t) = by_fact.get(i) {
                w.add(t, "fact", p.max_topics);
            }
            if let Some(&t) = by_title.get(i) {
                w.add(t, "title", p.max_topics);
            }
        }
        let seeds: Vec<u32> = w.topics[before..].to_vec();
        self.walk(&mut w, &seeds, q, p, p.max_topics);
        w
    }

    /// Adds the neighbours of the topics `from` to `w`, up to `cap` topics, round-robin over the
    /// sources (each source's best link first), so one source with many links cannot crowd out
    /// another's bridge; each inherits `link_decay` × the similarity of the node that led there.
    fn walk(&self, w: &mut Walked, from: &[u32], q: &[f32], p: &GraphParams, cap: usize) {
        let mut lists: Vec<Vec<(f32, u32, &'static str)>> = from
            .iter()
            .map(|s| {
                let mut l = self.neighbours(*s, q, p);
                crate::sort::by(&mut l, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                l
            })
            .collect();
        let longest = lists.iter().map(|l| l.len()).max().unwrap_or(0);
        for r in 0..longest {
            for l in lists.iter_mut() {
                let Some(&(sim, t, why)) = l.get(r) else { continue };
                if w.topics.len() < cap && !w.topics.contains(&t) {
                    w.inherited.insert(t, sim * p.link_decay);
                    w.topics.push(t);
                    w.why.push(why);
                }
            }
        }
    }

    /// The walk's neighbours of topic `s`: super-topic siblings and entity links both ways, each
    /// with the similarity to `q` of the node that leads there; with `p.dense_hops`, also the
    /// topics owning the facts nearest to normalise(q + the topic's best fact).
    fn neighbours(&self, s: u32, q: &[f32], p: &GraphParams) -> Vec<(f32, u32, &'static str)> {
        let mut next: Vec<(f32, u32, &'static str)> =
            self.links(s, p).into_iter().map(|l| (dot(self.vec_of(l.scored_by), q), l.to, l.kind)).collect();
        if p.dense_hops == 0 {
            return next;
        }
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
        next
    }

    /// The hit of template row `row`: its leaf fact with its chunk and document.
    fn fact_hit(&self, paths: &Paths, row: u32, score: f32) -> Option<GraphHit> {
        let leaf = paths.slots[*paths.rows.get(row as usize)?.last()? as usize];
        let n = self.node(leaf);
        Some(GraphHit { chunk_id: n.chunk.clone()?, doc_id: n.doc.clone()?, fact_id: n.id.clone(), score, row })
    }

    /// The rows `selected` merged back into mind maps (topic → routes → facts): the context.
    fn context(&self, paths: &Paths, selected: impl Iterator<Item = u32>) -> Vec<MindMap> {
        let mut maps: Vec<MindMap> = Vec::new();
        for r in selected {
            let labels = paths.labels(self, r);
            let chunk = self.node(paths.slots[*paths.rows[r as usize].last().expect("row") as usize]).chunk_ordinal;
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
                let pos = match level.iter().position(|n| n.label == *l && n.children.is_empty() == leaf) {
                    Some(x) => x,
                    None => {
                        level.push(MapNode { label: l.to_string(), children: Vec::new(), chunk: if leaf { chunk } else { None } });
                        level.len() - 1
                    }
                };
                level = &mut level[pos].children;
            }
        }
        maps
    }
}

/// The candidate topics of one search, in the order they joined, with why each joined
/// (`query`, `fact`, `title`, or the link kind that reached it) and the similarity a walked-to
/// topic's facts inherit.
#[derive(Default)]
struct Walked {
    topics: Vec<u32>,
    why: Vec<&'static str>,
    inherited: HashMap<u32, f32>,
}

impl Walked {
    /// Adds `t` for `why` unless it is there or `cap` topics are.
    fn add(&mut self, t: u32, why: &'static str, cap: usize) {
        if !self.topics.contains(&t) && self.topics.len() < cap {
            self.topics.push(t);
            self.why.push(why);
        }
    }
}

/// The candidates' fact paths as template rows over compacted node ids (`slots[id]` is the
/// graph's node slot).
struct Paths {
    slots: Vec<u32>,
    rows: Vec<Vec<u32>>,
}

impl Paths {
    fn of(g: &PseudoGraph, topics: &[u32]) -> Paths {
        let mut compact: HashMap<u32, u32> = HashMap::new();
        let mut out = Paths { slots: Vec::new(), rows: Vec::new() };
        for &t in topics {
            for path in g.paths.get(&t).into_iter().flatten() {
                let row = path
                    .iter()
                    .map(|s| {
                        *compact.entry(*s).or_insert_with(|| {
                            out.slots.push(*s);
                            (out.slots.len() - 1) as u32
                        })
                    })
                    .collect();
                out.rows.push(row);
            }
        }
        out
    }

    /// The labels of row `r`'s nodes, topic first.
    fn labels<'g>(&self, g: &'g PseudoGraph, r: u32) -> Vec<&'g str> {
        self.rows[r as usize].iter().map(|c| g.node(self.slots[*c as usize]).label.as_str()).collect()
    }
}
