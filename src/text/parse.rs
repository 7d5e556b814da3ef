//! Markdown / HTML / plain-text parsing into blocks that keep their heading path.
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::types::Format;

#[cfg(any(not(target_arch = "wasm32"), feature = "markup"))]
mod fields;
#[cfg(any(not(target_arch = "wasm32"), feature = "markup"))]
mod markup;

/// One block of text (paragraph, list item, code block, table row) with the headings above it.
///
/// Parsing is linear in the input: the blocks under one heading share its path (`Rc`), and a
/// heading keeps at most [`MAX_HEADING_CHARS`] characters (paths are at most 6 deep).
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// Headings above the block, outermost first (shared by the blocks of a section).
    pub heading_path: Rc<[String]>,
    /// Plain text of the block (whitespace collapsed except in code blocks).
    pub text: String,
}

/// A parsed document.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parsed {
    /// Title found in the document (`<title>`, else the first `h1` / `#` heading).
    pub title: Option<String>,
    /// Blocks in document order.
    pub blocks: Vec<Block>,
    /// An HTML page's `<meta name="robots" content="noindex">` (or `none`): a site build leaves
    /// the page out; a document added to a knowledge base is indexed all the same.
    pub noindex: bool,
    /// An HTML page that is a site's own search page: a search box in its content (a search
    /// input, a `role="search"` element, a `data-webrag-search` mount) or the webrag box's script,
    /// and under [`SEARCH_PAGE_CHARS`] characters of text besides. A site build leaves it out,
    /// as it does `noindex`; a document added to a knowledge base is indexed all the same.
    pub search_page: bool,
    /// An HTML page's filters, metadata and sort keys (`data-webrag-filter`, `-meta`, `-sort`),
    /// which a site build stores in its snapshot; a knowledge base does not read them.
    pub fields: PageFields,
    /// An HTML page's language, the primary subtag of `<html lang>` lowercased (`en` of
    /// `en-GB`; [`crate::types::primary_subtag`]), which a site build stems the page's words by; read
    /// where the fields are (not by the page's engine builds).
    pub lang: Option<String>,
}

/// What a page says about itself for a static site's filters, result metadata and sort
/// (docs/static-site.md, "Filters, metadata and sort"): `(key, value)` pairs in page order, read
/// from the attributes `data-webrag-filter`, `data-webrag-meta` and `data-webrag-sort`, which
/// mirror Pagefind's `data-pagefind-*` (a site may carry both). A filter key may have several
/// values on one page; a metadata or sort key keeps its first. Keys are at most
/// [`MAX_FIELD_KEY_CHARS`] characters, values at most [`MAX_FIELD_VALUE_CHARS`] (longer ones are
/// cut), at most [`MAX_PAGE_FIELDS`] pairs of each kind a page (the rest are dropped).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PageFields {
    /// `data-webrag-filter`: the page's values of each filter (facet).
    pub filters: Vec<(String, String)>,
    /// `data-webrag-meta`: shown with the page's results.
    pub meta: Vec<(String, String)>,
    /// `data-webrag-sort`: what results can be ordered by.
    pub sort: Vec<(String, String)>,
}

impl PageFields {
    /// Whether the page has none.
    pub fn is_empty(&self) -> bool {
        self.filters.is_empty() && self.meta.is_empty() && self.sort.is_empty()
    }
}

/// Characters of a filter, metadata or sort key at most ([`PageFields`]).
pub const MAX_FIELD_KEY_CHARS: usize = 64;
/// Characters of a filter, metadata or sort value at most (a longer one is cut).
pub const MAX_FIELD_VALUE_CHARS: usize = 256;
/// Pairs of each kind (filters, metadata, sort) a page keeps at most.
pub const MAX_PAGE_FIELDS: usize = 64;

/// Characters of text below which a page holding a search box is a search page (a Sphinx or
/// MkDocs `search.html` has 20 to 100; a page with a box in its header and content of its own
/// has more).
#[cfg(any(not(target_arch = "wasm32"), feature = "markup"))]
pub const SEARCH_PAGE_CHARS: usize = 300;

