//! What the full build adds to [`WebRagCore`] (cargo feature `full`, on by default): the ask
//! pipeline with the page's LLM client (`decompose`, `ask`, `enrich`, `testLlm`, traces and
//! memory, `cancel`), the knowledge-base file (`exportKb`, `importKb`: gzip JSON of every record,
//! [`crate::kb_file`]) and the GPU engine's diagnostics (`profileGpu`, `loseGpuForTesting`). The
//! search build (`webrag/search`, no default features) leaves them out, with the GPU engine
//! itself and the static-site snapshot builder, so a page that only searches does not download
//! them.
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;

use super::platform::JsClock;
use super::{WebRagCore, cancel_token, js_error, llm, promise, report, run, stats_js, to_js};
use crate::error::Error;
use crate::types::ProgressEvent;

/// Options as `T` ([`super::options`]); `cancelId` is ignored.
fn parse_options<T: serde::de::DeserializeOwned + Default>(what: &str, options: &JsValue) -> Result<T, crate::error::InputError> {
    if options.is_undefined() || options.is_null() {
        return Ok(T::default());
    }
    let copy = js_sys::Object::assign(&js_sys::Object::new(), options.unchecked_ref());
    let _ = Reflect::delete_property(&copy, &"cancelId".into());
    super::options(what, &copy.into())
}

