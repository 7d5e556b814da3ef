//! Language-model access (docs/ask-pipeline.md, "LLM access"): the [`LanguageModel`] port the ask
//! pipeline talks to, an OpenAI-compatible `/chat/completions` client over a small HTTP port
//! ([`openai`]), and tolerant reading of structured (JSON) output ([`json`]).
//!
//! Platform adapters implement [`HttpTransport`]: natively over `ureq` (`native::http`), in the
//! page over `fetch`. Everything that decides — request bodies, retries with backoff on 429 / 5xx
//! honouring `Retry-After`, the concurrency limit, SSE parsing, error mapping — lives here, once.
pub mod json;
pub mod openai;

use crate::options::{Doc, Range, Value};
use serde::{Deserialize, Serialize};

use crate::error::LlmError;

/// Who says a chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions.
    System,
    /// The asker (and retrieved data, delimited).
    User,
    /// The model.
    Assistant,
}

/// One chat message, as OpenAI's `messages[]` holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who says it.
    pub role: Role,
    /// The text.
    pub content: String,
}

impl ChatMessage {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        ChatMessage { role: Role::System, content: content.into() }
    }
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage { role: Role::User, content: content.into() }
    }
    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        ChatMessage { role: Role::Assistant, content: content.into() }
    }
}

/// Per-call options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatOptions {
    /// Sampling temperature (`None`: the endpoint configuration's).
    pub temperature: Option<f32>,
    /// Completion length cap in tokens (`None`: the endpoint configuration's).
    pub max_tokens: Option<u32>,
    /// The pipeline step asking (traces, error messages).
    pub step: String,
    /// The reply must be one JSON object: clients that can ask the server for JSON output do
    /// (OpenAI's `response_format`, [`JsonMode`]).
    pub json: bool,
    /// The JSON Schema the object follows ([`json::Reply::SCHEMA`]), for servers that constrain
    /// decoding to a schema.
    pub schema: Option<&'static str>,
}

impl ChatOptions {
    /// Options for `step` with the configured defaults.
    pub fn step(step: &str) -> Self {
        ChatOptions { step: step.to_string(), ..Default::default() }
    }

    /// These options for a reply that must be one JSON object following `schema`.
    pub fn json(self, schema: &'static str) -> Self {
        ChatOptions { json: true, schema: Some(schema), ..self }
    }
}

/// Whether structured steps ask the server for JSON output, and in which form of OpenAI's
/// `response_format`. llama.cpp's server, llama-cpp-python, vLLM and Ollama constrain decoding to
/// it: a schema fixes the reply's keys and types, not only its syntax, which small models need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum JsonMode {
    /// Each form in turn, from the most constraining: `{"type": "json_schema", "json_schema":
    /// {"name": "reply", "schema": …}}` (OpenAI's structured outputs; llama.cpp's server, vLLM,
    /// Ollama), then `{"type": "json_object", "schema": …}` (llama-cpp-python's server), then
    /// `{"type": "json_object"}`, then none. A server that answers a request with 400, 422 or
    /// 500 (llama-cpp-python) naming `response_format` is asked again in the next form, not
    /// retried in the same, and the client keeps the form it took.
    #[default]
    Auto,
    /// Always `{"type": "json_schema", …}` (a refusal is the server's error).
    Schema,
    /// Always `{"type": "json_object"}`, without a schema (a refusal is the server's error).
    On,
    /// Never ask: the prompt alone says "reply with one JSON object".
    Off,
}

/// A chat model: the port the ask pipeline uses. Implemented by [`openai::OpenAiClient`] (any
/// OpenAI-compatible endpoint), by the page's JS callback (an in-page model such as WebLLM), and
/// by the scripted models of the tests and of `eval`.
pub trait LanguageModel {
    /// The whole reply to `messages`.
    async fn chat(&self, messages: &[ChatMessage], opts: &ChatOptions) -> Result<String, LlmError>;

    /// The reply, with each piece of text passed to `on_token` as it arrives (server-sent events
    /// where the endpoint streams). The default calls [`LanguageModel::chat`] and reports the
    /// whole reply as one piece.
    async fn chat_stream(&self, messages: &[ChatMessage], opts: &ChatOptions, on_token: &mut dyn FnMut(&str)) -> Result<String, LlmError> {
        let text = self.chat(messages, opts).await?;
        on_token(&text);
        Ok(text)
    }
}

