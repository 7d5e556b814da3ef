//! The whole ask pipeline (docs/ask-pipeline.md), each step optional and traced:
//!
//! 1. **trigger** — retrieval trigger over the memory knowledge base (four-module RAG, arXiv
//!    2407.10670): memory entries whose title has cosine ≥ τ (0.6) with the question; when at
//!    least θ (3) match, the answer comes from them and no retrieval runs;
//! 2. **rewrite** — Query Rewriter+ (same paper): one call returns a clarified question and a
//!    few search queries; each query's best chunk joins the context;
//! 3. **route** — domain routing (WeKnow-RAG, arXiv 2408.07611): the model picks `graph`,
//!    `chunks`, `both` or `web` (`web` only when a web searcher is given);
//! 4. **keyPoints** — PG-RAG key points (arXiv 2405.16933 §3.4): the points an answer needs, each
//!    embedded, fed together to the graph retriever (PGR); its mind-map context is one source;
//! 5. **decompose** — PIKE-RAG Algorithm 1 ([`super::decompose`]); off: the chunks a hybrid+graph
//!    search finds for the question;
//! 6. **verify** — LevelRAG (arXiv 2502.18139) verify and supplement: is the context enough? If
//!    not, each new sub-query goes to the sparse searcher (a keyword rewrite in the BM25 query
//!    syntax, then one round of feedback: `extend` / `filter` / `emphasize`) and to the dense
//!    searcher (a pseudo-document, HyDE); their best chunks join the context (as chunks, so they
//!    can be cited, where LevelRAG joins summaries);
//! 7. **filter** — knowledge filter (four-module RAG): an NLI label per source against the
//!    question; `strict` keeps `entailment`, `lenient` (multi-hop) also `neutral`;
//! 8. **answer** — cited, streamed, with a self-assessed confidence ([`super::answer`]);
//! 9. **memory** — the answered sub-questions and the answer are saved as title–content pairs.
//!
//! Presets: `ask` (every step on) and `search` (no model call at all: the context is the
//! hybrid+graph search result and there is no answer). Each step's documented fallback on
//! unreadable model output keeps the pipeline going (rewrite: the question as is; route: both;
//! keyPoints: the question as the one key point; verify: sufficient; filter: keep all); errors
//! of the endpoint itself (unauthorized, timeout, ...) end it with the typed error.
use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::answer::AnswerStyle;
use super::answer::{Answer, AnswerStream, Confidence, Perspective, Source, UNKNOWN, answer_styled};
use super::replies::{KeyPoints, Labels, Rewrite, RouteReply, Verify, Views};
use super::{AskSource, Step, TraceEvent, Trajectory, data, decompose};
use crate::engine::SearchOptions;
use crate::error::{Error, LlmError, Result};
use crate::graph::mindmap::{MapNode, MindMap};
use crate::llm::LanguageModel;
use crate::ports::Clock;
use crate::types::{SearchFilter, SearchMode};

pub use super::context::ContextItem;
use super::context::{Ctx, Summary, Tags, chunk_source, msgs, step};
use super::params::bad;
pub use super::params::{FilterStrength, PipelineParams, Preset, Steps};
pub use super::searchers::{FeedbackAction, refine_query};
use super::searchers::{SubQuery, supplement};
pub use super::web::{HttpWebSearch, NoWeb, WebResult, WebSearch, WebSearchConfig};

/// What the pipeline returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[cfg_attr(not(target_arch = "wasm32"), schemars(rename = "AskResult"))]
#[serde(rename_all = "camelCase")]
pub struct PipelineResult {
    /// The question as asked.
    pub question: String,
    /// The clarified question (the rewriter's, else the question).
    pub clarified: String,
    /// The answer (`None` with the `search` preset or `steps.answer` off).
    pub answer: Option<Answer>,
    /// The context given to the answer, `[S1]` first.
    pub context: Vec<ContextItem>,
    /// The decomposition trajectory, when decomposition ran.
    pub trajectory: Option<Trajectory>,
    /// The route taken.
    pub route: Route,
    /// Memory entries written.
    pub remembered: usize,
}

/// Where the pipeline looked for the answer (the routing step's choice, WeKnow-RAG).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Route {
    /// The pseudo-graph's mind maps (facts about named topics).
    Graph,
    /// Passages (chunks).
    Chunks,
    /// Both (the default, and the fallback of an unreadable reply).
    Both,
    /// The web searcher (current events, not in the knowledge base).
    Web,
    /// The memory knowledge base: the retrieval trigger fired.
    Memory,
}

