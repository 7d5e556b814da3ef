//! The page's language models: [`PageModel`] is either the OpenAI-compatible client over
//! [`FetchTransport`] or [`JsCallbackModel`], a model the page supplies as a JS function (an
//! in-page model such as WebLLM).
//!
//! [`HttpTransport`] in the page: `fetch` through gloo-net, with an `AbortController` whose
//! timer aborts the request when `timeout_ms` passes, body included (a stream read then rejects
//! with `AbortError`, which becomes [`TransportError::Timeout`]). A request the browser refuses
//! (connection refused, DNS, CORS) is [`TransportError::Network`].
use js_sys::{Promise, Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::error::LlmError;
use crate::llm::openai::OpenAiClient;
use crate::llm::{
    Cancel, ChatMessage, ChatOptions, HttpBody, HttpRequest, HttpTransport, LanguageModel, LlmConfig, TransportError, WithCancel,
};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(f: &js_sys::Function, ms: f64) -> f64;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(id: f64);
}

/// The page's HTTP client. With a [`Cancel`], cancelling aborts every request in flight.
#[derive(Debug, Default, Clone)]
pub struct FetchTransport {
    /// Aborts in-flight requests when cancelled.
    pub cancel: Option<Cancel>,
}

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
        let value: Uint8Array = Reflect::get(&chunk, &"value".into())
            .ok()
            .and_then(|v| v.dyn_into().ok())
            .ok_or_else(|| TransportError::Network("stream chunk is not bytes".into()))?;
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
        if let Some(c) = &self.cancel {
            let c3 = controller.clone();
            c.on_cancel(move || c3.abort());
        }
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

/// A model given by the page: `f(messages, {step, schema})` (`schema`: the structured step's JSON
/// Schema as an object, absent for free-text steps) returns an async iterator (`{next():
/// Promise<{done, value}>}`) over pieces of the reply (the worker builds it from the page's
/// `llm(messages, opts) => string | AsyncIterable<string>`). No timeout or retry applies: the
/// page's model is the page's to manage.
pub struct JsCallbackModel(pub js_sys::Function);

fn callback_error(e: JsValue) -> LlmError {
    let reason =
        Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string()).or_else(|| e.as_string()).unwrap_or_else(|| format!("{e:?}"));
    LlmError::Callback { reason }
}

impl LanguageModel for JsCallbackModel {
    async fn chat(&self, messages: &[ChatMessage], opts: &ChatOptions) -> Result<String, LlmError> {
        self.chat_stream(messages, opts, &mut |_| {}).await
    }

    async fn chat_stream(&self, messages: &[ChatMessage], opts: &ChatOptions, on_token: &mut dyn FnMut(&str)) -> Result<String, LlmError> {
        let ser = serde_wasm_bindgen::Serializer::json_compatible();
        let msgs = serde::Serialize::serialize(messages, &ser).map_err(|e| LlmError::Callback { reason: e.to_string() })?;
        let o = js_sys::Object::new();
        let _ = Reflect::set(&o, &"step".into(), &opts.step.as_str().into());
        // A structured step's JSON Schema, as an object (an in-page model such as WebLLM can
        // constrain its decoding to it; WebLLM: `response_format: {type: 'json_object', schema:
        // JSON.stringify(schema)}`).
        if let Some(schema) = opts.schema {
            let _ = Reflect::set(&o, &"schema".into(), &js_sys::JSON::parse(schema).unwrap_or(JsValue::UNDEFINED));
        }
        let it = self.0.call2(&JsValue::NULL, &msgs, &o).map_err(callback_error)?;
        let next: js_sys::Function = Reflect::get(&it, &"next".into())
            .ok()
            .and_then(|f| f.dyn_into().ok())
            .ok_or_else(|| LlmError::Callback { reason: "not an iterator".into() })?;
        let mut text = String::new();
        loop {
            let p: Promise = next.call0(&it).map_err(callback_error)?.dyn_into().map_err(callback_error)?;
            let r = JsFuture::from(p).await.map_err(callback_error)?;
            if Reflect::get(&r, &"done".into()).ok().and_then(|d| d.as_bool()).unwrap_or(true) {
                return Ok(text);
            }
            let piece = Reflect::get(&r, &"value".into())
                .ok()
                .and_then(|v| v.as_string())
                .ok_or_else(|| LlmError::Callback { reason: "the model produced something other than text".into() })?;
            text.push_str(&piece);
            on_token(&piece);
        }
    }
}

/// The model a call names: an endpoint configuration, or a JS function.
pub enum PageModel {
    /// An OpenAI-compatible endpoint over `fetch`.
    Http(OpenAiClient<FetchTransport>),
    /// The page's own model.
    Js(JsCallbackModel),
    /// None given (`llm` null or undefined): fine for runs that make no call (the `search`
    /// preset); a call is `LLM_NOT_CONFIGURED`.
    None,
}

impl PageModel {
    /// From `llm`: a function (the page's model) or `{baseUrl, model, ...}`.
    pub fn from_js(llm: JsValue) -> Result<Self, LlmError> {
        Self::build(llm, None)
    }

    /// [`PageModel::from_js`] under `cancel`: once cancelled, requests in flight are aborted and
    /// every call fails with [`LlmError::Cancelled`].
    pub fn cancellable(llm: JsValue, cancel: Cancel) -> Result<WithCancel<Self>, LlmError> {
        Ok(WithCancel { inner: Self::build(llm, Some(cancel.clone()))?, cancel })
    }

    fn build(llm: JsValue, cancel: Option<Cancel>) -> Result<Self, LlmError> {
        if llm.is_undefined() || llm.is_null() {
            return Ok(PageModel::None);
        }
        if let Ok(f) = llm.clone().dyn_into::<js_sys::Function>() {
            return Ok(PageModel::Js(JsCallbackModel(f)));
        }
        let cfg: LlmConfig = super::options("llm", &llm).map_err(|e| LlmError::NotConfigured { reason: e.to_string() })?;
        Ok(PageModel::Http(OpenAiClient::new(cfg, FetchTransport { cancel })?))
    }
}

impl LanguageModel for PageModel {
    async fn chat(&self, messages: &[ChatMessage], opts: &ChatOptions) -> Result<String, LlmError> {
        match self {
            PageModel::Http(m) => m.chat(messages, opts).await,
            PageModel::Js(m) => m.chat(messages, opts).await,
            PageModel::None => {
                Err(LlmError::NotConfigured { reason: "no llm given (an endpoint {baseUrl, model} or a model function)".into() })
            }
        }
    }
    async fn chat_stream(&self, messages: &[ChatMessage], opts: &ChatOptions, on_token: &mut dyn FnMut(&str)) -> Result<String, LlmError> {
        match self {
            PageModel::Http(m) => m.chat_stream(messages, opts, on_token).await,
            PageModel::Js(m) => m.chat_stream(messages, opts, on_token).await,
            PageModel::None => {
                Err(LlmError::NotConfigured { reason: "no llm given (an endpoint {baseUrl, model} or a model function)".into() })
            }
        }
    }
}
