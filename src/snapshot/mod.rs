//! Static-site snapshots (docs/static-site.md, docs/snapshot-format.md): the pages of a built site,
//! indexed by the engine, as a **snapshot** the browser loads piece by piece (`pkg/static.js`):
//!
//! - `manifest.json` — the only fixed name: model, counts, BM25 parameters, and the file names
//!   of every shard;
//! - `t/{i}-{hash}.json.gz` — BM25 postings partitioned by term (shard = FNV-1a 32 of the term's
//!   UTF-8 bytes mod the shard count), each posting `(chunk, w)` with `w` the term's BM25
//!   tf-part `tf·(k1+1)/(tf + k1·(1 − b + b·|d|/avgdl))` quantized to 0..=255 over 0..k1+1, so a
//!   query reads only its terms' shards and needs no document lengths;
//! - `f/{i}-{hash}.json.gz` — fragments: `[title, url, heading path, text, page]` of
//!   `fragments.size` consecutive chunks (the text up to `excerpt_chars`), fetched only for the
//!   hits shown, which cut a query-aware excerpt from it;
//! - `p/pages-{hash}.bin.gz` — `WRP1`: each page's chunk count, so hits group by page before
//!   any fragment is fetched;
//! - `w/{i}-{hash}.json.gz` and `w/index-{hash}.json.gz` — the vocabulary, sorted, with document
//!   frequencies, in blocks, and each block's first term: the completions of the word being typed;
//! - `v/c-{hash}.bin.gz` and `v/{i}-{hash}.bin.gz` — the chunk embeddings quantized to int8
//!   (a scale per vector) and partitioned by k-means (an inverted file, IVF): the centroids, then
//!   one list per centroid; a query reads the centroids and its `nprobe` nearest lists. When an
//!   LLM atomized the site (`--llm-url`), the atomic questions' embeddings join the lists under
//!   their chunk's number (PIKE-RAG's atomic path, a chunk found by its best row);
//! - `g/{i}-{hash}.bin.gz` — the pseudo-graph: page `i`'s mind map (topic → routes → facts, the
//!   LLM's when one was given, else the structural one) with int8 node vectors and its
//!   neighbours, for PGR in the page (`graph_file`).
//!
//! The manifest does not list the shards: `t/d{g}-{hash}.bin` (and `f/…`, `v/…`, `g/…`) directory pages
//! hold the 4-byte name hashes of 256 shards each, so the manifest stays small (it names the
//! pages) and a query reads one page per 256 shards it touches.
//!
//! File names carry the first 8 hex digits of the SHA-256 of their bytes, so an unchanged shard
//! keeps its name (cache-friendly, `Cache-Control: immutable`), and building an unchanged site
//! twice gives byte-identical files: everything is ordered (documents by URL, terms sorted),
//! gzip headers carry no time, and k-means starts from fixed points.
use std::collections::BTreeMap;

use crate::embed::Embedder;
use crate::embed::vecmath::{kmeans, quantize_i8};
use crate::engine::Engine;
use crate::error::{InputError, Result, StoreError};
pub use crate::index::segment::fnv1a;
use crate::index::segment::{vec_block, vec_block_i4};
use crate::ports::Store;

mod fields;
mod files;
pub mod loader;
mod manifest;
mod pages;
mod static_tier;
pub use fields::{MAX_SNAPSHOT_KEYS, SiteFields};
pub use files::{DIR_GROUP, SHARD_DIRS, Snapshot};
use files::{directory, gzip, hashed};
pub use manifest::*;
pub use pages::*;
use static_tier::static_tier;
pub use static_tier::{STATIC_FUSION_WEIGHTS, STATIC_GRAPH_TOPICS, vocab_key};

