//! `webrag eval --ask`: what a question costs under each preset of the ask pipeline on MuSiQue,
//! with the scripted oracle ([`crate::native::oracle::MusiqueOracle`]) as the model — LLM calls
//! and tokens per question, and what the answers got right. The oracle replies instantly, so the
//! figures count the pipeline's calls and prompt sizes, not a model's speed.
use std::cell::Cell;

use serde::Serialize;

use super::eval::EvalSet;
use crate::ask::pipeline::{NoWeb, PipelineParams, Preset};
use crate::embed::Embedder;
use crate::engine::Engine;
use crate::error::{LlmError, Result};
use crate::llm::{ChatMessage, ChatOptions, LanguageModel};
use crate::ports::{FixedClock, MemoryStore};

/// Tokens in `chars` characters of English prompt or reply, by OpenAI's rule of thumb of four
/// characters per token (the pipeline talks to any model, so no one tokenizer is right).
pub fn approx_tokens(chars: usize) -> usize {
    chars.div_ceil(4)
}

/// A model that counts what passes through it.
pub struct Metered<'a, M> {
    inner: &'a M,
    /// Calls made.
    pub calls: Cell<usize>,
    /// Characters of the messages sent (every message of every call).
    pub prompt_chars: Cell<usize>,
    /// Characters of the replies.
    pub completion_chars: Cell<usize>,
}

impl<'a, M: LanguageModel> Metered<'a, M> {
    /// Counts `inner`'s calls from zero.
    pub fn new(inner: &'a M) -> Self {
        Metered { inner, calls: Cell::new(0), prompt_chars: Cell::new(0), completion_chars: Cell::new(0) }
    }

    fn count(&self, messages: &[ChatMessage], reply: &str) {
        self.calls.set(self.calls.get() + 1);
        self.prompt_chars.set(self.prompt_chars.get() + messages.iter().map(|m| m.content.chars().count()).sum::<usize>());
        self.completion_chars.set(self.completion_chars.get() + reply.chars().count());
    }
}

impl<M: LanguageModel> LanguageModel for Metered<'_, M> {
    async fn chat(&self, messages: &[ChatMessage], opts: &ChatOptions) -> std::result::Result<String, LlmError> {
        let r = self.inner.chat(messages, opts).await?;
        self.count(messages, &r);
        Ok(r)
    }
    async fn chat_stream(
        &self,
        messages: &[ChatMessage],
        opts: &ChatOptions,
        on_token: &mut dyn FnMut(&str),
    ) -> std::result::Result<String, LlmError> {
        let r = self.inner.chat_stream(messages, opts, on_token).await?;
        self.count(messages, &r);
        Ok(r)
    }
}

/// One preset's figures over a question set.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AskRow {
    /// The preset.
    pub preset: &'static str,
    /// Questions asked.
    pub questions: usize,
    /// Mean LLM calls per question.
    pub calls: f64,
    /// Most calls one question took.
    pub max_calls: usize,
    /// Mean prompt tokens per question ([`approx_tokens`]).
    pub prompt_tokens: f64,
    /// Mean completion tokens per question.
    pub completion_tokens: f64,
    /// Share of questions whose answer holds MuSiQue's gold answer, in percent (none for `search`).
    pub correct: Option<f64>,
    /// Share of the gold passages in the context given to the answer (mean per question), in
    /// percent.
    pub gold_in_context: f64,
}

/// Runs every preset over `set` (MuSiQue) with `oracle` as the model. The memory and the
/// retrieval trigger are off, so each question is asked of the same knowledge base.
pub async fn evaluate_presets<E: Embedder>(
    set: &EvalSet,
    eng: &mut Engine<MemoryStore, E>,
    oracle: &crate::native::oracle::MusiqueOracle,
) -> Result<Vec<AskRow>> {
    let mut rows = Vec::new();
    for preset in Preset::ALL {
        let mut p = PipelineParams { preset, ..Default::default() };
        p.steps.insert("memory".into(), false.into());
        p.steps.insert("trigger".into(), false.into());
        let (mut n, mut calls, mut max_calls, mut prompt, mut completion, mut correct, mut share) = (0, 0, 0, 0, 0, 0, 0.0);
        for (q, gold) in &set.questions {
            if gold.is_empty() {
                continue;
            }
            let model = Metered::new(oracle);
            let r = crate::ask::pipeline::run(&model, eng, None::<&NoWeb>, q, &p, &FixedClock(0.0), &mut |_| {}, &mut |_| {}).await?;
            n += 1;
            calls += model.calls.get();
            max_calls = max_calls.max(model.calls.get());
            prompt += approx_tokens(model.prompt_chars.get());
            completion += approx_tokens(model.completion_chars.get());
            let gold_answer = oracle.final_answer(q).map(str::to_lowercase).unwrap_or_default();
            if r.answer.as_ref().is_some_and(|a| a.known && !gold_answer.is_empty() && a.text.to_lowercase().contains(&gold_answer)) {
                correct += 1;
            }
            let docs: Vec<usize> =
                r.context.iter().filter_map(|c| eng.corpus().chunk(&c.source.id)).filter_map(|c| c.doc_id.parse().ok()).collect();
            share += gold.iter().filter(|g| docs.contains(g)).count() as f64 / gold.len() as f64;
        }
        let per = |x: usize| x as f64 / n.max(1) as f64;
        rows.push(AskRow {
            preset: preset.name(),
            questions: n,
            calls: per(calls),
            max_calls,
            prompt_tokens: per(prompt),
            completion_tokens: per(completion),
            correct: (preset != Preset::Search).then(|| 100.0 * per(correct)),
            gold_in_context: 100.0 * share / n.max(1) as f64,
        });
    }
    Ok(rows)
}

