// webrag/static's vocabulary: the snapshot's words blocks (manifest `words`: every term with its
// document frequency, sorted by UTF-8 bytes, in blocks, with an index of each block's first
// term), read a block at a time for what a query needs beyond its postings: completions of a
// word being typed, corrections of a misspelled one, and a word's stem when the stemmer module
// is missing.

import { editDistance, isCjk, typoBudget } from './static-text.js';
import { cmpBytes, utf8 } from './static-format.js';

/** Corrections a misspelled query word matches at most, and misspelled words a query corrects. */
export const MAX_CORRECTIONS = 3;
export const MAX_TYPO_WORDS = 4;

/** A snapshot's vocabulary, read through the loader's cached `json(name)` and `shardName`. */
export class Vocabulary {
  #words; #json; #shardName;

  /**
   * `words`: the manifest's `words` (absent in snapshots older than the words blocks: then every
   * read finds nothing); `json(name)`: a file's JSON (cached by the loader); `shardName(kind,
   * i)`: the file name of block `i` of kind `words`.
   */
  constructor(words, json, shardName) {
    this.#words = words?.blocks ? words : null;
    this.#json = json;
    this.#shardName = shardName;
  }

  /** Whether the snapshot has words blocks. */
  get present() { return this.#words !== null; }

  /**
   * The `[term, df]` rows in the block where `term` sorts (the last whose first term sorts at or
   * before it), `before` blocks before it and `after` after it.
   */
  async around(term, before, after) {
    const w = this.#words;
    if (!w) return [];
    const index = await this.#json(w.index);
    const firsts = Array.isArray(index?.first) ? index.first : [];
    const key = utf8(term);
    let lo = 0;
    let hi = firsts.length - 1;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (cmpBytes(utf8(String(firsts[mid])), key) <= 0) lo = mid; else hi = mid - 1; }
    const rows = [];
    for (let b = Math.max(0, lo - before); b < Math.min(lo + after + 1, w.blocks); b++) {
      const block = await this.#json(await this.#shardName('words', b));
      for (const row of Array.isArray(block?.w) ? block.w : []) {
        if (Array.isArray(row) && typeof row[0] === 'string') rows.push([row[0], Number(row[1]) || 0]);
      }
    }
    return rows;
  }

  /** Whether `term` is a term of the vocabulary (its block read). */
  async has(term) {
    return (await this.around(term, 0, 0)).some(([w]) => w === term);
  }

  /**
   * Up to `max` terms that start with `prefix`, most frequent first, `prefix` itself left out:
   * from the block where it sorts and the next (a prefix's terms may begin a block).
   */
  async completions(prefix, max) {
    if (!prefix) return [];
    const found = [];
    for (const [t, df] of await this.around(prefix, 0, 1)) if (t !== prefix && t.startsWith(prefix)) found.push([t, df]);
    return found.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, max).map(([t]) => t);
  }

  /**
   * The nearest terms to `term`, a query word with no postings (typo tolerance): those within its
   * `typoBudget` of edits, fewest edits first, then the most frequent; at most `MAX_CORRECTIONS`,
   * from the blocks around where it sorts (the one before, its own and the next: a bounded read,
   * where a word differing in its first letters is not looked for). `[{term, edits}]`.
   */
  async corrections(term) {
    const budget = typoBudget(term);
    if (!budget) return [];
    const near = [];
    for (const [t, df] of await this.around(term, 1, 1)) {
      if (t === term) continue;
      const edits = editDistance(term, t, budget);
      if (edits <= budget) near.push([t, df, edits]);
    }
    near.sort((a, b) => a[2] - b[2] || b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const fewest = near[0]?.[2];
    return near.filter((n) => n[2] === fewest).slice(0, MAX_CORRECTIONS).map(([t, , edits]) => ({ term: t, edits }));
  }

  /**
   * The stem of `term` (a query word of a stemmed language searched without its stemmer) as the
   * vocabulary has it: the longest term that `term` begins with, of at least half its letters and
   * at least 3 (Snowball's stems are mostly a word's first letters: `hunt` of `hunting`, `kettl`
   * of `kettles`); null for a word of fewer than 4 letters, a number, CJK, or none found. Read
   * from the block where `term` sorts and the one before (its prefixes sort before it).
   */
  async stem(term) {
    const chars = [...term];
    if (!this.#words || chars.length < 4 || isCjk(term.codePointAt(0)) || /^\p{N}+$/u.test(term)) return null;
    const terms = new Set((await this.around(term, 1, 0)).map(([w]) => w));
    for (let n = chars.length - 1; n >= Math.max(3, chars.length >> 1); n--) {
      const p = chars.slice(0, n).join('');
      if (terms.has(p)) return p;
    }
    return null;
  }
}
