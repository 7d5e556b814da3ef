//! Markdown (pulldown-cmark) and HTML (html5gum) onto the heading tree of [`super::parse`]'s
//! blocks: in native builds, the site builder and the page's full build (`markup` feature); the
//! search build gets them from its parser module (`src/web/markup_module.rs`, [`super::parse`]).
use std::collections::HashMap;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::fields::{FieldKind, FieldReader, READS_FIELDS, Source, specs};
use super::{Block, Headings, MAX_HEADING_CHARS, MAX_TITLE_CHARS, Parsed, collapse_ws, push_block, title_block};

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
}

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

/// Ends the open heading `heading` (level, raw text): its text, whitespace collapsed, enters the
/// heading path (cut at [`MAX_HEADING_CHARS`]) and is the title when `title` allows and it is
/// the first level-1 heading. A longer text (an unclosed heading that ran into the body, a long
/// setext heading) is also a block of body text under it: nothing is dropped.
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

pub(super) fn parse_markdown(text: &str) -> Parsed {
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
/// ARIA landmark roles whose content is never indexed, whatever the element (WAI-ARIA 1.2 §5.3.4:
/// `navigation`, `search`, `contentinfo`: a Sphinx or MkDocs sidebar is a `div role="navigation"`).
const SKIP_ROLES: &[&str] = &["navigation", "search", "contentinfo"];
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

/// HTML through html5gum's callback emitter: tag names, the few attributes read and text arrive
/// as slices of its buffers, where its default emitter allocated every tag's attribute map and
/// every string (a fifth of a site build's parse time).
pub(super) fn parse_html(text: &str) -> Parsed {
    use html5gum::emitters::callback::{CallbackEmitter, CallbackEvent};
    use html5gum::{Span, Tokenizer};
    let mut walk = HtmlWalk::default();
    let mut tag = OpenTag::default();
    let emitter = CallbackEmitter::new(|event: CallbackEvent<'_>, _: Span<()>| -> Option<std::convert::Infallible> {
        match event {
            CallbackEvent::OpenStartTag { name } => tag.open(name),
            CallbackEvent::AttributeName { name } => tag.attribute(name),
            CallbackEvent::AttributeValue { value } => tag.value(value),
            CallbackEvent::CloseStartTag { self_closing } => {
                let role = tag.read(Attr::Role).trim().to_ascii_lowercase();
                let ignored = tag.has(Attr::Ignore) || SKIP_ROLES.contains(&role.as_str());
                let name = String::from_utf8_lossy(&tag.name).to_ascii_lowercase();
                if name == "meta" && tag.read(Attr::Name).trim().eq_ignore_ascii_case("robots") {
                    // `<meta name="robots" content="noindex">` (or `none`): the page asks not to be indexed.
                    let content = tag.read(Attr::Content).trim().to_ascii_lowercase();
                    walk.out.noindex |= content.split(',').any(|d| matches!(d.trim(), "noindex" | "none"));
                }
                if name == "script"
                    && tag.read(Attr::Src).trim_end().rsplit('/').next().is_some_and(|f| f.starts_with("webrag-ui.") && f.ends_with(".js"))
                {
                    walk.loads_box = true;
                } else if !walk.skipped.active() && is_search_box(&name, &role, &tag) {
                    walk.boxes[usize::from(walk.main.is_some())] = true;
                }
                if READS_FIELDS {
                    walk.fields(&name, &tag, self_closing);
                    if name == "html" && walk.out.lang.is_none() {
                        walk.out.lang = tag.any("lang").and_then(|l| crate::types::primary_subtag(&l));
                    }
                }
                walk.start(name, ignored, role == "main", self_closing);
            }
            CallbackEvent::EndTag { name } => {
                let name = String::from_utf8_lossy(name).to_ascii_lowercase();
                if READS_FIELDS {
                    walk.fields.end(&name);
                }
                walk.end(&name);
            }
            CallbackEvent::String { value } => {
                // Text in skipped elements (scripts, styles) is decoded only for an open field.
                let capturing = READS_FIELDS && walk.fields.capturing();
                if capturing || !walk.skipped.active() {
                    let value = String::from_utf8_lossy(value);
                    if capturing {
                        walk.fields.text(&value);
                    }
                    if !walk.skipped.active() {
                        walk.text(&value);
                    }
                }
            }
            _ => {}
        }
        None
    });
    // Reading a `&str` does not fail.
    let _ = Tokenizer::new_with_emitter(text, emitter).finish();
    walk.finish()
}

