//! OpenAI-compatible `/chat/completions` client (the request and response shapes of OpenAI's
//! Chat Completions API, which llama.cpp's server, vLLM, Ollama and most gateways speak).
//!
//! - Request: `{model, messages, temperature, max_tokens, stream}` as JSON, `Authorization:
//!   Bearer <key>` when a key is set, plus the configured extra headers.
//! - Reply: `choices[0].message.content`; streamed (`stream: true`): server-sent events, one
//!   `data: {json}` line per event with `choices[0].delta.content`, ending with `data: [DONE]`. A
//!   stream that ends before `[DONE]` or a `finish_reason` is [`LlmError::Truncated`]. A
//!   `content` that is null, empty or not text (a reasoning model that spent its tokens thinking,
//!   a tool call, a filtered reply) gives way to `reasoning_content` (llama.cpp, DeepSeek) or
//!   `reasoning` (vLLM, OpenRouter) where the server sends one, else to an empty reply
//!   ([`reply_text`]); `content` as an array of parts (`[{type: "text", text}]`) is their text.
//! - Retries: a 429, a 5xx or a network error is retried up to `retries` times, waiting
//!   `Retry-After` (seconds) when the server sends it, else `backoff_ms · 2^(attempt−1)`, capped at
//!   `max_backoff_ms`. 401 / 403 is [`LlmError::Unauthorized`] at once; other statuses are
//!   [`LlmError::Http`]; a timeout is not retried (the timeout is the caller's budget per attempt).
//! - Caps: a body or a whole stream holds at most `max_reply_bytes`, one event line at most
//!   `max_event_bytes` ([`LlmError::ReplyTooLarge`], not retried; reading stops there); of an
//!   error response only the first [`ERROR_BODY_BYTES`] are read.
//! - At most `concurrency` requests are in flight from one client; the others wait their turn.
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::poll_fn;
use std::task::{Poll, Waker};

use serde_json::{Value, json};

use super::{ChatMessage, ChatOptions, HttpBody, HttpRequest, HttpTransport, JsonMode, LanguageModel, LlmConfig, TransportError};
use crate::error::{LlmError, ReplyPart};

/// A counting semaphore for one thread (the page's worker; native callers block anyway).
struct Gate {
    free: Cell<usize>,
    waiters: RefCell<VecDeque<Waker>>,
}

struct Permit<'a>(&'a Gate);

impl Gate {
    fn new(n: usize) -> Self {
        Gate { free: Cell::new(n), waiters: RefCell::new(VecDeque::new()) }
    }
    async fn acquire(&self) -> Permit<'_> {
        poll_fn(|cx| {
            if self.free.get() > 0 {
                self.free.set(self.free.get() - 1);
                Poll::Ready(())
            } else {
                self.waiters.borrow_mut().push_back(cx.waker().clone());
                Poll::Pending
            }
        })
        .await;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.0.free.set(self.0.free.get() + 1);
        if let Some(w) = self.0.waiters.borrow_mut().pop_front() {
            w.wake();
        }
    }
}

/// A client for one endpoint over transport `T`.
pub struct OpenAiClient<T: HttpTransport> {
    cfg: LlmConfig,
    transport: T,
    gate: Gate,
    /// The form of `response_format` the server took last ([`JsonMode::Auto`] steps down a form
    /// at each refusal).
    form: Cell<JsonForm>,
}

/// A form of OpenAI's `response_format`, from the most constraining (the order the variants are
/// declared in, which `Ord` follows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum JsonForm {
    /// `{"type": "json_schema", "json_schema": {"name": "reply", "schema": …}}`.
    Schema,
    /// `{"type": "json_object", "schema": …}` (llama-cpp-python's server).
    ObjectWithSchema,
    /// `{"type": "json_object"}`.
    Object,
    /// No `response_format`.
    None,
}

impl JsonForm {
    /// The form to try after a refusal of this one.
    fn next(self) -> Option<JsonForm> {
        match self {
            JsonForm::Schema => Some(JsonForm::ObjectWithSchema),
            JsonForm::ObjectWithSchema => Some(JsonForm::Object),
            JsonForm::Object => Some(JsonForm::None),
            JsonForm::None => None,
        }
    }
}

