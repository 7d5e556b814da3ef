//! Typed errors, one enum per area, and the crate-level [`Error`](enum@Error) that wraps them.
//!
//! Every error carries a stable machine-readable [`Error::code`] (e.g. `"MODEL_TENSOR_MISSING"`)
//! that the JS edge exposes as `err.code`, and a `name` (the area, e.g. `"ModelError"`) that
//! becomes the JS `Error` subclass name. Nothing that came from a user, a file, IndexedDB or the
//! network is ever `unwrap()`ed: it ends up here instead.
use thiserror::Error;

/// Errors from the GPU embedder (WebGPU in the browser, Vulkan/Metal/DX12 natively).
#[derive(Debug, Error, Clone, PartialEq)]
pub enum GpuError {
    /// No adapter or no device could be obtained (no WebGPU, no driver).
    #[error("no GPU available: {reason}")]
    Unavailable {
        /// What the platform said.
        reason: String,
    },
    /// A submission, a readback or the device failed (including device loss).
    #[error("GPU failure: {reason}")]
    Failed {
        /// What failed.
        reason: String,
    },
}

/// Crate-wide result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors from parsing and validating documents given to `add()`.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum InputError {
    /// The document has no indexable text after parsing (empty, whitespace or markup only).
    #[error("document {id:?} is empty: no indexable text after parsing")]
    EmptyDocument {
        /// The document id.
        id: String,
    },
    /// The document's bytes are not valid UTF-8.
    #[error("document {id:?} is not valid UTF-8 (first invalid byte at offset {offset})")]
    InvalidUtf8 {
        /// The document id.
        id: String,
        /// Byte offset of the first invalid sequence.
        offset: usize,
    },
    /// The document is larger than the configured maximum.
    #[error("document {id:?} is {bytes} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// The document id.
        id: String,
        /// Its size in bytes.
        bytes: usize,
        /// `Config::max_document_bytes`.
        limit: usize,
    },
    /// Two documents of one `add()` batch share an id.
    #[error("duplicate document id {id:?} in one add() batch")]
    DuplicateId {
        /// The repeated id.
        id: String,
    },
    /// A document id is empty or too long.
    #[error("invalid document id {id:?}: ids are 1 to 1024 characters")]
    InvalidId {
        /// The id as given.
        id: String,
    },
    /// An unknown `format` value.
    #[error("unknown document format {format:?} (expected markdown, html, text or auto)")]
    UnknownFormat {
        /// The format as given.
        format: String,
    },
    /// A Markdown or HTML document in a build that parses them with a parser module the platform
    /// loads on demand (the page's search build), when that module could not be loaded or failed.
    /// Nothing of the batch was written; plain-text documents still add.
    #[error("cannot parse {format} here: {reason}")]
    ParserUnavailable {
        /// The document format (`markdown`, `html`).
        format: &'static str,
        /// Why the parser module is unavailable.
        reason: String,
    },
    /// A document in a language whose stemmer this build has no way to run (the page's builds:
    /// the worker could not load `stem/<tag>.wasm`). Nothing of the batch was written.
    #[error("cannot stem {lang} here: its stemmer module is not loaded (stem/{lang}.wasm)")]
    StemmerUnavailable {
        /// The language's tag (`en`; `no` for Norwegian).
        lang: &'static str,
    },
    /// A knowledge-base file (`importKb`) that is not one this build reads (kb_file).
    #[error("not a webrag knowledge-base file this build reads: {reason}")]
    InvalidKbFile {
        /// What is wrong with it.
        reason: String,
    },
    /// A knowledge-base file that inflates past what an import reads ([`crate::kb_file`]: more
    /// than `MAX_INFLATED_BYTES`, or more than `MAX_INFLATE_RATIO` times its own size plus
    /// `INFLATE_SLACK_BYTES`): a gzip bomb is stopped at the limit, holding at most that.
    #[error("knowledge-base file too large: it inflates past {limit} bytes")]
    KbFileTooLarge {
        /// The limit it reached, bytes uncompressed.
        limit: u64,
    },
    /// An invalid search or option value.
    #[error("invalid option {name}: {reason}")]
    InvalidOption {
        /// Option name.
        name: String,
        /// Why it was rejected.
        reason: String,
    },
}

