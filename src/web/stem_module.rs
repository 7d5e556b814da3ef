//! `webrag/static`'s stemmer modules (`pkg/stem/<tag>.wasm`): [`webrag::text::Language::stem`],
//! the Snowball stemmers a site build stems its pages' words with, built alone (`cargo build
//! --example webrag-stem --features stem-module`, once per language with `WEBRAG_STEM_LANG` set
//! to its tag: [`ONLY`]), so a query's words are stemmed by the same code as the pages'.
//! `webrag/static` loads a language's module only for a search in it of a snapshot whose pages
//! are in it (src/web/js/static-stem.js).
//!
//! A plain C ABI with no imports, over one buffer of [`BUFFER`] bytes in the module's memory:
//! 1. `stem_buffer() -> ptr`: where the caller writes its UTF-8 input;
//! 2. `stem_language(len) -> id`: the language of the BCP 47 tag in the buffer's first `len`
//!    bytes, `1 + ` its index in [`Language::ALL`], or 0 when it has no stemmer;
//! 3. `stem_word(id, len) -> len`: stems the word in the buffer's first `len` bytes (a lowercased
//!    analyzer term) in language `id`, writes the stem over it and returns its length in bytes.
//!    A word that is not UTF-8, longer than [`webrag::text::MAX_STEM_BYTES`], or of an unknown
//!    `id` is left as it is (its own length returned).
use std::cell::RefCell;

use webrag::text::Language;

/// The module's allocator: talc, a smaller one than Rust's default (dlmalloc), whose code every
/// module would carry to each visitor of a stemmed site.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
#[global_allocator]
static TALC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// Bytes of the buffer: a word of `MAX_STEM_BYTES` and a stem of up to four times that.
const BUFFER: usize = 4 * webrag::text::MAX_STEM_BYTES;

/// The one language this module stems when it is built with `WEBRAG_STEM_LANG` set to that
/// language's tag ([`Language::tag`]; `stem/<tag>.wasm`): only its Snowball algorithm is linked,
/// the others being unreachable. `None` (the variable unset): every language in one module.
const ONLY: Option<Language> = match option_env!("WEBRAG_STEM_LANG") {
    Some(tag) => tagged(tag),
    None => None,
};
const _: () = assert!(option_env!("WEBRAG_STEM_LANG").is_none() || ONLY.is_some(), "WEBRAG_STEM_LANG names no Snowball language");

/// The language whose tag is `tag` exactly (a `const fn`, for [`ONLY`]).
const fn tagged(tag: &str) -> Option<Language> {
    let mut i = 0;
    while i < Language::ALL.len() {
        let (a, b) = (Language::ALL[i].tag().as_bytes(), tag.as_bytes());
        let mut same = a.len() == b.len();
        let mut j = 0;
        while same && j < a.len() {
            same = a[j] == b[j];
            j += 1;
        }
        if same {
            return Some(Language::ALL[i]);
        }
        i += 1;
    }
    None
}

/// The language of id `id` ([`stem_language`]).
fn language(id: u32) -> Option<Language> {
    match ONLY {
        Some(only) => (id == 1).then_some(only),
        None => (id as usize).checked_sub(1).and_then(|i| Language::ALL.get(i)).copied(),
    }
}

thread_local! {
    static BUF: RefCell<[u8; BUFFER]> = const { RefCell::new([0; BUFFER]) };
}

/// Where the caller writes its input (a language tag or a word), [`BUFFER`] bytes.
#[unsafe(no_mangle)]
pub extern "C" fn stem_buffer() -> *mut u8 {
    BUF.with(|b| b.borrow_mut().as_mut_ptr())
}

/// The language of the tag in the buffer's first `len` bytes: `1 +` its index in
/// [`Language::ALL`], 0 for a tag without a stemmer.
#[unsafe(no_mangle)]
pub extern "C" fn stem_language(len: usize) -> u32 {
    BUF.with(|b| {
        let b = b.borrow();
        let tag = std::str::from_utf8(&b[..len.min(BUFFER)]).ok();
        let lang = tag.and_then(Language::from_tag);
        match ONLY {
            Some(only) => u32::from(lang == Some(only)),
            None => lang.and_then(|l| Language::ALL.iter().position(|x| *x == l)).map_or(0, |i| i as u32 + 1),
        }
    })
}

/// Stems the word in the buffer's first `len` bytes in language `id` ([`stem_language`]) in
/// place; returns the stem's length in bytes.
#[unsafe(no_mangle)]
pub extern "C" fn stem_word(id: u32, len: usize) -> usize {
    BUF.with(|b| {
        let mut b = b.borrow_mut();
        let len = len.min(BUFFER);
        let Some(lang) = language(id) else { return len };
        let Ok(word) = std::str::from_utf8(&b[..len]) else { return len };
        let stem = lang.stem(word).into_owned();
        if stem.len() > BUFFER {
            return len;
        }
        b[..stem.len()].copy_from_slice(stem.as_bytes());
        stem.len()
    })
}
