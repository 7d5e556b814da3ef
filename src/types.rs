//! Plain data shared by every module: documents as given, records as stored, hits as returned.
//!
//! Stored records mirror the object stores of docs/vector-index.md one to one; each has a string `id`
//! (the IndexedDB key path).
use serde::{Deserialize, Serialize};

/// Document id as given by the caller (1..=1024 characters, any of them: ids are never parsed).
pub type DocId = String;
/// Chunk id: `"{doc_id}#{ordinal}"`.
pub type ChunkId = String;

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
}

impl SearchFilter {
    /// No condition.
    pub fn is_empty(&self) -> bool {
        self.tags.is_empty() && self.doc_ids.is_empty() && self.meta.is_empty()
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
        }
    }
}

/// A [`SearchFilter`] ready to test documents ([`SearchFilter::matcher`]).
pub struct FilterMatcher<'a> {
    tags: std::collections::HashSet<String>,
    doc_ids: std::collections::HashSet<&'a DocId>,
    meta: &'a std::collections::BTreeMap<String, String>,
}

impl FilterMatcher<'_> {
    /// Whether `doc` passes: one of the tags (when any), one of the ids (when any), every meta entry.
    pub fn passes(&self, doc: &DocumentRecord) -> bool {
        (self.tags.is_empty() || doc.tags.iter().chain(&doc.auto_tags).any(|t| self.tags.contains(t)))
            && (self.doc_ids.is_empty() || self.doc_ids.contains(&doc.id))
            && self.meta.iter().all(|(k, v)| doc.meta.get(k) == Some(v))
    }
}

/// Which mind map the pseudo-graph holds for a document ([`DocumentRecord::mind_map`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum MindMapKind {
    /// Built from headings and sentences, no LLM ([`crate::graph::mindmap::structural`]).
    Structural,
    /// PG-RAG's fact-check-item-verified map (`enrich`'s mind-map stage).
    Llm,
    /// The LLM map failed after its repair attempt; the structural map was kept.
    StructuralFallback,
}

/// `documents` record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct DocumentRecord {
    /// Document id.
    pub id: DocId,
    /// Title.
    pub title: String,
    /// URL or file name, if given.
    pub url: Option<String>,
    /// Hex SHA-256 of (format, title, text): equal hash = unchanged document.
    pub source_hash: String,
    /// Milliseconds since the Unix epoch.
    pub added_at: f64,
    /// Number of chunks.
    pub chunk_count: u32,
    /// `"indexed"`.
    pub status: String,
    /// Which mind map the pseudo-graph holds for the document (absent in older records:
    /// structural).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mind_map: Option<MindMapKind>,
    /// Tags given with the document ([`normalize_tag`]ged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Tags the auto-tagging stage chose (PIKE-RAG §4.2, auto-tagging; `enrich`), normalized.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub auto_tags: Vec<String>,
    /// Whether the auto-tagging stage ran on this document (so a pass resumes after it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tagged: bool,
    /// Metadata given with the document.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub meta: std::collections::BTreeMap<String, String>,
}

/// `questions` record (schema 4): the atomic questions one chunk answers (PIKE-RAG §4.2.6,
/// knowledge atomizing), keyed by the chunk id. Its presence marks the chunk as atomized (an
/// empty list: the model found none), which is how an interrupted pass resumes. Question `i`'s
/// embedding is the `vectors` record `"{chunk_id}?{i}"` of collection `"questions"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionRecord {
    /// The chunk id.
    pub id: ChunkId,
    /// Owning document.
    pub doc_id: DocId,
    /// The questions, in the model's order.
    pub questions: Vec<String>,
}