/// Names a search input goes by (`<input name="q">`: Sphinx, MkDocs, WordPress's `s`).
const SEARCH_INPUT_NAMES: &[&str] = &["q", "query", "search", "s", "searchword", "keywords"];

/// Whether a start tag is a search box: an `<input type="search">` or a text input named as one
/// ([`SEARCH_INPUT_NAMES`]), a `role="search"` landmark, or a `data-webrag-search` mount.
fn is_search_box(name: &str, role: &str, tag: &OpenTag) -> bool {
    if role == "search" || tag.has(Attr::Mount) {
        return true;
    }
    if name != "input" {
        return false;
    }
    let kind = tag.read(Attr::Type).trim().to_ascii_lowercase();
    kind == "search"
        || (matches!(kind.as_str(), "" | "text") && SEARCH_INPUT_NAMES.contains(&tag.read(Attr::Name).trim().to_ascii_lowercase().as_str()))
}

/// The attributes of a start tag that the walk reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attr {
    /// `role` (`main`, or a role whose element is skipped: [`SKIP_ROLES`]).
    Role,
    /// `data-webrag-ignore`: the element is skipped.
    Ignore,
    /// `name` and `content` of `<meta name="robots" content="noindex">`; `name` of an input.
    Name,
    Content,
    /// `type` of an input, `src` of a script, `data-webrag-search` (the box's mount): a search
    /// page's signs ([`is_search_box`]).
    Type,
    Src,
    Mount,
    /// `data-webrag-filter`, `data-webrag-meta`, `data-webrag-sort`: the page's fields
    /// ([`super::fields`]).
    Filter,
    Meta,
    Sort,
}

impl Attr {
    const COUNT: usize = 10;

    fn of(name: &[u8]) -> Option<Attr> {
        match name {
            b"role" => Some(Attr::Role),
            b"data-webrag-ignore" => Some(Attr::Ignore),
            b"name" => Some(Attr::Name),
            b"content" => Some(Attr::Content),
            b"type" => Some(Attr::Type),
            b"src" => Some(Attr::Src),
            b"data-webrag-search" => Some(Attr::Mount),
            b"data-webrag-filter" => Some(Attr::Filter),
            b"data-webrag-meta" => Some(Attr::Meta),
            b"data-webrag-sort" => Some(Attr::Sort),
            _ => None,
        }
    }
}

/// The start tag being read: its name and the values of the attributes in [`Attr`] (the first
/// of each name counts, as in the HTML standard's tokenizer), and every attribute in one reused
/// buffer for a field's `key[attribute]` form.
#[derive(Default)]
struct OpenTag {
    name: Vec<u8>,
    values: [Option<Vec<u8>>; Attr::COUNT],
    /// The attribute whose value comes next, when it is one of [`Attr`] seen for the first time.
    reading: Option<Attr>,
    /// Every attribute's name and value bytes, back to back; `spans` holds each attribute's
    /// (name start, value start, value end) in it.
    all: Vec<u8>,
    spans: Vec<(usize, usize, usize)>,
}

impl OpenTag {
    fn open(&mut self, name: &[u8]) {
        self.name.clear();
        self.name.extend_from_slice(name);
        self.values = Default::default();
        self.reading = None;
        self.all.clear();
        self.spans.clear();
    }

    fn attribute(&mut self, name: &[u8]) {
        self.reading = Attr::of(name).filter(|a| self.values[*a as usize].is_none());
        if let Some(a) = self.reading {
            self.values[a as usize] = Some(Vec::new());
        }
        if READS_FIELDS {
            let start = self.all.len();
            self.all.extend_from_slice(name);
            self.spans.push((start, self.all.len(), self.all.len()));
        }
    }

    fn value(&mut self, value: &[u8]) {
        if let Some(v) = self.reading.and_then(|a| self.values[a as usize].as_mut()) {
            v.extend_from_slice(value);
        }
        if READS_FIELDS {
            self.all.extend_from_slice(value);
            if let Some(last) = self.spans.last_mut() {
                last.2 = self.all.len();
            }
        }
    }

