//! The stored index segments a knowledge base opens lazily with (docs/vector-index.md, "Index
//! segments"), and the pieces of their format the static-site snapshot shares
//! ([`crate::snapshot`]): FNV-1a term partitions, vectors quantized with a scale each, k-means
//! inverted lists (IVF), and the vector block layout (magic, rows, dim, ids, scales, values).
//!
//! A **base** is an immutable picture of the chunks at one moment, numbered by ordinal:
//! - `head`: [`SegmentHead`] — the chunk ids, BM25 lengths and documents by ordinal, the
//!   counts, the IVF centroids (postcard);
//! - `t/{b}`: [`PostingsBlock`] — the inverted BM25 postings `(ordinal, tf)` of the terms whose
//!   FNV-1a hash is `b` modulo the block count (postcard), so a query reads its terms' blocks only;
//! - `v/{l}`: the chunk vectors of IVF list `l` as a `WRL1` block (12-bit integers with a scale
//!   per vector, [`list_block`]), so a query reads the centroids and its [`NPROBE`] nearest lists.
//!
//! What changed since the base is the **delta** ([`Delta`]): the chunks added since (read whole
//! at open, from their own records) and the ordinals of base chunks removed since (tombstones). It
//! is written in the same transaction as the documents that change it, so base + delta always
//! equals the stored chunks; the engine builds a new base when the delta grows past
//! [`rebuild_due`]'s size (an LSM tree of one level).

use crate::embed::vecmath::{assign, dot_i16, kmeans_train, quantize_i12};
use crate::schema::PostingRecord;
pub use crate::schema::{Delta, PostingsBlock, QuestionDelta, QuestionHead, SEGMENT_FORMAT, SegmentHead, SegmentKey};

/// Target vectors per IVF list.
pub const LIST_SIZE: usize = 1024;
/// IVF lists a dense query reads (the nearest centroids).
pub const NPROBE: usize = 12;
/// Target postings per BM25 block.
pub const BLOCK_POSTINGS: usize = 8192;
/// Changed chunks (added + removed) after which the engine builds a new base: at least this
/// many, and at least an eighth of the base ([`rebuild_due`]).
pub const REBUILD_AT: usize = 2048;

/// Whether a base of `base` chunks with `changes` changed since is due for a rebuild: once the
/// delta holds [`REBUILD_AT`] changes and an eighth of the base, so a growing knowledge base
/// rebuilds its base O(log n) times (about 9 bases' worth of work in all while it grows), and
/// a lazy open reads a delta of at most about an eighth of the base.
pub fn rebuild_due(base: usize, changes: usize) -> bool {
    changes >= REBUILD_AT.max(base / 8)
}
/// Vectors k-means trains the IVF centroids on (a stride sample; every vector is then assigned).
pub const KMEANS_SAMPLE: usize = 16_384;
/// k-means iterations for the IVF centroids.
pub const KMEANS_ITERATIONS: usize = 6;

impl SegmentHead {
    /// IVF lists (`v/…` records).
    pub fn lists(&self) -> u32 {
        if self.dim == 0 { 0 } else { (self.centroids.len() / self.dim as usize) as u32 }
    }
    /// The `nprobe` lists whose centroids are nearest to `q` (inner product), nearest first.
    pub fn nearest_lists(&self, q: &[f32], nprobe: usize) -> Vec<u32> {
        nearest_lists(&self.centroids, self.dim as usize, q, nprobe)
    }
}

impl QuestionHead {
    /// IVF lists (`q/…` records).
    pub fn lists(&self) -> u32 {
        if self.dim == 0 { 0 } else { (self.centroids.len() / self.dim as usize) as u32 }
    }
    /// The `nprobe` lists whose centroids are nearest to `q` (inner product), nearest first.
    pub fn nearest_lists(&self, q: &[f32], nprobe: usize) -> Vec<u32> {
        nearest_lists(&self.centroids, self.dim as usize, q, nprobe)
    }
}

/// The `nprobe` of the `centroids` (`dim` wide, row-major) nearest to `q`, nearest first.
fn nearest_lists(centroids: &[f32], dim: usize, q: &[f32], nprobe: usize) -> Vec<u32> {
    if dim == 0 || q.len() != dim {
        return Vec::new();
    }
    let scores = centroids.chunks_exact(dim).enumerate().map(|(l, c)| (l as u32, crate::embed::vecmath::dot(q, c)));
    super::top_k(scores, nprobe).into_iter().map(|(l, _)| l).collect()
}

