//! The ask pipeline's options: which steps run ([`Steps`]), the knowledge filter's strength, and
//! [`PipelineParams`] with its ranges.
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
            tau: 0.4,
            theta: 3,
            rewrite_queries: 3,
            key_points: 4,
            graph_facts: 8,
            verify_rounds: 1,
            supplement_queries: 2,
            filter: FilterStrength::Lenient,
            max_sources: 8,
            keep_trace: false,
            decompose: DecomposeParams::default(),
            answer: AnswerParams::default(),
            web_search: None,
        }
    }
}

impl PipelineParams {
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
        let range = |name: &str, v: usize, lo: usize, hi: usize| {
            if (lo..=hi).contains(&v) { Ok(()) } else { Err(bad(name, format!("{v} is outside {lo}..={hi}"))) }
        };
        if !(0.0..=1.0).contains(&self.tau) {
            return Err(bad("tau", format!("{} is outside 0..=1", self.tau)));
        }
        range("theta", self.theta, 1, 100)?;
        range("rewriteQueries", self.rewrite_queries, 1, 10)?;
        range("keyPoints", self.key_points, 1, 10)?;
        range("graphFacts", self.graph_facts, 1, 50)?;
        range("verifyRounds", self.verify_rounds, 1, 5)?;
        range("supplementQueries", self.supplement_queries, 1, 5)?;
        range("maxSources", self.max_sources, 1, 30)?;
        self.decompose.validate()?;
        Ok(steps)
    }
}

pub(super) fn bad(name: &str, reason: String) -> Error {
    InputError::InvalidOption { name: name.into(), reason }.into()
}
