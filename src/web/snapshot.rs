//! The site builder (cargo feature `builder`, the package's `build/webrag_bg.wasm`, which only
//! Node runs): `buildSnapshot` for `npx webrag index` (`bin/webrag.mjs` crawls the site and
//! writes the files), `quantizeWeights` for `npx webrag quantize` and `distillStatic` for
//! `npx webrag distill`, so a site owner needs no Rust toolchain. The same
//! [`crate::snapshot::build_snapshot`] as the native CLI: a keyword snapshot is the same bytes.
//! Pages never load this build.
use js_sys::{Array, Function, Promise, Uint8Array};

/// The builder's allocator: talc over [`GrowGeometric`]. Rust's default dlmalloc, like talc's
/// own wasm sources, grows the wasm memory by what one allocation lacks, often a single 64 KiB
/// page; every `memory.grow` costs V8 a new `ArrayBuffer` (and the JS views of the memory are
/// made again), so a keyword build of 3,000 CRUD pages spent a fifth of its time in the
/// allocator (`node --cpu-prof`). Pages never load this build, so its size is no page's cost.
#[cfg(not(target_feature = "atomics"))]
#[global_allocator]
static ALLOCATOR: talc::cell::TalcSyncCell<GrowGeometric, talc::wasm::WasmBinning> =
    talc::cell::TalcSyncCell::new_wasm(GrowGeometric { end: None });

/// A talc heap source that grows the wasm memory by at least half its current size (at most
/// 64 MiB at once), extending the heap when the new pages follow it: a build's memory grows in
/// a few dozen steps instead of thousands, for at most a third more memory than it uses.
#[derive(Debug)]
struct GrowGeometric {
    end: Option<std::ptr::NonNull<u8>>,
}

// SAFETY: `acquire` only grows the wasm memory and hands the new pages to `talc` (claim or
// extend); it allocates nothing and touches no other allocator.
unsafe impl talc::source::Source for GrowGeometric {
    fn acquire<B: talc::base::binning::Binning>(talc: &mut talc::base::Talc<Self, B>, layout: std::alloc::Layout) -> Result<(), ()> {
        const PAGE: usize = 64 << 10;
        // What this allocation needs, with room for talc's chunk tags and alignment, in pages.
        let need = layout.size().saturating_add(layout.align()).saturating_add(4 * talc::base::CHUNK_UNIT).div_ceil(PAGE);
        let current = core::arch::wasm32::memory_size::<0>();
        let pages = need.max((current / 2).min(1024));
        // Half the memory if it can be had, else what this allocation needs.
        let (first_page, grown) = match core::arch::wasm32::memory_grow::<0>(pages) {
            usize::MAX => match core::arch::wasm32::memory_grow::<0>(need) {
                usize::MAX => return Err(()),
                first => (first, need),
            },
            first => (first, pages),
        };
        let (start, bytes) = ((first_page * PAGE) as *mut u8, grown * PAGE);
        // (saturating: memory that reaches 4 GiB ends at the top of the address space)
        let new_end = start.wrapping_add(bytes.min(usize::MAX - start as usize));
        if let Some(old_end) = talc.source.end.take()
            && old_end.as_ptr() == start
        {
            // SAFETY: the pages from `old_end` to `new_end` were just added to the memory and
            // are the heap's continuation.
            talc.source.end = Some(unsafe { talc.extend(old_end, new_end) });
            return Ok(());
        }
        // SAFETY: `start..start + bytes` was just added to the memory: nothing else uses it.
        talc.source.end = unsafe { talc.claim(start, bytes) };
        if talc.source.end.is_some() { Ok(()) } else { Err(()) }
    }
}

use serde::Deserialize;
use wasm_bindgen::prelude::*;

use super::platform::JsClock;
use super::{js_error, option_error, report, to_js};
use crate::embed::hashing::HashingEmbedder;
use crate::embed::{BertConfig, CpuEmbedder, DEFAULT_MODEL_ID, ModelFiles, StaticModel, WordPiece};
use crate::engine::Engine;
use crate::error::{Error, InputError, Result};
use crate::ports::{MemoryStore, NoProgress};
use crate::snapshot::{PageFile, SitePages, SnapshotParams, build_site, sort_pages};
use crate::types::ProgressEvent;

/// A page file as `npx` crawled it: its `/`-separated path relative to the site root and its
/// size in bytes.
#[derive(Deserialize)]
struct Page {
    path: String,
    size: f64,
}

/// The pages' bytes, read through the crawl's `read(path) => Uint8Array` (which throws when the
/// file cannot be read), one page at a time.
struct JsPages(Function);

