//! LevelRAG's low-level searchers (arXiv 2502.18139 §3.3) for one sub-query of the verify step:
//! the sparse searcher writes a keyword query in the BM25 syntax and refines it once on feedback
//! (extend / filter / emphasize), the dense searcher writes a pseudo-document (HyDE) and searches
//! with its embedding. Each one's best new chunk joins the context.
use serde::{Deserialize, Serialize};

use super::context::{Ctx, chunk_source, msgs, step};
use super::data;
use super::{AskSource, Step, TraceEvent};
use crate::engine::SearchOptions;
use crate::error::Result;
use crate::llm::LanguageModel;
use crate::llm::json::Reply;
use crate::types::{Hit, SearchFilter, SearchMode};

#[derive(Deserialize)]
#[cfg_attr(all(test, not(target_arch = "wasm32")), derive(schemars::JsonSchema))]
struct Keyword {
    query: String,
}

impl Reply for Keyword {
    const SCHEMA: &'static str = r#"{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}"#;
}

#[derive(Deserialize)]
#[cfg_attr(all(test, not(target_arch = "wasm32")), derive(schemars::JsonSchema))]
struct Feedback {
    relevant: bool,
    #[serde(default)]
    action: Option<String>,
    #[serde(default)]
    terms: Vec<String>,
    /// A whole new query (read when no action with terms is given).
    #[serde(default)]
    query: Option<String>,
}

impl Reply for Feedback {
    const SCHEMA: &'static str = r#"{"type":"object","properties":{"relevant":{"type":"boolean"},"action":{"type":"string","enum":["extend","filter","emphasize"]},"terms":{"type":"array","items":{"type":"string"}},"query":{"type":"string"}},"required":["relevant"]}"#;
}

/// LevelRAG's sparse-searcher feedback actions on a keyword query (arXiv 2502.18139 §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FeedbackAction {
    /// Add the terms.
    Extend,
    /// Exclude the terms (`-term`, `-"two words"`).
    Filter,
    /// Boost the terms (`term^2`; a term already in the query is boosted where it stands).
    Emphasize,
    /// The model wrote a whole new query.
    Rewrite,
}

/// A term as one BM25 query token: a phrase in quotes.
fn query_term(t: &str) -> String {
    let t = t.trim().trim_matches('"');
    if t.contains(char::is_whitespace) { format!("\"{t}\"") } else { t.to_string() }
}

/// The query `kw` after `action` with `terms` (empty terms are ignored).
pub fn refine_query(kw: &str, action: FeedbackAction, terms: &[String]) -> String {
    let terms: Vec<String> = terms.iter().map(|t| query_term(t)).filter(|t| !t.is_empty() && t != "\"\"").collect();
    match action {
        FeedbackAction::Extend => std::iter::once(kw.to_string()).chain(terms).collect::<Vec<_>>().join(" "),
        FeedbackAction::Filter => {
            std::iter::once(kw.to_string()).chain(terms.iter().map(|t| format!("-{t}"))).collect::<Vec<_>>().join(" ")
        }
        FeedbackAction::Emphasize => {
            let mut words: Vec<String> = kw.split_whitespace().map(str::to_string).collect();
            for t in terms {
                match words.iter_mut().find(|w| w.eq_ignore_ascii_case(&t)) {
                    Some(w) => w.push_str("^2"),
                    None => words.push(format!("{t}^2")),
                }
            }
            words.join(" ")
        }
        FeedbackAction::Rewrite => kw.to_string(),
    }
}

