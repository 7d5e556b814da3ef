//! `webrag/static`'s page ranking (`src/web/js/static-rank.js`, `rank`) in Rust: each
//! retriever's ranked chunk list of a search stage in, the results out — fusion, page grouping,
//! the chunks a page shows (its best and its sections) and the proximity tiers. The page and
//! this module are pinned to the same fixture: `tests/static_rank.rs` checks this ranking
//! against `tests/e2e/static-rank.fixture.json` and writes its `expected` lists
//! (`WEBRAG_WRITE_FIXTURE=1`), and `tests/e2e/static-rank.test.mjs` checks the page's against
//! them, so a change to either side alone fails a test.
//!
//! Scores are f64 (JavaScript numbers) except the fusion's, which are f32 sums
//! ([`crate::retrieve::rrf`], as the page's `Math.fround`). Text is matched as the page matches
//! it: terms from [`crate::text::analyze`] (the page's `analyze` gives the same terms), words at
//! word boundaries of the lowercased text (a character of the astral planes next to a match is
//! no word character there, as JavaScript's UTF-16 indexing sees a lone surrogate).
use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use unicode_categories::UnicodeCategories;

use crate::text::{analyze, is_cjk};

/// How much a query's terms in a row raise a shown result's score when one list kept its
/// scores (static-rank.js `PHRASE_WEIGHT`, chosen with tests/site/eval-static.mjs).
pub const PHRASE_WEIGHT: f64 = 0.5;

/// How much of a query is read, in UTF-16 code units (static-text.js `MAX_QUERY_CHARS`).
pub const MAX_QUERY_CHARS: usize = 1024;

/// What the page reads of a chunk from its fragments file (`[title, url, heading, excerpt,
/// page]`, docs/snapshot-format.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Fragment {
    /// The page's title.
    pub title: Option<String>,
    /// The page's URL.
    pub url: Option<String>,
    /// The chunk's heading path, parts joined by ` › `.
    pub heading: Option<String>,
    /// The chunk's first `excerpt_chars` characters.
    pub excerpt: Option<String>,
    /// The page number in the pages file; absent in a snapshot without one.
    pub page: Option<u64>,
}

/// The retrievers' ranked chunk lists of a stage, best first (an empty list is left out).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Lists {
    /// BM25.
    pub keyword: Vec<u32>,
    /// Dense.
    pub semantic: Vec<u32>,
    /// The graph walk's facts' chunks.
    pub graph: Vec<u32>,
}

/// A retriever, named as the results' `found` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Retriever {
    /// BM25.
    Keyword,
    /// Dense.
    Semantic,
    /// The graph walk.
    Graph,
}

impl Lists {
    /// The non-empty lists, in the page's order.
    fn named(&self) -> Vec<(Retriever, &[u32])> {
        [(Retriever::Keyword, &self.keyword), (Retriever::Semantic, &self.semantic), (Retriever::Graph, &self.graph)]
            .into_iter()
            .filter(|(_, l)| !l.is_empty())
            .map(|(n, l)| (n, l.as_slice()))
            .collect()
    }
}

/// The manifest's `fusion`: RRF's `k` and each retriever's weight (1 and 60 when absent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Fusion {
    /// RRF's `k`.
    pub rrf_k: Option<f32>,
    /// `bm25`, `dense`, `graph` → weight (0 leaves the list out).
    pub weights: HashMap<String, f32>,
}

impl Fusion {
    fn k(&self) -> f32 {
        self.rrf_k.unwrap_or(60.0)
    }

    fn weight(&self, r: Retriever) -> f32 {
        let key = match r {
            Retriever::Keyword => "bm25",
            Retriever::Semantic => "dense",
            Retriever::Graph => "graph",
        };
        self.weights.get(key).copied().unwrap_or(1.0)
    }
}

/// Results by page or by chunk (the page's `group` option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Group {
    /// A result per page, with its sections.
    #[default]
    Page,
    /// A result per chunk.
    Chunk,
}

