//! The search build's parser module (`pkg/search/markup.wasm`): [`webrag::text::parse`] for
//! Markdown and HTML, built alone (`cargo build --example webrag-markup --features
//! markup-module`, which leaves the crate's `web` module out). The search build's `.wasm` carries
//! no parsers (pulldown-cmark and html5gum were a fifth of it); its worker instantiates this module
//! at the first `add` that needs it (src/web/js/worker.js, `loadMarkup`) and installs it as the
//! core's `ports::parse_markup`.
//!
//! A plain C ABI with no imports (no wasm-bindgen glue, so one `WebAssembly.instantiate` and no
//! second JS file for bundlers to find):
//! 1. `markup_alloc(len) -> ptr`: room for `len` bytes of UTF-8 input in the module's memory;
//! 2. `markup_parse(ptr, len, format) -> len`: parses them (`format` 0 = Markdown, 1 = HTML; the
//!    input is freed) and keeps the reply, [`webrag::text::ParsedWire`] JSON, or `{"error": …}`;
//! 3. `markup_reply() -> ptr`: where that reply starts (valid until the next call).
use std::cell::RefCell;

use webrag::text::{ParsedWire, parse};
use webrag::types::Format;

thread_local! {
    static REPLY: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Room for `len` input bytes; the caller writes them and passes them to [`markup_parse`].
#[unsafe(no_mangle)]
pub extern "C" fn markup_alloc(len: usize) -> *mut u8 {
    let mut v = Vec::<u8>::with_capacity(len);
    let ptr = v.as_mut_ptr();
    std::mem::forget(v);
    ptr
}

/// Parses the `len` bytes at `ptr` (from [`markup_alloc`] of the same `len`, which this frees) in
/// `format` (0 Markdown, 1 HTML) and returns the reply's length in bytes ([`markup_reply`]).
///
/// # Safety
/// `ptr` must come from `markup_alloc(len)` with all `len` bytes written, and not be used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn markup_parse(ptr: *mut u8, len: usize, format: u32) -> usize {
    // SAFETY: `ptr` is a `Vec<u8>` of capacity `len` that `markup_alloc` leaked, now written.
    let input = unsafe { Vec::from_raw_parts(ptr, len, len) };
    let reply = match (String::from_utf8(input), format) {
        (Err(e), _) => error(&format!("the input is not UTF-8: {e}")),
        (Ok(text), 0 | 1) => {
            let format = if format == 0 { Format::Markdown } else { Format::Html };
            match parse(&text, format) {
                Ok(parsed) => serde_json::to_vec(&ParsedWire::new(&parsed)).unwrap_or_else(|e| error(&e.to_string())),
                Err(e) => error(&e.to_string()),
            }
        }
        (Ok(_), other) => error(&format!("unknown format {other} (0 Markdown, 1 HTML)")),
    };
    let n = reply.len();
    REPLY.with(|r| *r.borrow_mut() = reply);
    n
}

/// Where the last reply of [`markup_parse`] starts.
#[unsafe(no_mangle)]
pub extern "C" fn markup_reply() -> *const u8 {
    REPLY.with(|r| r.borrow().as_ptr())
}

fn error(message: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({ "error": message })).unwrap_or_default()
}