impl Feedback {
    /// The action and the refined query, or `None` when the reply changes nothing.
    fn refined(&self, kw: &str) -> Option<(FeedbackAction, String)> {
        let action = match self.action.as_deref().map(|a| a.trim().to_ascii_lowercase()) {
            Some(a) if a == "extend" => Some(FeedbackAction::Extend),
            Some(a) if a == "filter" => Some(FeedbackAction::Filter),
            Some(a) if a == "emphasize" || a == "emphasise" => Some(FeedbackAction::Emphasize),
            _ => None,
        };
        if let Some(a) = action.filter(|_| self.terms.iter().any(|t| !t.trim().is_empty())) {
            let q = refine_query(kw, a, &self.terms);
            return (q != kw).then_some((a, q));
        }
        let q = self.query.as_deref().map(str::trim).filter(|q| !q.is_empty() && *q != kw)?;
        Some((action.unwrap_or(FeedbackAction::Rewrite), q.to_string()))
    }
}

#[derive(Deserialize)]
#[cfg_attr(all(test, not(target_arch = "wasm32")), derive(schemars::JsonSchema))]
struct Pseudo {
    document: String,
}

impl Reply for Pseudo {
    const SCHEMA: &'static str = r#"{"type":"object","properties":{"document":{"type":"string"}},"required":["document"]}"#;
}

/// One sub-query of verify-and-supplement: its text, the documents the run may use, its round.
pub(super) struct SubQuery<'a> {
    pub(super) text: &'a str,
    pub(super) scope: Option<&'a SearchFilter>,
    pub(super) round: usize,
}

/// The first of `hits` not in the context yet joins it, brought by `via`; its chunk id.
async fn join_first_unseen<K: AskSource>(eng: &mut K, ctx: &mut Ctx<'_>, hits: &[Hit], via: &str) -> Result<Option<String>> {
    let added = hits.iter().find(|h| !ctx.seen.contains(&h.chunk_id)).map(|h| h.chunk_id.clone());
    if let Some(c) = &added {
        ctx.push(chunk_source(eng, c).await?, via);
    }
    Ok(added)
}

/// LevelRAG's low-level searchers for one sub-query: sparse (keyword rewrite in the BM25 syntax,
/// one feedback round) and dense (pseudo-document); the best new chunk of each joins. Returns
/// the chunks each searcher ranked first and second (for the summarize step).
pub(super) async fn supplement<M: LanguageModel + ?Sized, K: AskSource>(
    model: &M,
    eng: &mut K,
    q: &SubQuery<'_>,
    ctx: &mut Ctx<'_>,
    emit: &mut dyn FnMut(TraceEvent),
) -> Result<Vec<String>> {
    let mut found = sparse(model, eng, q, ctx, emit).await?;
    for c in dense(model, eng, q, ctx, emit).await? {
        if !found.contains(&c) {
            found.push(c);
        }
    }
    Ok(found)
}

