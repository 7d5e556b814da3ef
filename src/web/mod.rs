//! Browser adapters (wasm32 only): the wasm-bindgen class [`WebRagCore`] that the Web Worker
//! drives, the IndexedDB [`Store`](crate::ports::Store) ([`idb_store`]), model download over
//! `fetch`, and conversion of [`Error`] into JS `Error` objects carrying `name` and `code`.
//!
//! The main-thread client (`src/web/js/index.js`, shipped in `pkg/`) talks to the worker
//! (`src/web/js/worker.js`), which owns one `WebRagCore`. Calls are queued, so the engine sees
//! one operation at a time.
pub mod idb_store;
pub mod llm;
pub mod model;

use std::rc::Rc;

use futures::lock::Mutex;
use js_sys::{Function, Promise, Reflect};
use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::config::Config;
use crate::embed::{CpuEmbedder, DeviceEmbedder, DevicePreference, ModelFiles, file_error};
use crate::engine::{Engine, SearchOptions, decode_utf8};
use crate::error::Error;
use crate::ports::Clock;
use crate::types::{DocumentInput, Format, ProgressEvent};
use idb_store::IdbStore;
pub use model::{ModelSpec, fetch_model};

/// `Date.now()`.
struct JsClock;

impl Clock for JsClock {
    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }
}

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// A JS `Error` with `name` (e.g. `InputError`) and `code` (e.g. `EMPTY_DOCUMENT`).
pub fn js_error(e: &Error) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    err.set_name(e.name());
    let _ = Reflect::set(&err, &"code".into(), &e.code().into());
    err.into()
}

fn to_js<T: serde::Serialize>(v: &T) -> Result<JsValue, JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).map_err(|e| JsValue::from(js_sys::Error::new(&e.to_string())))
}

fn option_error(name: &str, e: impl std::fmt::Display) -> JsValue {
    js_error(&crate::error::InputError::InvalidOption { name: name.into(), reason: e.to_string() }.into())
}

pub(crate) fn report(cb: &Option<Function>, ev: &ProgressEvent) {
    if let (Some(f), Ok(v)) = (cb, to_js(ev)) {
        let _ = f.call1(&JsValue::NULL, &v);
    }
}

/// A document as passed from JS: `text`, or `bytes` (a `Uint8Array` of UTF-8, e.g. an uploaded
/// file; invalid UTF-8 is rejected with `INVALID_UTF8`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsDoc {
    id: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    bytes: Option<serde_bytes::ByteBuf>,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    url: Option<String>,
}

fn to_input(d: JsDoc) -> Result<DocumentInput, Error> {
    let text = match (d.text, d.bytes) {
        (Some(t), _) => t,
        (None, Some(b)) => decode_utf8(&d.id, &b)?,
        (None, None) => String::new(),
    };
    let format = match d.format.as_deref() {
        None | Some("auto") => Format::Auto,
        Some("markdown") | Some("md") => Format::Markdown,
        Some("html") => Format::Html,
        Some("text") | Some("txt") => Format::Text,
        Some(other) => return Err(crate::error::InputError::UnknownFormat { format: other.into() }.into()),
    };
    Ok(DocumentInput { id: d.id, title: d.title, text, format, url: d.url })
}

type Core = Engine<IdbStore, DeviceEmbedder>;

/// The engine as the worker sees it. Every method returns a Promise; failures reject with an
/// `Error` whose `name` is `InputError` | `ModelError` | `StoreError` and whose `code` is stable.
#[wasm_bindgen]
pub struct WebRagCore {
    inner: Rc<Mutex<Core>>,
}

fn run<F, T>(f: F) -> Promise
where
    F: std::future::Future<Output = Result<T, Error>> + 'static,
    T: serde::Serialize,
{
    future_to_promise(async move {
        match f.await {
            Ok(v) => to_js(&v),
            Err(e) => Err(js_error(&e)),
        }
    })
}

