//! Text: parsing documents into heading-aware blocks ([`parse`]), the BM25 analyzer
//! ([`analyze`], stemmed by language: [`Language`]) and chunking bounded by the embedder's tokenizer ([`chunk`]).
//!
//! Parsing uses well-kept libraries (pulldown-cmark for Markdown, html5gum for HTML); what is
//! ours is the mapping of their events onto a heading tree of blocks. The page's search build
//! links neither: it parses Markdown and HTML with the same code built as a module of its own,
//! loaded when a document needs it ([`parse`], [`ParsedWire`]).
mod analyze;
mod chunk;
mod parse;
mod stem;

pub use analyze::{ANALYZER_VERSION, analyze, analyze_each, analyze_each_in, analyze_in, is_cjk};
pub use chunk::{Chunk, TokenCounter, chunk, embed_input};
pub use parse::{
    Block, MAX_FIELD_KEY_CHARS, MAX_FIELD_VALUE_CHARS, MAX_HEADING_CHARS, MAX_PAGE_FIELDS, MAX_TITLE_CHARS, PageFields, Parsed, ParsedWire,
    cut_title, parse, resolve_format, title_block,
};
pub use stem::{Language, MAX_STEM_BYTES, STEMS};
