//! The knowledge-base file's `contents` as written and read: the store's records, their byte
//! strings as base64 strings (layout 2) instead of the arrays of numbers serde gives bytes in
//! JSON. Reading takes either, so layout 1 files still import. The stores keep their own
//! encoding (raw bytes in IndexedDB and on disk); only the file differs.
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::ports::Contents;
use crate::schema::{
    AnnSegmentRecord, ChunkRecord, DocumentRecord, GraphEdgeRecord, GraphNodeRecord, MemoryRecord, MetaRecord, PostingRecord,
    QuestionRecord, SegmentRecord, TraceRecord, VectorRecord,
};

/// A byte string written as base64.
struct B64<'a>(&'a [u8]);

impl Serialize for B64<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(self.0))
    }
}

/// Reads a byte string: a base64 string (layout 2) or an array of numbers 0–255 (layout 1).
fn bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<u8>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a base64 string or an array of bytes")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Vec<u8>, E> {
            STANDARD.decode(v).map_err(|e| E::custom(format!("base64: {e}")))
        }
        fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
            Ok(v.to_vec())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
            while let Some(b) = seq.next_element::<u8>()? {
                out.push(b);
            }
            Ok(out)
        }
    }
    d.deserialize_any(V)
}

fn first_ann_format() -> u32 {
    1
}

#[derive(Serialize)]
struct VectorOut<'a> {
    id: &'a str,
    collection: &'a str,
    data: B64<'a>,
}

#[derive(Deserialize)]
struct VectorIn {
    id: String,
    collection: String,
    #[serde(deserialize_with = "bytes")]
    data: Vec<u8>,
}

#[derive(Serialize)]
struct AnnOut<'a> {
    id: &'a str,
    collection: &'a str,
    seq: u64,
    ids: &'a [String],
    data: B64<'a>,
    format: u32,
}

#[derive(Deserialize)]
struct AnnIn {
    id: String,
    collection: String,
    seq: u64,
    ids: Vec<String>,
    #[serde(deserialize_with = "bytes")]
    data: Vec<u8>,
    #[serde(default = "first_ann_format")]
    format: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MemoryOut<'a> {
    id: &'a str,
    title: &'a str,
    content: &'a str,
    sources: &'a [String],
    created_at: f64,
    embedding: B64<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MemoryIn {
    id: String,
    title: String,
    content: String,
    #[serde(default)]
    sources: Vec<String>,
    created_at: f64,
    #[serde(deserialize_with = "bytes")]
    embedding: Vec<u8>,
}

#[derive(Serialize)]
struct SegmentOut<'a> {
    id: &'a str,
    data: B64<'a>,
}

#[derive(Deserialize)]
struct SegmentIn {
    id: String,
    #[serde(deserialize_with = "bytes")]
    data: Vec<u8>,
}

/// [`Contents`] as the file writes it (the same field names).
#[derive(Serialize)]
pub(super) struct ContentsOut<'a> {
    meta: &'a [MetaRecord],
    documents: &'a [DocumentRecord],
    chunks: &'a [ChunkRecord],
    vectors: Vec<VectorOut<'a>>,
    postings: &'a [PostingRecord],
    graph_nodes: &'a [GraphNodeRecord],
    graph_edges: &'a [GraphEdgeRecord],
    ann: Vec<AnnOut<'a>>,
    questions: &'a [QuestionRecord],
    memory: Vec<MemoryOut<'a>>,
    traces: &'a [TraceRecord],
    segments: Vec<SegmentOut<'a>>,
}

impl<'a> ContentsOut<'a> {
    pub(super) fn new(c: &'a Contents) -> Self {
        ContentsOut {
            meta: &c.meta,
            documents: &c.documents,
            chunks: &c.chunks,
            vectors: c.vectors.iter().map(|v| VectorOut { id: &v.id, collection: &v.collection, data: B64(&v.data) }).collect(),
            postings: &c.postings,
            graph_nodes: &c.graph_nodes,
            graph_edges: &c.graph_edges,
            ann: c
                .ann
                .iter()
                .map(|a| AnnOut { id: &a.id, collection: &a.collection, seq: a.seq, ids: &a.ids, data: B64(&a.data), format: a.format })
                .collect(),
            questions: &c.questions,
            memory: c
                .memory
                .iter()
                .map(|m| MemoryOut {
                    id: &m.id,
                    title: &m.title,
                    content: &m.content,
                    sources: &m.sources,
                    created_at: m.created_at,
                    embedding: B64(&m.embedding),
                })
                .collect(),
            traces: &c.traces,
            segments: c.segments.iter().map(|s| SegmentOut { id: &s.id, data: B64(&s.data) }).collect(),
        }
    }
}

/// [`Contents`] as the file is read (byte strings in either layout).
#[derive(Deserialize)]
pub(super) struct ContentsIn {
    meta: Vec<MetaRecord>,
    documents: Vec<DocumentRecord>,
    chunks: Vec<ChunkRecord>,
    vectors: Vec<VectorIn>,
    postings: Vec<PostingRecord>,
    #[serde(default)]
    graph_nodes: Vec<GraphNodeRecord>,
    #[serde(default)]
    graph_edges: Vec<GraphEdgeRecord>,
    #[serde(default)]
    ann: Vec<AnnIn>,
    #[serde(default)]
    questions: Vec<QuestionRecord>,
    #[serde(default)]
    memory: Vec<MemoryIn>,
    #[serde(default)]
    traces: Vec<TraceRecord>,
    #[serde(default)]
    segments: Vec<SegmentIn>,
}

impl From<ContentsIn> for Contents {
    fn from(c: ContentsIn) -> Contents {
        Contents {
            meta: c.meta,
            documents: c.documents,
            chunks: c.chunks,
            vectors: c.vectors.into_iter().map(|v| VectorRecord { id: v.id, collection: v.collection, data: v.data }).collect(),
            postings: c.postings,
            graph_nodes: c.graph_nodes,
            graph_edges: c.graph_edges,
            ann: c
                .ann
                .into_iter()
                .map(|a| AnnSegmentRecord { id: a.id, collection: a.collection, seq: a.seq, ids: a.ids, data: a.data, format: a.format })
                .collect(),
            questions: c.questions,
            memory: c
                .memory
                .into_iter()
                .map(|m| MemoryRecord {
                    id: m.id,
                    title: m.title,
                    content: m.content,
                    sources: m.sources,
                    created_at: m.created_at,
                    embedding: m.embedding,
                })
                .collect(),
            traces: c.traces,
            segments: c.segments.into_iter().map(|s| SegmentRecord { id: s.id, data: s.data }).collect(),
        }
    }
}