/// Errors from loading or running the embedding model.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ModelError {
    /// A model file could not be fetched or read.
    #[error("model file {file} could not be loaded: {reason}")]
    FileUnavailable {
        /// `config.json`, `tokenizer.json` or `model.safetensors`.
        file: String,
        /// Why (HTTP status, I/O error).
        reason: String,
    },
    /// `config.json` is not valid JSON or lacks a field.
    #[error("config.json is invalid: {reason}")]
    InvalidConfig {
        /// What is wrong.
        reason: String,
    },
    /// The config describes a model this engine does not run.
    #[error("unsupported model config: {reason}")]
    Unsupported {
        /// What is not supported.
        reason: String,
    },
    /// `tokenizer.json` could not be parsed.
    #[error("tokenizer.json is invalid: {reason}")]
    InvalidTokenizer {
        /// Parser message.
        reason: String,
    },
    /// `model.safetensors` is not a valid safetensors file.
    #[error("model.safetensors is corrupt: {reason}")]
    CorruptWeights {
        /// Parser message.
        reason: String,
    },
    /// A tensor the architecture needs is absent.
    #[error("tensor {name} is missing from model.safetensors")]
    TensorMissing {
        /// Tensor key (Hugging Face name).
        name: String,
    },
    /// A tensor has the wrong shape or dtype.
    #[error("tensor {name} has shape {found:?} ({dtype}), expected {expected:?} (F32, F16, BF16, or I8 with F32 row scales)")]
    TensorShape {
        /// Tensor key.
        name: String,
        /// Expected shape.
        expected: Vec<usize>,
        /// Shape found.
        found: Vec<usize>,
        /// Dtype found.
        dtype: String,
    },
    /// The store was built with another model (id or dimension differ).
    #[error("this knowledge base was built with model {stored} ({stored_dim}-d); the engine has {loaded} ({loaded_dim}-d)")]
    Mismatch {
        /// Model id recorded in `meta`.
        stored: String,
        /// Its dimension.
        stored_dim: usize,
        /// Model id loaded now.
        loaded: String,
        /// Its dimension.
        loaded_dim: usize,
    },
    /// A model file's size or SHA-256 differs from the one the caller pinned.
    #[error("model file {file}: {what} is {found}, expected {expected}")]
    Integrity {
        /// File name.
        file: String,
        /// `size` or `sha256`.
        what: String,
        /// The pinned value.
        expected: String,
        /// What was downloaded.
        found: String,
    },
    /// The embedder returned something other than one finite `dim`-long vector per text (a
    /// broken GPU driver, a bad custom embedder); nothing was written.
    #[error("the embedder's output is invalid: {reason}")]
    BadOutput {
        /// What was wrong.
        reason: String,
    },
}

/// Errors from a [`crate::ports::Store`] implementation.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum StoreError {
    /// Opening the database was blocked by another connection (e.g. another tab) holding an
    /// older version open.
    #[error("database {name:?} is blocked: another tab holds an older version open; close it and retry")]
    Blocked {
        /// Database name.
        name: String,
    },
    /// The stored schema is newer than this build understands.
    #[error("database {name:?} has schema version {found}, newer than this build's {supported}")]
    VersionTooNew {
        /// Database name.
        name: String,
        /// Version found.
        found: u32,
        /// Newest version this build reads.
        supported: u32,
    },
    /// The browser refused to store more data.
    #[error("storage quota exceeded")]
    QuotaExceeded,
    /// A stored record could not be decoded.
    #[error("corrupt record in {collection}/{key}: {reason}")]
    Corrupt {
        /// Collection (object store) name.
        collection: String,
        /// Record key.
        key: String,
        /// Decoder message.
        reason: String,
    },
    /// The transaction was aborted; nothing of the batch was written.
    #[error("transaction aborted, nothing written: {reason}")]
    Aborted {
        /// Browser or backend message.
        reason: String,
    },
    /// Another engine over the same store (another tab, another worker) committed since this one
    /// read it: the batch was not written. The engine reads the store again and retries.
    #[error("the knowledge base changed in another tab (generation {found}, this view is of {expected}); nothing written")]
    Conflict {
        /// The generation this engine read.
        expected: u64,
        /// The generation stored.
        found: u64,
    },
    /// Any other backend failure.
    #[error("storage backend error: {reason}")]
    Backend {
        /// Backend message.
        reason: String,
    },
}

