//! A page's filters, metadata and sort keys ([`PageFields`]) read while its HTML is walked: the
//! attributes `data-webrag-filter`, `data-webrag-meta` and `data-webrag-sort`, in Pagefind's
//! syntax (its `data-pagefind-*`): a comma-separated list of `key` (the value is the element's
//! text), `key:value` (the value as written; `\,` is a comma in it) or `key[attribute]` (the
//! value of another attribute of the same element, e.g. `<meta data-webrag-filter="tag[content]"
//! content="rust">`). Read anywhere in the page, `<head>` and skipped elements included.
use super::{MAX_FIELD_KEY_CHARS, MAX_FIELD_VALUE_CHARS, MAX_PAGE_FIELDS, PageFields, collapse_ws};

/// Whether the HTML walk reads the fields: natively and in the site builder (`builder`), which
/// write snapshots. The page's engine and the search build's parser module index documents into
/// a knowledge base, which has no use for them: there the reading compiles away (2.1 KB of the
/// parser module and 1.9 KB of the full engine, gzip -9, on 2026-12-01).
pub(super) const READS_FIELDS: bool = cfg!(any(not(target_arch = "wasm32"), feature = "builder"));

/// Which list of [`PageFields`] an attribute fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FieldKind {
    Filter,
    Meta,
    Sort,
}

/// Where one field of an attribute takes its value from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Source {
    /// `key:value`.
    Inline(String),
    /// `key[attribute]`: the named attribute of the same element.
    Attribute(String),
    /// `key`: the element's text.
    Text,
}

/// The fields one attribute value names, in order: `(key, source)`; parts without a key are
/// dropped.
pub(super) fn specs(attr: &str) -> Vec<(String, Source)> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut chars = attr.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.next_if_eq(&',').is_some() => cur.push(','),
            ',' => parts.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    parts.push(cur);
    let mut out = Vec::new();
    for part in &parts {
        let part = part.trim();
        let bracket = part.find('[').filter(|_| part.ends_with(']'));
        let (key, source) = match (part.find(':'), bracket) {
            (Some(colon), b) if b.is_none_or(|b| colon < b) => (&part[..colon], Source::Inline(part[colon + 1..].to_string())),
            (_, Some(b)) => (&part[..b], Source::Attribute(part[b + 1..part.len() - 1].trim().to_ascii_lowercase())),
            _ => (part, Source::Text),
        };
        let key = cut(&collapse_ws(key), MAX_FIELD_KEY_CHARS);
        if !key.is_empty() {
            out.push((key, source));
        }
    }
    out
}

fn cut(s: &str, chars: usize) -> String {
    match s.char_indices().nth(chars) {
        Some((at, _)) => s[..at].to_string(),
        None => s.to_string(),
    }
}

/// An element whose text is a field's value, until its end tag.
struct Capture {
    kind: FieldKind,
    key: String,
    /// The element's name and how many elements of that name are open inside it and it.
    name: String,
    depth: usize,
    text: String,
}

/// The fields of one page as its walk finds them.
#[derive(Default)]
pub(super) struct FieldReader {
    out: PageFields,
    open: Vec<Capture>,
}

impl FieldReader {
    fn list(&mut self, kind: FieldKind) -> &mut Vec<(String, String)> {
        match kind {
            FieldKind::Filter => &mut self.out.filters,
            FieldKind::Meta => &mut self.out.meta,
            FieldKind::Sort => &mut self.out.sort,
        }
    }

    /// Room for one more pair of `kind`, counting the captures still open.
    fn room(&mut self, kind: FieldKind) -> bool {
        let open = self.open.iter().filter(|c| c.kind == kind).count();
        self.list(kind).len() + open < MAX_PAGE_FIELDS
    }

    /// A pair found: whitespace collapsed, the value cut at [`MAX_FIELD_VALUE_CHARS`]; an empty
    /// value, a repeated pair or a second value of a metadata or sort key is dropped.
    pub(super) fn push(&mut self, kind: FieldKind, key: String, value: &str) {
        let value = cut(&collapse_ws(value), MAX_FIELD_VALUE_CHARS);
        let list = self.list(kind);
        let single = kind != FieldKind::Filter;
        if value.is_empty() || list.len() >= MAX_PAGE_FIELDS || list.iter().any(|(k, v)| *k == key && (single || *v == value)) {
            return;
        }
        list.push((key, value));
    }

    /// The element `name` just opened holds `key`'s value in its text (`key` alone).
    pub(super) fn capture(&mut self, kind: FieldKind, key: String, name: &str) {
        if self.room(kind) {
            self.open.push(Capture { kind, key, name: name.to_string(), depth: 1, text: String::new() });
        }
    }

    /// An element opened (not self-closing, not void).
    pub(super) fn start(&mut self, name: &str) {
        for c in self.open.iter_mut().filter(|c| c.name == name) {
            c.depth += 1;
        }
    }

    /// An end tag: a capture whose element it ends is a pair.
    pub(super) fn end(&mut self, name: &str) {
        if self.open.is_empty() {
            return;
        }
        let mut i = 0;
        while i < self.open.len() {
            let c = &mut self.open[i];
            if c.name == name {
                c.depth -= 1;
                if c.depth == 0 {
                    let c = self.open.remove(i);
                    self.push(c.kind, c.key, &c.text);
                    continue;
                }
            }
            i += 1;
        }
    }

    /// Whether an element's text is being read as a field's value.
    pub(super) fn capturing(&self) -> bool {
        !self.open.is_empty()
    }

    /// Text of the page: each open capture takes it, up to a bound (the value is cut anyway).
    pub(super) fn text(&mut self, s: &str) {
        for c in &mut self.open {
            if c.text.len() < 4 * MAX_FIELD_VALUE_CHARS {
                c.text.push_str(s);
            }
        }
    }

    /// The page's fields; captures left open at the end take the text they have.
    pub(super) fn finish(mut self) -> PageFields {
        for c in std::mem::take(&mut self.open) {
            self.push(c.kind, c.key, &c.text);
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_read_pagefinds_three_forms_and_escaped_commas() {
        let s = specs(" author , tag:rust\\, wasm, image[SRC], :nokey, date:2024-01-02, [x]");
        assert_eq!(
            s,
            [
                ("author".to_string(), Source::Text),
                ("tag".to_string(), Source::Inline("rust, wasm".into())),
                ("image".to_string(), Source::Attribute("src".into())),
                ("date".to_string(), Source::Inline("2024-01-02".into())),
            ]
        );
        // A colon inside the brackets is an attribute name's, not an inline value's.
        assert_eq!(specs("k[data-a:b]"), [("k".to_string(), Source::Attribute("data-a:b".into()))]);
    }
}
