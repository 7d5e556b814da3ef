//! The persisted record shapes: what a knowledge base's store holds, the object stores of
//! docs/vector-index.md one to one (each record has a string `id`, the IndexedDB key path), the
//! payloads some of them carry as bytes (the stored index segments: [`SegmentHead`], [`Delta`],
//! [`PostingsBlock`], at [`SEGMENT_FORMAT`]), and the schema version they are at
//! ([`SCHEMA_VERSION`], with what each version added and what a [`migration`] from an older one
//! takes; `Engine::open` carries it out, and tests/store_fixtures.rs opens a frozen store of
//! every earlier schema), and [`check_meta`], which reads a store's version and model. The
//! API's types are [`crate::types`]'; the knowledge-base file's layout is `kb_file`'s
//! (docs/kb-file.md).
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::error::{ModelError, Result, StoreError};

/// Current schema version of the stored knowledge base (recorded in `meta` as `"schema"`).
/// What each version added (a store of each is frozen in tests/fixtures):
///
/// | schema | added | a store of the version before gets |
/// |---|---|---|
/// | 1 | `documents`, `chunks`, `vectors`, `postings`, `meta` | – |
/// | 2 | the pseudo-graph (`graphNodes`, `graphEdges`) | every document's structural mind map, embedded at open |
/// | 3 | sealed HNSW segments (`ann`) | none (written by the upkeep) |
/// | 4 | `questions`, `memory`, `traces`; a document's `mindMap` | none (written by `enrich` and `ask`; no `mindMap`: structural) |
/// | 5 | the stored index segments (`segments`) | none (written by the upkeep) |
pub const SCHEMA_VERSION: u32 = 5;

/// What bringing a knowledge base of an older schema to [`SCHEMA_VERSION`] takes, beyond the
/// meta record naming the current schema (one commit; `Engine::open` and `import_kb` carry it
/// out). The collections a later schema added start empty, which is what they are for a
/// knowledge base never sealed, atomized or asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    /// Every document gets its structural mind map (schema 1 had no pseudo-graph).
    pub structural_mind_maps: bool,
}

/// The [`Migration`] from schema `from`; `None` when `from` is current.
pub fn migration(from: u32) -> Option<Migration> {
    (from < SCHEMA_VERSION).then_some(Migration { structural_mind_maps: from < 2 })
}

/// Document id as given by the caller (1..=1024 characters, any of them: ids are never parsed).
pub type DocId = String;
/// Chunk id: `"{doc_id}#{ordinal}"`.
pub type ChunkId = String;

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
    /// Tags given with the document ([`crate::types::normalize_tag`]ged).
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
    /// The document's language, a lowercase primary subtag ([`crate::types::DocumentInput::lang`]),
    /// which its BM25 terms are stemmed in (absent: not stemmed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
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
/// ([`crate::index::segment`]: `head` ([`SegmentHead`]), `delta` ([`Delta`]), postings blocks
/// `t/…` ([`PostingsBlock`]), IVF lists `v/…` (a `WRL1` vector block)), its id a [`SegmentKey`].
/// Derived data except `delta`, which is written with the documents it describes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SegmentRecord {
    /// [`SegmentKey::store_id`].
    pub id: String,
    /// The segment's bytes (postcard, or a `WRV1` vector block for an IVF list).
    #[serde(with = "serde_bytes")]
    pub data: Vec<u8>,
}

/// Layout version of the segments (in [`SegmentHead::format`]).
pub const SEGMENT_FORMAT: u32 = 1;

/// The key of a segment record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegmentKey {
    /// The base's [`SegmentHead`].
    Head,
    /// The [`Delta`] since the base.
    Delta,
    /// BM25 postings block `b`.
    Terms(u32),
    /// IVF list `l`.
    List(u32),
    /// The base's atomic questions: [`QuestionHead`] (absent: the base has none).
    QuestionHead,
    /// IVF list `l` of the atomic questions' vectors.
    QuestionList(u32),
    /// The chunks whose atomic questions were written since the base ([`QuestionDelta`]; absent:
    /// none).
    QuestionDelta,
}