/// The part of an LLM endpoint's reply that went past its cap ([`LlmError::ReplyTooLarge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyPart {
    /// A whole (non-streamed) response body, or a web-search reply.
    Body,
    /// One server-sent event line of a stream.
    Event,
    /// Everything a stream sent (an endless stream stops here).
    Stream,
}

impl std::fmt::Display for ReplyPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ReplyPart::Body => "response body",
            ReplyPart::Event => "server-sent event",
            ReplyPart::Stream => "stream",
        })
    }
}

/// Errors from the language-model endpoint (OpenAI-compatible `/chat/completions`, or a JS
/// callback) and from reading its structured output.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum LlmError {
    /// The endpoint refused the credentials (HTTP 401 or 403). Not retried.
    #[error("LLM endpoint refused the request (HTTP {status}): check the API key")]
    Unauthorized {
        /// 401 or 403.
        status: u16,
    },
    /// Still HTTP 429 after every retry.
    #[error("LLM endpoint rate-limited the request {attempts} times (HTTP 429)")]
    RateLimited {
        /// Attempts made.
        attempts: u32,
    },
    /// Still a server error (5xx) after every retry, or another unexpected status.
    #[error("LLM endpoint failed with HTTP {status} after {attempts} attempts: {body}")]
    Http {
        /// The last status.
        status: u16,
        /// Attempts made.
        attempts: u32,
        /// The start of the last response body.
        body: String,
    },
    /// No complete answer within the configured timeout.
    #[error("LLM request timed out after {ms} ms")]
    Timeout {
        /// The configured timeout.
        ms: u64,
    },
    /// The endpoint could not be reached (connection refused, DNS, CORS in the browser).
    #[error("LLM endpoint unreachable: {reason}")]
    Network {
        /// What the platform said.
        reason: String,
    },
    /// The response is not an OpenAI-compatible chat completion (bad JSON, no choices).
    #[error("LLM endpoint sent an unreadable response: {reason}")]
    BadResponse {
        /// What was wrong.
        reason: String,
    },
    /// A reply went past its size cap ([`ReplyPart`]): reading stopped there, holding at most
    /// the cap. Not retried.
    #[error("LLM endpoint sent more than {limit} bytes in one {part}; reading stopped there")]
    ReplyTooLarge {
        /// Which part went over.
        part: ReplyPart,
        /// The cap in bytes (`LlmConfig::max_reply_bytes` or `max_event_bytes`).
        limit: u64,
    },
    /// A stream ended before its `[DONE]` marker or finish reason.
    #[error("LLM stream ended early after {received} characters")]
    Truncated {
        /// Characters received before the end.
        received: usize,
    },
    /// The model's text did not hold the expected JSON even after one repair attempt.
    #[error("LLM output for {step} is not the expected JSON: {reason}")]
    BadOutput {
        /// The pipeline step that asked.
        step: String,
        /// What was wrong with the last attempt.
        reason: String,
    },
    /// The page's own model (a JS callback) threw or returned something other than text.
    #[error("the LLM callback failed: {reason}")]
    Callback {
        /// What it threw or returned.
        reason: String,
    },
    /// The caller cancelled (an `AbortSignal` in the page): in-flight requests were aborted
    /// and no further call was made. Work committed before it stays.
    #[error("LLM work cancelled")]
    Cancelled,
    /// No language model is configured, or the configuration is invalid.
    #[error("LLM not configured: {reason}")]
    NotConfigured {
        /// What is missing.
        reason: String,
    },
}

