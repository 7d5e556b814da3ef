//! Browser adapters (wasm32 only): the wasm-bindgen class [`WebRagCore`] that the Web Worker
//! drives, the IndexedDB [`Store`](crate::ports::Store) ([`idb_store`]), model download over
//! `fetch`, and conversion of [`Error`] into JS `Error` objects carrying `name` and `code`.
//!
//! The main-thread client (`src/web/js/index.js`, shipped in `pkg/`) talks to the worker
//! (`src/web/js/worker.js`), which owns one `WebRagCore`. Calls are queued, so the engine sees
//! one operation at a time.

/// Runs a write against the whole engine `$core` (a `LazyEngine`), bound to `$eng`: the store is
/// read again first when another tab committed since ([`LazyEngine::refresh`]), and the write is
/// tried again when its commit still meets a newer generation
/// ([`crate::ports::retry_on_conflict`]).
macro_rules! write_op {
    ($core:ident, $eng:ident => $body:expr) => {{
        crate::ports::retry_on_conflict(crate::ports::WRITE_ATTEMPTS, async |_| {
            let $eng = $core.for_write().await?;
            $body
        })
        .await
    }};
}

#[cfg(feature = "full")]
pub mod full;
pub mod idb_store;
#[cfg(feature = "full")]
pub mod llm;
pub mod model;
pub mod platform;
mod pool;
#[cfg(feature = "builder")]
pub mod snapshot;

use std::rc::Rc;

use futures::lock::Mutex;
use js_sys::{Function, Promise, Reflect};
use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::config::Config;
use crate::embed::{CpuEmbedder, DeviceEmbedder, DevicePreference, ModelFiles, file_error};
use crate::engine::{LazyEngine, SearchOptions, decode_utf8};
use crate::error::Error;
use crate::types::{DocumentInput, Format, ProgressEvent};
use idb_store::IdbStore;
pub use model::{ModelSpec, fetch_model};
use platform::JsClock;

#[wasm_bindgen(start)]
fn start() {
    install_platform();
    // A panic (a bug: none is reachable from input or stored data) ends this wasm instance.
    // Besides logging it, tell the worker (`__webragPanic`), which tells the page at once: its
    // calls then reject with WORKER_FAILED instead of waiting forever, and a fresh worker opens
    // the knowledge base again.
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        if let Ok(f) = Reflect::get(&js_sys::global(), &"__webragPanic".into())
            && let Ok(f) = f.dyn_into::<Function>()
        {
            let _ = f.call1(&JsValue::NULL, &info.to_string().into());
        }
    }));
}

/// Installs what the core takes from the browser: Unicode normalization (ICU's, through
/// `String.prototype.normalize`: the page's builds carry no tables of their own,
/// [`crate::ports::normalize`]), the stemmer modules' stems (`platform::stem_by_module`) and, in
/// the search build, the parser module's Markdown and HTML (`platform::markup_by_module`). The module's start function calls it; code that runs the core
/// in a page without that start (wasm-bindgen-test) calls it first. Idempotent.
pub fn install_platform() {
    #[cfg(not(feature = "builder"))]
    crate::ports::install_normalizer(|text, form| js_sys::JsString::from(text).normalize(form.name()).into());
    #[cfg(not(feature = "markup"))]
    crate::ports::install_markup_parser(platform::markup_by_module);
    #[cfg(not(feature = "stem"))]
    crate::ports::install_stemmer(platform::stem_by_module);
}

/// A JS `Error` with `name` (e.g. `InputError`) and `code` (e.g. `EMPTY_DOCUMENT`).
pub fn js_error(e: &Error) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    err.set_name(e.name());
    let _ = Reflect::set(&err, &"code".into(), &e.code().into());
    err.into()
}

pub(crate) fn to_js<T: serde::Serialize>(v: &T) -> Result<JsValue, JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).map_err(|e| JsValue::from(js_sys::Error::new(&e.to_string())))
}

pub(crate) fn option_error(name: &str, e: impl std::fmt::Display) -> JsValue {
    js_error(&crate::error::InputError::InvalidOption { name: name.into(), reason: e.to_string() }.into())
}

