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
use std::io::{Read, Write};

use serde::{Deserialize, Serialize};

use crate::error::{InputError, Result, StoreError};
use crate::ports::{Collection, Contents, GENERATION_KEY, Record, Store};
use crate::schema::MetaRecord;
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
///
/// Errors: [`StoreError::Backend`] when writing fails.
pub fn encode(contents: &Contents, model: &str, dim: usize, level: flate2::Compression) -> Result<Vec<u8>> {
    let mut w = Writer::new(model, dim, stored_schema(&contents.meta), level, Vec::new())?;
    wire::write_contents(&mut w, contents)?;
    w.finish()
}

/// The records a streamed export reads from the store at a time ([`export`]), of a collection of
/// small records.
pub const EXPORT_PAGE: usize = 512;

/// The records of `collection` an export reads at a time: [`EXPORT_PAGE`], but one sealed HNSW
/// segment (tens of MB at 100k chunks) and 16 index segments (IVF lists: about 0.8 MB each).
fn export_page(collection: Collection) -> usize {
    match collection {
        Collection::Ann => 1,
        Collection::Segments => 16,
        _ => EXPORT_PAGE,
    }
}

/// The knowledge base in `store` as a knowledge-base file, read a page of records at a time
/// ([`Store::scan_page`]: [`EXPORT_PAGE`], fewer of the large ones), so no more than a page of
/// records and the file itself are in memory; the same bytes [`encode`] writes of the store's
/// contents. The
/// generation record (the store's commit count) is left out. When another engine over the
/// store (another tab) commits while the pages are read, the export fails with
/// [`StoreError::Conflict`] (call again: [`crate::ports::retry_on_conflict`]).
///
/// Errors: store errors; [`StoreError::Conflict`] as above.
pub async fn export<S: Store + ?Sized>(store: &S, model: &str, dim: usize, level: flate2::Compression) -> Result<Vec<u8>> {
    export_to(store, model, dim, level, Vec::new()).await
}

/// [`export`] into `sink`, which gets the compressed file as it is written (the page's worker
/// hands it out in pieces, so the file is never whole in its wasm memory); returns the sink.
///
/// Errors: as [`export`]; [`StoreError::Backend`] when the sink fails.
pub async fn export_to<S: Store + ?Sized, W: Write>(store: &S, model: &str, dim: usize, level: flate2::Compression, sink: W) -> Result<W> {
    let held = |meta: &[Record]| {
        let m: Vec<MetaRecord> = meta.iter().filter_map(|r| if let Record::Meta(m) = r { Some(m.clone()) } else { None }).collect();
        crate::ports::generation_of(&m)
    };
    let meta = store.scan_page(Collection::Meta, None, usize::MAX).await?;
    let generation = held(&meta);
    let schema =
        stored_schema(&meta.iter().filter_map(|r| if let Record::Meta(m) = r { Some(m.clone()) } else { None }).collect::<Vec<_>>());
    let mut w = Writer::new(model, dim, schema, level, sink)?;
    for collection in Collection::ALL {
        let mut after: Option<String> = None;
        loop {
            let limit = export_page(collection);
            let page = store.scan_page(collection, after.as_deref(), limit).await?;
            for r in &page {
                if !matches!(r, Record::Meta(m) if m.id == GENERATION_KEY) {
                    w.record(r)?;
                }
            }
            if page.len() < limit {
                break;
            }
            after = page.last().map(|r| r.key().to_string());
        }
    }
    let now = held(&store.scan_page(Collection::Meta, None, usize::MAX).await?);
    if now != generation {
        return Err(StoreError::Conflict { expected: generation, found: now }.into());
    }
    w.finish()
}

/// The schema the `meta` records name ([`SCHEMA_VERSION`] when none).
fn stored_schema(meta: &[MetaRecord]) -> u32 {
    meta.iter().find(|m| m.id == "schema").and_then(|m| serde_json::from_str::<u32>(&m.value).ok()).unwrap_or(SCHEMA_VERSION)
}

