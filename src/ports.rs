//! Ports: the small async traits through which the core touches the world, with in-memory
//! implementations for native tests. Platform adapters live in `web` (IndexedDB) and `native`.
//!
//! The traits use `async fn` and are not `Send`: in the browser everything runs on one thread
//! (a Web Worker). The engine is generic over them, so no boxing is needed.
use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::error::StoreError;
use crate::schema::{
    AnnSegmentRecord, ChunkRecord, DocumentRecord, GraphEdgeRecord, GraphNodeRecord, MemoryRecord, MetaRecord, PostingRecord,
    QuestionRecord, SegmentRecord, TraceRecord, VectorRecord,
};
use crate::types::ProgressEvent;

/// Object stores (collections) of a knowledge base; docs/vector-index.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Collection {
    /// Schema version, model id and dimension, counters.
    Meta,
    /// One record per document.
    Documents,
    /// One record per chunk.
    Chunks,
    /// One embedding per chunk.
    Vectors,
    /// BM25 term frequencies per chunk.
    Postings,
    /// Pseudo-graph nodes (schema 2).
    GraphNodes,
    /// Pseudo-graph edges (schema 2).
    GraphEdges,
    /// Sealed HNSW segments of the vector collections (schema 3).
    Ann,
    /// Atomic questions per chunk (schema 4).
    Questions,
    /// The memory knowledge base (schema 4).
    Memory,
    /// Kept ask traces (schema 4).
    Traces,
    /// The stored index segments (schema 5).
    Segments,
}

impl Collection {
    /// Every collection, in schema order.
    pub const ALL: [Collection; 12] = [
        Collection::Meta,
        Collection::Documents,
        Collection::Chunks,
        Collection::Vectors,
        Collection::Postings,
        Collection::GraphNodes,
        Collection::GraphEdges,
        Collection::Ann,
        Collection::Questions,
        Collection::Memory,
        Collection::Traces,
        Collection::Segments,
    ];
    /// The object-store name.
    pub fn name(self) -> &'static str {
        match self {
            Collection::Meta => "meta",
            Collection::Documents => "documents",
            Collection::Chunks => "chunks",
            Collection::Vectors => "vectors",
            Collection::Postings => "postings",
            Collection::GraphNodes => "graph_nodes",
            Collection::GraphEdges => "graph_edges",
            Collection::Ann => "ann",
            Collection::Questions => "questions",
            Collection::Memory => "memory",
            Collection::Traces => "traces",
            Collection::Segments => "segments",
        }
    }
}

/// A stored record of any collection.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// `meta`.
    Meta(MetaRecord),
    /// `documents`.
    Document(DocumentRecord),
    /// `chunks`.
    Chunk(ChunkRecord),
    /// `vectors`.
    Vector(VectorRecord),
    /// `postings`.
    Posting(PostingRecord),
    /// `graph_nodes`.
    GraphNode(GraphNodeRecord),
    /// `graph_edges`.
    GraphEdge(GraphEdgeRecord),
    /// `ann`.
    Ann(AnnSegmentRecord),
    /// `questions`.
    Question(QuestionRecord),
    /// `memory`.
    Memory(MemoryRecord),
    /// `traces`.
    Trace(TraceRecord),
    /// `segments`.
    Segment(SegmentRecord),
}