impl Route {
    /// The route a model's reply names, among those it may choose (`None`: another word).
    fn chosen(reply: &str, web: bool) -> Option<Route> {
        let route = serde_json::from_value(serde_json::Value::String(reply.to_string())).ok()?;
        match route {
            Route::Graph | Route::Chunks | Route::Both => Some(route),
            Route::Web if web => Some(route),
            _ => None,
        }
    }
}

/// Tags the `queryTags` step offers the model: the knowledge base's most common.
pub const OFFERED_TAGS: usize = 200;
/// Tags the `queryTags` step keeps for a question at most.
pub const QUERY_TAGS: usize = 3;

/// Two rankings of chunk ids fused by plain reciprocal rank (k = 60, [`crate::retrieve::rrf`]).
fn fuse_ranked(a: &[String], b: &[String]) -> Vec<String> {
    let mut ids: Vec<&str> = Vec::new();
    let mut slot: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    let mut ranks: [Vec<u32>; 2] = Default::default();
    for (list, out) in [a, b].into_iter().zip(ranks.iter_mut()) {
        for id in list {
            let i = *slot.entry(id.as_str()).or_insert_with(|| {
                ids.push(id.as_str());
                ids.len() as u32 - 1
            });
            out.push(i);
        }
    }
    let [ra, rb] = ranks;
    crate::retrieve::rrf(&[(&ra, 1.0), (&rb, 1.0)], 60.0).into_iter().map(|(i, _)| ids[i as usize].to_string()).collect()
}

/// A mind map as indented text (the graph source's text).
pub fn map_text(maps: &[MindMap]) -> String {
    fn walk(n: &MapNode, depth: usize, out: &mut String) {
        out.push_str(&format!("{}- {}\n", "  ".repeat(depth), n.label));
        for c in &n.children {
            walk(c, depth + 1, out);
        }
    }
    let mut s = String::new();
    for m in maps {
        s.push_str(&format!("{}\n", m.topic));
        for c in &m.children {
            walk(c, 1, &mut s);
        }
    }
    s
}

fn list(items: &[ContextItem]) -> String {
    items.iter().enumerate().map(|(i, c)| format!("[{i}] {} {}\n", data(&c.source.title), data(&c.source.text))).collect()
}

/// Runs the pipeline for `question` over `eng`. `on_token` receives the streamed answer,
/// `trace` every step's event. See the module docs for the steps and their fallbacks.
///
/// A model call or web search that times out ([`LlmError::Timeout`]) is not an error: the answer
/// is "I don't know." over the sources gathered so far (trace step `timeout`). Nor is any other
/// reply that cannot be used ([`LlmError::is_unusable_reply`]: a stream cut short, a body that is
/// not a chat completion, a reply past its cap) or a web search that fails in any way (an HTTP
/// error, a reply that is not its JSON, the network): the same ending, trace step `fallback`.
///
/// Errors: `InputError::InvalidOption` for bad options; the model's other [`LlmError`]s
/// (including [`LlmError::Cancelled`]); model and store errors of the engine. Nothing stored is lost: the
/// only writes are the memory update and the kept trace, each one commit at the end.
#[allow(clippy::too_many_arguments)]
pub async fn run<M: LanguageModel + ?Sized, K: AskSource, W: WebSearch>(
    model: &M,
    eng: &mut K,
    web: Option<&W>,
    question: &str,
    p: &PipelineParams,
    clock: &dyn Clock,
    on_token: &mut dyn FnMut(&str),
    trace: &mut dyn FnMut(TraceEvent),
) -> Result<PipelineResult> {
    let steps = p.validate()?;
    let question = question.trim();
    if question.is_empty() {
        return Err(bad("question", "is empty".into()));
    }
    let mut run = Run {
        model,
        eng,
        web,
        p,
        steps,
        clock,
        trace,
        events: Vec::new(),
        ctx: Ctx { items: Vec::new(), seen: HashSet::new(), clock },
        result: PipelineResult {
            question: question.into(),
            clarified: question.into(),
            answer: None,
            context: Vec::new(),
            trajectory: None,
            route: Route::Both,
            remembered: 0,
        },
        raw: Vec::new(),
        summaries: 0,
        web_failed: false,
        query_tags: Vec::new(),
    };
    let from_memory = match run.steps(question, on_token).await {
        Ok(from_memory) => from_memory,
        // A model too slow for `timeoutMs` (a small local model on a CPU): the question ends in
        // "I don't know." with what was retrieved, rather than in an error. Nothing is
        // remembered: the answer is not known.
        Err(Error::Llm(e))
            if e.is_unusable_reply() || (run.web_failed && !matches!(e, LlmError::Cancelled | LlmError::NotConfigured { .. })) =>
        {
            run.fell_back(&e, on_token).await?;
            false
        }
        Err(e) => return Err(e),
    };
    run.remember(from_memory).await?;
    run.finish(question).await
}