/// A knowledge-base file written a record at a time: the wrapper, then each collection's
/// records in [`Collection::ALL`] order (those of one collection together), then the end
/// ([`Writer::finish`]). [`encode`] and the streamed [`export`] both write through it.
pub struct Writer<W: Write> {
    out: std::io::BufWriter<flate2::write::GzEncoder<W>>,
    /// The collections opened so far (the last is open).
    opened: usize,
    /// Whether the open collection has a record yet.
    any: bool,
}

fn backend(e: &dyn std::fmt::Display) -> crate::error::Error {
    StoreError::Backend { reason: format!("writing a knowledge-base file: {e}") }.into()
}

impl<W: Write> Writer<W> {
    /// Starts a file of records that follow store schema `schema`, embedded with `model` of
    /// dimension `dim`, compressed at `level` into `sink`.
    ///
    /// Errors: [`StoreError::Backend`] when writing fails.
    pub fn new(model: &str, dim: usize, schema: u32, level: flate2::Compression, sink: W) -> Result<Writer<W>> {
        let gz = flate2::GzBuilder::new().mtime(0).write(sink, level);
        // The serializer writes token by token; the compressor gets them in 1 MiB pieces. Fed
        // directly, each write cleared flate2's 32 KiB output buffer again (`Vec::resize`): 71%
        // of a 17,364-page site's 52 s build-cache write went to that `memset`.
        let mut out = std::io::BufWriter::with_capacity(1 << 20, gz);
        let text = |v: &str| serde_json::to_string(v).unwrap_or_default();
        write!(
            out,
            "{{\"format\":{},\"version\":{VERSION},\"schema\":{schema},\"model\":{},\"dim\":{dim},\"contents\":{{",
            text(FORMAT),
            text(model)
        )
        .map_err(|e| backend(&e))?;
        Ok(Writer { out, opened: 0, any: false })
    }

    /// Writes one record (after those of its collection and of every collection before it).
    ///
    /// Errors: [`StoreError::Backend`] when writing fails, or for a record of a collection
    /// already closed (written out of order).
    pub fn record(&mut self, r: &Record) -> Result<()> {
        self.item(r.collection(), &wire::RecordOut::new(r))
    }

    /// Writes one item of `collection`'s list.
    fn item<T: serde::Serialize>(&mut self, collection: Collection, item: &T) -> Result<()> {
        self.open(collection)?;
        if self.any {
            self.out.write_all(b",").map_err(|e| backend(&e))?;
        }
        self.any = true;
        serde_json::to_writer(&mut self.out, item).map_err(|e| backend(&e))
    }

    /// Closes the open collection and opens each one after it up to `collection` (those between
    /// written empty).
    fn open(&mut self, collection: Collection) -> Result<()> {
        let at = Collection::ALL.iter().position(|c| *c == collection).unwrap_or(usize::MAX);
        if at.checked_add(1) == Some(self.opened) {
            return Ok(());
        }
        if at < self.opened || at == usize::MAX {
            return Err(backend(&format!("{} written after a later collection", collection.name())));
        }
        while self.opened <= at {
            let sep = if self.opened > 0 { "]," } else { "" };
            // The file's list names are the collections' own ([`Contents`]' fields).
            write!(self.out, "{sep}\"{}\":[", Collection::ALL[self.opened].name()).map_err(|e| backend(&e))?;
            self.opened += 1;
            self.any = false;
        }
        Ok(())
    }

    /// Ends the file (the collections not written yet, empty) and returns the sink.
    ///
    /// Errors: [`StoreError::Backend`] when writing fails.
    pub fn finish(mut self) -> Result<W> {
        if let Some(&last) = Collection::ALL.last() {
            self.open(last)?;
        }
        self.out.write_all(b"]}}").map_err(|e| backend(&e))?;
        let gz = self.out.into_inner().map_err(|e| backend(&e.into_error()))?;
        gz.finish().map_err(|e| backend(&e))
    }
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
                lang: Some("fr".into()),
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
