//! The knowledge-base file (`exportKb()` / `importKb()`, `webrag export` / `webrag import`): every
//! record of a knowledge base, in the store's own record format, as one gzip-compressed JSON
//! document, so a notes collection moves between browsers and machines (docs/kb-file.md).
//!
//! ```text
//! gzip( {"format": "webrag-kb", "version": 2, "schema": 4, "model": "…", "dim": 384,
//!        "contents": {"meta": […], "documents": […], "chunks": […], "vectors": […], …}} )
//! ```
//!
//! Byte strings (vector data, HNSW segments, memory embeddings, index segments) are base64
//! strings (RFC 4648 §4, padded) since layout 2; layout 1 wrote them as arrays of numbers
//! (about 3.5 times the text and many times the time to write and read), and is still read.
//!
//! `contents` holds the records of every collection ([`Contents`], the shapes of
//! docs/vector-index.md), so importing is writing them back: nothing is re-parsed or re-embedded,
//! and sealed HNSW segments, atomic questions, memory and traces come along. `schema` is the
//! store schema the records follow; an older one is migrated on import as the store would be
//! on open.
use std::io::Read;

use serde::{Deserialize, Serialize};

use crate::error::{InputError, Result, StoreError};
use crate::ports::Contents;
use crate::schema::SCHEMA_VERSION;

mod wire;

/// The `format` field.
pub const FORMAT: &str = "webrag-kb";
/// The version of this file layout (the wrapper and the byte strings' encoding; the records
/// follow `schema`).
pub const VERSION: u32 = 2;
/// The largest file [`decode`] inflates, bytes uncompressed (4 GiB).
pub const MAX_INFLATED_BYTES: u64 = 4 << 30;
/// The most a file may inflate relative to its own size, past [`INFLATE_SLACK_BYTES`]: webrag's
/// files inflate about 2× (base64 vectors barely compress), text-only ones under 10×; a gzip bomb
/// inflates about 1,000×.
pub const MAX_INFLATE_RATIO: u64 = 64;
/// What any file may inflate to whatever its size (16 MiB).
pub const INFLATE_SLACK_BYTES: u64 = 16 << 20;

/// The inflation limit of a file of `len` bytes: [`MAX_INFLATE_RATIO`] × `len` +
/// [`INFLATE_SLACK_BYTES`], at most [`MAX_INFLATED_BYTES`].
pub fn inflate_limit(len: usize) -> u64 {
    (len as u64).saturating_mul(MAX_INFLATE_RATIO).saturating_add(INFLATE_SLACK_BYTES).min(MAX_INFLATED_BYTES)
}

/// A reader that fails once more than `left` bytes were read through it, and says so.
struct Capped<R> {
    inner: R,
    left: u64,
    over: bool,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        match self.left.checked_sub(n as u64) {
            Some(left) => {
                self.left = left;
                Ok(n)
            }
            None => {
                self.over = true;
                Err(std::io::Error::other("inflation limit"))
            }
        }
    }
}

/// A decoded knowledge-base file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KbFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// The file layout version ([`VERSION`]).
    pub version: u32,
    /// The store schema of the records.
    pub schema: u32,
    /// The embedding model the vectors come from.
    pub model: String,
    /// Its dimension.
    pub dim: usize,
    /// Every record.
    pub contents: Contents,
}

/// [`InputError::InvalidKbFile`] with `reason`.
pub(crate) fn invalid(reason: impl Into<String>) -> crate::error::Error {
    InputError::InvalidKbFile { reason: reason.into() }.into()
}

/// Writes `contents` (a whole store, as [`crate::ports::Store::load`] returns it) as a
/// knowledge-base file, gzip-compressed at `level` (`Compression::default()` for files people
/// move; `fast()` for a build cache written on every build).
pub fn encode(contents: &Contents, model: &str, dim: usize, level: flate2::Compression) -> Result<Vec<u8>> {
    #[derive(Serialize)]
    struct Out<'a> {
        format: &'a str,
        version: u32,
        schema: u32,
        model: &'a str,
        dim: usize,
        contents: wire::ContentsOut<'a>,
    }
    let schema =
        contents.meta.iter().find(|m| m.id == "schema").and_then(|m| serde_json::from_str::<u32>(&m.value).ok()).unwrap_or(SCHEMA_VERSION);
    let out = Out { format: FORMAT, version: VERSION, schema, model, dim, contents: wire::ContentsOut::new(contents) };
    let gz = flate2::GzBuilder::new().mtime(0).write(Vec::new(), level);
    // The serializer writes token by token; the compressor gets them in 1 MiB pieces. Fed
    // directly, each write cleared flate2's 32 KiB output buffer again (`Vec::resize`): 71% of
    // a 17,364-page site's 52 s build-cache write went to that `memset`.
    let mut w = std::io::BufWriter::with_capacity(1 << 20, gz);
    let backend = |e: &dyn std::fmt::Display| StoreError::Backend { reason: e.to_string() };
    serde_json::to_writer(&mut w, &out).map_err(|e| backend(&e))?;
    let gz = w.into_inner().map_err(|e| backend(&e.into_error()))?;
    Ok(gz.finish().map_err(|e| backend(&e))?)
}