/// Crate-level error: every public fallible function returns this.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// Bad input document or option.
    #[error(transparent)]
    Input(#[from] InputError),
    /// Embedding model problem.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Storage problem.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// GPU problem.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// Language-model endpoint problem.
    #[error(transparent)]
    Llm(#[from] LlmError),
}

/// One stable error code as the page sees it: the JS class that carries it, the code, and when it
/// is thrown. [`CODES`] lists every code, the engine's ([`Error::code`]) and those of the page's
/// layer (the worker and its client: `NOT_OPEN`, `NOT_IN_BUILD`, `CANCELLED`, `WORKER_FAILED`,
/// `INTERNAL`, `UNSUPPORTED_BROWSER`); docs/api.md's error table and `index.d.ts`'s error classes are generated from it
/// (`webrag surface`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code {
    /// The JS `Error` subclass ([`Error::name`], or `CancelledError` / `WebRagError`).
    pub class: &'static str,
    /// The code, SCREAMING_SNAKE_CASE.
    pub code: &'static str,
    /// When it is thrown (Markdown).
    pub when: &'static str,
}

/// The JS error classes, each with what its errors have in common (Markdown), base class last.
pub const CLASSES: &[(&str, &str)] = &[
    ("InputError", "Bad document or option"),
    ("ModelError", "Model problem"),
    ("StoreError", "Storage problem"),
    ("GpuError", "GPU embedder problem"),
    ("LlmError", "LLM endpoint or output problem"),
    ("CancelledError", "An operation without a model call (`add`, `search`) whose `signal` fired before it started"),
    ("WebRagError", "Base class of every webrag error, with a stable `code`; itself thrown"),
];

/// The codes of `webrag/static`'s `SnapshotError` (not a `WebRagError`: the loader reads a snapshot
/// with no engine), raised by `src/web/js/static.js` as it reads the format
/// [`crate::snapshot`] writes (docs/api.md, "Errors"; `static.d.ts`).
pub const SNAPSHOT_CODES: &[Code] = &[
    Code { class: "SnapshotError", code: "SNAPSHOT_UNAVAILABLE", when: "a file could not be fetched (network error or HTTP status)" },
    Code {
        class: "SnapshotError",
        code: "SNAPSHOT_CORRUPT",
        when: "a file is not what its name and the manifest say: hash, gzip, JSON or binary layout",
    },
    Code {
        class: "SnapshotError",
        code: "SNAPSHOT_VERSION",
        when: "a manifest of a format version this loader does not read (it reads 3)",
    },
    Code {
        class: "SnapshotError",
        code: "SNAPSHOT_NO_EMBEDDER",
        when: "semantic search without `setEmbedder` (or `staticEmbed` without the static tier)",
    },
    Code {
        class: "SnapshotError",
        code: "SNAPSHOT_UNVERIFIED",
        when: "`open(…, {requireIntegrity: true})` in a page without `crypto.subtle`, where shards cannot be checked against their hashes (without the option the loader warns on the console and `integrity` is `'unchecked'`)",
    },
];