impl<M: LanguageModel + ?Sized, K: AskSource, W: WebSearch> Run<'_, M, K, W> {
    /// The steps up to the answer; `true` when the trigger answered from the memory.
    async fn steps(&mut self, question: &str, on_token: &mut dyn FnMut(&str)) -> Result<bool> {
        let p = self.p;
        let run = self;
        let from_memory = run.trigger(question).await?;
        if !from_memory {
            let queries = run.rewrite(question).await?;
            let q = run.result.clarified.clone();
            run.route(&q).await?;
            let (use_graph, use_chunks) = match run.result.route {
                Route::Graph => (true, false),
                Route::Chunks => (false, true),
                Route::Web => (false, false),
                Route::Both | Route::Memory => (true, true),
            };
            if use_chunks {
                run.query_tags(&q).await?;
                run.rewritten(&queries).await?;
            }
            if use_graph {
                run.key_points(&q).await?;
            }
            if use_chunks {
                run.decompose_or_search(&q).await?;
            }
            // The most targeted sources first: decomposition's (or the search's), then the
            // rewritten queries', then the graph's mind-map context.
            let rank = |via: &str| match via {
                "decompose" | "search" => 0,
                "rewrite" => 1,
                "graph" => 2,
                _ => 3,
            };
            crate::sort::by_key(&mut run.ctx.items, |c| rank(&c.via));
            run.web_search(&q).await?;
            run.verify(&q).await?;
        }
        run.filter().await?;
        run.ctx.items.truncate(p.max_sources);
        run.result.context = run.ctx.items.clone();
        run.answer(on_token).await?;
        Ok(from_memory)
    }

    /// The fallback when a model call or web search timed out or gave nothing usable (`e`): the
    /// answer is "I don't know." over the sources gathered so far — when there are none yet,
    /// over a hybrid+graph search of the question — and the trace records `{step: "timeout"` (or
    /// `"fallback"`)`, input: {code}, output: {fallback, error, sources}}`.
    async fn fell_back(&mut self, e: &LlmError, on_token: &mut dyn FnMut(&str)) -> Result<()> {
        let t0 = self.clock.now_ms();
        if self.ctx.items.is_empty() {
            let q = self.result.clarified.clone();
            self.search(&q).await?;
        }
        self.ctx.items.truncate(self.p.max_sources);
        self.result.context = self.ctx.items.clone();
        let sources: Vec<String> = self.ctx.items.iter().map(|c| c.source.id.clone()).collect();
        let answer = Answer {
            text: UNKNOWN.to_string(),
            citations: Vec::new(),
            confidence: Confidence::Low,
            known: false,
            support: None,
            self_reported: None,
            sources,
        };
        if self.p.answer.stream == AnswerStream::Withheld {
            on_token(&answer.text);
        }
        self.result.answer = Some(answer);
        let output = serde_json::json!({"fallback": "I don't know, with the sources gathered so far", "error": e.to_string(), "sources": self.result.context.len()});
        let step = if matches!(e, LlmError::Timeout { .. }) { Step::Timeout } else { Step::Fallback };
        self.emit(step, serde_json::json!({"code": Error::Llm(e.clone()).code()}), output, t0);
        Ok(())
    }
}

/// One run of the pipeline: what every step reads and adds to.
struct Run<'a, M: LanguageModel + ?Sized, K: AskSource, W: WebSearch> {
    model: &'a M,
    eng: &'a mut K,
    web: Option<&'a W>,
    p: &'a PipelineParams,
    steps: Steps,
    clock: &'a dyn Clock,
    trace: &'a mut dyn FnMut(TraceEvent),
    /// Every event so far (the kept trace).
    events: Vec<TraceEvent>,
    ctx: Ctx<'a>,
    result: PipelineResult,
    /// The last structured step's raw replies.
    raw: Vec<String>,
    /// Summaries added so far (their ids count up).
    summaries: usize,
    /// The web searcher failed (its error ends the question in "I don't know.").
    web_failed: bool,
    /// The knowledge base's tags the `queryTags` step chose for the question (normalised).
    query_tags: Vec<String>,
}

