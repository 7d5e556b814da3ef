//! `webrag eval --answers --llm-url URL`: the answers of the ask pipeline under a real model,
//! against a naive retrieve-then-read baseline with the same model — exact match and token F1
//! (SQuAD's normalisation, Rajpurkar et al. 2016, the official `evaluate-v1.1.py`), answer-string
//! recall, how often the pipeline withholds ("I don't know."), how often it withholds although the
//! gold answer is in its own retrieved passages, how many shown answers their passages do not
//! support, and the model calls and seconds per question.
use std::collections::HashMap;
use std::time::Instant;

use serde::Serialize;

use super::eval::EvalSet;
use super::eval_ask::Metered;
use crate::ask::answer::{AnswerParams, Evidence, Source, strip_citations};
use crate::ask::pipeline::{NoWeb, PipelineParams, Preset};
use crate::embed::Embedder;
use crate::engine::Engine;
use crate::engine::SearchOptions;
use crate::error::Result;
use crate::llm::{ChatMessage, ChatOptions, LanguageModel};
use crate::ports::{FixedClock, MemoryStore};
use crate::types::SearchMode;

/// Passages the naive baseline reads: the top hybrid hits.
pub const NAIVE_K: usize = 5;

/// The naive baseline's prompt (one user message before the passages).
pub const NAIVE_PROMPT: &str = "Answer the question using the context. Answer with a short phrase.";

/// One system's answer figures over a question set.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerRow {
    /// `hotpotqa` or `musique`.
    pub dataset: String,
    /// A preset's name, or `naive` (the baseline).
    pub system: String,
    /// Questions asked.
    pub questions: usize,
    /// Exact match after SQuAD normalisation (best over the gold aliases), percent.
    pub exact_match: f64,
    /// Token F1 after SQuAD normalisation (best over the aliases), mean, percent.
    pub f1: f64,
    /// Share of answers that contain a gold answer (normalised), percent.
    pub answer_recall: f64,
    /// Share of questions answered "I don't know.", percent (the baseline never withholds).
    pub withheld: f64,
    /// Share of questions withheld although a gold answer is in the passages the answer was given,
    /// percent.
    pub withheld_gold_in_passages: f64,
    /// Share of the shown answers whose content words (beyond the question's) the passages mostly
    /// do not hold (support below `supportMedium`, [`Evidence`]), percent of the shown answers.
    pub shown_unsupported: f64,
    /// Share of the shown answers that copy their prompt back (its instructions or its
    /// delimiters: [`Evidence::echo`] for the pipeline's, the baseline's instruction or its
    /// `Context:` block for the baseline's), percent of the shown answers.
    pub shown_prompt_copies: f64,
    /// Share of questions whose passages hold a gold answer, percent.
    pub gold_in_passages: f64,
    /// Model calls per question, mean.
    pub calls: f64,
    /// Seconds per question, mean (wall clock, the model's time included).
    pub seconds: f64,
    /// Questions that ended in an error (counted as withheld), with the first error's text.
    pub errors: usize,
    /// The first error, if any.
    pub first_error: Option<String>,
    /// Each question's outcome (in `--json` only), for reading why a system scored as it did.
    pub items: Vec<AnswerItem>,
}

/// One question's outcome under one system.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerItem {
    /// The question.
    pub question: String,
    /// Its gold answers (the answer, then the aliases).
    pub gold: Vec<String>,
    /// The answer shown; "I don't know." when withheld (the pipeline) or on an error.
    pub answer: String,
    /// The pipeline's computed confidence (`null` for the baseline and on an error).
    pub confidence: Option<crate::ask::answer::Confidence>,
    /// The share of the answer's content words its sources hold ([`Evidence::support`]; the
    /// pipeline's own for its answers, the passages' for the baseline's).
    pub support: Option<f32>,
    /// The model's own `Confidence:` line (the pipeline; `null` when it wrote none).
    pub self_reported: Option<crate::ask::answer::Confidence>,
    /// Whether a gold answer is in the passages the answer was given.
    pub gold_in_passages: bool,
    /// Token F1 of the shown answer, percent (0 when withheld).
    pub f1: f64,
}