/// Every error code, by class (docs/api.md, "Errors").
pub const CODES: &[Code] = &[
    Code { class: "InputError", code: "EMPTY_DOCUMENT", when: "no indexable text after parsing" },
    Code { class: "InputError", code: "INVALID_UTF8", when: "`bytes` are not UTF-8 (the message gives the offset)" },
    Code { class: "InputError", code: "DOCUMENT_TOO_LARGE", when: "over `maxDocumentBytes`" },
    Code { class: "InputError", code: "DUPLICATE_ID", when: "two documents of one `add()` share an id" },
    Code { class: "InputError", code: "INVALID_ID", when: "an id is empty or over 1,024 characters" },
    Code { class: "InputError", code: "UNKNOWN_FORMAT", when: "`format` is not markdown, html, text or auto" },
    Code {
        class: "InputError",
        code: "PARSER_UNAVAILABLE",
        when: "a Markdown or HTML document given to the search build (`webrag/search`) when its parser module (`search/markup.wasm`, loaded at the first `add` that needs it) could not be loaded; nothing was written, plain-text documents still add",
    },
    Code {
        class: "InputError",
        code: "STEMMER_UNAVAILABLE",
        when: "a document whose `lang` is one of the 18 Snowball languages when the worker could not load its stemmer module (`stem/<tag>.wasm` in `WebRag.open`'s `stem` folder); nothing was written",
    },
    Code { class: "InputError", code: "INVALID_OPTION", when: "an option out of range or malformed; the message names it" },
    Code {
        class: "InputError",
        code: "KB_FILE_INVALID",
        when: "`importKb` was given something that is not a knowledge-base file this build reads (not gzip, not JSON, another format, a newer layout, a document id `add` refuses)",
    },
    Code {
        class: "InputError",
        code: "KB_FILE_TOO_LARGE",
        when: "`importKb`'s file inflates past 64 × its own size + 16 MiB, or past 4 GiB ([kb-file.md](kb-file.md#import)); reading stopped at the limit",
    },
    Code {
        class: "InputError",
        code: "NOT_IN_BUILD",
        when: "an operation the search build (`webrag/search`) leaves out; import `webrag` for it",
    },
    Code { class: "ModelError", code: "MODEL_FILE_UNAVAILABLE", when: "a model file could not be fetched or read" },
    Code { class: "ModelError", code: "MODEL_CONFIG_INVALID", when: "`config.json` is not valid or lacks a field" },
    Code { class: "ModelError", code: "MODEL_UNSUPPORTED", when: "the config describes a model this engine does not run" },
    Code { class: "ModelError", code: "MODEL_TOKENIZER_INVALID", when: "`tokenizer.json` does not parse" },
    Code { class: "ModelError", code: "MODEL_WEIGHTS_CORRUPT", when: "`model.safetensors` is not valid safetensors" },
    Code { class: "ModelError", code: "MODEL_TENSOR_MISSING", when: "a tensor the architecture needs is absent" },
    Code {
        class: "ModelError",
        code: "MODEL_TENSOR_SHAPE",
        when: "a tensor has the wrong shape or dtype (F32, F16, BF16 and int8 with F32 row scales load)",
    },
    Code { class: "ModelError", code: "MODEL_MISMATCH", when: "the knowledge base was built with another model id or dimension" },
    Code { class: "ModelError", code: "MODEL_INTEGRITY", when: "a file's size or SHA-256 differs from the pinned one" },
    Code {
        class: "ModelError",
        code: "MODEL_OUTPUT_INVALID",
        when: "the embedder returned something other than one finite `dim`-long vector per text (a broken driver); nothing was written",
    },
    Code { class: "StoreError", code: "STORE_BLOCKED", when: "another tab holds an older database version open" },
    Code { class: "StoreError", code: "STORE_VERSION_TOO_NEW", when: "the database's schema is newer than this build" },
    Code { class: "StoreError", code: "QUOTA_EXCEEDED", when: "the browser refused to store more" },
    Code { class: "StoreError", code: "STORE_CORRUPT", when: "a stored record does not decode" },
    Code { class: "StoreError", code: "STORE_ABORTED", when: "the transaction aborted; nothing of the batch was written" },
    Code {
        class: "StoreError",
        code: "STORE_CONFLICT",
        when: "another tab (or worker) committed between this engine's read of the store and its commit; nothing was written. The page's calls do not see it: every write reads the store again first and is retried on a conflict (see \"Two tabs\")",
    },
    Code { class: "StoreError", code: "STORE_BACKEND", when: "any other backend failure" },
    Code { class: "StoreError", code: "NOT_OPEN", when: "a call reached the worker before a successful open" },
    Code {
        class: "GpuError",
        code: "GPU_UNAVAILABLE",
        when: "no WebGPU adapter or device (with `device: 'gpu'`, or `embed(…, {path: 'gpu'})` on the CPU path)",
    },
    Code { class: "GpuError", code: "GPU_FAILED", when: "a submission, readback or the device failed" },
    Code { class: "LlmError", code: "LLM_UNAUTHORIZED", when: "HTTP 401 / 403; not retried" },
    Code { class: "LlmError", code: "LLM_RATE_LIMITED", when: "still 429 after the retries" },
    Code { class: "LlmError", code: "LLM_HTTP", when: "still 5xx after the retries, or another unexpected status" },
    Code {
        class: "LlmError",
        code: "LLM_TIMEOUT",
        when: "no complete reply within `timeoutMs` (`ask` does not reject with it: the question ends in \"I don't know.\" with its sources, [ask-pipeline.md](ask-pipeline.md))",
    },
    Code { class: "LlmError", code: "LLM_NETWORK", when: "unreachable (connection refused, DNS, CORS)" },
    Code {
        class: "LlmError",
        code: "LLM_BAD_RESPONSE",
        when: "not an OpenAI-compatible chat completion (a `content` that is null or not text is not this: the reply is then its `reasoning_content`, or empty); `ask` ends in \"I don't know.\" instead",
    },
    Code {
        class: "LlmError",
        code: "LLM_TRUNCATED",
        when: "a stream ended before `[DONE]` or a finish reason; `ask` ends in \"I don't know.\" instead",
    },
    Code {
        class: "LlmError",
        code: "LLM_REPLY_TOO_LARGE",
        when: "a reply went past `maxReplyBytes` (a body or a whole stream) or `maxEventBytes` (one event line), or a web-search reply past 4 MiB; the client held at most the cap and stopped reading. Of an error response only the first 64 KiB are read",
    },
    Code { class: "LlmError", code: "LLM_BAD_OUTPUT", when: "no usable JSON after one repair request; the message names the step" },
    Code { class: "LlmError", code: "LLM_NOT_CONFIGURED", when: "no endpoint, or an invalid configuration" },
    Code { class: "LlmError", code: "LLM_CALLBACK_FAILED", when: "the page's model function threw or returned no text" },
    Code {
        class: "LlmError",
        code: "LLM_CANCELLED",
        when: "an `AbortSignal` fired (`ask`, `enrich`, `decompose`): while the call waited in the worker's queue (it never started) or at its next model call",
    },
    Code {
        class: "CancelledError",
        code: "CANCELLED",
        when: "the `AbortSignal` of an `add` or `search` fired while it waited behind other operations: it never started, nothing was written",
    },
    Code {
        class: "WebRagError",
        code: "WORKER_FAILED",
        when: "the worker could not start, or it died (a panic in the engine, an uncaught error): every call in flight rejects at once (the message ends `(during <operation>)`), and a fresh worker opens the knowledge base again from the store (`onEvent` `{type: 'restarted'}`); later calls go to it",
    },
    Code { class: "WebRagError", code: "INTERNAL", when: "an unexpected failure inside the worker, e.g. the `.wasm` failed to compile" },
    Code {
        class: "WebRagError",
        code: "UNSUPPORTED_BROWSER",
        when: "`WebRag.open` in a browser without WebAssembly SIMD128, which both builds of the engine need (`webrag/static` searches without it)",
    },
];