/// `v` with every `undefined` value of its plain objects left out, at any depth (JavaScript's
/// way to omit a field: `{steps: undefined}` means no `steps`). Arrays are copied element by
/// element; anything else (typed arrays, functions, class instances) is kept as it is.
fn defined(v: &JsValue) -> JsValue {
    if js_sys::Array::is_array(v) {
        return js_sys::Array::from(v).iter().map(|x| defined(&x)).collect::<js_sys::Array>().into();
    }
    if !v.is_object() || v.is_function() {
        return v.clone();
    }
    let proto = js_sys::Object::get_prototype_of(v);
    let plain = proto.is_null() || JsValue::from(proto) == JsValue::from(js_sys::Object::get_prototype_of(&js_sys::Object::new()));
    if !plain {
        return v.clone();
    }
    let out = js_sys::Object::new();
    for entry in js_sys::Object::entries(v.unchecked_ref()).iter() {
        let pair: js_sys::Array = entry.unchecked_into();
        let (k, val) = (pair.get(0), pair.get(1));
        if !val.is_undefined() {
            let _ = Reflect::set(&out, &k, &defined(&val));
        }
    }
    out.into()
}

/// Options of an operation as `T`: `undefined` or `null` is the default, `undefined` fields are
/// absent, and an error names the field it is about (`answer.minConfidence: unknown variant
/// "sure", expected one of "low", "medium", "high"`) as [`InputError::InvalidOption`] `what.field`.
///
/// [`InputError::InvalidOption`]: crate::error::InputError::InvalidOption
pub(crate) fn options<T: serde::de::DeserializeOwned + Default>(what: &str, v: &JsValue) -> Result<T, crate::error::InputError> {
    if v.is_undefined() || v.is_null() {
        return Ok(T::default());
    }
    let clean = defined(v);
    serde_path_to_error::deserialize(serde_wasm_bindgen::Deserializer::from(clean)).map_err(|e| {
        let path = e.path().to_string();
        let name = if path == "." || path.is_empty() { what.to_string() } else { format!("{what}.{path}") };
        // serde-wasm-bindgen's errors are JS `Error`s: their text starts "Error: ".
        let reason = e.into_inner().to_string();
        crate::error::InputError::InvalidOption { name, reason: reason.strip_prefix("Error: ").unwrap_or(&reason).to_string() }
    })
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
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    meta: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    lang: Option<String>,
}

fn to_input(d: JsDoc) -> Result<DocumentInput, Error> {
    let text = match (d.text, d.bytes) {
        (Some(t), _) => t,
        (None, Some(b)) => decode_utf8(&d.id, b.into_vec())?,
        (None, None) => String::new(),
    };
    let format = match d.format.as_deref() {
        None | Some("auto") => Format::Auto,
        Some("markdown") | Some("md") => Format::Markdown,
        Some("html") => Format::Html,
        Some("text") | Some("txt") => Format::Text,
        Some(other) => return Err(crate::error::InputError::UnknownFormat { format: other.into() }.into()),
    };
    Ok(DocumentInput { id: d.id, title: d.title, text, format, url: d.url, tags: d.tags, meta: d.meta, lang: d.lang })
}

/// The model files `model` names, as [`WebRagCore::open`] takes it: a base URL (string), a
/// [`ModelSpec`] (`{url, id?, cache?, files?}`), or `{config, tokenizer, weights, id?}` bytes.
/// Returns the files and the model id given, if any.
///
/// Errors: [`fetch_model`]'s; `INVALID_OPTION` for a malformed spec; `MODEL_FILE_UNAVAILABLE`
/// for a missing byte field.
pub(crate) async fn load_model(model: JsValue, on_progress: &Option<Function>) -> Result<(ModelFiles, Option<String>), JsValue> {
    let has = |k: &str| Reflect::get(&model, &k.into()).is_ok_and(|v| !v.is_undefined());
    if let Some(url) = model.as_string() {
        return Ok((fetch_model(&ModelSpec::url(&url), on_progress).await.map_err(|e| js_error(&e))?, None));
    }
    if model.is_object() && has("url") {
        let spec: ModelSpec = serde_wasm_bindgen::from_value(model).map_err(|e| option_error("model", e))?;
        return Ok((fetch_model(&spec, on_progress).await.map_err(|e| js_error(&e))?, spec.id));
    }
    let get = |k: &str| -> Result<Vec<u8>, JsValue> {
        let v = Reflect::get(&model, &k.into()).map_err(|_| js_error(&file_error(k, "missing")))?;
        if v.is_undefined() {
            return Err(js_error(&file_error(k, "missing from the model object")));
        }
        Ok(js_sys::Uint8Array::new(&v).to_vec())
    };
    let id = Reflect::get(&model, &"id".into()).ok().and_then(|v| v.as_string());
    Ok((ModelFiles { config: get("config")?, tokenizer: get("tokenizer")?, weights: get("weights")? }, id))
}

