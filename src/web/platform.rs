//! The page's platform services behind the core's ports: the clocks ([`JsClock`]) and what the
//! browser says about WebGPU before wgpu is asked ([`has_webgpu`], [`adapter_name`]).
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
