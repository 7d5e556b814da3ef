//! Static-site mode on the file system: crawl a built site ([`crawl`]) and write a snapshot
//! ([`write_snapshot`]); the snapshot itself is built by [`crate::snapshot`].
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result, StoreError};
use crate::snapshot::{PageFile, PageSource, is_page};
pub use crate::snapshot::{Snapshot, SnapshotParams, SnapshotSummary, build_snapshot};

/// The files and folders of `dir` that a crawl of the site at `root` (canonical) reads, into
/// `out`, in path order; what it leaves out into `left`. A link is followed only to a file or
/// folder inside the site, and each folder is read once, however many links reach it (a link
/// loop ends at once).
fn collect(root: &Path, dir: &Path, skip: &Path, seen: &mut BTreeSet<PathBuf>, out: &mut Vec<PathBuf>, left: &mut Vec<LeftOut>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
    entries.sort();
    for e in entries {
        if e == skip {
            continue;
        }
        let Some(name) = e.file_name().and_then(|n| n.to_str()) else {
            left.push(LeftOut { path: e, why: "its name is not UTF-8 (no URL names it)".into() });
            continue;
        };
        let is_link = std::fs::symlink_metadata(&e).is_ok_and(|m| m.file_type().is_symlink());
        let real = match std::fs::canonicalize(&e) {
            Ok(r) => r,
            Err(_) if is_link => {
                left.push(LeftOut { path: e, why: "a broken link".into() });
                continue;
            }
            Err(_) => e.clone(),
        };
        if is_link && !real.starts_with(root) {
            left.push(LeftOut { path: e, why: "a link to outside the site".into() });
            continue;
        }
        if real.is_dir() {
            if seen.insert(real) {
                collect(root, &e, skip, seen, out, left);
            } else {
                left.push(LeftOut { path: e, why: "a folder already read (a link)".into() });
            }
        } else if is_page(name) {
            if real.is_file() {
                out.push(e);
            } else {
                // A named pipe, socket or device named `.html`: reading it could block for ever.
                left.push(LeftOut { path: e, why: "not a regular file".into() });
            }
        }
    }
}

/// A file or folder of a site that a crawl left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// The path as the crawl met it.
    pub path: PathBuf,
    /// Why: a link to outside the site, a broken link, a folder already read, a name that is not
    /// UTF-8, not a regular file (a named pipe), unreadable, larger than a page may be, not UTF-8
    /// text.
    pub why: String,
}

/// The pages of a built site: every `.html`/`.htm` (title, headings and text; `nav`, `footer`,
/// scripts and elements marked `data-webrag-ignore` skipped — [`crate::text::parse`]) and
/// `.md` file under `site`, except under `out`, in path order, as [`PageFile`]s (read later by
/// [`crate::snapshot::sort_pages`] and [`crate::snapshot::site_batches`], one batch at a time);
/// and what it left out ([`LeftOut`]: links that lead out of the site or into a folder already
/// read, names that are not UTF-8, files that are not regular files, and files over `limit`
/// bytes, which are not read).
///
/// Errors: I/O errors as model-file errors naming the path.
pub fn crawl(site: &Path, out: &Path, limit: usize) -> Result<(Vec<PageFile>, Vec<LeftOut>)> {
    let root = std::fs::canonicalize(site).map_err(|e| crate::embed::file_error(&site.display().to_string(), e))?;
    let (mut files, mut left) = (Vec::new(), Vec::new());
    let mut seen = BTreeSet::from([root.clone()]);
    collect(&root, site, out, &mut seen, &mut files, &mut left);
    let mut pages = Vec::with_capacity(files.len());
    for f in files {
        let size = match std::fs::metadata(&f) {
            Ok(m) => m.len(),
            Err(e) => {
                left.push(LeftOut { path: f, why: format!("unreadable ({e})") });
                continue;
            }
        };
        if size > limit as u64 {
            left.push(LeftOut { path: f, why: format!("{size} bytes, larger than a page may be ({limit}: maxDocumentBytes)") });
            continue;
        }
        // Every component is UTF-8 (`collect` left the others out): `site` joined with the path
        // is the file again.
        let rel = f.strip_prefix(site).unwrap_or(&f);
        let rel: Vec<&str> = rel.components().filter_map(|c| c.as_os_str().to_str()).collect();
        pages.push(PageFile { path: rel.join("/"), size, lang: None });
    }
    Ok((pages, left))
}

