// Queries typed with a slip, for the typo-tolerance figures of bench-rank.mjs and
// eval-stages.mjs (`--typos SEED`): one random edit per query (`typo`), from a PRNG seeded with
// SEED and the query's text, so a query gets the same edit in every script and order.

/** A PRNG (mulberry32) from `seed`: floats in [0, 1). */
export function prng(seed) {
  let a = Number(seed) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * `q` with one edit (`rand`: the PRNG): in a word of 4+ letters when there is one, else at any
 * character; delete, insert (a letter of the word), replace (a nearby letter), or swap with the
 * next character.
 */
export function misspell(q, rand) {
  const chars = [...q];
  const words = [...q.matchAll(/\p{L}{4,}/gu)].filter((m) => !/\p{Script=Han}/u.test(m[0]));
  const pick = (n) => Math.floor(rand() * n);
  let from = 0;
  let len = chars.length;
  if (words.length) {
    const w = words[pick(words.length)];
    from = [...q.slice(0, w.index)].length;
    len = [...w[0]].length;
  }
  if (len < 2) return q;
  const i = from + pick(len - 1);
  const kind = pick(4);
  const letters = chars.slice(from, from + len);
  if (kind === 0) chars.splice(i, 1);
  else if (kind === 1) chars.splice(i, 0, letters[pick(letters.length)]);
  else if (kind === 2) {
    const c = chars[i];
    const code = c.codePointAt(0);
    chars[i] = /[a-z]/.test(c) ? String.fromCharCode(97 + ((code - 97 + 1 + pick(25)) % 26)) : /[A-Z]/.test(c) ? String.fromCharCode(65 + ((code - 65 + 1 + pick(25)) % 26)) : letters[(letters.indexOf(c) + 1) % letters.length];
    if (chars[i] === c) chars.splice(i, 1);
  } else [chars[i], chars[i + 1]] = [chars[i + 1], chars[i]];
  const out = chars.join('');
  return out === q ? chars.toSpliced(i, 1).join('') : out;
}

/** `q` with one edit, the same for the same `seed` and `q` (FNV-1a of both seeds the PRNG). */
export function typo(q, seed) {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(`${seed}\u0000${q}`)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return misspell(q, prng(h));
}