/// The worker's knowledge base: opened lazily, loaded by the first operation that needs it whole.
pub(crate) type Core = LazyEngine<IdbStore, Rc<DeviceEmbedder>>;

thread_local! {
    /// Cancellation tokens of the runs in progress, by the caller's `cancelId`.
    static CANCELS: std::cell::RefCell<std::collections::HashMap<String, crate::llm::Cancel>> = Default::default();
}

/// Removes a run's token when the run ends.
#[cfg(feature = "full")]
pub(crate) struct CancelGuard(Option<String>);

#[cfg(feature = "full")]
impl Drop for CancelGuard {
    fn drop(&mut self) {
        if let Some(id) = self.0.take() {
            CANCELS.with(|c| c.borrow_mut().remove(&id));
        }
    }
}

/// The token for `options.cancelId` (registered until the guard drops), or a private one.
#[cfg(feature = "full")]
pub(crate) fn cancel_token(options: &JsValue) -> (crate::llm::Cancel, CancelGuard) {
    let token = crate::llm::Cancel::new();
    let id = if options.is_object() { Reflect::get(options, &"cancelId".into()).ok().and_then(|v| v.as_string()) } else { None };
    if let Some(id) = &id {
        CANCELS.with(|c| c.borrow_mut().insert(id.clone(), token.clone()));
    }
    (token, CancelGuard(id))
}

/// Cancels the run started with `cancelId` `id` (an `AbortSignal` fired in the page): its
/// requests in flight are aborted and it rejects with `LlmError` `LLM_CANCELLED`; what it
/// committed stays. Unknown ids are ignored (the run already ended).
#[wasm_bindgen]
pub fn cancel(id: &str) {
    let t = CANCELS.with(|c| c.borrow().get(id).cloned());
    if let Some(t) = t {
        t.cancel();
    }
}

/// The BM25 analyzer's terms for `text` (the static-site loader's JavaScript analyzer is
/// checked against this).
#[wasm_bindgen(js_name = analyzeTerms)]
pub fn analyze_terms(text: &str) -> Vec<String> {
    crate::text::analyze(text)
}

/// The tag of the stemmer module (`stem/<tag>.wasm`) a document in language `tag` (a BCP 47 tag)
/// is stemmed with: `en` for `en-GB`, `no` for `nb`; `undefined` for a language without a Snowball
/// stemmer (`zh`) or a string that is not a tag. The worker loads those modules
/// (src/web/js/worker.js, `loadStems`).
#[wasm_bindgen(js_name = stemModuleTag)]
pub fn stem_module_tag(tag: &str) -> Option<String> {
    crate::text::Language::from_tag(tag).map(|l| l.tag().to_string())
}

/// Weighted reciprocal-rank fusion ([`crate::retrieve::rrf`]) of lists given flat (`lists`
/// concatenated, `lens` their lengths, `weights` one per list, 1 where missing): the fused items,
/// best first (the static-site loader's JavaScript RRF is checked against this).
#[wasm_bindgen(js_name = rrfFuse)]
pub fn rrf_fuse(lists: Vec<u32>, lens: Vec<u32>, k: f32, weights: Vec<f32>) -> Vec<u32> {
    let mut parts = Vec::with_capacity(lens.len());
    let mut at = 0usize;
    for (i, &l) in lens.iter().enumerate() {
        let end = (at + l as usize).min(lists.len());
        parts.push((&lists[at..end], weights.get(i).copied().unwrap_or(1.0)));
        at = end;
    }
    crate::retrieve::rrf(&parts, k).into_iter().map(|(item, _)| item).collect()
}

