//! A snapshot's filters, sort keys and result metadata (docs/snapshot-format.md): what the
//! pages' `data-webrag-filter`, `data-webrag-sort` and `data-webrag-meta` said
//! ([`crate::text::PageFields`], read when the pages were sorted: [`super::sort_pages`]).
use std::collections::{BTreeMap, BTreeSet};

use super::files::{gzip, hashed};
use super::{Layout, ManifestFilter, ManifestLanguage, ManifestLanguages, ManifestSort, Snapshot};
use crate::text::PageFields;

/// The pages' fields, by page id (pages without any are absent).
pub type SiteFields = BTreeMap<String, PageFields>;

/// Filter keys, and sort keys, a snapshot keeps at most: those most pages carry (then by key).
/// Each is a file in `x/` or `o/` and a row of the manifest, so a site that writes a new key on
/// every page does not make a folder of a file per page.
pub const MAX_SNAPSHOT_KEYS: usize = 64;

/// The `MAX_SNAPSHOT_KEYS` keys of `keys` (key → pages carrying it) most pages carry.
fn kept_keys<'a>(keys: impl Iterator<Item = (&'a str, usize)>) -> BTreeSet<&'a str> {
    let mut all: Vec<(&str, usize)> = keys.collect();
    crate::sort::by(&mut all, |a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    all.into_iter().take(MAX_SNAPSHOT_KEYS).map(|(k, _)| k).collect()
}

/// Writes one file per filter key and per sort key; returns them for the manifest, by key.
pub(super) fn write_fields(snap: &mut Snapshot, layout: &Layout<'_>, fields: &SiteFields) -> (Vec<ManifestFilter>, Vec<ManifestSort>) {
    // key → value → pages (in page order, as the pages are numbered).
    let mut filters: BTreeMap<&str, BTreeMap<&str, BTreeSet<u32>>> = BTreeMap::new();
    let mut sorts: BTreeMap<&str, Vec<(&str, u32)>> = BTreeMap::new();
    for (page, doc) in layout.docs.iter().enumerate() {
        let Some(f) = fields.get(&doc.id) else { continue };
        for (k, v) in &f.filters {
            filters.entry(k).or_default().entry(v).or_default().insert(page as u32);
        }
        for (k, v) in &f.sort {
            sorts.entry(k).or_default().push((v, page as u32));
        }
    }
    let keep = kept_keys(filters.iter().map(|(k, vs)| (*k, vs.values().flatten().collect::<BTreeSet<_>>().len())));
    filters.retain(|k, _| keep.contains(k));
    let keep = kept_keys(sorts.iter().map(|(k, ps)| (*k, ps.len())));
    sorts.retain(|k, _| keep.contains(k));
    let mut out_filters = Vec::new();
    for (i, (key, values)) in filters.into_iter().enumerate() {
        let pages: BTreeSet<u32> = values.values().flatten().copied().collect();
        let rows: Vec<serde_json::Value> = values
            .iter()
            .map(|(v, ps)| {
                let mut last = 0;
                let deltas: Vec<u32> = ps.iter().map(|&p| std::mem::replace(&mut last, p).abs_diff(p)).collect();
                serde_json::json!([v, deltas])
            })
            .collect();
        let bytes = gzip(serde_json::json!({ "v": rows }).to_string().as_bytes());
        let file = hashed("x", &i.to_string(), "json.gz", &bytes);
        snap.files.insert(file.clone(), bytes);
        out_filters.push(ManifestFilter { key: key.to_string(), file, values: values.len(), pages: pages.len() });
    }
    let mut out_sorts = Vec::new();
    for (i, (key, mut pages)) in sorts.into_iter().enumerate() {
        let numbers: Option<Vec<(f64, &str, u32)>> =
            pages.iter().map(|&(v, p)| v.trim().parse::<f64>().ok().filter(|x| x.is_finite()).map(|x| (x, v, p))).collect();
        let numeric = numbers.is_some();
        let groups = match numbers {
            Some(mut by_number) => {
                crate::sort::by(&mut by_number, |a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
                groups_of(by_number.iter().map(|&(x, v, p)| (x, v, p)))
            }
            None => {
                crate::sort::by(&mut pages, |a, b| a.0.cmp(b.0).then(a.1.cmp(&b.1)));
                groups_of(pages.iter().map(|&(v, p)| (v, v, p)))
            }
        };
        let groups: Vec<serde_json::Value> = groups.into_iter().map(|(v, ps)| serde_json::json!([v, ps])).collect();
        let bytes = gzip(serde_json::json!({ "o": groups }).to_string().as_bytes());
        let file = hashed("o", &i.to_string(), "json.gz", &bytes);
        snap.files.insert(file.clone(), bytes);
        out_sorts.push(ManifestSort { key: key.to_string(), file, numeric, pages: pages.len() });
    }
    (out_filters, out_sorts)
}

/// The pages' languages for the manifest, with a file of which page is in which when they are
/// not all in one; `None` when no page names a language.
pub(super) fn write_languages(snap: &mut Snapshot, layout: &Layout<'_>) -> Option<ManifestLanguages> {
    let mut by_lang: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for (page, doc) in layout.docs.iter().enumerate() {
        by_lang.entry(doc.lang.as_deref().unwrap_or("")).or_default().push(page as u32);
    }
    if by_lang.keys().all(|l| l.is_empty()) {
        return None;
    }
    let mut values: Vec<ManifestLanguage> = by_lang
        .iter()
        .map(|(l, ps)| ManifestLanguage { lang: l.to_string(), stemmed: crate::text::Language::from_tag(l).is_some(), pages: ps.len() })
        .collect();
    crate::sort::by(&mut values, |a, b| b.pages.cmp(&a.pages).then(a.lang.cmp(&b.lang)));
    let file = (by_lang.len() > 1).then(|| {
        let rows: Vec<serde_json::Value> = by_lang
            .iter()
            .map(|(l, ps)| {
                let mut last = 0;
                let deltas: Vec<u32> = ps.iter().map(|&p| std::mem::replace(&mut last, p).abs_diff(p)).collect();
                serde_json::json!([l, deltas])
            })
            .collect();
        let bytes = gzip(serde_json::json!({ "v": rows }).to_string().as_bytes());
        let file = hashed("x", "lang", "json.gz", &bytes);
        snap.files.insert(file.clone(), bytes);
        file
    });
    Some(ManifestLanguages { values, file })
}

/// Runs of equal values in `sorted` `(compared value, value as written, page)`: each run's
/// first written value and its pages.
fn groups_of<'a, K: PartialEq>(sorted: impl Iterator<Item = (K, &'a str, u32)>) -> Vec<(&'a str, Vec<u32>)> {
    let mut groups: Vec<(K, &'a str, Vec<u32>)> = Vec::new();
    for (k, v, p) in sorted {
        match groups.last_mut() {
            Some(g) if g.0 == k => g.2.push(p),
            _ => groups.push((k, v, vec![p])),
        }
    }
    groups.into_iter().map(|(_, v, ps)| (v, ps)).collect()
}

/// A page's metadata as its fragment files hold it (`{key: value}`), or `None` without any.
pub(super) fn page_meta(fields: &SiteFields, id: &str) -> Option<serde_json::Value> {
    let f = fields.get(id).filter(|f| !f.meta.is_empty())?;
    Some(serde_json::Value::Object(f.meta.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect()))
}