#[wasm_bindgen]
impl WebRagCore {
    /// The whole knowledge base as one file (`Uint8Array`: gzip-compressed JSON of every stored
    /// record, [`crate::kb_file`]).
    #[wasm_bindgen(js_name = exportKb)]
    pub fn export_kb(&self) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let core = inner.lock().await;
            // Read a page at a time, never loaded whole; read again when another tab commits
            // meanwhile.
            // The file leaves wasm memory in pieces as it is compressed.
            let file =
                crate::ports::retry_on_conflict(crate::ports::WRITE_ATTEMPTS, async |_| core.export_kb_to(JsPieces::default()).await);
            match file.await.and_then(JsPieces::into_bytes) {
                Ok(bytes) => Ok(bytes.into()),
                Err(e) => Err(js_error(&e)),
            }
        })
    }

    /// Replaces this knowledge base with the one in `bytes` (a file from `exportKb`), checked
    /// whole first ([`Engine::import_kb`]). Resolves to the new `stats()`.
    #[wasm_bindgen(js_name = importKb)]
    pub fn import_kb(&self, bytes: Vec<u8>) -> Promise {
        let inner = self.inner.clone();
        promise(async move {
            let stats = async {
                let mut core = inner.lock().await;
                write_op!(core, eng => eng.import_kb(&bytes).await)
            }
            .await
            .map_err(|e| js_error(&e))?;
            stats_js(&stats)
        })
    }

    /// Knowledge-aware decomposition (PIKE-RAG Algorithm 1, [`crate::ask::decompose`]) of
    /// `question` over this knowledge base, with the OpenAI-compatible endpoint `llm`
    /// (`{baseUrl, model, apiKey?, headers?, temperature?, maxTokens?, timeoutMs?, retries?,
    /// backoffMs?, maxBackoffMs?, concurrency?, maxReplyBytes?,
    /// maxEventBytes?, jsonMode?}`, [`crate::llm::LlmConfig`]; the key stays in this
    /// worker's memory), or with a model function ([`llm::JsCallbackModel`]) and `options` (`{rounds?, candidates?, delta?, proposals?, retriever?,
    /// cancelId?}`; [`cancel`] with `cancelId` stops the run at its next model call).
    /// `onTrace` receives `{step, round, input, output, ms}` per step. Resolves to the trajectory
    /// `{question, rounds: [{proposals, candidates, selected, subQuestion, answer}], context,
    /// stop}`; rejects with `LlmError` (`LLM_UNAUTHORIZED`, `LLM_TIMEOUT`, `LLM_BAD_OUTPUT`, ...).
    pub fn decompose(&self, question: String, llm: JsValue, options: JsValue, on_trace: Option<Function>) -> Promise {
        let inner = self.inner.clone();
        let (cancel, guard) = cancel_token(&options);
        let model = llm::PageModel::cancellable(llm, cancel);
        let params: Result<crate::ask::DecomposeParams, _> = parse_options("decompose", &options);
        run(async move {
            let _guard = guard;
            let client = model?;
            let params = params?;
            // A lazily opened knowledge base stays lazy: the steps read what they need.
            let mut core = inner.lock().await;
            core.refresh().await?;
            let mut trace = |ev: crate::ask::TraceEvent| {
                if let (Some(f), Ok(v)) = (&on_trace, to_js(&ev)) {
                    let _ = f.call1(&JsValue::NULL, &v);
                }
            };
            crate::ask::decompose(&client, &mut *core, &question, &params, &JsClock, &mut trace).await
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
            let reply =
                client.chat(&msgs, &crate::llm::ChatOptions { max_tokens: Some(8), ..crate::llm::ChatOptions::step("test") }).await?;
            Ok(Pong { reply, ms: js_sys::Date::now() - t0 })
        })
    }

    /// The ask pipeline ([`crate::ask::pipeline::run`]; docs/ask-pipeline.md): `llm` as for
    /// [`WebRagCore::decompose`]; `options` a partial `PipelineParams` (`{preset?: "ask" |
    /// "search", steps?: {trigger?, rewrite?, route?, keyPoints?, decompose?, verify?, filter?,
    /// answer?, memory?}, tau?, theta?, ..., decompose?: {...}, answer?: {minConfidence?},
    /// keepTrace?, webSearch?: {url, headers?, timeoutMs?}}`) plus `cancelId?` (a string; [`cancel`] with it stops the run). `onEvent`
    /// receives each step's trace event and `{token}` pieces of the answer as they stream.
    /// Resolves to `{question, clarified, answer: {text, citations, confidence, known, sources}
    /// | null, context: [{id, title, text, via}], trajectory | null, route, remembered}`.
    pub fn ask(&self, question: String, llm: JsValue, options: JsValue, on_event: Option<Function>) -> Promise {
        let inner = self.inner.clone();
        let (cancel, guard) = cancel_token(&options);
        let cancel2 = cancel.clone();
        let model = llm::PageModel::cancellable(llm, cancel);
        let opts: Result<crate::ask::pipeline::PipelineParams, _> = parse_options("options", &options);
        run(async move {
            let _guard = guard;
            let client = model?;
            let opts = opts?;
            // A lazily opened knowledge base stays lazy: the steps read what they need
            // (a run within a scope reads every document's record, so it loads).
            let mut core = inner.lock().await;
            core.refresh().await?;
            let emit = |v: Result<JsValue, JsValue>| {
                if let (Some(f), Ok(v)) = (&on_event, v) {
                    let _ = f.call1(&JsValue::NULL, &v);
                }
            };
            let mut trace = |ev: crate::ask::TraceEvent| emit(to_js(&ev));
            let provisional = opts.answer.stream == crate::ask::answer::AnswerStream::Provisional;
            let mut token = |t: &str| emit(to_js(&serde_json::json!({ "token": t, "provisional": provisional })));
            let web = opts
                .web_search
                .clone()
                .map(|cfg| crate::ask::pipeline::HttpWebSearch { cfg, transport: llm::FetchTransport { cancel: Some(cancel2.clone()) } });
            crate::ask::pipeline::run(&client, &mut *core, web.as_ref(), &question, &opts, &JsClock, &mut token, &mut trace).await
        })
    }

    /// The ingest-time LLM stages over what is stored ([`crate::ask::ingest`]): `options`
    /// `{atomize?: boolean | {maxQuestions?, batch?}, mindMaps?: boolean | {minRougeL?,
    /// minCosine?, regenerations?, maxItems?}, documents?: string[], cancelId?}` (both stages
    /// default on; `documents`: only these documents, default all). Each stage does only
    /// what is left (chunks without questions, documents without an LLM map), so calling again
    /// after a failure or a cancel resumes. `onProgress` receives `{phase: "atomize" |
    /// "mindmap", done, total}` and the stages' trace events (`{step, round, input, output,
    /// ms}`). Resolves to `{atomize: {chunks, questions, failed, remaining} | null, mindMaps:
    /// {documents, fallbacks, items, unverifiedChunks, regenerations} | null}`. The engine is
    /// held only to read what is left and to commit a batch, never while the model answers, so
    /// `search` and the other reads run while `enrich` waits on the model.
    pub fn enrich(&self, llm: JsValue, options: JsValue, on_progress: Option<Function>) -> Promise {
        let inner = self.inner.clone();
        let (cancel, guard) = cancel_token(&options);
        let model = llm::PageModel::cancellable(llm, cancel);
        let params: Result<crate::ask::ingest::EnrichParams, _> = parse_options("options", &options);
        run(async move {
            let _guard = guard;
            let client = model?;
            let params = params?;
            // Read again if another tab committed, before the first step (a lazily opened
            // knowledge base stays lazy for atomizing and mind maps).
            inner.lock().await.refresh().await?;
            let mut progress = |ev: ProgressEvent| report(&on_progress, &ev);
            let mut trace = |ev: crate::ask::TraceEvent| {
                if let (Some(f), Ok(v)) = (&on_progress, to_js(&ev)) {
                    let _ = f.call1(&JsValue::NULL, &v);
                }
            };
            crate::ask::ingest::enrich(&*inner, &client, &params, &JsClock, &mut progress, &mut trace).await
        })
    }

    /// Kept traces (`keepTrace` in ask options), oldest first: `[{id, createdAt, question,
    /// json}]`.
    pub fn traces(&self) -> Promise {
        let inner = self.inner.clone();
        run(async move { inner.lock().await.traces().await })
    }

    /// Kept traces as JSONL: `format` `"events"` (one `{question, events, trajectory, answer,
    /// route}` object per line) or `"sft"` (the decomposition trajectories as PIKE-RAG Algorithm 3
    /// pairs `{prompt, completion}`, `t + 1` lines per trajectory of `t` sub-questions).
    #[wasm_bindgen(js_name = exportTraces)]
    pub fn export_traces(&self, format: String) -> Promise {
        let inner = self.inner.clone();
        let format: Result<crate::ask::TraceFormat, _> = format.parse();
        run(async move {
            let format = format?;
            Ok::<_, Error>(crate::ask::export_traces(&inner.lock().await.traces().await?, format))
        })
    }

    /// Deletes every kept trace; resolves to how many.
    #[wasm_bindgen(js_name = clearTraces)]
    pub fn clear_traces(&self) -> Promise {
        let inner = self.inner.clone();
        run(async move {
            crate::ports::retry_on_conflict(crate::ports::WRITE_ATTEMPTS, async |_| inner.lock().await.clear_traces().await).await
        })
    }

    /// The memory knowledge base: `[{id, title, content, sources, createdAt}]` (embeddings
    /// left out), oldest first.
    pub fn memory(&self) -> Promise {
        let inner = self.inner.clone();
        run(async move {
            let v: Vec<crate::types::MemoryEntry> = inner.lock().await.memory().await?.into_iter().map(Into::into).collect();
            Ok::<_, Error>(v)
        })
    }

    /// Deletes every memory entry; resolves to how many.
    pub fn forget(&self) -> Promise {
        let inner = self.inner.clone();
        run(async move { crate::ports::retry_on_conflict(crate::ports::WRITE_ATTEMPTS, async |_| inner.lock().await.forget().await).await })
    }

    /// GPU time per kernel kind for one forward pass over `texts` (`{matmulMs, attentionMs,
    /// layerNormMs, otherMs, wallMs}`), or null on the CPU path / without timestamp queries.
    #[wasm_bindgen(js_name = profileGpu)]
    pub fn profile_gpu(&self, texts: Vec<String>) -> Promise {
        let inner = self.inner.clone();
        run(async move {
            let core = inner.lock().await;
            let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
            core.embedder()?.profile(&refs).await
        })
    }

    /// Destroys the GPU device (as a driver reset would), to exercise the CPU fallback.
    /// Resolves to whether a GPU was in use.
    #[wasm_bindgen(js_name = loseGpuForTesting)]
    pub fn lose_gpu_for_testing(&self) -> Promise {
        let inner = self.inner.clone();
        run(async move {
            let core = inner.lock().await;
            Ok::<_, Error>(core.embedder()?.gpu().map(|g| g.gpu().destroy()).is_some())
        })
    }
}

