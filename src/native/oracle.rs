//! A scripted decomposer for `webrag eval --decompose`: it plays the model of PIKE-RAG's
//! Algorithm 1 from MuSiQue's own `question_decomposition`, so the evaluation measures the loop's
//! mechanics (proposals → candidates → selection → context), not a language model.
//!
//! It reads the same prompts a real model gets ([`crate::ask::propose_messages`],
//! [`crate::ask::select_messages`]) and answers in the same JSON:
//! - `Task: propose` with `n` answered sub-questions: MuSiQue's hop `n + 1`, with `#1`, `#2`, ...
//!   replaced by the gold answers of the earlier hops; after the last hop, `decompose: false`;
//! - `Task: select`: the first candidate whose text contains the current hop's gold answer (case
//!   and spacing ignored), answered with that answer; `choice: null` when none does.
use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::error::LlmError;
use crate::llm::{ChatMessage, ChatOptions, LanguageModel, Role};

/// The oracle for one MuSiQue file.
pub struct MusiqueOracle {
    /// Question → hops `(sub-question, answer)`.
    hops: HashMap<String, Vec<(String, String)>>,
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

impl MusiqueOracle {
    /// Reads `train100.json` (its `question_decomposition`s) from `dir`.
    pub fn load(dir: &Path) -> std::io::Result<Self> {
        let qs: Value = serde_json::from_slice(&std::fs::read(dir.join("train100.json"))?)?;
        let mut hops = HashMap::new();
        for q in qs.as_array().into_iter().flatten() {
            let steps: Vec<(String, String)> = q["question_decomposition"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| (s["question"].as_str().unwrap_or_default().to_string(), s["answer"].as_str().unwrap_or_default().to_string()))
                .collect();
            hops.insert(q["question"].as_str().unwrap_or_default().trim().to_string(), steps);
        }
        Ok(MusiqueOracle { hops })
    }

    /// Hop `i` of `question` with the earlier hops' answers substituted for `#1`, `#2`, ...
    pub fn sub_question(hops: &[(String, String)], i: usize) -> String {
        let mut q = hops[i].0.clone();
        // Highest first, so "#1" does not eat the start of "#10".
        for j in (0..i).rev() {
            q = q.replace(&format!("#{}", j + 1), &hops[j].1);
        }
        q
    }

    fn reply(&self, prompt: &str) -> Value {
        let line = |key: &str| prompt.lines().find_map(|l| l.strip_prefix(key)).map(str::trim).unwrap_or_default();
        let task = line("Task: ");
        let question = line("Original question: ");
        let known = prompt.lines().filter(|l| l.split_once(". Q: ").is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()))).count();
        let Some(hops) = self.hops.get(question) else {
            return if task == "propose" { json!({"decompose": false, "questions": []}) } else { json!({"choice": null}) };
        };
        match task {
            "propose" if known < hops.len() => json!({"decompose": true, "questions": [Self::sub_question(hops, known)]}),
            "propose" => json!({"decompose": false, "questions": []}),
            _ => {
                let Some((_, answer)) = hops.get(known) else { return json!({"choice": null}) };
                let list = prompt.split_once("\nCandidates:\n").map(|x| x.1).unwrap_or_default();
                let (mut i, mut rest) = (0, list);
                while let Some(start) = rest.find(&format!("[{i}]")) {
                    let body = &rest[start..];
                    let end = body.find(&format!("\n[{}]", i + 1)).unwrap_or(body.len());
                    if norm(&body[..end]).contains(&norm(answer)) {
                        return json!({"choice": i, "answer": answer});
                    }
                    rest = &body[end..];
                    i += 1;
                }
                json!({"choice": null})
            }
        }
    }
}

impl LanguageModel for MusiqueOracle {
    async fn chat(&self, messages: &[ChatMessage], _opts: &ChatOptions) -> Result<String, LlmError> {
        let prompt = messages.iter().rev().find(|m| m.role == Role::User).map(|m| m.content.as_str()).unwrap_or_default();
        Ok(self.reply(prompt).to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutes_earlier_answers() {
        let hops = vec![
            ("Aschenbrödel >> composer".to_string(), "Johann Strauss II".to_string()),
            ("#1 >> country of citizenship".to_string(), "Austria".to_string()),
            ("Who was in charge of #2 ?".to_string(), "Karl Renner".to_string()),
        ];
        assert_eq!(MusiqueOracle::sub_question(&hops, 1), "Johann Strauss II >> country of citizenship");
        assert_eq!(MusiqueOracle::sub_question(&hops, 2), "Who was in charge of Austria ?");
    }
}