/// Resolves [`Format::Auto`] from a file name or URL (`.md`/`.markdown`, `.html`/`.htm`), then by
/// sniffing for a leading `<`; otherwise plain text.
pub fn resolve_format(format: Format, url: Option<&str>, text: &str) -> Format {
    if format != Format::Auto {
        return format;
    }
    let lower = url.unwrap_or("").to_ascii_lowercase();
    let path = lower.split(['?', '#']).next().unwrap_or("");
    if path.ends_with(".md") || path.ends_with(".markdown") {
        Format::Markdown
    } else if path.ends_with(".html") || path.ends_with(".htm") {
        Format::Html
    } else if path.ends_with(".txt") {
        Format::Text
    } else if text.trim_start().starts_with('<') {
        Format::Html
    } else {
        Format::Text
    }
}

/// Parses `text` in the given format (which must not be `Auto`; resolve it first).
///
/// Errors: `PARSER_UNAVAILABLE` for Markdown or HTML in a build without the parsers (the page's
/// search build) whose platform has no parser module loaded (`ports::parse_markup`).
/// Builds with the `markup` feature and native builds never fail.
pub fn parse(text: &str, format: Format) -> Result<Parsed> {
    match format {
        Format::Markdown | Format::Html => parse_markup(text, format),
        Format::Text | Format::Auto => Ok(parse_text(text)),
    }
}

#[cfg(any(not(target_arch = "wasm32"), feature = "markup"))]
fn parse_markup(text: &str, format: Format) -> Result<Parsed> {
    Ok(if format == Format::Markdown { markup::parse_markdown(text) } else { markup::parse_html(text) })
}

/// The search build: the platform's parser module, its reply in the [`ParsedWire`] form.
#[cfg(all(target_arch = "wasm32", not(feature = "markup")))]
fn parse_markup(text: &str, format: Format) -> Result<Parsed> {
    let unavailable = |reason: String| crate::error::InputError::ParserUnavailable { format: format.name(), reason };
    let wire = crate::ports::parse_markup(text, format).map_err(unavailable)?;
    let wire: ParsedWire =
        serde_json::from_str(&wire).map_err(|e| unavailable(format!("the parser module's reply does not decode: {e}")))?;
    Ok(wire.into_parsed())
}

/// [`Parsed`] as JSON between the parser module and the search build (`src/web/markup_module.rs`):
/// the blocks grouped by their shared heading path, so a path is written once per section (the
/// reply stays linear in the input, like [`Parsed`] itself).
#[derive(Debug, Serialize, Deserialize)]
pub struct ParsedWire {
    /// [`Parsed::title`].
    title: Option<String>,
    /// Runs of blocks under one heading path: (path, the blocks' texts).
    sections: Vec<(Vec<String>, Vec<String>)>,
}

impl ParsedWire {
    /// The wire form of `parsed`: consecutive blocks that share one heading path (`Rc`) form one
    /// section.
    pub fn new(parsed: &Parsed) -> ParsedWire {
        let mut sections: Vec<(Vec<String>, Vec<String>)> = Vec::new();
        let mut last: Option<&Rc<[String]>> = None;
        for b in &parsed.blocks {
            match sections.last_mut() {
                Some((_, texts)) if last.is_some_and(|l| Rc::ptr_eq(l, &b.heading_path)) => texts.push(b.text.clone()),
                _ => sections.push((b.heading_path.to_vec(), vec![b.text.clone()])),
            }
            last = Some(&b.heading_path);
        }
        ParsedWire { title: parsed.title.clone(), sections }
    }

