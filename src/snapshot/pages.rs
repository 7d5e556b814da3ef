//! A site's pages on their way into a build: a page file as a document ([`page_document`]),
//! the crawled files ([`PageFile`]) read through a [`PageSource`] and sorted into those to index
//! and those left out ([`sort_pages`], which also weights a static model from the same parse),
//! the batches the engine adds ([`site_batches`], read again one batch at a time) and the largest
//! page a build reads ([`max_page_bytes`]). Shared by the native CLI and the `npx` builder, so
//! both index the same pages in the same order.
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
pub fn page_document(rel: &str, bytes: Vec<u8>) -> Result<DocumentInput> {
    let url = url_of(rel);
    let text = crate::engine::decode_utf8(&url, bytes)?;
    let lower = url.to_ascii_lowercase();
    let format = if lower.ends_with(".md") || lower.ends_with(".markdown") { Format::Markdown } else { Format::Html };
    Ok(DocumentInput { id: url.clone(), title: None, text, format, url: Some(url), ..Default::default() })
}

/// A page file that a crawl found: its `/`-separated path relative to the site root and its
/// size in bytes when it was found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PageFile {
    /// The path relative to the site root, `/`-separated (the page's URL is [`url_of`] it).
    pub path: String,
    /// Its size when crawled, in bytes (what [`site_batches`] counts).
    pub size: u64,
    /// Its language, the primary subtag of its `<html lang>` ([`crate::text::Parsed::lang`]),
    /// found when the pages are sorted ([`sort_pages`]): its document's
    /// [`DocumentInput::lang`], which its words are stemmed in.
    pub lang: Option<String>,
}

/// Where a site build reads its page files: the file system for the native CLI, a callback into
/// Node for `npx webrag index`. A build reads each page twice (once to sort the pages and weight
/// a static model, once to index it in its batch), so no more than one batch of pages is held
/// at once, whatever the size of the site.
pub trait PageSource {
    /// The bytes of `page`; `Err` says why they cannot be read.
    fn read(&mut self, page: &PageFile) -> std::result::Result<Vec<u8>, String>;
}

/// A site's pages sorted for a build: those with text to index, and those left out.
#[derive(Debug, Default)]
pub struct SitePages {
    /// The pages to index, in crawl order.
    pub pages: Vec<PageFile>,
    /// The ids of pages with no text block after parsing (an empty file, a page of scripts or
    /// navigation only), which a site build skips with a warning instead of failing on
    /// `EMPTY_DOCUMENT`.
    pub empty: Vec<String>,
    /// The ids of pages that ask not to be indexed (`<meta name="robots" content="noindex">`: a
    /// site generator's print-all page, table of contents or search page).
    pub noindex: Vec<String>,
    /// The ids of the site's own search pages (a search box and little text besides:
    /// [`crate::text::Parsed::search_page`]).
    pub search: Vec<String>,
    /// Pages not read, with why: unreadable, larger than [`max_page_bytes`], not UTF-8 text
    /// (a binary file named `.html`).
    pub unread: Vec<(PageFile, String)>,
    /// The filters, metadata and sort keys of the pages to index that have any, by page id
    /// (what the snapshot's filter and sort files and fragments hold: `build_site`).
    pub fields: super::SiteFields,
}

/// Sorts `files` into [`SitePages`], reading and parsing one page at a time (the engine parses
/// again, batch by batch: [`site_batches`]); `weight`, a static model, is weighted by the text
/// blocks of the pages kept ([`weight_static_model`]) from the same parse.
pub fn sort_pages(files: Vec<PageFile>, source: &mut dyn PageSource, weight: Option<&mut crate::embed::StaticModel>) -> SitePages {
    let mut pages = SitePages::default();
    let mut counts = weight.as_ref().map(|m| m.corpus_counts());
    let limit = max_page_bytes();
    for f in files {
        let bytes = match source.read(&f) {
            Ok(b) if b.len() > limit => {
                let why = format!("{} bytes, larger than a page may be ({limit}: maxDocumentBytes)", b.len());
                pages.unread.push((f, why));
                continue;
            }
            Ok(b) => b,
            Err(why) => {
                pages.unread.push((f, format!("unreadable ({why})")));
                continue;
            }
        };
        let d = match page_document(&f.path, bytes) {
            Ok(d) => d,
            Err(_) => {
                pages.unread.push((f, "not UTF-8 text".into()));
                continue;
            }
        };
        let format = crate::text::resolve_format(d.format, d.url.as_deref(), &d.text);
        match crate::text::parse(&d.text, format) {
            Ok(p) if p.noindex => pages.noindex.push(d.id),
            Ok(p) if p.search_page => pages.search.push(d.id),
            Ok(p) if p.blocks.iter().any(|b| !b.text.trim().is_empty()) => {
                if let (Some(m), Some(c)) = (weight.as_deref(), counts.as_mut()) {
                    for b in &p.blocks {
                        m.count(c, &b.text);
                    }
                }
                if !p.fields.is_empty() {
                    pages.fields.insert(d.id, p.fields);
                }
                pages.pages.push(PageFile { lang: p.lang, ..f });
            }
            _ => pages.empty.push(d.id),
        }
    }
    if let (Some(m), Some(c)) = (weight, counts) {
        m.weight_by_counts(&c);
    }
    pages
}

