//! The OpenAI-compatible client against the scripted server over real HTTP on 127.0.0.1: every
//! injected fault ends in a typed error (or the documented retry) within the configured timeout.
#![cfg(not(target_arch = "wasm32"))]
use crate::common;

use std::time::Instant;

use common::llm_server::LlmServer;
use serde_json::json;
use webrag::error::LlmError;
use webrag::llm::json::{Reply, structured};
use webrag::llm::openai::OpenAiClient;
use webrag::llm::{ChatMessage, ChatOptions, LanguageModel, LlmConfig};
use webrag::native::http::UreqTransport;

fn client(s: &LlmServer, tweak: impl FnOnce(&mut LlmConfig)) -> OpenAiClient<UreqTransport> {
    let mut cfg = LlmConfig {
        base_url: s.base_url(),
        model: "scripted".into(),
        api_key: "sk-test-key".into(),
        headers: [("x-extra".to_string(), "yes".to_string())].into(),
        timeout_ms: 3_000,
        retries: 2,
        backoff_ms: 50,
        ..Default::default()
    };
    tweak(&mut cfg);
    OpenAiClient::new(cfg, UreqTransport).expect("valid config")
}

fn ask(c: &OpenAiClient<UreqTransport>) -> Result<String, LlmError> {
    pollster::block_on(c.chat(&[ChatMessage::system("be brief"), ChatMessage::user("hello")], &ChatOptions::step("test")))
}

#[test]
fn plain_reply_sends_model_key_and_headers() {
    let s = LlmServer::start();
    s.script(json!([{ "content": "Hi there." }]));
    assert_eq!(ask(&client(&s, |_| {})).unwrap(), "Hi there.");
    let log = s.log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["auth"], "Bearer sk-test-key");
    assert_eq!(log[0]["headers"]["x-extra"], "yes");
    assert_eq!(log[0]["body"]["model"], "scripted");
    assert_eq!(log[0]["body"]["messages"][1], json!({"role": "user", "content": "hello"}));
    assert_eq!(log[0]["body"]["stream"], false);
}

#[test]
fn unauthorized_is_typed_and_not_retried() {
    let s = LlmServer::start();
    s.script(json!([{ "status": 401 }]));
    assert_eq!(ask(&client(&s, |_| {})), Err(LlmError::Unauthorized { status: 401 }));
    assert_eq!(s.log().len(), 1);
}

#[test]
fn rate_limit_honours_retry_after_then_succeeds() {
    let s = LlmServer::start();
    s.script(json!([{ "status": 429, "headers": { "retry-after": "1" } }, { "content": "ok" }]));
    assert_eq!(ask(&client(&s, |_| {})).unwrap(), "ok");
    let log = s.log();
    assert_eq!(log.len(), 2);
    let waited = log[1]["at"].as_i64().unwrap() - log[0]["at"].as_i64().unwrap();
    assert!(waited >= 950, "Retry-After: 1 was not honoured (retried after {waited} ms)");
}

#[test]
fn persistent_rate_limit_and_server_errors_give_up_after_the_retries() {
    let s = LlmServer::start();
    s.script(json!([{ "status": 429 }, { "status": 429 }, { "status": 429 }]));
    assert_eq!(ask(&client(&s, |_| {})), Err(LlmError::RateLimited { attempts: 3 }));
    s.script(json!([{ "status": 500 }, { "status": 503 }, { "status": 500 }]));
    match ask(&client(&s, |_| {})) {
        Err(LlmError::Http { status: 500, attempts: 3, body }) => assert!(body.contains("scripted 500"), "{body}"),
        other => panic!("expected LLM_HTTP, got {other:?}"),
    }
    s.script(json!([{ "status": 502 }, { "content": "recovered" }]));
    assert_eq!(ask(&client(&s, |_| {})).unwrap(), "recovered");
    assert_eq!(s.log().len(), 8);
}