/// The page files of the site at a folder, read from the file system; a file is read up to one
/// byte over [`crate::snapshot::max_page_bytes`] (one that grew past it since the crawl is left
/// out then, not read whole).
#[derive(Debug)]
pub struct SiteFiles<'a> {
    /// The site root the pages' paths are relative to.
    pub site: &'a Path,
}

impl PageSource for SiteFiles<'_> {
    fn read(&mut self, page: &PageFile) -> std::result::Result<Vec<u8>, String> {
        use std::io::Read;
        let path: PathBuf = std::iter::once(self.site.as_os_str()).chain(page.path.split('/').map(std::ffi::OsStr::new)).collect();
        let file = std::fs::File::open(&path).map_err(|e| e.to_string())?;
        let mut bytes = Vec::with_capacity(page.size as usize);
        file.take(crate::snapshot::max_page_bytes() as u64 + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        Ok(bytes)
    }
}

/// Writes `snap` into `out` (`manifest.json` last, so a reader never finds a manifest naming
/// shards not yet written; each file written beside and renamed into place, so none is ever
/// seen half written), then deletes the files of earlier snapshots that it no longer names
/// (under `t/`, `f/`, `v/`, `g/`), so `out` holds exactly this snapshot.
///
/// Errors: I/O errors as [`StoreError::Backend`] naming the path.
pub fn write_snapshot(snap: &Snapshot, out: &Path) -> Result<()> {
    let io = |p: &Path, e: std::io::Error| -> Error { StoreError::Backend { reason: format!("{}: {e}", p.display()) }.into() };
    let manifest_last = snap.files.iter().filter(|(n, _)| *n != "manifest.json").chain(snap.files.get_key_value("manifest.json"));
    for (name, bytes) in manifest_last {
        let path = out.join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        }
        if std::fs::read(&path).ok().as_deref() != Some(bytes.as_slice()) {
            // Whole files only: written beside, then renamed over (a crash leaves the old file).
            let tmp = path.with_extension("tmp");
            std::fs::write(&tmp, bytes).map_err(|e| io(&tmp, e))?;
            std::fs::rename(&tmp, &path).map_err(|e| io(&path, e))?;
        }
    }
    let keep: BTreeSet<&str> = snap.files.keys().map(String::as_str).collect();
    for dir in crate::snapshot::SHARD_DIRS {
        for e in std::fs::read_dir(out.join(dir)).into_iter().flatten().flatten() {
            let rel = format!("{dir}/{}", e.file_name().to_string_lossy());
            if !keep.contains(rel.as_str()) {
                std::fs::remove_file(e.path()).map_err(|err| io(&e.path(), err))?;
            }
        }
    }
    Ok(())
}

/// The build cache's default folder: `$XDG_CACHE_HOME/webrag/sites`, else
/// `~/.cache/webrag/sites`, else the system's temporary folder's `webrag/sites`.
pub fn default_cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("webrag").join("sites")
}

/// One static-site build (`webrag index <site> --out <out>`): index the crawled pages, run the
/// ingest-time LLM stages when `llm` is given, write the snapshot.
///
/// With a `cache` folder the build is incremental: it starts from the knowledge base the last
/// build over the same `out`, `mode`, graph setting and model left there (a knowledge-base file,
/// [`crate::engine::Engine::export_kb`]), removes the pages gone from the site, and adds the
/// crawled ones, so an unchanged page (same id and content hash) keeps its chunks, vectors, mind
/// map, atomic questions and LLM map and only new or changed pages are embedded (and sent to the
/// model). The snapshot is the one a build from scratch writes. A cache file that cannot be read
/// (another schema, a damaged file) is ignored with a warning: the build starts from scratch and
/// replaces it.
pub struct SiteBuild<'a> {
    /// The snapshot's folder.
    pub out: &'a Path,
    /// What the snapshot holds.
    pub params: &'a SnapshotParams,
    /// The pages' filters, metadata and sort keys ([`crate::snapshot::SitePages::fields`]).
    pub fields: &'a crate::snapshot::SiteFields,
    /// The endpoint for the ingest-time LLM stages.
    pub llm: Option<crate::llm::LlmConfig>,
    /// The build cache's folder (`None`: a build from scratch, nothing kept).
    pub cache: Option<&'a Path>,
    /// The vectors mode (`chunks`, `hashing`, `none`), part of the cache file's key.
    pub mode: &'a str,
    /// When the command started (for the times it prints).
    pub t0: std::time::Instant,
}