    /// The [`Parsed`] it stands for, each section's blocks sharing one path.
    pub fn into_parsed(self) -> Parsed {
        let mut blocks = Vec::new();
        for (path, texts) in self.sections {
            let path: Rc<[String]> = path.into();
            blocks.extend(texts.into_iter().map(|text| Block { heading_path: path.clone(), text }));
        }
        Parsed { title: self.title, blocks, ..Default::default() }
    }
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The longest heading kept, in characters (a longer one is cut): it is repeated in every chunk
/// record of its section.
pub const MAX_HEADING_CHARS: usize = 256;

/// The longest title kept, in characters (a longer one is cut, [`cut_title`]): it is repeated in
/// the chunks' embedding and BM25 inputs, the graph's topic and every search hit of its document.
pub const MAX_TITLE_CHARS: usize = MAX_HEADING_CHARS;

/// `title` cut at [`MAX_TITLE_CHARS`], and whether it was longer (a caller that must not drop
/// the rest indexes the full text as a block of the body).
pub fn cut_title(mut title: String) -> (String, bool) {
    match title.char_indices().nth(MAX_TITLE_CHARS) {
        Some((cut, _)) => {
            title.truncate(cut);
            (title, true)
        }
        None => (title, false),
    }
}

/// A block of `text` with whitespace collapsed and no heading path: a long title kept whole as a
/// document's first text ([`cut_title`]).
pub fn title_block(text: &str) -> Block {
    Block { heading_path: Rc::from(Vec::new()), text: collapse_ws(text) }
}

/// Tracks the heading stack: `levels[i]` is the level of `path[i]`; `shared` is the path as the
/// blocks hold it, made once per heading; `path[..covered]` is in some block's path. A heading
/// no block comes under (an empty section, a page's last heading) is a block of its own when it
/// leaves the stack ([`Headings::finish`] at the end): its text is never dropped.
#[derive(Default)]
struct Headings {
    // Only the Markdown and HTML parsers nest headings (`parse/markup.rs`).
    #[cfg_attr(all(target_arch = "wasm32", not(feature = "markup")), allow(dead_code))]
    levels: Vec<u8>,
    path: Vec<String>,
    shared: Option<Rc<[String]>>,
    covered: usize,
}

impl Headings {
    fn shared(&mut self) -> Rc<[String]> {
        self.shared.get_or_insert_with(|| self.path.clone().into()).clone()
    }
}

fn push_block(blocks: &mut Vec<Block>, headings: &mut Headings, text: &str, keep_ws: bool) {
    let t = if keep_ws { text.trim().to_string() } else { collapse_ws(text) };
    if !t.is_empty() {
        blocks.push(Block { heading_path: headings.shared(), text: t });
        headings.covered = headings.path.len();
    }
}

fn parse_text(text: &str) -> Parsed {
    let mut out = Parsed::default();
    let mut headings = Headings::default();
    let mut cur = String::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            push_block(&mut out.blocks, &mut headings, &cur, false);
            cur.clear();
        } else {
            cur.push_str(line);
            cur.push('\n');
        }
    }
    push_block(&mut out.blocks, &mut headings, &cur, false);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Native builds parse every format.
    fn parse(text: &str, format: Format) -> Parsed {
        super::parse(text, format).expect("native builds have the parsers")
    }

    #[test]
    fn page_fields_from_text_inline_values_and_attributes_anywhere_in_the_page() {
        let html = r#"<html><head><title>T</title>
            <meta data-webrag-filter="tag[content]" content="Rust">
            <meta data-webrag-sort="date[content]" content="2024-03-01"></head>
            <body><nav data-webrag-filter="section:Guide">menu</nav>
            <main><h1 data-webrag-meta="heading">The <em>big</em>   title</h1>
            <p>By <span data-webrag-filter="author">Ann <b>Lee</b></span>.</p>
            <div data-webrag-filter="author">Bo<div>b</div></div>
            <p data-webrag-filter="tag:wasm, tag:Rust, tag[missing], empty:" data-webrag-meta="image[data-src], tag:x, tag:y" data-src="/a.png">text</p>
            <img data-webrag-meta="alt" alt="nothing">
            </main></body></html>"#;
        let p = parse(html, Format::Html);
        let pairs = |v: &[(String, String)]| v.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>();
        assert_eq!(pairs(&p.fields.filters), ["tag=Rust", "section=Guide", "author=Ann Lee", "author=Bob", "tag=wasm"]);
        assert_eq!(pairs(&p.fields.meta), ["heading=The big title", "image=/a.png", "tag=x"]);
        assert_eq!(pairs(&p.fields.sort), ["date=2024-03-01"]);
        // The text is indexed as before: the filter in the nav is read, the nav is not indexed.
        assert!(p.blocks.iter().all(|b| !b.text.contains("menu")));
        assert!(p.blocks.iter().any(|b| b.text == "By Ann Lee."));
    }

    #[test]
    fn page_fields_are_bounded_and_an_unclosed_element_keeps_its_text() {
        let many: String = (0..200).map(|i| format!(r#"<i data-webrag-filter="k">v{i}</i>"#)).collect();
        let long = "x".repeat(10_000);
        let p =
            parse(&format!(r#"{many}<p data-webrag-sort="{}:1">y</p><b data-webrag-meta="open">{long}"#, "k".repeat(100)), Format::Html);
        assert_eq!(p.fields.filters.len(), crate::text::MAX_PAGE_FIELDS);
        assert_eq!(p.fields.sort[0].0.chars().count(), crate::text::MAX_FIELD_KEY_CHARS);
        assert_eq!(p.fields.meta[0].1.chars().count(), crate::text::MAX_FIELD_VALUE_CHARS);
        // Markdown and plain text have none.
        assert!(parse("# T\n\ntext", Format::Markdown).fields.is_empty());
    }

    #[test]
    fn wire_form_round_trips_and_shares_paths() {
        let doc = "# T\n\na\n\nb\n\n## S\n\nc\n\n# U\n\nd\n";
        let p = parse(doc, Format::Markdown);
        let wire = ParsedWire::new(&p);
        assert_eq!(wire.sections.len(), 3, "one section per heading path: {wire:?}");
        let back: ParsedWire = serde_json::from_str(&serde_json::to_string(&wire).unwrap()).unwrap();
        let back = back.into_parsed();
        assert_eq!(back, p);
        assert!(Rc::ptr_eq(&back.blocks[0].heading_path, &back.blocks[1].heading_path));
    }

    #[test]
    fn markdown_keeps_heading_tree() {
        let p = parse("# Title\n\nintro\n\n## A\n\npara a\n\n- item 1\n- item 2\n\n### A1\n\ndeep\n\n## B\n\npara b\n", Format::Markdown);
        assert_eq!(p.title.as_deref(), Some("Title"));
        let paths: Vec<_> = p.blocks.iter().map(|b| (b.heading_path.join("/"), b.text.as_str())).collect();
        assert_eq!(
            paths,
            vec![
                ("Title".into(), "intro"),
                ("Title/A".into(), "para a"),
                ("Title/A".into(), "item 1"),
                ("Title/A".into(), "item 2"),
                ("Title/A/A1".into(), "deep"),
                ("Title/B".into(), "para b"),
            ]
        );
    }

    #[test]
    fn html_with_a_main_element_indexes_it_alone() {
        // mdBook's shape: a pop-up and a menu bar (with an h1) before <main>, a sidebar after.
        let html = "<html><head><title>Page</title></head><body><div id=help><h2>Keyboard shortcuts</h2>\
            <p>Press S to search</p></div><div class=menu><h1>The Book</h1></div>\
            <main><h1>Intro</h1><p>Body text.</p><div><p>Nested</p></div><h2>More</h2></main>\
            <div class=sidebar><p>Chapter list</p></div></body></html>";
        let p = parse(html, Format::Html);
        let all: Vec<_> = p.blocks.iter().map(|b| (b.heading_path.join("/"), b.text.clone())).collect();
        assert_eq!(
            all,
            vec![("Intro".into(), "Body text.".into()), ("Intro".into(), "Nested".into()), ("Intro/More".into(), "More".into()),]
        );
        // `role="main"` on any element counts, nested elements of its name included; an empty
        // main element leaves the whole page.
        let p = parse("<div>Site</div><div role=\"main\"><div><p>a</p></div><p>b</p></div><p>after</p>", Format::Html);
        assert_eq!(p.blocks.iter().map(|b| b.text.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        let p = parse("<p>all</p><main></main><p>of it</p>", Format::Html);
        assert_eq!(p.blocks.iter().map(|b| b.text.as_str()).collect::<Vec<_>>(), ["all", "of it"]);
        // Many main elements, unclosed ones included: linear, and all of them kept.
        let many = "<main><p>x</p></main><p>out</p>".repeat(20_000) + "<main><p>open";
        let p = parse(&many, Format::Html);
        assert_eq!(p.blocks.len(), 20_001);
        assert!(p.blocks.iter().all(|b| b.text != "out"));
    }

    #[test]
    fn html_landmark_roles_and_robots_noindex() {
        let html = "<head><meta name=\"ROBOTS\" content=\"follow, NoIndex\"></head><div role=\"navigation\"><p>Table of Contents</p></div>\
            <form role=search><p>Search</p></form><p>Text</p><div role=contentinfo><p>(c) 2026</p></div>";
        let p = parse(html, Format::Html);
        assert_eq!(p.blocks.iter().map(|b| b.text.as_str()).collect::<Vec<_>>(), ["Text"]);
        assert!(p.noindex);
        for (meta, noindex) in [
            ("<meta name=robots content=none>", true),
            ("<meta name=robots content=nofollow>", false),
            ("<meta name=googlebot content=noindex>", false),
        ] {
            assert_eq!(parse(&format!("{meta}<p>x</p>"), Format::Html).noindex, noindex, "{meta}");
        }
    }

    #[test]
    fn html_search_pages_are_found_and_pages_with_a_header_box_are_not() {
        let sphinx = "<html><head><title>Search</title></head><body><div role=\"navigation\"><ul><li>Intro</li></ul></div>\
            <div role=\"main\"><h1>Search</h1><noscript><p>Please activate JavaScript.</p></noscript>\
            <p>Searching for multiple words only shows matches that contain all words.</p>\
            <form action=\"\" method=\"get\"><input type=\"text\" name=\"q\"><input type=\"submit\" value=\"search\"></form>\
            <div id=\"search-results\"></div></div></body></html>";
        assert!(parse(sphinx, Format::Html).search_page, "a Sphinx search.html");
        let mkdocs = "<div role=main><h1 id=search>Search Results</h1><form id=content_search action=search.html>\
            <input name=q id=mkdocs-search-query type=text placeholder=\"Search the Docs\"></form><div id=mkdocs-search-results>Searching...</div></div>";
        assert!(parse(mkdocs, Format::Html).search_page, "an MkDocs search.html");
        let webrag = "<title>Search</title><h1>Search this site</h1><div id=search></div><script type=module src=\"/docs/webrag/webrag-ui.js\"></script>";
        assert!(parse(webrag, Format::Html).search_page, "the page of webrag's own box");
        assert!(parse("<p>Find it</p><div data-webrag-search></div>", Format::Html).search_page);
        // A box in the header of a page with content of its own, or outside its main element.
        let long = "<p>".to_string() + &"word ".repeat(80) + "</p>";
        let header = format!("<header><form><input type=search name=q></form></header>{long}");
        assert!(!parse(&header, Format::Html).search_page, "a page with a header box and text");
        let outside = "<div class=top><input type=search></div><main><p>Short page.</p></main>";
        assert!(!parse(outside, Format::Html).search_page, "a box outside the main element");
        assert!(!parse("<p>Short page.</p><input type=checkbox name=agree>", Format::Html).search_page);
        assert!(!parse("<nav><input type=search></nav><p>Short page.</p>", Format::Html).search_page, "a box in skipped chrome");
    }

    #[test]
    fn html_skips_chrome_and_scripts_and_survives_malformed_markup() {
        let html = "<html><head><title>T &amp; U</title><script>var x = '<p>no</p>';</script></head><body>\
            <nav>menu</nav><h1>Main</h1><p>Hello <b>world</b><div data-webrag-ignore>secret</div>\
            <h2>Sub</h2><p>text &lt;kept&gt;<footer>foot</footer><p>unclosed <i>italic";
        let p = parse(html, Format::Html);
        assert_eq!(p.title.as_deref(), Some("T & U"));
        let all: Vec<_> = p.blocks.iter().map(|b| (b.heading_path.join("/"), b.text.clone())).collect();
        assert_eq!(
            all,
            vec![
                ("Main".into(), "Hello world".into()),
                ("Main/Sub".into(), "text <kept>".into()),
                ("Main/Sub".into(), "unclosed italic".into()),
            ]
        );
    }

    #[test]
    fn parsing_holds_memory_linear_in_the_input() {
        // Six long headings over thousands of small blocks: the blocks share their section's path
        // (each used to hold its own copy: 5,000 × 6 × 10 KB), and headings are cut.
        let mut md = String::new();
        for l in 1..=6 {
            md += &format!("{} {}\n\n", "#".repeat(l), "word ".repeat(2000));
        }
        for i in 0..5000 {
            md += &format!("- item {i}\n");
        }
        let p = parse(&md, Format::Markdown);
        // Each long heading is cut in the path and kept whole as one block of its section.
        assert_eq!(p.blocks.len(), 6 + 5000);
        assert!(p.blocks[..6].iter().all(|b| b.text == "word ".repeat(2000).trim()));
        let items = &p.blocks[6..];
        let mut paths: Vec<*const [String]> = items.iter().map(|b| Rc::as_ptr(&b.heading_path)).collect();
        paths.dedup();
        assert_eq!(paths.len(), 1, "one shared path");
        let path = &items[0].heading_path;
        assert_eq!(path.len(), 6);
        assert!(path.iter().all(|h| h.chars().count() == MAX_HEADING_CHARS));
        let held: usize = p.blocks.iter().map(|b| b.text.len()).sum::<usize>() + path.iter().map(String::len).sum::<usize>();
        assert!(held <= 2 * md.len(), "{held} bytes held for {} of input", md.len());
    }

    #[test]
    fn unclosed_headings_end_where_the_body_starts_and_drop_no_text() {
        let blocks = |html: &str| -> (Option<String>, Vec<(String, String)>) {
            let p = parse(html, Format::Html);
            (p.title, p.blocks.iter().map(|b| (b.heading_path.join("/"), b.text.clone())).collect())
        };
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        // A block inside a heading ends it: the heading is what came before, the rest is body.
        assert_eq!(
            blocks("<h2>Intro<p>Owls hunt at night.<p>They eat mice."),
            (None, vec![pair("Intro", "Owls hunt at night."), pair("Intro", "They eat mice.")])
        );
        assert_eq!(blocks("<h1>Site</div><p>Welcome to the site."), (Some("Site".into()), vec![pair("Site", "Welcome to the site.")]));
        assert_eq!(blocks("<body><h1>Site<div><p>Welcome</div>"), (Some("Site".into()), vec![pair("Site", "Welcome")]));
        // A heading inside an open heading ends it (nothing of the first is lost).
        assert_eq!(blocks("<h1>A<h2>B</h2><p>x"), (Some("A".into()), vec![pair("A/B", "x")]));
        // A heading no text comes under (an empty section, the page's last heading) is text too.
        assert_eq!(
            blocks("<h2>Empty</h2><h2>Next</h2><p>x</p><h3>Last</h3>"),
            (None, vec![pair("Empty", "Empty"), pair("Next", "x"), pair("Next/Last", "Last")])
        );
        // A line break stays inside the heading.
        assert_eq!(blocks("<h2>Title<br>Subtitle</h2><p>x"), (None, vec![pair("Title Subtitle", "x")]));
        // A heading never closed before the end: its text is the page's text.
        assert_eq!(
            blocks("<p>first</p><h2>Never closed, all of this"),
            (None, vec![pair("", "first"), pair("", "Never closed, all of this")])
        );
        // A heading that runs on (no block tag to stop it) is cut in the path and kept whole.
        let long = "word ".repeat(300);
        let (_, b) = blocks(&format!("<h2>{long}</h2><p>x"));
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].1, long.trim());
        assert_eq!(b[0].0.chars().count(), MAX_HEADING_CHARS);
        // The same in Markdown: a long setext heading (a paragraph underlined by mistake).
        let p = parse(&format!("{long}\n---\n\nbody\n"), Format::Markdown);
        assert_eq!(p.blocks.iter().map(|b| b.text.as_str()).collect::<Vec<_>>(), [long.trim(), "body"]);
    }

    #[test]
    fn padded_tables_do_not_multiply_the_text() {
        // A real table keeps its cells.
        let p = parse("| Name | Age |\n|---|---|\n| Ann | 31 |\n| Bob |\n", Format::Markdown);
        let texts: Vec<&str> = p.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["Name | Age |", "Ann | 31 |", "Bob |"], "the missing cell adds nothing");
        // A header of 2,000 columns over 2,000 one-character rows: the parser would fill in
        // 4 million cells; the rows are read as text instead.
        let md = format!("{}|\n{}|\n{}", "|h".repeat(2000), "|-".repeat(2000), "|\n".repeat(2000));
        let p = parse(&md, Format::Markdown);
        let held: usize = p.blocks.iter().map(|b| b.text.len()).sum();
        assert!(held <= md.len(), "{held} bytes of blocks for {} of input", md.len());
        assert!(p.blocks.iter().any(|b| b.text.contains("h|h|h")), "the header text is kept");
        // A row with more cells than its header: the parser would drop the extra cells' text.
        let p = parse("| a |\n|---|\n| b | lost? |\n", Format::Markdown);
        assert!(p.blocks.iter().any(|b| b.text.contains("lost?")), "{:?}", p.blocks);
        // An escaped pipe is not a cell boundary: the table stays a table.
        let p = parse("| a | b |\n|---|---|\n| x \\| y | z |\n", Format::Markdown);
        assert_eq!(p.blocks.iter().map(|b| b.text.as_str()).collect::<Vec<_>>(), ["a | b |", "x | y | z |"]);
    }

    #[test]
    fn deeply_nested_skipped_html_unwinds() {
        // 100k nested skipped elements, then 100k end tags of names not on the stack: each end
        // tag is a map lookup (the stack used to be scanned whole for each: quadratic).
        let n = 100_000;
        let html = format!("<p>before</p>{}{}{}<p>after</p>", "<svg>".repeat(n), "</b>".repeat(n), "</svg>".repeat(n));
        let p = parse(&html, Format::Html);
        let texts: Vec<&str> = p.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["before", "after"]);
        let unclosed = format!("<p>kept</p>{}<p>hidden", "<script>".repeat(n));
        assert_eq!(parse(&unclosed, Format::Html).blocks.len(), 1);
    }

    #[test]
    fn heading_permalink_marks_are_not_part_of_headings() {
        let html = "<title>Doc</title><h1>Guide<a class=\"headerlink\" href=\"#guide\">¶</a></h1><p>a</p>\
            <h2>Usage <a href=\"#usage\">#</a></h2><p>b</p><h2>C#</h2><p>c</p><h3>Part § 🔗</h3><p>d</p>";
        let p = parse(html, Format::Html);
        let paths: Vec<String> = p.blocks.iter().map(|b| b.heading_path.join(" > ")).collect();
        assert_eq!(paths, ["Guide", "Guide > Usage", "Guide > C#", "Guide > C# > Part"]);
        let md = parse("# Install ¶\n\ntext\n", Format::Markdown);
        assert_eq!((md.title.as_deref(), &md.blocks[0].heading_path[..]), (Some("Install"), &["Install".to_string()][..]));
    }

    #[test]
    fn plain_text_paragraphs() {
        let p = parse("one\ntwo\n\n\nthree", Format::Text);
        assert_eq!(p.blocks.len(), 2);
        assert_eq!(p.blocks[0].text, "one two");
    }

    #[test]
    fn auto_format() {
        assert_eq!(resolve_format(Format::Auto, Some("a/b.MD"), "x"), Format::Markdown);
        assert_eq!(resolve_format(Format::Auto, Some("x.htm?q=1"), "x"), Format::Html);
        assert_eq!(resolve_format(Format::Auto, None, "  <p>x"), Format::Html);
        assert_eq!(resolve_format(Format::Auto, None, "plain"), Format::Text);
    }
}
