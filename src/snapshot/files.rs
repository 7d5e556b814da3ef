//! A snapshot's files in memory ([`Snapshot`]): numbered series of content-hashed gzip shards
//! (`{dir}/{i}-{hash}.{ext}`, made and compressed on every core natively) and the directory
//! pages that name them, so the manifest lists a few pages per thousand shards.
use std::collections::BTreeMap;
use std::io::Write;

use sha2::{Digest, Sha256};

/// How hard a shard series is compressed ([`gzip`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Packing {
    /// Deflate at level 6: level 9 took 37% more time for 0.14% fewer bytes on the CRUD site's
    /// shards.
    Deflate,
    /// Stored deflate blocks (level 0): for int8 vectors with few repeats to find. The static
    /// tier's token rows (8.1 MB, more than half of a documentation site's snapshot) came out
    /// 4.6% larger than at level 6, which took 0.15 s of a 3.3 s `npx` build on them.
    Stored,
}

/// A shard gzipped (RFC 1952, no file name or modification time, so equal bytes give equal
/// files).
pub(super) fn gzip(bytes: &[u8]) -> Vec<u8> {
    gzip_as(bytes, Packing::Deflate)
}

fn gzip_as(bytes: &[u8], packing: Packing) -> Vec<u8> {
    let level = match packing {
        Packing::Deflate => flate2::Compression::new(6),
        Packing::Stored => flate2::Compression::none(),
    };
    let mut e = flate2::GzBuilder::new().mtime(0).operating_system(255).write(Vec::with_capacity(bytes.len() / 2 + 64), level);
    // Writing to memory does not fail.
    let _ = e.write_all(bytes);
    e.finish().unwrap_or_default()
}

pub(super) fn hashed(dir: &str, stem: &str, ext: &str, bytes: &[u8]) -> String {
    let h = Sha256::digest(bytes);
    let hex: String = h.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{dir}/{stem}-{hex}.{ext}")
}

/// Files per directory page.
pub const DIR_GROUP: usize = 256;

/// The folders a snapshot writes its shards into (everything but the manifest and the kb file).
pub const SHARD_DIRS: [&str; 10] = ["t", "f", "v", "g", "p", "w", "k", "s", "x", "o"];

/// The hash part of a content-hashed name (`t/12-89abcdef.json.gz` → its 4 bytes).
fn name_hash(name: &str) -> [u8; 4] {
    let hex = name.rsplit('-').next().and_then(|t| t.split('.').next()).unwrap_or("");
    let mut out = [0u8; 4];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2).unwrap_or("00"), 16).unwrap_or(0);
    }
    out
}

/// Directory pages of a numbered shard series: page `g` holds the 4-byte name hashes of shards
/// `g·256 .. g·256 + 255`, so the manifest names only the pages (a few per thousand shards) and
/// the loader rebuilds a shard's name `{dir}/{i}-{hash}.{ext}` from one small page.
pub(super) fn directory(snap: &mut Snapshot, dir: &str, names: &[String]) -> Vec<String> {
    let mut pages = Vec::new();
    for (g, group) in names.chunks(DIR_GROUP).enumerate() {
        let bytes: Vec<u8> = group.iter().flat_map(|n| name_hash(n)).collect();
        let name = hashed(dir, &format!("d{g}"), "bin", &bytes);
        snap.files.insert(name.clone(), bytes);
        pages.push(name);
    }
    pages
}

/// A snapshot in memory: relative path → bytes (the manifest at `manifest.json`).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Snapshot {
    /// Every file.
    pub files: BTreeMap<String, Vec<u8>>,
}

impl Snapshot {
    /// A numbered series of shards: `make(i, item)` gives shard `i`'s content, which is gzipped
    /// and named `{dir}/{i}-{hash}.{ext}`; returns the names in order. The shards are made and
    /// compressed on every core natively (rayon), one after another in the page; the bytes are
    /// the same either way.
    pub(super) fn add_all<T: Sync>(
        &mut self,
        dir: &str,
        ext: &str,
        items: &[T],
        make: impl Fn(usize, &T) -> Vec<u8> + Sync,
    ) -> Vec<String> {
        self.add_packed(dir, ext, Packing::Deflate, items, make)
    }

    /// [`Snapshot::add_all`] with the shards packed as `packing` says.
    pub(super) fn add_packed<T: Sync>(
        &mut self,
        dir: &str,
        ext: &str,
        packing: Packing,
        items: &[T],
        make: impl Fn(usize, &T) -> Vec<u8> + Sync,
    ) -> Vec<String> {
        let one = |(i, t): (usize, &T)| {
            let bytes = gzip_as(&make(i, t), packing);
            (hashed(dir, &i.to_string(), ext, &bytes), bytes)
        };
        #[cfg(not(target_arch = "wasm32"))]
        let files: Vec<(String, Vec<u8>)> = {
            use rayon::prelude::*;
            items.par_iter().enumerate().map(one).collect()
        };
        #[cfg(target_arch = "wasm32")]
        let files: Vec<(String, Vec<u8>)> = items.iter().enumerate().map(one).collect();
        files
            .into_iter()
            .map(|(name, bytes)| {
                self.files.insert(name.clone(), bytes);
                name
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_is_deterministic() {
        assert_eq!(gzip(b"same bytes"), gzip(b"same bytes"));
        assert_eq!(&gzip(b"x")[4..8], &[0, 0, 0, 0], "no modification time in the header");
    }
}