/// `memory` record (schema 4): one entry of the memory knowledge base (docs/ask-pipeline.md and
/// 7): knowledge the ask pipeline kept, as a title–content pair with the title's embedding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryRecord {
    /// `"m{created_at}-{n}"`.
    pub id: String,
    /// The title (a question) the retrieval trigger compares queries with.
    pub title: String,
    /// The knowledge (an answer, with its sources' chunk ids in `sources`).
    pub content: String,
    /// Chunk ids the content came from.
    #[serde(default)]
    pub sources: Vec<ChunkId>,
    /// Milliseconds since the Unix epoch.
    pub created_at: f64,
    /// The title's embedding, little-endian f32.
    #[serde(with = "serde_bytes")]
    pub embedding: Vec<u8>,
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

/// `traces` record (schema 4): one kept ask trace (opt-in), for export as JSONL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TraceRecord {
    /// `"t{created_at}"` (zero-padded, so keys sort by time).
    pub id: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: f64,
    /// The question asked.
    pub question: String,
    /// The trace as JSON: `{question, events: [...], trajectory?, answer?}`.
    pub json: String,
}

/// `chunks` record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ChunkRecord {
    /// `"{doc_id}#{ordinal}"`.
    pub id: ChunkId,
    /// Owning document.
    pub doc_id: DocId,
    /// Position within the document, from 0.
    pub ordinal: u32,
    /// Headings above the chunk, outermost first (the title is not repeated).
    pub heading_path: Vec<String>,
    /// Chunk text.
    pub text: String,
    /// Word pieces of the embedded input (prefix + text + special tokens); ≤ `max_chunk_tokens`.
    pub token_count: u32,
    /// PIKE-RAG's forward summary (§4.2, context-aware chunking): what the document says before
    /// this chunk, in a sentence or two, written by the `enrich` stage; it is embedded with the
    /// chunk. `None`: not written (the first chunk never has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_summary: Option<String>,
}

/// The id of a document's chunk: `"{doc_id}#{ordinal}"`.
pub fn chunk_id(doc_id: &str, ordinal: usize) -> ChunkId {
    format!("{doc_id}#{ordinal}")
}

/// Atomic question `index` of chunk `chunk` (PIKE-RAG atomizing): the engine's key for it. Its
/// `vectors` record is keyed [`QuestionKey::store_id`]; that string is written, never parsed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QuestionKey {
    /// The chunk the question is about.
    pub chunk: ChunkId,
    /// Its position in the chunk's question list.
    pub index: u32,
}

impl QuestionKey {
    /// The key of question `index` of `chunk`.
    pub fn new(chunk: &str, index: usize) -> Self {
        QuestionKey { chunk: chunk.to_string(), index: index as u32 }
    }
    /// The id of its `vectors` record and its HNSW segment entry: `"{chunk}?{index}"`.
    pub fn store_id(&self) -> String {
        format!("{}?{}", self.chunk, self.index)
    }
}

/// `vectors` record: one embedding, keyed by its owner id (a chunk id here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VectorRecord {
    /// Owner id (chunk id).
    pub id: String,
    /// Collection: `"chunks"`.
    pub collection: String,
    /// Little-endian f32 values, `dim * 4` bytes.
    #[serde(with = "serde_bytes")]
    pub data: Vec<u8>,
}

impl VectorRecord {
    /// Encodes an f32 vector.
    pub fn from_f32(id: &str, collection: &str, v: &[f32]) -> Self {
        let mut data = Vec::with_capacity(v.len() * 4);
        for x in v {
            data.extend_from_slice(&x.to_le_bytes());
        }
        VectorRecord { id: id.to_string(), collection: collection.to_string(), data }
    }
    /// Decodes the f32 values; `None` when the byte length is not a multiple of 4.
    pub fn to_f32(&self) -> Option<Vec<f32>> {
        if !self.data.len().is_multiple_of(4) {
            return None;
        }
        Some(self.data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
    }
}

/// The engine's four vector collections, each a set of slots with a segmented HNSW index
/// ([`crate::index::ann::SegmentedIndex`]: an exact fresh buffer + sealed segments); named in
/// `ann` records and seal reports by [`VectorCollection::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VectorCollection {
    /// Chunk embeddings (slots shared with BM25).
    Chunks,
    /// The pseudo-graph's topic nodes.
    Topics,
    /// The pseudo-graph's fact nodes.
    Facts,
    /// Atomic questions.
    Questions,
}