impl Record {
    /// The collection the record belongs to.
    pub fn collection(&self) -> Collection {
        match self {
            Record::Meta(_) => Collection::Meta,
            Record::Document(_) => Collection::Documents,
            Record::Chunk(_) => Collection::Chunks,
            Record::Vector(_) => Collection::Vectors,
            Record::Posting(_) => Collection::Postings,
            Record::GraphNode(_) => Collection::GraphNodes,
            Record::GraphEdge(_) => Collection::GraphEdges,
            Record::Ann(_) => Collection::Ann,
            Record::Question(_) => Collection::Questions,
            Record::Memory(_) => Collection::Memory,
            Record::Trace(_) => Collection::Traces,
            Record::Segment(_) => Collection::Segments,
        }
    }
    /// The record's key.
    pub fn key(&self) -> &str {
        match self {
            Record::Meta(r) => &r.id,
            Record::Document(r) => &r.id,
            Record::Chunk(r) => &r.id,
            Record::Vector(r) => &r.id,
            Record::Posting(r) => &r.id,
            Record::GraphNode(r) => &r.id,
            Record::GraphEdge(r) => &r.id,
            Record::Ann(r) => &r.id,
            Record::Question(r) => &r.id,
            Record::Memory(r) => &r.id,
            Record::Trace(r) => &r.id,
            Record::Segment(r) => &r.id,
        }
    }
}

/// The `meta` record that counts the commits of engines to a store (a JSON number; 0 when
/// absent). Every engine commit checks it ([`Op::CheckGeneration`]) and bumps it, so an engine
/// whose view is older than the store (another tab wrote since) cannot write over it.
pub const GENERATION_KEY: &str = "generation";

/// The largest generation read as such (2⁵³ − 1, a number JSON and JS hold exactly); a larger
/// stored value is unreadable, so the next generation (+1) never overflows.
pub const MAX_GENERATION: u64 = (1 << 53) - 1;

/// A stored generation value: 0 when unreadable or past [`MAX_GENERATION`] (every store and
/// engine reads it through this, so they agree on what an odd value means).
pub fn parse_generation(value: &str) -> u64 {
    value.parse().ok().filter(|g| *g <= MAX_GENERATION).unwrap_or(0)
}

/// The stored generation in `meta` records ([`GENERATION_KEY`]; 0 when absent or unreadable).
pub fn generation_of(meta: &[MetaRecord]) -> u64 {
    meta.iter().find(|m| m.id == GENERATION_KEY).map_or(0, |m| parse_generation(&m.value))
}

/// The stored generation in one `meta` record read by key (0 when absent or unreadable).
pub fn generation_in(r: Option<&Record>) -> u64 {
    match r {
        Some(Record::Meta(m)) => generation_of(std::slice::from_ref(m)),
        _ => 0,
    }
}

/// Commits `ops` guarded by the `generation` a view was read at: the batch first checks that the
/// store still holds it ([`Op::CheckGeneration`]) and ends by storing the next one, which it
/// returns. The one guarded commit of every engine write (an empty batch writes nothing and
/// returns `generation`).
///
/// Errors: [`StoreError::Conflict`] when another engine committed since (nothing is written);
/// the store's errors.
pub async fn commit_guarded<S: Store + ?Sized>(store: &S, generation: u64, mut ops: Vec<Op>) -> Result<u64, StoreError> {
    if ops.is_empty() {
        return Ok(generation);
    }
    ops.insert(0, Op::CheckGeneration(generation));
    // A generation is ≤ MAX_GENERATION (read through `parse_generation`): this never saturates.
    let next = generation.saturating_add(1);
    ops.push(Op::Put(Record::Meta(MetaRecord { id: GENERATION_KEY.into(), value: next.to_string() })));
    store.commit(ops).await?;
    Ok(next)
}

/// How many times a write that meets another engine's commit is tried in all
/// ([`retry_on_conflict`]).
pub const WRITE_ATTEMPTS: usize = 3;

/// Runs `op` — given the attempt's number, 1 first — again while it fails with
/// [`StoreError::Conflict`] (another engine over the same store, another tab, committed between
/// the write's read of the generation and its commit: nothing was written), `attempts` times in
/// all. The one conflict-retry loop: every write that can meet another engine's commit (the
/// page's writes, an open that migrates or repairs) goes through it.
///
/// Errors: `op`'s; [`StoreError::Conflict`] after the last attempt.
pub async fn retry_on_conflict<T>(
    attempts: usize,
    mut op: impl AsyncFnMut(usize) -> Result<T, crate::error::Error>,
) -> Result<T, crate::error::Error> {
    let mut attempt = 1;
    loop {
        match op(attempt).await {
            Err(crate::error::Error::Store(StoreError::Conflict { .. })) if attempt < attempts => attempt += 1,
            done => return done,
        }
    }
}

