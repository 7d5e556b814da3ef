//! The ask pipeline's options: which steps run ([`Steps`]), the knowledge filter's strength, and
//! [`PipelineParams`] with its ranges.
use crate::options::Range;
use serde::{Deserialize, Serialize};

use super::DecomposeParams;
use super::answer::AnswerParams;
use super::web::WebSearchConfig;
use crate::error::{Error, InputError, Result};

/// Which steps run. Every field defaults to the preset's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Steps {
    /// Retrieval trigger over the memory knowledge base.
    pub trigger: bool,
    /// Query Rewriter+.
    pub rewrite: bool,
    /// Domain routing.
    pub route: bool,
    /// Key points for the graph retriever.
    pub key_points: bool,
    /// Knowledge-aware decomposition.
    pub decompose: bool,
    /// Verify and supplement.
    pub verify: bool,
    /// Knowledge filter (NLI).
    pub filter: bool,
    /// The answer (off: the context only).
    pub answer: bool,
    /// Memory update.
    pub memory: bool,
}

impl Steps {
    /// Every step on (the `ask` preset).
    pub const ALL: Steps = Steps {
        trigger: true,
        rewrite: true,
        route: true,
        key_points: true,
        decompose: true,
        verify: true,
        filter: true,
        answer: true,
        memory: true,
    };
    /// No step (the `search` preset).
    pub const NONE: Steps = Steps {
        trigger: false,
        rewrite: false,
        route: false,
        key_points: false,
        decompose: false,
        verify: false,
        filter: false,
        answer: false,
        memory: false,
    };
}

/// How strict the knowledge filter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum FilterStrength {
    /// Keep only sources labelled `entailment` (single-hop questions).
    Strict,
    /// Keep `entailment` and `neutral`, drop `contradiction` and `irrelevant` (multi-hop, where
    /// one hop's source does not entail the whole answer).
    #[default]
    Lenient,
}

/// Pipeline options (`preset` first, then any `steps` given override it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PipelineParams {
    /// `"ask"` (default) or `"search"`.
    pub preset: String,
    /// Per-step switches over the preset: `{rewrite: false}` etc.
    pub steps: serde_json::Map<String, serde_json::Value>,
    /// Retrieval-trigger similarity τ. Default 0.4; range 0..=1.
    pub tau: f32,
    /// Retrieval-trigger count θ. Default 3; range 1..=100.
    pub theta: usize,
    /// Search queries asked of the rewriter. Default 3; range 1..=10.
    pub rewrite_queries: usize,
    /// Key points asked for. Default 4; range 1..=10.
    pub key_points: usize,
    /// Facts the graph retriever returns into its context. Default 8; range 1..=50.
    pub graph_facts: usize,
    /// Verify-and-supplement rounds. Default 1; range 1..=5.
    pub verify_rounds: usize,
    /// Sub-queries per supplement. Default 2; range 1..=5.
    pub supplement_queries: usize,
    /// Knowledge-filter strength. Default lenient.
    pub filter: FilterStrength,
    /// Sources given to the answer at most. Default 8; range 1..=30.
    pub max_sources: usize,
    /// Keep the trace in the `traces` collection (for export). Default false.
    pub keep_trace: bool,
    /// Decomposition options.
    pub decompose: DecomposeParams,
    /// Answer options.
    pub answer: AnswerParams,
    /// The optional web searcher routing may choose (the page builds [`HttpWebSearch`] from
    /// it; natively pass one to [`run`]). Default none.
    pub web_search: Option<WebSearchConfig>,
}

impl Default for PipelineParams {
    fn default() -> Self {
        PipelineParams {
            preset: "ask".into(),
            steps: Default::default(),
            tau: Self::TAU.real(),
            theta: Self::THETA.count(),
            rewrite_queries: Self::REWRITE_QUERIES.count(),
            key_points: Self::KEY_POINTS.count(),
            graph_facts: Self::GRAPH_FACTS.count(),
            verify_rounds: Self::VERIFY_ROUNDS.count(),
            supplement_queries: Self::SUPPLEMENT_QUERIES.count(),
            filter: FilterStrength::Lenient,
            max_sources: Self::MAX_SOURCES.count(),
            keep_trace: false,
            decompose: DecomposeParams::default(),
            answer: AnswerParams::default(),
            web_search: None,
        }
    }
}