/// `Retry-After` as milliseconds: delta-seconds (`"2"`, `"0.5"`); an HTTP date is not read
/// (the exponential backoff applies instead).
pub fn retry_after_ms(headers: &[(String, String)]) -> Option<u64> {
    let v = headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("retry-after"))?.1.trim();
    let secs: f64 = v.parse().ok().filter(|s: &f64| s.is_finite() && *s >= 0.0)?;
    Some((secs * 1000.0).round() as u64)
}

/// The wait before attempt `attempt + 1` (`attempt` ≥ 1 failed ones so far).
pub fn backoff_ms(cfg: &LlmConfig, attempt: u32, headers: &[(String, String)]) -> u64 {
    let exp = cfg.backoff_ms.saturating_mul(1u64 << (attempt - 1).min(20));
    retry_after_ms(headers).unwrap_or(exp).min(cfg.max_backoff_ms)
}

/// Reads server-sent events: complete lines are parsed as they arrive. One line may hold at most
/// `max_event` bytes and the whole stream `max_total` ([`LlmError::ReplyTooLarge`] past either:
/// the reader never holds more than the caps plus the piece being fed).
pub struct SseReader {
    pending: Vec<u8>,
    /// Bytes of `pending` already searched for a line end (a long line fed in small pieces is
    /// searched once, not once per piece).
    scanned: usize,
    /// Bytes fed so far.
    received: usize,
    max_event: usize,
    max_total: usize,
    /// The text so far.
    pub text: String,
    /// The reasoning so far (`delta.reasoning_content` / `delta.reasoning`): the reply when no
    /// content came ([`SseReader::into_text`]).
    pub reasoning: String,
    /// `[DONE]` or a `finish_reason` was seen.
    pub finished: bool,
}

impl Default for SseReader {
    /// The caps of [`LlmConfig::default`].
    fn default() -> Self {
        let cfg = LlmConfig::default();
        SseReader::new(cap(cfg.max_event_bytes), cap(cfg.max_reply_bytes))
    }
}

/// A configured byte cap as a length (caps are at most 1 GiB, so this never saturates where
/// it matters).
fn cap(bytes: u64) -> usize {
    usize::try_from(bytes).unwrap_or(usize::MAX)
}

impl SseReader {
    /// A reader holding at most `max_event` bytes of one line and `max_total` of the stream.
    pub fn new(max_event: usize, max_total: usize) -> Self {
        SseReader {
            pending: Vec::new(),
            scanned: 0,
            received: 0,
            max_event,
            max_total,
            text: String::new(),
            reasoning: String::new(),
            finished: false,
        }
    }

    /// The reply: the content, or the reasoning when the stream carried no content.
    pub fn into_text(self) -> String {
        if self.text.trim().is_empty() && !self.reasoning.is_empty() { self.reasoning } else { self.text }
    }

    /// Feeds bytes; each new piece of content goes to `on_token`.
    ///
    /// Errors: [`LlmError::ReplyTooLarge`] (a line or the stream past its cap),
    /// [`LlmError::BadResponse`] (an event that is not JSON, or an error event).
    pub fn feed(&mut self, bytes: &[u8], on_token: &mut dyn FnMut(&str)) -> Result<(), LlmError> {
        let too_large = |part, limit: usize| LlmError::ReplyTooLarge { part, limit: limit as u64 };
        if bytes.len() > self.max_total.saturating_sub(self.received) {
            return Err(too_large(ReplyPart::Stream, self.max_total));
        }
        self.received += bytes.len();
        self.pending.extend_from_slice(bytes);
        while let Some(nl) = self.pending[self.scanned..].iter().position(|b| *b == b'\n').map(|i| i + self.scanned) {
            if nl > self.max_event {
                return Err(too_large(ReplyPart::Event, self.max_event));
            }
            let line: Vec<u8> = self.pending.drain(..=nl).collect();
            self.scanned = 0;
            let line = String::from_utf8_lossy(&line);
            let Some(data) = line.trim_end_matches(['\r', '\n']).strip_prefix("data:") else { continue };
            let data = data.trim();
            if data == "[DONE]" {
                self.finished = true;
                continue;
            }
            let v: Value =
                serde_json::from_str(data).map_err(|e| LlmError::BadResponse { reason: format!("stream event is not JSON: {e}") })?;
            if let Some(err) = v.get("error") {
                return Err(LlmError::BadResponse { reason: format!("stream error event: {err}") });
            }
            let choice = &v["choices"][0];
            let delta = &choice["delta"];
            if let Some(piece) = delta["content"].as_str().filter(|p| !p.is_empty()) {
                self.text.push_str(piece);
                on_token(piece);
            } else if let Some(piece) = delta["reasoning_content"].as_str().or_else(|| delta["reasoning"].as_str()) {
                self.reasoning.push_str(piece);
            }
            if choice["finish_reason"].is_string() {
                self.finished = true;
            }
        }
        if self.pending.len() > self.max_event {
            return Err(too_large(ReplyPart::Event, self.max_event));
        }
        self.scanned = self.pending.len();
        Ok(())
    }
}