/// Snapshot options.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotParams {
    /// Target uncompressed size of a term shard, bytes (sets the shard count). Default 24 KiB.
    pub term_shard_bytes: usize,
    /// Chunks per fragment file. Default 16.
    pub fragment_size: usize,
    /// Characters of chunk text kept in its fragment, from which the page cuts a query-aware
    /// excerpt. Default 1,000 (a whole chunk of the default 256-token chunker, as a rule).
    pub excerpt_chars: usize,
    /// Terms per block of the sorted vocabulary (the prefix completions of the word being
    /// typed). Default 512.
    pub word_block: usize,
    /// Vectors per IVF list on average (sets the list count). Default 128.
    pub list_size: usize,
    /// Target uncompressed size of a vocabulary shard of the static tier, bytes (sets the shard
    /// count). Default 4 KiB.
    pub vocab_shard_bytes: usize,
    /// Token rows per file of the static tier. Default 16.
    pub token_rows: usize,
    /// Lists a query reads by default (written to the manifest). Default 3.
    pub nprobe: usize,
    /// k-means iterations. Default 8.
    pub kmeans_iterations: usize,
    /// Write the vector shards (semantic search). Default true.
    pub vectors: bool,
    /// Fusion weights of the build's engine, written to the manifest (`fusion.weights`); `None`:
    /// the engine's defaults. A static-tier build uses [`STATIC_FUSION_WEIGHTS`].
    pub fusion_weights: Option<crate::retrieve::FusionWeights>,
    /// The topics (pages) a page's graph search reads, seeds included (the manifest's
    /// `graph.maxTopics`); `None`: the engine's `graph.maxTopics`. A static-tier build uses
    /// [`STATIC_GRAPH_TOPICS`].
    pub graph_topics: Option<usize>,
    /// Write the graph shards (the pseudo-graph's mind maps, one file per page; needs `vectors`
    /// and an engine that built the graph). Default true.
    pub graph: bool,
    /// Also write the whole knowledge base as a knowledge-base file (`kb-{hash}.webrag-kb.gz`,
    /// [`crate::kb_file`]; named by the manifest's `kb`), so a visitor can import the site into
    /// a full knowledge base (`importKb`) and ask questions over it offline. Default false.
    pub kb: bool,
    /// Where the site's root is, seen from the snapshot's folder (the manifest's `siteRoot`): a
    /// relative reference (`../` when the snapshot is `<site>/webrag/`), a path (`/docs/`) or an
    /// absolute http(s) URL, ending in `/`; the search box resolves page URLs against it, so a
    /// site served under a sub-path links to its own pages. `None`: the origin's root.
    /// [`site_root`] makes it from the two folders.
    pub site_root: Option<String>,
}

/// The manifest's `siteRoot` for a snapshot written to `out` from the site at `site` (both
/// already resolved: absolute, no `..`): `../` once per folder of `out` below `site`; `None`
/// when `out` is not inside `site` (a page's URL is then read from the origin's root).
pub fn site_root(site: &std::path::Path, out: &std::path::Path) -> Option<String> {
    let depth = out.strip_prefix(site).ok()?.components().count();
    Some(if depth == 0 { "./".into() } else { "../".repeat(depth) })
}

/// Checks a `siteRoot` given by the user (`--site-url`): an http(s) URL, a path starting with
/// `/`, or a relative reference, with no whitespace, quote or angle bracket; a `/` is added at
/// the end when missing. Errors: [`crate::error::InputError::InvalidOption`] naming `option`.
pub fn check_site_url(option: &str, url: &str) -> crate::error::Result<String> {
    let bad = |reason: &str| crate::error::InputError::InvalidOption { name: option.into(), reason: format!("{url:?}: {reason}") };
    let lower = url.to_ascii_lowercase();
    if url.is_empty() || url.len() > 2_048 {
        return Err(bad("expected a URL of 1 to 2048 bytes").into());
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control() || "\"'<>\\".contains(c)) {
        return Err(bad("a URL has no whitespace, control character, quote, angle bracket or backslash").into());
    }
    if let Some((scheme, _)) = lower.split_once(':')
        && !scheme.contains('/')
        && scheme != "http"
        && scheme != "https"
    {
        return Err(bad("expected an http(s) URL, a path such as /docs/, or a relative one such as ../").into());
    }
    Ok(if url.ends_with('/') { url.to_string() } else { format!("{url}/") })
}

impl Default for SnapshotParams {
    fn default() -> Self {
        SnapshotParams {
            term_shard_bytes: 24 * 1024,
            fragment_size: 16,
            excerpt_chars: 1_000,
            word_block: 512,
            list_size: 128,
            vocab_shard_bytes: 4 * 1024,
            token_rows: 16,
            nprobe: 3,
            kmeans_iterations: 8,
            vectors: true,
            fusion_weights: None,
            graph_topics: None,
            graph: true,
            kb: false,
            site_root: None,
        }
    }
}

impl SnapshotParams {
    /// The engine settings of a snapshot build (native and `npx webrag index`): the graph as
    /// asked, and no stored index segments. The build's in-memory store is never opened lazily,
    /// and the segments' base would otherwise be rebuilt over every chunk again and again as
    /// the batches grow the site.
    pub fn engine_config(&self) -> crate::config::Config {
        let mut config = crate::config::Config { lazy_open_chunks: 0, ..Default::default() };
        config.graph.enabled = self.graph;
        // A snapshot's graph files hold topics' links, never fact super-nodes: a build without
        // the knowledge-base file (whose importer may turn `superFactLinks` on) fuses no facts,
        // which were most of its fusion searches and HNSW seals.
        if !self.kb {
            config.graph.super_fact_threshold = 1.0;
        }
        if let Some(w) = self.fusion_weights {
            config.fusion_weights = w;
        }
        if let Some(t) = self.graph_topics {
            config.graph.max_topics = t.max(1);
        }
        config
    }