impl Delta {
    /// Chunks added plus chunks removed since the base.
    pub fn changes(&self) -> usize {
        self.added.len() + self.removed.len()
    }
}

/// The postings of `term` in a block (empty when absent).
pub fn block_postings<'a>(block: &'a PostingsBlock, term: &str) -> &'a [(u32, u32)] {
    match block.binary_search_by(|(t, _)| t.as_str().cmp(term)) {
        Ok(i) => &block[i].1,
        Err(_) => &[],
    }
}

/// The block holding `term` among `blocks`.
pub fn block_of(term: &str, blocks: u32) -> u32 {
    fnv1a(term) % blocks.max(1)
}

/// FNV-1a, 32 bits, over the UTF-8 bytes (the term → block / shard hash; `static.js` computes the
/// same).
pub fn fnv1a(s: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.as_bytes() {
        h ^= *b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// A vector block: `magic` (4 bytes), u32 rows, u32 dim, then the rows' u32 ids, their f32
/// scales and their int8 values (all little-endian). The snapshot's centroid (`WRC1`) and list
/// (`WRV1`) files use it; the store's IVF lists use its layout with wider values ([`list_block`]).
pub fn vec_block(magic: &[u8; 4], ids: &[u32], rows: &[(f32, Vec<i8>)], dim: usize) -> Vec<u8> {
    let mut b = block_start(magic, ids, rows.iter().map(|r| r.0), rows.len(), dim, 1);
    for (_, q) in rows {
        b.extend(q.iter().map(|x| *x as u8));
    }
    b
}

/// A vector block of int4 values ([`crate::embed::vecmath::quantize_i4`], −7…7): the layout of
/// [`vec_block`] with each row's values packed two to a byte, the first in the low four bits
/// (two's complement), `⌈dim / 2⌉` bytes a row (an odd `dim` leaves the last high half 0). A
/// static-tier snapshot's IVF lists (`WRV4`).
pub fn vec_block_i4(magic: &[u8; 4], ids: &[u32], rows: &[(f32, Vec<i8>)], dim: usize) -> Vec<u8> {
    let mut b = block_start(magic, ids, rows.iter().map(|r| r.0), rows.len(), dim, 1);
    for (_, q) in rows {
        b.extend(q.chunks(2).map(|p| (p[0] as u8 & 0x0f) | ((p.get(1).copied().unwrap_or(0) as u8 & 0x0f) << 4)));
    }
    b
}

/// A vector block of sign bits (binary quantization): the layout of [`vec_block`] with one bit a
/// component, set when it is ≥ 0, eight to a byte, the first in the lowest bit, `⌈dim / 8⌉` bytes
/// a row; every scale `1/√dim`, so a row reads as the unit vector of ±1 components. A static-tier
/// snapshot's graph files (`WRB1`).
pub fn vec_block_sign<V: AsRef<[f32]>>(magic: &[u8; 4], ids: &[u32], rows: &[V], dim: usize) -> Vec<u8> {
    let scale = 1.0 / (dim.max(1) as f32).sqrt();
    let mut b = block_start(magic, ids, rows.iter().map(|_| scale), rows.len(), dim, 1);
    for v in rows {
        b.extend(v.as_ref().chunks(8).map(|c| c.iter().enumerate().fold(0u8, |a, (i, x)| a | (u8::from(*x >= 0.0) << i))));
    }
    b
}

/// A block's magic, counts, ids and scales, with room for `rows × dim` values of `width` bytes.
fn block_start(magic: &[u8; 4], ids: &[u32], scales: impl Iterator<Item = f32>, rows: usize, dim: usize, width: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(12 + rows * (8 + width * dim));
    b.extend_from_slice(magic);
    b.extend_from_slice(&(rows as u32).to_le_bytes());
    b.extend_from_slice(&(dim as u32).to_le_bytes());
    for id in ids {
        b.extend_from_slice(&id.to_le_bytes());
    }
    for s in scales {
        b.extend_from_slice(&s.to_le_bytes());
    }
    b
}

/// Largest magnitude of a value in the store's IVF lists (12 bits signed): with it, the SIMD
/// dot product's 32-bit lanes cannot overflow ([`dot_i16`]).
pub const LIST_MAX: f32 = crate::embed::vecmath::I12_MAX;

/// An IVF list of the store: the [`vec_block`] layout with magic `WRL1` and the values as
/// little-endian i16 of at most ±[`LIST_MAX`] ([`quantize_i12`]).
pub fn list_block(ids: &[u32], rows: &[(f32, Vec<i16>)], dim: usize) -> Vec<u8> {
    let mut b = block_start(b"WRL1", ids, rows.iter().map(|r| r.0), rows.len(), dim, 2);
    for (_, q) in rows {
        for x in q {
            b.extend_from_slice(&x.to_le_bytes());
        }
    }
    b
}

/// A decoded [`list_block`].
#[derive(Debug, Clone, PartialEq)]
pub struct VecBlock {
    /// Dimension.
    pub dim: usize,
    /// Row ids.
    pub ids: Vec<u32>,
    /// Row scales.
    pub scales: Vec<f32>,
    /// Row values, `rows × dim`.
    pub codes: Vec<i16>,
}

impl VecBlock {
    /// Reads a [`list_block`]; `None` when the bytes are not one (or hold a value past
    /// ±[`LIST_MAX`], or a scale that is not finite).
    pub fn parse(b: &[u8]) -> Option<VecBlock> {
        let u32_at = |i: usize| b.get(i..i + 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]));
        if b.get(..4)? != b"WRL1" {
            return None;
        }
        let (rows, dim) = (u32_at(4)? as usize, u32_at(8)? as usize);
        let need = 12usize.checked_add(rows.checked_mul(8usize.checked_add(dim.checked_mul(2)?)?)?)?;
        if b.len() != need {
            return None;
        }
        let ids = (0..rows).map(|i| u32_at(12 + 4 * i)).collect::<Option<Vec<u32>>>()?;
        let at = 12 + 4 * rows;
        let scales = (0..rows).map(|i| u32_at(at + 4 * i).map(f32::from_bits).filter(|s| s.is_finite())).collect::<Option<Vec<f32>>>()?;
        let codes: Vec<i16> = b[at + 4 * rows..].chunks_exact(2).map(|p| i16::from_le_bytes([p[0], p[1]])).collect();
        if codes.iter().any(|c| (*c as f32).abs() > LIST_MAX) {
            return None;
        }
        Some(VecBlock { dim, ids, scales, codes })
    }
    /// `(id, estimate)` of every row: the inner product of the row's values with `q` quantized
    /// the same way, times both scales — integer arithmetic (SIMD on wasm), within about 1e-3 of
    /// the f32 inner product of unit vectors.
    pub fn scores<'a>(&'a self, q: &'a QueryCodes) -> impl Iterator<Item = (u32, f32)> + 'a {
        let dim = self.dim.max(1);
        self.ids
            .iter()
            .zip(&self.scales)
            .zip(self.codes.chunks_exact(dim))
            .map(move |((&id, &s), row)| (id, s * q.scale * dot_i16(row, &q.codes) as f32))
    }
}