/// One search stage to rank (static-rank.js `rank`'s argument).
pub struct Stage<'a> {
    /// The retrievers' lists.
    pub lists: &'a Lists,
    /// Chunk → score when one list is searched (BM25 or cosine, kept).
    pub scores: Option<&'a HashMap<u32, f64>>,
    /// Chunk → its graph path (graph hits).
    pub paths: Option<&'a HashMap<u32, serde_json::Value>>,
    /// By page or by chunk.
    pub group: Group,
    /// A chunk's page from the snapshot's pages file; `None` for a snapshot without one (pages
    /// then come from the fragments of the first `k` fused chunks: `page`, else `url`).
    pub pages: Option<&'a dyn Fn(u32) -> Option<u64>>,
    /// A chunk's fragment; `None` where it cannot be read (the result is left out).
    pub fragment: &'a dyn Fn(u32) -> Option<&'a Fragment>,
    /// The query as searched.
    pub query: &'a str,
    /// Results at most.
    pub k: usize,
    /// Chunks per page result (≥ 1).
    pub sections: usize,
    /// The manifest's fusion.
    pub fusion: &'a Fusion,
    /// Chunks per fragments file (the manifest's `fragments.size`).
    pub fragment_size: u32,
}

/// One result, as the page returns it less what it shows (excerpt, highlights, links).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranked {
    /// The shown chunk.
    pub chunk: u32,
    /// Its fused score (RRF, or the one list's score with the phrase multiplier).
    pub score: f64,
    /// The shown chunk's page number (its fragment's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u64>,
    /// The retrievers that found it (a page: any of its chunks).
    pub found: Vec<Retriever>,
    /// The page's other shown chunks (page results only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sections: Option<Vec<u32>>,
    /// The graph path of the first shown chunk that has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<serde_json::Value>,
}

/// A page: its number in the pages file, or, without one, its fragment's URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum PageKey {
    Number(u64),
    Url(String),
}

/// Ranks one stage as the page does: up to `k` results.
pub fn rank(s: &Stage<'_>) -> Vec<Ranked> {
    let names = s.lists.named();
    let single = names.len() == 1 && s.scores.is_some();
    let fused: Vec<(u32, f64)> = if single {
        names[0].1.iter().map(|&c| (c, s.scores.and_then(|m| m.get(&c)).copied().unwrap_or(0.0))).collect()
    } else {
        let weighted: Vec<(&[u32], f32)> = names.iter().map(|&(n, l)| (l, s.fusion.weight(n))).collect();
        crate::retrieve::rrf(&weighted, s.fusion.k()).into_iter().map(|(c, v)| (c, v as f64)).collect()
    };
    let keyword = !s.lists.keyword.is_empty();
    let path_of = |c: u32| s.paths.and_then(|p| p.get(&c)).cloned();
    if s.group == Group::Chunk {
        let rows: Vec<(Ranked, &Fragment)> = fused
            .iter()
            .take(s.k)
            .filter_map(|&(chunk, score)| {
                let f = (s.fragment)(chunk)?;
                let found = names.iter().filter(|(_, l)| l.contains(&chunk)).map(|(n, _)| *n).collect();
                Some((Ranked { chunk, score, page: f.page, found, sections: None, path: path_of(chunk) }, f))
            })
            .collect();
        return by_phrase(rows, s.query, keyword, single).into_iter().map(|(r, _)| r).collect();
    }
    // The page of a chunk: from the pages file, or from the first k fused chunks' fragments.
    let mut ranked: &[(u32, f64)] = &fused;
    let from_fragments: HashMap<u32, PageKey>;
    let kept: Vec<(u32, f64)>;
    if s.pages.is_none() {
        let first = &fused[..fused.len().min(s.k)];
        from_fragments = first
            .iter()
            .filter_map(|&(c, _)| {
                let f = (s.fragment)(c)?;
                let key = f.page.map(PageKey::Number).or_else(|| f.url.clone().map(PageKey::Url))?;
                Some((c, key))
            })
            .collect();
        kept = first.iter().filter(|(c, _)| from_fragments.contains_key(c)).copied().collect();
        ranked = &kept;
    } else {
        from_fragments = HashMap::new();
    }
    let page_of = |c: u32| -> Option<PageKey> {
        match s.pages {
            Some(pages) => pages(c).map(PageKey::Number),
            None => from_fragments.get(&c).cloned(),
        }
    };
    let (pages, chunks_of) = group_pages(&names, single, ranked, &page_of, s);
    let mut rows = Vec::new();
    for (p, score) in pages {
        let same = same_file(chunks_of.get(&p).map(Vec::as_slice).unwrap_or(&[]), s.fragment_size);
        let fragments: Vec<Option<&Fragment>> = same.iter().map(|&(c, _)| (s.fragment)(c)).collect();
        let picked = pick_sections(&same, &fragments, s.query, s.sections);
        let Some(&((chunk, _), first)) = picked.first() else { continue };
        let found = names.iter().filter(|(_, l)| l.iter().any(|&c| page_of(c).as_ref() == Some(&p))).map(|(n, _)| *n).collect();
        let path = picked.iter().find_map(|((c, _), _)| path_of(*c));
        let sections = Some(picked[1..].iter().map(|((c, _), _)| *c).collect());
        rows.push((Ranked { chunk, score, page: first.page, found, sections, path }, first));
    }
    let mut out: Vec<Ranked> = by_phrase(rows, s.query, keyword, single).into_iter().map(|(r, _)| r).collect();
    out.truncate(s.k);
    out
}