impl crate::snapshot::PageSource for JsPages {
    fn read(&mut self, page: &crate::snapshot::PageFile) -> std::result::Result<Vec<u8>, String> {
        match self.0.call1(&JsValue::NULL, &JsValue::from_str(&page.path)) {
            Ok(v) => v.dyn_into::<Uint8Array>().map(|a| a.to_vec()).map_err(|_| "read(path) did not return a Uint8Array".to_string()),
            Err(e) => Err(e
                .dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
                .or_else(|| e.as_string())
                .unwrap_or_else(|| "read(path) threw".into())),
        }
    }
}

/// The model's files: `config.json` and `tokenizer.json` always; `model.safetensors` for vectors.
#[derive(Deserialize)]
struct ModelBytes {
    #[serde(with = "serde_bytes")]
    config: Vec<u8>,
    #[serde(with = "serde_bytes")]
    tokenizer: Vec<u8>,
    #[serde(default, with = "serde_bytes")]
    weights: Option<Vec<u8>>,
    #[serde(default)]
    id: Option<String>,
    /// A static model file (`WRS1`, `distillStatic`'s output) for `vectors: 'static'`.
    #[serde(default, rename = "static", with = "serde_bytes")]
    static_model: Option<Vec<u8>>,
}

/// `{vectors: 'none' | 'chunks' | 'static', graph, kb}`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Options {
    #[serde(default)]
    vectors: Option<String>,
    #[serde(default)]
    graph: Option<bool>,
    #[serde(default)]
    kb: Option<bool>,
    #[serde(default, rename = "siteRoot")]
    site_root: Option<String>,
}

/// Builds a snapshot of `pages` (`[{path, size}]`: the crawl's page files, read through `read`,
/// `(path) => Uint8Array`, which throws when a file cannot be read; each page is read twice, once
/// to sort and once in its batch, so the site is never held whole) with `model` (`{config, tokenizer,
/// weights?, static?, id?}` as `Uint8Array`s) and `options` (`{vectors: 'none' (default) |
/// 'chunks' | 'static', graph: true, kb: false, siteRoot}`: `siteRoot` is the manifest's (the
/// site's root seen from the snapshot's folder, or where it is served); `chunks` embeds every chunk and needs `weights`;
/// `static` embeds with the static model file `static` (weighted by the site's idf, shipped as
/// the snapshot's static tier, as `webrag index --vectors static`); the graph shards come with
/// vectors unless `graph: false`). `onProgress` receives `{phase: 'index', done, total}` in
/// pages. Resolves to `{files: [[name, Uint8Array]…] (manifest.json last), summary, skipped,
/// noindex, searchPages, unread}` (`skipped`: the ids of pages without text to index; `noindex`:
/// those marked `<meta name="robots" content="noindex">`; `searchPages`: the site's own search
/// pages, a search box and little text; `unread`: `[path, why]` of those that could
/// not be read, are larger than `maxDocumentBytes()` or are not UTF-8 text; all left out);
/// rejects with `InputError` (`INVALID_OPTION`), `ModelError`, or `StoreError`
/// (`STORE_BACKEND`) when a page cannot be read again in its batch (the site changed).
#[wasm_bindgen(js_name = buildSnapshot)]
pub fn build_site_snapshot(pages: JsValue, read: Function, model: JsValue, options: JsValue, on_progress: Option<Function>) -> Promise {
    super::promise(async move {
        let pages: Vec<Page> = serde_wasm_bindgen::from_value(pages).map_err(|e| option_error("pages", e))?;
        let pages: Vec<PageFile> = pages.into_iter().map(|p| PageFile { path: p.path, size: p.size.max(0.0) as u64, lang: None }).collect();
        let mut source = JsPages(read);
        let model: ModelBytes = serde_wasm_bindgen::from_value(model).map_err(|e| option_error("model", e))?;
        let options: Options = super::options("options", &options).map_err(|e| super::js_error(&e.into()))?;
        let run = async {
            let mode = options.vectors.as_deref().unwrap_or("none");
            let vectors = match mode {
                "none" => false,
                "chunks" | "static" => true,
                other => {
                    return Err(Error::from(InputError::InvalidOption {
                        name: "vectors".into(),
                        reason: format!("{other:?}: expected 'none', 'chunks' or 'static'"),
                    }));
                }
            };
            let site_root = match options.site_root.as_deref() {
                Some(u) => Some(crate::snapshot::check_site_url("siteRoot", u)?),
                None => None,
            };
            let p = SnapshotParams {
                vectors,
                graph: vectors && options.graph.unwrap_or(true),
                kb: options.kb.unwrap_or(false),
                site_root,
                ..Default::default()
            };
            let p = if mode == "static" { p.static_tier() } else { p };
            // The static model, weighted by the site's pages as they are sorted (one parse of each).
            let mut static_m = if mode == "static" {
                let Some(bytes) = model.static_model.as_deref() else {
                    return Err(InputError::InvalidOption {
                        name: "vectors".into(),
                        reason: "'static' needs a static model file (model.static)".into(),
                    }
                    .into());
                };
                let config = BertConfig::from_json(&model.config)?;
                let tokenizer = WordPiece::from_bytes(&model.tokenizer, config.max_seq_len())?;
                Some(StaticModel::from_bytes(tokenizer, bytes)?)
            } else {
                None
            };
            let SitePages { pages, empty, noindex, search, unread, fields } = sort_pages(pages, &mut source, static_m.as_mut());
            let unread: Vec<(String, String)> = unread.into_iter().map(|(p, why)| (p.path, why)).collect();
            let id = model.id.clone().unwrap_or_else(|| DEFAULT_MODEL_ID.to_string());
            let built = if let Some(m) = static_m {
                build(SiteEmbedder::Static(m), pages, &mut source, &p, &fields, &on_progress).await
            } else if vectors {
                let Some(weights) = model.weights else {
                    return Err(
                        InputError::InvalidOption { name: "vectors".into(), reason: "'chunks' needs the model's weights".into() }.into()
                    );
                };
                let files = ModelFiles { config: model.config, tokenizer: model.tokenizer, weights };
                build(SiteEmbedder::Model(CpuEmbedder::from_files(&id, &files)?), pages, &mut source, &p, &fields, &on_progress).await
            } else {
                // Keyword only: the tokenizer bounds the chunks; no model runs.
                let config = BertConfig::from_json(&model.config)?;
                let tokenizer = WordPiece::from_bytes(&model.tokenizer, config.max_seq_len())?;
                let keyword = SiteEmbedder::Keyword(HashingEmbedder::from_tokenizer(tokenizer, &id, config.hidden_size));
                build(keyword, pages, &mut source, &p, &fields, &on_progress).await
            };
            built.map(|(files, summary)| (files, summary, empty, noindex, search, unread))
        };
        let (files, summary, skipped, noindex, search, unread) = run.await.map_err(|e| js_error(&e))?;
        let out = Array::new();
        for (name, bytes) in files {
            let pair = Array::new();
            pair.push(&JsValue::from(name));
            pair.push(&Uint8Array::from(bytes.as_slice()).into());
            out.push(&pair);
        }
        let result = js_sys::Object::new();
        js_sys::Reflect::set(&result, &"files".into(), &out)?;
        js_sys::Reflect::set(&result, &"summary".into(), &to_js(&summary)?)?;
        js_sys::Reflect::set(&result, &"skipped".into(), &to_js(&skipped)?)?;
        js_sys::Reflect::set(&result, &"noindex".into(), &to_js(&noindex)?)?;
        js_sys::Reflect::set(&result, &"searchPages".into(), &to_js(&search)?)?;
        js_sys::Reflect::set(&result, &"unread".into(), &to_js(&unread)?)?;
        Ok(result.into())
    })
}

