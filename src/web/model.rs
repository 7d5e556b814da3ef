//! Model download in the page: `config.json`, `tokenizer.json` and `model.safetensors` from a
//! base URL over `fetch`, streamed with byte progress, checked against pinned sizes/SHA-256s,
//! and kept in the Cache API (cache [`CACHE_NAME`], keyed by file URL) so that a second load makes
//! no network request.
//!
//! Model files at a URL are treated as immutable: to pick up a changed file at the same URL, pin
//! its `sha256` (a stale cached copy then fails the check, is evicted and is fetched again) or pass
//! `cache: false`. Without the Cache API (an insecure origin), files are fetched every time.
use std::collections::BTreeMap;

use js_sys::{Function, Promise, Reflect, Uint8Array};
use serde::Deserialize;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::report;
use crate::embed::{FileCheck, ModelFiles, file_error};
use crate::error::Error;
use crate::types::ProgressEvent;

/// Cache API cache holding model files.
pub const CACHE_NAME: &str = "webrag-models-v1";

/// The three files of a model, in load order.
pub const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Where a model comes from: `{url, id?, cache?, files?}` in JS.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSpec {
    /// Base URL of the folder holding the three files (a trailing `/` is added if missing).
    pub url: String,
    /// Model id recorded in the knowledge base (default: all-MiniLM-L6-v2's).
    #[serde(default)]
    pub id: Option<String>,
    /// Use the Cache API (default true).
    #[serde(default = "yes")]
    pub cache: bool,
    /// Pinned sizes / SHA-256s by file name, e.g. `{"model.safetensors": {size, sha256}}`.
    #[serde(default)]
    pub files: BTreeMap<String, FileCheck>,
}

fn yes() -> bool {
    true
}

impl ModelSpec {
    /// A spec for a bare base URL.
    pub fn url(url: &str) -> Self {
        ModelSpec { url: url.into(), id: None, cache: true, files: BTreeMap::new() }
    }
}

fn js_err(file: &str, what: &str, e: JsValue) -> Error {
    let msg = e.dyn_ref::<js_sys::Error>().map_or_else(|| format!("{e:?}"), |e| String::from(e.message()));
    file_error(file, format!("{what}: {msg}"))
}

async fn call(target: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let f: Function = Reflect::get(target, &method.into())?.dyn_into()?;
    let p = f.apply(target, &args.iter().collect())?;
    JsFuture::from(p.dyn_into::<Promise>()?).await
}

/// `caches.open(CACHE_NAME)`, or `None` where the Cache API is missing (insecure origins).
async fn open_cache() -> Option<web_sys::Cache> {
    let caches = Reflect::get(&js_sys::global(), &"caches".into()).ok().filter(|c| !c.is_undefined())?;
    call(&caches, "open", &[CACHE_NAME.into()]).await.ok()?.dyn_into().ok()
}

/// Deletes the model cache ([`CACHE_NAME`]). Resolves to whether it existed.
pub async fn clear_cache() -> bool {
    let Some(caches) = Reflect::get(&js_sys::global(), &"caches".into()).ok().filter(|c| !c.is_undefined()) else { return false };
    call(&caches, "delete", &[CACHE_NAME.into()]).await.ok().and_then(|v| v.as_bool()).unwrap_or(false)
}