/// Candidates per page result of a retriever's list (static-rank.js `PER_PAGE`): a page search
/// draws `k × PER_PAGE` chunks from each list (`sections` when more), no page more than that.
pub const PER_PAGE: usize = 4;

/// static-rank.js `capPerPage`: the first `want` of `hits` (best first) with at most `max`
/// chunks of any one page (`page_of`; chunks of no known page are not counted), so a page with
/// many matching chunks leaves room for the next pages; the pages keep their order.
pub fn cap_per_page(hits: &[(u32, f32)], want: usize, page_of: &dyn Fn(u32) -> Option<u64>, max: usize) -> Vec<(u32, f32)> {
    let mut count: HashMap<u64, usize> = HashMap::new();
    let mut out = Vec::new();
    for &(c, s) in hits {
        if out.len() >= want {
            break;
        }
        if let Some(p) = page_of(c) {
            let n = count.entry(p).or_insert(0);
            if *n >= max {
                continue;
            }
            *n += 1;
        }
        out.push((c, s));
    }
    out
}

/// static-rank.js `groupPages`: each list becomes a list of pages (a page ranked where its first
/// chunk is) and those are fused (one list: a page keeps its best chunk's score); the first `k`
/// pages and, for a query of two or more terms, the keyword list's first `k` pages too. Returns
/// the pages with their scores and each page's chunks in the fused order.
#[allow(clippy::type_complexity)]
fn group_pages(
    names: &[(Retriever, &[u32])],
    single: bool,
    ranked: &[(u32, f64)],
    page_of: &dyn Fn(u32) -> Option<PageKey>,
    s: &Stage<'_>,
) -> (Vec<(PageKey, f64)>, HashMap<PageKey, Vec<(u32, f64)>>) {
    // Pages as numbers for the fusion, in order of first appearance.
    let mut keys: Vec<PageKey> = Vec::new();
    let mut number: HashMap<PageKey, u32> = HashMap::new();
    let mut page_lists: Vec<Vec<u32>> = Vec::new();
    for (_, list) in names {
        let mut seen = HashSet::new();
        let mut pl = Vec::new();
        for &c in *list {
            let Some(p) = page_of(c) else { continue };
            let n = *number.entry(p.clone()).or_insert_with(|| {
                keys.push(p);
                keys.len() as u32 - 1
            });
            if seen.insert(n) {
                pl.push(n);
            }
        }
        page_lists.push(pl);
    }
    let mut pages: Vec<(PageKey, f64)> = if single {
        Vec::new()
    } else {
        let weighted: Vec<(&[u32], f32)> = names.iter().zip(&page_lists).map(|(&(n, _), pl)| (pl.as_slice(), s.fusion.weight(n))).collect();
        crate::retrieve::rrf(&weighted, s.fusion.k()).into_iter().map(|(n, v)| (keys[n as usize].clone(), v as f64)).collect()
    };
    let mut chunks_of: HashMap<PageKey, Vec<(u32, f64)>> = HashMap::new();
    for &(c, score) in ranked {
        let Some(p) = page_of(c) else { continue };
        let entry = chunks_of.entry(p.clone()).or_insert_with(|| {
            if single {
                pages.push((p, score));
            }
            Vec::new()
        });
        entry.push((c, score));
    }
    let mut shown: Vec<(PageKey, f64)> = pages.iter().take(s.k).cloned().collect();
    let keyword_list = names.iter().position(|(n, _)| *n == Retriever::Keyword);
    if let Some(i) = keyword_list.filter(|_| !single && analyze_query(s.query).len() >= 2) {
        let have: HashSet<PageKey> = shown.iter().map(|(p, _)| p.clone()).collect();
        let score: HashMap<&PageKey, f64> = pages.iter().map(|(p, v)| (p, *v)).collect();
        let extra: Vec<(PageKey, f64)> = page_lists[i]
            .iter()
            .take(s.k)
            .map(|&n| &keys[n as usize])
            .filter(|p| !have.contains(*p))
            .map(|p| (p.clone(), score.get(p).copied().unwrap_or(0.0)))
            .collect();
        shown.extend(extra);
    }
    (shown, chunks_of)
}