impl LlmError {
    /// Whether the model (or the web searcher) was reached but gave nothing usable: a timeout, a
    /// stream cut short, a body that is not a chat completion, output that is not the JSON a step
    /// asks for, a reply past its cap. The ask pipeline ends such a question in "I don't know."
    /// with the sources it has, where the errors that need the user (no endpoint, a key refused,
    /// the server down or rate-limited, a cancel) still reject.
    pub fn is_unusable_reply(&self) -> bool {
        matches!(
            self,
            LlmError::Timeout { .. }
                | LlmError::Truncated { .. }
                | LlmError::BadResponse { .. }
                | LlmError::BadOutput { .. }
                | LlmError::ReplyTooLarge { .. }
        )
    }
}

impl Error {
    /// The JS `Error` subclass name for this error (`InputError`, `ModelError`, `StoreError`,
    /// `GpuError`, `LlmError`).
    pub fn name(&self) -> &'static str {
        match self {
            Error::Input(_) => "InputError",
            Error::Model(_) => "ModelError",
            Error::Store(_) => "StoreError",
            Error::Gpu(_) => "GpuError",
            Error::Llm(_) => "LlmError",
        }
    }

    /// A stable, machine-readable code (SCREAMING_SNAKE_CASE), exposed to JS as `err.code`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Input(e) => match e {
                InputError::EmptyDocument { .. } => "EMPTY_DOCUMENT",
                InputError::InvalidUtf8 { .. } => "INVALID_UTF8",
                InputError::TooLarge { .. } => "DOCUMENT_TOO_LARGE",
                InputError::DuplicateId { .. } => "DUPLICATE_ID",
                InputError::InvalidId { .. } => "INVALID_ID",
                InputError::UnknownFormat { .. } => "UNKNOWN_FORMAT",
                InputError::ParserUnavailable { .. } => "PARSER_UNAVAILABLE",
                InputError::StemmerUnavailable { .. } => "STEMMER_UNAVAILABLE",
                InputError::InvalidOption { .. } => "INVALID_OPTION",
                InputError::InvalidKbFile { .. } => "KB_FILE_INVALID",
                InputError::KbFileTooLarge { .. } => "KB_FILE_TOO_LARGE",
            },
            Error::Gpu(e) => match e {
                GpuError::Unavailable { .. } => "GPU_UNAVAILABLE",
                GpuError::Failed { .. } => "GPU_FAILED",
            },
            Error::Llm(e) => match e {
                LlmError::Unauthorized { .. } => "LLM_UNAUTHORIZED",
                LlmError::RateLimited { .. } => "LLM_RATE_LIMITED",
                LlmError::Http { .. } => "LLM_HTTP",
                LlmError::Timeout { .. } => "LLM_TIMEOUT",
                LlmError::Network { .. } => "LLM_NETWORK",
                LlmError::BadResponse { .. } => "LLM_BAD_RESPONSE",
                LlmError::Truncated { .. } => "LLM_TRUNCATED",
                LlmError::ReplyTooLarge { .. } => "LLM_REPLY_TOO_LARGE",
                LlmError::BadOutput { .. } => "LLM_BAD_OUTPUT",
                LlmError::NotConfigured { .. } => "LLM_NOT_CONFIGURED",
                LlmError::Callback { .. } => "LLM_CALLBACK_FAILED",
                LlmError::Cancelled => "LLM_CANCELLED",
            },
            Error::Model(e) => match e {
                ModelError::FileUnavailable { .. } => "MODEL_FILE_UNAVAILABLE",
                ModelError::InvalidConfig { .. } => "MODEL_CONFIG_INVALID",
                ModelError::Unsupported { .. } => "MODEL_UNSUPPORTED",
                ModelError::InvalidTokenizer { .. } => "MODEL_TOKENIZER_INVALID",
                ModelError::CorruptWeights { .. } => "MODEL_WEIGHTS_CORRUPT",
                ModelError::TensorMissing { .. } => "MODEL_TENSOR_MISSING",
                ModelError::TensorShape { .. } => "MODEL_TENSOR_SHAPE",
                ModelError::Mismatch { .. } => "MODEL_MISMATCH",
                ModelError::Integrity { .. } => "MODEL_INTEGRITY",
                ModelError::BadOutput { .. } => "MODEL_OUTPUT_INVALID",
            },
            Error::Store(e) => match e {
                StoreError::Blocked { .. } => "STORE_BLOCKED",
                StoreError::VersionTooNew { .. } => "STORE_VERSION_TOO_NEW",
                StoreError::QuotaExceeded => "QUOTA_EXCEEDED",
                StoreError::Corrupt { .. } => "STORE_CORRUPT",
                StoreError::Aborted { .. } => "STORE_ABORTED",
                StoreError::Conflict { .. } => "STORE_CONFLICT",
                StoreError::Backend { .. } => "STORE_BACKEND",
            },
        }
    }
}
