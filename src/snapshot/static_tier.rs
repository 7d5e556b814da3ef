//! The static tier of a snapshot (`--vectors static`): the static model's vocabulary and token
//! rows as shards a page reads to embed a query without a model, and the tier's search settings.
use std::collections::BTreeMap;

use super::files::Packing;
use super::{ManifestRows, ManifestStatic, ManifestVocab, Snapshot, SnapshotParams, directory, fnv1a};
use crate::index::segment::vec_block;

/// The key a vocabulary entry is sharded by, from what a lookup knows: whether the piece
/// continues a word (`cont`, it then carries the tokenizer's prefix, `##`) and its text without
/// the prefix; the key is the prefix (for a continuation) and the text's first two characters.
/// A greedy longest-match lookup at one position of a word tries pieces that all start there,
/// so it reads two shards: the key of its first two characters and of its first one.
pub fn vocab_key(prefix: &str, cont: bool, text: &str) -> String {
    let head: String = text.chars().take(2).collect();
    if cont { format!("{prefix}{head}") } else { head }
}

/// The static tier ([`crate::embed::StaticModel`]): the vocabulary sharded by [`vocab_key`]
/// (`k/{i}-{hash}.json.gz`: `{"k": {piece: id}}`) and the token rows sharded by id
/// (`s/{i}-{hash}.bin.gz`: a `WRV1` block of ids `i·rows .. i·rows + rows − 1`), so that a page
/// tokenizes and embeds a query from a few kilobytes; returns the manifest's `static` entry.
pub(super) fn static_tier(snap: &mut Snapshot, m: &crate::embed::StaticModel, p: &SnapshotParams) -> ManifestStatic {
    let spec = m.tokenizer().spec();
    let entries: Vec<(&str, u32)> = m.tokenizer().vocab().collect();
    let est: usize = entries.iter().map(|(t, _)| t.len() + 10).sum();
    let shards = (est / p.vocab_shard_bytes.max(1)).max(1).next_power_of_two();
    let mut by_shard: Vec<BTreeMap<&str, u32>> = vec![BTreeMap::new(); shards];
    for (t, id) in entries {
        let (cont, text) = match t.strip_prefix(spec.prefix.as_str()) {
            Some(rest) if !rest.is_empty() && !spec.prefix.is_empty() => (true, rest),
            _ => (false, t),
        };
        by_shard[fnv1a(&vocab_key(&spec.prefix, cont, text)) as usize % shards].insert(t, id);
    }
    let vocab_files = snap.add_all("k", "json.gz", &by_shard, |_, entries| serde_json::json!({ "k": entries }).to_string().into_bytes());
    let dim = m.header().dim;
    let per = p.token_rows.max(1);
    let ids: Vec<u32> = (0..m.header().rows as u32).collect();
    let groups: Vec<&[u32]> = ids.chunks(per).collect();
    let row_files = snap.add_packed("s", "bin.gz", Packing::Stored, &groups, |_, group| {
        let rows: Vec<(f32, Vec<i8>)> = group.iter().map(|id| m.row(*id).map_or((0.0, vec![0; dim]), |(s, q)| (s, q.to_vec()))).collect();
        vec_block(b"WRV1", group, &rows, dim)
    });
    let vocab_dirs = directory(snap, "k", &vocab_files);
    let row_dirs = directory(snap, "s", &row_files);
    ManifestStatic {
        source: m.header().source.clone(),
        weighting: m.header().weighting.clone(),
        vocab: ManifestVocab { hash: "fnv1a32", key: "prefix + first 2 characters", shards, ext: "json.gz", dirs: vocab_dirs },
        rows: ManifestRows { count: m.header().rows, per_file: per, ext: "bin.gz", dirs: row_dirs },
        wordpiece: spec,
    }
}

/// The fusion weights of a static-tier snapshot: the keyword list 1.5, the semantic list 0 (left
/// out), the graph list 1 — what `webrag eval --static-model --tune-fusion` chose for the
/// distilled static model on the even-numbered HotpotQA and MuSiQue questions, kept for the
/// trained one: held out (the odd-numbered ones) its hybrid + graph R@5 is 84.0 / 64.5 with them,
/// 85.0 / 64.2 with equal weights and 82.0 / 62.3 with the grid's choice for it
/// (docs/benchmarks.md, "The static model"). The static model's own list is weaker than BM25;
/// its vectors still seed and rank the graph.
pub const STATIC_FUSION_WEIGHTS: crate::retrieve::FusionWeights =
    crate::retrieve::FusionWeights { bm25: 1.5, dense: 0.0, graph: 1.0, atomic: 1.0 };

/// The topics a static-tier snapshot's graph search reads: as many as it has seed pages (the
/// engine's `graph.seedTopics`, 3), so neighbours only when fewer pages seed it. On a
/// documentation site of long pages the graph files were most of a first hybrid query's bytes,
/// and the neighbours (7 more pages) added no top-1 hit on its questions nor on the HotpotQA and
/// MuSiQue passage sites, measured with `tests/site/eval-stages.mjs` when this was chosen.
pub const STATIC_GRAPH_TOPICS: usize = 3;