#[test]
fn timeouts_end_within_the_configured_budget() {
    let s = LlmServer::start();
    s.script(json!([{ "hang": true }]));
    let c = client(&s, |c| c.timeout_ms = 400);
    let t = Instant::now();
    assert_eq!(ask(&c), Err(LlmError::Timeout { ms: 400 }));
    assert!(t.elapsed().as_millis() < 2_000, "a hung server held the call {} ms", t.elapsed().as_millis());
    // Very slow tokens: the stream outlives the deadline.
    s.script(json!([{ "stream": ["a ", "b ", "c ", "d ", "e "], "tokenDelayMs": 200 }]));
    let t = Instant::now();
    let r = pollster::block_on(c.chat_stream(&[ChatMessage::user("x")], &ChatOptions::step("answer"), &mut |_| {}));
    assert_eq!(r, Err(LlmError::Timeout { ms: 400 }));
    assert!(t.elapsed().as_millis() < 2_000);
}

#[test]
fn malformed_bodies_are_bad_responses() {
    let s = LlmServer::start();
    s.script(json!([{ "body": "{\"choices\": [" }, { "body": { "choices": [] } }]));
    let c = client(&s, |_| {});
    assert!(matches!(ask(&c), Err(LlmError::BadResponse { .. })));
    assert!(matches!(ask(&c), Err(LlmError::BadResponse { .. })));
}

