//! The JSON replies of the ask pipeline's model steps ([`super::pipeline`]): rewrite, route, key
//! points, verify, perspectives and the knowledge filter's labels, each with the JSON Schema the
//! step asks for (`Reply::SCHEMA`, checked against the type in the tests).
use serde::Deserialize;

use super::answer::Perspective;
use crate::llm::json::Reply;

#[derive(Deserialize)]
#[cfg_attr(all(test, not(target_arch = "wasm32")), derive(schemars::JsonSchema))]
pub(super) struct Rewrite {
    #[serde(default)]
    pub(super) question: Option<String>,
    #[serde(default)]
    pub(super) queries: Vec<String>,
}

impl Reply for Rewrite {
    const SCHEMA: &'static str = r#"{"type":"object","properties":{"question":{"type":"string"},"queries":{"type":"array","items":{"type":"string"}}},"required":["question","queries"]}"#;
}

#[derive(Deserialize)]
#[cfg_attr(all(test, not(target_arch = "wasm32")), derive(schemars::JsonSchema))]
pub(super) struct RouteReply {
    pub(super) route: String,
}

impl Reply for RouteReply {
    const SCHEMA: &'static str =
        r#"{"type":"object","properties":{"route":{"type":"string","enum":["graph","chunks","both","web"]}},"required":["route"]}"#;
}

#[derive(Deserialize)]
#[cfg_attr(all(test, not(target_arch = "wasm32")), derive(schemars::JsonSchema))]
pub(super) struct KeyPoints {
    #[serde(rename = "keyPoints", alias = "key_points")]
    pub(super) key_points: Vec<String>,
}

impl Reply for KeyPoints {
    const SCHEMA: &'static str =
        r#"{"type":"object","properties":{"keyPoints":{"type":"array","items":{"type":"string"}}},"required":["keyPoints"]}"#;
}

#[derive(Deserialize)]
#[cfg_attr(all(test, not(target_arch = "wasm32")), derive(schemars::JsonSchema))]
pub(super) struct Verify {
    pub(super) sufficient: bool,
    #[serde(default)]
    pub(super) queries: Vec<String>,
}

impl Reply for Verify {
    const SCHEMA: &'static str = r#"{"type":"object","properties":{"sufficient":{"type":"boolean"},"queries":{"type":"array","items":{"type":"string"}}},"required":["sufficient"]}"#;
}

#[derive(Deserialize)]
#[cfg_attr(all(test, not(target_arch = "wasm32")), derive(schemars::JsonSchema))]
pub(super) struct Views {
    pub(super) perspectives: Vec<Perspective>,
}

impl Reply for Views {
    const SCHEMA: &'static str = r#"{"type":"object","properties":{"perspectives":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"view":{"type":"string"}},"required":["name","view"]}}},"required":["perspectives"]}"#;
}

#[derive(Deserialize)]
#[cfg_attr(all(test, not(target_arch = "wasm32")), derive(schemars::JsonSchema))]
pub(super) struct Labels {
    pub(super) labels: Vec<String>,
}

impl Reply for Labels {
    const SCHEMA: &'static str = r#"{"type":"object","properties":{"labels":{"type":"array","items":{"type":"string","enum":["entailment","neutral","contradiction"]}}},"required":["labels"]}"#;
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn reply_schemas_match_their_types() {
        use crate::llm::json::assert_schema_matches;
        assert_schema_matches::<Rewrite>();
        assert_schema_matches::<RouteReply>();
        assert_schema_matches::<KeyPoints>();
        assert_schema_matches::<Verify>();
        assert_schema_matches::<Views>();
        assert_schema_matches::<Labels>();
    }
}