/// The snapshot builder's embedder: the model, the static model, or (keyword only) the model's
/// tokenizer alone. One type for all, so the engine is compiled into the `.wasm` once for them.
enum SiteEmbedder {
    Model(CpuEmbedder),
    Static(StaticModel),
    Keyword(HashingEmbedder<'static>),
}

impl crate::embed::Embedder for SiteEmbedder {
    fn model_id(&self) -> &str {
        match self {
            Self::Model(m) => m.model_id(),
            Self::Static(m) => m.model_id(),
            Self::Keyword(k) => k.model_id(),
        }
    }
    fn dim(&self) -> usize {
        match self {
            Self::Model(m) => m.dim(),
            Self::Static(m) => m.dim(),
            Self::Keyword(k) => k.dim(),
        }
    }
    fn max_tokens(&self) -> usize {
        match self {
            Self::Model(m) => m.max_tokens(),
            Self::Static(m) => m.max_tokens(),
            Self::Keyword(k) => k.max_tokens(),
        }
    }
    fn token_counter(&self) -> &dyn crate::text::TokenCounter {
        match self {
            Self::Model(m) => m.token_counter(),
            Self::Static(m) => m.token_counter(),
            Self::Keyword(k) => k.token_counter(),
        }
    }
    async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        match self {
            Self::Model(m) => m.embed(texts).await,
            Self::Static(m) => m.embed(texts).await,
            Self::Keyword(k) => k.embed(texts).await,
        }
    }
    async fn embed_late(&self, texts: &[&str], pools: &[crate::embed::LatePools]) -> Result<Option<Vec<crate::embed::LateVectors>>> {
        match self {
            Self::Model(m) => m.embed_late(texts, pools).await,
            Self::Static(m) => m.embed_late(texts, pools).await,
            Self::Keyword(_) => Ok(None),
        }
    }
    fn static_model(&self) -> Option<&StaticModel> {
        match self {
            Self::Static(m) => Some(m),
            _ => None,
        }
    }
}