#[test]
fn replies_without_text_content_read_their_reasoning_or_parts_else_nothing() {
    let s = LlmServer::start();
    s.script(json!([
        { "message": { "content": null, "reasoning_content": "Paris is the capital." } },
        { "message": { "content": "", "reasoning": "It is Paris." } },
        { "message": { "content": [{ "type": "text", "text": "Par" }, { "type": "text", "text": "is" }] } },
        { "message": { "content": null, "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "f", "arguments": "{}" } }] } },
        { "message": { "content": 42 } },
        { "body": { "choices": [{ "finish_reason": "content_filter" }] } }
    ]));
    let c = client(&s, |_| {});
    assert_eq!(ask(&c).unwrap(), "Paris is the capital.", "reasoning_content (llama.cpp, DeepSeek)");
    assert_eq!(ask(&c).unwrap(), "It is Paris.", "reasoning (vLLM, OpenRouter)");
    assert_eq!(ask(&c).unwrap(), "Paris", "content parts");
    assert_eq!(ask(&c).unwrap(), "", "a tool call: nothing to read");
    assert_eq!(ask(&c).unwrap(), "", "content that is not text");
    assert!(matches!(ask(&c), Err(LlmError::BadResponse { .. })), "no message at all: not a chat completion");
    // Streamed: reasoning deltas are the reply when no content came (and are not streamed).
    s.script(json!([
        { "deltas": [{ "reasoning_content": "Think " }, { "reasoning_content": "more." }] },
        { "deltas": [{ "reasoning_content": "hidden" }, { "content": "Shown." }] },
        { "deltas": [{ "content": null }] }
    ]));
    let mut pieces = Vec::new();
    let mut stream =
        || pollster::block_on(c.chat_stream(&[ChatMessage::user("q")], &ChatOptions::step("answer"), &mut |t| pieces.push(t.to_string())));
    assert_eq!(stream().unwrap(), "Think more.");
    assert_eq!(stream().unwrap(), "Shown.");
    assert_eq!(stream().unwrap(), "");
    assert_eq!(pieces, vec!["Shown."], "only content is streamed");
}

#[test]
fn streams_arrive_in_pieces_and_truncation_is_typed() {
    let s = LlmServer::start();
    s.script(json!([{ "stream": ["The ", "answer ", "is ", "42."], "tokenDelayMs": 20 }, { "stream": ["cut ", "off"], "truncate": true }, { "stream": ["dropped ", "mid"], "reset": true }]));
    let c = client(&s, |_| {});
    let mut pieces = Vec::new();
    let text =
        pollster::block_on(c.chat_stream(&[ChatMessage::user("q")], &ChatOptions::step("answer"), &mut |t| pieces.push(t.to_string())))
            .unwrap();
    assert_eq!(text, "The answer is 42.");
    assert_eq!(pieces, vec!["The ", "answer ", "is ", "42."]);
    assert_eq!(s.log()[0]["body"]["stream"], true);
    let r = pollster::block_on(c.chat_stream(&[ChatMessage::user("q")], &ChatOptions::step("answer"), &mut |_| {}));
    assert_eq!(r, Err(LlmError::Truncated { received: 7 }));
    let r = pollster::block_on(c.chat_stream(&[ChatMessage::user("q")], &ChatOptions::step("answer"), &mut |_| {}));
    assert_eq!(r, Err(LlmError::Truncated { received: 11 }));
    assert_eq!(s.log().len(), 3, "a stream that started is never retried");
}

#[test]
fn unreachable_endpoint_is_a_network_error() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let cfg =
        LlmConfig { base_url: format!("http://127.0.0.1:{port}/v1"), model: "m".into(), retries: 1, backoff_ms: 10, ..Default::default() };
    let c = OpenAiClient::new(cfg, UreqTransport).unwrap();
    assert!(matches!(ask(&c), Err(LlmError::Network { .. })));
}

#[test]
fn structured_output_takes_the_last_object_and_repairs_once() {
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Plan {
        questions: Vec<String>,
    }
    impl Reply for Plan {
        const SCHEMA: &'static str =
            r#"{"type":"object","properties":{"questions":{"type":"array","items":{"type":"string"}}},"required":["questions"]}"#;
    }
    let ok = |_: &Plan| Ok(());
    let s = LlmServer::start();
    let c = client(&s, |_| {});
    let msgs = [ChatMessage::user("plan")];
    let opts = ChatOptions::step("propose");
    // Prose around a fenced object: read on the first try.
    s.script(json!([{ "content": "Let me think.\n```json\n{\"questions\": [\"Who founded X?\"]}\n```\nDone." }]));
    let (p, raw) = pollster::block_on(structured::<Plan, _>(&c, &msgs, &opts, &ok)).unwrap();
    assert_eq!((p.questions.len(), raw.len()), (1, 1));
    // Malformed, then repaired: the repair request carries the reason.
    s.script(json!([{ "content": "{\"questions\": \"not a list\"}" }, { "content": "{\"questions\": [\"a\", \"b\"]}" }]));
    let (p, raw) = pollster::block_on(structured::<Plan, _>(&c, &msgs, &opts, &ok)).unwrap();
    assert_eq!((p.questions, raw.len()), (vec!["a".to_string(), "b".to_string()], 2));
    let log = s.log();
    let repair = log.last().unwrap()["body"]["messages"].as_array().unwrap().clone();
    assert_eq!(repair.len(), 3);
    assert!(repair[2]["content"].as_str().unwrap().contains("expected shape"));
    // Malformed twice: a typed error naming the step.
    s.script(json!([{ "content": "no json" }, { "content": "still {no json" }]));
    match pollster::block_on(structured::<Plan, _>(&c, &msgs, &opts, &ok)) {
        Err(LlmError::BadOutput { step, .. }) => assert_eq!(step, "propose"),
        other => panic!("expected LLM_BAD_OUTPUT, got {other:?}"),
    }
}

#[test]
fn structured_steps_send_their_schema_and_step_down_through_the_forms_servers_refuse() {
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Route {
        route: String,
    }
    impl Reply for Route {
        const SCHEMA: &'static str = r#"{"type":"object","properties":{"route":{"type":"string"}},"required":["route"]}"#;
    }
    let schema: serde_json::Value = serde_json::from_str(Route::SCHEMA).unwrap();
    let ok = |_: &Route| Ok(());
    let msgs = [ChatMessage::user("Reply with one JSON object: {\"route\": \"...\"}.")];
    let opts = ChatOptions::step("route");
    let s = LlmServer::start();
    // A server with structured outputs: structured steps send their schema, plain calls (the
    // answer) ask for nothing.
    let c = client(&s, |_| {});
    s.script(json!([{ "content": "{\"route\": \"both\"}" }, { "content": "Hi." }]));
    pollster::block_on(structured::<Route, _>(&c, &msgs, &opts, &ok)).unwrap();
    ask(&c).unwrap();
    let log = s.log();
    assert_eq!(log[0]["body"]["response_format"], json!({"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}));
    assert!(log[1]["body"].get("response_format").is_none());
    // Each refused form (400 naming response_format): asked once more in the next, which the
    // client keeps — json_schema, json_object with the schema (llama-cpp-python's), json_object,
    // none.
    let form = |e: &serde_json::Value| match e["body"].get("response_format") {
        None => "none".to_string(),
        Some(rf) if rf["type"] == "json_object" && rf.get("schema").is_some() => {
            assert_eq!(rf["schema"], schema);
            "json_object+schema".to_string()
        }
        Some(rf) => rf["type"].as_str().unwrap().to_string(),
    };
    // llama-cpp-python's server refuses `json_schema` with a 500 naming the field: not retried.
    for (refused, status, asked) in [
        (json!(["json_schema"]), 400, vec!["json_schema", "json_object+schema", "json_object+schema"]),
        (json!(["json_schema"]), 500, vec!["json_schema", "json_object+schema", "json_object+schema"]),
        (json!(["json_schema", "json_object+schema"]), 422, vec!["json_schema", "json_object+schema", "json_object", "json_object"]),
        (json!(true), 400, vec!["json_schema", "json_object+schema", "json_object", "none", "none"]),
    ] {
        s.reset();
        s.config(json!({ "rejectResponseFormat": refused, "rejectStatus": status }));
        let c = client(&s, |_| {});
        s.rules(json!([{ "match": "route", "reply": { "content": "{\"route\": \"graph\"}" } }]));
        for _ in 0..2 {
            let (r, _) = pollster::block_on(structured::<Route, _>(&c, &msgs, &opts, &ok)).unwrap();
            assert_eq!(r.route, "graph");
        }
        let forms: Vec<String> = s.log().iter().map(form).collect();
        assert_eq!(forms, asked, "refusing {refused} with {status}: each form tried once, the first one taken kept");
    }
    // jsonMode "schema" and "on": a refusal is the server's error; "off": never asked.
    s.reset();
    s.config(json!({ "rejectResponseFormat": true }));
    for mode in [webrag::llm::JsonMode::Schema, webrag::llm::JsonMode::On] {
        let c = client(&s, |c| c.json_mode = mode);
        let e = pollster::block_on(structured::<Route, _>(&c, &msgs, &opts, &ok)).unwrap_err();
        assert!(matches!(e, LlmError::Http { status: 400, .. }), "{mode:?}: {e:?}");
    }
    let forms: Vec<String> = s.log().iter().map(form).collect();
    assert_eq!(forms, ["json_schema", "json_object"]);
    s.reset();
    s.rules(json!([{ "match": "route", "reply": { "content": "{\"route\": \"graph\"}" } }]));
    let off = client(&s, |c| c.json_mode = webrag::llm::JsonMode::Off);
    pollster::block_on(structured::<Route, _>(&off, &msgs, &opts, &ok)).unwrap();
    assert!(s.log()[0]["body"].get("response_format").is_none());
}

#[test]
fn bad_configurations_are_typed() {
    for cfg in [
        LlmConfig { base_url: "ftp://x".into(), model: "m".into(), ..Default::default() },
        LlmConfig { base_url: "http://x".into(), model: " ".into(), ..Default::default() },
        LlmConfig { base_url: "http://x".into(), model: "m".into(), timeout_ms: 0, ..Default::default() },
        LlmConfig { base_url: "http://x".into(), model: "m".into(), concurrency: 0, ..Default::default() },
        LlmConfig { base_url: "http://x".into(), model: "m".into(), max_reply_bytes: 100, ..Default::default() },
        LlmConfig { base_url: "http://x".into(), model: "m".into(), max_reply_bytes: 1 << 40, ..Default::default() },
        LlmConfig { base_url: "http://x".into(), model: "m".into(), max_event_bytes: 32 << 20, ..Default::default() },
    ] {
        assert!(matches!(OpenAiClient::new(cfg, UreqTransport), Err(LlmError::NotConfigured { .. })));
    }
}

#[test]
fn oversized_replies_stop_at_their_caps_with_a_typed_error() {
    use webrag::error::ReplyPart;
    let s = LlmServer::start();
    // 200 MB each (a server that would otherwise fill memory), and a stream without end; the
    // timeout is far beyond what reading up to the caps takes.
    let c = client(&s, |c| {
        c.timeout_ms = 60_000;
        c.retries = 0;
    });
    let stream = |c: &OpenAiClient<UreqTransport>| {
        pollster::block_on(c.chat_stream(&[ChatMessage::user("q")], &ChatOptions::step("answer"), &mut |_| {}))
    };
    let big = 200_000_000;
    let cases = [
        (json!({ "flood": { "bytes": big, "as": "body" } }), false, Some(ReplyPart::Body), 16 << 20),
        (json!({ "flood": { "bytes": big, "as": "line" } }), true, Some(ReplyPart::Event), 1 << 20),
        (json!({ "flood": { "bytes": -1, "as": "events" } }), true, Some(ReplyPart::Stream), 16 << 20),
        // An error body: its start is the error, the rest is never downloaded.
        (json!({ "status": 500, "flood": { "bytes": big, "as": "body" } }), false, None, 0),
    ];
    for (reply, streamed, part, limit) in cases {
        s.script(json!([reply]));
        let t = Instant::now();
        let r = if streamed { stream(&c) } else { ask(&c) };
        match (part, r) {
            (Some(part), Err(e)) => assert_eq!(e, LlmError::ReplyTooLarge { part, limit }, "{reply}"),
            (None, Err(LlmError::Http { status: 500, body, .. })) => assert!(body.starts_with("{\"error\"") && body.len() <= 300),
            (_, other) => panic!("{reply}: expected a capped reply, got {:?}", other.map(|t| t.len())),
        }
        assert!(t.elapsed().as_secs() < 30, "{reply}: read for {:?} (past the caps?)", t.elapsed());
    }
    // The caps are options: 64 KiB of body is too much for a 32 KiB cap, and a 2 KiB event for
    // a 1 KiB one; the same replies pass under the defaults.
    let small = client(&s, |c| {
        c.max_reply_bytes = 32 << 10;
        c.max_event_bytes = 1 << 10;
    });
    let long = "word ".repeat(13_000);
    s.script(json!([{ "content": long }, { "stream": ["x".repeat(2048)] }, { "content": long }, { "stream": ["x".repeat(2048)] }]));
    assert_eq!(ask(&small), Err(LlmError::ReplyTooLarge { part: ReplyPart::Body, limit: 32 << 10 }));
    assert_eq!(stream(&small), Err(LlmError::ReplyTooLarge { part: ReplyPart::Event, limit: 1 << 10 }));
    assert_eq!(ask(&c).unwrap().len(), long.len());
    assert_eq!(stream(&c).unwrap().len(), 2048);
    assert!(LlmError::ReplyTooLarge { part: ReplyPart::Stream, limit: 1 }.to_string().contains("stream"));
    assert_eq!(webrag::error::Error::from(LlmError::ReplyTooLarge { part: ReplyPart::Body, limit: 1 }).code(), "LLM_REPLY_TOO_LARGE");
}