    /// The value of any attribute by its lowercase name (the first of that name), if present.
    fn any(&self, name: &str) -> Option<std::borrow::Cow<'_, str>> {
        self.spans
            .iter()
            .find(|&&(n, v, _)| self.all[n..v].eq_ignore_ascii_case(name.as_bytes()))
            .map(|&(_, v, e)| String::from_utf8_lossy(&self.all[v..e]))
    }

    fn has(&self, a: Attr) -> bool {
        self.values[a as usize].is_some()
    }

    /// The value of `a` (empty when absent).
    fn read(&self, a: Attr) -> std::borrow::Cow<'_, str> {
        self.values[a as usize].as_deref().map_or(std::borrow::Cow::Borrowed(""), String::from_utf8_lossy)
    }
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
    /// The open main element (`<main>` or `role="main"`): its name and how many elements of that
    /// name are open inside it and it.
    main: Option<(String, usize)>,
    /// The ranges of `out.blocks` read inside a main element: when they hold text, they are the
    /// page's text and the rest (site header, sidebars, pop-ups) is left out.
    main_blocks: Vec<std::ops::Range<usize>>,
    /// A search box seen outside (`[0]`) and inside (`[1]`) a main element, not in skipped chrome.
    boxes: [bool; 2],
    /// The page loads webrag's search box (`<script src="…/webrag-ui.js">`).
    loads_box: bool,
    /// The page's filters, metadata and sort keys.
    fields: FieldReader,
}

/// Elements with no content and no end tag (HTML § 13.1.2): a field's `key` alone on one has no
/// text to read.
const VOID: &[&str] = &["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"];

impl HtmlWalk {
    /// A start tag's field attributes ([`super::fields`]), and the element counted for the
    /// captures of its name.
    fn fields(&mut self, name: &str, tag: &OpenTag, self_closing: bool) {
        let opens = !self_closing && !VOID.contains(&name);
        if opens {
            self.fields.start(name);
        }
        for (attr, kind) in [(Attr::Filter, FieldKind::Filter), (Attr::Meta, FieldKind::Meta), (Attr::Sort, FieldKind::Sort)] {
            if !tag.has(attr) {
                continue;
            }
            for (key, source) in specs(&tag.read(attr)) {
                match source {
                    Source::Inline(v) => self.fields.push(kind, key, &v),
                    Source::Attribute(a) => {
                        if let Some(v) = tag.any(&a) {
                            self.fields.push(kind, key, &v);
                        }
                    }
                    Source::Text if opens => self.fields.capture(kind, key, name),
                    Source::Text => {}
                }
            }
        }
    }

    fn start(&mut self, name: String, ignored: bool, main: bool, self_closing: bool) {
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
        match &mut self.main {
            Some((open, depth)) if *open == name => *depth += 1,
            None if (main || name == "main") && !self_closing => {
                // The main content starts: its headings are its own.
                self.end_block();
                self.headings = Headings::default();
                self.main_blocks.push(self.out.blocks.len()..self.out.blocks.len());
                self.main = Some((name.clone(), 1));
            }
            _ => {}
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
        if let Some((open, depth)) = &mut self.main
            && open == name
        {
            *depth -= 1;
            if *depth == 0 {
                self.main = None;
                self.end_block();
                self.headings.finish(&mut self.out.blocks);
                if let Some(r) = self.main_blocks.last_mut() {
                    r.end = self.out.blocks.len();
                }
                return;
            }
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
        if let Some(r) = self.main_blocks.last_mut().filter(|_| self.main.is_some()) {
            r.end = self.out.blocks.len();
        }
        let has_main = self.main_blocks.iter().any(|r| !r.is_empty());
        if has_main {
            // The ranges are disjoint: linear in the blocks however many main elements.
            let mut keep = vec![false; self.out.blocks.len()];
            for r in &self.main_blocks {
                keep[r.clone()].fill(true);
            }
            let mut keep = keep.into_iter();
            self.out.blocks.retain(|_| keep.next().unwrap_or(false));
        }
        // A search box in the page's content (its main element when it has one) and little text.
        if self.loads_box || self.boxes[1] || (!has_main && self.boxes[0]) {
            let mut chars = 0;
            for b in &self.out.blocks {
                chars += b.text.chars().count();
                if chars >= super::SEARCH_PAGE_CHARS {
                    break;
                }
            }
            self.out.search_page = chars < super::SEARCH_PAGE_CHARS;
        }
        if READS_FIELDS {
            self.out.fields = std::mem::take(&mut self.fields).finish();
        }
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