impl<M: LanguageModel + ?Sized> LanguageModel for &M {
    async fn chat(&self, messages: &[ChatMessage], opts: &ChatOptions) -> Result<String, LlmError> {
        (**self).chat(messages, opts).await
    }
    async fn chat_stream(&self, messages: &[ChatMessage], opts: &ChatOptions, on_token: &mut dyn FnMut(&str)) -> Result<String, LlmError> {
        (**self).chat_stream(messages, opts, on_token).await
    }
}

/// An OpenAI-compatible endpoint. The API key is held in memory only; it is never logged and
/// never appears in `Debug` output or traces.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct LlmConfig {
    /// Base URL up to the API version, e.g. `https://api.openai.com/v1` or
    /// `http://127.0.0.1:8000/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// Model name sent as `model`.
    pub model: String,
    /// Bearer token (`Authorization: Bearer …`); empty: no header.
    #[serde(skip_serializing)]
    pub api_key: String,
    /// Extra request headers (e.g. an organisation or a proxy's key), name → value.
    pub headers: std::collections::BTreeMap<String, String>,
    /// Default sampling temperature. Default 0; range 0..=2.
    pub temperature: f32,
    /// Default completion cap in tokens. Default 1024; range 1..=131072.
    pub max_tokens: u32,
    /// Per-attempt timeout in milliseconds (the whole reply, streamed or not). Default 60,000;
    /// range 1..=600,000.
    pub timeout_ms: u64,
    /// Retries after a 429, a 5xx or a network error (not after 4xx or a timeout). Default 3;
    /// range 0..=10.
    pub retries: u32,
    /// First backoff in milliseconds, doubled per retry (a `Retry-After` header wins, capped at
    /// `max_backoff_ms`). Default 500.
    pub backoff_ms: u64,
    /// Longest single wait between attempts. Default 20,000.
    pub max_backoff_ms: u64,
    /// Requests in flight at once from this client. Default 4; range 1..=64.
    pub concurrency: usize,
    /// JSON output for the structured steps: `"auto"` (default), `"on"` or `"off"`.
    pub json_mode: JsonMode,
    /// Bytes one reply may hold: a whole (non-streamed) body, or everything one stream sends
    /// (an endless stream stops here). More is [`LlmError::ReplyTooLarge`], read no further.
    /// Default 16 MiB (16,777,216); range 4,096..=1,073,741,824.
    pub max_reply_bytes: u64,
    /// Bytes one server-sent event line may hold. Default 1 MiB (1,048,576); range
    /// 1,024..=`max_reply_bytes`.
    pub max_event_bytes: u64,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            base_url: String::new(),
            model: String::new(),
            api_key: String::new(),
            headers: Default::default(),
            temperature: Self::TEMPERATURE.real(),
            max_tokens: Self::MAX_TOKENS.count() as u32,
            timeout_ms: Self::TIMEOUT_MS.count() as u64,
            retries: Self::RETRIES.count() as u32,
            backoff_ms: Self::BACKOFF_MS,
            max_backoff_ms: Self::MAX_BACKOFF_MS,
            concurrency: Self::CONCURRENCY.count(),
            json_mode: JsonMode::Auto,
            max_reply_bytes: Self::MAX_REPLY_BYTES.count() as u64,
            max_event_bytes: Self::MAX_EVENT_BYTES,
        }
    }
}

impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &if self.api_key.is_empty() { "" } else { "<redacted>" })
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("timeout_ms", &self.timeout_ms)
            .field("retries", &self.retries)
            .finish_non_exhaustive()
    }
}

