//! The API's plain data: documents as given, filters, hits and reports as returned, progress.
//! What the stores hold is [`crate::schema`]'s.
use serde::{Deserialize, Serialize};

use crate::schema::{ChunkId, DocId, DocumentRecord, MemoryRecord};

/// How a document's text is to be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// CommonMark + GFM tables (pulldown-cmark).
    Markdown,
    /// HTML (html5gum tokenizer; `script`, `style`, `nav`, `footer` skipped).
    Html,
    /// Plain text: blank lines separate paragraphs.
    Text,
    /// Guess from the file name (`.md`, `.html`/`.htm`), else sniff for leading `<`, else text.
    #[default]
    Auto,
}

impl Format {
    /// The name options and errors use: `markdown`, `html`, `text`, `auto`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::Text => "text",
            Format::Auto => "auto",
        }
    }
}

/// A document given to `add()`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct DocumentInput {
    /// Caller's id; re-adding the same id replaces the document (no-op if unchanged).
    pub id: DocId,
    /// Title; defaults to the first heading, else the id.
    #[serde(default)]
    pub title: Option<String>,
    /// The source text.
    pub text: String,
    /// Parser to use. Default `auto`.
    #[serde(default)]
    pub format: Format,
    /// Optional URL or file name, shown with hits and used by `auto` format detection.
    #[serde(default)]
    pub url: Option<String>,
    /// Tags, for [`SearchFilter::tags`] (compared without case; at most [`MAX_TAGS`], each
    /// 1..=[`MAX_TAG_CHARS`] characters). Default none.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Metadata `name → value`, for [`SearchFilter::meta`] (at most [`MAX_TAGS`] entries, names
    /// and values up to [`MAX_META_CHARS`] characters). Default none.
    #[serde(default)]
    pub meta: std::collections::BTreeMap<String, String>,
    /// The document's language, a BCP 47 tag (`en`, `fr-CA`; its primary subtag is kept, of 2 to
    /// 8 letters: else `INVALID_OPTION`): its words' BM25 terms are stemmed in it where it is one
    /// of the 18 languages with a Snowball stemmer, and a search's words are looked up as written
    /// and as their stems (docs/vector-index.md, "Stemmed documents"). In the page the worker
    /// loads that language's stemmer module (`stem/<tag>.wasm`) first; when it cannot,
    /// `STEMMER_UNAVAILABLE` and nothing of the batch is written. A static site's pages take
    /// their `<html lang>`. Default none: words as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
}

/// Tags (and metadata entries) a document may carry at most.
pub const MAX_TAGS: usize = 32;
/// Characters in one tag at most.
pub const MAX_TAG_CHARS: usize = 64;
/// Characters in a metadata name or value at most.
pub const MAX_META_CHARS: usize = 256;