/// One write of a batch.
// Puts dominate a batch, and each record is moved into its op once: boxing it would add an
// allocation per record to save space on the (fewer) deletes.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Insert or overwrite a record.
    Put(Record),
    /// Delete a key (absent keys are ignored).
    Delete(Collection, String),
    /// A precondition: the batch applies only if the stored generation ([`GENERATION_KEY`])
    /// equals this, checked inside the same transaction; else the whole batch fails with
    /// [`StoreError::Conflict`] and nothing is written.
    CheckGeneration(u64),
}

/// [`StoreError::Conflict`] when a check of `ops` disagrees with the `stored` generation.
pub fn check_generation(stored: u64, ops: &[Op]) -> Result<(), StoreError> {
    for op in ops {
        if let Op::CheckGeneration(expected) = op
            && *expected != stored
        {
            return Err(StoreError::Conflict { expected: *expected, found: stored });
        }
    }
    Ok(())
}

/// Everything stored, as read at open.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Contents {
    /// `meta` records.
    pub meta: Vec<MetaRecord>,
    /// `documents` records.
    pub documents: Vec<DocumentRecord>,
    /// `chunks` records.
    pub chunks: Vec<ChunkRecord>,
    /// `vectors` records.
    pub vectors: Vec<VectorRecord>,
    /// `postings` records.
    pub postings: Vec<PostingRecord>,
    /// `graph_nodes` records.
    #[serde(default)]
    pub graph_nodes: Vec<GraphNodeRecord>,
    /// `graph_edges` records.
    #[serde(default)]
    pub graph_edges: Vec<GraphEdgeRecord>,
    /// `ann` records.
    #[serde(default)]
    pub ann: Vec<AnnSegmentRecord>,
    /// `questions` records.
    #[serde(default)]
    pub questions: Vec<QuestionRecord>,
    /// `memory` records.
    #[serde(default)]
    pub memory: Vec<MemoryRecord>,
    /// `traces` records.
    #[serde(default)]
    pub traces: Vec<TraceRecord>,
    /// `segments` records.
    #[serde(default)]
    pub segments: Vec<SegmentRecord>,
}

impl Contents {
    /// Adds `r` to its collection's list.
    pub fn push(&mut self, r: Record) {
        match r {
            Record::Meta(r) => self.meta.push(r),
            Record::Document(r) => self.documents.push(r),
            Record::Chunk(r) => self.chunks.push(r),
            Record::Vector(r) => self.vectors.push(r),
            Record::Posting(r) => self.postings.push(r),
            Record::GraphNode(r) => self.graph_nodes.push(r),
            Record::GraphEdge(r) => self.graph_edges.push(r),
            Record::Ann(r) => self.ann.push(r),
            Record::Question(r) => self.questions.push(r),
            Record::Memory(r) => self.memory.push(r),
            Record::Trace(r) => self.traces.push(r),
            Record::Segment(r) => self.segments.push(r),
        }
    }

    /// One `Put` per record, collection by collection (to copy a store into another).
    pub fn into_ops(self) -> Vec<Op> {
        let mut ops = Vec::new();
        ops.extend(self.meta.into_iter().map(|r| Op::Put(Record::Meta(r))));
        ops.extend(self.documents.into_iter().map(|r| Op::Put(Record::Document(r))));
        ops.extend(self.chunks.into_iter().map(|r| Op::Put(Record::Chunk(r))));
        ops.extend(self.vectors.into_iter().map(|r| Op::Put(Record::Vector(r))));
        ops.extend(self.postings.into_iter().map(|r| Op::Put(Record::Posting(r))));
        ops.extend(self.graph_nodes.into_iter().map(|r| Op::Put(Record::GraphNode(r))));
        ops.extend(self.graph_edges.into_iter().map(|r| Op::Put(Record::GraphEdge(r))));
        ops.extend(self.ann.into_iter().map(|r| Op::Put(Record::Ann(r))));
        ops.extend(self.questions.into_iter().map(|r| Op::Put(Record::Question(r))));
        ops.extend(self.memory.into_iter().map(|r| Op::Put(Record::Memory(r))));
        ops.extend(self.traces.into_iter().map(|r| Op::Put(Record::Trace(r))));
        ops.extend(self.segments.into_iter().map(|r| Op::Put(Record::Segment(r))));
        ops
    }
}