/// SQuAD's answer normalisation: lowercase, punctuation removed, the articles a / an / the
/// removed, whitespace collapsed.
pub fn squad_normalize(s: &str) -> String {
    let lower: String = s.to_lowercase().chars().map(|c| if c.is_ascii_punctuation() || c.is_ascii_control() { ' ' } else { c }).collect();
    // The official script deletes punctuation (no space); for ASCII answers that only differs
    // inside hyphenated or dotted words, where a space keeps the tokens apart as F1 wants.
    lower.split_whitespace().filter(|w| !matches!(*w, "a" | "an" | "the")).collect::<Vec<_>>().join(" ")
}

/// Exact match of `prediction` with any of `golds` after [`squad_normalize`].
pub fn exact_match(prediction: &str, golds: &[String]) -> bool {
    let p = squad_normalize(prediction);
    golds.iter().any(|g| squad_normalize(g) == p)
}

/// Token F1 of `prediction` against the best of `golds` after [`squad_normalize`] (0..=1).
pub fn token_f1(prediction: &str, golds: &[String]) -> f64 {
    let p = squad_normalize(prediction);
    let pt: Vec<&str> = p.split_whitespace().collect();
    golds
        .iter()
        .map(|g| {
            let g = squad_normalize(g);
            let gt: Vec<&str> = g.split_whitespace().collect();
            let mut counts: HashMap<&str, i64> = HashMap::new();
            for t in &gt {
                *counts.entry(t).or_default() += 1;
            }
            let mut same = 0;
            for t in &pt {
                if let Some(c) = counts.get_mut(t).filter(|c| **c > 0) {
                    *c -= 1;
                    same += 1;
                }
            }
            if same == 0 {
                return 0.0;
            }
            let precision = same as f64 / pt.len() as f64;
            let recall = same as f64 / gt.len() as f64;
            2.0 * precision * recall / (precision + recall)
        })
        .fold(0.0, f64::max)
}

/// Whether `text` contains a gold answer, both normalised ([`squad_normalize`]).
pub fn contains_answer(text: &str, golds: &[String]) -> bool {
    let t = format!(" {} ", squad_normalize(text));
    golds.iter().map(|g| squad_normalize(g)).any(|g| !g.is_empty() && t.contains(&format!(" {g} ")))
}

#[derive(Default)]
struct Tally {
    n: usize,
    em: usize,
    f1: f64,
    recall: usize,
    withheld: usize,
    withheld_gold: usize,
    shown: usize,
    shown_unsupported: usize,
    shown_copies: usize,
    gold_in_passages: usize,
    calls: usize,
    seconds: f64,
    errors: usize,
    first_error: Option<String>,
    items: Vec<AnswerItem>,
}

/// What the pipeline said of its own answer, for [`AnswerItem`].
#[derive(Clone, Copy)]
struct Judged {
    confidence: Option<crate::ask::answer::Confidence>,
    support: Option<f32>,
    self_reported: Option<crate::ask::answer::Confidence>,
}