#[wasm_bindgen]
impl WebRagCore {
    /// Opens the knowledge base `name` (one IndexedDB database) with a model given as a base URL
    /// (string), as `{url, id?, cache?, files?}` ([`ModelSpec`]: Cache API, pinned sizes and
    /// SHA-256s) or as `{config, tokenizer, weights, id?}` `Uint8Array`s. `options` is a partial
    /// `Config` (camelCase). `onProgress` receives `{phase, done, total}`: `model` (bytes),
    /// `device`, then `index` 0/1 and 1/1 around reading the store and rebuilding the indexes. `device` is `"auto"`
    /// (default), `"cpu"` or `"gpu"` ([`DevicePreference`]); `onEvent` receives embedder
    /// warnings such as `{type: "warning", code: "GPU_LOST", message}` for the core's lifetime.
    pub async fn open(
        name: String,
        model: JsValue,
        options: JsValue,
        on_progress: Option<Function>,
        device: Option<String>,
        on_event: Option<Function>,
    ) -> Result<WebRagCore, JsValue> {
        let preference: DevicePreference = device.as_deref().unwrap_or("auto").parse().map_err(|e: crate::error::InputError| js_error(&e.into()))?;
        let config: Config = if options.is_undefined() || options.is_null() {
            Config::default()
        } else {
            serde_wasm_bindgen::from_value(options).map_err(|e| option_error("options", e))?
        };
        let has = |k: &str| Reflect::get(&model, &k.into()).is_ok_and(|v| !v.is_undefined());
        let (files, id) = if let Some(url) = model.as_string() {
            (fetch_model(&ModelSpec::url(&url), &on_progress).await.map_err(|e| js_error(&e))?, None)
        } else if model.is_object() && has("url") {
            let spec: ModelSpec = serde_wasm_bindgen::from_value(model).map_err(|e| option_error("model", e))?;
            (fetch_model(&spec, &on_progress).await.map_err(|e| js_error(&e))?, spec.id)
        } else {
            let get = |k: &str| -> Result<Vec<u8>, JsValue> {
                let v = Reflect::get(&model, &k.into()).map_err(|_| js_error(&file_error(k, "missing")))?;
                if v.is_undefined() {
                    return Err(js_error(&file_error(k, "missing from the model object")));
                }
                Ok(js_sys::Uint8Array::new(&v).to_vec())
            };
            let id = Reflect::get(&model, &"id".into()).ok().and_then(|v| v.as_string());
            (ModelFiles { config: get("config")?, tokenizer: get("tokenizer")?, weights: get("weights")? }, id)
        };
        let cpu = CpuEmbedder::from_files(id.as_deref().unwrap_or(crate::embed::DEFAULT_MODEL_ID), &files).map_err(|e| js_error(&e))?;
        report(&on_progress, &ProgressEvent { phase: "device".into(), done: 0, total: 1 });
        let embedder = DeviceEmbedder::open(cpu, preference).await.map_err(|e| js_error(&e))?;
        if let Some(f) = on_event {
            embedder.on_event(move |ev| {
                if let Ok(v) = to_js(ev) {
                    let _ = f.call1(&JsValue::NULL, &v);
                }
            });
        }
        report(&on_progress, &ProgressEvent { phase: "device".into(), done: 1, total: 1 });
        report(&on_progress, &ProgressEvent { phase: "index".into(), done: 0, total: 1 });
        let store = IdbStore::open(&name).await.map_err(|e| js_error(&e.into()))?;
        let engine = Engine::open(store, embedder, config, Box::new(JsClock)).await.map_err(|e| js_error(&e))?;
        report(&on_progress, &ProgressEvent { phase: "index".into(), done: 1, total: 1 });
        Ok(WebRagCore { inner: Rc::new(Mutex::new(engine)) })
    }

    /// Adds documents (`[{id, text | bytes, title?, format?, url?}]`) as one transaction.
    /// Resolves to `{added, replaced, unchanged, chunks}`.
    pub fn add(&self, docs: JsValue, on_progress: Option<Function>) -> Promise {
        let inner = self.inner.clone();
        let parsed: Result<Vec<JsDoc>, _> = serde_wasm_bindgen::from_value(docs);
        run(async move {
            let docs = parsed.map_err(|e| crate::error::InputError::InvalidOption { name: "docs".into(), reason: e.to_string() })?;
            let docs = docs.into_iter().map(to_input).collect::<Result<Vec<_>, _>>()?;
            let mut eng = inner.lock().await;
            let mut cb = |ev: ProgressEvent| report(&on_progress, &ev);
            eng.add(docs, &mut cb).await
        })
    }

    /// Removes documents by id. Resolves to `{removed, unknown}`.
    pub fn remove(&self, ids: JsValue) -> Promise {
        let inner = self.inner.clone();
        let ids: Result<Vec<String>, _> = serde_wasm_bindgen::from_value(ids);
        run(async move {
            let ids = ids.map_err(|e| crate::error::InputError::InvalidOption { name: "ids".into(), reason: e.to_string() })?;
            inner.lock().await.remove(&ids).await
        })
    }