/// Persistent storage of one knowledge base.
///
/// Contract (checked by the conformance suite `tests/store_conformance.rs`, run against every
/// implementation): a `commit` is atomic — after it returns `Err`, or after a crash mid-way, the
/// store holds either all of the batch or none of it; reads see every committed batch; `load`
/// returns each collection sorted by key; a batch with an [`Op::CheckGeneration`] that does not
/// hold fails with [`StoreError::Conflict`] and writes nothing.
pub trait Store {
    /// Reads one record.
    async fn get(&self, collection: Collection, key: &str) -> Result<Option<Record>, StoreError>;
    /// Reads records of any collections, in the order of `keys` (one read transaction where the
    /// store has them).
    async fn get_batch(&self, keys: &[(Collection, String)]) -> Result<Vec<Option<Record>>, StoreError> {
        let mut out = Vec::with_capacity(keys.len());
        for (c, k) in keys {
            out.push(self.get(*c, k).await?);
        }
        Ok(out)
    }
    /// Reads several records of one collection, in the order of `keys` ([`Store::get_batch`]).
    async fn get_many(&self, collection: Collection, keys: &[String]) -> Result<Vec<Option<Record>>, StoreError> {
        self.get_batch(&keys.iter().map(|k| (collection, k.clone())).collect::<Vec<_>>()).await
    }
    /// Reads every record of one collection, sorted by key: [`Store::load`]'s contents with only
    /// that collection's list filled.
    async fn scan(&self, collection: Collection) -> Result<Contents, StoreError> {
        let mut out = Contents::default();
        for op in self.load().await?.into_ops() {
            if let Op::Put(r) = op
                && r.collection() == collection
            {
                out.push(r);
            }
        }
        Ok(out)
    }
    /// Reads the records of one collection whose keys sort after `after` (from the first when
    /// `None`), in key order, at most `limit` of them: a collection read a page at a time (a
    /// streamed export, [`crate::kb_file::Writer`]). A page shorter than `limit` is the last.
    async fn scan_page(&self, collection: Collection, after: Option<&str>, limit: usize) -> Result<Vec<Record>, StoreError>;
    /// Reads everything (used once at open).
    async fn load(&self) -> Result<Contents, StoreError>;
    /// Applies a batch of writes atomically, in order.
    async fn commit(&self, ops: Vec<Op>) -> Result<(), StoreError>;
    /// Deletes every record of every collection.
    async fn clear(&self) -> Result<(), StoreError>;
    /// Whether records of `collection` are kept: a writer may leave out of a commit the records
    /// a store would discard ([`MemoryStore::discarding`]). Default: every collection.
    fn keeps(&self, collection: Collection) -> bool {
        let _ = collection;
        true
    }
}

impl<S: Store + ?Sized> Store for &S {
    async fn get(&self, collection: Collection, key: &str) -> Result<Option<Record>, StoreError> {
        (**self).get(collection, key).await
    }
    async fn get_batch(&self, keys: &[(Collection, String)]) -> Result<Vec<Option<Record>>, StoreError> {
        (**self).get_batch(keys).await
    }
    async fn get_many(&self, collection: Collection, keys: &[String]) -> Result<Vec<Option<Record>>, StoreError> {
        (**self).get_many(collection, keys).await
    }
    async fn scan_page(&self, collection: Collection, after: Option<&str>, limit: usize) -> Result<Vec<Record>, StoreError> {
        (**self).scan_page(collection, after, limit).await
    }
    async fn scan(&self, collection: Collection) -> Result<Contents, StoreError> {
        (**self).scan(collection).await
    }
    async fn load(&self) -> Result<Contents, StoreError> {
        (**self).load().await
    }
    async fn commit(&self, ops: Vec<Op>) -> Result<(), StoreError> {
        (**self).commit(ops).await
    }
    async fn clear(&self) -> Result<(), StoreError> {
        (**self).clear().await
    }
    fn keeps(&self, collection: Collection) -> bool {
        (**self).keeps(collection)
    }
}

