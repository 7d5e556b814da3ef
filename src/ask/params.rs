//! The ask pipeline's options: which steps run ([`Steps`]), the knowledge filter's strength, and
//! [`PipelineParams`] with its ranges.
use crate::options::Range;
use serde::{Deserialize, Serialize};

use super::DecomposeParams;
use super::answer::{AnswerParams, AnswerStyle};
use super::web::WebSearchConfig;
use crate::error::{Error, InputError, Result};
use crate::types::SearchFilter;

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
    /// Query-side tagging (PIKE-RAG §4.2): the knowledge base's tags the question's documents
    /// would carry, chosen by the model; documents carrying them rank higher in the question's
    /// search. Off in every preset.
    pub query_tags: bool,
    /// Key points for the graph retriever.
    pub key_points: bool,
    /// Knowledge-aware decomposition.
    pub decompose: bool,
    /// Verify and supplement.
    pub verify: bool,
    /// LevelRAG's summarize step: each supplement's passages summarized for its sub-query.
    pub summarize: bool,
    /// Knowledge filter (NLI).
    pub filter: bool,
    /// The answer (off: the context only).
    pub answer: bool,
    /// Memory update.
    pub memory: bool,
}

impl Steps {
    /// The steps' names as `options.steps` takes them, in pipeline order (`PipelineSteps` in
    /// `index.d.ts` is generated from them).
    pub const NAMES: [&'static str; 11] =
        ["trigger", "rewrite", "route", "queryTags", "keyPoints", "decompose", "verify", "summarize", "filter", "answer", "memory"];

    /// The switch of the step named `name` ([`Steps::NAMES`]); `None` for another name.
    pub fn named(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "trigger" => &mut self.trigger,
            "rewrite" => &mut self.rewrite,
            "route" => &mut self.route,
            "queryTags" => &mut self.query_tags,
            "keyPoints" => &mut self.key_points,
            "decompose" => &mut self.decompose,
            "verify" => &mut self.verify,
            "summarize" => &mut self.summarize,
            "filter" => &mut self.filter,
            "answer" => &mut self.answer,
            "memory" => &mut self.memory,
            _ => return None,
        })
    }

    /// Every step on but the opt-in `queryTags` (the `ask` preset).
    pub const ALL: Steps = Steps {
        trigger: true,
        rewrite: true,
        route: true,
        query_tags: false,
        key_points: true,
        decompose: true,
        verify: true,
        summarize: true,
        filter: true,
        answer: true,
        memory: true,
    };
    /// No step (the `search` preset).
    pub const NONE: Steps = Steps {
        trigger: false,
        rewrite: false,
        route: false,
        query_tags: false,
        key_points: false,
        decompose: false,
        verify: false,
        summarize: false,
        filter: false,
        answer: false,
        memory: false,
    };
}

/// A pipeline preset: which steps run and how the answer is written. The task levels are
/// PIKE-RAG's (arXiv 2501.11551, §3: L1 factual, L2 linkable-reasoning, L3 predictive, L4
/// creative); docs/ask-pipeline.md, "Presets", lists each one's steps and model calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Preset {
    /// Every step (the default).
    #[default]
    #[serde(rename = "ask")]
    Ask,
    /// No model call: the hybrid+graph search result is the context, no answer.
    #[serde(rename = "search")]
    Search,
    /// One retrieval (hybrid+graph search and the graph retriever with the question as its key
    /// point) and one answer call.
    #[serde(rename = "light")]
    Light,
    /// L1, factual questions: the rewritten question and its queries retrieve, a strict
    /// knowledge filter keeps what entails the answer, then the answer.
    #[serde(rename = "L1", alias = "l1")]
    L1,
    /// L2, linkable-reasoning (multi-hop) questions: key points into the graph retriever,
    /// knowledge-aware decomposition, verify and supplement, the lenient filter, the answer.
    #[serde(rename = "L2", alias = "l2")]
    L2,
    /// L3, predictive questions: L2's retrieval, then an answer that orders the retrieved facts
    /// (by time where they have dates) and reasons from them to a forecast or judgement, stating
    /// its assumptions.
    #[serde(rename = "L3", alias = "l3")]
    L3,
    /// L4, creative questions: L2's retrieval, then several perspectives on the sources (one
    /// call), then an answer that synthesises them.
    #[serde(rename = "L4", alias = "l4")]
    L4,
}