/// A query vector quantized for [`VecBlock::scores`].
#[derive(Debug, Clone, PartialEq)]
pub struct QueryCodes {
    scale: f32,
    codes: Vec<i16>,
}

impl QueryCodes {
    /// Quantizes `q` ([`quantize_i12`]).
    pub fn new(q: &[f32]) -> Self {
        let (scale, codes) = quantize_i12(q);
        QueryCodes { scale, codes }
    }
}

/// A chunk as a base indexes it.
pub struct BaseChunk<'a> {
    /// Chunk id.
    pub id: &'a str,
    /// Its document's id.
    pub doc_id: &'a str,
    /// Its BM25 terms and length.
    pub posting: &'a PostingRecord,
    /// Its embedding.
    pub vector: &'a [f32],
}

/// Builds a base over `chunks` (ordinal = position) with `document_count` documents: the records of
/// every [`SegmentKey`] of it, each with its bytes, the delta empty. Deterministic.
pub fn build_base(chunks: &[BaseChunk<'_>], document_count: u64, dim: usize) -> Vec<(SegmentKey, Vec<u8>)> {
    use std::collections::BTreeMap;
    let n = chunks.len();
    let mut inverted: BTreeMap<&str, Vec<(u32, u32)>> = BTreeMap::new();
    let mut total = 0usize;
    for (o, c) in chunks.iter().enumerate() {
        for (t, tf) in &c.posting.terms {
            inverted.entry(t.as_str()).or_default().push((o as u32, *tf));
            total += 1;
        }
    }
    let blocks = (total / BLOCK_POSTINGS).max(1).next_power_of_two() as u32;
    let mut parts: Vec<PostingsBlock> = vec![Vec::new(); blocks as usize];
    let nf = n as f32;
    let mut okapi_idf_sum = 0f64;
    for (t, list) in &inverted {
        let df = list.len() as f32;
        okapi_idf_sum += ((nf - df + 0.5) / (df + 0.5)).ln() as f64;
        parts[block_of(t, blocks) as usize].push((t.to_string(), list.clone()));
    }
    let vectors: Vec<&[f32]> = chunks.iter().map(|c| c.vector).collect();
    let (cents, list_records) = ivf(&vectors, dim);
    let mut documents: Vec<String> = chunks.iter().map(|c| c.doc_id.to_string()).collect();
    crate::sort::ascending(&mut documents);
    documents.dedup();
    let head = SegmentHead {
        format: SEGMENT_FORMAT,
        chunks: chunks.iter().map(|c| c.id.to_string()).collect(),
        lengths: chunks.iter().map(|c| c.posting.length.max(1)).collect(),
        doc_of: chunks.iter().map(|c| documents.binary_search_by(|d| d.as_str().cmp(c.doc_id)).unwrap_or(0) as u32).collect(),
        documents,
        blocks,
        terms: inverted.len() as u64,
        okapi_idf_sum,
        dim: dim as u32,
        centroids: cents.iter().flatten().copied().collect(),
    };
    let mut out = vec![
        (SegmentKey::Head, postcard::to_allocvec(&head).unwrap_or_default()),
        (SegmentKey::Delta, postcard::to_allocvec(&Delta { documents: document_count, ..Delta::default() }).unwrap_or_default()),
    ];
    for (b, part) in parts.iter().enumerate() {
        out.push((SegmentKey::Terms(b as u32), postcard::to_allocvec(part).unwrap_or_default()));
    }
    out.extend(list_records.into_iter().enumerate().map(|(l, b)| (SegmentKey::List(l as u32), b)));
    out
}

/// IVF over `vectors`: centroids trained on a stride sample, every vector assigned; the
/// centroids and each list's `WRL1` block (members by position in `vectors`).
fn ivf(vectors: &[&[f32]], dim: usize) -> (Vec<Vec<f32>>, Vec<Vec<u8>>) {
    let n = vectors.len();
    let lists = if n == 0 { 0 } else { n.div_ceil(LIST_SIZE) };
    let stride = n.div_ceil(KMEANS_SAMPLE).max(1);
    let sample: Vec<&[f32]> = vectors.iter().step_by(stride).copied().collect();
    let cents = if lists == 0 { Vec::new() } else { kmeans_train(&sample, lists, KMEANS_ITERATIONS) };
    let which = assign(vectors, &cents);
    let blocks = (0..cents.len())
        .map(|l| {
            let members: Vec<u32> = which.iter().enumerate().filter(|(_, a)| **a == l).map(|(i, _)| i as u32).collect();
            let rows: Vec<(f32, Vec<i16>)> = members.iter().map(|&i| quantize_i12(vectors[i as usize])).collect();
            list_block(&members, &rows, dim)
        })
        .collect();
    (cents, blocks)
}

/// An atomic question as a base indexes it.
pub struct BaseQuestion<'a> {
    /// Its chunk's ordinal in the base.
    pub chunk: u32,
    /// Its index among its chunk's questions.
    pub index: u32,
    /// Its embedding.
    pub vector: &'a [f32],
}