/// Reads a knowledge-base file. It is parsed as it inflates (the JSON text is never held whole)
/// and inflated at most [`inflate_limit`]`(bytes.len())` bytes.
///
/// Errors: [`InputError::InvalidKbFile`] (not gzip, not JSON, another `format`, a newer
/// layout `version`, records that do not decode); [`InputError::KbFileTooLarge`] (it inflates
/// past the limit); [`StoreError::VersionTooNew`] when its records follow a newer store schema
/// than this build's.
pub fn decode(bytes: &[u8]) -> Result<KbFile> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(invalid("not a gzip file (a webrag knowledge-base file is gzip-compressed JSON)"));
    }
    let limit = inflate_limit(bytes.len());
    let reader = || Capped { inner: flate2::read::GzDecoder::new(bytes), left: limit, over: false };
    let mut r = reader();
    let parsed: std::result::Result<In, serde_json::Error> = serde_json::from_reader(std::io::BufReader::with_capacity(1 << 16, &mut r));
    if r.over {
        return Err(InputError::KbFileTooLarge { limit }.into());
    }
    match parsed {
        Ok(f) => {
            check_header(Some(&f.format), Some(f.version), Some(f.schema))?;
            Ok(KbFile { format: f.format, version: f.version, schema: f.schema, model: f.model, dim: f.dim, contents: f.contents.into() })
        }
        Err(records) => {
            // The header alone (the rest skipped as it streams by), so another file or a newer
            // layout is named as such rather than as a record that does not decode.
            let mut r = reader();
            match serde_json::from_reader::<_, Header>(std::io::BufReader::with_capacity(1 << 16, &mut r)) {
                Err(e) if e.is_io() => Err(invalid(format!("gzip: {e}"))),
                Err(e) => Err(invalid(format!("not JSON: {e}"))),
                Ok(h) => {
                    check_header(h.format.as_deref(), h.version, h.schema)?;
                    Err(invalid(format!("records: {records}")))
                }
            }
        }
    }
}

/// The wrapper's fields.
#[derive(Deserialize)]
struct Header {
    format: Option<String>,
    version: Option<u32>,
    schema: Option<u32>,
}

/// The whole file.
#[derive(Deserialize)]
struct In {
    format: String,
    version: u32,
    schema: u32,
    model: String,
    dim: usize,
    contents: wire::ContentsIn,
}