impl VectorCollection {
    /// Every collection, in the order upkeep visits them.
    pub const ALL: [VectorCollection; 4] = [Self::Chunks, Self::Topics, Self::Facts, Self::Questions];
    /// The stored name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Chunks => "chunks",
            Self::Topics => "topics",
            Self::Facts => "facts",
            Self::Questions => "questions",
        }
    }
    /// The collection a stored name denotes (`None`: not one of ours).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// `ann` record: one sealed HNSW segment of a vector collection (schema 3;
/// [`crate::index::ann`]). Derived data: deleting every `ann` record loses nothing (the vectors
/// stay in `vectors` and are searched exactly until sealed again).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnnSegmentRecord {
    /// `"{collection}/{seq}"`, `seq` zero-padded to 10 digits.
    pub id: String,
    /// The vector collection ([`VectorCollection::name`]): `"chunks"`, `"topics"`, `"facts"`
    /// or `"questions"`.
    pub collection: String,
    /// Segment number within the collection (increasing).
    pub seq: u64,
    /// Owner id (chunk or node id) of each point, by the segment's local index.
    pub ids: Vec<String>,
    /// The instant-distance map (points = the vectors as f32, values = local indexes), postcard.
    #[serde(with = "serde_bytes")]
    pub data: Vec<u8>,
    /// The layout of `data` (`crate::index::ann::ANN_FORMAT`; records written before the field
    /// existed have layout 1). A segment of another layout is not attached, and rebuilt.
    #[serde(default = "first_ann_format")]
    pub format: u32,
}

fn first_ann_format() -> u32 {
    1
}

impl AnnSegmentRecord {
    /// The record id of segment `seq` of `collection`.
    pub fn key(collection: &str, seq: u64) -> String {
        format!("{collection}/{seq:010}")
    }
}

/// `segments` record (schema 5): one piece of the stored index a knowledge base opens lazily with
/// ([`crate::index::segment`]: `head`, `delta`, postings blocks `t/…`, IVF lists `v/…`). Derived
/// data except `delta`, which is written with the documents it describes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SegmentRecord {
    /// [`crate::index::segment::SegmentKey::store_id`].
    pub id: String,
    /// The segment's bytes (postcard, or a `WRV1` vector block for an IVF list).
    #[serde(with = "serde_bytes")]
    pub data: Vec<u8>,
}

/// `postings` record: the analysed terms of one chunk with their frequencies (the forward form of
/// the BM25 postings; the inverted lists are rebuilt in memory at open).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PostingRecord {
    /// Chunk id.
    pub id: ChunkId,
    /// Document length in analysed tokens.
    pub length: u32,
    /// `(term, term frequency)` pairs, sorted by term.
    pub terms: Vec<(String, u32)>,
}

/// Kind of a pseudo-graph node (docs/pseudo-graph.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// A document's title (mind-map root).
    Topic,
    /// A sub-topic on the way to facts (a heading).
    Route,
    /// A leaf: a sentence or list item.
    Fact,
    /// Cluster of topics with cosine > `super_topic_threshold`.
    SuperTopic,
    /// Cluster of facts with cosine > `super_fact_threshold`.
    SuperFact,
}

