//! What kept traces become outside the engine: PIKE-RAG Algorithm 3's supervised fine-tuning
//! pairs from decomposition trajectories, and `exportTraces`' JSONL (the events as kept, or
//! those pairs).
use serde::{Deserialize, Serialize};

use super::Trajectory;

/// One supervised fine-tuning pair (PIKE-RAG Algorithm 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SftPair {
    /// `prompt_x(q, [(q¹, a¹), …])`.
    pub prompt: String,
    /// `<decompose>True</decompose><sub-question>…</sub-question>` or `<decompose>False</decompose>`.
    pub completion: String,
}

/// Algorithm 3's `prompt_x`: the original question and the sub-questions answered so far.
pub fn sft_prompt(question: &str, qa: &[(String, String)]) -> String {
    let mut ctx = String::new();
    for (q, a) in qa {
        ctx.push_str(&format!("- {q} {a}\n"));
    }
    format!(
        "Based on the given information, determine whether a follow-up question is necessary or not.\n**Original Question**\n{question}\n**Existing Context**\n{ctx}\
Make sure your output align with the following format:\n<decompose>False</decompose>\nOR\n<decompose>True</decompose>\n<sub-question>a follow-up question</sub-question>"
    )
}

impl Trajectory {
    /// The answered sub-questions `[(sub_q, answer)...]`.
    pub fn steps(&self) -> Vec<(String, String)> {
        self.rounds
            .iter()
            .filter(|r| r.selected.is_some())
            .map(|r| (r.sub_question.clone().unwrap_or_default(), r.answer.clone().unwrap_or_default()))
            .collect()
    }

    /// Algorithm 3: a trajectory of `t` answered sub-questions gives `t + 1` pairs — for each
    /// `i`, the question and the first `i − 1` steps → "decompose, ask sub-question `i`"; then
    /// all `t` steps → "no further decomposition".
    pub fn sft_pairs(&self) -> Vec<SftPair> {
        let steps = self.steps();
        let mut out = Vec::with_capacity(steps.len() + 1);
        for i in 0..steps.len() {
            out.push(SftPair {
                prompt: sft_prompt(&self.question, &steps[..i]),
                completion: format!("<decompose>True</decompose>\n<sub-question>{}</sub-question>", steps[i].0),
            });
        }
        out.push(SftPair { prompt: sft_prompt(&self.question, &steps), completion: "<decompose>False</decompose>".into() });
        out
    }
}

/// Trajectories as JSONL of SFT pairs (one `{"prompt", "completion"}` object per line).
pub fn sft_jsonl(trajectories: &[Trajectory]) -> String {
    let mut s = String::new();
    for t in trajectories {
        for p in t.sft_pairs() {
            s.push_str(&serde_json::to_string(&p).unwrap_or_default());
            s.push('\n');
        }
    }
    s
}

/// How [`export_traces`] writes kept traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// One `{question, events, trajectory, answer, route}` object per line, as kept.
    Events,
    /// The decomposition trajectories as PIKE-RAG Algorithm 3 SFT pairs `{prompt, completion}`
    /// (`t + 1` lines per trajectory of `t` sub-questions).
    Sft,
}

impl std::str::FromStr for TraceFormat {
    type Err = crate::error::InputError;
    /// `"events"` or `"sft"`; anything else is [`crate::error::InputError::InvalidOption`]
    /// `format`.
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match s {
            "events" => Ok(TraceFormat::Events),
            "sft" => Ok(TraceFormat::Sft),
            other => Err(crate::error::InputError::InvalidOption {
                name: "format".into(),
                reason: format!("{other:?} is not \"events\" or \"sft\""),
            }),
        }
    }
}

/// Kept traces (oldest first) as JSONL in `format`. A trace whose JSON does not hold a readable
/// trajectory adds no SFT pair.
pub fn export_traces(traces: &[crate::schema::TraceRecord], format: TraceFormat) -> String {
    match format {
        TraceFormat::Events => traces.iter().map(|t| format!("{}\n", t.json)).collect(),
        TraceFormat::Sft => {
            let ts: Vec<Trajectory> = traces
                .iter()
                .filter_map(|t| serde_json::from_str::<serde_json::Value>(&t.json).ok())
                .filter_map(|v| serde_json::from_value(v["trajectory"].clone()).ok())
                .collect();
            sft_jsonl(&ts)
        }
    }
}