/// The question records of a base over `questions` (question ordinal = position): `q/head` and
/// the `q/…` lists, an empty question delta; nothing when there are none. Deterministic.
pub fn build_questions(questions: &[BaseQuestion<'_>], dim: usize) -> Vec<(SegmentKey, Vec<u8>)> {
    if questions.is_empty() {
        return Vec::new();
    }
    let vectors: Vec<&[f32]> = questions.iter().map(|q| q.vector).collect();
    let (cents, blocks) = ivf(&vectors, dim);
    let head = QuestionHead {
        entries: questions.iter().map(|q| (q.chunk, q.index)).collect(),
        dim: dim as u32,
        centroids: cents.iter().flatten().copied().collect(),
    };
    let mut out = vec![
        (SegmentKey::QuestionHead, postcard::to_allocvec(&head).unwrap_or_default()),
        (SegmentKey::QuestionDelta, postcard::to_allocvec(&QuestionDelta::new()).unwrap_or_default()),
    ];
    out.extend(blocks.into_iter().enumerate().map(|(l, b)| (SegmentKey::QuestionList(l as u32), b)));
    out
}

/// Encodes a question delta record.
pub fn encode_question_delta(d: &QuestionDelta) -> Vec<u8> {
    postcard::to_allocvec(d).unwrap_or_default()
}

/// Decodes a postcard segment record (head, delta or postings block).
pub fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    postcard::from_bytes(bytes).map_err(|e| e.to_string())
}