impl SegmentKey {
    /// The record id: `head`, `delta`, `t/00012`, `v/00003`, `q/head`, `q/00001`, `q/delta`.
    pub fn store_id(self) -> String {
        match self {
            SegmentKey::Head => "head".into(),
            SegmentKey::Delta => "delta".into(),
            SegmentKey::Terms(b) => format!("t/{b:05}"),
            SegmentKey::List(l) => format!("v/{l:05}"),
            SegmentKey::QuestionHead => "q/head".into(),
            SegmentKey::QuestionList(l) => format!("q/{l:05}"),
            SegmentKey::QuestionDelta => "q/delta".into(),
        }
    }
    /// Every record of a base with `blocks` postings blocks and `lists` IVF lists.
    pub fn all(blocks: u32, lists: u32) -> Vec<SegmentKey> {
        let mut v = vec![SegmentKey::Head, SegmentKey::Delta];
        v.extend((0..blocks).map(SegmentKey::Terms));
        v.extend((0..lists).map(SegmentKey::List));
        v
    }
}

/// The base's header (record `head`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentHead {
    /// [`SEGMENT_FORMAT`].
    pub format: u32,
    /// Chunk ids by ordinal.
    pub chunks: Vec<String>,
    /// BM25 length (analysed tokens) of each chunk, by ordinal.
    pub lengths: Vec<u32>,
    /// Document ids, sorted.
    pub documents: Vec<String>,
    /// Each chunk's document, as an index into `documents`, by ordinal.
    pub doc_of: Vec<u32>,
    /// Postings blocks (`t/…` records).
    pub blocks: u32,
    /// Distinct terms.
    pub terms: u64,
    /// `Σ ln((N − df + 0.5)/(df + 0.5))` over the vocabulary at build time (the Okapi idf floor's
    /// mean, [`crate::index::bm25::Bm25Idf::Okapi`]).
    pub okapi_idf_sum: f64,
    /// Embedding dimension.
    pub dim: u32,
    /// IVF centroids, unit length, `lists × dim` row-major.
    pub centroids: Vec<f32>,
}

/// The atomic questions of a base (record `q/head`): each question by its ordinal, the IVF
/// centroids of their vectors (the `q/…` lists hold the vectors by question ordinal, as `v/…`
/// hold the chunks').
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuestionHead {
    /// `(chunk ordinal in the base, the question's index among its chunk's)` by question ordinal.
    pub entries: Vec<(u32, u32)>,
    /// Embedding dimension.
    pub dim: u32,
    /// IVF centroids, unit length, `lists × dim` row-major.
    pub centroids: Vec<f32>,
}

/// The chunks whose atomic questions were written since the base (record `q/delta`): a lazy open
/// reads their `questions` records and vectors, and their base questions no longer count.
pub type QuestionDelta = Vec<String>;

/// What changed since the base (record `delta`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// Documents stored now.
    pub documents: u64,
    /// Chunks added since the base (their own records hold them), in the order added.
    pub added: Vec<String>,
    /// Ordinals of base chunks removed since (tombstones), sorted.
    pub removed: Vec<u32>,
}

/// One BM25 postings block: `(term, [(ordinal, tf)])`, terms sorted.
pub type PostingsBlock = Vec<(String, Vec<(u32, u32)>)>;

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

/// Checks the `meta` records against this build and the loaded model (`loaded`, `loaded_dim`): the stored schema
/// version (`None` for a knowledge base never written).
///
/// Errors: [`StoreError::VersionTooNew`], [`ModelError::Mismatch`], [`StoreError::Corrupt`].
pub fn check_meta(meta: &[MetaRecord], loaded: &str, loaded_dim: usize) -> Result<Option<u32>> {
    let metas: HashMap<&str, &str> = meta.iter().map(|m| (m.id.as_str(), m.value.as_str())).collect();
    let corrupt = |key: &str, reason: String| StoreError::Corrupt { collection: "meta".into(), key: key.into(), reason };
    let Some(v) = metas.get("schema") else { return Ok(None) };
    let found: u32 = serde_json::from_str(v).map_err(|e| corrupt("schema", e.to_string()))?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::VersionTooNew { name: String::new(), found, supported: SCHEMA_VERSION }.into());
    }
    let model: String =
        metas.get("model").map(|v| serde_json::from_str(v).map_err(|e| corrupt("model", e.to_string()))).transpose()?.unwrap_or_default();
    let dim: usize = metas.get("dim").map(|v| serde_json::from_str(v).map_err(|e| corrupt("dim", e.to_string()))).transpose()?.unwrap_or(0);
    if model != loaded || dim != loaded_dim {
        return Err(ModelError::Mismatch { stored: model, stored_dim: dim, loaded: loaded.into(), loaded_dim }.into());
    }
    Ok(Some(found))
}