/// A graph node's id. Every id the engine makes is `{owner}#{kind}`, the part after the last `#`
/// naming the kind: `t` (the topic of document `owner`), `r{n}` / `f{n}` (its route / fact `n`),
/// `st` / `sf` (the super-topic / super-fact first formed around node `owner`; `st~{k}` / `sf~{k}`
/// when that id was taken). A document id is written whole before its suffix, and no suffix
/// ends another, so the ids of different nodes never meet whatever the document ids are (a
/// document named like a generated id included). Stores written before 2026-11-26 may hold
/// super-nodes named `st:{member}` / `sf:{member}`; ids are never parsed, so they keep working.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeId<'a> {
    /// A document's topic.
    Topic(&'a str),
    /// A document's route `n` (pre-order among its routes).
    Route(&'a str, u32),
    /// A document's fact `n` (pre-order among its facts).
    Fact(&'a str, u32),
    /// A super-node of `kind` ([`NodeKind::SuperTopic`] or [`NodeKind::SuperFact`]) formed around
    /// node id `member`, the `k`-th candidate id (0 first).
    Super(NodeKind, &'a str, u32),
}

impl std::fmt::Display for NodeId<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            NodeId::Topic(doc) => write!(f, "{doc}#t"),
            NodeId::Route(doc, n) => write!(f, "{doc}#r{n}"),
            NodeId::Fact(doc, n) => write!(f, "{doc}#f{n}"),
            NodeId::Super(kind, member, k) => {
                let tag = if kind == NodeKind::SuperFact { "sf" } else { "st" };
                match k {
                    0 => write!(f, "{member}#{tag}"),
                    k => write!(f, "{member}#{tag}~{}", k + 1),
                }
            }
        }
    }
}

/// `graph_nodes` record. Ids: [`NodeId`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphNodeRecord {
    /// Node id.
    pub id: String,
    /// Kind.
    pub kind: NodeKind,
    /// Title, route label or fact text (empty for super-nodes).
    pub label: String,
    /// Owning document (absent for super-nodes).
    #[serde(default)]
    pub doc_id: Option<DocId>,
    /// For a fact: the chunk it comes from (provenance).
    #[serde(default)]
    pub chunk_id: Option<ChunkId>,
}

/// Kind of a pseudo-graph edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// Mind-map edge: topic → route → fact (children in order of `ordinal`).
    Tree,
    /// Super-node → member.
    Similar,
    /// Entity link: a fact → the topic (another document's title) it mentions.
    Mention,
}

/// `graph_edges` record, keyed `"{kind}|{parent}|{child}"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphEdgeRecord {
    /// `"{kind}|{parent}|{child}"`.
    pub id: String,
    /// Parent (tree), super-node (similar) or mentioning fact (mention).
    pub parent: String,
    /// Child, member, or mentioned topic.
    pub child: String,
    /// Kind.
    pub kind: EdgeKind,
    /// Position among the parent's children (tree edges).
    #[serde(default)]
    pub ordinal: u32,
}

impl GraphEdgeRecord {
    /// An edge with its key.
    pub fn new(kind: EdgeKind, parent: &str, child: &str, ordinal: u32) -> Self {
        let key = EdgeKey { kind, parent: parent.into(), child: child.into() };
        GraphEdgeRecord { id: key.id(), parent: key.parent, child: key.child, kind, ordinal }
    }

    /// The edge's typed key.
    pub fn key(&self) -> EdgeKey {
        EdgeKey { kind: self.kind, parent: self.parent.clone(), child: self.child.clone() }
    }
}

/// The identity of a graph edge: its kind and its two ends. Code keeps this struct; the store's
/// record id ([`EdgeKey::id`]) is derived from it and never parsed back, so node ids (which
/// carry document ids) may contain any character.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EdgeKey {
    /// Kind.
    pub kind: EdgeKind,
    /// Parent (tree), super-node (similar) or mentioning fact (mention).
    pub parent: String,
    /// Child, member, or mentioned topic.
    pub child: String,
}

impl EdgeKey {
    /// The `graph_edges` record id: `"{kind}|{parent}|{child}"`.
    pub fn id(&self) -> String {
        let k = match self.kind {
            EdgeKind::Tree => "tree",
            EdgeKind::Similar => "similar",
            EdgeKind::Mention => "mention",
        };
        format!("{k}|{}|{}", self.parent, self.child)
    }
}

/// `meta` record: a named JSON value (schema version, model id, dimension, counters).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetaRecord {
    /// Key, e.g. `"schema"`.
    pub id: String,
    /// JSON-encoded value.
    pub value: String,
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