/// Pages a site build adds per batch at most (native and `npx`: the same batches, the same
/// snapshot). Each batch's new titles are looked for in every fact indexed before it (entity
/// links), so fewer, larger batches cost less; a batch's pages, parsed pages and vectors are held
/// at once.
pub const SITE_BATCH: usize = 1024;

/// Bytes of page files a site build reads into one batch at most (a page larger than this is a
/// batch of its own): what a build holds of its site's files at once is bounded by this and the
/// largest page, not by the size of the site.
pub const SITE_BATCH_BYTES: u64 = 8 << 20;

/// The documents of `pages`, read from `source` in batches of at most [`SITE_BATCH`] pages and
/// [`SITE_BATCH_BYTES`] (by the sizes the crawl found).
///
/// Errors: a page that cannot be read now, or is no longer UTF-8 text (the site changed since
/// [`sort_pages`] read it), as [`crate::error::StoreError::Backend`] naming it.
pub fn site_batches(pages: Vec<PageFile>, source: &mut dyn PageSource) -> impl Iterator<Item = Result<Vec<DocumentInput>>> + '_ {
    let mut pages = pages.into_iter().peekable();
    std::iter::from_fn(move || {
        let mut batch: Vec<PageFile> = Vec::new();
        let mut bytes = 0u64;
        while let Some(next) = pages.next_if(|p| batch.is_empty() || (batch.len() < SITE_BATCH && bytes + p.size <= SITE_BATCH_BYTES)) {
            bytes += next.size;
            batch.push(next);
        }
        if batch.is_empty() {
            return None;
        }
        let changed = |p: &PageFile, why: String| -> crate::error::Error {
            crate::error::StoreError::Backend { reason: format!("{}: {why} (the site changed during the build)", p.path) }.into()
        };
        Some(
            batch
                .iter()
                .map(|p| {
                    let bytes = source.read(p).map_err(|why| changed(p, why))?;
                    let doc = page_document(&p.path, bytes).map_err(|e| changed(p, e.to_string()))?;
                    Ok(DocumentInput { lang: p.lang.clone(), ..doc })
                })
                .collect(),
        )
    })
}

/// Weights a static model by the site it is about to embed ([`crate::embed::StaticModel::weight_by_corpus`]
/// over every text block of `docs`), before the build: its chunks and the queries the snapshot's
/// token rows embed then lean on the words that tell this site's pages apart. A build does it
/// while it sorts the pages ([`sort_pages`]); this is the same weighting on its own.
pub fn weight_static_model(model: &mut crate::embed::StaticModel, docs: &[DocumentInput]) {
    // One page parsed at a time: the site's text is not held twice.
    let texts = docs
        .iter()
        .filter_map(|d| crate::text::parse(&d.text, crate::text::resolve_format(d.format, d.url.as_deref(), &d.text)).ok())
        .flat_map(|p| p.blocks.into_iter().map(|b| b.text));
    model.weight_by_corpus(texts);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages of `size` bytes each, read from memory; a page named in `gone` cannot be read.
    struct Pages {
        size: usize,
        reads: usize,
        gone: Option<String>,
    }

    impl PageSource for Pages {
        fn read(&mut self, page: &PageFile) -> std::result::Result<Vec<u8>, String> {
            self.reads += 1;
            if self.gone.as_deref() == Some(page.path.as_str()) {
                return Err("No such file or directory".into());
            }
            let body = format!("<title>{}</title><p>Text of {}.</p>", page.path, page.path);
            Ok(format!("{body}{}", " ".repeat(self.size.saturating_sub(body.len()))).into_bytes())
        }
    }

    fn files(n: usize, size: usize) -> Vec<PageFile> {
        (0..n).map(|i| PageFile { path: format!("p{i:03}.html"), size: size as u64, lang: None }).collect()
    }

    #[test]
    fn batches_end_at_the_page_count_or_the_bytes_and_a_large_page_is_a_batch_alone() {
        let mut src = Pages { size: 100, reads: 0, gone: None };
        let sizes: Vec<usize> = site_batches(files(2500, 100), &mut src).map(|b| b.unwrap().len()).collect();
        assert_eq!(sizes, [SITE_BATCH, SITE_BATCH, 2500 - 2 * SITE_BATCH]);
        // 3 MiB pages: two fit in 8 MiB; a page over the budget is a batch of its own.
        let mut big = files(5, 3 << 20);
        big[2].size = 9 << 20;
        let mut src = Pages { size: 10, reads: 0, gone: None };
        let sizes: Vec<usize> = site_batches(big, &mut src).map(|b| b.unwrap().len()).collect();
        assert_eq!(sizes, [2, 1, 2]);
        assert_eq!(src.reads, 5);
    }

    #[test]
    fn a_page_gone_since_it_was_sorted_fails_its_batch_naming_it() {
        let mut src = Pages { size: 64, reads: 0, gone: None };
        let sorted = sort_pages(files(3, 64), &mut src, None);
        assert_eq!(sorted.pages.len(), 3);
        src.gone = Some("p001.html".into());
        let err = site_batches(sorted.pages, &mut src).next().unwrap().unwrap_err();
        assert!(err.to_string().contains("p001.html") && err.to_string().contains("changed"), "{err}");
        // Unreadable when sorted: left out, with why.
        let sorted = sort_pages(files(3, 64), &mut src, None);
        assert_eq!(sorted.pages.len(), 2);
        assert_eq!(sorted.unread.len(), 1);
        assert!(sorted.unread[0].1.starts_with("unreadable (No such file"), "{:?}", sorted.unread);
    }
}
