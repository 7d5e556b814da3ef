// End-to-end: webrag/static over small sites built for one feature each by `webrag index`: a page
// with many matching sections draws only its share of the list, a site served under a sub-path
// (Sphinx-/MkDocs-shaped pages, a search page left out), typo tolerance, filters, metadata and
// sort from `data-webrag-*` attributes, and several snapshots searched as one. The 80-page news
// site and the browser tests are in static.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, rmSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, cli } from './harness.mjs';
import { StaticSearch, StaticSearchGroup } from '../../src/web/js/static.js';

test('a page with many matching sections does not fill the list: each page draws at most its share of the candidates', { timeout: 300_000 }, async () => {
  const DIR = join(ROOT, 'target/e2e-site-share');
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  const pageHtml = (title, body) => `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;
  // A reference page of 60 short sections, each naming JSON three times, and 12 pages that name
  // it once in a longer paragraph: by BM25 every section of the reference outranks them.
  const sections = Array.from({ length: 60 }, (_, i) => `<h2>Field ${i}</h2><p>JSON json JSON field ${i}.</p>`).join('');
  writeFileSync(join(DIR, 'reference.html'), pageHtml('Reference', sections));
  for (let i = 0; i < 12; i++) {
    writeFileSync(join(DIR, `guide${i}.html`), pageHtml(`Guide ${i}`, `<p>Settings of part ${i} live in a configuration file, written as TOML by default and as JSON when a tool needs it, with comments kept beside each setting and examples after the list of options.</p>`));
  }
  execFileSync(...cli(['index', DIR, '--out', join(DIR, 'webrag'), '--vectors', 'none', '--no-cache']), { cwd: ROOT, stdio: 'inherit' });
  const fsFetch = async (u) => { try { return new Response(readFileSync(decodeURIComponent(new URL(u).pathname))); } catch { return new Response('', { status: 404 }); } };
  const site = await StaticSearch.open(`file://${join(DIR, 'webrag')}/`, { fetch: fsFetch, offline: false });
  assert.ok(site.manifest.pages, 'the snapshot has a pages file');
  const top = (await site.keyword('json ', { k: 40 })).hits;
  const pageOf = async (c) => (await site.fragments([c]))[0].url;
  assert.deepEqual(new Set(await Promise.all(top.map((h) => pageOf(h.chunk)))), new Set(['/reference.html']), 'the first 40 chunks are all the reference page\'s');
  const r = (await site.search('json ', { mode: 'keyword', k: 10 })).results;
  assert.equal(r.length, 10, JSON.stringify(r.map((x) => x.url)));
  assert.equal(r[0].url, '/reference.html', 'the page with the best chunks first');
  assert.ok(r.slice(1).every((x) => /^\/guide\d+\.html$/.test(x.url)), 'then the other pages');
  assert.ok(r[0].sections.length >= 1, 'the reference page still shows its other sections');
});

