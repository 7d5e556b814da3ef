//! A static-site snapshot (docs/snapshot-format.md) as a search source (`engine::source`):
//! the one search ranks a built snapshot's chunks as `webrag/static` reads them, so the page's
//! loader (`src/web/js/static.js`) can be checked against the Rust search (`webrag
//! search-snapshot`, and the e2e test that compares the two on one snapshot).
//!
//! What the snapshot holds bounds what this source answers: BM25 from the quantized postings
//! (`idf · w/255 · (k1+1)`, `w` the term's u8 tf-part, idf `ln(1 + (N − df + 0.5)/(df + 0.5))`),
//! summed in f64 as the page does; dense from the int8 (or int4) IVF lists, the manifest's
//! `nprobe` lists nearest the query by the int8 centroids, each chunk scored by its best row (its
//! own vector or one of its atomic questions), in f64 rounded to f32 as the page does; phrases
//! checked on the fragments' excerpts (the first `excerpt_chars` of each chunk). No filter (the
//! snapshot keeps no tags or metadata) and no graph list (the page's graph walk starts from the
//! first fused pages, a step outside the search).
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::Config;
use crate::engine::source::{GraphSource, IndexSource, Lexical, Postings, Records, Vectors};
use crate::error::{Result, StoreError};
use crate::graph::{GraphHit, PseudoGraph};
use crate::index::bm25::{Query, query_weights};
use crate::index::segment::fnv1a;
use crate::index::top_k;
use crate::retrieve::snippet;
use crate::types::{Hit, Scores, SearchFilter};

/// A built snapshot read from its folder.
pub struct SnapshotSource {
    dir: PathBuf,
    manifest: Value,
    config: Config,
    /// Chunks (N of the idf).
    chunks: usize,
    dim: usize,
    k1: f64,
    /// The languages its pages were stemmed in (manifest `languages`, `stemmed`).
    languages: Vec<crate::text::Language>,
}

/// A term's postings, `(chunk, w)`, and its document frequency.
type TermPostings = (Vec<(u32, u8)>, usize);

/// A decoded vector block (`WRV1`, `WRV4`, `WRC1`): row `i` is `ids[i]` with `scale[i]`.
struct Block {
    ids: Vec<u32>,
    scales: Vec<f32>,
    /// `ids.len() × dim` signed values.
    q: Vec<i8>,
}

fn corrupt(file: &str, reason: impl Into<String>) -> crate::error::Error {
    StoreError::Corrupt { collection: "snapshot".into(), key: file.into(), reason: reason.into() }.into()
}