/// Encodes a delta record.
pub fn encode_delta(d: &Delta) -> Vec<u8> {
    postcard::to_allocvec(d).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// int4 rows: two values a byte, the first in the low four bits, two's complement, an odd
    /// dimension's last byte padded; within half a step (scale / 2) of the vector.
    #[test]
    fn sign_block_packs_eight_components_a_byte_lowest_bit_first() {
        let v = [0.5f32, -0.1, 0.0, -2.0, 1.0, 1.0, -1.0, 0.3, -0.7, 0.2];
        let b = vec_block_sign(b"WRB1", &[0, 1], &[v.to_vec(), v.iter().map(|x| -x).collect()], 10);
        assert_eq!(&b[..12], [&b"WRB1"[..], &2u32.to_le_bytes(), &10u32.to_le_bytes()].concat());
        assert_eq!(&b[12..20], [0u32.to_le_bytes(), 1u32.to_le_bytes()].concat());
        assert_eq!(f32::from_le_bytes(b[20..24].try_into().unwrap()), 1.0 / 10f32.sqrt());
        // Signs ≥ 0 at 0, 2, 4, 5, 7 and 9; each row ⌈10 / 8⌉ = 2 bytes. The negated row: 0.0
        // stays ≥ 0, so component 2 is set in both.
        assert_eq!(&b[28..], [0b1011_0101, 0b10, 0b0100_1110, 0b01]);
    }

    #[test]
    fn int4_blocks_pack_two_values_a_byte_low_first() {
        let (scale, q) = crate::embed::vecmath::quantize_i4(&[0.7, -0.7, 0.1, -0.36, 0.0]);
        assert_eq!(q, [7, -7, 1, -4, 0]);
        assert!((scale - 0.1).abs() < 1e-6);
        let b = vec_block_i4(b"WRV4", &[9], &[(scale, q)], 5);
        assert_eq!(&b[..12], [&b"WRV4"[..], &1u32.to_le_bytes(), &5u32.to_le_bytes()].concat());
        assert_eq!(&b[12..20], [9u32.to_le_bytes(), scale.to_le_bytes()].concat());
        assert_eq!(&b[20..], [0x97, 0xc1, 0x00]); // (7, −7 = 0x9), (1, −4 = 0xc), (0, pad)
        assert_eq!(crate::embed::vecmath::quantize_i4(&[0.0; 3]), (0.0, vec![0; 3]));
        assert_eq!(crate::embed::vecmath::quantize_i4(&[f32::INFINITY, 1.0]), (0.0, vec![0; 2]));
    }

    /// The blocked matrix-product assignment picks what a dot product per pair picks, across
    /// block edges, with odd shapes and a short vector.
    #[test]
    fn assign_by_matrix_product_equals_the_pairwise_argmax() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let (n, k, dim) = (700, 37, 53);
        let mut vs: Vec<Vec<f32>> = (0..n).map(|_| (0..dim).map(|_| rng.random_range(-1.0f32..1.0)).collect()).collect();
        vs[5].truncate(20);
        let cents: Vec<Vec<f32>> = (0..k).map(|_| (0..dim).map(|_| rng.random_range(-1.0f32..1.0)).collect()).collect();
        let refs: Vec<&[f32]> = vs.iter().map(Vec::as_slice).collect();
        let got = assign(&refs, &cents);
        for (i, v) in vs.iter().enumerate() {
            let score = |c: &Vec<f32>| v.iter().zip(c).map(|(a, b)| a * b).sum::<f32>();
            let best = (0..k).max_by(|&a, &b| score(&cents[a]).total_cmp(&score(&cents[b])).then(b.cmp(&a))).unwrap();
            assert!(got[i] == best || (score(&cents[got[i]]) - score(&cents[best])).abs() < 1e-4, "vector {i}: {} vs {best}", got[i]);
        }
        assert_eq!(assign(&refs, &cents[..1]), vec![0; n]);
        assert!(assign(&[], &cents).is_empty());
    }

    /// Reference values of FNV-1a 32 (the empty string is the offset basis).
    #[test]
    fn fnv1a_reference_values() {
        assert_eq!(fnv1a(""), 0x811c9dc5);
        assert_eq!(fnv1a("a"), 0xe40c292c);
        assert_eq!(fnv1a("foobar"), 0xbf9cf968);
    }

    #[test]
    fn quantization_round_trips_within_half_a_step() {
        let v = [0.5f32, -0.25, 0.0, 0.125];
        let (s, q) = crate::embed::vecmath::quantize_i8(&v);
        for (x, y) in v.iter().zip(&q) {
            assert!((x - s * *y as f32).abs() <= s / 2.0 + 1e-7);
        }
        assert_eq!(q[0], 127);
    }

    #[test]
    fn list_block_round_trip_and_rejects_bad_bytes() {
        let rows = vec![quantize_i12(&[0.5, -1.0, 0.25]), quantize_i12(&[0.0, 0.0, 0.0])];
        let b = list_block(&[7, 9], &rows, 3);
        let v = VecBlock::parse(&b).expect("parses");
        assert_eq!((v.ids.clone(), v.dim, v.codes.len()), (vec![7, 9], 3, 6));
        let s: Vec<(u32, f32)> = v.scores(&QueryCodes::new(&[0.5, -1.0, 0.25])).collect();
        assert!((s[0].1 - 1.3125).abs() < 1e-3, "{s:?}");
        assert_eq!(s[1].1, 0.0);
        // Exact integer sums, also past the point where 32-bit lanes are flushed (64 steps).
        let long: Vec<f32> = (0..1000).map(|i| ((i * 7 % 13) as f32 - 6.0) / 6.0).collect();
        let (x, y) = (quantize_i12(&long).1, quantize_i12(&long.iter().rev().copied().collect::<Vec<_>>()).1);
        let naive: i64 = x.iter().zip(&y).map(|(p, q)| *p as i64 * *q as i64).sum();
        assert_eq!(dot_i16(&x, &y), naive);
        let extreme = vec![LIST_MAX as i16; 4096];
        assert_eq!(dot_i16(&extreme, &extreme), 4096 * 2047 * 2047);
        let mut wrong = b.clone();
        wrong[..4].copy_from_slice(b"WRV1");
        assert!(VecBlock::parse(&wrong).is_none());
        assert!(VecBlock::parse(&b[..b.len() - 1]).is_none());
        assert!(VecBlock::parse(&[]).is_none());
        let mut huge = b.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(VecBlock::parse(&huge).is_none());
        let mut past = b.clone();
        let at = past.len() - 2;
        past[at..].copy_from_slice(&4000i16.to_le_bytes());
        assert!(VecBlock::parse(&past).is_none(), "a value past ±2047");
    }

    #[test]
    fn base_holds_every_posting_once_and_every_vector_in_one_list() {
        let posts: Vec<PostingRecord> = (0..50)
            .map(|i| PostingRecord {
                id: format!("d{i}#0"),
                length: 3,
                terms: vec![(format!("t{}", i % 7), 1), ("common".into(), 2), (format!("u{i}"), 1)],
            })
            .collect();
        let vecs: Vec<Vec<f32>> = (0..50).map(|i| vec![(i as f32).cos(), (i as f32).sin()]).collect();
        let docs: Vec<String> = (0..50).map(|i| format!("d{i}")).collect();
        let chunks: Vec<BaseChunk<'_>> =
            posts.iter().zip(&vecs).zip(&docs).map(|((p, v), d)| BaseChunk { id: &p.id, doc_id: d, posting: p, vector: v }).collect();
        let recs = build_base(&chunks, 50, 2);
        let head: SegmentHead = decode(&recs[0].1).expect("head");
        assert_eq!((head.chunks.len(), head.terms, head.lists(), head.documents.len()), (50, 1 + 7 + 50, 1, 50));
        assert!(head.doc_of.iter().enumerate().all(|(o, d)| head.documents[*d as usize] == format!("d{o}")));
        let mut postings = 0;
        let mut rows = Vec::new();
        for (k, bytes) in &recs[2..] {
            match k {
                SegmentKey::Terms(b) => {
                    let block: PostingsBlock = decode(bytes).expect("block");
                    for (t, l) in &block {
                        assert_eq!(block_of(t, head.blocks), *b);
                        postings += l.len();
                    }
                }
                SegmentKey::List(_) => rows.extend(VecBlock::parse(bytes).expect("list").ids),
                _ => unreachable!(),
            }
        }
        assert_eq!(postings, 150);
        crate::sort::ascending(&mut rows);
        assert_eq!(rows, (0..50).collect::<Vec<u32>>());
    }
}
