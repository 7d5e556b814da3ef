// webrag/static's static-tier embedder (a snapshot built with `--vectors static`): a query's
// vector from the snapshot's word-piece vocabulary and quantized token rows
// (docs/snapshot-format.md, "Static tier"), with no model and no WebAssembly.

import { encode as wordPieces } from './wordpiece.js';
import { fnv1a } from './static-text.js';
import { SnapshotError, readVectors } from './static-format.js';

/**
 * Each text's unit vector (`number[]` of the manifest's `model.dim`): its word pieces
 * (`wordpiece.js`; the vocabulary shards its words need), the mean of their token rows (`[UNK]`
 * left out), L2-normalised; all zeros for a text without a known piece. `snapshot`: `json(name)`,
 * `file(name)` (gunzipped bytes) and `shardName(kind, i)` of the snapshot's files. Rejects with a
 * `SnapshotError`: `SNAPSHOT_NO_EMBEDDER` without a static tier, `SNAPSHOT_CORRUPT` for a
 * damaged shard.
 */
export async function staticEmbed(texts, manifest, snapshot) {
  const t = manifest.static;
  if (!t) throw new SnapshotError('this snapshot has no static tier (built without --vectors static)', 'SNAPSHOT_NO_EMBEDDER', '');
  const spec = t.wordpiece;
  const dim = manifest.model.dim;
  const entries = async (key) => {
    const name = await snapshot.shardName('vocab', fnv1a(key) % t.vocab.shards);
    const k = (await snapshot.json(name)).k;
    if (!k || typeof k !== 'object') throw new SnapshotError(`${name}: not a vocabulary shard`, 'SNAPSHOT_CORRUPT', name);
    return k;
  };
  return Promise.all(texts.map(async (text) => {
    const ids = (await wordPieces(String(text), spec, entries)).filter((id) => id !== spec.unk && id < t.rows.count);
    const v = new Float32Array(dim);
    const files = [...new Set(ids.map((id) => Math.floor(id / t.rows.perFile)))];
    const blocks = new Map(await Promise.all(files.map(async (f) => {
      const name = await snapshot.shardName('tokenRows', f);
      return [f, readVectors(await snapshot.file(name), 'WRV1', name, dim)];
    })));
    for (const id of ids) {
      const b = blocks.get(Math.floor(id / t.rows.perFile));
      const r = id % t.rows.perFile;
      if (r >= b.count || b.ids[r] !== id) throw new SnapshotError(`token rows: no row for token ${id}`, 'SNAPSHOT_CORRUPT', '');
      const s = b.scales[r];
      for (let j = 0, o = r * dim; j < dim; j++) v[j] += s * b.q[o + j];
    }
    let n = 0;
    for (const x of v) n += x * x;
    n = Math.sqrt(n);
    return Array.from(v, (x) => (n > 0 ? x / n : 0));
  }));
}