/// Checks the wrapper: this format, a layout and a schema this build reads.
fn check_header(format: Option<&str>, version: Option<u32>, schema: Option<u32>) -> Result<()> {
    if format != Some(FORMAT) {
        return Err(invalid(format!("format is {:?}, not {FORMAT:?}", format.unwrap_or_default())));
    }
    match version {
        Some(v) if v <= VERSION => {}
        v => return Err(invalid(format!("file layout version {v:?}; this build reads up to {VERSION}"))),
    }
    if let Some(s) = schema.filter(|&s| s > SCHEMA_VERSION) {
        return Err(StoreError::VersionTooNew { name: "knowledge-base file".into(), found: s, supported: SCHEMA_VERSION }.into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{DocumentRecord, MetaRecord};
    use std::io::Write;

    fn sample() -> Contents {
        Contents {
            meta: vec![MetaRecord { id: "schema".into(), value: "4".into() }],
            documents: vec![DocumentRecord {
                id: "a|b #c/d?e 🦀".into(),
                title: "T".into(),
                url: None,
                source_hash: "h".into(),
                added_at: 1.0,
                chunk_count: 0,
                status: "indexed".into(),
                mind_map: None,
                tags: vec!["t".into()],
                auto_tags: Vec::new(),
                tagged: false,
                meta: Default::default(),
            }],
            ..Contents::default()
        }
    }

    #[test]
    fn round_trip() {
        let bytes = encode(&sample(), "m", 3, flate2::Compression::default()).unwrap();
        let f = decode(&bytes).unwrap();
        assert_eq!((f.format.as_str(), f.version, f.schema, f.model.as_str(), f.dim), (FORMAT, VERSION, 4, "m", 3));
        assert_eq!(f.contents, sample());
        // Deterministic: no time in the gzip header.
        assert_eq!(bytes, encode(&sample(), "m", 3, flate2::Compression::default()).unwrap());
    }

    #[test]
    fn byte_strings_are_base64_and_layout_1_still_reads() {
        let mut c = sample();
        c.vectors.push(crate::schema::VectorRecord::from_f32("c1", "chunks", &[1.0, -2.5]));
        // Every record kind with a byte string goes through the file's own shapes and back.
        c.ann.push(crate::schema::AnnSegmentRecord {
            id: "chunks/0000000001".into(),
            collection: "chunks".into(),
            seq: 1,
            ids: vec!["c1".into()],
            data: vec![0, 1, 254, 255],
            format: 2,
        });
        c.memory.push(crate::schema::MemoryRecord {
            id: "m1-0".into(),
            title: "q".into(),
            content: "a".into(),
            sources: vec!["c1".into()],
            created_at: 1.5,
            embedding: vec![7; 8],
        });
        c.segments.push(crate::schema::SegmentRecord { id: "s".into(), data: vec![] });
        let bytes = encode(&c, "m", 2, flate2::Compression::fast()).unwrap();
        let mut json = String::new();
        flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut json).unwrap();
        assert!(json.contains(r#""data":"AACAPwAAIMA=""#), "{json}");
        assert_eq!(decode(&bytes).unwrap().contents, c);
        // Layout 1: the same bytes as an array of numbers.
        let gz = |s: &str| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(s.as_bytes()).unwrap();
            e.finish().unwrap()
        };
        let v1 = r#"{"format":"webrag-kb","version":1,"schema":4,"model":"m","dim":2,"contents":{"meta":[],"documents":[],"chunks":[],"postings":[],
            "vectors":[{"id":"c1","collection":"chunks","data":[0,0,128,63,0,0,32,192]}]}}"#;
        let f = decode(&gz(v1)).unwrap();
        assert_eq!(f.contents.vectors[0].to_f32().unwrap(), [1.0, -2.5]);
        // Not base64, or a number past 255: a typed error.
        for bad in [r#""data":"@@@""#, r#""data":[256]"#] {
            let s = v1.replace(r#""data":[0,0,128,63,0,0,32,192]"#, bad);
            assert_eq!(decode(&gz(&s)).unwrap_err().code(), "KB_FILE_INVALID", "{bad}");
        }
    }

    #[test]
    fn bad_files_are_typed_errors() {
        let gz = |s: &str| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(s.as_bytes()).unwrap();
            e.finish().unwrap()
        };
        let code = |b: &[u8]| decode(b).unwrap_err().code();
        assert_eq!(code(b"{\"format\":\"webrag-kb\"}"), "KB_FILE_INVALID"); // not gzip
        assert_eq!(code(&[0x1f, 0x8b, 1, 2, 3]), "KB_FILE_INVALID"); // truncated gzip
        assert_eq!(code(&gz("not json")), "KB_FILE_INVALID");
        assert_eq!(code(&gz(r#"{"format":"webrag-snapshot","version":3}"#)), "KB_FILE_INVALID");
        assert_eq!(code(&gz(r#"{"format":"webrag-kb","version":3,"schema":4}"#)), "KB_FILE_INVALID");
        assert_eq!(code(&gz(r#"{"format":"webrag-kb","version":1,"schema":99}"#)), "STORE_VERSION_TOO_NEW");
        assert_eq!(
            code(&gz(r#"{"format":"webrag-kb","version":1,"schema":4,"model":"m","dim":3,"contents":{"meta":7}}"#)),
            "KB_FILE_INVALID"
        );
        // A gzip bomb: 200 MiB of one JSON string from a file of about 200 KB stops at the limit.
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(br#"{"format":"webrag-kb","version":2,"schema":4,"model":"m","dim":3,"contents":{"meta":[{"id":"x","value":""#)
            .unwrap();
        let block = vec![b'a'; 1 << 20];
        for _ in 0..200 {
            e.write_all(&block).unwrap();
        }
        let bomb = e.finish().unwrap();
        assert!(inflate_limit(bomb.len()) < 64 << 20, "{}", bomb.len());
        let err = decode(&bomb).unwrap_err();
        assert_eq!(err.code(), "KB_FILE_TOO_LARGE", "{err}");
        let mut cut = encode(&sample(), "m", 3, flate2::Compression::default()).unwrap();
        cut.truncate(cut.len() / 2);
        assert_eq!(code(&cut), "KB_FILE_INVALID");
    }
}