impl Preset {
    /// Every preset, in the order the docs list them.
    pub const ALL: [Preset; 7] = [Preset::Search, Preset::Light, Preset::L1, Preset::L2, Preset::L3, Preset::L4, Preset::Ask];

    /// The name options use.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Ask => "ask",
            Preset::Search => "search",
            Preset::Light => "light",
            Preset::L1 => "L1",
            Preset::L2 => "L2",
            Preset::L3 => "L3",
            Preset::L4 => "L4",
        }
    }

    /// The steps this preset runs.
    pub fn steps(self) -> Steps {
        let retrieve_multi_hop =
            Steps { key_points: true, decompose: true, verify: true, summarize: true, filter: true, answer: true, ..Steps::NONE };
        match self {
            Preset::Ask => Steps::ALL,
            Preset::Search => Steps::NONE,
            Preset::Light => Steps { answer: true, ..Steps::NONE },
            Preset::L1 => Steps { rewrite: true, filter: true, answer: true, ..Steps::NONE },
            Preset::L2 | Preset::L3 | Preset::L4 => retrieve_multi_hop,
        }
    }

    /// The knowledge filter's strength when the options name none.
    pub fn filter(self) -> FilterStrength {
        if self == Preset::L1 { FilterStrength::Strict } else { FilterStrength::Lenient }
    }

    /// How the answer is written.
    pub fn style(self) -> AnswerStyle {
        match self {
            Preset::L3 => AnswerStyle::Predictive,
            Preset::L4 => AnswerStyle::Creative,
            _ => AnswerStyle::Cited,
        }
    }
}

impl std::str::FromStr for Preset {
    type Err = InputError;
    /// A preset's name (`L1`..`L4` also lowercase); anything else is
    /// [`InputError::InvalidOption`] `preset`.
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        serde_json::from_value(serde_json::Value::String(s.to_string())).map_err(|_| InputError::InvalidOption {
            name: "preset".into(),
            reason: format!("{s:?} is not one of \"search\", \"light\", \"L1\", \"L2\", \"L3\", \"L4\", \"ask\""),
        })
    }
}

/// `filter` of the ask options: the documents the run may use, or (the older form) the
/// knowledge filter's strength.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AskFilter {
    /// `"strict"` or `"lenient"`.
    Strength(FilterStrength),
    /// `{tags?, docIds?, meta?, lang?}`.
    Scope(SearchFilter),
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
    /// The preset (default `ask`).
    pub preset: Preset,
    /// Per-step switches over the preset: `{rewrite: false}` etc.
    pub steps: serde_json::Map<String, serde_json::Value>,
    /// Retrieval-trigger similarity τ. Default 0.6 (calibrated on MuSiQue train100 with
    /// all-MiniLM-L6-v2: the lowest step of 0.05 at which a memory of other questions never
    /// fires, with one step of margin; docs/benchmarks.md, "The retrieval trigger"); range 0..=1.
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
    /// Knowledge-filter strength. Default: the preset's (strict for L1, else lenient).
    pub knowledge_filter: Option<FilterStrength>,
    /// Which documents the run may use (`{tags, docIds, meta}`, [`SearchFilter`]), or — the
    /// older form — the knowledge filter's strength (`"strict"` / `"lenient"`). Default none.
    pub filter: Option<AskFilter>,
    /// Sources given to the answer at most. Default 8; range 1..=30.
    pub max_sources: usize,
    /// Perspectives the L4 preset drafts before its synthesis. Default 3; range 1..=6.
    pub perspectives: usize,
    /// Keep the trace in the `traces` collection (for export). Default false.
    pub keep_trace: bool,
    /// Decomposition options.
    pub decompose: DecomposeParams,
    /// Answer options.
    pub answer: AnswerParams,
    /// The optional web searcher routing may choose (the page builds `HttpWebSearch` from
    /// it; natively pass one to `run`). Default none.
    pub web_search: Option<WebSearchConfig>,
}