impl SnapshotSource {
    /// Reads `dir/manifest.json`.
    ///
    /// Errors: [`StoreError::Corrupt`] for a missing or malformed manifest.
    pub fn open(dir: &Path) -> Result<Self> {
        let bytes = std::fs::read(dir.join("manifest.json")).map_err(|e| corrupt("manifest.json", e.to_string()))?;
        let manifest: Value = serde_json::from_slice(&bytes).map_err(|e| corrupt("manifest.json", e.to_string()))?;
        let num = |v: &Value| v.as_f64().ok_or_else(|| corrupt("manifest.json", "a count or parameter is missing"));
        let chunks = num(&manifest["chunks"])? as usize;
        let dim = num(&manifest["model"]["dim"])? as usize;
        let k1 = num(&manifest["bm25"]["k1"])?;
        let mut config = Config::default();
        let fusion = &manifest["fusion"];
        if let Some(k) = fusion["rrfK"].as_f64() {
            config.rrf_k = k as f32;
        }
        let w = &fusion["weights"];
        for (name, slot) in [("bm25", &mut config.fusion_weights.bm25), ("dense", &mut config.fusion_weights.dense)] {
            if let Some(x) = w[name].as_f64() {
                *slot = x as f32;
            }
        }
        let mut languages: Vec<crate::text::Language> = manifest["languages"]["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|l| l["stemmed"].as_bool() == Some(true))
            .filter_map(|l| crate::text::Language::from_tag(l["lang"].as_str()?))
            .collect();
        crate::sort::by(&mut languages, |a, b| a.tag().cmp(b.tag()));
        languages.dedup();
        Ok(SnapshotSource { dir: dir.to_path_buf(), manifest, config, chunks, dim, k1, languages })
    }

    /// The snapshot's chunks.
    pub fn chunk_count(&self) -> usize {
        self.chunks
    }

    /// The model the snapshot's vectors come from (empty: none).
    pub fn model_id(&self) -> &str {
        self.manifest["model"]["id"].as_str().unwrap_or("")
    }

    /// A file's bytes, gunzipped when its name ends in `.gz`.
    fn file(&self, name: &str) -> Result<Vec<u8>> {
        if name.split('/').any(|p| p == ".." || p.is_empty()) {
            return Err(corrupt(name, "not a file name of the snapshot"));
        }
        let raw = std::fs::read(self.dir.join(name)).map_err(|e| corrupt(name, e.to_string()))?;
        if !name.ends_with(".gz") {
            return Ok(raw);
        }
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..]).read_to_end(&mut out).map_err(|e| corrupt(name, e.to_string()))?;
        Ok(out)
    }

    /// Shard `i` of a series (`terms`, `fragments`, `vectors`), named from its directory page.
    fn shard(&self, kind: &str, prefix: &str, i: usize) -> Result<Vec<u8>> {
        let k = &self.manifest[kind];
        let group = self.manifest["directory"]["group"].as_u64().unwrap_or(256).max(1) as usize;
        let page = k["dirs"][i / group].as_str().ok_or_else(|| corrupt("manifest.json", format!("{kind} {i}: no such shard")))?;
        let bytes = self.file(page)?;
        let hash = bytes.get(4 * (i % group)..4 * (i % group) + 4).ok_or_else(|| corrupt(page, format!("too short for shard {i}")))?;
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        self.file(&format!("{prefix}/{i}-{hex}.{}", k["ext"].as_str().unwrap_or("json.gz")))
    }

    /// A JSON shard.
    fn json(&self, kind: &str, prefix: &str, i: usize) -> Result<Value> {
        serde_json::from_slice(&self.shard(kind, prefix, i)?).map_err(|e| corrupt(&format!("{kind} {i}"), e.to_string()))
    }

    /// A term's postings, `(chunk, w)`, and its document frequency.
    fn term(&self, shards: &mut HashMap<usize, Value>, t: &str) -> Result<TermPostings> {
        let n = self.manifest["terms"]["shards"].as_u64().unwrap_or(1).max(1) as usize;
        let s = fnv1a(t) as usize % n;
        let shard = match shards.entry(s) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(self.json("terms", "t", s)?),
        };
        let Some(list) = shard["t"][t].as_array() else { return Ok((Vec::new(), 0)) };
        let df = list.first().and_then(Value::as_u64).unwrap_or(0) as usize;
        let mut out = Vec::with_capacity(list.len() / 2);
        let mut c = 0u32;
        for pair in list[1.min(list.len())..].chunks_exact(2) {
            c = c.saturating_add(pair[0].as_u64().unwrap_or(0) as u32);
            out.push((c, pair[1].as_u64().unwrap_or(0).min(255) as u8));
        }
        Ok((out, df))
    }

    /// A vector block of `dim`-d rows: `WRV1`/`WRC1` int8, `WRV4` int4 (sign-extended nibbles).
    fn block(&self, name: &str, bytes: &[u8]) -> Result<Block> {
        let u32_at = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let (Some(count), Some(d)) = (u32_at(4), u32_at(8)) else { return Err(corrupt(name, "too short for a vector block")) };
        let (count, int4) = (count as usize, bytes.get(..4) == Some(b"WRV4"));
        let row = if int4 { self.dim.div_ceil(2) } else { self.dim };
        if d as usize != self.dim || bytes.len() != 12 + count * (8 + row) {
            return Err(corrupt(name, format!("not a vector block of {}-d vectors", self.dim)));
        }
        let ids = (0..count).filter_map(|i| u32_at(12 + 4 * i)).collect();
        let scales = (0..count).filter_map(|i| u32_at(12 + 4 * count + 4 * i).map(f32::from_bits)).collect();
        let at = 12 + 8 * count;
        let q = if int4 {
            (0..count * self.dim)
                .map(|x| {
                    let (i, j) = (x / self.dim, x % self.dim);
                    let b = bytes[at + i * row + j / 2];
                    (((if j % 2 == 1 { b >> 4 } else { b }) << 4) as i8) >> 4
                })
                .collect()
        } else {
            bytes[at..].iter().map(|&b| b as i8).collect()
        };
        Ok(Block { ids, scales, q })
    }

    /// Each row's dot product with `v`, in f64 rounded to f32 (as `static.js` computes it).
    fn dots(&self, b: &Block, v: &[f32]) -> Vec<f32> {
        b.q.chunks_exact(self.dim.max(1))
            .zip(&b.scales)
            .map(|(row, &scale)| (row.iter().zip(v).map(|(&q, &x)| f64::from(q) * f64::from(x)).sum::<f64>() * f64::from(scale)) as f32)
            .collect()
    }

    /// The fragments of `chunks` as `webrag/static` reads them ([`crate::native::page_rank`]).
    ///
    /// Errors: [`StoreError::Corrupt`] for a missing or malformed fragments file.
    pub fn fragment_map(&self, chunks: &[u32]) -> Result<HashMap<u32, crate::native::page_rank::Fragment>> {
        let text = |v: &Value| v.as_str().map(str::to_string);
        Ok(self
            .fragments(chunks)?
            .into_iter()
            .map(|(c, row)| {
                let f = crate::native::page_rank::Fragment {
                    title: row.first().and_then(text),
                    url: row.get(1).and_then(text),
                    heading: row.get(2).and_then(text),
                    excerpt: row.get(3).and_then(text),
                    page: row.get(4).and_then(Value::as_u64),
                };
                (c, f)
            })
            .collect())
    }

    /// Whether the snapshot has a pages file (a fragment's `page` is then its page there).
    pub fn has_pages(&self) -> bool {
        self.manifest["pages"].is_string()
    }

    /// The manifest's `fusion` and `fragments.size`.
    pub fn page_ranking(&self) -> (crate::native::page_rank::Fusion, u32) {
        let fusion = serde_json::from_value(self.manifest["fusion"].clone()).unwrap_or_default();
        (fusion, self.manifest["fragments"]["size"].as_u64().unwrap_or(1).clamp(1, u32::MAX as u64) as u32)
    }

    /// The fragments rows `[title, url, heading, excerpt, page]` of `chunks`.
    fn fragments(&self, chunks: &[u32]) -> Result<HashMap<u32, Vec<Value>>> {
        let size = self.manifest["fragments"]["size"].as_u64().unwrap_or(1).max(1) as u32;
        let mut files: HashMap<u32, Value> = HashMap::new();
        let mut out = HashMap::new();
        for &c in chunks {
            let f = c / size;
            let file = match files.entry(f) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => e.insert(self.json("fragments", "f", f as usize)?),
            };
            let row =
                file["c"][(c % size) as usize].as_array().ok_or_else(|| corrupt(&format!("fragments {f}"), format!("no chunk {c}")))?;
            out.insert(c, row.clone());
        }
        Ok(out)
    }
}