    /// These parameters for a static-tier build (`--vectors static`): [`STATIC_FUSION_WEIGHTS`],
    /// [`STATIC_GRAPH_TOPICS`], and smaller shards — term shards of 8 KiB, vocabulary shards of
    /// 2 KiB, 8 token rows a file — because its first hybrid query reads the terms', the query's
    /// vocabulary and token rows' and the seed pages' graph files at once (docs/benchmarks.md,
    /// "The static model": the stages' bytes on a documentation site of long pages).
    ///
    /// The token rows are the one part of a snapshot whose file count does not depend on the
    /// site: 30,522 rows are 7,631 files at 4 rows a file, most of a documentation site's files,
    /// and creating each file is most of what writing them costs. 8 rows a file halve them for
    /// 8.7 KB more of a natural question's first hybrid search (207,332 B median instead of
    /// 198,647, results unchanged: docs/benchmarks.md, "Static-site search against Pagefind").
    pub fn static_tier(self) -> Self {
        SnapshotParams {
            fusion_weights: Some(STATIC_FUSION_WEIGHTS),
            graph_topics: Some(STATIC_GRAPH_TOPICS),
            term_shard_bytes: 8 * 1024,
            vocab_shard_bytes: 2 * 1024,
            token_rows: 8,
            ..self
        }
    }
}

/// What a snapshot holds (printed by the CLI).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotSummary {
    /// Pages.
    pub documents: usize,
    /// Chunks.
    pub chunks: usize,
    /// Term shards.
    pub term_shards: usize,
    /// Fragment files.
    pub fragments: usize,
    /// IVF lists.
    pub lists: usize,
    /// Graph files (pages with a topic file; 0 without the graph).
    pub topics: usize,
    /// Bytes on disk, all files.
    pub bytes: usize,
}

/// How a snapshot stores its chunk vectors (the IVF lists): int8 (`WRV1` blocks) with the
/// transformer tier, int4 (`WRV4`, half the bytes) with the static tier, whose dense R@5 int4
/// leaves within 1 point of int8 (docs/benchmarks.md, "The static model"). The manifest's
/// `vectors.quant` names it. A graph file's node vectors are int8 with the transformer tier and
/// sign bits with the static tier (`WRB1`, a 32nd of f32's bytes: a documentation site's graph
/// files were most of a first hybrid query's bytes; docs/benchmarks.md, "The static model").
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum VectorCode {
    /// One signed byte a component.
    Int8,
    /// Four bits a component, two to a byte.
    Int4,
    /// One bit a component, its sign (binary quantization): a static-tier snapshot's graph files
    /// only, never a manifest's `vectors.quant`.
    #[serde(skip)]
    Sign,
}

impl VectorCode {
    /// The manifest's name for it (`vectors.quant`).
    pub fn name(self) -> &'static str {
        match self {
            VectorCode::Int8 => "int8",
            VectorCode::Int4 => "int4",
            VectorCode::Sign => "sign",
        }
    }

    /// A vector block of `vecs` under `ids`: `WRV1`, `WRV4` or `WRB1`.
    fn block<V: AsRef<[f32]>>(self, ids: &[u32], vecs: impl Iterator<Item = V>, dim: usize) -> Vec<u8> {
        match self {
            VectorCode::Int8 => vec_block(b"WRV1", ids, &vecs.map(|v| quantize_i8(v.as_ref())).collect::<Vec<_>>(), dim),
            VectorCode::Int4 => {
                vec_block_i4(b"WRV4", ids, &vecs.map(|v| crate::embed::vecmath::quantize_i4(v.as_ref())).collect::<Vec<_>>(), dim)
            }
            VectorCode::Sign => crate::index::segment::vec_block_sign(b"WRB1", ids, &vecs.collect::<Vec<_>>(), dim),
        }
    }
}