impl SiteBuild<'_> {
    /// The cache file for this build: named by a hash of the output folder's absolute path, the
    /// vectors mode, the graph setting, the model, the schema and webrag's version.
    fn cache_file(&self, model_id: &str) -> Option<PathBuf> {
        use sha2::Digest;
        let dir = self.cache?;
        let out = std::path::absolute(self.out).unwrap_or_else(|_| self.out.to_path_buf());
        // The version too: another webrag may chunk or index the same page differently.
        let key = format!(
            "{}\n{}\n{}\n{model_id}\n{}\n{}",
            out.display(),
            self.mode,
            self.params.graph,
            crate::schema::SCHEMA_VERSION,
            env!("CARGO_PKG_VERSION")
        );
        let h: String = sha2::Sha256::digest(key.as_bytes()).iter().take(12).map(|b| format!("{b:02x}")).collect();
        Some(dir.join(format!("{h}.webrag-kb.gz")))
    }

    /// Runs the build with `embedder` over the sorted `pages` (read from `source` one batch at a
    /// time); returns the snapshot's summary.
    /// For the `webrag` binary, which exits after it: the engine is not freed.
    ///
    /// Errors: the engine's, the model's (after the cache keeps what was done, so the next build
    /// resumes; the snapshot is then left as it was), I/O errors as [`StoreError::Backend`].
    pub async fn run<E: crate::embed::Embedder>(
        self,
        embedder: E,
        pages: Vec<PageFile>,
        source: &mut dyn PageSource,
    ) -> Result<SnapshotSummary> {
        use crate::engine::{Engine, Exclusive};
        use crate::ports::{MemoryStore, NoProgress, SystemClock};
        // The mind maps' node embeddings cost more than the chunks': skip them without graph shards.
        let cache = self.cache_file(embedder.model_id());
        // The snapshot is built from the engine's memory: the records are kept only for what
        // reads them back (the build cache, the knowledge-base file, the LLM stages).
        let keep = cache.is_some() || self.params.kb || self.llm.is_some();
        let store = if keep { MemoryStore::new() } else { MemoryStore::discarding() };
        let mut eng = Engine::open(store, embedder, self.params.engine_config(), Box::new(SystemClock)).await?;
        crate::snapshot::prepare_site_engine(&mut eng, keep);
        if let Some(file) = cache.as_deref().filter(|f| f.exists()) {
            let read = std::fs::read(file).map_err(|e| Error::from(StoreError::Backend { reason: format!("{}: {e}", file.display()) }));
            match read {
                Ok(bytes) => match eng.import_kb(&bytes).await {
                    Ok(s) => eprintln!("build cache: {} pages from {}", s.documents, file.display()),
                    Err(e) => eprintln!("build cache {} not used ({e}): building from scratch", file.display()),
                },
                Err(e) => eprintln!("build cache not used ({e}): building from scratch"),
            }
        }
        // The cache is written again only when this build changed the knowledge base.
        let imported = eng.generation();
        let crawled: BTreeSet<String> = pages.iter().map(|p| crate::snapshot::url_of(&p.path)).collect();
        let gone: Vec<String> = eng.corpus().documents().into_iter().map(|d| d.id).filter(|id| !crawled.contains(id.as_str())).collect();
        if !gone.is_empty() {
            eng.remove(&gone).await?;
        }
        let n = pages.len();
        let (mut done, mut unchanged, mut embedded) = (0, 0, 0);
        // Seconds in each step: parse and chunk, embed, fuse into the graph and commit, seal.
        let mut split = [0f64; 4];
        let mut lap = {
            let mut t = std::time::Instant::now();
            move |step: usize, split: &mut [f64; 4]| {
                split[step] += t.elapsed().as_secs_f64();
                t = std::time::Instant::now();
            }
        };
        for batch in crate::snapshot::site_batches(pages, source) {
            let batch = batch?;
            done += batch.len();
            let plan = eng.plan_add(batch, &mut NoProgress).await?;
            lap(0, &mut split);
            let vectors = crate::engine::embed_add(eng.embedder(), eng.embed_batch(), &plan, &mut NoProgress).await?;
            lap(1, &mut split);
            let r = eng.commit_add(plan, vectors, &mut NoProgress).await?;
            lap(2, &mut split);
            unchanged += r.unchanged.len();
            embedded += r.chunks;
            crate::snapshot::seal_after_batch(&mut eng, self.params).await?;
            lap(3, &mut split);
            eprintln!("indexed {done}/{n} pages ({} chunks, {:.0} s)", eng.stats().chunks, self.t0.elapsed().as_secs_f64());
        }
        eprintln!(
            "time split, s: parse and chunk {:.1}, embed {:.1}, graph fusion and commit {:.1}, HNSW seals {:.1}",
            split[0], split[1], split[2], split[3]
        );
        eprintln!(
            "{unchanged} unchanged pages reused, {} pages added or changed ({embedded} chunks embedded), {} removed",
            n - unchanged,
            gone.len()
        );
        let stages = match self.llm {
            Some(cfg) => llm_stages(&Exclusive::new(&mut eng), cfg, self.t0).await,
            None => Ok(()),
        };
        // Kept even when a model call failed: the next build resumes where this one stopped.
        if let Some(file) = cache.as_ref().filter(|f| eng.generation() != imported || !f.exists()) {
            let t = std::time::Instant::now();
            let bytes = eng.export_kb_at(flate2::Compression::fast()).await?;
            save_cache(&bytes, file)?;
            eprintln!("build cache saved: {} bytes in {:.1} s", bytes.len(), t.elapsed().as_secs_f64());
        }
        // A model error stops here, before the snapshot is written: the last one stays as it was.
        stages?;
        let (snap, summary) = crate::snapshot::build_site(&mut eng, self.params, self.fields).await?;
        write_snapshot(&snap, self.out)?;
        // Freeing the engine's millions of allocations one by one took 6% of a 17,364-page
        // build, and the `webrag` process ends next: its memory is left to the exit.
        std::mem::forget(eng);
        Ok(summary)
    }
}