/// A tag as stored and compared: trimmed, lowercased, inner whitespace collapsed.
pub fn normalize_tag(tag: &str) -> String {
    tag.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// The primary subtag of a BCP 47 language tag, lowercased: `en` of `en-GB`, `pt` of `pt_BR`
/// (an underscore is read as a hyphen), `und` of `und`; `None` unless it is 2 to 8 ASCII letters.
/// A page's language as a static snapshot records it (docs/snapshot-format.md).
pub fn primary_subtag(tag: &str) -> Option<String> {
    let primary = tag.trim().split(['-', '_']).next()?;
    (2..=8).contains(&primary.len()).then_some(())?;
    primary.bytes().all(|b| b.is_ascii_alphabetic()).then(|| primary.to_ascii_lowercase())
}

/// Every tag `docs` carry (their own and their automatic ones, [`normalize_tag`]ged) with how many
/// documents carry it, the most common first, ties by name.
pub fn tag_counts<'a>(docs: impl IntoIterator<Item = &'a DocumentRecord>) -> Vec<(String, usize)> {
    let mut counts: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for d in docs {
        let mut own: Vec<String> = d.tags.iter().chain(&d.auto_tags).map(|t| normalize_tag(t)).filter(|t| !t.is_empty()).collect();
        own.sort_unstable();
        own.dedup();
        for t in own {
            *counts.entry(t).or_default() += 1;
        }
    }
    let mut out: Vec<(String, usize)> = counts.into_iter().collect();
    crate::sort::by(&mut out, |a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

/// Which documents a search (or an ask) may return: every condition given must hold. Empty
/// (the default): every document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchFilter {
    /// The document carries at least one of these tags (its own or its automatic ones; case
    /// ignored). Empty: any.
    pub tags: Vec<String>,
    /// The document is one of these. Empty: any.
    pub doc_ids: Vec<DocId>,
    /// The document's metadata has each of these `name → value` entries. Empty: any.
    pub meta: std::collections::BTreeMap<String, String>,
    /// The document is in this language or names none (`webrag/static`'s `lang`): a BCP 47 tag
    /// whose primary subtag is compared (`en` of `en-GB`), and the query's words are stemmed in
    /// that language only. None: every language, the query stemmed in each of the knowledge
    /// base's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
}

impl SearchFilter {
    /// No condition.
    pub fn is_empty(&self) -> bool {
        self.tags.is_empty() && self.doc_ids.is_empty() && self.meta.is_empty() && self.lang.is_none()
    }

    /// The language asked for, as documents store theirs (a lowercase primary subtag).
    ///
    /// Errors: [`InputError::InvalidOption`] `filter.lang` for a tag that is not one.
    pub fn language(&self) -> Result<Option<String>, crate::error::InputError> {
        let Some(tag) = self.lang.as_deref() else { return Ok(None) };
        primary_subtag(tag).map(Some).ok_or_else(|| crate::error::InputError::InvalidOption {
            name: "filter.lang".into(),
            reason: format!(
                "{:?} is not a language tag (a primary subtag of 2 to 8 letters: en, fr-CA)",
                tag.chars().take(40).collect::<String>()
            ),
        })
    }

    /// Whether `doc` passes. To test many documents, [`SearchFilter::matcher`] once.
    pub fn matches(&self, doc: &DocumentRecord) -> bool {
        self.matcher().passes(doc)
    }

    /// The filter made ready to test many documents: its tags normalized and its ids hashed once,
    /// so testing D documents against F ids costs O(D + F), not O(D × F).
    pub fn matcher(&self) -> FilterMatcher<'_> {
        FilterMatcher {
            tags: self.tags.iter().map(|t| normalize_tag(t)).collect(),
            doc_ids: self.doc_ids.iter().collect(),
            meta: &self.meta,
            lang: self.lang.as_deref().map(|t| primary_subtag(t).unwrap_or_default()),
        }
    }
}

/// A [`SearchFilter`] ready to test documents ([`SearchFilter::matcher`]).
pub struct FilterMatcher<'a> {
    tags: std::collections::HashSet<String>,
    doc_ids: std::collections::HashSet<&'a DocId>,
    meta: &'a std::collections::BTreeMap<String, String>,
    /// The primary subtag asked for (empty for a tag that is not one: no document is in it).
    lang: Option<String>,
}

impl FilterMatcher<'_> {
    /// Whether `doc` passes: one of the tags (when any), one of the ids (when any), every meta
    /// entry, the language (when given; a document that names none passes).
    pub fn passes(&self, doc: &DocumentRecord) -> bool {
        (self.tags.is_empty() || doc.tags.iter().chain(&doc.auto_tags).any(|t| self.tags.contains(t)))
            && (self.doc_ids.is_empty() || self.doc_ids.contains(&doc.id))
            && self.meta.iter().all(|(k, v)| doc.meta.get(k) == Some(v))
            && self.lang.as_ref().is_none_or(|l| doc.lang.as_ref().is_none_or(|d| d == l))
    }
}

/// A memory entry as `memory()` returns it: a [`MemoryRecord`] without its embedding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct MemoryEntry {
    /// `"m{created_at}-{n}"`.
    pub id: String,
    /// The title (a question) the retrieval trigger compares queries with.
    pub title: String,
    /// The knowledge (an answer).
    pub content: String,
    /// Chunk ids the content came from.
    pub sources: Vec<ChunkId>,
    /// Milliseconds since the Unix epoch.
    pub created_at: f64,
}

impl From<MemoryRecord> for MemoryEntry {
    fn from(m: MemoryRecord) -> Self {
        MemoryEntry { id: m.id, title: m.title, content: m.content, sources: m.sources, created_at: m.created_at }
    }
}

