// The question sets of the static-site benchmarks, shared by bench-rank.mjs and eval-stages.mjs:
// HotpotQA's and MuSiQue's train100 questions over sites made of their passage pools (one page a
// passage, `/p/{i}.html`); a question's relevant pages are its gold passages (2 for HotpotQA, 2–4
// for MuSiQue).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED } from '../e2e/harness.mjs';

const read = (f) => JSON.parse(readFileSync(join(SHARED, f), 'utf8'));

/** `{passages: [[title, text]…], questions: [{q, relevant: [url…]}…]}` of `name` (hotpotqa | musique). */
export function passageSet(name) {
  if (name === 'hotpotqa') {
    const passages = Object.entries(read('data/hotpotqa/train100_corpus.json')).map(([t, s]) => [t, s.join('')]);
    const index = new Map(passages.map(([t], i) => [t, i]));
    const questions = read('data/hotpotqa/train100.json')
      .map((q) => ({ q: q.question, relevant: [...new Set(q.supporting_facts.map((f) => index.get(f[0])).filter((i) => i !== undefined))].map((i) => `/p/${i}.html`) }))
      .filter((q) => q.relevant.length);
    return { passages, questions };
  }
  if (name === 'musique') {
    const passages = read('data/musique/train100_corpus.json').map((p) => [p.title, p.text]);
    const index = new Map();
    passages.forEach(([t, x], i) => { const k = `${t}\n${x}`; if (!index.has(k)) index.set(k, i); });
    const questions = read('data/musique/train100.json')
      .map((q) => ({ q: q.question, relevant: [...new Set(q.paragraphs.filter((p) => p.is_supporting).map((p) => index.get(`${p.title}\n${p.paragraph_text}`)).filter((i) => i !== undefined))].map((i) => `/p/${i}.html`) }))
      .filter((q) => q.relevant.length);
    return { passages, questions };
  }
  throw new Error(`unknown question set ${name}`);
}
