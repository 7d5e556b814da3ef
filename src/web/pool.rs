//! The page's embedding workers: [`JsPool`], the engine's view of the pool `worker.js` runs
//! ([`crate::embed::CpuPool`]), and [`WebRagEmbedder`], the model each of those workers holds.
//!
//! The engine's worker tokenizes and sends token ids (`Uint32Array`s, flat with their lengths);
//! a pool worker runs the forward pass and sends the vectors back (a `Float32Array`, transferred).
use js_sys::{Float32Array, Function, Promise, Reflect, Uint32Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::{js_error, load_model};
use crate::embed::device::{PoolCall, decode_pools, encode_pools};
use crate::embed::{CpuEmbedder, CpuPool, Embedder, PooledVectors, Precision};

/// `worker.js`'s pool: `{threads, memoryBytes, embed(ids: Uint32Array, lens: Uint32Array, pools:
/// Uint32Array): Promise<Float32Array>}` (`memoryBytes`: one started worker's wasm memory, or
/// null; `pools`: see [`WebRagEmbedder::embed_ids`]).
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

    fn embed_ids(&self, ids: &[Vec<u32>]) -> PoolCall<Vec<Vec<f32>>> {
        let call = self.call(ids, &[]);
        Box::pin(async move { Ok(call.await?.into_iter().map(|(v, _)| v).collect()) })
    }

    fn embed_pooled(&self, ids: &[Vec<u32>], pools: &[Vec<Vec<usize>>]) -> PoolCall<Vec<PooledVectors>> {
        self.call(ids, pools)
    }
}

impl JsPool {
    /// One call of the pool's `embed`: each sequence's vector and its pools' vectors.
    fn call(&self, ids: &[Vec<u32>], pools: &[Vec<Vec<usize>>]) -> PoolCall<Vec<PooledVectors>> {
        let flat: Vec<u32> = ids.concat();
        let lens: Vec<u32> = ids.iter().map(|s| s.len() as u32).collect();
        let counts: Vec<usize> = (0..ids.len()).map(|b| pools.get(b).map_or(0, Vec::len)).collect();
        let encoded = encode_pools(ids.len(), pools);
        let (obj, dim) = (self.obj.clone(), self.dim);
        Box::pin(async move {
            let embed: Function = Reflect::get(&obj, &"embed".into()).map_err(|e| describe(&e))?.dyn_into().map_err(|e| describe(&e))?;
            let args = [Uint32Array::from(&flat[..]), Uint32Array::from(&lens[..]), Uint32Array::from(&encoded[..])];
            let p = embed.apply(&obj, &args.iter().collect()).map_err(|e| describe(&e))?;
            let p: Promise = p.dyn_into().map_err(|e| describe(&e))?;
            let out: Float32Array = JsFuture::from(p).await.map_err(|e| describe(&e))?.dyn_into().map_err(|e| describe(&e))?;
            let want: usize = counts.iter().map(|c| (1 + c) * dim).sum();
            if out.length() as usize != want {
                return Err(format!("{} values where {want} were expected", out.length()));
            }
            let out = out.to_vec();
            let mut rows = out.chunks(dim).map(<[f32]>::to_vec);
            Ok(counts.iter().map(|&c| (rows.next().unwrap_or_default(), rows.by_ref().take(c).collect())).collect())
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
    /// `[CLS]`/`[SEP]` included), flat: per sequence its vector, then (late chunking) one per
    /// pool of token positions given in `pools` (per sequence its pool count, then per pool its
    /// length and positions; empty: no pools). Empty when the input does not describe valid
    /// sequences (lengths that do not add up, a length of 0 or over the model's maximum, an id
    /// outside the vocabulary, malformed pools): the engine then embeds in place.
    #[wasm_bindgen(js_name = embedIds)]
    pub fn embed_ids(&self, ids: &[u32], lens: &[u32], pools: &[u32]) -> Vec<f32> {
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
        let Some(pools) = decode_pools(pools, seqs.len(), max) else { return Vec::new() };
        self.cpu.bert().embed_pooled(&seqs, &pools).into_iter().flat_map(|(v, ps)| std::iter::once(v).chain(ps)).flatten().collect()
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