/// The sparse searcher: a keyword query for BM25 written by the model, refined once by its
/// feedback on the results (extend, filter, emphasize); the top 2 chunks, and the first unseen
/// one joins the context.
async fn sparse<M: LanguageModel + ?Sized, K: AskSource>(
    model: &M,
    eng: &mut K,
    q: &SubQuery<'_>,
    ctx: &mut Ctx<'_>,
    emit: &mut dyn FnMut(TraceEvent),
) -> Result<Vec<String>> {
    let (scope, sq, round, clock) = (q.scope, q.text, q.round, ctx.clock);
    let t0 = clock.now_ms();
    let m = msgs(
        "keyword query",
        format!(
            "Sub-query: {sq}\nWrite a keyword query for a BM25 search engine. Syntax: \"exact phrase\", -excluded, term^2 to emphasize. Reply {{\"query\": \"...\"}}."
        ),
    );
    let mut raw = Vec::new();
    let mut kw = step::<Keyword, _>(
        model,
        "sparse",
        &m,
        &|k: &Keyword| if k.query.trim().is_empty() { Err("empty query".into()) } else { Ok(()) },
        &mut raw,
    )
    .await?
    .map(|k| k.query)
    .unwrap_or_else(|| sq.to_string());
    let mut tried = vec![kw.clone()];
    let bm25 = SearchOptions { filter: scope.cloned(), ..SearchOptions::new(3, SearchMode::Bm25) };
    let mut hits = eng.search(&kw, &bm25).await.unwrap_or_default();
    let shown: String = hits
        .iter()
        .enumerate()
        .map(|(i, h)| format!("[{i}] {} {}\n", data(&h.title), data(&h.snippet.iter().map(|s| s.text.as_str()).collect::<String>())))
        .collect();
    let m = msgs(
        "keyword feedback",
        format!(
            "Sub-query: {sq}\nKeyword query: {kw}\nResults:\n{}Are the results relevant? Reply {{\"relevant\": true}}, or {{\"relevant\": false, \"action\": \"extend\" | \"filter\" | \"emphasize\", \"terms\": [\"...\"]}}: \
extend adds the terms, filter excludes them, emphasize boosts them.",
            if shown.is_empty() { "(none)\n".to_string() } else { shown }
        ),
    );
    let mut action = None;
    let mut raw_feedback = Vec::new();
    if let Some(f) = step::<Feedback, _>(model, "sparse", &m, &|_| Ok(()), &mut raw_feedback).await?
        && !f.relevant
        && let Some((a, nq)) = f.refined(&kw)
    {
        action = Some(a);
        kw = nq;
        tried.push(kw.clone());
        hits = eng.search(&kw, &bm25).await.unwrap_or_default();
    }
    raw.extend(raw_feedback);
    let found = hits.iter().take(2).map(|h| h.chunk_id.clone()).collect();
    let added = join_first_unseen(eng, ctx, &hits, "sparse").await?;
    emit(TraceEvent {
        step: Step::Sparse,
        round,
        input: serde_json::json!({"subQuery": sq}),
        output: serde_json::json!({"queries": tried, "feedback": action, "hits": hits.iter().map(|h| &h.chunk_id).collect::<Vec<_>>(), "added": added, "raw": raw}),
        ms: clock.now_ms() - t0,
    });
    Ok(found)
}

/// The dense searcher (HyDE, Gao et al. 2022): a pseudo-document the model writes for the
/// sub-query, embedded and searched; the top 2 chunks, and the first unseen one joins the context.
async fn dense<M: LanguageModel + ?Sized, K: AskSource>(
    model: &M,
    eng: &mut K,
    q: &SubQuery<'_>,
    ctx: &mut Ctx<'_>,
    emit: &mut dyn FnMut(TraceEvent),
) -> Result<Vec<String>> {
    let (scope, sq, round, clock) = (q.scope, q.text, q.round, ctx.clock);
    let t0 = clock.now_ms();
    let m = msgs(
        "pseudo-document",
        format!("Sub-query: {sq}\nWrite a short passage that would answer it, as an encyclopedia would. Reply {{\"document\": \"...\"}}."),
    );
    let mut raw = Vec::new();
    let doc = step::<Pseudo, _>(model, "dense", &m, &|_| Ok(()), &mut raw).await?.map(|d| d.document).unwrap_or_else(|| sq.to_string());
    let qv = eng.embed(&[doc.as_str()]).await?.pop().unwrap_or_default();
    let hits = eng
        .search_with(&doc, &qv, &SearchOptions { literal: true, filter: scope.cloned(), ..SearchOptions::new(3, SearchMode::Dense) })
        .await?;
    let found = hits.iter().take(2).map(|h| h.chunk_id.clone()).collect();
    let added = join_first_unseen(eng, ctx, &hits, "dense").await?;
    emit(TraceEvent {
        step: Step::Dense,
        round,
        input: serde_json::json!({"subQuery": sq}),
        output: serde_json::json!({"pseudoDocument": doc, "hits": hits.iter().map(|h| &h.chunk_id).collect::<Vec<_>>(), "added": added, "raw": raw}),
        ms: clock.now_ms() - t0,
    });
    Ok(found)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn reply_schemas_match_their_types() {
        use crate::llm::json::assert_schema_matches;
        assert_schema_matches::<Keyword>();
        assert_schema_matches::<Feedback>();
        assert_schema_matches::<Pseudo>();
    }
}