impl Default for PipelineParams {
    fn default() -> Self {
        PipelineParams {
            preset: Preset::Ask,
            steps: Default::default(),
            tau: Self::TAU.real(),
            theta: Self::THETA.count(),
            rewrite_queries: Self::REWRITE_QUERIES.count(),
            key_points: Self::KEY_POINTS.count(),
            graph_facts: Self::GRAPH_FACTS.count(),
            verify_rounds: Self::VERIFY_ROUNDS.count(),
            supplement_queries: Self::SUPPLEMENT_QUERIES.count(),
            knowledge_filter: None,
            filter: None,
            max_sources: Self::MAX_SOURCES.count(),
            perspectives: Self::PERSPECTIVES.count(),
            keep_trace: false,
            decompose: DecomposeParams::default(),
            answer: AnswerParams::default(),
            web_search: None,
        }
    }
}

impl PipelineParams {
    /// `tau`.
    pub const TAU: Range = Range::new("tau", 0.6, 0.0, 1.0);
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
    /// `perspectives`.
    pub const PERSPECTIVES: Range = Range::new("perspectives", 3.0, 1.0, 6.0);
    /// The options as docs/api.md ("Ask") and `index.d.ts` (`AskOptions`) state them.
    pub const DOCS: &[crate::options::Doc] = {
        use crate::options::{Doc, Value};
        &[
            Doc::new(
                "preset",
                Value::Other {
                    ts: "'ask' | 'search' | 'light' | 'L1' | 'L2' | 'L3' | 'L4'",
                    default: "`'ask'`",
                    accepts: "`'search'`, `'light'`, `'L1'`, `'L2'`, `'L3'`, `'L4'`, `'ask'`",
                },
                "which steps run and how the answer is written ([ask-pipeline.md](ask-pipeline.md), \"Presets\"): `search` no model call (the context is the `hybrid+graph` search result, `answer` is `null`); `light` one retrieval and one answer call; `L1`–`L4` PIKE-RAG's task levels (factual, multi-hop, predictive, creative); `ask` every step",
            ),
            Doc::new(
                "steps",
                Value::Other { ts: "PipelineSteps", default: "the preset's", accepts: "booleans" },
                "`{trigger, rewrite, route, queryTags, keyPoints, decompose, verify, summarize, filter, answer, memory}` over the preset (`queryTags` is off in every preset); an unknown step → `INVALID_OPTION`",
            ),
            Doc::new(
                "tau",
                Value::Number(Self::TAU),
                "retrieval trigger: memory-title similarity τ (calibrated: [benchmarks.md](benchmarks.md#the-retrieval-trigger))",
            ),
            Doc::new("theta", Value::Number(Self::THETA), "retrieval trigger: matches θ that answer from memory"),
            Doc::new("rewriteQueries", Value::Number(Self::REWRITE_QUERIES), "search queries asked of Query Rewriter+"),
            Doc::new("keyPoints", Value::Number(Self::KEY_POINTS), "key points for the graph retriever"),
            Doc::new("graphFacts", Value::Number(Self::GRAPH_FACTS), "facts the graph retriever puts in its context"),
            Doc::new("verifyRounds", Value::Number(Self::VERIFY_ROUNDS), "verify-and-supplement rounds"),
            Doc::new("supplementQueries", Value::Number(Self::SUPPLEMENT_QUERIES), "sub-queries per supplement"),
            Doc::new(
                "filter",
                Value::Other { ts: "SearchFilter | 'strict' | 'lenient'", default: "none", accepts: "`{tags?, docIds?, meta?, lang?}`" },
                "the documents the run may use, as `search`'s `filter`: every retrieval, the graph's context and the candidates of decomposition stay within them (the memory trigger does not fire); the older form, `'strict'` \\| `'lenient'`, is `knowledgeFilter`",
            ),
            Doc::new(
                "knowledgeFilter",
                Value::Other {
                    ts: "'strict' | 'lenient'",
                    default: "the preset's: `'strict'` for `L1`, else `'lenient'`",
                    accepts: "`'strict'` \\| `'lenient'`",
                },
                "knowledge filter: `strict` keeps `entailment`, `lenient` also `neutral`",
            ),
            Doc::new("maxSources", Value::Number(Self::MAX_SOURCES), "sources given to the answer"),
            Doc::new("perspectives", Value::Number(Self::PERSPECTIVES), "perspectives the `L4` preset drafts before its synthesis"),
            Doc::new("keepTrace", Value::Flag(false), "store the trace for `exportTraces()`"),
            Doc::new(
                "webSearch",
                Value::Other {
                    ts: "{ url: string; headers?: Record<string, string>; timeoutMs?: number }",
                    default: "none",
                    accepts: "`{url, headers?, timeoutMs? = 15000}`",
                },
                "a search endpoint routing may pick (`POST {query, k}` → `{results: [{title, url, text}]}`, at most 4 MiB: `LLM_REPLY_TOO_LARGE` past it)",
            ),
            Doc::new(
                "decompose",
                Value::Table { ts: "DecomposeOptions", default: "as above" },
                "knowledge-aware decomposition (`DecomposeOptions`)",
            ),
            Doc::new("answer", Value::Group(AnswerParams::DOCS), "the answer step"),
        ]
    };