/// A page's graph file, `WRG1`: magic, u32 length of a JSON header, the header
/// `{"chunk0", "nodes": [[parent, kind, label, chunk]…], "links": [[doc, kind, via…]…]}`
/// (`parent` −1 for the topic; `kind` 0 topic, 1 route, 2 fact; `chunk` the fact's chunk number,
/// −1 otherwise; `links` name neighbour pages by number, `via` the nodes here leading there),
/// then the nodes' vectors as a `code` block (ids = node indexes). A page without a mind map has
/// no nodes.
fn graph_file(
    t: Option<&crate::graph::TopicExport<'_>>,
    docs: &[crate::schema::DocumentRecord],
    chunk_no: &std::collections::HashMap<&str, usize>,
    chunk0: usize,
    (dim, code): (usize, VectorCode),
) -> Vec<u8> {
    let doc_no = |id: &str| docs.binary_search_by(|d| d.id.as_str().cmp(id)).ok();
    let (nodes, links, rows) = match t {
        None => (Vec::new(), Vec::new(), Vec::new()),
        Some(t) => {
            let nodes: Vec<serde_json::Value> = t
                .nodes
                .iter()
                .map(|n| {
                    let kind = match n.kind {
                        crate::schema::NodeKind::Topic => 0,
                        crate::schema::NodeKind::Route => 1,
                        _ => 2,
                    };
                    let chunk = n.chunk.and_then(|c| chunk_no.get(c)).map_or(-1, |c| *c as i64);
                    serde_json::json!([n.parent.map_or(-1, i64::from), kind, n.label, chunk])
                })
                .collect();
            let links: Vec<serde_json::Value> = t
                .links
                .iter()
                .filter_map(|(d, kind, via)| {
                    let mut row = vec![serde_json::Value::from(doc_no(d)?), serde_json::Value::from(*kind)];
                    row.extend(via.iter().map(|v| serde_json::Value::from(*v)));
                    Some(serde_json::Value::Array(row))
                })
                .collect();
            (nodes, links, t.nodes.iter().map(|n| n.vector).collect::<Vec<_>>())
        }
    };
    let header = serde_json::json!({ "chunk0": chunk0, "nodes": nodes, "links": links }).to_string();
    let mut b = Vec::with_capacity(8 + header.len() + rows.len() * (8 + dim));
    b.extend_from_slice(b"WRG1");
    b.extend_from_slice(&(header.len() as u32).to_le_bytes());
    b.extend_from_slice(header.as_bytes());
    b.extend(code.block(&(0..rows.len() as u32).collect::<Vec<_>>(), rows.into_iter(), dim));
    b
}

