//! What `webrag/static` (the page's snapshot loader, `src/web/js/static.js`) takes and gives: its
//! options — each one's default, range or values and meaning — and the shapes of its results. The
//! loader is plain JavaScript (no WebAssembly on a visitor's first keyword query), so nothing here
//! runs in it; these definitions are what `webrag surface` writes into `static.d.ts` (option
//! interfaces, result types), docs/api.md (the option tables) and the loader's own
//! `static-text.js` (the defaults, ranges and values it checks options against), so each is
//! stated once. The loader's ranking is the engine's search over the same snapshot
//! (`webrag search-snapshot`, checked in `tests/e2e/static.test.mjs`).
//!
//! A numeric option outside its range, or a value an option does not take, is a `RangeError`
//! naming the option (the loader's `SnapshotError` is for the snapshot's own problems).
use serde::Serialize;

use crate::options::{Doc, Range, Value};

/// `k` of `search`, `keyword`, `semantic` and `graph`.
pub const K: Range = Range::new("k", 10.0, 1.0, 1000.0);
/// `sections` of `search`.
pub const SECTIONS: Range = Range::new("sections", 3.0, 1.0, 20.0);
/// `max` of `completions`.
pub const MAX_COMPLETIONS: Range = Range::new("max", 3.0, 1.0, 100.0);
/// `chars` of `highlight`.
pub const EXCERPT_CHARS: Range = Range::new("chars", 200.0, 20.0, 10_000.0);

/// The numeric options the loader checks, by name (each name has one range wherever it is used).
pub const RANGES: [Range; 4] = [K, SECTIONS, MAX_COMPLETIONS, EXCERPT_CHARS];

/// The retrievers of `search`: its `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum StaticMode {
    /// Keyword, plus semantic and graph fused by RRF once an embedder is set.
    Hybrid,
    /// BM25 only.
    Keyword,
    /// The dense retriever only (needs an embedder: `SNAPSHOT_NO_EMBEDDER`).
    Semantic,
}

/// What a result of `search` is: its `group`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum StaticGrouping {
    /// A page: its best chunk, with its other matching sections.
    Page,
    /// A chunk.
    Chunk,
}

/// A retriever of the loader, and the stage of a search that adds it (`onProgress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum SearchStage {
    /// BM25 over the term shards.
    Keyword,
    /// Cosine over the IVF lists nearest the query vector.
    Semantic,
    /// PGR over the mind maps of the first results' pages and their neighbours.
    Graph,
}

/// `StaticSearch.open`'s options.
pub const OPEN_OPTIONS: &[Doc] = &[
    Doc::new(
        "fetch",
        Value::Other { ts: "typeof fetch", default: "`globalThis.fetch`", accepts: "a `fetch`-compatible function" },
        "how files are fetched (tests, service workers)",
    ),
    Doc::new(
        "offline",
        Value::Flag(true),
        "use the IndexedDB copy `importOffline()` made: files are read from it, and its manifest when the network one cannot be fetched",
    ),
    Doc::new(
        "requireIntegrity",
        Value::Flag(false),
        "reject with `SNAPSHOT_UNVERIFIED` where shards cannot be checked against their hashes (no `crypto.subtle`: an insecure context)",
    ),
    Doc::new(
        "siteUrl",
        Value::Other {
            ts: "string",
            default: "the manifest's `siteRoot` (`../` for a snapshot in `<site>/webrag/`), else the origin's root",
            accepts: "a URL or path, read from the snapshot's folder (`/docs/`, `https://example.org/docs/`)",
        },
        "where the site is served: `link()` resolves page URLs against it",
    ),
    Doc::new(
        "stemmer",
        Value::Other {
            ts: "string | URL | Uint8Array | ((tag: string) => string | URL | Uint8Array | null)",
            default: "the `stem/` folder beside `static.js` (or the box's `webrag-ui.js`)",
            accepts: "a folder URL holding `<tag>.wasm` per language (`en.wasm`; `no.wasm` for `nb` and `nn`), a function from that tag to a module's URL or bytes, or one module's bytes",
        },
        "the stemmer modules (one per Snowball language, 10.7–13.6 KB gzipped each, Greek's 20.5 KB), a language's fetched once, at the first search in it of a snapshot whose pages are in it; without it such a search matches each word as written and by the longest vocabulary word it begins with (at least half its letters: `hunt` for `hunting`), and reports `SNAPSHOT_UNAVAILABLE` in `errors`",
    ),
];