/// In-memory [`Store`]: a `BTreeMap` per collection. Commits are atomic by construction (the
/// batch is validated, then applied without any fallible step).
#[derive(Debug, Default)]
pub struct MemoryStore {
    data: RefCell<BTreeMap<Collection, BTreeMap<String, Record>>>,
    fail_next_commit: RefCell<Option<StoreError>>,
    /// Only [`Collection::Meta`] is kept ([`MemoryStore::discarding`]).
    meta_only: bool,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
    /// An empty store that keeps the metadata (the commit count, which guards every commit) and
    /// discards every other record it is given: for an engine whose records live in its memory
    /// alone and are never read back (a site build that writes no knowledge-base file and
    /// keeps no build cache). Reading it back gives a knowledge base with no documents.
    pub fn discarding() -> Self {
        Self { meta_only: true, ..Self::default() }
    }
    /// Makes the next `commit` fail with `err` without writing anything (fault injection for
    /// tests of "nothing already stored is lost").
    pub fn fail_next_commit(&self, err: StoreError) {
        *self.fail_next_commit.borrow_mut() = Some(err);
    }
}

impl Store for MemoryStore {
    async fn get(&self, collection: Collection, key: &str) -> Result<Option<Record>, StoreError> {
        Ok(self.data.borrow().get(&collection).and_then(|m| m.get(key)).cloned())
    }

    async fn scan(&self, collection: Collection) -> Result<Contents, StoreError> {
        let mut out = Contents::default();
        for r in self.data.borrow().get(&collection).into_iter().flat_map(|m| m.values()) {
            out.push(r.clone());
        }
        Ok(out)
    }

    async fn scan_page(&self, collection: Collection, after: Option<&str>, limit: usize) -> Result<Vec<Record>, StoreError> {
        use std::ops::Bound;
        let data = self.data.borrow();
        let Some(m) = data.get(&collection) else { return Ok(Vec::new()) };
        let from = after.map_or(Bound::Unbounded, |a| Bound::Excluded(a.to_string()));
        Ok(m.range((from, Bound::Unbounded)).take(limit).map(|(_, r)| r.clone()).collect())
    }

    async fn load(&self) -> Result<Contents, StoreError> {
        let data = self.data.borrow();
        let mut c = Contents::default();
        for r in data.values().flat_map(|m| m.values()) {
            c.push(r.clone());
        }
        Ok(c)
    }

    async fn commit(&self, ops: Vec<Op>) -> Result<(), StoreError> {
        if let Some(err) = self.fail_next_commit.borrow_mut().take() {
            return Err(err);
        }
        let stored = generation_in(self.data.borrow().get(&Collection::Meta).and_then(|m| m.get(GENERATION_KEY)));
        check_generation(stored, &ops)?;
        let mut data = self.data.borrow_mut();
        for op in ops {
            match op {
                Op::CheckGeneration(_) => {}
                Op::Put(r) if !self.keeps(r.collection()) => {}
                Op::Put(r) => {
                    data.entry(r.collection()).or_default().insert(r.key().to_string(), r);
                }
                Op::Delete(c, k) => {
                    if let Some(m) = data.get_mut(&c) {
                        m.remove(&k);
                    }
                }
            }
        }
        Ok(())
    }

    async fn clear(&self) -> Result<(), StoreError> {
        self.data.borrow_mut().clear();
        Ok(())
    }