impl IndexSource for SnapshotSource {
    fn config(&self) -> &Config {
        &self.config
    }

    /// Every stemmed language of its pages (webrag/static searches one, the page's or the
    /// caller's, and only its pages and those in none: docs/static-site.md).
    fn languages(&self) -> &[crate::text::Language] {
        &self.languages
    }
}

impl Postings for SnapshotSource {
    async fn lexical(&self, q: &Query, score: bool) -> Result<Lexical> {
        let mut shards = HashMap::new();
        let mut lists: HashMap<&str, TermPostings> = HashMap::new();
        let names = q
            .terms
            .iter()
            .map(|t| t.0.as_str())
            .chain(q.excluded.iter().map(String::as_str))
            .chain(q.phrases.iter().flatten().map(String::as_str));
        for t in names {
            if !lists.contains_key(t) {
                lists.insert(t, self.term(&mut shards, t)?);
            }
        }
        let mut scores = Vec::new();
        if score {
            let n = self.chunks as f64;
            let mut acc: HashMap<u32, f64> = HashMap::new();
            let mut order = Vec::new();
            for (t, weight) in query_weights(q) {
                let Some((list, df)) = lists.get(t) else { continue };
                let df = *df as f64;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                for &(c, w) in list {
                    let e = acc.entry(c).or_insert_with(|| {
                        order.push(c);
                        0.0
                    });
                    *e += f64::from(weight) * idf * (f64::from(w) / 255.0) * (self.k1 + 1.0);
                }
            }
            scores = order.into_iter().map(|c| (c, acc[&c] as f32)).collect();
        }
        Ok(Lexical::new(q, |t| lists.get(t).map(|l| l.0.iter().map(|p| p.0).collect::<Vec<_>>()).unwrap_or_default(), scores))
    }
}