/// `search`'s options.
pub const SEARCH_OPTIONS: &[Doc] = &[
    Doc::new("k", Value::Number(K), "results: pages with `group: 'page'`, else chunks"),
    Doc::new(
        "mode",
        Value::Other {
            ts: "StaticMode",
            default: "`'hybrid'`",
            accepts: "`'hybrid'` (keyword alone until an embedder is set), `'keyword'`, `'semantic'` (needs an embedder)",
        },
        "retrievers",
    ),
    Doc::new(
        "group",
        Value::Other { ts: "StaticGrouping", default: "`'page'`", accepts: "`'page'`, `'chunk'`" },
        "`'page'`: each retriever's chunks become pages, the page lists are fused (RRF), and a result is a page's best chunk with its other matching `sections`; `'chunk'`: chunks",
    ),
    Doc::new("sections", Value::Number(SECTIONS), "chunks a page result shows: its best and up to `sections` − 1 other matching sections"),
    TYPOS,
    Doc::new(
        "filters",
        Value::Other {
            ts: "Record<string, string | string[]>",
            default: "none",
            accepts: "`{key: value | value[]}` (a `TypeError` otherwise)",
        },
        "keep the pages that carry, for every key, one of its values (`data-webrag-filter`); a key the snapshot does not have keeps no page. An empty query with `filters` or `sort` lists the pages that pass, in the sort's order (else the site's)",
    ),
    Doc::new(
        "sort",
        Value::Other {
            ts: "Record<string, 'asc' | 'desc'>",
            default: "relevance",
            accepts: "one key, `{key: 'asc' | 'desc'}` (a `RangeError` otherwise)",
        },
        "order the results by the pages' values of a sort key (`data-webrag-sort`; numbers as numbers when every value is one, else code point order), every page that matches the query a candidate; pages without a value last, in relevance order; each result carries its `sortValue`",
    ),
    LANG,
    Doc::new(
        "facets",
        Value::Flag(true),
        "count the values of every filter over the matching pages (the result's `filters`), each key counted under the other keys' `filters` only; `false` fetches no filter file a query does not filter on",
    ),
    Doc::new(
        "onKeyword",
        Value::Other { ts: "(results: StaticResult[]) => void", default: "none", accepts: "a function" },
        "called with the keyword stage's results as soon as they are ready",
    ),
    Doc::new(
        "onProgress",
        Value::Other {
            ts: "(p: { stage: SearchStage; results: StaticResult[]; corrections: Corrections; filters?: FacetCounts }) => void",
            default: "none",
            accepts: "a function",
        },
        "called with each stage's results: `keyword`, then (with an embedder) `semantic` and `graph`, each the RRF fusion so far",
    ),
];

/// The query's language, an option of `search` and `keyword`.
const LANG: Doc = Doc::new(
    "lang",
    Value::Other {
        ts: "string",
        default: "the page's `<html lang>` when the snapshot has pages in it, else the language most of its pages are in",
        accepts: "a BCP 47 tag (`en`, `fr-CA`; a `TypeError` for another type)",
    },
    "for a snapshot whose pages name their language (`<html lang>`): search the pages in this language and those that name none, the query's words stemmed as this language's pages were (Snowball) and also matched as written; pages in other languages are left out",
);

/// Typo tolerance, an option of `search` and `keyword`.
const TYPOS: Doc = Doc::new(
    "typos",
    Value::Flag(true),
    "a query word of 4–32 letters (not CJK, not a number) with no postings matches the vocabulary's nearest words instead (`corrections`: edit distance 1 for 4–7 letters, 2 for 8–32, a swap of neighbours counting 1; at most 3, the fewest edits and then the most frequent, from the vocabulary block where the word sorts and its neighbours), each scored at 1 / (1 + edits) of an exact match, so pages matching the query as typed rank first; the result's `corrections` maps each such word to the words used",
);

