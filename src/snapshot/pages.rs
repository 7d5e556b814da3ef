//! A site's pages on their way into a build: a page file as a document ([`page_document`]),
//! the pages sorted into those to index and those left out ([`with_text`], which also weights
//! a static model from the same parse), the batches the engine adds ([`site_batches`]) and the
//! largest page a build reads ([`max_page_bytes`]). Shared by the native CLI and the `npx`
//! builder, so both index the same pages in the same order.
use crate::error::Result;
use crate::types::{DocumentInput, Format};

/// The largest page a site build indexes, in bytes: its engine's `maxDocumentBytes`
/// ([`super::SnapshotParams::engine_config`]). The crawls leave larger files unread.
pub fn max_page_bytes() -> usize {
    super::SnapshotParams::default().engine_config().max_document_bytes
}

/// The URL of a page from its `/`-separated path relative to the site root: `a/b/index.html` →
/// `/a/b/`, `a/page.html` → `/a/page.html`. A character of a file name that would end or change
/// the path in a URL (`#`, `?`, `%`, `\`, space, controls, quotes, angle brackets and the other
/// ASCII characters RFC 3986 does not allow in a path) is percent-encoded (`100% & more?.html` →
/// `/100%25%20&%20more%3F.html`), so the link reaches the file; other characters stay as they are
/// (a browser encodes them as it requests the page).
pub fn url_of(rel: &str) -> String {
    let mut url = String::with_capacity(rel.len() + 1);
    url.push('/');
    for c in rel.trim_start_matches('/').chars() {
        if c.is_ascii() && (c.is_ascii_control() || " \"#%<>?[\\]^`{|}".contains(c)) {
            url.push_str(&format!("%{:02X}", c as u32));
        } else {
            url.push(c);
        }
    }
    if url.ends_with("/index.html") || url.ends_with("/index.htm") {
        url.truncate(url.rfind('/').unwrap_or(0) + 1);
    }
    url
}

/// Whether a file of a built site is a page (`.html`, `.htm`, `.md`, `.markdown`, any case).
pub fn is_page(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(_, ext)| ["html", "htm", "md", "markdown"].contains(&ext.to_ascii_lowercase().as_str()))
}

/// A page as a document: its URL (from the `/`-separated relative path) as id and URL; Markdown
/// by extension, else HTML (title, headings and text; `nav`, `footer`, scripts and elements
/// marked `data-webrag-ignore` skipped by [`crate::text::parse`]).
///
/// Errors: [`InputError::InvalidUtf8`] for a page that is not UTF-8.
pub fn page_document(rel: &str, bytes: &[u8]) -> Result<DocumentInput> {
    let url = url_of(rel);
    let text = crate::engine::decode_utf8(&url, bytes)?;
    let lower = url.to_ascii_lowercase();
    let format = if lower.ends_with(".md") || lower.ends_with(".markdown") { Format::Markdown } else { Format::Html };
    Ok(DocumentInput { id: url.clone(), title: None, text, format, url: Some(url), ..Default::default() })
}

/// A site's pages sorted for a build: those with text to index, and the ids of those left out.
#[derive(Debug, Default)]
pub struct SitePages {
    /// The pages to index.
    pub docs: Vec<DocumentInput>,
    /// Pages with no text block after parsing (an empty file, a page of scripts or navigation
    /// only), which a site build skips with a warning instead of failing on `EMPTY_DOCUMENT`.
    pub empty: Vec<String>,
    /// Pages that ask not to be indexed (`<meta name="robots" content="noindex">`: a site
    /// generator's print-all page, table of contents or search page).
    pub noindex: Vec<String>,
}

/// Sorts `docs` into [`SitePages`], each page parsed once here (the engine parses again);
/// `weight`, a static model, is weighted by the text blocks of the pages kept
/// ([`weight_static_model`]) from the same parse.
pub fn with_text(docs: Vec<DocumentInput>, weight: Option<&mut crate::embed::StaticModel>) -> SitePages {
    let mut pages = SitePages::default();
    let mut counts = weight.as_ref().map(|m| m.corpus_counts());
    for d in docs {
        let format = crate::text::resolve_format(d.format, d.url.as_deref(), &d.text);
        match crate::text::parse(&d.text, format) {
            Ok(p) if p.noindex => pages.noindex.push(d.id),
            Ok(p) if p.blocks.iter().any(|b| !b.text.trim().is_empty()) => {
                if let (Some(m), Some(c)) = (weight.as_deref(), counts.as_mut()) {
                    for b in &p.blocks {
                        m.count(c, &b.text);
                    }
                }
                pages.docs.push(d);
            }
            _ => pages.empty.push(d.id),
        }
    }
    if let (Some(m), Some(c)) = (weight, counts) {
        m.weight_by_counts(&c);
    }
    pages
}

/// Pages a site build adds per batch (native and `npx`: the same batches, the same snapshot).
/// Each batch's new titles are looked for in every fact indexed before it (entity links), so
/// fewer, larger batches cost less; a batch's parsed pages and vectors are held at once.
pub const SITE_BATCH: usize = 1024;

/// `docs` in batches of [`SITE_BATCH`] pages, each moved out (a page's text is freed once the
/// engine has chunked its batch).
pub fn site_batches(docs: Vec<DocumentInput>) -> impl Iterator<Item = Vec<DocumentInput>> {
    let mut docs = docs.into_iter();
    std::iter::from_fn(move || Some(docs.by_ref().take(SITE_BATCH).collect::<Vec<_>>()).filter(|b| !b.is_empty()))
}

/// Weights a static model by the site it is about to embed ([`crate::embed::StaticModel::weight_by_corpus`]
/// over every text block of `docs`), before the build: its chunks and the queries the snapshot's
/// token rows embed then lean on the words that tell this site's pages apart. A build does it
/// while it sorts the pages ([`with_text`]); this is the same weighting on its own.
pub fn weight_static_model(model: &mut crate::embed::StaticModel, docs: &[DocumentInput]) {
    // One page parsed at a time: the site's text is not held twice.
    let texts = docs
        .iter()
        .filter_map(|d| crate::text::parse(&d.text, crate::text::resolve_format(d.format, d.url.as_deref(), &d.text)).ok())
        .flat_map(|p| p.blocks.into_iter().map(|b| b.text));
    model.weight_by_corpus(texts);
}
