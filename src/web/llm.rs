//! [`HttpTransport`] in the page: `fetch` through gloo-net, with an `AbortController` whose
//! timer aborts the request when `timeout_ms` passes, body included (a stream read then rejects
//! with `AbortError`, which becomes [`TransportError::Timeout`]). A request the browser refuses
//! (connection refused, DNS, CORS) is [`TransportError::Network`].
use js_sys::{Promise, Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::llm::{HttpBody, HttpRequest, HttpTransport, TransportError};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(f: &js_sys::Function, ms: f64) -> f64;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(id: f64);
}

/// The page's HTTP client.
#[derive(Debug, Default, Clone, Copy)]
pub struct FetchTransport;

/// A response body read from its `ReadableStream`; the deadline timer lives as long as it does.
pub struct FetchBody {
    reader: Option<web_sys::ReadableStreamDefaultReader>,
    controller: web_sys::AbortController,
    timer: f64,
    _abort: Closure<dyn FnMut()>,
}

impl Drop for FetchBody {
    fn drop(&mut self) {
        clear_timeout(self.timer);
        // Stop an unfinished download (nothing is left to read it).
        self.controller.abort();
    }
}

fn failure(controller: &web_sys::AbortController, e: impl std::fmt::Debug) -> TransportError {
    if controller.signal().aborted() { TransportError::Timeout } else { TransportError::Network(format!("{e:?}")) }
}

impl HttpBody for FetchBody {
    async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        let Some(reader) = &self.reader else { return Ok(None) };
        let chunk = JsFuture::from(reader.read()).await.map_err(|e| failure(&self.controller, e))?;
        if Reflect::get(&chunk, &"done".into()).ok().and_then(|d| d.as_bool()).unwrap_or(true) {
            return Ok(None);
        }
        let value: Uint8Array = Reflect::get(&chunk, &"value".into()).ok().and_then(|v| v.dyn_into().ok()).ok_or_else(|| TransportError::Network("stream chunk is not bytes".into()))?;
        Ok(Some(value.to_vec()))
    }
}

impl HttpTransport for FetchTransport {
    type Body = FetchBody;

    async fn post(&self, req: &HttpRequest) -> Result<(u16, Vec<(String, String)>, FetchBody), TransportError> {
        let controller = web_sys::AbortController::new().map_err(|e| TransportError::Network(format!("{e:?}")))?;
        let c2 = controller.clone();
        let abort = Closure::<dyn FnMut()>::new(move || c2.abort());
        let timer = set_timeout(abort.as_ref().unchecked_ref(), req.timeout_ms as f64);
        let signal = controller.signal();
        let mut b = gloo_net::http::Request::post(&req.url).abort_signal(Some(&signal));
        for (k, v) in &req.headers {
            b = b.header(k, v);
        }
        let sent = match b.body(req.body.clone()) {
            Ok(r) => r.send().await,
            Err(e) => Err(e),
        };
        let resp: web_sys::Response = match sent {
            Ok(r) => r.into(),
            Err(e) => {
                clear_timeout(timer);
                return Err(failure(&controller, e));
            }
        };
        let mut headers = Vec::new();
        for name in ["retry-after", "content-type"] {
            if let Ok(Some(v)) = resp.headers().get(name) {
                headers.push((name.to_string(), v));
            }
        }
        let reader = resp.body().map(|b| b.get_reader().unchecked_into::<web_sys::ReadableStreamDefaultReader>());
        Ok((resp.status(), headers, FetchBody { reader, controller, timer, _abort: abort }))
    }

    async fn sleep(&self, ms: u64) {
        let p = Promise::new(&mut |resolve, _| {
            set_timeout(&resolve, ms as f64);
        });
        let _ = JsFuture::from(p).await;
    }
}
