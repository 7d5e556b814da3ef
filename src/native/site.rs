//! Static-site mode on the file system: crawl a built site ([`crawl`]) and write a snapshot
//! ([`write_snapshot`]); the snapshot itself is built by [`crate::snapshot`].
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result, StoreError};
pub use crate::snapshot::{Snapshot, SnapshotParams, SnapshotSummary, build_snapshot, kmeans, quantize};
use crate::snapshot::{is_page, page_document};
use crate::types::DocumentInput;

fn collect(dir: &Path, skip: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
    entries.sort();
    for e in entries {
        if e == skip {
            continue;
        }
        if e.is_dir() {
            collect(&e, skip, out);
        } else if e.file_name().and_then(|n| n.to_str()).is_some_and(is_page) {
            out.push(e);
        }
    }
}
/// The pages of a built site: every `.html`/`.htm` (title, headings and text; `nav`, `footer`,
/// scripts and elements marked `data-webrag-ignore` skipped — [`crate::text::parse`]) and
/// `.md` file under `site`, except under `out`, in path order, with their URLs as ids.
///
/// Errors: [`InputError::InvalidUtf8`] for a page that is not UTF-8; I/O errors as model-file
/// errors naming the path.
pub fn crawl(site: &Path, out: &Path) -> Result<Vec<DocumentInput>> {
    let mut files = Vec::new();
    collect(site, out, &mut files);
    let mut docs = Vec::with_capacity(files.len());
    for f in files {
        let bytes = std::fs::read(&f).map_err(|e| crate::embed::file_error(&f.display().to_string(), e))?;
        let rel = f.strip_prefix(site).unwrap_or(&f);
        let rel: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        docs.push(page_document(&rel.join("/"), &bytes)?);
    }
    Ok(docs)
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
    for dir in ["t", "f", "v", "g"] {
        for e in std::fs::read_dir(out.join(dir)).into_iter().flatten().flatten() {
            let rel = format!("{dir}/{}", e.file_name().to_string_lossy());
            if !keep.contains(rel.as_str()) {
                std::fs::remove_file(e.path()).map_err(|err| io(&e.path(), err))?;
            }
        }
    }
    Ok(())
}
