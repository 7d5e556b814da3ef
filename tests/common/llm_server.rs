//! The scripted OpenAI-compatible server (`tests/llm/server.mjs`) as a child process on
//! 127.0.0.1, stopped when dropped.
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

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
