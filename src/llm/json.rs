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

/// A structured step's reply: a JSON object read into `Self`, whose JSON Schema is sent with the
/// request so that servers constrain decoding to it ([`super::JsonMode`]).
pub trait Reply: DeserializeOwned {
    /// The object's JSON Schema, compact: `type`, `properties`, `required`, `items`, `enum` (the
    /// subset llama.cpp's grammar converter, vLLM and OpenAI's structured outputs all take).
    /// Each is checked against its type by a unit test (`cargo test --lib reply_schemas`).
    const SCHEMA: &'static str;
}

/// Any JSON object (a mind map: topic → routes → facts, keys chosen by the model).
impl Reply for Value {
    const SCHEMA: &'static str = r#"{"type":"object"}"#;
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
pub async fn structured<T: Reply, M: LanguageModel + ?Sized>(
    model: &M,
    messages: &[ChatMessage],
    opts: &ChatOptions,
    check: &dyn Fn(&T) -> Result<(), String>,
) -> Result<(T, Vec<String>), LlmError> {
    let json_opts = opts.clone().json(T::SCHEMA);
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

/// Checks `T::SCHEMA` against the type serde reads it into (schemars' schema of `T`): the same
/// properties at every level, each of the same JSON type, and every property `T` needs required.
/// Panics with the path of what differs.
#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) fn assert_schema_matches<T: Reply + schemars::JsonSchema>() {
    fn types(v: &Value) -> Vec<String> {
        let mut t: Vec<String> = match &v["type"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(a) => a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
            _ => Vec::new(),
        };
        t.retain(|x| x != "null");
        t.sort();
        t
    }
    fn compare(ours: &Value, theirs: &Value, root: &Value, at: &str) {
        let theirs = match theirs["$ref"].as_str().and_then(|r| r.strip_prefix("#/$defs/")) {
            Some(name) => &root["$defs"][name],
            None => theirs,
        };
        assert_eq!(types(ours), types(theirs), "{at}: JSON type");
        if let Some(props) = theirs["properties"].as_object() {
            let ours_props = ours["properties"].as_object().unwrap_or_else(|| panic!("{at}: no properties"));
            let mut a: Vec<&String> = ours_props.keys().collect();
            let mut b: Vec<&String> = props.keys().collect();
            a.sort();
            b.sort();
            assert_eq!(a, b, "{at}: properties");
            for (k, v) in props {
                compare(&ours_props[k], v, root, &format!("{at}.{k}"));
            }
            let required: Vec<&Value> = ours["required"].as_array().map(|r| r.iter().collect()).unwrap_or_default();
            for r in theirs["required"].as_array().into_iter().flatten() {
                assert!(required.contains(&r), "{at}: {r} is required by the type, not by the schema");
            }
        }
        if theirs.get("items").is_some() {
            compare(&ours["items"], &theirs["items"], root, &format!("{at}[]"));
        }
    }
    let ours: Value = serde_json::from_str(T::SCHEMA).expect("a reply's SCHEMA is JSON");
    let theirs = serde_json::to_value(schemars::schema_for!(T)).expect("schemars' schema as JSON");
    compare(&ours, &theirs, &theirs, &T::schema_name());
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