/// static-rank.js `sameFile`: a page's best chunk and its other chunks in the same fragments
/// file (no further fetch).
fn same_file(chunks: &[(u32, f64)], fragment_size: u32) -> Vec<(u32, f64)> {
    let size = fragment_size.max(1);
    let Some(&(best, _)) = chunks.first() else { return Vec::new() };
    chunks.iter().enumerate().filter(|&(i, &(c, _))| i == 0 || c / size == best / size).map(|(_, x)| *x).collect()
}

/// static-rank.js `pickSections`: of a page's chunks with their fragments, those whose text holds
/// the most query terms first (stable), at most `sections` (≥ 1); none when the best chunk's
/// fragment is unreadable.
fn pick_sections<'f>(
    chunks: &[(u32, f64)],
    fragments: &[Option<&'f Fragment>],
    query: &str,
    sections: usize,
) -> Vec<((u32, f64), &'f Fragment)> {
    if fragments.first().is_none_or(Option::is_none) {
        return Vec::new();
    }
    let needles = needles(query);
    let mut rows: Vec<((u32, f64), &Fragment, usize)> = chunks
        .iter()
        .zip(fragments)
        .filter_map(|(&c, f)| f.map(|f| (c, f, terms_in(f.excerpt.as_deref().unwrap_or(""), &needles))))
        .collect();
    crate::sort::by_key(&mut rows, |r| std::cmp::Reverse(r.2));
    rows.into_iter().take(sections.max(1)).map(|(c, f, _)| (c, f)).collect()
}

/// static-rank.js `byPhrase`: keyword results holding the query's terms in a row rank higher
/// (one list with its scores: score × (1 + [`PHRASE_WEIGHT`] · phrase)); those holding the
/// whole query as a phrase come first: title begins with it, then in the title, then in the
/// heading or text. Without a keyword list or with fewer than two query terms, unchanged.
fn by_phrase<'f>(mut rows: Vec<(Ranked, &'f Fragment)>, query: &str, keyword: bool, single: bool) -> Vec<(Ranked, &'f Fragment)> {
    let q = analyze_query(query);
    if !keyword || q.len() < 2 {
        return rows;
    }
    let typing = ends_in_alnum(query);
    let mut exact: Vec<u8> = Vec::with_capacity(rows.len());
    for (r, f) in rows.iter_mut() {
        let title = f.title.as_deref().unwrap_or("");
        let text = format!("{title}\n{}\n{}", f.heading.as_deref().unwrap_or(""), f.excerpt.as_deref().unwrap_or(""));
        let p = phrase(&q, &analyze(&text), typing);
        if single {
            r.score *= 1.0 + PHRASE_WEIGHT * p;
        }
        let tier = if p < 1.0 {
            0
        } else {
            let t = analyze(title);
            if begins(&q, &t, typing) {
                3
            } else if phrase(&q, &t, typing) == 1.0 {
                2
            } else {
                1
            }
        };
        exact.push(tier);
    }
    let mut tiered: Vec<(u8, (Ranked, &Fragment))> = exact.into_iter().zip(rows).collect();
    crate::sort::by(&mut tiered, |a, b| b.0.cmp(&a.0).then(b.1.0.score.partial_cmp(&a.1.0.score).unwrap_or(std::cmp::Ordering::Equal)));
    tiered.into_iter().map(|(_, row)| row).collect()
}

