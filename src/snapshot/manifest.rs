//! `manifest.json`, the one fixed name of a snapshot (docs/snapshot-format.md): what `webrag/static`
//! reads first. Its TypeScript type (`Manifest` in `static.d.ts`) is generated from these types
//! (`webrag surface`). Keys are written sorted, as in every snapshot so far.
use serde::Serialize;

use super::VectorCode;
use crate::embed::tokenizer::WordPieceSpec;

/// The manifest of a snapshot (`manifest.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Always `webrag-snapshot`.
    #[cfg_attr(not(target_arch = "wasm32"), schemars(extend("const" = "webrag-snapshot")))]
    pub format: &'static str,
    /// The format's version; the loader reads 3 (`SNAPSHOT_VERSION` otherwise).
    #[cfg_attr(not(target_arch = "wasm32"), schemars(extend("const" = 3)))]
    pub version: u32,
    /// The embedding model of the vectors.
    pub model: ManifestModel,
    /// Pages indexed.
    pub documents: usize,
    /// Chunks indexed (numbered `0..chunks`).
    pub chunks: usize,
    /// The BM25 analyzer (Unicode words, NFKC + lowercase, CJK bigrams).
    #[cfg_attr(not(target_arch = "wasm32"), schemars(extend("const" = "webrag-1")))]
    pub analyzer: &'static str,
    /// BM25's parameters and the forms of its stored weights.
    pub bm25: ManifestBm25,
    /// Directory pages: each holds the 4-byte name hashes of `group` shards.
    pub directory: ManifestDirectory,
    /// The postings shards, by FNV-1a 32 hash of the term.
    pub terms: ManifestTerms,
    /// The fragment files: `size` chunks' text each.
    pub fragments: ManifestFragments,
    /// The pages file (`WRP1`: each page's chunk count); absent in older snapshots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<String>,
    /// The sorted vocabulary in blocks with each block's first term (prefix completion); absent
    /// in older snapshots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub words: Option<ManifestWords>,
    /// The chunk vectors: IVF lists around k-means centroids.
    pub vectors: ManifestVectors,
    /// The mind maps, one `g/{page}-{hash}.bin.gz` per page, and the PGR parameters; `None` when
    /// built without (`--no-graph`, `--vectors none`).
    pub graph: Option<ManifestGraph>,
    /// Reciprocal-rank fusion of the retrievers' lists.
    pub fusion: ManifestFusion,
    /// The static tier's query embedder (`--vectors static`).
    #[serde(rename = "static", skip_serializing_if = "Option::is_none")]
    pub static_tier: Option<ManifestStatic>,
    /// The knowledge-base file a visitor can import (`--kb`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kb: Option<ManifestKb>,
    /// The site's root seen from the snapshot's folder (`../` for `<site>/webrag/`; `--site-url`),
    /// against which `webrag/static`'s `link()` resolves page URLs; absent: the origin's root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site_root: Option<String>,
    /// The filters (facets) the pages carry (`data-webrag-filter`), by key; absent when none does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<ManifestFilter>,
    /// The sort keys the pages carry (`data-webrag-sort`), by key; absent when none does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sort: Vec<ManifestSort>,
    /// The pages' languages (`<html lang>`), which their words are stemmed in; absent when no
    /// page names one (no page is stemmed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub languages: Option<ManifestLanguages>,
}

/// The pages' languages: a query is searched in the languages it asks for (a page's, or the
/// caller's), its words stemmed as each language's pages were.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ManifestLanguages {
    /// Each language with its pages, the most pages first (then by tag).
    pub values: Vec<ManifestLanguage>,
    /// Which page is in which language, in a filter's form (`x/lang-{hash}.json.gz`:
    /// `{"v": [[lang, [Δpage…]]…]}`); absent when every page is in the one language of `values`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// One language of a snapshot's pages.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ManifestLanguage {
    /// The primary subtag of the pages' `<html lang>` (`en`, `zh`), lowercase; `""` for the
    /// pages that name no language.
    pub lang: String,
    /// Whether its pages' words were stemmed (the language has a Snowball stemmer): a query in
    /// it is stemmed by `webrag/static`'s stemmer module of the language (`stem/<tag>.wasm`).
    pub stemmed: bool,
    /// Pages in it.
    pub pages: usize,
}

/// A filter: its file `x/{i}-{hash}.json.gz` holds `{"v": [[value, [Δpage…]]…]}`, the values in
/// code point order, each with the pages that carry it (page numbers, delta-coded from 0).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ManifestFilter {
    /// The filter's key (`data-webrag-filter="key…"`).
    pub key: String,
    /// Its file.
    pub file: String,
    /// Distinct values.
    pub values: usize,
    /// Pages with at least one value.
    pub pages: usize,
}

/// A sort key: its file `o/{i}-{hash}.json.gz` holds `{"o": [[value, [page…]]…]}`, the pages
/// that carry it grouped by equal value (each group's value as its first page wrote it), groups
/// in ascending order of value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ManifestSort {
    /// The sort key (`data-webrag-sort="key…"`).
    pub key: String,
    /// Its file.
    pub file: String,
    /// Whether the values were compared as numbers (every value is one), else as strings in
    /// code point order (ISO 8601 dates sort right either way).
    pub numeric: bool,
    /// Pages with a value.
    pub pages: usize,
}

/// The embedding model of a snapshot's vectors.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ManifestModel {
    /// Model id (empty without vectors).
    pub id: String,
    /// Embedding dimension.
    pub dim: usize,
}

