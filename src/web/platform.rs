//! The page's platform services behind the core's ports: the clocks ([`JsClock`]), what the
//! browser says about WebGPU before wgpu is asked ([`has_webgpu`], [`adapter_name`]) and, in the
//! search build, the parser module's Markdown and HTML ([`markup_by_module`]).
use js_sys::Reflect;
use wasm_bindgen::{JsCast, JsValue};

use crate::ports::Clock;

/// `Date.now()` for stored timestamps, `performance.now()` for durations.
pub struct JsClock;

impl Clock for JsClock {
    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }
    fn monotonic_ms(&self) -> f64 {
        Reflect::get(&js_sys::global(), &"performance".into())
            .ok()
            .and_then(|p| p.dyn_into::<web_sys::Performance>().ok())
            .map_or_else(js_sys::Date::now, |p| p.now())
    }
}

fn get(o: &JsValue, k: &str) -> Option<JsValue> {
    Reflect::get(o, &k.into()).ok().filter(|v| !v.is_undefined() && !v.is_null())
}

/// Whether the global scope exposes `navigator.gpu` (absent in browsers without WebGPU and in
/// insecure contexts).
pub fn has_webgpu() -> bool {
    get(&js_sys::global(), "navigator").and_then(|n| get(&n, "gpu")).is_some()
}

/// `vendor architecture (WebGPU[, fallback adapter])` from `GPUAdapter.info` (wgpu's web backend
/// leaves the adapter name empty). One extra `requestAdapter()`; `None` when anything is missing.
pub async fn adapter_name() -> Option<String> {
    let gpu = get(&get(&js_sys::global(), "navigator")?, "gpu")?;
    let request: js_sys::Function = get(&gpu, "requestAdapter")?.into();
    let promise: js_sys::Promise = request.call0(&gpu).ok()?.into();
    let adapter = wasm_bindgen_futures::JsFuture::from(promise).await.ok().filter(|a| !a.is_null())?;
    let info = get(&adapter, "info")?;
    let text = |k: &str| get(&info, k).and_then(|v| v.as_string()).unwrap_or_default();
    let fallback = get(&info, "isFallbackAdapter").and_then(|v| v.as_bool()).unwrap_or(false);
    let what =
        [text("vendor"), text("architecture"), text("description")].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ");
    Some(format!(
        "{} (WebGPU{})",
        if what.is_empty() { "unnamed adapter".into() } else { what },
        if fallback { ", fallback adapter" } else { "" }
    ))
}

/// The page builds' `ports::platform_stem`: `self.__webragStem(tag, word)`, which the worker
/// installs (src/web/js/worker.js, `loadStems`): the stem from the language's stemmer module, or
/// `undefined` when it has none loaded for `tag`.
#[cfg(not(feature = "stem"))]
pub fn stem_by_module(tag: &str, word: &str) -> Option<String> {
    let f = get(&js_sys::global(), "__webragStem").and_then(|f| f.dyn_into::<js_sys::Function>().ok())?;
    f.call2(&JsValue::NULL, &tag.into(), &word.into()).ok()?.as_string()
}

/// The search build's `ports::parse_markup`: `self.__webragMarkup(text, format)`, which the worker
/// installs once it has compiled the parser module (src/web/js/worker.js, `loadMarkup`): the
/// parse as `text::ParsedWire` JSON, or why there is none.
#[cfg(not(feature = "markup"))]
pub fn markup_by_module(text: &str, format: crate::types::Format) -> Result<String, String> {
    let f = get(&js_sys::global(), "__webragMarkup")
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .ok_or_else(|| "the parser module (search/markup.wasm) is not loaded in this worker".to_string())?;
    match f.call2(&JsValue::NULL, &text.into(), &format.name().into()) {
        Ok(reply) => reply.as_string().ok_or_else(|| "the parser module returned no text".into()),
        Err(e) => Err(get(&e, "message").and_then(|m| m.as_string()).or_else(|| e.as_string()).unwrap_or_else(|| format!("{e:?}"))),
    }
}