/// static-text.js `phrase`: the longest run of consecutive query terms found consecutively in
/// `text`, as a fraction of the query's length beyond its first term; with `prefix_last` the
/// last query term also matches a text term it begins.
pub fn phrase(q: &[String], text: &[String], prefix_last: bool) -> f64 {
    if q.len() < 2 {
        return 0.0;
    }
    let last = q.len() - 1;
    let same = |t: Option<&String>, k: usize| t.is_some_and(|t| *t == q[k] || (prefix_last && k == last && t.starts_with(q[k].as_str())));
    let mut at: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, t) in text.iter().enumerate() {
        at.entry(t.as_str()).or_default().push(j);
    }
    let mut best = 1;
    let mut i = 0;
    while i + best < q.len() {
        for &j in at.get(q[i].as_str()).map(Vec::as_slice).unwrap_or(&[]) {
            let mut n = 1;
            while i + n < q.len() && same(text.get(j + n), i + n) {
                n += 1;
            }
            best = best.max(n);
        }
        i += 1;
    }
    (best - 1) as f64 / last as f64
}

/// static-text.js `begins`: whether `title` begins with the query's terms, in order (with
/// `prefix_last`, the last may be the start of the title's term there).
pub fn begins(q: &[String], title: &[String], prefix_last: bool) -> bool {
    if q.is_empty() || title.len() < q.len() {
        return false;
    }
    let last = q.len() - 1;
    q.iter().zip(title).enumerate().all(|(i, (q, t))| t == q || (prefix_last && i == last && t.starts_with(q.as_str())))
}

/// static-text.js `clipQuery`: the first [`MAX_QUERY_CHARS`] UTF-16 code units, not ending
/// inside a surrogate pair.
fn clip_query(query: &str) -> &str {
    let mut units = 0;
    for (i, c) in query.char_indices() {
        units += c.len_utf16();
        if units > MAX_QUERY_CHARS {
            return &query[..i];
        }
    }
    query
}

/// static-text.js `analyzeQuery`: the clipped query analysed word by word.
pub fn analyze_query(query: &str) -> Vec<String> {
    clip_query(query).split(char::is_whitespace).filter(|w| !w.is_empty()).flat_map(analyze).collect()
}

/// Whether the visitor is still typing the last word: the query ends in a letter or digit.
fn ends_in_alnum(s: &str) -> bool {
    s.chars().next_back().is_some_and(|c| c.is_alphabetic() || c.is_numeric())
}

/// What a query highlights (static-text.js `needles`): its distinct terms; the word being typed
/// (the query's last term, 2 characters or more, not CJK) also as a prefix while the query ends
/// in a letter or digit. The last term, not the last distinct one: in `line by line` the word
/// being typed is `line`, which came first.
struct Needle {
    term: String,
    cjk: bool,
    prefix: bool,
}

fn needles(query: &str) -> Vec<Needle> {
    let mut terms = analyze_query(query);
    let typed = terms.last().cloned();
    let mut seen = HashSet::new();
    terms.retain(|t| seen.insert(t.clone()));
    let typing = ends_in_alnum(clip_query(query));
    terms
        .into_iter()
        .map(|term| {
            let cjk = term.chars().next().is_some_and(is_cjk);
            let prefix = typing && typed.as_ref() == Some(&term) && !cjk && term.chars().count() >= 2;
            Needle { term, cjk, prefix }
        })
        .collect()
}