/// BM25's parameters (Robertson & Zaragoza 2009) and the forms of the stored weights.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ManifestBm25 {
    /// Term-frequency saturation.
    pub k1: f64,
    /// Length normalization.
    pub b: f64,
    /// Average chunk length, in terms.
    pub avgdl: f64,
    /// The IDF formula.
    pub idf: &'static str,
    /// What a posting's byte holds.
    pub weights: &'static str,
}

/// The directory pages' shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ManifestDirectory {
    /// Shards a directory page names.
    pub group: usize,
    /// Bytes of each name hash.
    #[cfg_attr(not(target_arch = "wasm32"), schemars(extend("const" = 4)))]
    pub hash_bytes: u32,
}

/// The postings shards.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ManifestTerms {
    /// The hash that picks a term's shard.
    #[cfg_attr(not(target_arch = "wasm32"), schemars(extend("const" = "fnv1a32")))]
    pub hash: &'static str,
    /// Shards (a power of two).
    pub shards: usize,
    /// The shards' file extension.
    pub ext: &'static str,
    /// The directory pages, in order.
    pub dirs: Vec<String>,
}

/// Fragment files: the chunks' text, `size` chunks a file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ManifestFragments {
    /// Chunks a file.
    pub size: usize,
    /// Files.
    pub count: usize,
    /// The files' extension.
    pub ext: &'static str,
    /// The directory pages, in order.
    pub dirs: Vec<String>,
}

/// The vocabulary blocks (prefix completion).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ManifestWords {
    /// Blocks.
    pub blocks: usize,
    /// The file with each block's first term.
    pub index: String,
    /// The blocks' extension.
    pub ext: &'static str,
    /// The directory pages, in order.
    pub dirs: Vec<String>,
}

/// The chunk vectors' IVF lists.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ManifestVectors {
    /// How a component is stored.
    pub quant: VectorCode,
    /// The similarity (unit vectors).
    #[cfg_attr(not(target_arch = "wasm32"), schemars(extend("const" = "cosine")))]
    pub metric: &'static str,
    /// IVF lists.
    pub lists: usize,
    /// Lists a query reads by default.
    pub nprobe: usize,
    /// The centroids' file.
    pub centroids: String,
    /// The lists' extension.
    pub ext: &'static str,
    /// The directory pages, in order.
    pub dirs: Vec<String>,
    /// Atomic-question rows after the chunks' (ids from `chunks` on).
    pub questions: usize,
}

/// The mind maps and PGR's parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ManifestGraph {
    /// Pages with a mind map.
    pub topics: usize,
    /// The files' extension.
    pub ext: &'static str,
    /// The directory pages, in order.
    pub dirs: Vec<String>,
    /// Pages the semantic hits seed the graph search with.
    pub seed_topics: usize,
    /// Pages the graph search reads at most.
    pub max_topics: usize,
    /// A linked page's similarity factor.
    pub link_decay: f64,
    /// PGR's thresholds and sizes.
    pub pgr: ManifestPgr,
}

/// PGR thresholds and sizes (PG-RAG §4.3): weight 1 within `support` of an anchor's similarity,
/// 0.5 within `continueThreshold`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[cfg_attr(not(target_arch = "wasm32"), schemars(rename = "PgrParams"))]
#[serde(rename_all = "camelCase")]
pub struct ManifestPgr {
    /// Support threshold.
    pub support: f64,
    /// Continue threshold.
    pub continue_threshold: f64,
    /// Anchors per key point.
    pub anchors: usize,
    /// Rows selected.
    pub top_rows: usize,
}

/// Reciprocal-rank fusion (Cormack et al. 2009) of the retrievers' lists.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ManifestFusion {
    /// RRF's `k`.
    pub rrf_k: f64,
    /// Each list's weight.
    pub weights: ManifestFusionWeights,
}

/// Each retriever's weight in the fusion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ManifestFusionWeights {
    /// BM25's.
    pub bm25: f64,
    /// The dense retriever's.
    pub dense: f64,
    /// The graph retriever's.
    pub graph: f64,
}

/// The static tier: a query embedder of a vocabulary and token rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ManifestStatic {
    /// The model it was distilled from.
    pub source: String,
    /// The token weighting of its rows.
    pub weighting: String,
    /// The vocabulary shards.
    pub vocab: ManifestVocab,
    /// The token rows.
    pub rows: ManifestRows,
    /// How to tokenize as the model's WordPiece does.
    pub wordpiece: WordPieceSpec,
}

/// The static tier's vocabulary shards.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ManifestVocab {
    /// The hash that picks a piece's shard.
    #[cfg_attr(not(target_arch = "wasm32"), schemars(extend("const" = "fnv1a32")))]
    pub hash: &'static str,
    /// What is hashed.
    pub key: &'static str,
    /// Shards (a power of two).
    pub shards: usize,
    /// The shards' extension.
    pub ext: &'static str,
    /// The directory pages, in order.
    pub dirs: Vec<String>,
}

/// The static tier's token rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ManifestRows {
    /// Rows (token ids `0..count`).
    pub count: usize,
    /// Rows a file.
    pub per_file: usize,
    /// The files' extension.
    pub ext: &'static str,
    /// The directory pages, in order.
    pub dirs: Vec<String>,
}

/// The knowledge-base file of a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ManifestKb {
    /// Its name, relative to the snapshot folder.
    pub file: String,
    /// Its size in bytes.
    pub bytes: usize,
}
