// webrag/static's ranking (src/web/js/static-rank.js) pinned on a fixture: twelve chunks of four
// pages in three fragment files, and search stages over them (hybrid + graph with a phrase in a
// title and in a text, keyword alone with BM25 scores, a one-term query, chunk results, a
// snapshot without a pages file with an unreadable fragment). Each stage's results — pages,
// shown chunks, sections, the retrievers that found them, graph paths and scores — must be
// those in static-rank.expected.json, which the Rust page ranking (src/native/page_rank.rs)
// writes and tests/static_rank.rs checks: a change to either side's ranking alone fails one of
// the two, not only the benchmarks. After a deliberate change to both, write the file with
// `WEBRAG_WRITE_FIXTURE=1 cargo test --test suite static_rank::` and say why in the commit.
//   node --test tests/e2e/static-rank.test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { rank } from '../../src/web/js/static-rank.js';

const FIXTURE = JSON.parse(readFileSync(new URL('./static-rank.fixture.json', import.meta.url), 'utf8'));
const EXPECTED = JSON.parse(readFileSync(new URL('./static-rank.expected.json', import.meta.url), 'utf8'));

test('static ranking: the expected results are of the fixture\'s stages', () => {
  assert.deepEqual(Object.keys(EXPECTED).sort(), FIXTURE.scenarios.map((s) => s.name).sort());
});
const numbered = (o) => o && new Map(Object.entries(o).map(([c, v]) => [Number(c), v]));

for (const s of FIXTURE.scenarios) {
  test(`static ranking: ${s.name}`, async () => {
    const { fragments, fusion, fragmentSize, k, sections } = FIXTURE;
    const read = [];
    const results = await rank({
      lists: s.lists,
      scores: numbered(s.scores) ?? null,
      paths: numbered(s.paths),
      group: s.group,
      pageOf: s.noPagesFile ? null : (c) => fragments[c]?.page,
      fragment: async (c) => { read.push(c); return s.unreadable?.includes(c) ? null : fragments[c] ?? null; },
      query: s.query,
      k,
      sections,
      fusion,
      fragmentSize,
    });
    const expected = EXPECTED[s.name];
    const got = JSON.parse(JSON.stringify(results.map((r) => ({ chunk: r.chunk, page: r.page, found: r.found, sections: r.sections?.map((x) => x.chunk), path: r.path }))));
    assert.deepEqual(got, expected.map(({ score, ...rest }) => JSON.parse(JSON.stringify(rest))));
    results.forEach((r, i) => assert.ok(Math.abs(r.score - expected[i].score) <= 1e-6, `${s.name} #${i + 1}: score ${r.score} vs ${expected[i].score}`));
    for (const r of results) {
      assert.ok(r.excerpt && Array.isArray(r.highlights) && typeof r.section === 'string', 'each result has its excerpt, highlights and section link');
    }
    // Fragments are read only for the chunks that may be shown: no more than k pages' worth.
    assert.ok(new Set(read).size <= k * 4, `${new Set(read).size} fragments read`);
  });
}
