//! The scripted OpenAI-compatible server (`tests/llm/server.mjs`) as a child process on
//! 127.0.0.1, stopped when dropped.
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

pub struct LlmServer {
    child: Child,
    pub port: u16,
}

impl LlmServer {
    /// Starts a server on a free port and waits until it listens.
    pub fn start() -> Self {
        let mut child = Command::new("node")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/llm/server.mjs"))
            .args(["--port", "0"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("node (installed by ./webrag.sh setup)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("server output");
        let port = line.trim().strip_prefix("LISTENING ").and_then(|p| p.parse().ok()).unwrap_or_else(|| panic!("server said {line:?}"));
        LlmServer { child, port }
    }

    /// The base URL clients are configured with.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Queues scripted replies.
    pub fn script(&self, replies: Value) {
        ureq::post(&format!("http://127.0.0.1:{}/__script", self.port)).send(replies.to_string()).expect("script");
    }

    /// Adds rules: `[{match, reply, times?}]`, answering by the last user message once the
    /// queue is empty.
    #[allow(dead_code)]
    pub fn rules(&self, rules: Value) {
        ureq::post(&format!("http://127.0.0.1:{}/__rules", self.port)).send(rules.to_string()).expect("rules");
    }

    /// Sets server switches (`{"rejectResponseFormat": true}`).
    #[allow(dead_code)]
    pub fn config(&self, switches: Value) {
        ureq::post(&format!("http://127.0.0.1:{}/__config", self.port)).send(switches.to_string()).expect("config");
    }

    /// Empties the queue, the rules, the log and the switches.
    #[allow(dead_code)]
    pub fn reset(&self) {
        ureq::post(&format!("http://127.0.0.1:{}/__reset", self.port)).send("").expect("reset");
    }

    /// A client of this server: model "scripted", 5 s timeout, no retries.
    #[allow(dead_code)]
    pub fn client(&self) -> webrag::llm::openai::OpenAiClient<webrag::native::http::UreqTransport> {
        let cfg = webrag::llm::LlmConfig {
            base_url: self.base_url(),
            model: "scripted".into(),
            timeout_ms: 5_000,
            retries: 0,
            ..Default::default()
        };
        webrag::llm::openai::OpenAiClient::new(cfg, webrag::native::http::UreqTransport).expect("a valid configuration")
    }

    /// The chat requests received so far.
    pub fn log(&self) -> Vec<Value> {
        let body = ureq::get(&format!("http://127.0.0.1:{}/__log", self.port))
            .call()
            .expect("log")
            .into_body()
            .read_to_string()
            .expect("log body");
        serde_json::from_str::<Value>(&body).expect("log JSON").as_array().cloned().unwrap_or_default()
    }
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A reply whose content is `content` as JSON text.
#[allow(dead_code)]
pub fn reply(content: Value) -> Value {
    json!({ "content": content.to_string() })
}

/// A readable reply for every step of the pipeline (the Acme documents' answers), by its task
/// marker. `verify_sufficient`: whether verify says the context suffices (false: one supplement
/// query, so the low-level searchers and summarize run).
#[allow(dead_code)]
pub fn readable(verify_sufficient: bool) -> Value {
    let verify =
        if verify_sufficient { json!({"sufficient": true}) } else { json!({"sufficient": false, "queries": ["Jane Roe birthplace"]}) };
    json!([
        { "match": "Task: rewrite", "reply": reply(json!({"question": "Who founded Acme Corporation?", "queries": ["Acme founder"]})) },
        { "match": "Task: route", "reply": reply(json!({"route": "both"})) },
        { "match": "Task: key points", "reply": reply(json!({"keyPoints": ["founder of Acme Corporation"]})) },
        { "match": "Task: propose", "times": 1, "reply": reply(json!({"decompose": true, "questions": ["Who founded Acme Corporation?"]})) },
        { "match": "Task: propose", "reply": reply(json!({"decompose": false})) },
        { "match": "Task: select", "reply": reply(json!({"choice": 0, "answer": "Jane Roe"})) },
        { "match": "Task: verify", "reply": reply(verify) },
        { "match": "Task: keyword query", "reply": reply(json!({"query": "Jane Roe born"})) },
        { "match": "Task: keyword feedback", "reply": reply(json!({"relevant": true})) },
        { "match": "Task: pseudo-document", "reply": reply(json!({"document": "Jane Roe was born in Lyon, France."})) },
        { "match": "Task: summarize", "reply": reply(json!({"summary": "Jane Roe was born in Lyon [1]."})) },
        { "match": "Task: filter", "reply": { "fillLabels": "entailment" } },
        { "match": "Task: perspectives", "reply": reply(json!({"perspectives": [{"name": "historian", "view": "Acme began with Jane Roe in 1931 [S1]."}]})) },
        { "match": "Task: answer", "reply": { "content": "Jane Roe founded Acme Corporation [S1].\nConfidence: high" } }
    ])
}