/// A file written out of wasm memory: the bytes gather in a buffer of [`JsPieces::PIECE`] bytes,
/// each full buffer copied into a JS `Uint8Array`; [`JsPieces::into_bytes`] joins them. So an
/// export of a large knowledge base never holds its whole file (or the doubling of a growing
/// `Vec`) in the worker's wasm memory, which does not shrink again.
#[derive(Default)]
struct JsPieces {
    pieces: Vec<js_sys::Uint8Array>,
    buf: Vec<u8>,
    total: u32,
}

impl JsPieces {
    /// Bytes copied out at a time.
    const PIECE: usize = 4 << 20;

    fn flush_piece(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let n = u32::try_from(self.buf.len()).ok().and_then(|n| self.total.checked_add(n));
        self.total = n.ok_or_else(|| std::io::Error::other("a knowledge-base file over 4 GiB"))?;
        self.pieces.push(js_sys::Uint8Array::from(self.buf.as_slice()));
        self.buf.clear();
        Ok(())
    }

    /// The pieces joined into one `Uint8Array`.
    ///
    /// Errors: [`crate::error::StoreError::Backend`] for a file over 4 GiB.
    fn into_bytes(mut self) -> crate::error::Result<js_sys::Uint8Array> {
        self.flush_piece().map_err(|e| crate::error::StoreError::Backend { reason: e.to_string() })?;
        let out = js_sys::Uint8Array::new_with_length(self.total);
        let mut at = 0u32;
        for p in &self.pieces {
            out.set(p, at);
            at += p.length();
        }
        Ok(out)
    }
}

impl std::io::Write for JsPieces {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= Self::PIECE {
            self.flush_piece()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