test('a site served under a sub-path links to its own pages; its search page and sidebars are not indexed', { timeout: 300_000 }, async () => {
  const DIR = join(ROOT, 'target/e2e-site-subpath');
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(join(DIR, 'guide'), { recursive: true });
  // Pages as Sphinx and MkDocs write them: a sidebar in `div role="navigation"`, the text in
  // `role="main"`, and a search page of a search form and one sentence.
  const page = (title, body) => `<!doctype html><html><head><title>${title}</title></head><body>
<div role="navigation"><p>Table of Contents</p><ul><li><a href="../index.html">Kettle manual</a></li><li>Navigation</li></ul></div>
<div role="main"><h1>${title}</h1>${body}</div><footer><p>Built with a generator.</p></footer></body></html>`;
  writeFileSync(join(DIR, 'index.html'), page('Kettle manual', '<p>The kettle boils water for tea in two minutes.</p>'));
  writeFileSync(join(DIR, 'guide/descaling.html'), page('Descaling', '<h2>Vinegar</h2><p>Descale the kettle with vinegar once a month.</p>'));
  writeFileSync(join(DIR, 'search.html'), page('Search', '<noscript><p>Please activate JavaScript to enable the search functionality.</p></noscript><p>Searching for multiple words only shows matches that contain all words.</p><form action="" method="get"><input type="text" name="q"><input type="submit" value="search"></form><div id="search-results"></div>'));
  const built = (out, extra = []) => execFileSync(...cli(['index', DIR, '--out', out, '--vectors', 'none', '--no-cache', ...extra]), { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
  const run = (out, extra) => { const [cmd, args] = cli(['index', DIR, '--out', out, '--vectors', 'none', '--no-cache', ...extra]); return spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8' }); };
  const r = run(join(DIR, 'webrag'), []);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /left out 1 search pages \(a search box and little text\): \/search\.html/);
  const manifest = JSON.parse(readFileSync(join(DIR, 'webrag/manifest.json'), 'utf8'));
  assert.equal(manifest.documents, 2, 'the search page is left out');
  assert.equal(manifest.siteRoot, '../', 'the snapshot in <site>/webrag finds the site root one folder up');
  // The snapshot read from where a host serves the site under /docs/.
  const fsFetch = (root) => async (u) => { try { return new Response(readFileSync(join(root, decodeURIComponent(new URL(u).pathname).replace(/^\/docs\//, '')))); } catch { return new Response('', { status: 404 }); } };
  const site = await StaticSearch.open('http://example.test/docs/webrag/', { fetch: fsFetch(DIR), offline: false });
  assert.equal(site.siteUrl, 'http://example.test/docs/');
  const r1 = (await site.search('descale vinegar', { mode: 'keyword' })).results;
  assert.equal(r1[0].url, '/guide/descaling.html', 'url: the page from the site root, as indexed');
  assert.equal(site.link(r1[0].url), 'http://example.test/docs/guide/descaling.html', 'link(): where the page is served');
  assert.equal(site.link(r1[0].section), 'http://example.test/docs/guide/descaling.html#:~:text=Vinegar');
  assert.equal(site.link('/'), 'http://example.test/docs/');
  for (const q of ['table of contents', 'navigation', 'searching multiple words']) {
    assert.deepEqual((await site.search(q, { mode: 'keyword' })).results.map((x) => x.url), [], `${q}: sidebars and the search page are not indexed`);
  }
  // Links that are not http(s) stay unlinked, whatever the site root.
  assert.equal(site.link('javascript:alert(1)'), null);
  assert.equal(site.link(null), null);
  // siteUrl overrides the manifest (a CDN, another folder); a hostile siteRoot falls back to the origin's root.
  const cdn = await StaticSearch.open('http://example.test/docs/webrag/', { fetch: fsFetch(DIR), offline: false, siteUrl: 'https://cdn.example/manual' });
  assert.equal(cdn.link('/guide/descaling.html'), 'https://cdn.example/manual/guide/descaling.html');
  await assert.rejects(StaticSearch.open('http://example.test/docs/webrag/', { fetch: fsFetch(DIR), offline: false, siteUrl: 7 }), TypeError);
  const hostile = (root) => async (u) => (new URL(u).pathname.endsWith('manifest.json') ? new Response(JSON.stringify({ ...manifest, siteRoot: root })) : fsFetch(DIR)(u));
  for (const root of ['javascript:alert(1)//', 'data:text/html,x/']) {
    const h = await StaticSearch.open('http://example.test/docs/webrag/', { fetch: hostile(root), offline: false });
    assert.equal(h.link('/guide/descaling.html'), 'http://example.test/guide/descaling.html', root);
  }
  await assert.rejects(StaticSearch.open('http://example.test/docs/webrag/', { fetch: hostile(7), offline: false }), (e) => e.code === 'SNAPSHOT_CORRUPT');
  // --out outside the site: no siteRoot (links from the origin's root) unless --site-url says where.
  built(join(ROOT, 'target/e2e-site-subpath-out'));
  assert.equal(JSON.parse(readFileSync(join(ROOT, 'target/e2e-site-subpath-out/manifest.json'), 'utf8')).siteRoot, undefined);
  built(join(ROOT, 'target/e2e-site-subpath-out'), ['--site-url', '/docs']);
  assert.equal(JSON.parse(readFileSync(join(ROOT, 'target/e2e-site-subpath-out/manifest.json'), 'utf8')).siteRoot, '/docs/');
  built(join(DIR, 'assets/search'));
  assert.equal(JSON.parse(readFileSync(join(DIR, 'assets/search/manifest.json'), 'utf8')).siteRoot, '../../');
  const bad = run(join(DIR, 'webrag'), ['--site-url', 'javascript:alert(1)']);
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /site-url/);
  assert.equal(JSON.parse(readFileSync(join(DIR, 'webrag/manifest.json'), 'utf8')).siteRoot, '../', 'a refused build leaves the snapshot as it was');
});

test('a misspelled word finds the pages of its nearest vocabulary words, below exact matches, and says which', { timeout: 300_000 }, async () => {
  const DIR = join(ROOT, 'target/e2e-site-typos');
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  const pageHtml = (title, body) => `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${body}</p></main></body></html>`;
  writeFileSync(join(DIR, 'descaling.html'), pageHtml('Descaling', 'Descaling the kettle with vinegar keeps the element clean.'));
  writeFileSync(join(DIR, 'filters.html'), pageHtml('Filters', 'The limescale filter sits in the spout of the kettle.'));
  writeFileSync(join(DIR, 'warranty.html'), pageHtml('Warranty', 'The warranty covers the heating element for two years.'));
  writeFileSync(join(DIR, 'vinegars.html'), pageHtml('Vinegars', 'Which vinegar to buy for cleaning.'));
  execFileSync(...cli(['index', DIR, '--out', join(DIR, 'webrag'), '--vectors', 'none', '--no-cache']), { cwd: ROOT, stdio: 'pipe' });
  const fetched = [];
  const fsFetch = async (u) => { fetched.push(new URL(u).pathname); try { return new Response(readFileSync(decodeURIComponent(new URL(u).pathname))); } catch { return new Response('', { status: 404 }); } };
  const site = await StaticSearch.open(`file://${join(DIR, 'webrag')}/`, { fetch: fsFetch, offline: false });
  const urls = (r) => r.results.map((x) => x.url);
  // One edit in a word of 4-7 letters (a swap counts one), two in a longer one.
  const one = await site.search('warrnaty', { mode: 'keyword' });
  assert.deepEqual(urls(one), ['/warranty.html']);
  assert.deepEqual(one.corrections, { warrnaty: ['warranty'] });
  const two = await site.search('descalling kettel', { mode: 'keyword' });
  assert.deepEqual(two.corrections, { descalling: ['descaling'], kettel: ['kettle'] });
  assert.equal(urls(two)[0], '/descaling.html', 'the page with both corrected words first');
  // Below exact matches: the page naming "vinegar" as typed ranks above one found through a correction.
  const mixed = await site.search('vinegar elemnt', { mode: 'keyword' });
  assert.deepEqual(mixed.corrections, { elemnt: ['element'] });
  assert.deepEqual(urls(mixed).slice(0, 2), ['/descaling.html', '/vinegars.html'], 'both words (one corrected), then the exact word alone');
  assert.ok(urls(mixed).indexOf('/warranty.html') > urls(mixed).indexOf('/vinegars.html'), 'a correction alone ranks below the exact word');
  // No correction beyond the budget, for short words, or with typos: false; nothing for a word that is found.
  const far = await site.search('wxrrnxty', { mode: 'keyword' });
  assert.deepEqual([urls(far), far.corrections], [[], {}], 'three edits in an 8-letter word');
  assert.deepEqual((await site.search('spuot', { mode: 'keyword' })).corrections, { spuot: ['spout'] });
  assert.deepEqual((await site.search('tha', { mode: 'keyword' })).corrections, {}, 'a 3-letter word is not corrected');
  const off = await site.search('warrnaty', { mode: 'keyword', typos: false });
  assert.deepEqual([urls(off), off.corrections], [[], {}]);
  assert.deepEqual((await site.search('warranty', { mode: 'keyword' })).corrections, {});
  await assert.rejects(site.search('warrnaty', { typos: 'yes' }), (e) => e instanceof RangeError && /typos/.test(e.message));
  // Bounded reads: the words index and at most three blocks per corrected word.
  fetched.length = 0;
  const fresh = await StaticSearch.open(`file://${join(DIR, 'webrag')}/`, { fetch: fsFetch, offline: false });
  await fresh.keyword('warrnaty');
  assert.ok(fetched.filter((f) => /\/w\/\d+-/.test(f)).length <= 3, fetched.join(' '));
});

test('filters, metadata and sort from the pages\' data-webrag-* attributes: facet counts, narrowed and sorted results, a listing without a query', { timeout: 300_000 }, async () => {
  const DIR = join(ROOT, 'target/e2e-site-filters');
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  // A blog: tags (several a page), an author, a date and a numeric rank to sort by, a cover image as metadata.
  const posts = [
    ['kettle', 'Choosing a kettle', ['home', 'tea'], 'Ann', '2024-03-01', 9],
    ['descale', 'Descaling a kettle', ['home', 'cleaning'], 'Bo', '2023-11-20', 100],
    ['green', 'Green tea and its kettle', ['tea'], 'Ann', '2024-05-12', 10],
    ['travel', 'A kettle for travel', ['travel'], 'Cy', '2022-07-01', null],
  ];
  for (const [f, title, tags, author, date, rank] of posts) {
    writeFileSync(join(DIR, `${f}.html`), `<!doctype html><html><head><title>${title}</title>
      <meta data-webrag-sort="date[content]" content="${date}"><meta data-webrag-meta="image[content]" content="/img/${f}.png"></head>
      <body><main><h1>${title}</h1><p>By <span data-webrag-filter="author">${author}</span>${rank === null ? '' : ` · <span data-webrag-sort="rank">${rank}</span>`}.</p>
      <ul>${tags.map((t) => `<li data-webrag-filter="tag:${t}">#${t}</li>`).join('')}</ul><p>All about the kettle: water, tea and limescale.</p></main></body></html>`);
  }
  execFileSync(...cli(['index', DIR, '--out', join(DIR, 'webrag'), '--vectors', 'none', '--no-cache']), { cwd: ROOT, stdio: 'pipe' });
  const manifest = JSON.parse(readFileSync(join(DIR, 'webrag/manifest.json'), 'utf8'));
  assert.deepEqual(manifest.filters.map((f) => [f.key, f.values, f.pages]), [['author', 3, 4], ['tag', 4, 4]]);
  assert.deepEqual(manifest.sort.map((s) => [s.key, s.numeric, s.pages]), [['date', false, 4], ['rank', true, 3]]);
  const fetched = [];
  const fsFetch = async (u) => { fetched.push(new URL(u).pathname); try { return new Response(readFileSync(decodeURIComponent(new URL(u).pathname))); } catch { return new Response('', { status: 404 }); } };
  const open = () => StaticSearch.open(`file://${join(DIR, 'webrag')}/`, { fetch: fsFetch, offline: false });
  const site = await open();
  const urls = (r) => r.results.map((x) => x.url);
  // Counts without a query; each key counted under the other keys' filters only.
  assert.deepEqual(await site.filters(), { author: { Ann: 2, Bo: 1, Cy: 1 }, tag: { cleaning: 1, home: 2, tea: 2, travel: 1 } });
  assert.deepEqual(await site.filters({ filters: { tag: 'tea' } }), { author: { Ann: 2, Bo: 0, Cy: 0 }, tag: { cleaning: 1, home: 2, tea: 2, travel: 1 } });
  // Filters: any of a key's values, every key.
  const tea = await site.search('kettle', { filters: { tag: 'tea' } });
  assert.deepEqual(new Set(urls(tea)), new Set(['/kettle.html', '/green.html']));
  assert.deepEqual(tea.filters.author, { Ann: 2, Bo: 0, Cy: 0 });
  assert.deepEqual(tea.filters.tag, { cleaning: 1, home: 2, tea: 2, travel: 1 }, 'a key\'s own selection does not narrow its counts');
  assert.deepEqual(new Set(urls(await site.search('kettle', { filters: { tag: ['tea', 'travel'], author: 'Ann' } }))), new Set(['/kettle.html', '/green.html']));
  assert.deepEqual(urls(await site.search('kettle', { filters: { tag: 'travel', author: 'Ann' } })), []);
  assert.deepEqual(urls(await site.search('kettle', { filters: { colour: 'red' } })), [], 'a key the snapshot lacks keeps no page');
  // Counts follow the query: only the pages it matches.
  assert.deepEqual((await site.search('limescale descaling')).filters.author, { Ann: 2, Bo: 1, Cy: 1 });
  assert.deepEqual((await site.search('travel')).filters.tag, { cleaning: 0, home: 0, tea: 0, travel: 1 });
  // Sort: by date as strings, by rank as numbers (9 < 10 < 100); pages without a value last.
  const byDate = await site.search('kettle', { sort: { date: 'desc' } });
  assert.deepEqual(urls(byDate), ['/green.html', '/kettle.html', '/descale.html', '/travel.html']);
  assert.deepEqual(byDate.results.map((r) => r.sortValue), ['2024-05-12', '2024-03-01', '2023-11-20', '2022-07-01']);
  assert.deepEqual(urls(await site.search('kettle', { sort: { rank: 'asc' } })), ['/kettle.html', '/green.html', '/descale.html', '/travel.html']);
  assert.deepEqual(urls(await site.search('kettle', { sort: { rank: 'desc' } })).slice(0, 3), ['/descale.html', '/green.html', '/kettle.html']);
  assert.deepEqual(urls(await site.search('kettle', { sort: { rank: 'asc' }, k: 2 })), ['/kettle.html', '/green.html']);
  // No query: the pages that pass, in the sort's order.
  const listing = await site.search('', { filters: { author: 'Ann' }, sort: { date: 'asc' } });
  assert.deepEqual(urls(listing), ['/kettle.html', '/green.html']);
  assert.equal(listing.results[0].title, 'Choosing a kettle');
  // Metadata with every result.
  assert.deepEqual(tea.results.map((r) => r.meta.image).sort(), ['/img/green.png', '/img/kettle.png']);
  // Bytes: with facets: false a filtered query fetches its key's filter file and no other.
  fetched.length = 0;
  const lean = await open();
  await lean.search('kettle', { filters: { tag: 'tea' }, facets: false });
  const files = (dir) => fetched.filter((f) => f.includes(`/webrag/${dir}/`)).map((f) => f.split('/webrag/')[1]);
  assert.deepEqual(files('x'), [manifest.filters[1].file]);
  assert.deepEqual(files('o'), []);
  fetched.length = 0;
  await (await open()).search('kettle');
  assert.deepEqual(files('x').sort(), manifest.filters.map((f) => f.file).sort(), 'a query counts every filter by default');
  // Bad options: typed errors before any fetch.
  await assert.rejects(site.search('kettle', { filters: 'tea' }), TypeError);
  await assert.rejects(site.search('kettle', { filters: { tag: 3 } }), TypeError);
  await assert.rejects(site.search('kettle', { sort: { date: 'up' } }), RangeError);
  await assert.rejects(site.search('kettle', { sort: { date: 'asc', rank: 'asc' } }), RangeError);
  // A damaged filter file: a typed error, no page let through, the rest of the snapshot searches.
  const bad = manifest.filters[1].file;
  const damaged = async (u) => (u.endsWith(bad) ? new Response('not gzip') : fsFetch(u));
  const hurt = await StaticSearch.open(`file://${join(DIR, 'webrag')}/`, { fetch: damaged, offline: false });
  const r = await hurt.search('kettle', { filters: { tag: 'tea' } });
  assert.ok(r.errors.some((e) => e.code === 'SNAPSHOT_CORRUPT' && e.file === bad), JSON.stringify(r.errors));
  assert.deepEqual(urls(r), []);
  assert.equal((await hurt.search('kettle')).results.length, 4);
  // Two snapshots as one: counts summed, sorted results merged by value across them.
  const group = await StaticSearch.open([`file://${join(DIR, 'webrag')}/`, `file://${join(DIR, 'webrag')}/`], { fetch: fsFetch, offline: false });
  assert.deepEqual((await group.filters()).author, { Ann: 4, Bo: 2, Cy: 2 });
  const merged = await group.search('kettle', { sort: { rank: 'desc' }, filters: { tag: ['tea', 'cleaning'] } });
  assert.deepEqual(merged.results.map((x) => [x.snapshot, x.sortValue]), [[0, 100], [1, 100], [0, 10], [1, 10], [0, 9], [1, 9]]);
  assert.deepEqual(merged.filters.tag, { cleaning: 2, home: 4, tea: 4, travel: 2 });
});

test('filter keys and values named __proto__ or constructor stay data in the counts (no prototype pollution)', async () => {
  const { Fields } = await import('../../src/web/js/static-fields.js');
  const file = { v: [['__proto__', [0]], ['constructor', [1]], ['polluted', [0, 1]]] };
  const m = { documents: 2, filters: [{ key: '__proto__', file: 'a' }, { key: 'constructor', file: 'a' }] };
  const counts = await new Fields(m, async () => file).counts(null, null);
  assert.equal(Object.getPrototypeOf(counts), Object.prototype);
  assert.deepEqual(Object.keys(counts), ['__proto__', 'constructor']);
  assert.deepEqual(JSON.parse(JSON.stringify(counts.constructor)), Object.fromEntries([['__proto__', 1], ['constructor', 1], ['polluted', 2]]));
  assert.equal({}.polluted, undefined);
  const group = new StaticSearchGroup([{ filters: async () => counts }, { filters: async () => counts }], [1, 1]);
  const summed = await group.filters();
  assert.equal(JSON.parse(JSON.stringify(summed))['__proto__'].polluted, 4);
  assert.equal({}.polluted, undefined);
});

test('several snapshots as one: pages of both sites fused by weight, each linked where its site is served, one without vectors by keyword', { timeout: 300_000 }, async () => {
  const DIR = join(ROOT, 'target/e2e-site-group');
  rmSync(DIR, { recursive: true, force: true });
  const pageHtml = (title, body) => `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${body}</p></main></body></html>`;
  for (const [site, pages] of Object.entries({
    manual: { 'kettle.html': ['Kettle', 'The kettle boils water for tea.'], 'descaling.html': ['Descaling', 'Descale the kettle with vinegar.'] },
    blog: { 'tea.html': ['Green tea', 'Water for green tea should not boil: 80 degrees.'], 'travel.html': ['Travel kettle', 'A travel kettle folds flat.'] },
  })) {
    mkdirSync(join(DIR, site), { recursive: true });
    for (const [f, [t, b]] of Object.entries(pages)) writeFileSync(join(DIR, site, f), pageHtml(t, b));
  }
  const wrs = join(ROOT, 'src/web/model/webrag-static.wrs');
  execFileSync(...cli(['index', join(DIR, 'manual'), '--out', join(DIR, 'manual/webrag'), '--vectors', 'static', '--static-model', wrs, '--no-cache']), { cwd: ROOT, stdio: 'pipe' });
  execFileSync(...cli(['index', join(DIR, 'blog'), '--out', join(DIR, 'blog/webrag'), '--vectors', 'none', '--no-cache']), { cwd: ROOT, stdio: 'pipe' });
  // The two sites as a host serves them: the manual at /manual/, the blog on another origin.
  const hosts = { 'http://docs.test/manual/': join(DIR, 'manual'), 'http://blog.test/': join(DIR, 'blog') };
  const fetchFn = async (u) => {
    const [root, dir] = Object.entries(hosts).find(([r]) => u.startsWith(r)) ?? [];
    try { return new Response(readFileSync(join(dir, decodeURIComponent(u.slice(root.length))))); } catch { return new Response('', { status: 404 }); }
  };
  const group = await StaticSearch.open(['http://docs.test/manual/webrag/', { url: 'http://blog.test/webrag/', weight: 1 }], { fetch: fetchFn, offline: false });
  assert.ok(group instanceof StaticSearchGroup);
  assert.deepEqual(group.snapshots.map((s) => Boolean(s.manifest.static)), [true, false]);
  const r = await group.search('kettle water');
  const got = r.results.map((x) => [x.snapshot, x.url]);
  assert.deepEqual(new Set(got.map(([i]) => i)), new Set([0, 1]), `pages of both snapshots: ${JSON.stringify(got)}`);
  assert.ok(got.some(([, u]) => u === 'http://docs.test/manual/kettle.html') && got.some(([, u]) => u === 'http://blog.test/tea.html'), JSON.stringify(got));
  assert.equal(group.link(r.results[0].url), r.results[0].url, 'a group result is a link already');
  assert.deepEqual(r.errors, []);
  // Weights: the first list's best page leads with an equal weight; the second's when it weighs more.
  const equal = (await group.search('kettle', { mode: 'keyword' })).results;
  assert.equal(equal[0].snapshot, 0);
  const heavy = await StaticSearch.open(['http://docs.test/manual/webrag/', { url: 'http://blog.test/webrag/', weight: 3 }], { fetch: fetchFn, offline: false });
  assert.equal((await heavy.search('kettle', { mode: 'keyword' })).results[0].snapshot, 1);
  // Staged: the keyword stage of both, then the fusion with the static tier's later stages.
  const stages = [];
  await group.search('kettle water', { onProgress: ({ stage, results }) => stages.push([stage, results.length]) });
  assert.equal(stages[0][0], 'keyword');
  assert.ok(stages.length >= 2, JSON.stringify(stages));
  // Typos are corrected in every snapshot; semantic alone is refused by the keyword-only one, not by the group.
  assert.deepEqual((await group.search('kettel', { mode: 'keyword' })).corrections, { kettel: ['kettle'] });
  const sem = await group.search('boiling water', { mode: 'semantic' });
  assert.ok(sem.results.every((x) => x.snapshot === 0) && sem.results.length > 0, JSON.stringify(sem.results.map((x) => x.url)));
  assert.deepEqual(sem.errors.map((e) => e.code), ['SNAPSHOT_NO_EMBEDDER']);
  // Bad input: typed errors.
  await assert.rejects(StaticSearch.open([], { fetch: fetchFn }), RangeError);
  await assert.rejects(StaticSearch.open([{ url: 'http://blog.test/webrag/', weight: 0 }], { fetch: fetchFn }), /weight/);
  await assert.rejects(StaticSearch.open([{ weight: 1 }], { fetch: fetchFn }), /no url/);
  await assert.rejects(StaticSearch.open(['http://blog.test/webrag/', 'http://nowhere.test/webrag/'], { fetch: fetchFn, offline: false }), (e) => e.code === 'SNAPSHOT_UNAVAILABLE');
  await assert.rejects(group.search('kettle', { k: 0 }), RangeError);
});