    fn keeps(&self, collection: Collection) -> bool {
        !self.meta_only || collection == Collection::Meta
    }
}

/// Receives progress of long work. Implemented for any `FnMut(ProgressEvent)`.
pub trait Progress {
    /// Called with each event; must return quickly.
    fn report(&mut self, event: ProgressEvent);
}

impl<F: FnMut(ProgressEvent)> Progress for F {
    fn report(&mut self, event: ProgressEvent) {
        self(event)
    }
}

/// A [`Progress`] that drops every event.
pub struct NoProgress;

impl Progress for NoProgress {
    fn report(&mut self, _event: ProgressEvent) {}
}

/// The platform's clocks, in milliseconds.
pub trait Clock {
    /// Wall clock: ms since the Unix epoch (timestamps that are stored).
    fn now_ms(&self) -> f64;
    /// Monotonic clock from an arbitrary origin (durations); defaults to the wall clock.
    fn monotonic_ms(&self) -> f64 {
        self.now_ms()
    }
}

/// `SystemTime` clock (native only: the browser's clock lives in `web`).
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

#[cfg(not(target_arch = "wasm32"))]
impl Clock for SystemClock {
    fn now_ms(&self) -> f64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64() * 1000.0).unwrap_or(0.0)
    }
    fn monotonic_ms(&self) -> f64 {
        use std::sync::OnceLock;
        static START: OnceLock<std::time::Instant> = OnceLock::new();
        START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64() * 1000.0
    }
}

/// A clock that always returns the same instant (deterministic tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedClock(pub f64);

impl Clock for FixedClock {
    fn now_ms(&self) -> f64 {
        self.0
    }
}

/// A Unicode normalization form (UAX #15, <https://unicode.org/reports/tr15/>): NFD for the BERT
/// normalizer's accent stripping ([`crate::embed::WordPiece`]), NFKC for the BM25 analyzer and
/// for the text the ask pipeline puts between `<data>` delimiters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormalizationForm {
    /// Canonical decomposition.
    Nfd,
    /// Compatibility decomposition, then canonical composition.
    Nfkc,
}

impl NormalizationForm {
    /// The form's name as `String.prototype.normalize` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Nfd => "NFD",
            Self::Nfkc => "NFKC",
        }
    }
}

/// `text` in normalization form `form`. ASCII text is its own NFD and NFKC and comes back
/// borrowed. Natively and in the site builder (`--features builder`) the tables are those of
/// `unicode-normalization-alignments`, the ones the `tokenizers` crate uses; the page's builds
/// carry no tables (they were the largest data of the page's `.wasm`, 52 KB gzipped) and ask the
/// browser's own normalization (`String.prototype.normalize`, ICU), which the web layer installs
/// at start (`install_normalizer`; before that, non-ASCII text comes back unchanged). The two
/// can differ only on code points that the older tables do not assign (normalization is stable
/// for assigned characters, UAX #15 §3).
pub fn normalize(text: &str, form: NormalizationForm) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(normalize_unicode(text, form))
}

#[cfg(any(not(target_arch = "wasm32"), feature = "builder"))]
fn normalize_unicode(text: &str, form: NormalizationForm) -> String {
    use unicode_normalization_alignments::UnicodeNormalization;
    match form {
        NormalizationForm::Nfd => text.nfd().map(|(c, _)| c).collect(),
        NormalizationForm::Nfkc => text.nfkc().map(|(c, _)| c).collect(),
    }
}

/// The platform's normalization in the page's builds (see [`normalize`]).
#[cfg(all(target_arch = "wasm32", not(feature = "builder")))]
static PLATFORM_NORMALIZER: std::sync::OnceLock<fn(&str, NormalizationForm) -> String> = std::sync::OnceLock::new();

/// Installs the platform's Unicode normalization (the page's builds, where the core carries no
/// tables); the first call wins. Before it, [`normalize`] returns non-ASCII text unchanged.
#[cfg(all(target_arch = "wasm32", not(feature = "builder")))]
pub fn install_normalizer(f: fn(&str, NormalizationForm) -> String) {
    let _ = PLATFORM_NORMALIZER.set(f);
}