/// Which retriever(s) to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// BM25 only.
    Bm25,
    /// Dense (cosine over chunk embeddings) only.
    Dense,
    /// Both, fused with reciprocal-rank fusion.
    #[default]
    Hybrid,
    /// The pseudo-graph retriever (PGR, docs/pseudo-graph.md) only.
    Graph,
    /// BM25, dense and PGR fused with reciprocal-rank fusion.
    #[serde(rename = "hybrid+graph")]
    HybridGraph,
    /// PIKE-RAG's atomic retrieval: query → nearest atomic questions → their chunks (path (b)),
    /// fused by RRF with query → chunks (dense, path (a)). Without atomic questions, dense.
    Atomic,
}

impl SearchMode {
    /// Whether the mode ranks with BM25.
    pub fn uses_bm25(self) -> bool {
        matches!(self, SearchMode::Bm25 | SearchMode::Hybrid | SearchMode::HybridGraph)
    }

    /// Whether the mode ranks with the chunk embeddings (path (a) of `atomic` too).
    pub fn uses_dense(self) -> bool {
        matches!(self, SearchMode::Dense | SearchMode::Hybrid | SearchMode::HybridGraph | SearchMode::Atomic)
    }

    /// Whether the mode ranks with the pseudo-graph retriever.
    pub fn uses_graph(self) -> bool {
        matches!(self, SearchMode::Graph | SearchMode::HybridGraph)
    }

    /// Whether the mode ranks with the atomic questions (once the knowledge base has them).
    pub fn uses_atomic(self) -> bool {
        matches!(self, SearchMode::Atomic | SearchMode::Hybrid | SearchMode::HybridGraph)
    }

    /// The name used in options and reports: `bm25`, `dense`, `hybrid`, `graph`, `hybrid+graph`,
    /// `atomic`.
    pub fn name(self) -> &'static str {
        match self {
            SearchMode::Bm25 => "bm25",
            SearchMode::Dense => "dense",
            SearchMode::Hybrid => "hybrid",
            SearchMode::Graph => "graph",
            SearchMode::HybridGraph => "hybrid+graph",
            SearchMode::Atomic => "atomic",
        }
    }
}

/// A piece of a snippet; `hit` pieces matched a query term (render them highlighted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct SnippetPart {
    /// Text of the piece (plain text: render with `textContent`, never as HTML).
    pub text: String,
    /// Whether the piece matched a query term.
    pub hit: bool,
}

/// Per-retriever scores and 1-based ranks of a hit (absent where that retriever did not find it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Scores {
    /// BM25 score.
    pub bm25: Option<f32>,
    /// Rank in the BM25 list.
    pub bm25_rank: Option<u32>,
    /// Cosine similarity of query and chunk embeddings.
    pub dense: Option<f32>,
    /// Rank in the dense list.
    pub dense_rank: Option<u32>,
    /// Aggregated PGR score of the chunk's best fact path (leaf similarity − 2 for candidate
    /// facts PGR did not select).
    pub graph: Option<f32>,
    /// Rank in the graph list.
    pub graph_rank: Option<u32>,
    /// Cosine of the chunk's best atomic question to the query (path (b)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic: Option<f32>,
    /// Rank in the atomic list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic_rank: Option<u32>,
    /// Reciprocal-rank-fusion score (hybrid modes).
    pub rrf: Option<f32>,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// Document id.
    pub doc_id: DocId,
    /// Chunk id.
    pub chunk_id: ChunkId,
    /// Document title.
    pub title: String,
    /// Document URL, if any.
    pub url: Option<String>,
    /// Headings above the chunk.
    pub heading_path: Vec<String>,
    /// The score the list is ordered by (RRF in hybrid mode, else the retriever's own).
    pub score: f32,
    /// Score and rank from each retriever.
    pub scores: Scores,
    /// Snippet around the best-matching terms (≈ 240 characters).
    pub snippet: Vec<SnippetPart>,
    /// With [`Grouping::Document`]: the document's other matching chunks, best first (at most
    /// 2). Empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<Section>,
}

/// Another matching chunk of a document-level hit ([`Hit::sections`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Section {
    /// Chunk id.
    pub chunk_id: ChunkId,
    /// Headings above the chunk.
    pub heading_path: Vec<String>,
    /// Its score in the ranked list.
    pub score: f32,
    /// Snippet around the best-matching terms.
    pub snippet: Vec<SnippetPart>,
}

