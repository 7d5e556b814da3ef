//! Pseudo-graph options ([`GraphParams`]).
use crate::error::InputError;

use super::pgr::PgrParams;

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