/// `v` as an unsigned LEB128 varint (7 bits a byte, low first; the high bit says more follow).
fn leb128(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An `f32` as the shortest decimal that reads back as the same `f32` (0.01, not 0.0099999998).
fn short(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(x as f64)
}

/// The upkeep after each batch a site build adds: seals the pseudo-graph's topics' (and, where
/// facts are fused, facts') grown fresh buffers into HNSW segments (as the page does when idle),
/// since fusion looks every new node up among them; without it each batch's fusion scans all earlier ones exactly
/// (quadratic in the site). The chunks are never searched during a build: their buffer waits for
/// [`build_site`] (sealing it per batch rebuilt every chunk at each tier merge, most of a GPU
/// build's CPU time). A keyword-only snapshot has no vectors: nothing to seal.
pub async fn seal_after_batch<S: Store, E: Embedder>(eng: &mut Engine<S, E>, p: &SnapshotParams) -> Result<()> {
    if p.vectors {
        let fuses_facts = eng.config().graph.super_fact_threshold < 1.0;
        let due: &[crate::schema::VectorCollection] = if fuses_facts {
            &[crate::schema::VectorCollection::Topics, crate::schema::VectorCollection::Facts]
        } else {
            &[crate::schema::VectorCollection::Topics]
        };
        eng.seal_due(due).await?;
    }
    Ok(())
}

/// Makes `eng` ready for a site build that nothing reads back (`reads_back` false: no
/// knowledge-base file, build cache or LLM stage reads its records or searches it): its graph
/// leaves the facts out of their ANN index, which only the engine's own graph search and fact
/// fusion use (a snapshot is searched in the page, from its files). On the documentation site of
/// `bench-static` the native static build's peak went from 366 to 309 MB, the snapshot the same
/// bytes.
pub fn prepare_site_engine<S: Store, E: Embedder>(eng: &mut Engine<S, E>, reads_back: bool) {
    if !reads_back {
        eng.leave_out_fact_index();
    }
}

/// Builds the snapshot of everything `eng` holds, with the knowledge-base file when `p.kb` (its
/// chunks sealed into HNSW segments first, once: the snapshot's own vectors are IVF lists).
pub async fn build_site<S: Store, E: Embedder>(
    eng: &mut Engine<S, E>,
    p: &SnapshotParams,
    fields: &SiteFields,
) -> Result<(Snapshot, SnapshotSummary)> {
    let kb = if p.kb {
        if p.vectors {
            eng.maintain_all(false).await?;
        }
        Some(eng.export_kb().await?)
    } else {
        None
    };
    build_snapshot(eng, p, kb, fields)
}

/// Builds the snapshot of everything `eng` holds; `kb` (a knowledge-base file of it) is written
/// as `kb-{hash}.webrag-kb.gz` and named by the manifest (`"kb": {"file", "bytes"}`). The steps:
/// the chunks' numbering (`Layout`), the postings and vocabulary (`write_terms`), the pages
/// file, the fragments, the vectors (`write_vectors`), the graph files, the static tier, and
/// the manifest naming them all (`manifest`).
///
/// Errors: [`StoreError::Corrupt`] for a chunk without its vector.
pub fn build_snapshot<S: Store, E: Embedder>(
    eng: &Engine<S, E>,
    p: &SnapshotParams,
    kb: Option<Vec<u8>>,
    fields: &SiteFields,
) -> Result<(Snapshot, SnapshotSummary)> {
    let layout = Layout::of(eng);
    let mut snap = Snapshot::default();
    let terms = write_terms(&mut snap, eng, &layout, p);
    let pages = write_pages(&mut snap, &layout);
    let fragments = write_fragments(&mut snap, &layout, p, fields);
    let (filters, sort) = fields::write_fields(&mut snap, &layout, fields);
    let languages = fields::write_languages(&mut snap, &layout);
    let vectors = write_vectors(&mut snap, eng, &layout, p)?;
    let graph_on = p.graph && p.vectors && eng.config().graph.enabled;
    let graph = if graph_on { write_graph(&mut snap, eng, &layout) } else { Vec::new() };
    let static_tier = match (p.vectors, eng.embedder().static_model()) {
        (true, Some(m)) => Some(static_tier(&mut snap, m, p)),
        _ => None,
    };
    let written = Written { terms, pages, fragments, vectors, graph, graph_on };
    let mut manifest = manifest(&mut snap, eng, &layout, p, &written);
    manifest.static_tier = static_tier;
    manifest.filters = filters;
    manifest.sort = sort;
    manifest.languages = languages;
    if let Some(kb) = kb {
        let name = hashed(".", "kb", "webrag-kb.gz", &kb).trim_start_matches("./").to_string();
        manifest.kb = Some(ManifestKb { file: name.clone(), bytes: kb.len() });
        snap.files.insert(name, kb);
    }
    // Through a `Value`: its keys come out sorted, as in every snapshot so far.
    let bad = |e: serde_json::Error| InputError::InvalidOption { name: "manifest".into(), reason: e.to_string() };
    let mbytes = serde_json::to_vec_pretty(&serde_json::to_value(&manifest).map_err(bad)?).map_err(bad)?;
    snap.files.insert("manifest.json".into(), mbytes);
    let summary = SnapshotSummary {
        documents: layout.docs.len(),
        chunks: layout.chunks.len(),
        term_shards: written.terms.shards,
        fragments: written.fragments.len(),
        lists: written.vectors.lists.len(),
        topics: written.graph.len(),
        bytes: snap.files.values().map(Vec::len).sum(),
    };
    Ok((snap, summary))
}

/// The snapshot's numbering: documents by id, and their chunks in document order (a chunk's
/// index in `chunks` is its number everywhere in the snapshot).
struct Layout<'a> {
    docs: Vec<crate::schema::DocumentRecord>,
    /// `(document index, chunk)`.
    chunks: Vec<(usize, &'a crate::schema::ChunkRecord)>,
    /// Each document's first chunk number.
    first_chunk: Vec<usize>,
}

impl<'a> Layout<'a> {
    fn of<S: Store, E: Embedder>(eng: &'a Engine<S, E>) -> Self {
        let mut docs = eng.corpus().documents();
        crate::sort::by(&mut docs, |a, b| a.id.cmp(&b.id));
        let mut chunks = Vec::new();
        let mut first_chunk = Vec::with_capacity(docs.len());
        for (i, d) in docs.iter().enumerate() {
            first_chunk.push(chunks.len());
            for cid in eng.corpus().chunk_ids(&d.id) {
                if let Some(c) = eng.corpus().chunk(cid) {
                    chunks.push((i, c));
                }
            }
        }
        Layout { docs, chunks, first_chunk }
    }
}

/// What the steps wrote, for the manifest.
struct Written {
    terms: Terms,
    pages: String,
    fragments: Vec<String>,
    vectors: VectorFiles,
    graph: Vec<String>,
    graph_on: bool,
}

/// The postings shards and the vocabulary (`write_terms`).
struct Terms {
    files: Vec<String>,
    shards: usize,
    avgdl: f32,
    words: Vec<String>,
    word_index: String,
}

/// The IVF lists (`write_vectors`).
struct VectorFiles {
    code: VectorCode,
    lists: Vec<String>,
    centroids: String,
    question_rows: usize,
}

/// The postings, partitioned by term (`{"t": {term: [df, Δchunk, w, Δchunk, w, …]}}`), and the
/// vocabulary in code point order (= UTF-8 byte order, as the BTreeMap holds it) with each term's
/// document frequency, in blocks, with an index naming each block's first term (a page completes
/// the word being typed from the block its prefix falls in).
fn write_terms<S: Store, E: Embedder>(snap: &mut Snapshot, eng: &Engine<S, E>, layout: &Layout<'_>, p: &SnapshotParams) -> Terms {
    let (k1, b) = (eng.config().bm25_k1, eng.config().bm25_b);
    let chunks = &layout.chunks;
    let total_len: u64 = chunks.iter().map(|(_, c)| eng.corpus().posting(&c.id).map_or(0, |p| p.length as u64)).sum();
    let avgdl = if chunks.is_empty() { 1.0 } else { (total_len as f64 / chunks.len() as f64).max(1.0) as f32 };
    // term → [(chunk, w)], gathered in a hash map, then in term order (code points).
    let mut postings: std::collections::HashMap<&str, Vec<(u32, u8)>> = std::collections::HashMap::new();
    for (i, (_, c)) in chunks.iter().enumerate() {
        let Some(pr) = eng.corpus().posting(&c.id) else { continue };
        let norm = k1 * (1.0 - b + b * pr.length as f32 / avgdl);
        for (t, tf) in &pr.terms {
            let tf = *tf as f32;
            let w = tf * (k1 + 1.0) / (tf + norm) / (k1 + 1.0);
            postings.entry(t.as_str()).or_default().push((i as u32, (w * 255.0).round().clamp(1.0, 255.0) as u8));
        }
    }
    let mut postings: Vec<(&str, Vec<(u32, u8)>)> = postings.into_iter().collect();
    crate::sort::by(&mut postings, |a, b| a.0.cmp(b.0));
    let est: usize = postings.iter().map(|(t, l)| t.len() + 8 + l.len() * 7).sum();
    let shards = (est / p.term_shard_bytes.max(1)).max(1).next_power_of_two();
    let mut shard_terms: Vec<BTreeMap<&str, &Vec<(u32, u8)>>> = vec![BTreeMap::new(); shards];
    for (t, l) in &postings {
        shard_terms[(fnv1a(t) as usize) % shards].insert(t, l);
    }
    let files = snap.add_all("t", "json.gz", &shard_terms, |_, terms| {
        let mut obj = serde_json::Map::new();
        for (t, l) in terms {
            let mut arr = Vec::with_capacity(1 + l.len() * 2);
            arr.push(serde_json::Value::from(l.len()));
            let mut prev = 0u32;
            for (c, w) in l.iter() {
                arr.push((c - prev).into());
                arr.push((*w).into());
                prev = *c;
            }
            obj.insert((*t).to_string(), serde_json::Value::Array(arr));
        }
        serde_json::json!({ "t": obj }).to_string().into_bytes()
    });
    let vocab: Vec<(&str, usize)> = postings.iter().map(|(t, l)| (*t, l.len())).collect();
    let blocks: Vec<&[(&str, usize)]> = vocab.chunks(p.word_block.max(1)).collect();
    let firsts: Vec<&str> = blocks.iter().map(|block| block[0].0).collect();
    let words = snap.add_all("w", "json.gz", &blocks, |_, block| {
        let rows: Vec<serde_json::Value> = block.iter().map(|(t, df)| serde_json::json!([t, df])).collect();
        serde_json::json!({ "w": rows }).to_string().into_bytes()
    });
    let bytes = gzip(serde_json::json!({ "first": firsts }).to_string().as_bytes());
    let word_index = hashed("w", "index", "json.gz", &bytes);
    snap.files.insert(word_index.clone(), bytes);
    Terms { files, shards, avgdl, words, word_index }
}

/// The pages file (`WRP1`): each page's chunk count, so a search groups chunk hits by page
/// before it fetches any fragment.
fn write_pages(snap: &mut Snapshot, layout: &Layout<'_>) -> String {
    let mut b = Vec::with_capacity(8 + layout.docs.len());
    b.extend_from_slice(b"WRP1");
    b.extend_from_slice(&(layout.docs.len() as u32).to_le_bytes());
    for (i, start) in layout.first_chunk.iter().enumerate() {
        let end = layout.first_chunk.get(i + 1).copied().unwrap_or(layout.chunks.len());
        leb128(&mut b, (end - start) as u32);
    }
    let bytes = gzip(&b);
    let name = hashed("p", "pages", "bin.gz", &bytes);
    snap.files.insert(name.clone(), bytes);
    name
}

/// The fragments: `[title, url, heading path, text, page]` of `fragment_size` consecutive
/// chunks, and `m`, `{page: {key: value}}`, the metadata of their pages that have any.
fn write_fragments(snap: &mut Snapshot, layout: &Layout<'_>, p: &SnapshotParams, fields: &SiteFields) -> Vec<String> {
    let groups: Vec<_> = layout.chunks.chunks(p.fragment_size.max(1)).collect();
    snap.add_all("f", "json.gz", &groups, |_, group| {
        let rows: Vec<serde_json::Value> = group
            .iter()
            .map(|&(i, c)| {
                let d = &layout.docs[i];
                let excerpt: String = c.text.chars().take(p.excerpt_chars).collect();
                serde_json::json!([d.title, d.url.clone().unwrap_or_else(|| d.id.clone()), c.heading_path.join(" › "), excerpt, i])
            })
            .collect();
        let mut meta = serde_json::Map::new();
        for &(i, _) in group.iter() {
            if let Some(m) = fields::page_meta(fields, &layout.docs[i].id) {
                meta.insert(i.to_string(), m);
            }
        }
        if meta.is_empty() {
            serde_json::json!({ "c": rows }).to_string().into_bytes()
        } else {
            serde_json::json!({ "c": rows, "m": meta }).to_string().into_bytes()
        }
    })
}

/// The vectors: int8 (int4 with the static tier) in IVF lists by k-means. Rows are the chunks'
/// embeddings, then the atomic questions' (PIKE-RAG, when an LLM atomized the site), each
/// carrying its chunk's number.
///
/// Errors: [`StoreError::Corrupt`] for a chunk without its vector.
fn write_vectors<S: Store, E: Embedder>(
    snap: &mut Snapshot,
    eng: &Engine<S, E>,
    layout: &Layout<'_>,
    p: &SnapshotParams,
) -> Result<VectorFiles> {
    let dim = eng.embedder().dim();
    let code = if eng.embedder().static_model().is_some() { VectorCode::Int4 } else { VectorCode::Int8 };
    let mut out = VectorFiles { code, lists: Vec::new(), centroids: String::new(), question_rows: 0 };
    if !p.vectors {
        return Ok(out);
    }
    let mut row_chunk: Vec<u32> = Vec::new();
    let mut vecs: Vec<Vec<f32>> = Vec::new();
    for (i, (_, c)) in layout.chunks.iter().enumerate() {
        let v = eng.chunk_vector(&c.id).ok_or_else(|| StoreError::Corrupt {
            collection: "vectors".into(),
            key: c.id.clone(),
            reason: "a chunk has no vector".into(),
        })?;
        vecs.push(v.to_vec());
        row_chunk.push(i as u32);
    }
    for (i, (_, c)) in layout.chunks.iter().enumerate() {
        for q in 0..eng.ask_store().questions(&c.id).map_or(0, <[String]>::len) {
            if let Some(v) = eng.ask_store().question_vector(&c.id, q) {
                vecs.push(v.to_vec());
                row_chunk.push(i as u32);
            }
        }
    }
    out.question_rows = vecs.len() - layout.chunks.len();
    if vecs.is_empty() {
        return Ok(out);
    }
    let lists = (vecs.len() / p.list_size.max(1)).max(1);
    let (cents, assign) = kmeans(&vecs, lists, p.kmeans_iterations);
    let crow: Vec<(f32, Vec<i8>)> = cents.iter().map(|c| quantize_i8(c)).collect();
    let cbytes = gzip(&vec_block(b"WRC1", &(0..cents.len() as u32).collect::<Vec<_>>(), &crow, dim));
    out.centroids = hashed("v", "c", "bin.gz", &cbytes);
    snap.files.insert(out.centroids.clone(), cbytes);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); cents.len()];
    for (i, &l) in assign.iter().enumerate() {
        members[l].push(i);
    }
    out.lists = snap.add_all("v", "bin.gz", &members, |_, members| {
        let ids: Vec<u32> = members.iter().map(|&i| row_chunk[i]).collect();
        code.block(&ids, members.iter().map(|&i| &vecs[i]), dim)
    });
    Ok(out)
}