/// What a search returns: chunks, or documents (each its best chunk, with its other matching
/// chunks as [`Hit::sections`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Grouping {
    /// One hit per chunk (the default).
    #[default]
    Chunk,
    /// One hit per document, ranked where its best chunk is.
    Document,
}

/// Counters returned by `stats()`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Documents stored.
    pub documents: usize,
    /// Chunks stored.
    pub chunks: usize,
    /// Distinct BM25 terms.
    pub terms: usize,
    /// Embedding dimension.
    pub dim: usize,
    /// Model id.
    pub model: String,
    /// Vector collections (chunks, topics, facts): vectors in the exact fresh buffer, sealed
    /// HNSW segments, tombstones.
    pub ann: AnnStats,
    /// Chunks atomized (with a `questions` record).
    pub atomized_chunks: usize,
    /// Atomic questions indexed.
    pub questions: usize,
    /// Memory knowledge-base entries.
    pub memory: usize,
    /// Opened lazily and not loaded yet: searches are served from the stored index segments
    /// (docs/vector-index.md, "Index segments"), `documents`, `chunks` and `terms` are theirs,
    /// and `ann` and `memory` read 0 until the knowledge base is loaded.
    pub lazy: bool,
    /// The languages its documents are stemmed in (tags: `en`, `fr`; `no` for Norwegian), whose
    /// stemmer modules a search needs (the worker loads them at open).
    pub languages: Vec<String>,
}

/// Shape of the segmented vector collections ([`crate::index::ann`]): `[fresh vectors, sealed
/// segments, tombstones]` each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct AnnStats {
    /// Chunk vectors.
    pub chunks: [usize; 3],
    /// Topic vectors.
    pub topics: [usize; 3],
    /// Fact vectors.
    pub facts: [usize; 3],
    /// Atomic questions.
    pub questions: [usize; 3],
}

/// Outcome of an `add()` batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct AddReport {
    /// Ids added for the first time.
    pub added: Vec<DocId>,
    /// Ids whose content changed and were replaced.
    pub replaced: Vec<DocId>,
    /// Ids re-added unchanged (nothing written).
    pub unchanged: Vec<DocId>,
    /// Chunks written.
    pub chunks: usize,
}

/// Outcome of `remove()`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RemoveReport {
    /// Ids removed.
    pub removed: Vec<DocId>,
    /// Ids that were not stored (ignored; not an error).
    pub unknown: Vec<DocId>,
}

/// The phase of a long operation a [`ProgressEvent`] reports (`phase` in the page, camelCase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum Phase {
    /// `open`: the model files downloaded (`done`/`total` in bytes).
    Model,
    /// `open`: the embedding device set up (0/1, 1/1).
    Device,
    /// `open`: IndexedDB read and the in-memory indexes rebuilt (0/1, 1/1); the site builder: pages indexed.
    Index,
    /// `add`: documents parsed.
    Parse,
    /// `add`: chunks embedded (one event per embedding call).
    Embed,
    /// `add`: mind-map nodes embedded.
    Graph,
    /// `add`: the commit (0/1).
    Store,
    /// `add`: finished.
    Done,
    /// `enrich`: chunks given a forward summary.
    Summaries,
    /// `enrich`: documents tagged.
    Tags,
    /// `enrich`: chunks atomized.
    Atomize,
    /// `enrich`: documents given an LLM mind map.
    Mindmap,
    /// The site builder's `distillStatic`: token rows distilled.
    Distill,
}

impl Phase {
    /// Every phase, in the order an operation reports them.
    pub const ALL: [Phase; 13] = [
        Phase::Model,
        Phase::Device,
        Phase::Index,
        Phase::Parse,
        Phase::Embed,
        Phase::Graph,
        Phase::Store,
        Phase::Done,
        Phase::Summaries,
        Phase::Tags,
        Phase::Atomize,
        Phase::Mindmap,
        Phase::Distill,
    ];
}

/// A progress event of long work (`add()`, model loading).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProgressEvent {
    /// The phase.
    pub phase: Phase,
    /// Units done in this phase.
    pub done: usize,
    /// Units in this phase.
    pub total: usize,
}
