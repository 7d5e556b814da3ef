//! Pseudo-graph options ([`GraphParams`]).
use crate::error::InputError;
use crate::options::{Doc, Range, Value, check_all};

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
    /// same proper name (`entity_spans`: a run of capitalised words) and at most this many
    /// topics name it (rarer names are better bridges: "Zimbabwe" between the Bubye River and
    /// Victoria Falls, where no passage is titled Zimbabwe). The neighbour is scored by the
    /// similarity of its own fact that names the entity. Default 20 (MuSiQue train100 graph R@5
    /// is 67.7–69.4 for any value from 12 to 100, 64.0 without; README); 0 turns them off;
    /// range 0..=1000.
    pub entity_max_topics: usize,
    /// Super-fact links in the walk (PG-RAG §3.3, knowledge linking: the members of a
    /// super-fact are linked, joining mind maps through complementary facts): a topic whose
    /// fact shares a super-fact with another topic's fact has that topic as a neighbour,
    /// scored by the other fact's similarity. Default false (measured on HotpotQA and MuSiQue
    /// train100, docs/benchmarks.md, "Super-facts").
    pub super_fact_links: bool,
    /// Late chunking of facts (Günther et al. 2024, arXiv 2409.04701): a structural fact's
    /// vector is read from its chunk's own forward pass (the mean of the token states of the
    /// heading prefix and the fact's sentence, `[CLS]` and `[SEP]`) instead of a pass of its
    /// own; where a path cannot (the GPU path) or the fact lies past the chunk's truncation, it
    /// gets its own pass. Ingest time only. Default true (recall: docs/benchmarks.md).
    pub late_chunking: bool,
    /// PGR thresholds and sizes.
    pub pgr: PgrParams,
}

impl Default for GraphParams {
    fn default() -> Self {
        GraphParams {
            enabled: true,
            super_topic_threshold: Self::SUPER_TOPIC_THRESHOLD.real(),
            super_fact_threshold: Self::SUPER_FACT_THRESHOLD.real(),
            seed_topics: Self::SEED_TOPICS.count(),
            max_topics: Self::MAX_TOPICS.count(),
            link_decay: Self::LINK_DECAY.real(),
            dense_hops: Self::DENSE_HOPS.count(),
            entity_max_topics: Self::ENTITY_MAX_TOPICS.count(),
            super_fact_links: false,
            late_chunking: true,
            pgr: PgrParams::default(),
        }
    }
}

impl GraphParams {
    /// `graph.superTopicThreshold`.
    pub const SUPER_TOPIC_THRESHOLD: Range = Range::new("superTopicThreshold", 0.92, 0.0, 1.0);
    /// `graph.superFactThreshold`.
    pub const SUPER_FACT_THRESHOLD: Range = Range::new("superFactThreshold", 0.98, 0.0, 1.0);
    /// `graph.seedTopics`.
    pub const SEED_TOPICS: Range = Range::new("seedTopics", 3.0, 1.0, 50.0);
    /// `graph.maxTopics`.
    pub const MAX_TOPICS: Range = Range::new("maxTopics", 10.0, 1.0, 200.0);
    /// `graph.linkDecay`.
    pub const LINK_DECAY: Range = Range::new("linkDecay", 0.9, 0.0, 1.0);
    /// `graph.denseHops`.
    pub const DENSE_HOPS: Range = Range::new("denseHops", 0.0, 0.0, 10.0);
    /// `graph.entityMaxTopics`.
    pub const ENTITY_MAX_TOPICS: Range = Range::new("entityMaxTopics", 20.0, 0.0, 1000.0);
    /// The options as docs/api.md (`graph`) and `index.d.ts` (`GraphOptions`) state them.
    pub const DOCS: &[Doc] = &[
        Doc::new("enabled", Value::Flag(true), "build mind maps at ingest (one embedding per topic, route and fact)"),
        Doc::new(
            "superTopicThreshold",
            Value::Number(Self::SUPER_TOPIC_THRESHOLD),
            "a new topic joins the super-topic of its nearest topic above this cosine",
        ),
        Doc::new(
            "superFactThreshold",
            Value::Number(Self::SUPER_FACT_THRESHOLD),
            "a new fact joins the super-fact of its nearest fact above this cosine",
        ),
        Doc::new("seedTopics", Value::Number(Self::SEED_TOPICS), "seed topics by title similarity, and again by best-fact similarity"),
        Doc::new("maxTopics", Value::Number(Self::MAX_TOPICS), "candidate topics after the walk"),
        Doc::new("linkDecay", Value::Number(Self::LINK_DECAY), "share of the linking node's similarity a walked-to topic's facts inherit"),
        Doc::new(
            "denseHops",
            Value::Number(Self::DENSE_HOPS),
            "dense hops per walked topic (0: off): topics owning the facts nearest to normalise(query + the topic's best fact)",
        ),
        Doc::new(
            "entityMaxTopics",
            Value::Number(Self::ENTITY_MAX_TOPICS),
            "shared-entity links: topics naming the same proper name (a run of capitalised words) are neighbours when at most this many topics name it; 0 turns them off",
        ),
        Doc::new(
            "lateChunking",
            Value::Flag(true),
            "at ingest, late chunking of facts (Günther et al. 2024, arXiv 2409.04701 §3): a structural fact's vector is the L2-normalised mean of its chunk's last hidden state over `[CLS]`, the heading prefix, the fact's own tokens and `[SEP]`, from the chunk's forward pass, instead of a pass of its own; the CPU path only (the GPU path, and a fact past the chunk's 256-token truncation, keep a pass each). Cost and recall: [benchmarks.md](benchmarks.md), \"Ingest in the page\"",
        ),
        Doc::new(
            "superFactLinks",
            Value::Flag(false),
            "super-fact links in the walk (PG-RAG §3.3): a topic whose fact shares a super-fact with another topic's fact has it as a neighbour; off by default — no change in recall@k on HotpotQA or MuSiQue train100 ([benchmarks.md](benchmarks.md), \"Super-facts\")",
        ),
        Doc::new(
            "pgr",
            Value::Group(PgrParams::DOCS),
            "the pseudo-graph retriever (PG-RAG §4.2): support 0.01 and continue 0.02 are the PG-RAG reference code's thresholds (the paper's are 0.03 and 0.05)",
        ),
    ];
}

impl GraphParams {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), InputError> {
        check_all(
            "graph.",
            &[
                (Self::SUPER_TOPIC_THRESHOLD, self.super_topic_threshold as f64),
                (Self::SUPER_FACT_THRESHOLD, self.super_fact_threshold as f64),
            ],
        )?;
        let (support, cont) = (self.pgr.support, self.pgr.continue_threshold);
        if !(0.0..=2.0).contains(&support) || !(support..=2.0).contains(&cont) {
            return Err(InputError::InvalidOption {
                name: "graph.pgr".into(),
                reason: format!("need 0 ≤ support ({support}) ≤ continueThreshold ({cont}) ≤ 2"),
            });
        }
        check_all(
            "graph.",
            &[
                (Self::LINK_DECAY, self.link_decay as f64),
                (Self::DENSE_HOPS, self.dense_hops as f64),
                (Self::ENTITY_MAX_TOPICS, self.entity_max_topics as f64),
                (Self::SEED_TOPICS, self.seed_topics as f64),
                (Self::MAX_TOPICS, self.max_topics as f64),
            ],
        )?;
        check_all("graph.pgr.", &[(PgrParams::ANCHORS, self.pgr.anchors as f64), (PgrParams::TOP_ROWS, self.pgr.top_rows as f64)])?;
        Ok(())
    }
}
