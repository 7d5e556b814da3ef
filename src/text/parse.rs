//! Markdown / HTML / plain-text parsing into blocks that keep their heading path.
use std::collections::HashMap;
use std::rc::Rc;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::types::Format;

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
}

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
pub fn parse(text: &str, format: Format) -> Parsed {
    match format {
        Format::Markdown => parse_markdown(text),
        Format::Html => parse_html(text),
        Format::Text | Format::Auto => parse_text(text),
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
    levels: Vec<u8>,
    path: Vec<String>,
    shared: Option<Rc<[String]>>,
    covered: usize,
}

impl Headings {
    fn enter(&mut self, level: u8, mut text: String, blocks: &mut Vec<Block>) {
        if let Some((cut, _)) = text.char_indices().nth(MAX_HEADING_CHARS) {
            text.truncate(cut);
        }
        if self.levels.last().is_some_and(|&l| l >= level) {
            self.finish(blocks);
        }
        while self.levels.last().is_some_and(|&l| l >= level) {
            self.levels.pop();
            self.path.pop();
        }
        self.covered = self.covered.min(self.path.len());
        self.levels.push(level);
        self.path.push(text);
        self.shared = None;
    }

    /// The deepest heading as a block of its own, if no block came under it.
    fn finish(&mut self, blocks: &mut Vec<Block>) {
        if let Some(last) = self.path.last().filter(|_| self.covered < self.path.len()) {
            let text = last.clone();
            blocks.push(Block { heading_path: self.shared(), text });
            self.covered = self.path.len();
        }
    }

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

/// Ends the open heading `heading` (level, raw text): its text, whitespace collapsed, enters the
/// heading path (cut at [`MAX_HEADING_CHARS`]) and is the title when `title` allows and it is
/// the first level-1 heading. A longer text (an unclosed heading that ran into the body, a long
/// setext heading) is also a block of body text under it: nothing is dropped.
/// `h` without the permalink marks site generators append to headings (Sphinx and MkDocs `¶`,
/// `§`, `🔗`, or a `#` standing alone: `Usage #`, not `C#`).
fn strip_permalink(h: &str) -> &str {
    let mut s = h.trim_end();
    loop {
        let t = s.trim_end_matches(['¶', '§', '🔗']).trim_end();
        let t = match t.strip_suffix('#') {
            Some(r) if r.is_empty() || r.ends_with(char::is_whitespace) => r.trim_end(),
            _ => t,
        };
        if t.len() == s.len() {
            return s;
        }
        s = t;
    }
}

fn end_heading(heading: Option<(u8, String)>, out: &mut Parsed, headings: &mut Headings, title: bool) {
    let Some((level, h)) = heading else { return };
    let h = strip_permalink(&collapse_ws(&h)).to_string();
    if h.is_empty() {
        return;
    }
    if title && level == 1 && out.title.is_none() {
        out.title = Some(h.clone());
    }
    let long = h.chars().nth(MAX_HEADING_CHARS).is_some();
    headings.enter(level, h.clone(), &mut out.blocks);
    if long {
        push_block(&mut out.blocks, headings, &h, false);
    }
}

fn parse_markdown(text: &str) -> Parsed {
    let mut out = Parsed::default();
    let mut headings = Headings::default();
    let mut cur = String::new();
    let mut heading: Option<(u8, String)> = None;
    let mut in_code = false;
    // Tables, unless they would pad rows past the text's size or drop cells ([`tables_fit`]):
    // then their rows are read as paragraphs (the same text).
    let mut opts = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    if tables_fit(text) {
        opts |= Options::ENABLE_TABLES;
    }
    let mut cell_start = 0;
    for ev in Parser::new_ext(text, opts) {
        match ev {
            Event::Start(Tag::Heading { level, .. }) => {
                push_block(&mut out.blocks, &mut headings, &cur, in_code);
                cur.clear();
                heading = Some((level_num(level), String::new()));
            }
            Event::End(TagEnd::Heading(_)) => end_heading(heading.take(), &mut out, &mut headings, true),
            Event::Start(Tag::CodeBlock(_)) => {
                push_block(&mut out.blocks, &mut headings, &cur, false);
                cur.clear();
                in_code = true;
            }
            Event::End(TagEnd::CodeBlock) => {
                push_block(&mut out.blocks, &mut headings, &cur, true);
                cur.clear();
                in_code = false;
            }
            Event::End(TagEnd::Paragraph | TagEnd::Item | TagEnd::TableRow | TagEnd::TableHead | TagEnd::BlockQuote(_)) => {
                push_block(&mut out.blocks, &mut headings, &cur, false);
                cur.clear();
            }
            Event::Start(Tag::TableCell) => cell_start = cur.len(),
            // An empty cell (one the parser filled in for a short row) adds nothing.
            Event::End(TagEnd::TableCell) if cur.len() > cell_start => cur.push_str(" | "),
            Event::Text(t) | Event::Code(t) | Event::InlineMath(t) | Event::DisplayMath(t) => match &mut heading {
                Some((_, h)) => h.push_str(&t),
                None => cur.push_str(&t),
            },
            Event::Html(t) | Event::InlineHtml(t) => {
                // Raw HTML inside Markdown: keep its text, drop the tags.
                let inner = parse_html(&t);
                for b in inner.blocks {
                    cur.push(' ');
                    cur.push_str(&b.text);
                }
            }
            Event::SoftBreak | Event::HardBreak => match &mut heading {
                Some((_, h)) => h.push(' '),
                None => cur.push(if in_code { '\n' } else { ' ' }),
            },
            _ => {}
        }
    }
    push_block(&mut out.blocks, &mut headings, &cur, in_code);
    headings.finish(&mut out.blocks);
    out
}

/// Whether pulldown-cmark's tables keep every byte of `text` within bounds: it fills each row up
/// to the header's column count (a wide header over short `|` rows would make far more cells,
/// and parse-tree nodes, than there are bytes) and drops the cells past it (their text lost).
/// So: for each delimiter row (`|---|:-:|`), its column count for the header and for every line
/// after it up to a blank line must total at most the text's bytes, and no such line may hold
/// more cells than the header. Otherwise the rows are read as text. Linear time.
fn tables_fit(text: &str) -> bool {
    // Cells of a row: its unescaped `|`s split it, a leading and a trailing one aside.
    fn cells(t: &str) -> usize {
        let (mut pipes, mut escaped) = (0, false);
        for b in t.bytes() {
            pipes += usize::from(b == b'|' && !escaped);
            escaped = b == b'\\' && !escaped;
        }
        let edge = usize::from(t.starts_with('|')) + usize::from(t.len() > 1 && t.ends_with('|') && !t.ends_with("\\|"));
        (pipes + 1).saturating_sub(edge).max(1)
    }
    // Inside a table a delimiter-like line may be a row or start another table (after a line
    // that ended the first): the padding is counted with the widest header seen, the overflow
    // checked against the narrowest.
    let (mut total, mut widest, mut narrowest) = (0usize, 0usize, 0usize);
    for line in text.lines() {
        let t = line.trim();
        let delimiter = t.contains('|') && t.contains('-') && t.bytes().all(|b| matches!(b, b'|' | b'-' | b':' | b' ' | b'\t'));
        if t.is_empty() {
            (widest, narrowest) = (0, 0);
        } else if widest == 0 && delimiter {
            (widest, narrowest) = (cells(t), cells(t));
            total = total.saturating_add(widest);
        } else if widest > 0 {
            if delimiter {
                (widest, narrowest) = (widest.max(cells(t)), narrowest.min(cells(t)));
            } else if cells(t) > narrowest {
                return false;
            }
            total = total.saturating_add(widest);
        }
    }
    total <= text.len()
}

fn level_num(l: HeadingLevel) -> u8 {
    match l {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Elements whose content is never indexed.
const SKIP: &[&str] = &["script", "style", "noscript", "template", "svg", "nav", "footer", "head", "iframe", "object"];
/// Elements that end a block of text.
const BLOCK: &[&str] = &[
    "p",
    "div",
    "li",
    "td",
    "th",
    "tr",
    "pre",
    "blockquote",
    "section",
    "article",
    "main",
    "br",
    "dt",
    "dd",
    "ul",
    "ol",
    "table",
    "aside",
    "header",
    "figure",
    "figcaption",
    "hr",
    "body",
    "form",
    "details",
    "summary",
];

fn parse_html(text: &str) -> Parsed {
    use html5gum::{Token, Tokenizer};
    let mut walk = HtmlWalk::default();
    for token in Tokenizer::new(text).flatten() {
        match token {
            Token::StartTag(tag) => {
                let name = String::from_utf8_lossy(&tag.name).to_ascii_lowercase();
                let ignored = tag.attributes.keys().any(|k| &k[..] == b"data-webrag-ignore");
                walk.start(name, ignored, tag.self_closing);
            }
            Token::EndTag(tag) => walk.end(&String::from_utf8_lossy(&tag.name).to_ascii_lowercase()),
            Token::String(s) if !walk.skipped.active() => walk.text(&String::from_utf8_lossy(&s.value)),
            _ => {}
        }
    }
    walk.finish()
}

/// The elements being skipped (names), so nested or malformed markup unwinds correctly, with the
/// count of each name on the stack: an end tag of a name not on it costs no scan (linear time
/// however deep the nesting).
#[derive(Default)]
struct Skipped {
    stack: Vec<String>,
    counts: HashMap<String, usize>,
}

impl Skipped {
    fn active(&self) -> bool {
        !self.stack.is_empty()
    }

    fn enter(&mut self, name: String) {
        *self.counts.entry(name.clone()).or_default() += 1;
        self.stack.push(name);
    }

    /// An end tag: unwinds to the innermost skipped element of that name, if any.
    fn leave(&mut self, name: &str) {
        if self.counts.get(name).is_none_or(|&n| n == 0) {
            return;
        }
        while let Some(top) = self.stack.pop() {
            if let Some(n) = self.counts.get_mut(&top) {
                *n -= 1;
            }
            if top == name {
                break;
            }
        }
    }
}

/// The state of one walk over an HTML page's tokens: the blocks so far, the heading path, the
/// text of the block, the heading or the `<title>` being read, and what is skipped.
#[derive(Default)]
struct HtmlWalk {
    out: Parsed,
    headings: Headings,
    cur: String,
    heading: Option<(u8, String)>,
    in_title: bool,
    title_text: String,
    skipped: Skipped,
    in_pre: usize,
}

impl HtmlWalk {
    fn start(&mut self, name: String, ignored: bool, self_closing: bool) {
        if self.skipped.active() {
            if (SKIP.contains(&name.as_str()) || ignored) && !self_closing {
                self.skipped.enter(name);
            }
            return;
        }
        if name == "title" {
            self.in_title = true;
            return;
        }
        if (SKIP.contains(&name.as_str()) && name != "head") || ignored {
            if !self_closing {
                self.skipped.enter(name);
            }
            return;
        }
        if let Some(level) = heading_level(&name) {
            // A heading inside an open one ends it first (as the HTML tree builder does).
            self.end_block();
            self.heading = Some((level, String::new()));
        } else if name == "br" && self.heading.is_some() {
            if let Some((_, h)) = &mut self.heading {
                h.push(' ');
            }
        } else if BLOCK.contains(&name.as_str()) {
            // A block inside a heading means the heading was left open (`<h2>Intro<p>…`): it
            // ends here and what follows is body text.
            self.end_block();
            if name == "pre" {
                self.in_pre += 1;
            }
        }
    }

    fn end(&mut self, name: &str) {
        if self.skipped.active() {
            self.skipped.leave(name);
            return;
        }
        if name == "title" {
            self.in_title = false;
        } else if heading_level(name).is_some() {
            self.end_heading();
        } else if BLOCK.contains(&name) {
            // `<h1>Site</div>`: the heading ends at the first block boundary.
            self.end_block();
            if name == "pre" {
                self.in_pre = self.in_pre.saturating_sub(1);
            }
        }
    }

    fn text(&mut self, s: &str) {
        if self.in_title {
            self.title_text.push_str(s);
        } else if let Some((_, h)) = &mut self.heading {
            h.push_str(s);
        } else {
            self.cur.push_str(s);
        }
    }

    fn end_heading(&mut self) {
        end_heading(self.heading.take(), &mut self.out, &mut self.headings, self.title_text.trim().is_empty());
    }

    /// A block boundary: the open heading ends, and the text so far is a block.
    fn end_block(&mut self) {
        self.end_heading();
        push_block(&mut self.out.blocks, &mut self.headings, &self.cur, self.in_pre > 0);
        self.cur.clear();
    }

    fn finish(mut self) -> Parsed {
        push_block(&mut self.out.blocks, &mut self.headings, &self.cur, self.in_pre > 0);
        // A heading still open at the end is what a browser shows as the page's last text: body.
        if let Some((_, h)) = self.heading.take() {
            push_block(&mut self.out.blocks, &mut self.headings, &h, false);
        }
        self.headings.finish(&mut self.out.blocks);
        let t = collapse_ws(&self.title_text);
        if !t.is_empty() {
            // A `<title>` past the bound is also the page's first text (the title is cut where used).
            if t.chars().nth(MAX_TITLE_CHARS).is_some() {
                self.out.blocks.insert(0, title_block(&t));
            }
            self.out.title = Some(t);
        }
        self.out
    }
}

fn heading_level(name: &str) -> Option<u8> {
    match name {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
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
