//! # webrag
//!
//! Retrieval-augmented generation that runs entirely in the browser. The crate is one engine
//! compiled twice: to `wasm32-unknown-unknown` for the page (see `web`, wasm32 only) and natively
//! for the command line and the tests (see `src/native/`).
//!
//! The core (everything but `web` and `native`) is target-agnostic: it never names `JsValue`,
//! `web_sys` or `wasm_bindgen`. Every side effect goes through a small async port in [`ports`]
//! (storage, progress, clock) that has an in-memory implementation, so the whole engine runs
//! in native tests exactly as it runs in the page. ARCHITECTURE.md maps the modules.
#![warn(missing_docs)]
#![allow(async_fn_in_trait)] // single-threaded wasm: ports are not Send by design

pub mod ask;
pub mod config;
pub mod embed;
pub mod engine;
pub mod error;
pub mod graph;
pub mod index;
pub mod kb_file;
pub mod llm;
pub mod options;
pub mod ports;
pub mod retrieve;
pub mod schema;
pub mod snapshot;
pub mod sort;
pub mod text;
pub mod types;

#[cfg(not(target_arch = "wasm32"))]
pub mod native;
// The parser module (`--features markup-module`, src/web/markup_module.rs) links `text::parse`
// alone: no bindings, no imports.
#[cfg(all(target_arch = "wasm32", not(any(feature = "markup-module", feature = "stem-module"))))]
pub mod web;

pub use engine::{Engine, LazyEngine};
pub use error::{Error, Result};
