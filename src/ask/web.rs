//! The optional web searcher of domain routing (WeKnow-RAG): the [`WebSearch`] port, [`NoWeb`],
//! and [`HttpWebSearch`] over a platform transport.
use serde::{Deserialize, Serialize};

use crate::error::LlmError;

/// A web search result (the optional web searcher of domain routing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebResult {
    /// Title.
    pub title: String,
    /// Address.
    pub url: String,
    /// Text or snippet.
    pub text: String,
}

/// The optional web searcher (domain routing's third domain).
pub trait WebSearch {
    /// Results for `query`, at most `k`.
    async fn search(&self, query: &str, k: usize) -> std::result::Result<Vec<WebResult>, LlmError>;
}

/// No web searcher: routing never picks `web`.
pub struct NoWeb;

impl WebSearch for NoWeb {
    async fn search(&self, _query: &str, _k: usize) -> std::result::Result<Vec<WebResult>, LlmError> {
        Ok(Vec::new())
    }
}

/// A web searcher over HTTP (domain routing's optional third domain): `POST {url}` with
/// `{"query", "k"}` (and the configured headers, e.g. an API key), answered by
/// `{"results": [{"title", "url", "text"}]}` (at most [`WEB_REPLY_BYTES`]). A thin adapter is all a search API needs to speak
/// this; webrag calls no search engine of its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebSearchConfig {
    /// The endpoint (`http://` or `https://`).
    pub url: String,
    /// Extra headers.
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
    /// Timeout in milliseconds. Default 15,000.
    #[serde(default = "default_web_timeout")]
    pub timeout_ms: u64,
}

fn default_web_timeout() -> u64 {
    15_000
}

/// Bytes a web-search reply may hold (4 MiB): more is [`LlmError::ReplyTooLarge`], read no
/// further.
pub const WEB_REPLY_BYTES: usize = 4 << 20;

/// [`WebSearchConfig`] over a platform transport.
pub struct HttpWebSearch<T> {
    /// The endpoint.
    pub cfg: WebSearchConfig,
    /// The transport (fetch in the page, ureq natively).
    pub transport: T,
}

impl<T: crate::llm::HttpTransport> WebSearch for HttpWebSearch<T> {
    async fn search(&self, query: &str, k: usize) -> std::result::Result<Vec<WebResult>, LlmError> {
        use crate::llm::TransportError;
        if !(self.cfg.url.starts_with("http://") || self.cfg.url.starts_with("https://")) {
            return Err(LlmError::NotConfigured {
                reason: format!("webSearch.url {:?} must start with http:// or https://", self.cfg.url),
            });
        }
        let mut headers: Vec<(String, String)> = vec![("content-type".into(), "application/json".into())];
        headers.extend(self.cfg.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
        let req = crate::llm::HttpRequest {
            url: self.cfg.url.clone(),
            headers,
            body: serde_json::json!({"query": query, "k": k}).to_string(),
            timeout_ms: self.cfg.timeout_ms,
        };
        let map = |e: TransportError| match e {
            TransportError::Timeout => LlmError::Timeout { ms: self.cfg.timeout_ms },
            TransportError::Network(reason) => LlmError::Network { reason },
        };
        let (status, _, mut body) = self.transport.post(&req).await.map_err(map)?;
        use crate::llm::openai::{ERROR_BODY_BYTES, ReadError, read_capped, read_prefix};
        if !(200..300).contains(&status) {
            let bytes = read_prefix(&mut body, ERROR_BODY_BYTES).await;
            return Err(LlmError::Http { status, attempts: 1, body: String::from_utf8_lossy(&bytes).chars().take(200).collect() });
        }
        let bytes = read_capped(&mut body, WEB_REPLY_BYTES).await.map_err(|e| match e {
            ReadError::Transport(e) => map(e),
            ReadError::TooLarge => LlmError::ReplyTooLarge { part: crate::error::ReplyPart::Body, limit: WEB_REPLY_BYTES as u64 },
        })?;
        #[derive(Deserialize)]
        struct Results {
            results: Vec<WebResult>,
        }
        let r: Results = serde_json::from_slice(&bytes).map_err(|e| LlmError::BadResponse { reason: format!("web search: {e}") })?;
        Ok(r.results.into_iter().take(k).collect())
    }
}
