//! Structured output (docs/ask-pipeline.md): models wrap JSON in code fences or prose, or answer in
//! prose. The pipeline takes the **last** top-level JSON object in the reply, checks it against
//! the shape the step expects (a typed struct plus the step's own checks), and on failure asks
//! once more with the reason; then it gives a typed [`LlmError::BadOutput`] (or the step uses its
//! documented fallback).
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{ChatMessage, ChatOptions, LanguageModel};
use crate::error::LlmError;

/// The last top-level JSON object in `text`: every `{` is tried as the start of an object; one
/// that parses is kept and scanning goes on after its end (so an object nested in it is not
/// taken for a later one). Code fences, prose and other braces around it are ignored.
pub fn last_json_object(text: &str) -> Option<Value> {
    let mut best = None;
    let mut at = 0;
    while let Some(off) = text[at..].find('{') {
        let start = at + off;
        let mut it = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match it.next() {
            Some(Ok(v @ Value::Object(_))) => {
                best = Some(v);
                at = start + it.byte_offset();
            }
            _ => at = start + 1,
        }
    }
    best
}

/// `text`'s last JSON object read as `T`, then checked by `check`; the error says what was wrong.
pub fn parse_output<T: DeserializeOwned>(text: &str, check: &dyn Fn(&T) -> Result<(), String>) -> Result<T, String> {
    let v = last_json_object(text).ok_or_else(|| "no JSON object in the reply".to_string())?;
    let t: T = serde_json::from_value(v).map_err(|e| format!("the JSON object does not have the expected shape: {e}"))?;
    check(&t)?;
    Ok(t)
}

/// Asks `model` and reads its reply as `T` ([`parse_output`]). A reply that does not parse gets
/// one repair attempt: the reply and the reason go back to the model with a request for the JSON
/// object alone. Returns the value and the raw replies (for traces).
///
/// Errors: the model's own [`LlmError`]s; [`LlmError::BadOutput`] when the repaired reply does
/// not parse either.
pub async fn structured<T: DeserializeOwned, M: LanguageModel + ?Sized>(
    model: &M,
    messages: &[ChatMessage],
    opts: &ChatOptions,
    check: &dyn Fn(&T) -> Result<(), String>,
) -> Result<(T, Vec<String>), LlmError> {
    let json_opts = opts.clone().json();
    let opts = &json_opts;
    let first = model.chat(messages, opts).await?;
    let reason = match parse_output(&first, check) {
        Ok(t) => return Ok((t, vec![first])),
        Err(reason) => reason,
    };
    let mut again = messages.to_vec();
    again.push(ChatMessage::assistant(first.clone()));
    again.push(ChatMessage::user(format!(
        "Your reply could not be used: {reason}. Reply again with only the JSON object, in exactly the shape asked for, and nothing else."
    )));
    let second = model.chat(&again, opts).await?;
    match parse_output(&second, check) {
        Ok(t) => Ok((t, vec![first, second])),
        Err(reason) => Err(LlmError::BadOutput { step: opts.step.clone(), reason }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn last_object_through_fences_and_prose() {
        assert_eq!(last_json_object(r#"{"a": 1}"#), Some(json!({"a": 1})));
        let t = "Sure! Here is a draft {\"a\": 1} and the final one:\n```json\n{\"a\": {\"b\": [1, 2]}, \"c\": \"}\"}\n```\nHope this helps {not json}.";
        assert_eq!(last_json_object(t), Some(json!({"a": {"b": [1, 2]}, "c": "}"})));
        assert_eq!(last_json_object("no object here [1, 2] {broken"), None);
        assert_eq!(last_json_object("{\"a\": 1} {\"a\": "), Some(json!({"a": 1})), "a truncated last object is skipped");
    }

    #[test]
    fn parse_output_checks_shape_and_rules() {
        #[derive(serde::Deserialize, Debug)]
        struct Pick {
            choice: Option<usize>,
        }
        let in_range = |p: &Pick| match p.choice {
            Some(c) if c >= 3 => Err(format!("choice {c} is not one of 0..3")),
            _ => Ok(()),
        };
        assert_eq!(parse_output::<Pick>("```json\n{\"choice\": 2}\n```", &in_range).unwrap().choice, Some(2));
        assert!(parse_output::<Pick>("{\"choice\": 7}", &in_range).unwrap_err().contains("not one of"));
        assert!(parse_output::<Pick>("{\"choice\": \"two\"}", &in_range).unwrap_err().contains("expected shape"));
        assert!(parse_output::<Pick>("I pick the second", &in_range).unwrap_err().contains("no JSON"));
    }
}
