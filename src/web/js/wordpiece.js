// BERT WordPiece in plain JavaScript, for the static tier of a snapshot: `webrag/static` turns a
// query into word-piece ids as the engine's tokenizer does (src/embed/tokenizer.rs), reading the
// vocabulary in shards so that a query fetches only the entries its words can use.
//
// The pipeline (Devlin et al., BERT §3; the `tokenizers` crate's BertNormalizer,
// BertPreTokenizer and WordPiece): added tokens matched in the raw text first (leftmost, then
// longest); then per character: drop NUL, U+FFFD and control characters (`clean_text`),
// whitespace to a space, a space on each side of a CJK ideograph, NFD without nonspacing marks
// (`strip_accents`), lowercase; split at whitespace, each punctuation character a word; each word
// greedy longest-match-first with the continuation prefix (`##`); a word longer than
// `maxWordChars` characters or with no match is one `[UNK]`. `tests/e2e/wordpiece.test.mjs`
// checks the ids against the engine's on the tokenizer parity corpus.

const CONTROL = /^\p{C}$/u;
const SPACE = /^\p{White_Space}$/u;
const PUNCT = /^[\p{P}!-/:-@[-`{-~]$/u;
const NONSPACING = /^\p{Mn}$/u;

function isChinese(cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF)
    || (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF)
    || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

/** Normalizes a stretch of text without added tokens and splits it into words (arrays of characters). */
export function preTokenize(text, spec) {
  const norm = [];
  const push = (c) => {
    if (spec.lowercase) for (const l of c.toLowerCase()) norm.push(l);
    else norm.push(c);
  };
  for (const c of text) {
    const cp = c.codePointAt(0);
    if (spec.cleanText && (cp === 0 || cp === 0xFFFD || (c !== '\t' && c !== '\n' && c !== '\r' && CONTROL.test(c)))) continue;
    const ch = spec.cleanText && (c === '\t' || c === '\n' || c === '\r' || SPACE.test(c)) ? ' ' : c;
    const pad = spec.chinese && isChinese(cp);
    if (pad) norm.push(' ');
    if (spec.stripAccents) {
      for (const d of ch.normalize('NFD')) if (!NONSPACING.test(d)) push(d);
    } else push(ch);
    if (pad) norm.push(' ');
  }
  const words = [];
  let word = [];
  for (const c of norm) {
    const space = c === '\t' || c === '\n' || c === '\r' || SPACE.test(c);
    if (space || PUNCT.test(c)) {
      if (word.length) words.push(word);
      word = [];
      if (!space) words.push([c]);
    } else word.push(c);
  }
  if (word.length) words.push(word);
  return words;
}

/**
 * The shard key of a vocabulary lookup (the engine's `snapshot::vocab_key`): the prefix for a
 * continuation, then the piece's first two characters.
 */
export function vocabKey(prefix, cont, chars) {
  return (cont ? prefix : '') + chars.slice(0, 2).join('');
}

/**
 * Word-piece ids of `text` (no `[CLS]`/`[SEP]`). `spec` is the snapshot's `static.wordpiece`;
 * `entries(key)` resolves to the vocabulary shard holding the pieces of that key (an object
 * piece → id), fetched once per shard by the caller.
 */
export async function encode(text, spec, entries) {
  const ids = [];
  const added = (spec.added ?? []).filter(([t]) => t.length > 0);
  let rest = 0;
  while (rest < text.length) {
    let next = null;
    for (const [t, id] of added) {
      const at = text.indexOf(t, rest);
      if (at >= 0 && (!next || at < next.at || (at === next.at && t.length > next.len))) next = { at, len: t.length, id };
    }
    const end = next ? next.at : text.length;
    for (const w of preTokenize(text.slice(rest, end), spec)) ids.push(...await wordIds(w, spec, entries));
    if (next) { ids.push(next.id); rest = next.at + next.len; } else rest = text.length;
  }
  return ids;
}

async function wordIds(chars, spec, entries) {
  if (chars.length > spec.maxWordChars) return [spec.unk];
  const out = [];
  let start = 0;
  while (start < chars.length) {
    const cont = start > 0;
    const rest = chars.slice(start);
    // Every candidate starting here has one of these two keys.
    const [two, one] = await Promise.all([entries(vocabKey(spec.prefix, cont, rest)), rest.length > 1 ? entries(vocabKey(spec.prefix, cont, rest.slice(0, 1))) : null]);
    let hit = null;
    for (let end = chars.length; end > start; end--) {
      const piece = (cont ? spec.prefix : '') + chars.slice(start, end).join('');
      const table = end - start >= 2 ? two : (one ?? two);
      if (table && Object.hasOwn(table, piece)) { hit = { id: table[piece], end }; break; }
    }
    if (!hit) return [spec.unk];
    out.push(hit.id);
    start = hit.end;
  }
  return out;
}