/// PGR (`graph::pgr::pgr`) on fact paths given flat (`paths` concatenated, `lens` their lengths,
/// DFS order) with `sims` = `kps` rows of similarities per node id: the selected rows as
/// `[row, score, support, row, score, support…]` (the static-site loader's JavaScript PGR is
/// checked against this).
#[wasm_bindgen(js_name = pgrRows)]
#[allow(clippy::too_many_arguments)]
pub fn pgr_rows(
    paths: Vec<u32>,
    lens: Vec<u32>,
    sims: Vec<f32>,
    kps: usize,
    support: f32,
    continue_threshold: f32,
    anchors: usize,
    top_rows: usize,
) -> Vec<f32> {
    let mut rows = Vec::with_capacity(lens.len());
    let mut at = 0usize;
    for &l in &lens {
        let end = (at + l as usize).min(paths.len());
        rows.push(&paths[at..end]);
        at = end;
    }
    let t = crate::graph::pgr::Template::from_paths(rows);
    let n = sims.len().checked_div(kps).unwrap_or(0);
    let sim_rows: Vec<&[f32]> = (0..kps).map(|k| &sims[k * n..(k + 1) * n]).collect();
    let p = crate::graph::pgr::PgrParams { support, continue_threshold, anchors, top_rows };
    let r = crate::graph::pgr::pgr(&t, &sim_rows, &p);
    r.rows.into_iter().zip(r.support).flat_map(|((row, s), support)| [row as f32, s, support]).collect()
}

/// [`crate::types::Stats`] as the page sees them, with `wasmMemoryBytes`: the size of this
/// worker's wasm linear memory (where every loaded index lives).
fn stats_js(stats: &crate::types::Stats) -> Result<JsValue, JsValue> {
    let v = to_js(stats)?;
    let bytes = wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .map(|m| js_sys::ArrayBuffer::from(m.buffer()).byte_length())
        .unwrap_or(0);
    Reflect::set(&v, &"wasmMemoryBytes".into(), &bytes.into())?;
    Ok(v)
}

/// The engine as the worker sees it. Every method returns a Promise; failures reject with an
/// `Error` whose `name` is `InputError` | `ModelError` | `StoreError` and whose `code` is stable.
#[wasm_bindgen]
pub struct WebRagCore {
    pub(crate) inner: Rc<Mutex<Core>>,
}

/// A `Promise` of `f`. `future_to_promise` is instantiated once, for a boxed future: a copy of
/// its machinery per future type cost the search build 3.4 KB gzipped in all.
pub(crate) fn promise(f: impl std::future::Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    let f: std::pin::Pin<Box<dyn std::future::Future<Output = Result<JsValue, JsValue>>>> = Box::pin(f);
    future_to_promise(f)
}