/// The rows as a Markdown table.
pub fn print(rows: &[AskRow]) {
    println!("The ask pipeline per preset on MuSiQue with the scripted oracle (memory and trigger off; tokens ≈ characters / 4):");
    println!();
    println!(
        "| preset | LLM calls / question (mean, max) | prompt tokens / question | completion tokens / question | answer holds the gold answer | gold passages in the context | questions |"
    );
    println!("|---|---|---|---|---|---|---|");
    for r in rows {
        let correct = r.correct.map_or("—".to_string(), |c| format!("{c:.1}%"));
        println!(
            "| {} | {:.1}, {} | {:.0} | {:.0} | {} | {:.1}% | {} |",
            r.preset, r.calls, r.max_calls, r.prompt_tokens, r.completion_tokens, correct, r.gold_in_context, r.questions
        );
    }
}

/// The retrieval trigger's calibration (ERM4 §3.4: memory entries whose title has cosine ≥ τ
/// with the question; θ of them answer it from memory).
#[derive(Debug, Clone, Serialize)]
pub struct TriggerRow {
    /// τ.
    pub tau: f32,
    /// Share of questions whose memory of the *other* questions' runs (their questions and hop
    /// sub-questions) holds θ entries ≥ τ: the trigger would answer from unrelated memory.
    pub false_fires: f64,
    /// Share of questions whose memory of their *own* earlier run (the question and its hop
    /// sub-questions) holds θ entries ≥ τ: the trigger would answer a repeated question.
    pub true_fires: f64,
}

/// For every MuSiQue question: the θ-th highest cosine among the other questions' memory (each
/// one's question and hop sub-questions) and among its own; the share of each at or above τ for
/// τ in 0.40, 0.45, …, 0.95.
pub async fn calibrate_trigger<E: Embedder>(
    set: &EvalSet,
    embedder: &E,
    oracle: &crate::native::oracle::MusiqueOracle,
    theta: usize,
) -> Result<Vec<TriggerRow>> {
    // Memory titles per question: the question, then its hop sub-questions.
    let questions: Vec<&String> = set.questions.iter().map(|(q, _)| q).collect();
    let mut titles: Vec<(usize, String)> = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        titles.push((i, q.trim().to_string()));
        for sq in oracle.sub_questions(q) {
            titles.push((i, sq));
        }
    }
    let mut vecs: Vec<Vec<f32>> = Vec::with_capacity(titles.len());
    for part in titles.chunks(32) {
        let refs: Vec<&str> = part.iter().map(|(_, t)| t.as_str()).collect();
        vecs.extend(embedder.embed_checked(&refs).await?);
    }
    let kth = |mut xs: Vec<f32>| -> f32 {
        xs.sort_by(|a, b| b.total_cmp(a));
        xs.get(theta - 1).copied().unwrap_or(f32::NEG_INFINITY)
    };
    let mut own = Vec::new();
    let mut other = Vec::new();
    for (i, _) in questions.iter().enumerate() {
        let at = titles.iter().position(|(j, _)| *j == i).unwrap_or(0);
        let q = &vecs[at];
        let sims = |same: bool| -> Vec<f32> {
            titles.iter().zip(&vecs).filter(|((j, _), _)| (*j == i) == same).map(|(_, v)| crate::embed::vecmath::dot(q, v)).collect()
        };
        own.push(kth(sims(true)));
        other.push(kth(sims(false)));
    }
    let share = |xs: &[f32], tau: f32| 100.0 * xs.iter().filter(|x| **x >= tau).count() as f64 / xs.len().max(1) as f64;
    Ok((0..12)
        .map(|i| {
            let tau = 0.40 + 0.05 * i as f32;
            TriggerRow { tau, false_fires: share(&other, tau), true_fires: share(&own, tau) }
        })
        .collect())
}

/// The calibration as a Markdown table.
pub fn print_trigger(rows: &[TriggerRow], theta: usize) {
    println!("The retrieval trigger on MuSiQue train100 (θ = {theta}; memory = each question and its hop sub-questions):");
    println!();
    println!("| τ | fires on unrelated memory | fires on the question's own earlier run |");
    println!("|---|---|---|");
    for r in rows {
        println!("| {:.2} | {:.1}% | {:.1}% |", r.tau, r.false_fires, r.true_fires);
    }
}