    /// Searches. `opts`: `{k = 10, mode = "hybrid" | "bm25" | "dense" | "graph" | "hybrid+graph",
    /// literal = false}`. Resolves to hits.
    pub fn search(&self, query: String, opts: JsValue) -> Promise {
        let inner = self.inner.clone();
        let opts: Result<SearchOptions, _> =
            if opts.is_undefined() || opts.is_null() { Ok(SearchOptions::default()) } else { serde_wasm_bindgen::from_value(opts) };
        run(async move {
            let opts = opts.map_err(|e| crate::error::InputError::InvalidOption { name: "options".into(), reason: e.to_string() })?;
            inner.lock().await.search(&query, &opts).await
        })
    }

    /// The pseudo-graph retriever with its context and explain data: `{hits: [{chunkId, docId,
    /// factId, score, row}], context: [{topic, children: [{label, children?, chunk?}]}], explain:
    /// {topics: [[docId, how]], template: [rows, cols], anchors: [{kp, row, col, value,
    /// subRootCol, top, bottom}], rows: [[row, score, labels]]}}` ([`crate::graph::GraphSearch`]).
    #[wasm_bindgen(js_name = explainGraph)]
    pub fn explain_graph(&self, query: String, k: usize) -> Promise {
        let inner = self.inner.clone();
        run(async move { inner.lock().await.explain_graph(&query, k.clamp(1, 1000)).await })
    }

    /// Knowledge-aware decomposition (PIKE-RAG Algorithm 1, [`crate::ask::decompose`]) of
    /// `question` over this knowledge base, with the OpenAI-compatible endpoint `llm`
    /// (`{baseUrl, model, apiKey?, headers?, temperature?, maxTokens?, timeoutMs?, retries?,
    /// backoffMs?, maxBackoffMs?, concurrency?}`, [`crate::llm::LlmConfig`]; the key stays in this
    /// worker's memory), or with a model function ([`llm::JsCallbackModel`]) and `options` (`{rounds?, candidates?, delta?, proposals?, retriever?}`).
    /// `onTrace` receives `{step, round, input, output, ms}` per step. Resolves to the trajectory
    /// `{question, rounds: [{proposals, candidates, selected, subQuestion, answer}], context,
    /// stop}`; rejects with `LlmError` (`LLM_UNAUTHORIZED`, `LLM_TIMEOUT`, `LLM_BAD_OUTPUT`, ...).
    pub fn decompose(&self, question: String, llm: JsValue, options: JsValue, on_trace: Option<Function>) -> Promise {
        let inner = self.inner.clone();
        let model = llm::PageModel::from_js(llm);
        let params: Result<crate::ask::DecomposeParams, _> =
            if options.is_undefined() || options.is_null() { Ok(Default::default()) } else { serde_wasm_bindgen::from_value(options) };
        run(async move {
            let client = model?;
            let params = params.map_err(|e| crate::error::InputError::InvalidOption { name: "decompose".into(), reason: e.to_string() })?;
            let eng = inner.lock().await;
            let mut trace = |ev: crate::ask::TraceEvent| {
                if let (Some(f), Ok(v)) = (&on_trace, to_js(&ev)) {
                    let _ = f.call1(&JsValue::NULL, &v);
                }
            };
            crate::ask::decompose(&client, &*eng, &question, &params, &JsClock, &mut trace).await
        })
    }

    /// "Test connection": one short chat with the endpoint `llm`. Resolves to `{reply, ms}`;
    /// rejects with the endpoint's `LlmError`.
    #[wasm_bindgen(js_name = testLlm)]
    pub fn test_llm(&self, llm: JsValue) -> Promise {
        #[derive(serde::Serialize)]
        struct Pong {
            reply: String,
            ms: f64,
        }
        let model = llm::PageModel::from_js(llm);
        run(async move {
            use crate::llm::LanguageModel;
            let client = model?;
            let t0 = js_sys::Date::now();
            let msgs = [crate::llm::ChatMessage::user("Reply with the single word OK.")];
            let reply = client.chat(&msgs, &crate::llm::ChatOptions { max_tokens: Some(8), ..crate::llm::ChatOptions::step("test") }).await?;
            Ok(Pong { reply, ms: js_sys::Date::now() - t0 })
        })
    }