/// Indexes `pages` in memory (read from `source` in [`crate::snapshot::site_batches`]) and builds the snapshot; the files in name
/// order with `manifest.json` last (a reader never sees a manifest before the shards it names).
async fn build(
    embedder: SiteEmbedder,
    pages: Vec<PageFile>,
    source: &mut JsPages,
    p: &SnapshotParams,
    fields: &crate::snapshot::SiteFields,
    on_progress: &Option<Function>,
) -> Result<(Vec<(String, Vec<u8>)>, crate::snapshot::SnapshotSummary)> {
    // The snapshot is built from the engine's memory: the records are kept only for the
    // knowledge-base file.
    let store = if p.kb { MemoryStore::new() } else { MemoryStore::discarding() };
    let mut eng = Engine::open(store, embedder, p.engine_config(), Box::new(JsClock)).await?;
    crate::snapshot::prepare_site_engine(&mut eng, p.kb);
    let total = pages.len();
    let mut done = 0;
    for batch in crate::snapshot::site_batches(pages, source) {
        let batch = batch?;
        done += batch.len();
        eng.add(batch, &mut NoProgress).await?;
        crate::snapshot::seal_after_batch(&mut eng, p).await?;
        report(on_progress, &ProgressEvent { phase: crate::types::Phase::Index, done, total });
    }
    let (snap, summary) = build_site(&mut eng, p, fields).await?;
    let (manifest, mut files): (Vec<_>, Vec<_>) = snap.files.into_iter().partition(|(name, _)| name == "manifest.json");
    files.extend(manifest);
    Ok((files, summary))
}

/// `maxDocumentBytes()`: the largest page a site build indexes, in bytes
/// ([`crate::snapshot::max_page_bytes`]); `npx webrag index` leaves larger files unread, with a
/// warning.
#[wasm_bindgen(js_name = maxDocumentBytes)]
pub fn max_document_bytes() -> usize {
    crate::snapshot::max_page_bytes()
}

/// `quantizeWeights(weights, format)`: `model.safetensors` (a `Uint8Array`) rewritten for a
/// page's query encoder ([`crate::embed::quantize`]): `format` `'int8'` (per-row scales, about a
/// quarter of f32's bytes) or `'f16'`; the same bytes as the native `webrag quantize`. For
/// `npx webrag quantize`. Throws `InputError` `INVALID_OPTION` (another format) or `ModelError`
/// `MODEL_WEIGHTS_CORRUPT`.
#[wasm_bindgen(js_name = quantizeWeights)]
pub fn quantize_weights(weights: &[u8], format: &str) -> std::result::Result<Vec<u8>, JsValue> {
    let run = || -> Result<Vec<u8>> { crate::embed::quantize_weights(weights, format.parse().map_err(Error::from)?) };
    run().map_err(|e| js_error(&e))
}

/// `distillStatic(config, tokenizer, weights, dim, modelId, onProgress)`: a static model distilled
/// from the BERT model whose `config.json`, `tokenizer.json` and `model.safetensors` are given
/// (`Uint8Array`s), with `dim` dimensions ([`crate::embed::distill`]); the `WRS1` file's bytes,
/// which record `modelId` as their source (`undefined`: all-MiniLM-L6-v2's id). For
/// `npx webrag distill`. `onProgress` receives `{phase: 'distill', done, total}` in tokens.
/// Throws `InputError` `INVALID_OPTION` (`dim` 0 or past the model's) or `ModelError`.
#[wasm_bindgen(js_name = distillStatic)]
pub fn distill_static(
    config: Vec<u8>,
    tokenizer: Vec<u8>,
    weights: Vec<u8>,
    dim: usize,
    model_id: Option<String>,
    on_progress: Option<Function>,
) -> std::result::Result<Vec<u8>, JsValue> {
    let run = || -> Result<Vec<u8>> {
        let files = ModelFiles { config, tokenizer, weights };
        let model = CpuEmbedder::from_files(model_id.as_deref().unwrap_or(DEFAULT_MODEL_ID), &files)?;
        let tok = WordPiece::from_bytes(&files.tokenizer, model.tokenizer().max_len())?;
        let mut progress =
            |done: usize, total: usize| report(&on_progress, &ProgressEvent { phase: crate::types::Phase::Distill, done, total });
        Ok(crate::embed::distill::distill(&model, tok, dim, &mut progress)?.to_bytes())
    };
    run().map_err(|e| js_error(&e))
}