impl LlmConfig {
    /// `temperature`.
    pub const TEMPERATURE: Range = Range::new("temperature", 0.0, 0.0, 2.0);
    /// `maxTokens`.
    pub const MAX_TOKENS: Range = Range::new("maxTokens", 1024.0, 1.0, 131_072.0);
    /// `timeoutMs`.
    pub const TIMEOUT_MS: Range = Range::new("timeoutMs", 60_000.0, 1.0, 600_000.0);
    /// `retries`.
    pub const RETRIES: Range = Range::new("retries", 3.0, 0.0, 10.0);
    /// `concurrency`.
    pub const CONCURRENCY: Range = Range::new("concurrency", 4.0, 1.0, 64.0);
    /// `maxReplyBytes`: 16 MiB; 4 KiB..=1 GiB.
    pub const MAX_REPLY_BYTES: Range = Range::new("maxReplyBytes", (16u64 << 20) as f64, 4096.0, (1u64 << 30) as f64);
    /// `backoffMs`'s default.
    pub const BACKOFF_MS: u64 = 500;
    /// `maxBackoffMs`'s default.
    pub const MAX_BACKOFF_MS: u64 = 20_000;
    /// `maxEventBytes`'s default (1 MiB).
    pub const MAX_EVENT_BYTES: u64 = 1 << 20;
    /// The fields as docs/api.md ("The LLM endpoint") and `index.d.ts` (`LlmConfig`) state them.
    pub const DOCS: &[Doc] = &[
        Doc::new(
            "baseUrl",
            Value::Other { ts: "string", default: "required", accepts: "`http://` or `https://`" },
            "up to the API version, e.g. `https://api.openai.com/v1`, `http://127.0.0.1:8000/v1`; `/chat/completions` is appended",
        ),
        Doc::new("model", Value::Other { ts: "string", default: "required", accepts: "non-empty" }, "sent as `model`"),
        Doc::new(
            "apiKey",
            Value::Other { ts: "string", default: "none", accepts: "" },
            "sent as `Authorization: Bearer …`; kept in the worker's memory only, never serialised or logged",
        ),
        Doc::new(
            "headers",
            Value::Other { ts: "Record<string, string>", default: "`{}`", accepts: "" },
            "extra request headers, name → value",
        ),
        Doc::new("temperature", Value::Number(Self::TEMPERATURE), "sampling temperature"),
        Doc::new("maxTokens", Value::Number(Self::MAX_TOKENS), "completion cap"),
        Doc::new("timeoutMs", Value::Number(Self::TIMEOUT_MS), "per attempt, the whole reply (streamed or not) included"),
        Doc::new("retries", Value::Number(Self::RETRIES), "retries after 429, 5xx or a network error (not after other 4xx or a timeout)"),
        Doc::new(
            "backoffMs",
            Value::Other { ts: "number", default: "500", accepts: "" },
            "first wait in ms, doubled per retry; a `Retry-After` header wins",
        ),
        Doc::new("maxBackoffMs", Value::Other { ts: "number", default: "20,000", accepts: "" }, "longest single wait, ms"),
        Doc::new("concurrency", Value::Number(Self::CONCURRENCY), "requests in flight at once"),
        Doc::new(
            "maxReplyBytes",
            Value::Number(Self::MAX_REPLY_BYTES),
            "bytes one reply may hold (16 MiB by default): a whole body, or everything one stream sends (an endless stream stops here); past it `LLM_REPLY_TOO_LARGE`, read no further, not retried",
        ),
        Doc::new(
            "maxEventBytes",
            Value::Other { ts: "number", default: "1,048,576", accepts: "1,024..=`maxReplyBytes`" },
            "bytes one server-sent event line may hold (1 MiB by default); past it `LLM_REPLY_TOO_LARGE`",
        ),
        Doc::new(
            "jsonMode",
            Value::Other { ts: "'auto' | 'schema' | 'on' | 'off'", default: "`'auto'`", accepts: "`'auto'`, `'schema'`, `'on'`, `'off'`" },
            "how structured steps ask for JSON output (`response_format`; llama.cpp's server, llama-cpp-python, vLLM and Ollama constrain decoding to it): `schema` sends the step's JSON Schema as `{\"type\": \"json_schema\"}`, `on` asks for `{\"type\": \"json_object\"}`, `off` never asks; `auto` tries `json_schema`, then `json_object` with the schema, then `json_object`, then none, keeping the first form the server does not refuse with a 400, 422 or 500 naming `response_format`",
        ),
    ];

    /// Checks the configuration: a base URL with a scheme, a model name, ranges.
    ///
    /// Errors: [`LlmError::NotConfigured`] naming the field (`"temperature 3 is outside 0..=2"`).
    pub fn validate(&self) -> Result<(), LlmError> {
        let bad = |reason: String| Err(LlmError::NotConfigured { reason });
        if !(self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
            return bad(format!("baseUrl {:?} must start with http:// or https://", self.base_url));
        }
        if self.model.trim().is_empty() {
            return bad("model is empty".into());
        }
        let ranges = [
            (Self::TEMPERATURE, self.temperature as f64),
            (Self::MAX_TOKENS, self.max_tokens as f64),
            (Self::TIMEOUT_MS, self.timeout_ms as f64),
            (Self::RETRIES, self.retries as f64),
            (Self::CONCURRENCY, self.concurrency as f64),
            (Self::MAX_REPLY_BYTES, self.max_reply_bytes as f64),
        ];
        if let Err(crate::error::InputError::InvalidOption { name, reason }) = crate::options::check_all("", &ranges) {
            return bad(format!("{name} {reason}"));
        }
        if !(1024..=self.max_reply_bytes).contains(&self.max_event_bytes) {
            return bad(format!("maxEventBytes {} is outside 1024..=maxReplyBytes ({})", self.max_event_bytes, self.max_reply_bytes));
        }
        Ok(())
    }

