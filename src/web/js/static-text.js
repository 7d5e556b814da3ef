// webrag/static's text helpers: the analyzer (the same terms as the Rust one), query-aware
// excerpts with their matched spans, the proximity signal and section links. Re-exported by
// static.js; no imports.

// ---- options: defaults, ranges and values from src/snapshot/loader.rs ----------------------

// generated: loader-options (webrag surface)
/** The numeric options' `[default, min, max]`, by name (integers; src/snapshot/loader.rs). */
export const RANGES = { k: [10, 1, 1000], sections: [3, 1, 20], max: [3, 1, 100], chars: [200, 20, 10000] };
/** The values of the options that take one of a few, the default first. */
export const CHOICES = { mode: ['hybrid', 'keyword', 'semantic'], group: ['page', 'chunk'] };
// end generated

/**
 * `value` of option `name`, or its default when it is undefined: an integer in its range
 * (`RANGES`), or one of its values (`CHOICES`). Otherwise a `RangeError` naming the option.
 */
export function option(name, value) {
  const range = RANGES[name];
  const values = range ? null : CHOICES[name];
  if (value === undefined) return range ? range[0] : values[0];
  const ok = range ? Number.isInteger(value) && value >= range[1] && value <= range[2] : values.includes(value);
  if (ok) return value;
  const got = typeof value === 'string' ? `'${value}'` : typeof value === 'number' || value === null ? String(value) : typeof value;
  const want = range ? `an integer in ${range[1]}..=${range[2]}` : `one of ${values.map((v) => `'${v}'`).join(', ')}`;
  throw new RangeError(`webrag/static: option ${name} must be ${want} (got ${got})`);
}

// ---- the analyzer: the same terms as the Rust one (src/text/analyze.rs) --------------------
export const isCjk = (cp) => (cp >= 0x3040 && cp <= 0x30ff) || (cp >= 0x3400 && cp <= 0x4dbf) || (cp >= 0x4e00 && cp <= 0x9fff)
  || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x20000 && cp <= 0x2fa1f);