impl PipelineParams {
    /// `tau`.
    pub const TAU: Range = Range::new("tau", 0.4, 0.0, 1.0);
    /// `theta`.
    pub const THETA: Range = Range::new("theta", 3.0, 1.0, 100.0);
    /// `rewriteQueries`.
    pub const REWRITE_QUERIES: Range = Range::new("rewriteQueries", 3.0, 1.0, 10.0);
    /// `keyPoints`.
    pub const KEY_POINTS: Range = Range::new("keyPoints", 4.0, 1.0, 10.0);
    /// `graphFacts`.
    pub const GRAPH_FACTS: Range = Range::new("graphFacts", 8.0, 1.0, 50.0);
    /// `verifyRounds`.
    pub const VERIFY_ROUNDS: Range = Range::new("verifyRounds", 1.0, 1.0, 5.0);
    /// `supplementQueries`.
    pub const SUPPLEMENT_QUERIES: Range = Range::new("supplementQueries", 2.0, 1.0, 5.0);
    /// `maxSources`.
    pub const MAX_SOURCES: Range = Range::new("maxSources", 8.0, 1.0, 30.0);
    /// The numeric options with a fixed range (docs/api.md, "Ask").
    pub const OPTIONS: &[Range] = &[
        Self::TAU,
        Self::THETA,
        Self::REWRITE_QUERIES,
        Self::KEY_POINTS,
        Self::GRAPH_FACTS,
        Self::VERIFY_ROUNDS,
        Self::SUPPLEMENT_QUERIES,
        Self::MAX_SOURCES,
    ];

    /// The steps that run: the preset's, with `steps` applied.
    ///
    /// Errors: [`InputError::InvalidOption`] for an unknown preset, step or a non-boolean.
    pub fn resolved_steps(&self) -> Result<Steps> {
        let mut s = match self.preset.as_str() {
            "ask" => Steps::ALL,
            "search" => Steps::NONE,
            other => return Err(bad("preset", format!("{other:?} is not \"ask\" or \"search\""))),
        };
        for (k, v) in &self.steps {
            let Some(b) = v.as_bool() else { return Err(bad(&format!("steps.{k}"), format!("{v} is not true or false"))) };
            let f = match k.as_str() {
                "trigger" => &mut s.trigger,
                "rewrite" => &mut s.rewrite,
                "route" => &mut s.route,
                "keyPoints" => &mut s.key_points,
                "decompose" => &mut s.decompose,
                "verify" => &mut s.verify,
                "filter" => &mut s.filter,
                "answer" => &mut s.answer,
                "memory" => &mut s.memory,
                _ => {
                    return Err(bad(
                        &format!("steps.{k}"),
                        "is not a step (trigger, rewrite, route, keyPoints, decompose, verify, filter, answer, memory)".into(),
                    ));
                }
            };
            *f = b;
        }
        Ok(s)
    }

    /// Checks the ranges.
    pub fn validate(&self) -> Result<Steps> {
        let steps = self.resolved_steps()?;
        crate::options::check_all(
            "",
            &[
                (Self::TAU, self.tau as f64),
                (Self::THETA, self.theta as f64),
                (Self::REWRITE_QUERIES, self.rewrite_queries as f64),
                (Self::KEY_POINTS, self.key_points as f64),
                (Self::GRAPH_FACTS, self.graph_facts as f64),
                (Self::VERIFY_ROUNDS, self.verify_rounds as f64),
                (Self::SUPPLEMENT_QUERIES, self.supplement_queries as f64),
                (Self::MAX_SOURCES, self.max_sources as f64),
            ],
        )?;
        self.decompose.validate()?;
        Ok(steps)
    }
}

pub(super) fn bad(name: &str, reason: String) -> Error {
    InputError::InvalidOption { name: name.into(), reason }.into()
}