    /// `{base_url}/chat/completions` (one slash between them).
    pub fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }
}

/// An HTTP POST as the client sends it.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpRequest {
    /// Absolute URL.
    pub url: String,
    /// Headers (the API key among them: never log this struct's headers).
    pub headers: Vec<(String, String)>,
    /// JSON body.
    pub body: String,
    /// The whole exchange must finish within this.
    pub timeout_ms: u64,
}

/// Transport failures (before or while reading a response).
#[derive(Debug, Clone, PartialEq)]
pub enum TransportError {
    /// The deadline passed.
    Timeout,
    /// Connection refused, reset, DNS, CORS...
    Network(String),
}

/// The body of a response, read piece by piece (a stream's events arrive as they are sent).
pub trait HttpBody {
    /// The next piece of the body, `None` at its end.
    async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, TransportError>;
}

/// The platform's HTTP client and timer.
pub trait HttpTransport {
    /// The body type of a response.
    type Body: HttpBody;
    /// Sends `req`; returns the status, the headers (names lowercase) and the body to read.
    async fn post(&self, req: &HttpRequest) -> Result<(u16, Vec<(String, String)>, Self::Body), TransportError>;
    /// Waits `ms` milliseconds (between retries).
    async fn sleep(&self, ms: u64);
}

/// A cancellation token shared by one piece of work (an `ask`, an atomizing pass): once
/// [`Cancel::cancel`] runs, the hooks registered by in-flight requests run (the page aborts its
/// `fetch`es) and every later model call through [`WithCancel`] fails with
/// [`LlmError::Cancelled`]. Single-threaded, like the rest of the engine.
#[derive(Clone, Default)]
pub struct Cancel(std::rc::Rc<CancelInner>);

#[derive(Default)]
struct CancelInner {
    flag: std::cell::Cell<bool>,
    hooks: std::cell::RefCell<Vec<Box<dyn FnOnce()>>>,
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cancel({})", self.is_cancelled())
    }
}

impl Cancel {
    /// A fresh token.
    pub fn new() -> Self {
        Self::default()
    }
    /// Cancels: sets the flag and runs the registered hooks (once).
    pub fn cancel(&self) {
        self.0.flag.set(true);
        let hooks: Vec<Box<dyn FnOnce()>> = self.0.hooks.borrow_mut().drain(..).collect();
        for h in hooks {
            h();
        }
    }
    /// Whether [`Cancel::cancel`] ran.
    pub fn is_cancelled(&self) -> bool {
        self.0.flag.get()
    }
    /// `Err(Cancelled)` once cancelled.
    pub fn check(&self) -> Result<(), LlmError> {
        if self.is_cancelled() { Err(LlmError::Cancelled) } else { Ok(()) }
    }
    /// Runs `f` on cancellation (at once if already cancelled).
    pub fn on_cancel(&self, f: impl FnOnce() + 'static) {
        if self.is_cancelled() {
            f();
        } else {
            self.0.hooks.borrow_mut().push(Box::new(f));
        }
    }
}

/// A model whose calls honour a [`Cancel`]: none starts after cancellation, and one that fails
/// after it (its request aborted) reports [`LlmError::Cancelled`].
pub struct WithCancel<M> {
    /// The model.
    pub inner: M,
    /// The token.
    pub cancel: Cancel,
}

impl<M: LanguageModel> LanguageModel for WithCancel<M> {
    async fn chat(&self, messages: &[ChatMessage], opts: &ChatOptions) -> Result<String, LlmError> {
        self.cancel.check()?;
        let r = self.inner.chat(messages, opts).await;
        if r.is_err() { self.cancel.check().and(r) } else { r }
    }
    async fn chat_stream(&self, messages: &[ChatMessage], opts: &ChatOptions, on_token: &mut dyn FnMut(&str)) -> Result<String, LlmError> {
        self.cancel.check()?;
        let r = self.inner.chat_stream(messages, opts, on_token).await;
        if r.is_err() { self.cancel.check().and(r) } else { r }
    }
}