const MID_PUNCT = /[!-/:-@[-^`{-~\u00B7\u0387\u05F3\u05F4\u2018\u2019\u2024\u2027\uFE50\uFE52\uFE54\uFE55]/u;
const ALNUM = /[\p{Alphabetic}\p{N}]/u;
let segmenter;

// Katakana that UAX #29 joins into one word (Word_Break=Katakana, within the CJK ranges).
const isKatakanaWord = (cp) => (cp >= 0x30a0 && cp <= 0x30fa) || (cp >= 0x30fc && cp <= 0x30ff) || cp === 0x309b || cp === 0x309c;
// Scripts that ICU segments with a dictionary but UAX #29 (the Rust side) by grapheme cluster.
const DICTIONARY_SCRIPT = /[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Tai_Tham}\p{Script=Tai_Viet}\p{Script=New_Tai_Lue}]/u;
let graphemes;

/**
 * Splits text into index terms: Unicode words, NFKC + lowercase, split at inner punctuation;
 * runs of CJK characters as overlapping bigrams (a lone character as itself), a run going on
 * across punctuation and spaces (a word ends it). The same terms as
 * the Rust analyzer (src/text/analyze.rs), which follows UAX #29 without dictionaries: CJK is
 * read character by character here (Katakana runs are one word, as in UAX #29), whatever
 * `Intl.Segmenter`'s dictionary says, and Thai-like scripts by grapheme cluster. With `stem`
 * (`word → stem`, a language's stemmer from `static-stem.js`) each word's terms, not CJK
 * bigrams, are stemmed, as a site build stems a page in its language (`analyze_in`).
 */
export function analyze(text, stem = null) {
  segmenter ??= new Intl.Segmenter('und', { granularity: 'word' });
  graphemes ??= new Intl.Segmenter('und', { granularity: 'grapheme' });
  const out = [];
  let run = [];
  const flush = () => {
    if (run.length === 1) out.push(run[0]);
    else for (let i = 0; i + 1 < run.length; i++) out.push(run[i] + run[i + 1]);
    run = [];
  };
  // One CJK character: the run goes on across punctuation and spaces ("消息：目前" → 消息, 息目,
  // 目前); a word ends it.
  const cjkChar = (ch) => { run.push(ch); };
  const lower = (s) => { let r = ''; for (const c of s) r += c.toLowerCase(); return r; };
  const word = (w) => {
    if (!ALNUM.test(w)) return;
    if (run.length) flush();
    for (const p of lower(w.normalize('NFKC')).split(MID_PUNCT)) if (ALNUM.test(p)) out.push(stem ? stem(p) : p);
  };
  // CJK "words" as UAX #29 makes them: one per character, except Katakana runs.
  let kata = null; // the Katakana word being read: {start, chars, end}
  const endKata = () => {
    if (!kata) return;
    if (kata.chars.length === 1) cjkChar(kata.chars[0]);
    else {
      if (run.length) flush();
      for (const c of kata.chars) cjkChar(c);
    }
    kata = null;
  };
  for (const { segment, index } of segmenter.segment(text)) {
    let off = 0;
    let plain = '';
    const endPlain = () => {
      if (!plain) return;
      if (DICTIONARY_SCRIPT.test(plain)) for (const { segment: g } of graphemes.segment(plain)) word(g);
      else word(plain);
      plain = '';
    };
    for (const ch of segment) {
      const cp = ch.codePointAt(0);
      const at = index + off;
      if (isCjk(cp)) {
        endPlain();
        if (isKatakanaWord(cp) && kata && kata.end === at) { kata.chars.push(ch); kata.end = at + ch.length; }
        else {
          endKata();
          if (isKatakanaWord(cp)) kata = { start: at, chars: [ch], end: at + ch.length };
          else cjkChar(ch);
        }
      } else {
        endKata();
        plain += ch;
      }
      off += ch.length;
    }
    endPlain();
  }
  endKata();
  if (run.length) flush();
  return out;
}

/**
 * How much of a query is read: its first 1,024 UTF-16 code units (a longer one — a pasted page,
 * 100,000 CJK characters — is cut there, so a search's time and the shards it fetches stay
 * bounded whatever is typed).
 */
export const MAX_QUERY_CHARS = 1024;

/** `query` as a string of at most `MAX_QUERY_CHARS` code units, not ending inside a surrogate pair. */
export function clipQuery(query) {
  const s = String(query ?? '');
  if (s.length <= MAX_QUERY_CHARS) return s;
  const cut = s.slice(0, MAX_QUERY_CHARS);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/**
 * A query's terms: `analyze` word by word (split at spaces), as the engine parses queries, so a
 * space typed between two CJK words keeps them apart (no bigram across it); the query is read up
 * to `MAX_QUERY_CHARS`. `stem`: as `analyze`'s.
 */
export function analyzeQuery(query, stem = null) {
  return clipQuery(query).split(/\p{White_Space}+/u).flatMap((w) => (w ? analyze(w, stem) : []));
}

/** FNV-1a 32 of the UTF-8 bytes (the term → shard hash of the writer). */
export function fnv1a(s) {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(s)) { h ^= b; h = Math.imul(h, 0x01000193) >>> 0; }
  return h >>> 0;
}

// ---- query-aware excerpts -------------------------------------------------------------------

const WORD_CHAR = /[\p{Alphabetic}\p{N}\p{M}]/u;
/** `s` lowercased character by character, keeping its length (offsets stay valid). */
function lowerSameLength(s) {
  let out = '';
  for (const c of s) { const l = c.toLowerCase(); out += l.length === c.length ? l : c; }
  return out;
}

/**
 * What a query highlights: its terms as the analyzer makes them (words; CJK bigrams), the last
 * word (2 characters or more) also as a prefix while the query ends in a letter or digit (the
 * visitor is still typing it), as `keyword` completes it: the query's last term, which may
 * repeat an earlier one (`line by line`). With `stem` a needle is a word's stem (`stemmed`) and
 * matches the words of a text that stem to it. `[{term, prefix, cjk, stemmed}]`.
 */
let lastNeedles = { query: null, stem: null, needles: [] }; // a search highlights every result for one query

function needles(query, stem) {
  if (query === lastNeedles.query && stem === lastNeedles.stem) return lastNeedles.needles;
  const all = analyzeQuery(query);
  const typed = all.at(-1);
  const terms = [...new Set(all)];
  const typing = /[\p{Alphabetic}\p{N}]$/u.test(clipQuery(query));
  const out = [];
  const seen = new Set();
  for (const raw of terms) {
    const cp = raw.codePointAt(0);
    const cjk = isCjk(cp);
    const prefix = typing && raw === typed && !cjk && [...raw].length >= 2;
    const term = stem && !cjk ? stem(raw) : raw;
    // A word being typed is matched as typed (a prefix), and by its stem once it is a word.
    if (prefix) out.push({ term: raw, cjk, prefix, stemmed: false });
    if ((!prefix || term !== raw) && !seen.has(term)) out.push({ term, cjk, prefix: false, stemmed: Boolean(stem) && !cjk });
    seen.add(term);
  }
  lastNeedles = { query, stem, needles: out };
  return out;
}

/**
 * Where the query's terms occur in `text`: merged `[start, end)` spans (UTF-16 offsets) with the
 * needles each covers. Words match at word boundaries (a prefix needle at its start only),
 * case-insensitively; CJK bigrams match anywhere, and overlapping ones merge ("北京" + "京大").
 */
function matchSpans(text, ns, stem) {
  const lower = lowerSameLength(text);
  const found = [];
  // Stemmed needles: each word of the text (split as the analyzer splits it) by its stem.
  const stemmed = new Map();
  ns.forEach((n, k) => { if (n.stemmed) stemmed.set(n.term, [...(stemmed.get(n.term) ?? []), k]); });
  if (stemmed.size) {
    for (const m of lower.matchAll(/[\p{Alphabetic}\p{N}\p{M}_]+/gu)) {
      const ks = stemmed.get(stem(m[0].normalize('NFKC')));
      if (ks) for (const k of ks) found.push([m.index, m.index + m[0].length, k]);
    }
  }
  ns.forEach((n, k) => {
    if (n.stemmed) return;
    for (let at = lower.indexOf(n.term); at >= 0; at = lower.indexOf(n.term, at + 1)) {
      const end = at + n.term.length;
      if (!n.cjk && (WORD_CHAR.test(lower[at - 1] ?? '') || (!n.prefix && WORD_CHAR.test(lower[end] ?? '')))) continue;
      let stop = end;
      if (n.prefix) while (stop < lower.length && WORD_CHAR.test(lower[stop])) stop++;
      found.push([at, stop, k]);
    }
  });
  found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const spans = [];
  for (const [a, b, k] of found) {
    const last = spans.at(-1);
    if (last && a <= last.end) { last.end = Math.max(last.end, b); last.terms.add(k); } else spans.push({ start: a, end: b, terms: new Set([k]) });
  }
  return spans;
}

/**
 * How many of the query's distinct terms (as `highlight` matches them) occur in `text`; `stem`:
 * as `highlight`'s.
 */
export function termsIn(text, query, stem = null) {
  const ns = needles(String(query ?? ''), stem);
  const found = new Set();
  for (const sp of matchSpans(String(text ?? ''), ns, stem)) sp.terms.forEach((k) => found.add(ns[k].term));
  return found.size;
}

/**
 * A query-aware excerpt of `text`: the window of about `chars` characters holding the most
 * distinct query terms (then the most matches; the earliest on a tie), cut at word boundaries,
 * "…" where text was left out. Returns `{excerpt, highlights: [[start, end]…]}`, the matched
 * spans as UTF-16 offsets into `excerpt` (the page wraps them in `<mark>`). With no match, the
 * start of the text and no highlights. With `stem` (the snapshot's stemmer of the query's
 * language) a query word also matches the text's words of the same stem (`files` → `file`).
 */
export function highlight(text, query, { chars, stem = null } = {}) {
  chars = option('chars', chars);
  text = String(text ?? '');
  const spans = matchSpans(text, needles(String(query ?? ''), stem), stem);
  let best = { start: 0, score: -1 };
  for (let i = 0; i < spans.length; i++) {
    // The window starts a little before a span, so the match reads in context.
    const start = Math.max(0, spans[i].start - Math.floor(chars / 5));
    const terms = new Set();
    let hits = 0;
    for (let j = i; j < spans.length && spans[j].end <= start + chars; j++) { spans[j].terms.forEach((t) => terms.add(t)); hits++; }
    const score = terms.size * 1000 + hits;
    if (score > best.score) best = { start, score };
  }
  let start = best.start;
  let end = Math.min(text.length, start + chars);
  if (end === text.length) start = Math.max(0, end - chars);
  // Word boundaries: not inside a word (up to 20 characters back or forth).
  const inWord = (i) => i > 0 && i < text.length && WORD_CHAR.test(text[i - 1]) && WORD_CHAR.test(text[i]);
  for (let n = 0; n < 20 && inWord(start); n++) start++;
  for (let n = 0; n < 20 && inWord(end); n++) end--;
  // Never cut a surrogate pair.
  if (/[\uDC00-\uDFFF]/.test(text[start] ?? '')) start++;
  if (/[\uDC00-\uDFFF]/.test(text[end] ?? '')) end--;
  while (start < end && /\s/.test(text[start])) start++;
  const lead = start > 0 ? '…' : '';
  const excerpt = lead + text.slice(start, end).trimEnd() + (end < text.length ? '…' : '');
  const limit = excerpt.length - (end < text.length ? 1 : 0);
  const highlights = spans
    .map((sp) => [Math.max(sp.start, start) - start + lead.length, Math.min(sp.end, end) - start + lead.length])
    .filter(([a, b]) => a < b && b <= limit);
  return { excerpt, highlights };
}

/**
 * The proximity signal of a text for a query: the longest run of consecutive query terms that
 * occur consecutively in the text's terms, as a fraction of the query's length beyond its first
 * term (0: no two in a row; 1: the whole query as a phrase). `qterms` and `tterms` are analyzer
 * terms (CJK bigrams overlap, so a run of bigrams is a run of characters). With `prefixLast`
 * (the visitor is still typing the last word) the query's last term also matches a text term
 * it begins ("7月25日2" runs on into "7月25日，2023年").
 */
export function phrase(qterms, tterms, { prefixLast = false } = {}) {
  if (qterms.length < 2) return 0;
  const at = new Map();
  tterms.forEach((t, j) => { if (!at.has(t)) at.set(t, []); at.get(t).push(j); });
  const last = qterms.length - 1;
  const same = (t, k) => t === qterms[k] || (prefixLast && k === last && typeof t === 'string' && t.startsWith(qterms[k]));
  let best = 1;
  for (let i = 0; i + best < qterms.length; i++) {
    for (const j of at.get(qterms[i]) ?? []) {
      let n = 1;
      while (i + n < qterms.length && same(tterms[j + n], i + n)) n++;
      if (n > best) best = n;
    }
  }
  return (best - 1) / (qterms.length - 1);
}

/**
 * Whether `tterms` (a title's terms) begin with the query's terms `qterms`, in order, as a visitor
 * typing the start of a title writes them; with `prefixLast` the last query term may be the
 * start of the title's term at its place. False for an empty query.
 */
export function begins(qterms, tterms, { prefixLast = false } = {}) {
  if (!qterms.length || tterms.length < qterms.length) return false;
  const last = qterms.length - 1;
  return qterms.every((q, i) => tterms[i] === q || (prefixLast && i === last && tterms[i].startsWith(q)));
}

/**
 * The edit distance of `a` and `b` (strings, by code point): insertions, deletions,
 * substitutions and swaps of two neighbours (optimal string alignment) count 1; `max + 1` as soon
 * as it is over `max` (rows stop early, so a candidate costs O(len · max) at most).
 */
export function editDistance(a, b, max) {
  const x = [...a];
  const y = [...b];
  if (Math.abs(x.length - y.length) > max) return max + 1;
  let before = null;
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const cur = [i];
    let least = i;
    for (let j = 1; j <= y.length; j++) {
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) v = Math.min(v, before[j - 2] + 1);
      cur.push(v);
      least = Math.min(least, v);
    }
    if (least > max) return max + 1;
    before = prev;
    prev = cur;
  }
  return Math.min(prev[y.length], max + 1);
}

/**
 * The edits a query word may be from a vocabulary word and still match it (typo tolerance): 0
 * under 4 characters, over 32 (so a candidate costs at most 34 × 34 cells), for numbers and CJK;
 * 1 for 4 to 7 characters; 2 for 8 to 32.
 */
export function typoBudget(term) {
  const n = [...term].length;
  if (n < 4 || n > 32 || /^\p{N}+$/u.test(term) || isCjk(term.codePointAt(0))) return 0;
  return n <= 7 ? 1 : 2;
}

/**
 * A link to a section of a page: the page URL with a text fragment (`#:~:text=`, the URL
 * Fragment Text Directives spec: the browser scrolls to the text and marks it) of the section's
 * own heading — the last part of `heading` — or the page URL when the chunk has none. Browsers
 * without text fragments open the page at its top.
 */
export function sectionUrl(url, heading) {
  if (url == null) return null;
  const h = String(heading ?? '').split(' › ').at(-1).trim();
  if (!h) return url;
  const enc = (t) => encodeURIComponent(t).replace(/-/g, '%2D');
  return `${url.split('#')[0]}#:~:text=${enc(h)}`;
}