    /// Decomposition, then a cited answer streamed token by token ([`crate::ask::ask`]). `llm` as
    /// for [`WebRagCore::decompose`]; `options` `{decompose?: {...}, answer?: {minConfidence?:
    /// "low" | "medium" | "high"}}`. `onEvent` receives the trace events and `{token}` pieces of
    /// the answer as they stream. Resolves to `{answer: {text, citations, confidence, known,
    /// sources}, trajectory}`.
    pub fn ask(&self, question: String, llm: JsValue, options: JsValue, on_event: Option<Function>) -> Promise {
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct AskOptions {
            decompose: crate::ask::DecomposeParams,
            answer: crate::ask::answer::AnswerParams,
        }
        let inner = self.inner.clone();
        let model = llm::PageModel::from_js(llm);
        let opts: Result<AskOptions, _> =
            if options.is_undefined() || options.is_null() { Ok(Default::default()) } else { serde_wasm_bindgen::from_value(options) };
        run(async move {
            let client = model?;
            let opts = opts.map_err(|e| crate::error::InputError::InvalidOption { name: "ask".into(), reason: e.to_string() })?;
            let eng = inner.lock().await;
            let emit = |v: Result<JsValue, JsValue>| {
                if let (Some(f), Ok(v)) = (&on_event, v) {
                    let _ = f.call1(&JsValue::NULL, &v);
                }
            };
            let mut trace = |ev: crate::ask::TraceEvent| emit(to_js(&ev));
            let mut token = |t: &str| emit(to_js(&serde_json::json!({ "token": t })));
            crate::ask::ask(&client, &*eng, &question, &opts.decompose, &opts.answer, &JsClock, &mut token, &mut trace).await
        })
    }

    /// Embeds texts with the engine's model (`string[]` → `number[][]`). `path`: `"cpu"` or
    /// `"gpu"` to bypass the routing (benchmarks), else null.
    pub fn embed(&self, texts: Vec<String>, path: JsValue) -> Promise {
        let inner = self.inner.clone();
        let path: Result<Option<crate::embed::EmbedPath>, _> =
            if path.is_undefined() || path.is_null() { Ok(None) } else { serde_wasm_bindgen::from_value(path).map(Some) };
        run(async move {
            let path = path.map_err(|e| crate::error::InputError::InvalidOption { name: "path".into(), reason: e.to_string() })?;
            let eng = inner.lock().await;
            let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
            eng.embedder().embed_on(&refs, path).await
        })
    }

    /// The embedding path: `{path: "gpu" | "cpu", queries, adapter, softwareAdapter, reason,
    /// crossover: {cpuMs, gpuMs} | null}` ([`crate::embed::EmbedderInfo`]).
    pub fn embedder(&self) -> Promise {
        let inner = self.inner.clone();
        run(async move { Ok::<_, Error>(inner.lock().await.embedder().info()) })
    }

    /// GPU time per kernel kind for one forward pass over `texts` (`{matmulMs, attentionMs,
    /// layerNormMs, otherMs, wallMs}`), or null on the CPU path / without timestamp queries.
    #[wasm_bindgen(js_name = profileGpu)]
    pub fn profile_gpu(&self, texts: Vec<String>) -> Promise {
        let inner = self.inner.clone();
        run(async move {
            let eng = inner.lock().await;
            let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
            eng.embedder().profile(&refs).await
        })
    }

    /// Destroys the GPU device (as a driver reset would), to exercise the CPU fallback.
    /// Resolves to whether a GPU was in use.
    #[wasm_bindgen(js_name = loseGpuForTesting)]
    pub fn lose_gpu_for_testing(&self) -> Promise {
        let inner = self.inner.clone();
        run(async move {
            let eng = inner.lock().await;
            Ok::<_, Error>(eng.embedder().gpu().map(|g| g.gpu().destroy()).is_some())
        })
    }

    /// `{documents, chunks, terms, dim, model}`.
    pub fn stats(&self) -> Promise {
        let inner = self.inner.clone();
        run(async move { Ok::<_, Error>(inner.lock().await.stats()) })
    }

    /// One step of background upkeep (`force`: seal every non-empty buffer and purge removed
    /// vectors from segments, to completion). Resolves to `null` when there was nothing to do,
    /// else `{collection, vectors, merged, segments}` (with `force`, an array of them).
    pub fn maintain(&self, force: bool) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let mut eng = inner.lock().await;
            let r = if force {
                eng.maintain_all(true).await.map(|v| to_js(&v))
            } else {
                eng.maintain(false).await.map(|v| to_js(&v))
            };
            match r {
                Ok(v) => v,
                Err(e) => Err(js_error(&e)),
            }
        })
    }

    /// Stored documents, newest first.
    pub fn documents(&self) -> Promise {
        let inner = self.inner.clone();
        run(async move { Ok::<_, Error>(inner.lock().await.documents()) })
    }

    /// One chunk by id (or null).
    pub fn chunk(&self, id: String) -> Promise {
        let inner = self.inner.clone();
        run(async move { Ok::<_, Error>(inner.lock().await.chunk(&id).cloned()) })
    }

    /// Deletes everything in this knowledge base.
    pub fn clear(&self) -> Promise {
        let inner = self.inner.clone();
        run(async move { inner.lock().await.clear().await })
    }
}