impl Vectors for SnapshotSource {
    fn dim(&self) -> usize {
        self.dim
    }

    async fn nearest(&self, v: &[f32], n: usize) -> Result<Vec<(u32, f32)>> {
        let m = &self.manifest["vectors"];
        let (lists, Some(cents)) = (m["lists"].as_u64().unwrap_or(0), m["centroids"].as_str()) else { return Ok(Vec::new()) };
        if lists == 0 {
            return Ok(Vec::new());
        }
        let c = self.dots(&self.block(cents, &self.file(cents)?)?, v);
        let nprobe = m["nprobe"].as_u64().unwrap_or(1) as usize;
        let mut order: Vec<usize> = (0..c.len()).collect();
        order.sort_by(|&a, &b| c[b].total_cmp(&c[a]).then(a.cmp(&b)));
        let mut best: HashMap<u32, f32> = HashMap::new();
        for l in order.into_iter().take(nprobe) {
            let name = format!("vectors {l}");
            let b = self.block(&name, &self.shard("vectors", "v", l)?)?;
            for (id, d) in b.ids.iter().zip(self.dots(&b, v)) {
                let e = best.entry(*id).or_insert(f32::NEG_INFINITY);
                *e = e.max(d);
            }
        }
        Ok(top_k(best.into_iter(), n))
    }

    fn exact(&self, _: &[f32], _: &[u32]) -> Vec<(u32, f32)> {
        Vec::new()
    }

    /// None apart: a snapshot's atomic questions are rows of its IVF lists ([`Vectors::nearest`]).
    async fn atomic(&self, _: &[f32], _: usize) -> Result<Vec<(u32, f32)>> {
        Ok(Vec::new())
    }
}

impl GraphSource for SnapshotSource {
    fn pseudo_graph(&self) -> Option<&PseudoGraph> {
        None
    }

    fn graph_slot(&self, _: &GraphHit) -> Option<u32> {
        None
    }
}

impl Records for SnapshotSource {
    fn scope(&self, _: &SearchFilter) -> Option<Vec<u32>> {
        None
    }

    async fn holding_phrases(&self, q: &Query, slots: &[u32]) -> Result<HashSet<u32>> {
        let rows = self.fragments(slots)?;
        Ok(rows
            .into_iter()
            .filter(|(_, r)| q.phrases_in(&crate::text::analyze(r.get(3).and_then(Value::as_str).unwrap_or(""))))
            .map(|(c, _)| c)
            .collect())
    }

    /// Hits from the fragments: the chunk number as `chunkId`, the page's URL as `docId`.
    async fn hits(&self, top: &[(u32, f32)], mut scores: HashMap<u32, Scores>, terms: &HashSet<String>) -> Result<Vec<Hit>> {
        let slots: Vec<u32> = top.iter().map(|x| x.0).collect();
        let rows = self.fragments(&slots)?;
        let text = |r: &Vec<Value>, i: usize| r.get(i).and_then(Value::as_str).unwrap_or("").to_string();
        Ok(top
            .iter()
            .filter_map(|&(c, score)| {
                let r = rows.get(&c)?;
                let heading = text(r, 2);
                Some(Hit {
                    doc_id: text(r, 1),
                    chunk_id: c.to_string(),
                    title: text(r, 0),
                    url: Some(text(r, 1)),
                    heading_path: if heading.is_empty() { Vec::new() } else { heading.split(" › ").map(str::to_string).collect() },
                    score,
                    scores: scores.remove(&c).unwrap_or_default(),
                    snippet: snippet(&text(r, 3), terms, 240, None),
                    sections: Vec::new(),
                })
            })
            .collect())
    }
}
