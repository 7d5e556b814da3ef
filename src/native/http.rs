//! [`HttpTransport`] natively, over `ureq` (blocking: the CLI and the tests drive one request at a
//! time per thread). The deadline covers the whole exchange, body included.
use std::io::Read;
use std::time::Duration;

use crate::llm::{HttpBody, HttpRequest, HttpTransport, TransportError};

/// The native HTTP client.
#[derive(Debug, Default, Clone, Copy)]
pub struct UreqTransport;

/// A response body read in pieces of up to 8 KiB as they arrive.
pub struct UreqBody(Box<dyn Read + Send>);

fn io_error(e: std::io::Error) -> TransportError {
    if e.kind() == std::io::ErrorKind::TimedOut || e.to_string().to_ascii_lowercase().contains("timeout") {
        TransportError::Timeout
    } else {
        TransportError::Network(e.to_string())
    }
}

impl HttpBody for UreqBody {
    async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        let mut buf = vec![0u8; 8192];
        let n = self.0.read(&mut buf).map_err(io_error)?;
        if n == 0 {
            return Ok(None);
        }
        buf.truncate(n);
        Ok(Some(buf))
    }
}

impl HttpTransport for UreqTransport {
    type Body = UreqBody;

    async fn post(&self, req: &HttpRequest) -> Result<(u16, Vec<(String, String)>, UreqBody), TransportError> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_millis(req.timeout_ms)))
            .http_status_as_error(false)
            .build()
            .into();
        let mut r = agent.post(&req.url);
        for (k, v) in &req.headers {
            r = r.header(k.as_str(), v.as_str());
        }
        let resp = r.send(req.body.as_str()).map_err(|e| match e {
            ureq::Error::Timeout(_) => TransportError::Timeout,
            ureq::Error::Io(io) => io_error(io),
            other => TransportError::Network(other.to_string()),
        })?;
        let status = resp.status().as_u16();
        let headers =
            resp.headers().iter().map(|(k, v)| (k.as_str().to_ascii_lowercase(), v.to_str().unwrap_or_default().to_string())).collect();
        Ok((status, headers, UreqBody(Box::new(resp.into_body().into_reader()))))
    }

    async fn sleep(&self, ms: u64) {
        std::thread::sleep(Duration::from_millis(ms));
    }
}