impl Tally {
    /// One question: `answer` (None: withheld), the passages it was given, the gold answers, and
    /// what the pipeline judged of its answer (`None` for the baseline).
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        question: &str,
        answer: Option<&str>,
        judged: Option<Judged>,
        passages: &[Source],
        golds: &[String],
        calls: usize,
        seconds: f64,
    ) {
        self.n += 1;
        self.calls += calls;
        self.seconds += seconds;
        let gold_in = passages.iter().any(|s| contains_answer(&s.text, golds) || contains_answer(&s.title, golds));
        self.gold_in_passages += usize::from(gold_in);
        let (mut f1, mut support) = (0.0, judged.and_then(|j| j.support));
        match answer {
            None => {
                self.withheld += 1;
                self.withheld_gold += usize::from(gold_in);
            }
            Some(a) => {
                let a = strip_citations(a);
                self.em += usize::from(exact_match(&a, golds));
                f1 = token_f1(&a, golds);
                self.f1 += f1;
                self.recall += usize::from(contains_answer(&a, golds));
                self.shown += 1;
                let e = Evidence::of(&a, question, passages, &[]);
                if e.support.is_some_and(|s| s < AnswerParams::SUPPORT_MEDIUM.real()) {
                    self.shown_unsupported += 1;
                }
                if e.echo || a.contains(NAIVE_PROMPT) || a.contains("Context:\n[1]") {
                    self.shown_copies += 1;
                }
                if judged.is_none() {
                    support = e.support;
                }
            }
        }
        self.items.push(AnswerItem {
            question: question.into(),
            gold: golds.to_vec(),
            answer: answer.unwrap_or(crate::ask::answer::UNKNOWN).into(),
            confidence: judged.and_then(|j| j.confidence),
            support,
            self_reported: judged.and_then(|j| j.self_reported),
            gold_in_passages: gold_in,
            f1: 100.0 * f1,
        });
    }

    fn error(&mut self, question: &str, e: &crate::Error, golds: &[String], seconds: f64) {
        self.errors += 1;
        self.first_error.get_or_insert_with(|| e.to_string());
        self.add(question, None, None, &[], golds, 0, seconds);
    }

    fn row(self, dataset: &str, system: &str) -> AnswerRow {
        let n = self.n.max(1) as f64;
        let pct = |x: usize| 100.0 * x as f64 / n;
        AnswerRow {
            dataset: dataset.into(),
            system: system.into(),
            questions: self.n,
            exact_match: pct(self.em),
            f1: 100.0 * self.f1 / n,
            answer_recall: pct(self.recall),
            withheld: pct(self.withheld),
            withheld_gold_in_passages: pct(self.withheld_gold),
            shown_unsupported: 100.0 * self.shown_unsupported as f64 / self.shown.max(1) as f64,
            shown_prompt_copies: 100.0 * self.shown_copies as f64 / self.shown.max(1) as f64,
            gold_in_passages: pct(self.gold_in_passages),
            calls: self.calls as f64 / n,
            seconds: self.seconds / n,
            errors: self.errors,
            first_error: self.first_error,
            items: self.items,
        }
    }
}

