//! Mind maps: the per-document tree of the pseudo-graph (docs/pseudo-graph.md; PG-RAG §3.2).
//!
//! A [`MindMap`] is a topic (the document's title) with child nodes; an inner node is a route
//! (a sub-topic: a heading, or a key of an LLM-made map), a leaf is a fact. A fact path is
//! `[topic, route_1, …, route_k, fact]`. Every builder produces this type: [`structural`] here
//! (headings and sentences, no LLM), the LLM builder (fact-check items → JSON mind map) later.
use unicode_segmentation::UnicodeSegmentation;

/// One document's mind map.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct MindMap {
    /// The topic: the document's title.
    pub topic: String,
    /// Routes and facts directly under the topic.
    pub children: Vec<MapNode>,
}

/// A route (has children) or a fact (a leaf).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct MapNode {
    /// Route label or fact text.
    pub label: String,
    /// Children; empty for a fact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<MapNode>,
    /// For a fact: the ordinal of the chunk it comes from (provenance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<u32>,
}

impl MindMap {
    /// Every fact path as `(labels from the first route to the fact, chunk ordinal)`, in DFS
    /// order; the topic is implied.
    pub fn fact_paths(&self) -> Vec<(Vec<&str>, Option<u32>)> {
        fn walk<'a>(n: &'a MapNode, stack: &mut Vec<&'a str>, out: &mut Vec<(Vec<&'a str>, Option<u32>)>) {
            stack.push(&n.label);
            if n.children.is_empty() {
                out.push((stack.clone(), n.chunk));
            }
            for c in &n.children {
                walk(c, stack, out);
            }
            stack.pop();
        }
        let mut out = Vec::new();
        for c in &self.children {
            walk(c, &mut Vec::new(), &mut out);
        }
        out
    }

    /// Number of facts.
    pub fn facts(&self) -> usize {
        self.fact_paths().len()
    }
}

/// Splits a chunk's text into facts: list items and lines first, then sentences (UAX #29).
/// Fragments without a letter or digit are dropped.
pub fn split_facts(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim().trim_start_matches(['-', '*', '•']).trim();
        for s in line.unicode_sentences() {
            let s = s.trim();
            if s.chars().any(|c| c.is_alphanumeric()) {
                out.push(s.to_string());
            }
        }
    }
    out
}

/// The structural mind map (no LLM): title → heading path → sentence and list-item facts.
/// `chunks` are `(heading path, text)` in document order; a first heading equal to the title is
/// not repeated as a route. A passage without headings gets its facts straight under the topic.
pub fn structural(title: &str, chunks: &[(Vec<String>, String)]) -> MindMap {
    let mut map = MindMap { topic: title.to_string(), children: Vec::new() };
    for (ordinal, (path, text)) in chunks.iter().enumerate() {
        let route: Vec<&String> = path.iter().enumerate().filter(|(i, h)| !(*i == 0 && h.as_str() == title)).map(|x| x.1).collect();
        // Descend (or create) the route, reusing the last child with the same label so a section
        // split over several chunks stays one route.
        let mut level = &mut map.children;
        for label in route {
            let reuse = level.last().is_some_and(|n| !n.children.is_empty() && &n.label == label);
            if !reuse {
                level.push(MapNode { label: label.clone(), children: Vec::new(), chunk: None });
            }
            level = &mut level.last_mut().expect("pushed").children;
        }
        for fact in split_facts(text) {
            level.push(MapNode { label: fact, children: Vec::new(), chunk: Some(ordinal as u32) });
        }
    }
    // A route that received no fact would be a leaf pretending to be a fact: drop it.
    fn prune(nodes: &mut Vec<MapNode>) {
        for n in nodes.iter_mut() {
            prune(&mut n.children);
        }
        nodes.retain(|n| n.chunk.is_some() || !n.children.is_empty());
    }
    prune(&mut map.children);
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_become_routes_and_sentences_facts() {
        let chunks = vec![
            (vec!["Owls".to_string()], "Owls are birds. They hunt at night.".to_string()),
            (vec!["Owls".to_string(), "Diet".to_string()], "- mice\n- insects".to_string()),
            (vec!["Owls".to_string(), "Diet".to_string()], "Some eat fish.".to_string()),
        ];
        let m = structural("Owls", &chunks);
        let paths: Vec<Vec<&str>> = m.fact_paths().into_iter().map(|p| p.0).collect();
        assert_eq!(
            paths,
            vec![
                vec!["Owls are birds."],
                vec!["They hunt at night."],
                vec!["Diet", "mice"],
                vec!["Diet", "insects"],
                vec!["Diet", "Some eat fish."],
            ]
        );
        assert_eq!(m.fact_paths()[4].1, Some(2));
    }

    #[test]
    fn passage_without_headings_keeps_topic_and_facts() {
        let m = structural("Demon Dice", &[(vec![], "Demon Dice is a dice game. It was created by Lester Smith.".into())]);
        assert_eq!(m.topic, "Demon Dice");
        assert_eq!(m.facts(), 2);
        assert!(m.children.iter().all(|n| n.children.is_empty()));
    }
}
