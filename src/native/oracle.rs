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
//!
//! For `webrag eval --ask` it plays every other step of the ask pipeline too, readably and
//! from the same gold data: rewrite (the question as is, the first hop as a query), route
//! (`both`), key points (the hops), verify (sufficient once every hop's answer is in the
//! sources; else the missing hops as sub-queries), the low-level searchers (the sub-query as the
//! keyword query and as the pseudo-document, results relevant), summarize (the first passage's
//! first sentence), the knowledge filter (`entailment` for a source holding a hop's answer, else
//! `neutral`), perspectives (one), and the answer (the gold answer citing the first source that
//! holds it, confidence high; else "I don't know." with confidence low).
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

    /// The last hop's gold answer to `question` (MuSiQue's answer), if the oracle knows it.
    pub fn final_answer(&self, question: &str) -> Option<&str> {
        self.hops.get(question.trim()).and_then(|h| h.last()).map(|h| h.1.as_str())
    }

    /// `question`'s hops as sub-questions, earlier answers substituted (none when unknown).
    pub fn sub_questions(&self, question: &str) -> Vec<String> {
        let hops = self.hops.get(question.trim()).map(Vec::as_slice).unwrap_or_default();
        (0..hops.len()).map(|i| Self::sub_question(hops, i)).collect()
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

    /// A reply to a step of the ask pipeline other than propose and select (`None`: not one).
    fn pipeline_reply(&self, task: &str, prompt: &str) -> Option<String> {
        let line = |key: &str| prompt.lines().find_map(|l| l.strip_prefix(key)).map(str::trim).unwrap_or_default();
        let question = line("Question: ");
        let hops = self.hops.get(question).map(Vec::as_slice).unwrap_or_default();
        let subs: Vec<String> = (0..hops.len()).map(|i| Self::sub_question(hops, i)).collect();
        let text = norm(prompt);
        let has = |answer: &str| !answer.trim().is_empty() && text.contains(&norm(answer));
        // The numbered sources of a prompt: `[0] ...` (filter) or `[S1] ...` (answer).
        let sources = |tag: &str| -> Vec<String> {
            let mut out = Vec::new();
            for l in prompt.lines() {
                if l.starts_with(tag) && l.split_once(']').is_some_and(|(n, _)| n[tag.len()..].chars().all(|c| c.is_ascii_digit())) {
                    out.push(norm(l));
                } else if let Some(last) = out.last_mut() {
                    if l.starts_with("Question: ") || l.starts_with("For each source") || l.starts_with("Perspectives:") {
                        break;
                    }
                    {
                        last.push(' ');
                        last.push_str(&norm(l));
                    }
                }
            }
            out
        };
        let v = match task {
            "rewrite" => json!({"question": question, "queries": subs.first().into_iter().collect::<Vec<_>>()}),
            "route" => json!({"route": "both"}),
            "key points" => json!({"keyPoints": if subs.is_empty() { vec![question.to_string()] } else { subs.clone() }}),
            "verify" => {
                let missing: Vec<&String> = hops.iter().zip(&subs).filter(|((_, a), _)| !has(a)).map(|(_, s)| s).collect();
                if missing.is_empty() { json!({"sufficient": true}) } else { json!({"sufficient": false, "queries": missing}) }
            }
            "keyword query" => json!({"query": line("Sub-query: ")}),
            "keyword feedback" => json!({"relevant": true}),
            "pseudo-document" => json!({"document": line("Sub-query: ")}),
            "summarize" => {
                let first = prompt.split_once("\n[1] ").map(|x| x.1).unwrap_or_default();
                let sentence: String = first.split_inclusive(". ").next().unwrap_or_default().chars().take(300).collect();
                json!({"summary": if sentence.trim().is_empty() { "nothing".to_string() } else { sentence }})
            }
            "filter" => {
                let labels: Vec<&str> = sources("[")
                    .iter()
                    .map(|s| if hops.iter().any(|(_, a)| !a.trim().is_empty() && s.contains(&norm(a))) { "entailment" } else { "neutral" })
                    .collect();
                json!({"labels": labels})
            }
            "perspectives" => {
                json!({"perspectives": [{"name": "oracle", "view": hops.iter().map(|h| h.1.as_str()).collect::<Vec<_>>().join("; ")}]})
            }
            t if t.starts_with("answer") => {
                let Some((_, gold)) = hops.last() else { return Some("I don't know.\nConfidence: low".into()) };
                let cited = sources("[S").iter().position(|s| s.contains(&norm(gold)));
                return Some(match cited {
                    Some(i) => format!("{gold} [S{}].\nConfidence: high", i + 1),
                    None => "I don't know.\nConfidence: low".into(),
                });
            }
            _ => return None,
        };
        Some(v.to_string())
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
        let task = prompt.lines().find_map(|l| l.strip_prefix("Task: ")).map(str::trim).unwrap_or_default();
        if let Some(r) = self.pipeline_reply(task, prompt) {
            return Ok(r);
        }
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
