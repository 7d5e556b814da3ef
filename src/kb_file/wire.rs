//! The knowledge-base file's `contents` as written and read: the store's records, their byte
//! strings as base64 strings (layout 2) instead of the arrays of numbers serde gives bytes in
//! JSON. Reading takes either, so layout 1 files still import. The stores keep their own
//! encoding (raw bytes in IndexedDB and on disk); only the file differs.
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::ports::{Collection, Contents, Record};
use crate::schema::{
    AnnSegmentRecord, ChunkRecord, DocumentRecord, GraphEdgeRecord, GraphNodeRecord, MemoryRecord, MetaRecord, PostingRecord,
    QuestionRecord, SegmentRecord, TraceRecord, VectorRecord,
};

/// A byte string written as base64.
struct B64<'a>(&'a [u8]);

impl Serialize for B64<'_> {
    /// Encoded as it is written (`collect_str` of a `Display`): a large segment's base64 is never
    /// a string of its own.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&base64::display::Base64Display::new(self.0, &STANDARD))
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
pub(super) struct VectorOut<'a> {
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
pub(super) struct AnnOut<'a> {
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
pub(super) struct MemoryOut<'a> {
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
pub(super) struct SegmentOut<'a> {
    id: &'a str,
    data: B64<'a>,
}

#[derive(Deserialize)]
struct SegmentIn {
    id: String,
    #[serde(deserialize_with = "bytes")]
    data: Vec<u8>,
}

/// A record as the file writes it: the store's shape, byte strings as base64.
#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum RecordOut<'a> {
    Meta(&'a MetaRecord),
    Document(&'a DocumentRecord),
    Chunk(&'a ChunkRecord),
    Vector(VectorOut<'a>),
    Posting(&'a PostingRecord),
    GraphNode(&'a GraphNodeRecord),
    GraphEdge(&'a GraphEdgeRecord),
    Ann(AnnOut<'a>),
    Question(&'a QuestionRecord),
    Memory(MemoryOut<'a>),
    Trace(&'a TraceRecord),
    Segment(SegmentOut<'a>),
}

impl<'a> RecordOut<'a> {
    pub(super) fn new(r: &'a Record) -> Self {
        match r {
            Record::Meta(m) => RecordOut::Meta(m),
            Record::Document(d) => RecordOut::Document(d),
            Record::Chunk(c) => RecordOut::Chunk(c),
            Record::Vector(v) => RecordOut::Vector(vector(v)),
            Record::Posting(p) => RecordOut::Posting(p),
            Record::GraphNode(n) => RecordOut::GraphNode(n),
            Record::GraphEdge(e) => RecordOut::GraphEdge(e),
            Record::Ann(a) => RecordOut::Ann(ann(a)),
            Record::Question(q) => RecordOut::Question(q),
            Record::Memory(m) => RecordOut::Memory(memory(m)),
            Record::Trace(t) => RecordOut::Trace(t),
            Record::Segment(s) => RecordOut::Segment(SegmentOut { id: &s.id, data: B64(&s.data) }),
        }
    }
}

fn vector(v: &VectorRecord) -> VectorOut<'_> {
    VectorOut { id: &v.id, collection: &v.collection, data: B64(&v.data) }
}

fn ann(a: &AnnSegmentRecord) -> AnnOut<'_> {
    AnnOut { id: &a.id, collection: &a.collection, seq: a.seq, ids: &a.ids, data: B64(&a.data), format: a.format }
}

fn memory(m: &MemoryRecord) -> MemoryOut<'_> {
    MemoryOut {
        id: &m.id,
        title: &m.title,
        content: &m.content,
        sources: &m.sources,
        created_at: m.created_at,
        embedding: B64(&m.embedding),
    }
}

/// Writes every record of `c` through `w`, collection by collection.
pub(super) fn write_contents<W: std::io::Write>(w: &mut super::Writer<W>, c: &Contents) -> crate::error::Result<()> {
    let mut put = |collection: Collection, items: &mut dyn Iterator<Item = RecordOut<'_>>| {
        for r in items {
            w.item(collection, &r)?;
        }
        Ok::<(), crate::error::Error>(())
    };
    put(Collection::Meta, &mut c.meta.iter().map(RecordOut::Meta))?;
    put(Collection::Documents, &mut c.documents.iter().map(RecordOut::Document))?;
    put(Collection::Chunks, &mut c.chunks.iter().map(RecordOut::Chunk))?;
    put(Collection::Vectors, &mut c.vectors.iter().map(|v| RecordOut::Vector(vector(v))))?;
    put(Collection::Postings, &mut c.postings.iter().map(RecordOut::Posting))?;
    put(Collection::GraphNodes, &mut c.graph_nodes.iter().map(RecordOut::GraphNode))?;
    put(Collection::GraphEdges, &mut c.graph_edges.iter().map(RecordOut::GraphEdge))?;
    put(Collection::Ann, &mut c.ann.iter().map(|a| RecordOut::Ann(ann(a))))?;
    put(Collection::Questions, &mut c.questions.iter().map(RecordOut::Question))?;
    put(Collection::Memory, &mut c.memory.iter().map(|m| RecordOut::Memory(memory(m))))?;
    put(Collection::Traces, &mut c.traces.iter().map(RecordOut::Trace))?;
    put(Collection::Segments, &mut c.segments.iter().map(|s| RecordOut::Segment(SegmentOut { id: &s.id, data: B64(&s.data) })))
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