impl<M: LanguageModel + ?Sized, K: AskSource, W: WebSearch> Run<'_, M, K, W> {
    /// Search options for the pipeline's retrievals: the question read literally, `k` hits from
    /// `mode`, within the run's scope.
    fn search_opts(&self, k: usize, mode: SearchMode) -> SearchOptions {
        SearchOptions { literal: true, filter: self.p.scope().cloned(), ..SearchOptions::new(k, mode) }
    }

    fn emit(&mut self, step: Step, input: serde_json::Value, output: serde_json::Value, t0: f64) {
        let e = TraceEvent { step, round: 0, input, output, ms: self.clock.now_ms() - t0 };
        (self.trace)(e.clone());
        self.events.push(e);
    }

    /// 1. Retrieval trigger: whether the memory answers (its entries then are the context).
    async fn trigger(&mut self, question: &str) -> Result<bool> {
        // The memory is not scoped: with a filter, the run retrieves.
        if !self.steps.trigger || self.p.scope().is_some() || self.eng.memory_len().await? == 0 {
            return Ok(false);
        }
        let (p, t0) = (self.p, self.clock.now_ms());
        let qv = self.eng.embed(&[question]).await?.pop().unwrap_or_default();
        let hits = self.eng.memory_matches(&qv, p.tau).await?;
        let fired = hits.len() >= p.theta;
        if fired {
            for (m, _) in hits.iter().take(p.max_sources) {
                self.ctx.push(Source { id: format!("memory:{}", m.id), title: m.title.clone(), text: m.content.clone() }, "memory");
            }
            self.result.route = Route::Memory;
        }
        let shown: Vec<serde_json::Value> = hits.iter().map(|(m, s)| serde_json::json!({"title": m.title, "score": s})).collect();
        self.emit(
            Step::Trigger,
            serde_json::json!({"tau": p.tau, "theta": p.theta}),
            serde_json::json!({"matches": shown, "fired": fired}),
            t0,
        );
        Ok(fired)
    }

    /// 2. Query Rewriter+: the clarified question (into the result) and the search queries.
    async fn rewrite(&mut self, question: &str) -> Result<Vec<String>> {
        let mut queries: Vec<String> = Vec::new();
        if !self.steps.rewrite {
            return Ok(queries);
        }
        let (p, t0) = (self.p, self.clock.now_ms());
        let m = msgs(
            "rewrite",
            format!(
                "Question: {question}\nRewrite the question so it is clear and self-contained, and write up to {} short search queries that together find what answering it needs. \
Reply {{\"question\": \"...\", \"queries\": [\"...\"]}}.",
                p.rewrite_queries
            ),
        );
        if let Some(r) = step::<Rewrite, _>(self.model, "rewrite", &m, &|_| Ok(()), &mut self.raw).await? {
            if let Some(q) = r.question.map(|q| q.trim().to_string()).filter(|q| !q.is_empty()) {
                self.result.clarified = q;
            }
            queries = r.queries.into_iter().map(|q| q.trim().to_string()).filter(|q| !q.is_empty()).take(p.rewrite_queries).collect();
        }
        let output = serde_json::json!({"clarified": self.result.clarified, "queries": queries, "raw": self.raw});
        self.emit(Step::Rewrite, serde_json::json!({"question": question}), output, t0);
        Ok(queries)
    }

    /// 3. Domain routing (into the result's route).
    async fn route(&mut self, q: &str) -> Result<()> {
        if !self.steps.route {
            return Ok(());
        }
        let t0 = self.clock.now_ms();
        let domains = if self.web.is_some() {
            "\"graph\" (facts about named topics in the knowledge base's mind maps), \"chunks\" (passages), \"both\", or \"web\" (current events, not in the knowledge base)"
        } else {
            "\"graph\" (facts about named topics in the knowledge base's mind maps), \"chunks\" (passages), or \"both\""
        };
        let m = msgs("route", format!("Question: {q}\nWhich source should answer it: {domains}? Reply {{\"route\": \"...\"}}."));
        let web = self.web.is_some();
        let check = |r: &RouteReply| match Route::chosen(&r.route, web) {
            Some(_) => Ok(()),
            None => Err(format!("route {:?} is not one of {domains}", r.route)),
        };
        if let Some(r) = step::<RouteReply, _>(self.model, "route", &m, &check, &mut self.raw).await? {
            self.result.route = Route::chosen(&r.route, web).unwrap_or(Route::Both);
        }
        let output = serde_json::json!({"route": self.result.route, "raw": self.raw});
        self.emit(Step::Route, serde_json::json!({"question": q}), output, t0);
        Ok(())
    }

    /// The rewritten queries: each one's best new chunk joins the context.
    async fn rewritten(&mut self, queries: &[String]) -> Result<()> {
        if queries.is_empty() {
            return Ok(());
        }
        let t0 = self.clock.now_ms();
        let mut added = Vec::new();
        for rq in queries {
            let opts = self.search_opts(3, SearchMode::HybridGraph);
            if let Some(h) = self.eng.search(rq, &opts).await?.into_iter().find(|h| !self.ctx.seen.contains(&h.chunk_id)) {
                self.ctx.push(chunk_source(&mut *self.eng, &h.chunk_id).await?, "rewrite");
                added.push(h.chunk_id);
            }
        }
        self.emit(Step::Retrieve, serde_json::json!({"queries": queries}), serde_json::json!({"chunks": added}), t0);
        Ok(())
    }

    /// 4. Key points → PGR: the graph's mind-map context joins as one source.
    async fn key_points(&mut self, q: &str) -> Result<()> {
        let (p, t0) = (self.p, self.clock.now_ms());
        let mut kps = vec![q.to_string()];
        if self.steps.key_points {
            let m = msgs(
                "key points",
                format!(
                    "Question: {q}\nList up to {} key points an answer must cover, each a short phrase naming its entities. Reply {{\"keyPoints\": [\"...\"]}}.",
                    p.key_points
                ),
            );
            let nonempty =
                |k: &KeyPoints| if k.key_points.iter().any(|s| !s.trim().is_empty()) { Ok(()) } else { Err("no key point".to_string()) };
            if let Some(k) = step::<KeyPoints, _>(self.model, "keyPoints", &m, &nonempty, &mut self.raw).await? {
                kps = k.key_points.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).take(p.key_points).collect();
            }
        }
        let refs: Vec<&str> = kps.iter().map(String::as_str).collect();
        let vecs = self.eng.embed(&refs).await?;
        let vrefs: Vec<&[f32]> = vecs.iter().map(Vec::as_slice).collect();
        // Within a scope: the facts of its documents, the mind maps of their titles.
        let gs = self.eng.graph_search(q, &vrefs, p.graph_facts, p.scope()).await?;
        let text = map_text(&gs.context);
        if !text.trim().is_empty() {
            let title = gs.context.iter().map(|m| m.topic.as_str()).collect::<Vec<_>>().join(", ");
            self.ctx.push(Source { id: "graph:1".into(), title, text }, "graph");
        }
        let facts: Vec<&str> = gs.hits.iter().map(|h| h.chunk_id.as_str()).collect();
        let output = serde_json::json!({"keyPoints": kps, "context": gs.context, "chunks": facts, "raw": self.raw});
        self.emit(Step::KeyPoints, serde_json::json!({"question": q, "on": self.steps.key_points}), output, t0);
        Ok(())
    }

    /// 5. Decomposition (PIKE-RAG Algorithm 1), or with it off a hybrid+graph search.
    async fn decompose_or_search(&mut self, q: &str) -> Result<()> {
        if self.steps.decompose {
            let (events, trace) = (&mut self.events, &mut self.trace);
            let mut sub = |e: TraceEvent| {
                trace(e.clone());
                events.push(e);
            };
            let mut kb = super::Scoped { kb: &mut *self.eng, filter: self.p.scope() };
            let t = decompose(self.model, &mut kb, q, &self.p.decompose, self.clock, &mut sub).await?;
            for c in &t.context {
                if !self.ctx.push(chunk_source(&mut *self.eng, c).await?, "decompose") {
                    // Found by a rewritten query too: decomposition chose it.
                    if let Some(i) = self.ctx.items.iter_mut().find(|i| &i.source.id == c) {
                        i.via = "decompose".into();
                    }
                }
            }
            self.result.trajectory = Some(t);
            return Ok(());
        }
        let t0 = self.clock.now_ms();
        let chunks = self.search(q).await?;
        self.emit(Step::Search, serde_json::json!({"query": q}), serde_json::json!({"chunks": chunks}), t0);
        Ok(())
    }

    /// A hybrid+graph search of `q` within the run's scope, its hits joining the context as
    /// `via: "search"`; returns their chunk ids. With tags from the `queryTags` step, the same
    /// search limited to documents carrying one of them is fused in by reciprocal rank, so
    /// those documents rank higher and no other is shut out.
    async fn search(&mut self, q: &str) -> Result<Vec<String>> {
        let opts = self.search_opts(self.p.max_sources, SearchMode::HybridGraph);
        let mut ids: Vec<String> = self.eng.search(q, &opts).await?.into_iter().map(|h| h.chunk_id).collect();
        if !self.query_tags.is_empty() {
            let scope = opts.filter.clone().unwrap_or_default();
            let tagged = SearchOptions { filter: Some(SearchFilter { tags: self.query_tags.clone(), ..scope }), ..opts.clone() };
            let boost: Vec<String> = self.eng.search(q, &tagged).await?.into_iter().map(|h| h.chunk_id).collect();
            ids = fuse_ranked(&ids, &boost).into_iter().take(self.p.max_sources).collect();
        }
        for id in &ids {
            self.ctx.push(chunk_source(&mut *self.eng, id).await?, "search");
        }
        Ok(ids)
    }

    /// Query-side tagging (PIKE-RAG §4.2, tagging the question as its documents are tagged): the
    /// model picks, from the knowledge base's tags (the [`OFFERED_TAGS`] most common), at most
    /// [`QUERY_TAGS`] that the documents answering `q` would carry; the question's search then
    /// ranks documents with one of them higher ([`Run::search`]). No call when the step is off,
    /// the run's scope already names tags, or no document has a tag. Unreadable output: no tags.
    async fn query_tags(&mut self, q: &str) -> Result<()> {
        if !self.steps.query_tags || self.p.scope().is_some_and(|f| !f.tags.is_empty()) {
            return Ok(());
        }
        let t0 = self.clock.now_ms();
        let offered: Vec<String> = self.eng.tag_counts().await?.into_iter().take(OFFERED_TAGS).map(|(t, _)| t).collect();
        self.raw.clear();
        if !offered.is_empty() {
            let list = offered.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>().join(", ");
            let m = msgs(
                "query tags",
                format!(
                    "Tags: {}\nQuestion: {q}\nWhich of these tags (at most {QUERY_TAGS}) do the documents that answer the question carry? Choose from the list only. Reply {{\"tags\": [\"...\"]}}, or {{\"tags\": []}} when none fits.",
                    data(&list)
                ),
            );
            if let Some(r) = step::<Tags, _>(self.model, "queryTags", &m, &|_| Ok(()), &mut self.raw).await? {
                for t in r.tags.iter().map(|t| crate::types::normalize_tag(t)) {
                    if offered.contains(&t) && !self.query_tags.contains(&t) && self.query_tags.len() < QUERY_TAGS {
                        self.query_tags.push(t);
                    }
                }
            }
        }
        let output = serde_json::json!({"tags": self.query_tags, "raw": self.raw});
        self.emit(Step::QueryTags, serde_json::json!({"question": q, "offered": offered.len()}), output, t0);
        Ok(())
    }

    /// Web search, when routing chose it.
    async fn web_search(&mut self, q: &str) -> Result<()> {
        let Some(w) = self.web.filter(|_| self.result.route == Route::Web) else { return Ok(()) };
        let t0 = self.clock.now_ms();
        let rs = w.search(q, self.p.max_sources).await.inspect_err(|_| self.web_failed = true)?;
        for (i, r) in rs.iter().enumerate() {
            self.ctx.push(Source { id: format!("web:{}", i + 1), title: format!("{} <{}>", r.title, r.url), text: r.text.clone() }, "web");
        }
        self.emit(Step::Web, serde_json::json!({"query": q}), serde_json::json!({"results": rs}), t0);
        Ok(())
    }

    /// 6. Verify and supplement (LevelRAG), up to `verifyRounds` rounds.
    async fn verify(&mut self, q: &str) -> Result<()> {
        if !self.steps.verify || self.result.route == Route::Web {
            return Ok(());
        }
        let p = self.p;
        for round in 1..=p.verify_rounds {
            let t0 = self.clock.now_ms();
            let m = msgs(
                "verify",
                format!(
                    "Question: {q}\nSources:\n{}Is this enough to answer the question? Reply {{\"sufficient\": true}}, or {{\"sufficient\": false, \"queries\": [\"...\"]}} with up to {} \
sub-queries for what is missing.",
                    list(&self.ctx.items),
                    p.supplement_queries
                ),
            );
            let v = step::<Verify, _>(self.model, "verify", &m, &|_| Ok(()), &mut self.raw).await?;
            let (sufficient, subs) = match v {
                Some(v) => (
                    v.sufficient,
                    v.queries
                        .into_iter()
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .take(p.supplement_queries)
                        .collect::<Vec<_>>(),
                ),
                None => (true, Vec::new()),
            };
            let e = TraceEvent {
                step: Step::Verify,
                round,
                input: serde_json::json!({"sources": self.ctx.items.len()}),
                output: serde_json::json!({"sufficient": sufficient, "queries": subs, "raw": self.raw}),
                ms: self.clock.now_ms() - t0,
            };
            (self.trace)(e.clone());
            self.events.push(e);
            if sufficient || subs.is_empty() {
                break;
            }
            for sq in &subs {
                let (events, trace) = (&mut self.events, &mut self.trace);
                let mut sub = |e: TraceEvent| {
                    trace(e.clone());
                    events.push(e);
                };
                let found =
                    supplement(self.model, &mut *self.eng, &SubQuery { text: sq, scope: p.scope(), round }, &mut self.ctx, &mut sub)
                        .await?;
                if self.steps.summarize {
                    self.summarize(sq, &found, round).await?;
                }
            }
        }
        Ok(())
    }

    /// LevelRAG's summarize step (high-level searcher): what the passages found for one
    /// sub-query say about it, in a few cited sentences; the summary joins the context as a
    /// source (`summary:{n}`, before the chunks), so the next verify round and the answer read
    /// it. Fallback on unreadable output: no summary (the chunks stay).
    async fn summarize(&mut self, sq: &str, found: &[String], round: usize) -> Result<()> {
        if found.is_empty() {
            return Ok(());
        }
        let t0 = self.clock.now_ms();
        let mut passages = String::new();
        for (i, c) in found.iter().enumerate() {
            let s = chunk_source(&mut *self.eng, c).await?;
            passages.push_str(&format!("[{}] {} {}\n", i + 1, data(&s.title), data(&s.text)));
        }
        let m = msgs(
            "summarize",
            format!(
                "Sub-query: {sq}\nPassages:\n{passages}Summarize in one to three sentences what the passages say that answers the sub-query, and nothing else; \
say \"nothing\" if they say nothing about it. Reply {{\"summary\": \"...\"}}."
            ),
        );
        let nonempty = |s: &Summary| if s.summary.trim().is_empty() { Err("empty summary".to_string()) } else { Ok(()) };
        let summary =
            step::<Summary, _>(self.model, "summarize", &m, &nonempty, &mut self.raw).await?.map(|s| s.summary.trim().to_string());
        let mut added = None;
        if let Some(text) = summary.as_ref().filter(|t| !t.eq_ignore_ascii_case("nothing") && !t.eq_ignore_ascii_case("nothing.")) {
            self.summaries += 1;
            let id = format!("summary:{}", self.summaries);
            let source = Source { id: id.clone(), title: format!("Summary for: {sq}"), text: text.clone() };
            if self.ctx.seen.insert(id.clone()) {
                // Before the chunks, after the other summaries: the answer and verify read it first.
                let at = self.ctx.items.iter().take_while(|c| c.via == "summary").count();
                self.ctx.items.insert(at, ContextItem { source, via: "summary".into() });
                added = Some(id);
            }
        }
        let e = TraceEvent {
            step: Step::Summarize,
            round,
            input: serde_json::json!({"subQuery": sq, "chunks": found}),
            output: serde_json::json!({"summary": summary, "added": added, "raw": self.raw}),
            ms: self.clock.now_ms() - t0,
        };
        (self.trace)(e.clone());
        self.events.push(e);
        Ok(())
    }

    /// 7. Knowledge filter: an NLI label per source; those not kept leave the context.
    async fn filter(&mut self) -> Result<()> {
        if !self.steps.filter || self.ctx.items.is_empty() {
            return Ok(());
        }
        let (p, t0) = (self.p, self.clock.now_ms());
        let n = self.ctx.items.len();
        let m = msgs(
            "filter",
            format!(
                "Question: {}\nSources:\n{}For each source, in order, judge as natural-language inference whether it supports answering the question: \"entailment\" (it does), \
\"neutral\" (related, not enough alone) or \"contradiction\" (irrelevant or contradicting). Reply {{\"labels\": [one label per source]}}.",
                self.result.clarified,
                list(&self.ctx.items)
            ),
        );
        let check = move |l: &Labels| if l.labels.len() == n { Ok(()) } else { Err(format!("{} labels for {n} sources", l.labels.len())) };
        let labels = step::<Labels, _>(self.model, "filter", &m, &check, &mut self.raw).await?;
        let before: Vec<String> = self.ctx.items.iter().map(|c| c.source.id.clone()).collect();
        if let Some(l) = &labels {
            let keep = |lab: &str| {
                let lab = lab.trim().to_ascii_lowercase();
                lab == "entailment" || (p.filter_strength() == FilterStrength::Lenient && lab == "neutral")
            };
            let mut it = l.labels.iter();
            self.ctx.items.retain(|_| it.next().is_some_and(|lab| keep(lab)));
        }
        let kept: Vec<&String> = self.ctx.items.iter().map(|c| &c.source.id).collect();
        let output = serde_json::json!({"labels": labels.map(|l| l.labels), "kept": kept, "raw": self.raw});
        self.emit(Step::Filter, serde_json::json!({"sources": before, "strength": p.filter_strength()}), output, t0);
        Ok(())
    }

    /// 8. The answer, in the preset's style (L4: after its perspectives).
    async fn answer(&mut self, on_token: &mut dyn FnMut(&str)) -> Result<()> {
        if !self.steps.answer {
            return Ok(());
        }
        let sources: Vec<Source> = self.ctx.items.iter().map(|c| c.source.clone()).collect();
        let style = self.p.preset.style();
        let perspectives =
            if style == AnswerStyle::Creative && !sources.is_empty() { self.perspectives(&sources).await? } else { Vec::new() };
        let (events, trace) = (&mut self.events, &mut self.trace);
        let mut sub = |e: TraceEvent| {
            trace(e.clone());
            events.push(e);
        };
        let q = &self.result.clarified;
        self.result.answer =
            Some(answer_styled(self.model, q, &sources, style, &perspectives, &self.p.answer, self.clock, on_token, &mut sub).await?);
        Ok(())
    }

    /// L4's perspectives: up to `perspectives` points of view on the sources, one call. The
    /// fallback on unreadable output: none (the synthesis reads the sources alone).
    async fn perspectives(&mut self, sources: &[Source]) -> Result<Vec<Perspective>> {
        let (p, t0) = (self.p, self.clock.now_ms());
        let list: String =
            sources.iter().enumerate().map(|(i, s)| format!("[S{}] {} {}\n", i + 1, data(&s.title), data(&s.text))).collect();
        let m = msgs(
            "perspectives",
            format!(
                "Question: {}\nSources:\n{list}Name up to {} distinct perspectives from which to answer the question (stakeholders, disciplines, time horizons), \
each with what it makes of the sources in two or three sentences, citing them as [S1]. Reply {{\"perspectives\": [{{\"name\": \"...\", \"view\": \"...\"}}]}}.",
                self.result.clarified, p.perspectives
            ),
        );
        let nonempty = |v: &Views| if v.perspectives.is_empty() { Err("no perspective".to_string()) } else { Ok(()) };
        let views = step::<Views, _>(self.model, "perspectives", &m, &nonempty, &mut self.raw).await?;
        let out: Vec<Perspective> = views
            .map(|v| v.perspectives.into_iter().filter(|p| !p.view.trim().is_empty()).take(p.perspectives).collect())
            .unwrap_or_default();
        let output = serde_json::json!({"perspectives": out, "raw": self.raw});
        self.emit(Step::Perspectives, serde_json::json!({"sources": sources.len()}), output, t0);
        Ok(out)
    }

    /// Step 9, the memory update: the answered sub-questions and the answer, when it is known
    /// and did not come from the memory.
    async fn remember(&mut self, from_memory: bool) -> Result<()> {
        let Some(a) = self.result.answer.as_ref().filter(|a| a.known && self.steps.memory && !from_memory) else { return Ok(()) };
        let t0 = self.clock.now_ms();
        let mut entries: Vec<(String, String, Vec<String>)> = Vec::new();
        if let Some(t) = &self.result.trajectory {
            let chosen = t.rounds.iter().filter(|r| r.selected.is_some());
            for (r, c) in chosen.zip(&t.context) {
                if let (Some(sq), Some(ans)) = (&r.sub_question, &r.answer)
                    && self.ctx.items.iter().any(|i| &i.source.id == c)
                {
                    entries.push((sq.clone(), ans.clone(), vec![c.clone()]));
                }
            }
        }
        // The answer's sources: the chunks it cites, else (it cites only the graph's context or
        // a summary) every chunk of its context; an entry stands only while its sources do.
        let cited = self.eng.stored(&a.citations).await?;
        let mut sources: Vec<String> = a.citations.iter().filter(|c| cited.contains(*c)).cloned().collect();
        if sources.is_empty() {
            let ids: Vec<String> = self.ctx.items.iter().map(|i| i.source.id.clone()).collect();
            let stored = self.eng.stored(&ids).await?;
            sources = ids.into_iter().filter(|c| stored.contains(c)).collect();
        }
        entries.push((self.result.clarified.clone(), a.text.clone(), sources));
        let saved = self.eng.remember(entries).await?;
        self.result.remembered = saved.len();
        let output = serde_json::json!({"saved": saved.iter().map(|m| &m.title).collect::<Vec<_>>()});
        self.emit(Step::Memory, serde_json::json!({}), output, t0);
        Ok(())
    }

    /// Keeps the trace (when asked) and returns the result.
    async fn finish(self, question: &str) -> Result<PipelineResult> {
        let r = self.result;
        if self.p.keep_trace {
            let json = serde_json::json!({"question": question, "events": self.events, "trajectory": r.trajectory, "answer": r.answer, "route": r.route});
            self.eng.keep_trace(question, json.to_string()).await?;
        }
        Ok(r)
    }
}