/// `keyword`'s options.
pub const KEYWORD_OPTIONS: &[Doc] = &[
    Doc::new("k", Value::Number(K), "hits"),
    TYPOS,
    LANG,
    Doc::new(
        "prefix",
        Value::Other { ts: "boolean", default: "the query ends in a letter or digit", accepts: "`true`, `false`" },
        "the last word (2+ characters, not CJK) also matches its `completions`; a chunk takes its best of them",
    ),
];

/// `semantic`'s options.
pub const SEMANTIC_OPTIONS: &[Doc] = &[
    Doc::new("k", Value::Number(K), "hits"),
    Doc::new(
        "nprobe",
        Value::Other { ts: "number", default: "the manifest's `vectors.nprobe`", accepts: "1..=`vectors.lists`" },
        "IVF lists read: those whose centroids are nearest the query vector",
    ),
];

/// `graph`'s options.
pub const GRAPH_OPTIONS: &[Doc] = &[Doc::new("k", Value::Number(K), "hits: chunks, each at its best fact path")];

/// `completions`' options.
pub const COMPLETION_OPTIONS: &[Doc] = &[Doc::new("max", Value::Number(MAX_COMPLETIONS), "terms returned, most frequent first")];

/// `highlight`'s options.
pub const HIGHLIGHT_OPTIONS: &[Doc] =
    &[Doc::new("chars", Value::Number(EXCERPT_CHARS), "the excerpt's length in characters, about (cut at word boundaries)")];

/// `importOffline`'s options.
pub const IMPORT_OPTIONS: &[Doc] = &[Doc::new(
    "onProgress",
    Value::Other { ts: "(p: { done: number; total: number; bytes: number }) => void", default: "none", accepts: "a function" },
    "called after each file copied: files done, files in all, bytes so far",
)];

/// Each option table of the loader: the TypeScript interface it types, where it is taken, and
/// its rows.
pub const OPTION_TABLES: [(&str, &str, &[Doc]); 8] = [
    ("StaticOpenOptions", "`StaticSearch.open(baseUrl, options?)`", OPEN_OPTIONS),
    ("StaticSearchOptions", "`search(query, options?)`", SEARCH_OPTIONS),
    ("KeywordOptions", "`keyword(query, options?)`", KEYWORD_OPTIONS),
    ("SemanticOptions", "`semantic(vector, options?)`", SEMANTIC_OPTIONS),
    ("StaticGraphOptions", "`graph(vector, seedPages, options?)`", GRAPH_OPTIONS),
    ("CompletionOptions", "`completions(prefix, options?)`", COMPLETION_OPTIONS),
    ("HighlightOptions", "`highlight(text, query, options?)`", HIGHLIGHT_OPTIONS),
    ("ImportOfflineOptions", "`importOffline(options?)`", IMPORT_OPTIONS),
];

/// A hit of `keyword` or `semantic`: a chunk and its score.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StaticHit {
    /// The chunk's number in the snapshot (`0..manifest.chunks`).
    pub chunk: u32,
    /// BM25 (`keyword`) or cosine (`semantic`).
    pub score: f64,
}

/// A hit of `graph`: a chunk, its score and the fact path PGR selected for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[cfg_attr(not(target_arch = "wasm32"), schemars(rename = "GraphHit"))]
pub struct StaticGraphHit {
    /// The chunk's number in the snapshot.
    pub chunk: u32,
    /// PGR's support of the path (PG-RAG §4.5): per key point, the largest row sum of one
    /// anchor's dyeing matrix.
    pub score: f64,
    /// The fact path: the page's title, its headings, the fact last.
    pub path: Vec<String>,
}