/// Downloads (or reads from the cache) the three model files, reporting
/// `{phase: "model", done, total}` in bytes (`total` from the `Content-Length` headers; 0 when the
/// server sends none).
///
/// Errors: [`crate::error::ModelError::FileUnavailable`] (HTTP error, network failure),
/// [`crate::error::ModelError::Integrity`] (size or SHA-256 differs from `spec.files`).
pub async fn fetch_model(spec: &ModelSpec, cb: &Option<Function>) -> Result<ModelFiles, Error> {
    let base = if spec.url.ends_with('/') { spec.url.clone() } else { format!("{}/", spec.url) };
    let cache = if spec.cache { open_cache().await } else { None };
    // Responses first (headers give the total), then the bodies.
    let mut responses = Vec::new();
    for name in FILES {
        let url = format!("{base}{name}");
        let cached = match &cache {
            Some(c) => JsFuture::from(c.match_with_str(&url)).await.ok().and_then(|r| r.dyn_into::<web_sys::Response>().ok()),
            None => None,
        };
        let (resp, from_cache) = match cached {
            Some(r) => (r, true),
            None => {
                let r: web_sys::Response =
                    gloo_net::http::Request::get(&url).send().await.map_err(|e| file_error(name, format!("{url}: {e}")))?.into();
                if !r.ok() {
                    return Err(file_error(name, format!("{url}: HTTP {}", r.status())));
                }
                (r, false)
            }
        };
        responses.push((name, url, resp, from_cache));
    }
    let total: usize = responses
        .iter()
        .map(|(_, _, r, _)| r.headers().get("content-length").ok().flatten().and_then(|v| v.parse::<usize>().ok()).unwrap_or(0))
        .fold(0, usize::saturating_add);
    let mut done = 0;
    let mut files = Vec::new();
    for (name, url, resp, from_cache) in responses {
        let bytes = read_body(name, &url, &resp, &mut done, total, cb).await?;
        let check = spec.files.get(name).cloned().unwrap_or_default();
        if let Err(e) = check.verify(name, &bytes) {
            if let (true, Some(c)) = (from_cache, &cache) {
                // A stale or corrupt cached copy: evict it so the next load fetches again.
                let _ = JsFuture::from(c.delete_with_str(&url)).await;
            }
            return Err(e);
        }
        if let (false, Some(c)) = (from_cache, &cache) {
            let mut copy = bytes.clone();
            if let Ok(r) = web_sys::Response::new_with_opt_u8_array(Some(&mut copy)) {
                // Caching is best effort (quota): a failure only costs a download next time.
                let _ = JsFuture::from(c.put_with_str(&url, &r)).await;
            }
        }
        files.push(bytes);
    }
    report(cb, &ProgressEvent { phase: crate::types::Phase::Model, done, total: total.max(done) });
    let weights = files.pop().unwrap_or_default();
    let tokenizer = files.pop().unwrap_or_default();
    let config = files.pop().unwrap_or_default();
    Ok(ModelFiles { config, tokenizer, weights })
}

/// Reads a response body chunk by chunk, reporting cumulative bytes.
async fn read_body(
    name: &str,
    url: &str,
    resp: &web_sys::Response,
    done: &mut usize,
    total: usize,
    cb: &Option<Function>,
) -> Result<Vec<u8>, Error> {
    let Some(body) = resp.body() else {
        return Ok(Vec::new());
    };
    let reader: web_sys::ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut out = Vec::new();
    // Sized once from Content-Length (up to 512 MiB), so the body is not copied as it grows:
    // wasm memory never shrinks, and the growth's peak would stay for the worker's lifetime.
    let declared = resp.headers().get("content-length").ok().flatten().and_then(|v| v.parse::<usize>().ok()).unwrap_or(0);
    let _ = out.try_reserve_exact(declared.min(512 << 20));
    loop {
        let chunk = JsFuture::from(reader.read()).await.map_err(|e| js_err(name, url, e))?;
        if Reflect::get(&chunk, &"done".into()).ok().and_then(|d| d.as_bool()).unwrap_or(true) {
            break;
        }
        let value: Uint8Array =
            Reflect::get(&chunk, &"value".into()).map_err(|e| js_err(name, url, e))?.dyn_into().map_err(|e| js_err(name, url, e))?;
        let at = out.len();
        out.resize(at + value.length() as usize, 0);
        value.copy_to(&mut out[at..]);
        *done += value.length() as usize;
        report(cb, &ProgressEvent { phase: crate::types::Phase::Model, done: *done, total: total.max(*done) });
    }
    Ok(out)
}