/// One graph file per page (its topic), numbered like the pages.
fn write_graph<S: Store, E: Embedder>(snap: &mut Snapshot, eng: &Engine<S, E>, layout: &Layout<'_>) -> Vec<String> {
    let chunk_no: std::collections::HashMap<&str, usize> = layout.chunks.iter().enumerate().map(|(i, (_, c))| (c.id.as_str(), i)).collect();
    // The walk's neighbours are read here, in order; the files are written on every core.
    let exports: Vec<_> = layout.docs.iter().map(|d| eng.graph().export_topic(&d.id, &eng.config().graph)).collect();
    let code = if eng.embedder().static_model().is_some() { VectorCode::Sign } else { VectorCode::Int8 };
    let vectors = (eng.embedder().dim(), code);
    snap.add_all("g", "bin.gz", &exports, |i, t| graph_file(t.as_ref(), &layout.docs, &chunk_no, layout.first_chunk[i], vectors))
}

/// The manifest: model, counts, BM25 and fusion parameters, and the directory pages naming every
/// shard (written here); the static tier and the kb file are the caller's.
fn manifest<S: Store, E: Embedder>(
    snap: &mut Snapshot,
    eng: &Engine<S, E>,
    layout: &Layout<'_>,
    p: &SnapshotParams,
    w: &Written,
) -> Manifest {
    let cfg = eng.config();
    let term_dirs = directory(snap, "t", &w.terms.files);
    let frag_dirs = directory(snap, "f", &w.fragments);
    let list_dirs = directory(snap, "v", &w.vectors.lists);
    let graph_dirs = directory(snap, "g", &w.graph);
    let word_dirs = directory(snap, "w", &w.terms.words);
    let g = &cfg.graph;
    let graph = w.graph_on.then(|| ManifestGraph {
        topics: w.graph.len(),
        ext: "bin.gz",
        dirs: graph_dirs,
        seed_topics: g.seed_topics,
        max_topics: g.max_topics,
        link_decay: short(g.link_decay),
        pgr: ManifestPgr {
            support: short(g.pgr.support),
            continue_threshold: short(g.pgr.continue_threshold),
            anchors: g.pgr.anchors,
            top_rows: g.pgr.top_rows,
        },
    });
    let v = &w.vectors;
    let weights = &cfg.fusion_weights;
    Manifest {
        format: "webrag-snapshot",
        version: 3,
        model: ManifestModel {
            id: if p.vectors { eng.embedder().model_id().to_string() } else { String::new() },
            dim: eng.embedder().dim(),
        },
        documents: layout.docs.len(),
        chunks: layout.chunks.len(),
        analyzer: "webrag-1",
        bm25: ManifestBm25 {
            k1: short(cfg.bm25_k1),
            b: short(cfg.bm25_b),
            avgdl: short(w.terms.avgdl),
            idf: "ln(1 + (N - df + 0.5) / (df + 0.5))",
            weights: "u8 of tf·(k1+1)/(tf + k1·(1-b+b·dl/avgdl)) / (k1+1)",
        },
        directory: ManifestDirectory { group: DIR_GROUP, hash_bytes: 4 },
        terms: ManifestTerms { hash: "fnv1a32", shards: w.terms.shards, ext: "json.gz", dirs: term_dirs },
        fragments: ManifestFragments { size: p.fragment_size, count: w.fragments.len(), ext: "json.gz", dirs: frag_dirs },
        pages: Some(w.pages.clone()),
        words: Some(ManifestWords { blocks: w.terms.words.len(), index: w.terms.word_index.clone(), ext: "json.gz", dirs: word_dirs }),
        vectors: ManifestVectors {
            quant: v.code,
            metric: "cosine",
            lists: v.lists.len(),
            nprobe: p.nprobe.min(v.lists.len()),
            centroids: v.centroids.clone(),
            ext: "bin.gz",
            dirs: list_dirs,
            questions: v.question_rows,
        },
        graph,
        fusion: ManifestFusion {
            rrf_k: short(cfg.rrf_k),
            weights: ManifestFusionWeights { bm25: short(weights.bm25), dense: short(weights.dense), graph: short(weights.graph) },
        },
        static_tier: None,
        kb: None,
        site_root: p.site_root.clone(),
        filters: Vec::new(),
        sort: Vec::new(),
        languages: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_hash() {
        assert_eq!(url_of("a/b/index.html"), "/a/b/");
        assert_eq!(url_of("index.html"), "/");
        assert_eq!(url_of("news/2023/p1.html"), "/news/2023/p1.html");
        assert_eq!(url_of("100% & more?.html"), "/100%25%20&%20more%3F.html");
        assert_eq!(url_of("a#b/\"><img src=x>.html"), "/a%23b/%22%3E%3Cimg%20src=x%3E.html");
        assert_eq!(url_of("javascript:alert(1).html"), "/javascript:alert(1).html");
        assert_eq!(url_of("文档/笔记.html"), "/文档/笔记.html");
        assert!(is_page("a/B.HTML") && is_page("x.md") && !is_page("style.css") && !is_page("README"));
    }

    #[test]
    fn site_root_from_folders_and_checked_urls() {
        use std::path::Path;
        assert_eq!(site_root(Path::new("/s"), Path::new("/s/webrag")).as_deref(), Some("../"));
        assert_eq!(site_root(Path::new("/s"), Path::new("/s/assets/search")).as_deref(), Some("../../"));
        assert_eq!(site_root(Path::new("/s"), Path::new("/s")).as_deref(), Some("./"));
        assert_eq!(site_root(Path::new("/s"), Path::new("/t/webrag")), None);
        assert_eq!(site_root(Path::new("/s"), Path::new("/sx/webrag")), None);
        assert_eq!(check_site_url("siteUrl", "/docs").unwrap(), "/docs/");
        assert_eq!(check_site_url("siteUrl", "https://example.org/docs/").unwrap(), "https://example.org/docs/");
        assert_eq!(check_site_url("siteUrl", "../").unwrap(), "../");
        for bad in ["", "javascript:alert(1)", "data:text/html,x", "/a b/", "/\"x", "\\\\evil/"] {
            assert!(
                matches!(check_site_url("siteUrl", bad), Err(crate::error::Error::Input(crate::error::InputError::InvalidOption { .. }))),
                "{bad}"
            );
        }
    }

    #[test]
    fn leb128_writes_seven_bits_a_byte() {
        let mut b = Vec::new();
        for v in [0, 1, 127, 128, 300, u32::MAX] {
            leb128(&mut b, v);
        }
        assert_eq!(b, [0, 1, 127, 0x80, 1, 0xac, 2, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    }
}