/// A word character as the page's `WORD_CHAR` tests one UTF-16 code unit: a letter, digit or
/// mark of the Basic Multilingual Plane.
fn word_char(c: Option<char>) -> bool {
    c.is_some_and(|c| (c as u32) <= 0xFFFF && (c.is_alphabetic() || c.is_numeric() || c.is_mark()))
}

/// static-text.js `termsIn`: how many of the needles occur in `text` (words at word boundaries
/// of the lowercased text, a prefix needle at a word's start; CJK anywhere).
fn terms_in(text: &str, needles: &[Needle]) -> usize {
    // Lowercased character by character where that keeps the UTF-16 length (offsets stay).
    let mut lower = String::with_capacity(text.len());
    for c in text.chars() {
        let l: String = c.to_lowercase().collect();
        if l.encode_utf16().count() == c.len_utf16() {
            lower.push_str(&l);
        } else {
            lower.push(c);
        }
    }
    needles
        .iter()
        .filter(|n| {
            let mut from = 0;
            while let Some(i) = lower.get(from..).and_then(|rest| rest.find(n.term.as_str())) {
                let at = from + i;
                let end = at + n.term.len();
                let before = lower[..at].chars().next_back();
                let after = lower[end..].chars().next();
                if n.cjk || !(word_char(before) || (!n.prefix && word_char(after))) {
                    return true;
                }
                from = at + lower[at..].chars().next().map_or(1, char::len_utf8);
            }
            false
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(s: &str) -> Vec<String> {
        analyze_query(s)
    }

    #[test]
    fn phrase_and_begins_follow_the_page() {
        assert_eq!(phrase(&terms("static search"), &terms("webrag static search index"), false), 1.0);
        assert_eq!(phrase(&terms("static search index"), &terms("static index search"), false), 0.0);
        assert_eq!(phrase(&terms("static sea"), &terms("static search"), true), 1.0);
        assert_eq!(phrase(&terms("static sea"), &terms("static search"), false), 0.0);
        assert!(begins(&terms("search a"), &terms("Search a static site"), false));
        assert!(!begins(&terms("static site"), &terms("Search a static site"), false));
    }

    #[test]
    fn terms_in_matches_words_at_their_boundaries() {
        let n = needles("static sea");
        assert_eq!(terms_in("Static searches", &n), 2, "the last word typed is a prefix");
        assert_eq!(terms_in("ecstatic", &n), 0, "no match inside a word");
        let n = needles("static search ");
        assert_eq!(terms_in("static searches", &n), 1, "a finished word is whole");
        assert_eq!(terms_in("北京大学", &needles("京大")), 1, "CJK anywhere");
        // The word being typed is the query's last term, though it came earlier too: `by` is
        // a finished word here, not the start of `byte`.
        let n = needles("line by line");
        assert_eq!(n.iter().filter(|n| n.prefix).map(|n| n.term.as_str()).collect::<Vec<_>>(), ["line"]);
        assert_eq!(terms_in("a byte", &n), 0);
        assert_eq!(terms_in("lines by", &n), 2);
    }

    #[test]
    fn cap_per_page_gives_later_pages_room_and_keeps_their_order() {
        // Chunks 0..6 of page 1 first, then pages 2 and 3; chunk 9 has no known page.
        let hits: Vec<(u32, f32)> = [0, 1, 2, 3, 4, 5, 20, 9, 30, 21].iter().map(|&c| (c, 1.0 / (c as f32 + 1.0))).collect();
        let page = |c: u32| (c != 9).then_some(u64::from(c / 10));
        let cut: Vec<u32> = cap_per_page(&hits, 6, &page, 2).iter().map(|h| h.0).collect();
        assert_eq!(cut, [0, 1, 20, 9, 30, 21]);
        assert_eq!(cap_per_page(&hits, 3, &page, 10).len(), 3);
    }

    #[test]
    fn clip_query_never_splits_a_surrogate_pair() {
        let q = format!("{}{}", "a".repeat(MAX_QUERY_CHARS - 1), "😀");
        assert_eq!(clip_query(&q).len(), MAX_QUERY_CHARS - 1);
    }
}