    /// The steps that run: the preset's, with `steps` applied.
    ///
    /// Errors: [`InputError::InvalidOption`] for an unknown step or a non-boolean.
    pub fn resolved_steps(&self) -> Result<Steps> {
        let mut s = self.preset.steps();
        for (k, v) in &self.steps {
            let Some(b) = v.as_bool() else { return Err(bad(&format!("steps.{k}"), format!("{v} is not true or false"))) };
            let Some(f) = s.named(k) else {
                return Err(bad(&format!("steps.{k}"), format!("is not a step ({})", Steps::NAMES.join(", "))));
            };
            *f = b;
        }
        Ok(s)
    }

    /// The knowledge filter's strength: the options' (`knowledgeFilter`, else a strength given
    /// as `filter`), else the preset's.
    pub fn filter_strength(&self) -> FilterStrength {
        let given = match &self.filter {
            Some(AskFilter::Strength(s)) => Some(*s),
            _ => None,
        };
        self.knowledge_filter.or(given).unwrap_or(self.preset.filter())
    }

    /// The documents the run may use, when a filter with a condition is given.
    pub fn scope(&self) -> Option<&SearchFilter> {
        match &self.filter {
            Some(AskFilter::Scope(f)) if !f.is_empty() => Some(f),
            _ => None,
        }
    }

    /// Checks the ranges.
    pub fn validate(&self) -> Result<Steps> {
        let steps = self.resolved_steps()?;
        if let Some(f) = self.scope() {
            f.language()?;
        }
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
                (Self::PERSPECTIVES, self.perspectives as f64),
            ],
        )?;
        self.decompose.validate()?;
        self.answer.validate()?;
        Ok(steps)
    }
}

pub(super) fn bad(name: &str, reason: String) -> Error {
    InputError::InvalidOption { name: name.into(), reason }.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_name_switches_its_own_step() {
        for (i, name) in Steps::NAMES.iter().enumerate() {
            let mut s = Steps::NONE;
            *s.named(name).expect(name) = true;
            // Exactly one switch is on: the name's own.
            let on: Vec<&str> = Steps::NAMES
                .iter()
                .copied()
                .filter(|n| {
                    let mut t = s;
                    *t.named(n).unwrap()
                })
                .collect();
            assert_eq!(on, [Steps::NAMES[i]]);
        }
        let mut none = Steps::NONE;
        assert!(none.named("answers").is_none());
        let p = PipelineParams { steps: [("answers".to_string(), true.into())].into_iter().collect(), ..Default::default() };
        assert!(p.resolved_steps().unwrap_err().to_string().contains("queryTags"), "the error lists the steps");
    }

    #[test]
    fn a_scope_language_that_is_not_a_tag_is_an_invalid_option() {
        let scoped = |lang: &str| PipelineParams {
            filter: Some(AskFilter::Scope(SearchFilter { lang: Some(lang.into()), ..Default::default() })),
            ..Default::default()
        };
        let err = scoped("x1").validate().unwrap_err();
        assert_eq!(err.code(), "INVALID_OPTION");
        assert!(err.to_string().contains("filter.lang"), "{err}");
        assert!(scoped("pt-BR").validate().is_ok());
    }
}
