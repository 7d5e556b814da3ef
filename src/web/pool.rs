//! The page's embedding workers: [`JsPool`], the engine's view of the pool `worker.js` runs
//! ([`crate::embed::CpuPool`]), and [`WebRagEmbedder`], the model each of those workers holds.
//!
//! The engine's worker tokenizes and sends token ids (`Uint32Array`s, flat with their lengths);
//! a pool worker runs the forward pass and sends the vectors back (a `Float32Array`, transferred).
use futures::future::LocalBoxFuture;
use js_sys::{Float32Array, Function, Promise, Reflect, Uint32Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::{js_error, load_model};
use crate::embed::{CpuEmbedder, CpuPool, Embedder, Precision};

/// `worker.js`'s pool: `{threads, memoryBytes, embed(ids: Uint32Array, lens: Uint32Array):
/// Promise<Float32Array>}` (`memoryBytes`: one started worker's wasm memory, or null).
pub(crate) struct JsPool {
    obj: JsValue,
    threads: usize,
    dim: usize,
}

impl JsPool {
    /// The pool `obj` for vectors of `dim` values; `None` when `obj` is not a pool (null: the
    /// page asked for no workers).
    pub(crate) fn new(obj: JsValue, dim: usize) -> Option<Self> {
        if !obj.is_object() {
            return None;
        }
        let threads = Reflect::get(&obj, &"threads".into()).ok()?.as_f64()?;
        (threads >= 1.0).then(|| JsPool { obj, threads: threads as usize, dim })
    }
}

fn describe(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>().map_or_else(|| format!("{e:?}"), |e| String::from(e.message()))
}

impl CpuPool for JsPool {
    fn threads(&self) -> usize {
        self.threads
    }

    fn memory_bytes(&self) -> Option<usize> {
        Reflect::get(&self.obj, &"memoryBytes".into()).ok()?.as_f64().map(|b| b as usize)
    }

    fn embed_ids(&self, ids: &[Vec<u32>]) -> LocalBoxFuture<'static, Result<Vec<Vec<f32>>, String>> {
        let flat: Vec<u32> = ids.concat();
        let lens: Vec<u32> = ids.iter().map(|s| s.len() as u32).collect();
        let (obj, dim, n) = (self.obj.clone(), self.dim, ids.len());
        Box::pin(async move {
            let embed: Function = Reflect::get(&obj, &"embed".into()).map_err(|e| describe(&e))?.dyn_into().map_err(|e| describe(&e))?;
            let p = embed.call2(&obj, &Uint32Array::from(&flat[..]), &Uint32Array::from(&lens[..])).map_err(|e| describe(&e))?;
            let p: Promise = p.dyn_into().map_err(|e| describe(&e))?;
            let out: Float32Array = JsFuture::from(p).await.map_err(|e| describe(&e))?.dyn_into().map_err(|e| describe(&e))?;
            if out.length() as usize != n * dim {
                return Err(format!("{} values for {n} vectors of {dim}", out.length()));
            }
            Ok(out.to_vec().chunks(dim).map(<[f32]>::to_vec).collect())
        })
    }
}

/// The model of one embedding worker: the engine's model and precision, forward passes only.
#[wasm_bindgen]
pub struct WebRagEmbedder {
    cpu: CpuEmbedder,
}

#[wasm_bindgen]
impl WebRagEmbedder {
    /// Loads `model` as `WebRagCore.open` takes it (a base URL, `{url, …}`: read from the Cache
    /// API where the engine's worker stored it, or bytes) with `precision` (`"f32"` | `"int8"`).
    ///
    /// Errors: those of `WebRagCore.open`'s model loading (`ModelError`).
    pub async fn open(model: JsValue, precision: Option<String>) -> Result<WebRagEmbedder, JsValue> {
        let precision: Precision =
            precision.as_deref().unwrap_or("f32").parse().map_err(|e: crate::error::InputError| js_error(&e.into()))?;
        let (files, id) = load_model(model, &None).await?;
        let mut cpu = CpuEmbedder::from_files(id.as_deref().unwrap_or(crate::embed::DEFAULT_MODEL_ID), &files).map_err(|e| js_error(&e))?;
        cpu.set_precision(precision);
        Ok(WebRagEmbedder { cpu })
    }

    /// The vectors of token-id sequences given flat (`ids` concatenated, `lens` their lengths,
    /// `[CLS]`/`[SEP]` included), flat: `lens.length × dim` values. Empty when the input does
    /// not describe valid sequences (lengths that do not add up, a length of 0 or over the
    /// model's maximum, an id outside the vocabulary): the engine then embeds in place.
    #[wasm_bindgen(js_name = embedIds)]
    pub fn embed_ids(&self, ids: &[u32], lens: &[u32]) -> Vec<f32> {
        let (max, vocab) = (self.cpu.max_tokens(), self.cpu.bert().config().vocab_size);
        let mut seqs = Vec::with_capacity(lens.len());
        let mut at = 0usize;
        for &l in lens {
            let l = l as usize;
            if !(1..=max).contains(&l) {
                return Vec::new();
            }
            let Some(seq) = ids.get(at..at + l).filter(|s| s.iter().all(|&i| (i as usize) < vocab)) else {
                return Vec::new();
            };
            seqs.push(seq.to_vec());
            at += l;
        }
        if at != ids.len() {
            return Vec::new();
        }
        self.cpu.embed_ids(&seqs).concat()
    }

    /// This worker's wasm memory, in bytes.
    #[wasm_bindgen(js_name = memoryBytes)]
    pub fn memory_bytes() -> f64 {
        wasm_bindgen::memory()
            .dyn_into::<js_sys::WebAssembly::Memory>()
            .map(|m| js_sys::ArrayBuffer::from(m.buffer()).byte_length() as f64)
            .unwrap_or(0.0)
    }
}