pub(crate) fn run<F, T>(f: F) -> Promise
where
    F: std::future::Future<Output = Result<T, Error>> + 'static,
    T: serde::Serialize,
{
    promise(async move {
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
    /// (default), `"cpu"` or `"gpu"` ([`DevicePreference`]); `precision` `"f32"` (default) or
    /// `"int8"`, the CPU path's arithmetic ([`crate::embed::Precision`]); `onEvent` receives embedder
    /// warnings such as `{type: "warning", code: "GPU_LOST", message}` for the core's lifetime;
    /// `pool` is the worker's embedding workers (`{threads, memoryBytes, embed}`, see
    /// [`pool::JsPool`]) or null for none.
    #[allow(clippy::too_many_arguments)]
    pub async fn open(
        name: String,
        model: JsValue,
        options: JsValue,
        on_progress: Option<Function>,
        device: Option<String>,
        precision: Option<String>,
        on_event: Option<Function>,
        pool: JsValue,
    ) -> Result<WebRagCore, JsValue> {
        let precision: crate::embed::Precision =
            precision.as_deref().unwrap_or("f32").parse().map_err(|e: crate::error::InputError| js_error(&e.into()))?;
        let preference: DevicePreference =
            device.as_deref().unwrap_or("auto").parse().map_err(|e: crate::error::InputError| js_error(&e.into()))?;
        let config: Config = self::options("options", &options).map_err(|e| js_error(&e.into()))?;
        let (files, id) = load_model(model, &on_progress).await?;
        let mut cpu = CpuEmbedder::from_files(id.as_deref().unwrap_or(crate::embed::DEFAULT_MODEL_ID), &files).map_err(|e| js_error(&e))?;
        cpu.set_precision(precision);
        report(&on_progress, &ProgressEvent { phase: crate::types::Phase::Device, done: 0, total: 1 });
        let embedder = if preference != DevicePreference::Cpu && preference != DevicePreference::Hashing && !platform::has_webgpu() {
            let detail = "this browser exposes no WebGPU (navigator.gpu)";
            if preference == DevicePreference::Gpu {
                return Err(js_error(&crate::error::GpuError::Unavailable { reason: detail.into() }.into()));
            }
            DeviceEmbedder::no_adapter(cpu, detail.into(), Box::new(JsClock))
        } else {
            DeviceEmbedder::open(cpu, preference, Box::new(JsClock)).await.map_err(|e| js_error(&e))?
        };
        if embedder.info().adapter.is_some()
            && let Some(name) = platform::adapter_name().await
        {
            embedder.set_adapter_name(name);
        }
        if let Some(f) = on_event {
            embedder.on_event(move |ev| {
                if let Ok(v) = to_js(ev) {
                    let _ = f.call1(&JsValue::NULL, &v);
                }
            });
        }
        if let Some(pool) = pool::JsPool::new(pool, crate::embed::Embedder::dim(&embedder)) {
            embedder.set_pool(Rc::new(pool));
        }
        report(&on_progress, &ProgressEvent { phase: crate::types::Phase::Device, done: 1, total: 1 });
        report(&on_progress, &ProgressEvent { phase: crate::types::Phase::Index, done: 0, total: 1 });
        let store = IdbStore::open(&name).await.map_err(|e| js_error(&e.into()))?;
        let engine = LazyEngine::open(store, Rc::new(embedder), config, Box::new(JsClock)).await.map_err(|e| js_error(&e))?;
        report(&on_progress, &ProgressEvent { phase: crate::types::Phase::Index, done: 1, total: 1 });
        Ok(WebRagCore { inner: Rc::new(Mutex::new(engine)) })
    }

    /// Adds documents (`[{id, text | bytes, title?, format?, url?, tags?, meta?}]`) as one transaction.
    /// Resolves to `{added, replaced, unchanged, chunks}`. The engine is held to parse the batch
    /// and to commit it, not during the forward passes ([`crate::engine::Engine::add`]'s steps),
    /// so `search` and the other reads answer meanwhile, from the knowledge base as it was.
    pub fn add(&self, docs: JsValue, on_progress: Option<Function>) -> Promise {
        let inner = self.inner.clone();
        let parsed: Result<Vec<JsDoc>, _> = if docs.is_undefined() || docs.is_null() {
            Err(crate::error::InputError::InvalidOption { name: "docs".into(), reason: "is not an array of documents".into() })
        } else {
            options("docs", &docs)
        };
        run(async move {
            let docs = parsed?;
            let docs = docs.into_iter().map(to_input).collect::<Result<Vec<_>, _>>()?;
            let mut cb = |ev: ProgressEvent| report(&on_progress, &ev);
            // Held to plan and to commit, not while embedding; a conflict with another tab's
            // commit plans again and keeps the vectors ([`crate::engine::add_shared`]).
            crate::engine::add_shared(&inner, docs, &mut cb).await
        })
    }

    /// Removes documents by id. Resolves to `{removed, unknown}`.
    pub fn remove(&self, ids: JsValue) -> Promise {
        let inner = self.inner.clone();
        let ids: Result<Vec<String>, _> = serde_wasm_bindgen::from_value(ids);
        run(async move {
            let ids = ids.map_err(|e| crate::error::InputError::InvalidOption { name: "ids".into(), reason: e.to_string() })?;
            let mut core = inner.lock().await;
            crate::ports::retry_on_conflict(crate::ports::WRITE_ATTEMPTS, async |_| core.remove(&ids).await).await
        })
    }

    /// Searches. `opts`: `{k = 10, mode = "hybrid" | "bm25" | "dense" | "graph" | "hybrid+graph",
    /// literal = false}`. Resolves to hits.
    pub fn search(&self, query: String, opts: JsValue) -> Promise {
        let inner = self.inner.clone();
        let opts: Result<SearchOptions, _> = options("options", &opts);
        run(async move {
            let opts = opts?;
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

    /// Atomic questions of a chunk (`null`: not atomized).
    pub fn questions(&self, chunk_id: String) -> Promise {
        let inner = self.inner.clone();
        run(async move { inner.lock().await.questions(&chunk_id).await })
    }

    /// The mind map the pseudo-graph holds for a document (`null`: none).
    #[wasm_bindgen(js_name = mindMap)]
    pub fn mind_map(&self, doc_id: String) -> Promise {
        let inner = self.inner.clone();
        run(async move { Ok::<_, Error>(inner.lock().await.graph().await?.mind_map(&doc_id)) })
    }

    /// Embeds texts with the engine's model (`string[]` → `number[][]`). `path`: `"cpu"` or
    /// `"gpu"` to bypass the routing (benchmarks), else null.
    pub fn embed(&self, texts: Vec<String>, path: JsValue) -> Promise {
        let inner = self.inner.clone();
        let path: Result<Option<crate::embed::EmbedPath>, _> =
            if path.is_undefined() || path.is_null() { Ok(None) } else { serde_wasm_bindgen::from_value(path).map(Some) };
        run(async move {
            let path = path.map_err(|e| crate::error::InputError::InvalidOption { name: "path".into(), reason: e.to_string() })?;
            let core = inner.lock().await;
            let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
            core.embedder()?.embed_on(&refs, path).await
        })
    }

    /// The embedding path: `{path: "gpu" | "cpu", queries, adapter, softwareAdapter, reason,
    /// crossover: {cpuMs, gpuMs} | null}` ([`crate::embed::EmbedderInfo`]).
    pub fn embedder(&self) -> Promise {
        let inner = self.inner.clone();
        run(async move { Ok::<_, Error>(inner.lock().await.embedder()?.info()) })
    }

    /// [`crate::types::Stats`], plus `wasmMemoryBytes`: the size of this worker's wasm linear
    /// memory (where every loaded index lives).
    pub fn stats(&self) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let stats = inner.lock().await.stats().map_err(|e| js_error(&e))?;
            stats_js(&stats)
        })
    }

    /// One step of background upkeep (`force`: seal every non-empty buffer and purge removed
    /// vectors from segments, to completion). Resolves to `null` when there was nothing to do,
    /// else `{collection, vectors, merged, segments}` (with `force`, an array of them).
    pub fn maintain(&self, force: bool) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let mut core = inner.lock().await;
            let r = if force {
                async { write_op!(core, eng => eng.maintain_all(true).await) }.await.map(|v| to_js(&v))
            } else {
                core.maintain(false).await.map(|v| to_js(&v))
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
        run(async move { inner.lock().await.documents().await })
    }

    /// One chunk by id (or null).
    pub fn chunk(&self, id: String) -> Promise {
        let inner = self.inner.clone();
        run(async move { inner.lock().await.chunk(&id).await })
    }

    /// Reads the store again when another tab (or worker) committed since this one read it
    /// ([`LazyEngine::refresh`]). Resolves to whether it did.
    pub fn refresh(&self) -> Promise {
        let inner = self.inner.clone();
        run(async move { inner.lock().await.refresh().await })
    }

    /// The store's generation this worker's view is of: it changes with every commit.
    pub fn generation(&self) -> Promise {
        let inner = self.inner.clone();
        run(async move { Ok::<_, Error>(inner.lock().await.generation()) })
    }

    /// Testing hook: the next commit aborts its IndexedDB transaction after `ops` of its writes
    /// ([`IdbStore::abort_next_commit_after`]): the call fails with `STORE_ABORTED` and nothing
    /// of the batch is stored.
    #[wasm_bindgen(js_name = abortNextCommitForTesting)]
    pub fn abort_next_commit_for_testing(&self, ops: usize) -> Promise {
        let inner = self.inner.clone();
        run(async move {
            if let Some(s) = inner.lock().await.store() {
                s.abort_next_commit_after(ops);
            }
            Ok::<_, Error>(())
        })
    }

    /// Testing hook: panics, as a bug in the engine would (the worker and the page then recover:
    /// `WORKER_FAILED`, a fresh worker).
    #[wasm_bindgen(js_name = panicForTesting)]
    pub fn panic_for_testing(&self) {
        panic!("panicForTesting: a deliberate panic");
    }

    /// Deletes everything in this knowledge base.
    pub fn clear(&self) -> Promise {
        let inner = self.inner.clone();
        run(async move { inner.lock().await.clear().await })
    }
}