/// A chunk's text, from its fragment file (`fragments`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Fragment {
    /// The page's title.
    pub title: String,
    /// The page's URL from the site's root (`/guide/intro.html`), when it is safe as a link
    /// (`safeUrl`: relative, http: or https:); `link(url)` is the link from the current page.
    pub url: Option<String>,
    /// The headings above the chunk, joined with " › ".
    pub heading: String,
    /// The chunk's text as its fragment keeps it (up to 1,000 characters).
    pub excerpt: String,
    /// The page's number in the snapshot (its graph file).
    pub page: u32,
    /// The page's metadata (`data-webrag-meta`), when it has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<std::collections::BTreeMap<String, String>>,
}

/// A query-aware excerpt (`highlight`): about `chars` characters around the most query terms,
/// "…" where text was cut.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Excerpt {
    /// The excerpt.
    pub excerpt: String,
    /// The matched spans, `[start, end)` UTF-16 offsets into `excerpt`.
    pub highlights: Vec<(u32, u32)>,
}

/// Another matching chunk of a page result (from the best chunk's fragment file).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StaticSection {
    /// The chunk's number in the snapshot.
    pub chunk: u32,
    /// The headings above the chunk, joined with " › ".
    pub heading: String,
    /// Its query-aware excerpt.
    pub excerpt: String,
    /// The matched spans, `[start, end)` UTF-16 offsets into `excerpt`.
    pub highlights: Vec<(u32, u32)>,
    /// The section's URL from the site's root (`link(section)` is the link from the current
    /// page): the page URL with a text fragment (`#:~:text=`) of its heading, or
    /// the page URL; null without a safe URL.
    pub section: Option<String>,
}

/// A result of `search`: a chunk (with `group: 'page'`, its page's best), its text and where it
/// came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StaticResult {
    /// The chunk's number in the snapshot.
    pub chunk: u32,
    /// The retriever's score (BM25, cosine) with one retriever, else the RRF score; a
    /// keyword-only result's BM25 score is times `1 + 0.5 · phrase`.
    pub score: f64,
    /// The page's title.
    pub title: String,
    /// The page's URL, when it is safe as a link.
    pub url: Option<String>,
    /// The headings above the chunk, joined with " › ".
    pub heading: String,
    /// The query-aware excerpt of the chunk's text.
    pub excerpt: String,
    /// The matched spans, `[start, end)` UTF-16 offsets into `excerpt`.
    pub highlights: Vec<(u32, u32)>,
    /// The page's number in the snapshot.
    pub page: u32,
    /// The retrievers that found this chunk (`group: 'chunk'`) or any chunk of this page.
    pub found: Vec<SearchStage>,
    /// A link to the chunk's section (see `StaticSection.section`).
    pub section: Option<String>,
    /// For graph results: the fact path PGR selected, the page's title first, the fact last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<String>>,
    /// With `group: 'page'`: the page's other matching sections, best first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sections: Option<Vec<StaticSection>>,
    /// The page's metadata (`data-webrag-meta`: `{key: value}`), when it has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<std::collections::BTreeMap<String, String>>,
    /// With `sort`: the page's value of the sort key (a number when the key is numeric), absent
    /// for a page without one.
    #[serde(rename = "sortValue", skip_serializing_if = "Option::is_none")]
    pub sort_value: Option<SortValue>,
}

/// A page's value of a sort key: a number when every page's value of the key is one.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum SortValue {
    /// A numeric key's value.
    Number(f64),
    /// Any other key's value, as the page wrote it.
    Text(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_option_name_has_one_range_and_every_range_is_used() {
        for (i, r) in RANGES.iter().enumerate() {
            assert!(RANGES[..i].iter().all(|o| o.name != r.name), "{} twice", r.name);
            assert!((r.min..=r.max).contains(&r.default), "{}'s default is in its range", r.name);
        }
        let used = |r: &Range| OPTION_TABLES.iter().flat_map(|t| t.2).any(|d| matches!(d.value, Value::Number(x) if x == *r));
        assert!(RANGES.iter().all(used));
        for (_, _, docs) in OPTION_TABLES {
            for d in docs {
                if let Value::Number(r) = d.value {
                    assert!(RANGES.contains(&r), "{} is checked by the loader", d.name);
                }
            }
        }
    }
}