/// Bytes of an error response's body read at most: its first 300 characters go into
/// [`LlmError::Http`], the rest is not downloaded.
pub const ERROR_BODY_BYTES: usize = 64 * 1024;

/// Why [`read_capped`] stopped.
pub(crate) enum ReadError {
    /// The transport failed.
    Transport(TransportError),
    /// The body went past the cap; reading stopped at the piece that crossed it.
    TooLarge,
}

/// The whole body, if it holds at most `limit` bytes (never more than that is kept).
pub(crate) async fn read_capped<B: HttpBody>(body: &mut B, limit: usize) -> Result<Vec<u8>, ReadError> {
    let mut all = Vec::new();
    while let Some(piece) = body.next_chunk().await.map_err(ReadError::Transport)? {
        if piece.len() > limit - all.len() {
            return Err(ReadError::TooLarge);
        }
        all.extend_from_slice(&piece);
    }
    Ok(all)
}

/// The first `limit` bytes of the body (of an error response, whose start is all that is shown);
/// a transport failure ends it.
pub(crate) async fn read_prefix<B: HttpBody>(body: &mut B, limit: usize) -> Vec<u8> {
    let mut all = Vec::new();
    while let Ok(Some(piece)) = body.next_chunk().await {
        let room = limit - all.len();
        all.extend_from_slice(&piece[..piece.len().min(room)]);
        if all.len() >= limit {
            break;
        }
    }
    all
}

/// The reply of a (non-streamed) chat completion body: `choices[0].message`'s text
/// ([`reply_text`]).
///
/// Errors: [`LlmError::BadResponse`] for a body that is not JSON or has no `choices[0].message`
/// object (not a chat completion).
pub fn completion_text(body: &[u8]) -> Result<String, LlmError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| LlmError::BadResponse { reason: format!("body is not JSON: {e}") })?;
    let message = &v["choices"][0]["message"];
    if !message.is_object() {
        return Err(LlmError::BadResponse { reason: "no choices[0].message".into() });
    }
    Ok(reply_text(message))
}

/// A reply message's text: `content` when it is a non-blank string, or an array of parts (their
/// `text`, joined); else `reasoning_content` or `reasoning` (what reasoning models send when they
/// ran out of tokens before answering, or put the answer there); else empty (a tool call, a
/// filtered reply: the model said nothing the pipeline can read).
pub fn reply_text(message: &Value) -> String {
    let content = match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(""),
        _ => String::new(),
    };
    if !content.trim().is_empty() {
        return content;
    }
    message["reasoning_content"].as_str().or_else(|| message["reasoning"].as_str()).map_or(content, str::to_string)
}

fn transport_error(e: TransportError, cfg: &LlmConfig) -> LlmError {
    match e {
        TransportError::Timeout => LlmError::Timeout { ms: cfg.timeout_ms },
        TransportError::Network(reason) => LlmError::Network { reason },
    }
}

impl<T: HttpTransport> OpenAiClient<T> {
    /// A client for `cfg` (validated) over `transport`.
    pub fn new(cfg: LlmConfig, transport: T) -> Result<Self, LlmError> {
        cfg.validate()?;
        let gate = Gate::new(cfg.concurrency);
        Ok(OpenAiClient { cfg, transport, gate, form: Cell::new(JsonForm::Schema) })
    }

    /// The configuration.
    pub fn config(&self) -> &LlmConfig {
        &self.cfg
    }

    /// The HTTP request for `messages` (the API key is in its headers: never log them).
    pub fn request(&self, messages: &[ChatMessage], opts: &ChatOptions, stream: bool) -> HttpRequest {
        self.request_as(messages, opts, stream, self.json_form(opts))
    }