/// The first `limit` questions of `set` (those with a gold answer) under each of `presets` (the
/// memory and the retrieval trigger off: every question meets the same knowledge base; with
/// `query_tags`, each preset again with `steps.queryTags` on, row `<preset> + queryTags`), then
/// the naive baseline: the top [`NAIVE_K`] hybrid passages in one plain prompt
/// ([`NAIVE_PROMPT`]), with the same `model`.
pub async fn evaluate_answers<M: LanguageModel, E: Embedder>(
    set: &EvalSet,
    eng: &mut Engine<MemoryStore, E>,
    model: &M,
    presets: &[Preset],
    query_tags: bool,
    limit: usize,
) -> Result<Vec<AnswerRow>> {
    let asked: Vec<(&str, &[String])> = set
        .questions
        .iter()
        .zip(&set.answers)
        .filter(|(_, a)| !a.is_empty())
        .map(|((q, _), a)| (q.as_str(), a.as_slice()))
        .take(limit)
        .collect();
    let mut rows = Vec::new();
    let variants = presets.iter().flat_map(|&p| std::iter::once((p, false)).chain(query_tags.then_some((p, true))));
    for (preset, tagged) in variants {
        let mut p = PipelineParams { preset, ..Default::default() };
        p.steps.insert("memory".into(), false.into());
        p.steps.insert("trigger".into(), false.into());
        if tagged {
            p.steps.insert("queryTags".into(), true.into());
        }
        let system = if tagged { format!("{} + queryTags", preset.name()) } else { preset.name().to_string() };
        let mut t = Tally::default();
        for (i, (q, golds)) in asked.iter().enumerate() {
            let metered = Metered::new(model);
            let t0 = Instant::now();
            let r = crate::ask::pipeline::run(&metered, eng, None::<&NoWeb>, q, &p, &FixedClock(0.0), &mut |_| {}, &mut |_| {}).await;
            let secs = t0.elapsed().as_secs_f64();
            match r {
                Ok(r) => {
                    let passages: Vec<Source> = r.context.iter().map(|c| c.source.clone()).collect();
                    let shown = r.answer.as_ref().filter(|a| a.known).map(|a| a.text.as_str());
                    let judged = Judged {
                        confidence: r.answer.as_ref().map(|a| a.confidence),
                        support: r.answer.as_ref().and_then(|a| a.support),
                        self_reported: r.answer.as_ref().and_then(|a| a.self_reported),
                    };
                    t.add(q, shown, Some(judged), &passages, golds, metered.calls.get(), secs);
                }
                Err(e) => t.error(q, &e, golds, secs),
            }
            eprintln!("{} {system}: {}/{} questions", set.name, i + 1, asked.len());
        }
        rows.push(t.row(&set.name, &system));
    }
    let mut t = Tally::default();
    for (q, golds) in &asked {
        let t0 = Instant::now();
        let hits = eng.search(q, &SearchOptions { literal: true, ..SearchOptions::new(NAIVE_K, SearchMode::Hybrid) }).await?;
        let passages: Vec<Source> = hits
            .iter()
            .map(|h| Source {
                id: h.chunk_id.clone(),
                title: h.title.clone(),
                text: eng.corpus().chunk(&h.chunk_id).map(|c| c.text.clone()).unwrap_or_default(),
            })
            .collect();
        let context: String = passages.iter().enumerate().map(|(i, s)| format!("[{}] {}: {}\n", i + 1, s.title, s.text)).collect();
        let msgs = [ChatMessage::user(format!("{NAIVE_PROMPT}\n\nContext:\n{context}\nQuestion: {q}\nAnswer:"))];
        match model.chat(&msgs, &ChatOptions::step("naive answer")).await {
            Ok(reply) => t.add(q, Some(reply.trim()), None, &passages, golds, 1, t0.elapsed().as_secs_f64()),
            Err(e) => t.error(q, &e.into(), golds, t0.elapsed().as_secs_f64()),
        }
    }
    rows.push(t.row(&set.name, &format!("naive (top-{NAIVE_K} hybrid, one prompt)")));
    Ok(rows)
}

/// The rows as a Markdown table.
pub fn print(rows: &[AnswerRow]) {
    println!(
        "Answers with a real model (memory and trigger off; EM and F1 with SQuAD's normalisation, best over the gold aliases; \"I don't know.\" scores 0):"
    );
    println!();
    println!(
        "| dataset | system | EM | F1 | answer recall | withheld | withheld, gold in its passages | shown answers unsupported | shown answers copying the prompt | gold in passages | calls / q | s / q | questions | errors |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.1} | {:.1} | {} | {} |",
            r.dataset,
            r.system,
            r.exact_match,
            r.f1,
            r.answer_recall,
            r.withheld,
            r.withheld_gold_in_passages,
            r.shown_unsupported,
            r.shown_prompt_copies,
            r.gold_in_passages,
            r.calls,
            r.seconds,
            r.questions,
            r.errors
        );
    }
    if let Some(e) = rows.iter().find_map(|r| r.first_error.as_ref()) {
        println!();
        println!("First error: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squad_scores() {
        let g = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(squad_normalize("The  Eiffel-Tower!"), "eiffel tower");
        assert!(exact_match("the Eiffel Tower.", &g(&["Eiffel Tower"])));
        assert!(!exact_match("Eiffel", &g(&["Eiffel Tower"])));
        assert!((token_f1("Eiffel", &g(&["Eiffel Tower"])) - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(token_f1("nothing", &g(&["Eiffel Tower"])), 0.0);
        assert_eq!(token_f1("Stanley Hall", &g(&["G. Stanley Hall", "Stanley Hall"])), 1.0, "the best alias");
        assert!(contains_answer("It was G. Stanley Hall [S1].", &g(&["G. Stanley Hall"])));
        assert!(!contains_answer("Hallway", &g(&["Hall"])), "whole words only");
    }
}