#[cfg(all(target_arch = "wasm32", not(feature = "builder")))]
fn normalize_unicode(text: &str, form: NormalizationForm) -> String {
    match PLATFORM_NORMALIZER.get() {
        Some(f) => f(text, form),
        None => text.to_owned(),
    }
}

/// Markdown or HTML parsed by the platform, in the page's search build (which carries no parsers:
/// they were a fifth of its `.wasm`): `text` in `format` (Markdown or HTML) as `crate::text::ParsedWire` JSON, or why it could not be parsed. The web
/// layer installs it at start ([`install_markup_parser`]); the parser module behind it is the
/// same `text::parse`, built alone (`src/web/markup_module.rs`).
#[cfg(all(target_arch = "wasm32", not(feature = "markup")))]
pub fn parse_markup(text: &str, format: crate::types::Format) -> std::result::Result<String, String> {
    match PLATFORM_MARKUP.get() {
        Some(f) => f(text, format),
        None => Err("no Markdown/HTML parser is installed in this build".into()),
    }
}

/// The platform's parser (see [`parse_markup`]).
#[cfg(all(target_arch = "wasm32", not(feature = "markup")))]
static PLATFORM_MARKUP: std::sync::OnceLock<MarkupParser> = std::sync::OnceLock::new();

/// A parser of Markdown or HTML into `ParsedWire` JSON (see [`parse_markup`]).
#[cfg(all(target_arch = "wasm32", not(feature = "markup")))]
pub type MarkupParser = fn(&str, crate::types::Format) -> std::result::Result<String, String>;

/// Installs the platform's Markdown/HTML parser (the page's search build); the first call wins.
#[cfg(all(target_arch = "wasm32", not(feature = "markup")))]
pub fn install_markup_parser(f: MarkupParser) {
    let _ = PLATFORM_MARKUP.set(f);
}

/// The stem of `word` in language `tag` ([`crate::text::Language::tag`]) by the platform, in the
/// page's builds (which carry no stemmers: `text::STEMS`): the stemmer module of that language
/// (`stem/<tag>.wasm`, the same `text::stem` built alone: `src/web/stem_module.rs`) that the
/// worker loaded; `None` when it has none loaded for `tag`. The web layer installs it at start
/// ([`install_stemmer`]).
#[cfg(all(target_arch = "wasm32", not(feature = "stem")))]
pub fn platform_stem(tag: &str, word: &str) -> Option<String> {
    PLATFORM_STEMMER.get().and_then(|f| f(tag, word))
}

/// A stemmer by language tag (see [`platform_stem`]).
#[cfg(all(target_arch = "wasm32", not(feature = "stem")))]
pub type PlatformStemmer = fn(&str, &str) -> Option<String>;

#[cfg(all(target_arch = "wasm32", not(feature = "stem")))]
static PLATFORM_STEMMER: std::sync::OnceLock<PlatformStemmer> = std::sync::OnceLock::new();

/// Installs the platform's stemmer (the page's builds); the first call wins.
#[cfg(all(target_arch = "wasm32", not(feature = "stem")))]
pub fn install_stemmer(f: PlatformStemmer) {
    let _ = PLATFORM_STEMMER.set(f);
}

#[cfg(test)]
mod normalization_tests {
    use super::{NormalizationForm, normalize};

    #[test]
    fn nfkc_and_nfd() {
        // The same cases run in the browser, where the normalization is the browser's.
        assert_eq!(normalize("ﬁｎｅ Ⅻ ｶ", NormalizationForm::Nfkc), "fine XII カ");
        assert_eq!(normalize("é", NormalizationForm::Nfd), "e\u{301}");
        assert!(matches!(normalize("plain ASCII", NormalizationForm::Nfkc), std::borrow::Cow::Borrowed(_)));
    }
}