    /// The HTTP request for `messages` with `response_format` in `form`.
    fn request_as(&self, messages: &[ChatMessage], opts: &ChatOptions, stream: bool, form: JsonForm) -> HttpRequest {
        let mut body = json!({
            "model": self.cfg.model,
            "messages": messages,
            "temperature": opts.temperature.unwrap_or(self.cfg.temperature),
            "max_tokens": opts.max_tokens.unwrap_or(self.cfg.max_tokens),
            "stream": stream,
        });
        // The schema is JSON text already: the field is written around it.
        let schema = opts.schema.unwrap_or("{}");
        let format = match form {
            JsonForm::Schema => format!(r#"{{"type":"json_schema","json_schema":{{"name":"reply","schema":{schema}}}}}"#),
            JsonForm::ObjectWithSchema => format!(r#"{{"type":"json_object","schema":{schema}}}"#),
            JsonForm::Object => r#"{"type":"json_object"}"#.to_string(),
            JsonForm::None => String::new(),
        };
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&format) {
            body["response_format"] = v;
        }
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        if !self.cfg.api_key.is_empty() {
            headers.push(("authorization".to_string(), format!("Bearer {}", self.cfg.api_key)));
        }
        headers.extend(self.cfg.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
        HttpRequest { url: self.cfg.endpoint(), headers, body: body.to_string(), timeout_ms: self.cfg.timeout_ms }
    }

    /// The form of `response_format` a request with `opts` carries ([`JsonMode`]; a call without
    /// a schema skips the forms that need one).
    pub fn json_form(&self, opts: &ChatOptions) -> JsonForm {
        let form = match (opts.json, self.cfg.json_mode) {
            (false, _) | (_, JsonMode::Off) => JsonForm::None,
            (true, JsonMode::On) => JsonForm::Object,
            (true, JsonMode::Schema) => JsonForm::Schema,
            (true, JsonMode::Auto) => self.form.get(),
        };
        match form {
            JsonForm::Schema | JsonForm::ObjectWithSchema if opts.schema.is_none() => JsonForm::Object,
            f => f,
        }
    }

    async fn send(
        &self,
        messages: &[ChatMessage],
        opts: &ChatOptions,
        mut on_token: Option<&mut dyn FnMut(&str)>,
    ) -> Result<String, LlmError> {
        let mut form = self.json_form(opts);
        let mut r = self.send_once(messages, opts, form, &mut on_token).await;
        // A server that refuses this form of JSON output (400 or 422; llama-cpp-python: 500):
        // once more in the next form, which the client keeps (calls in flight together may
        // each have been refused: the client's form only ever steps down).
        while let Err(LlmError::Http { status: 400 | 422 | 500, body, .. }) = &r
            && self.cfg.json_mode == JsonMode::Auto
            && body.contains("response_format")
            && let Some(next) = form.next()
        {
            self.form.set(self.form.get().max(next));
            form = self.json_form(opts);
            r = self.send_once(messages, opts, form, &mut on_token).await;
        }
        r
    }

    async fn send_once(
        &self,
        messages: &[ChatMessage],
        opts: &ChatOptions,
        form: JsonForm,
        on_token: &mut Option<&mut dyn FnMut(&str)>,
    ) -> Result<String, LlmError> {
        let req = self.request_as(messages, opts, on_token.is_some(), form);
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let permit = self.gate.acquire().await;
            let (status, headers, mut body) = match self.transport.post(&req).await {
                Ok(r) => r,
                Err(TransportError::Network(_)) if attempt <= self.cfg.retries => {
                    drop(permit);
                    self.transport.sleep(backoff_ms(&self.cfg, attempt, &[])).await;
                    continue;
                }
                Err(e) => return Err(transport_error(e, &self.cfg)),
            };
            match status {
                200..=299 => {
                    let Some(sink) = on_token.as_deref_mut() else {
                        let all = read_capped(&mut body, cap(self.cfg.max_reply_bytes)).await.map_err(|e| match e {
                            ReadError::Transport(e) => transport_error(e, &self.cfg),
                            ReadError::TooLarge => LlmError::ReplyTooLarge { part: ReplyPart::Body, limit: self.cfg.max_reply_bytes },
                        })?;
                        return completion_text(&all);
                    };
                    let mut sse = SseReader::new(cap(self.cfg.max_event_bytes), cap(self.cfg.max_reply_bytes));
                    loop {
                        match body.next_chunk().await {
                            Ok(Some(piece)) => sse.feed(&piece, sink)?,
                            Ok(None) => break,
                            Err(TransportError::Network(_)) => return Err(LlmError::Truncated { received: sse.text.chars().count() }),
                            Err(e) => return Err(transport_error(e, &self.cfg)),
                        }
                    }
                    return if sse.finished {
                        Ok(sse.into_text())
                    } else {
                        Err(LlmError::Truncated { received: sse.text.chars().count() })
                    };
                }
                401 | 403 => return Err(LlmError::Unauthorized { status }),
                429 | 500..=599 if attempt <= self.cfg.retries => {
                    // A server that fails on the JSON-output field (llama-cpp-python answers a
                    // `response_format` type it does not know with a 500) fails so again: its
                    // error goes to `send`, which asks in the next form, instead of a retry.
                    if status != 429 && req.body.contains("\"response_format\"") {
                        let text = error_text(&mut body).await;
                        if text.contains("response_format") {
                            return Err(LlmError::Http { status, attempts: attempt, body: text });
                        }
                    }
                    drop(permit);
                    self.transport.sleep(backoff_ms(&self.cfg, attempt, &headers)).await;
                }
                429 => return Err(LlmError::RateLimited { attempts: attempt }),
                _ => return Err(LlmError::Http { status, attempts: attempt, body: error_text(&mut body).await }),
            }
        }
    }
}

impl<T: HttpTransport> LanguageModel for OpenAiClient<T> {
    async fn chat(&self, messages: &[ChatMessage], opts: &ChatOptions) -> Result<String, LlmError> {
        self.send(messages, opts, None).await
    }
    async fn chat_stream(&self, messages: &[ChatMessage], opts: &ChatOptions, on_token: &mut dyn FnMut(&str)) -> Result<String, LlmError> {
        self.send(messages, opts, Some(on_token)).await
    }
}

/// The first 300 characters of an error reply's body (its message, for [`LlmError::Http`]).
async fn error_text<B: HttpBody>(body: &mut B) -> String {
    let all = read_prefix(body, ERROR_BODY_BYTES).await;
    String::from_utf8_lossy(&all).chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_and_backoff() {
        let cfg = LlmConfig { backoff_ms: 100, max_backoff_ms: 1500, ..Default::default() };
        let h = |v: &str| vec![("Retry-After".to_string(), v.to_string())];
        assert_eq!(backoff_ms(&cfg, 1, &[]), 100);
        assert_eq!(backoff_ms(&cfg, 3, &[]), 400);
        assert_eq!(backoff_ms(&cfg, 9, &[]), 1500, "capped");
        assert_eq!(backoff_ms(&cfg, 1, &h("1")), 1000, "Retry-After wins");
        assert_eq!(backoff_ms(&cfg, 1, &h("0.25")), 250);
        assert_eq!(backoff_ms(&cfg, 1, &h("120")), 1500, "capped too");
        assert_eq!(backoff_ms(&cfg, 2, &h("Wed, 21 Oct 2015 07:28:00 GMT")), 200, "a date falls back to the backoff");
    }

    #[test]
    fn sse_across_chunk_boundaries() {
        let mut r = SseReader::default();
        let mut got = Vec::new();
        let events = "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo ✓\"}}]}\n\n: keep-alive\n\ndata: [DONE]\n\n";
        for piece in events.as_bytes().chunks(7) {
            r.feed(piece, &mut |t| got.push(t.to_string())).unwrap();
        }
        assert_eq!(r.text, "Hello ✓");
        assert_eq!(got, vec!["Hel", "lo ✓"]);
        assert!(r.finished);
        let mut r = SseReader::default();
        r.feed(b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n", &mut |_| {}).unwrap();
        assert!(!r.finished, "no [DONE] yet");
        assert!(matches!(r.feed(b"data: {oops\n", &mut |_| {}), Err(LlmError::BadResponse { .. })));
    }

    #[test]
    fn debug_never_shows_the_key() {
        let cfg = LlmConfig {
            api_key: "sk-secret".into(),
            headers: [("x-api-key".to_string(), "hidden".to_string())].into(),
            ..Default::default()
        };
        let d = format!("{cfg:?}");
        assert!(!d.contains("sk-secret") && !d.contains("hidden"), "{d}");
        assert!(!serde_json::to_string(&cfg).unwrap().contains("sk-secret"), "not serialised either");
    }
}