/// Knowledge atomizing and LLM mind maps (docs/ask-pipeline.md) over what is left to do.
async fn llm_stages<E: crate::embed::Embedder>(
    db: &crate::engine::Exclusive<'_, crate::ports::MemoryStore, E>,
    cfg: crate::llm::LlmConfig,
    t0: std::time::Instant,
) -> Result<()> {
    use crate::ports::{NoProgress, SystemClock};
    let model = crate::llm::openai::OpenAiClient::new(cfg, crate::native::http::UreqTransport)?;
    let a = crate::ask::ingest::atomize(db, &model, &Default::default(), None, &SystemClock, &mut NoProgress, &mut |_| {}).await?;
    eprintln!(
        "atomized {} chunks: {} questions ({} unreadable replies); {:.0} s",
        a.chunks,
        a.questions,
        a.failed.len(),
        t0.elapsed().as_secs_f64()
    );
    let m = crate::ask::ingest::build_mind_maps(db, &model, &Default::default(), None, &SystemClock, &mut NoProgress, &mut |_| {}).await?;
    eprintln!(
        "LLM mind maps for {} pages ({} fact-check items, {} regenerations, {} structural fallbacks); {:.0} s",
        m.documents,
        m.items,
        m.regenerations,
        m.fallbacks.len(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Writes the build cache file (beside, then renamed over).
fn save_cache(bytes: &[u8], file: &Path) -> Result<()> {
    let io = |p: &Path, e: std::io::Error| -> Error { StoreError::Backend { reason: format!("{}: {e}", p.display()) }.into() };
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    }
    let tmp = file.with_extension("tmp");
    std::fs::write(&tmp, bytes).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, file).map_err(|e| io(file, e))
}
