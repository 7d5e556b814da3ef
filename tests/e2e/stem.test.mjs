// End-to-end: stemming per language in static-site mode. The stemmer modules (pkg/stem/<tag>.wasm,
// one per language, built by `./webrag.sh build` from the Rust stemmers) give webrag/static the
// Rust analyzer's stemmed terms in each of the 18 Snowball languages; a site of pages in English, French and no
// language is searched in the language a query asks for, its words stemmed as that language's
// pages were, and not diluted by the other language's pages. In the page's engine (`webrag` and
// `webrag/search`), notes with a `lang` are stemmed through the same modules, which the worker
// loads; a module it cannot load makes such an add reject with STEMMER_UNAVAILABLE.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, cli, launch, startServer } from './harness.mjs';
import { StaticSearch, analyze, highlight } from '../../src/web/js/static.js';
import { loadStemmer, loadStemmers, stemModule } from '../../src/web/js/static-stem.js';

const MODULES = join(ROOT, 'pkg/stem');
const NO_MODULE = existsSync(join(MODULES, 'en.wasm')) ? false : 'pkg/stem/ is not built (./webrag.sh build)';

// Each language: letters of its alphabet, and endings its stemmer removes or rewrites (so the
// words generated from them take the algorithm's branches), and a few words as written.
const LANGUAGES = {
  ar: ['ابتثجحخدذرزسشصضطظعغفقكلمنهوي', ['ون', 'ات', 'ين', 'ها', 'ية', 'ال', 'وال', 'كم'], ['المكتبات', 'الكتاب', 'يكتبون', 'مدرستها']],
  da: ['abcdefghijklmnoprstuvyæøå', ['erne', 'ende', 'hed', 'else', 'ene', 'erede', 'lig', 'løst', 'gt'], ['bøgerne', 'hurtigheden', 'kærlighed']],
  nl: ['abcdefghijklmnoprstuvwzë', ['heden', 'ene', 'en', 'se', 'lijk', 'baar', 'ing', 'heid', 'ië'], ['lichamelijk', 'boeken', 'mogelijkheden', 'geïnteresseerd']],
  en: ['abcdefghijklmnopqrstuvwxyz', ['ing', 'ed', 'ly', 'ness', 'ational', 'izer', 'ies', 'sses', 'fulness', "'s"], ['running', 'files', 'generously', 'happiness', 'skies']],
  fi: ['abdeghijklmnoprstuvyäö', ['ssa', 'ssä', 'lla', 'sta', 'ksi', 'kaan', 'inen', 'lle', 'ista'], ['taloissa', 'kirjastosta', 'suomalainen']],
  fr: ['abcdefghijlmnopqrstuvxyzàâçéèêëîïôûù', ['ement', 'issement', 'ations', 'euse', 'ités', 'aient', 'erions', 'ées'], ['continuellement', 'maisons', 'généralités', 'créées']],
  de: ['abcdefghijklmnoprstuvwzäöüß', ['ungen', 'lich', 'heit', 'keit', 'isch', 'ern', 'est', 'end'], ['häuser', 'möglichkeiten', 'straße', 'aufeinanderfolgenden']],
  el: ['αβγδεζηθικλμνξοπρστυφχψωάέήίόύώς', ['ματα', 'ισμος', 'ουσα', 'ηδες', 'ιες', 'ων', 'ους'], ['προβλήματα', 'καθηγητές', 'ελληνικά']],
  hu: ['abcdefghijklmnoprstuvzáéíóöőúüű', ['ban', 'ben', 'nak', 'nek', 'ból', 'ségek', 'ok', 'ják'], ['házakban', 'lehetőségek', 'magyarországon']],
  it: ['abcdefghilmnopqrstuvzàèéìòù', ['amente', 'azione', 'mente', 'ando', 'ità', 'issimo', 'ere'], ['velocemente', 'nazionalità', 'abbandonata']],
  no: ['abdefghijklmnoprstuvyæøå', ['ene', 'ende', 'hetene', 'elig', 'het', 'ert', 'lov'], ['bøkene', 'muligheter', 'kjærlighet']],
  pt: ['abcdefghijlmnopqrstuvxzáâãàçéêíóôõú', ['amente', 'ações', 'idades', 'ência', 'ável', 'aria', 'ções'], ['informações', 'possibilidades', 'rapidamente']],
  ro: ['abcdefghijlmnoprstuvxzăâîșşțţ', ['ilor', 'ațiilor', 'itate', 'ești', 'ului', 'ele', 'ând'], ['cărților', 'posibilitate', 'românești']],
  ru: ['абвгдежзийклмнопрстуфхцчшщъыьэюяё', ['ость', 'ами', 'ого', 'ется', 'ивший', 'ения', 'ыми'], ['книги', 'возможности', 'читающий', 'ёлка']],
  es: ['abcdefghijlmnopqrstuvxyzáéíóúñü', ['amente', 'aciones', 'idades', 'ando', 'iendo', 'ería', 'ísimo'], ['corriendo', 'posibilidades', 'rápidamente']],
  sv: ['abcdefghijklmnoprstuvyåäö', ['arna', 'erna', 'heten', 'ande', 'else', 'lig', 'löst'], ['böckerna', 'möjligheten', 'kärleken']],
  ta: ['அஆஇஈஉஊஎஏஐஒஓஔகஙசஞடணதநபமயரலவழளறன', ['களை', 'கள்', 'த்தில்', 'க்கு', 'ில்', 'ாக'], ['புத்தகங்கள்', 'மக்களுக்கு', 'தமிழ்நாட்டில்']],
  tr: ['abcçdefgğhıijklmnoöprsştuüvyz', ['lar', 'ler', 'ları', 'lerin', 'dan', 'den', 'siniz', 'lık'], ['kitaplar', 'evlerimizden', 'güzellikler', 'istanbul\'da']],
};

/** `n` words of a language: its own, then random stems of its letters with its endings (seeded). */
function words([letters, endings, own], n, seed) {
  let x = seed >>> 0 || 1;
  const rand = (m) => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x % m; };
  const alphabet = [...letters];
  const out = [...own];
  while (out.length < n) {
    let w = '';
    for (let i = 2 + rand(7); i > 0; i--) w += alphabet[rand(alphabet.length)];
    out.push(rand(4) === 0 ? w : w + endings[rand(endings.length)]);
  }
  return out;
}

/** Lines of text from `ws`: words with capitals, punctuation, numbers and CJK between them. */
function lines(ws) {
  const out = [];
  for (let i = 0; i < ws.length; i += 12) {
    const part = ws.slice(i, i + 12).map((w, j) => (j % 5 === 0 ? w.toUpperCase() : j % 7 === 3 ? `${w}, 3.14` : j % 11 === 6 ? `${w}中文` : w));
    out.push(part.join(' '));
  }
  out.push('x'.repeat(70) + 'ing', 'ing'.repeat(22), 'Ｆｕｌｌｗｉｄｔｈ ﬁles running');
  return out;
}

/** The Rust analyzer's terms of each line (`webrag analyze --lang`). */
function rustTerms(lang, texts) {
  const [cmd, args] = cli(['analyze', '--lang', lang]);
  const r = spawnSync(cmd, args, { cwd: ROOT, input: `${texts.join('\n')}\n`, encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
}

test('each language\'s stemmer module gives the Rust analyzer\'s stemmed terms, in every Snowball language', { skip: NO_MODULE, timeout: 300_000 }, async () => {
  const folder = pathToFileURL(`${MODULES}/`);
  let compared = 0;
  for (const [lang, spec] of Object.entries(LANGUAGES)) {
    const stemmers = await loadStemmers(new URL(`${lang}.wasm`, folder));
    const stem = stemmers.of(lang);
    assert.equal(typeof stem, 'function', `${lang} has a stemmer`);
    // A language's module stems that language only.
    for (const other of ['en', 'ru']) if (other !== lang) assert.equal(stemmers.of(other), null, `${lang}.wasm has no ${other}`);
    const texts = lines(words(spec, 1500, lang.charCodeAt(0) * 31 + lang.charCodeAt(1)));
    const rust = rustTerms(lang, texts);
    const bad = [];
    texts.forEach((t, i) => {
      const js = analyze(t, stem);
      if (JSON.stringify(js) !== JSON.stringify(rust[i])) bad.push({ t: t.slice(0, 80), rust: rust[i].slice(0, 12), js: js.slice(0, 12) });
      compared += js.length;
    });
    assert.deepEqual(bad, [], `${lang}: the same terms`);
    // The stemming is real: most of the language's own words change.
    assert.ok(spec[2].filter((w) => stem(w) !== w).length >= spec[2].length - 1, `${lang}: ${spec[2].map(stem)}`);
  }
  assert.ok(compared > 18 * 1000, `${compared} terms compared`);
  // Tags as a page writes them find their module (Norwegian's nb and nn share no.wasm); languages
  // without a stemmer have no module.
  assert.equal((await loadStemmer('en-GB', folder))('running'), 'run');
  assert.equal((await loadStemmer('NB', folder))('bøkene'), (await loadStemmer('nn', folder))('bøkene'));
  assert.equal(stemModule('nb-NO', folder).href, new URL('no.wasm', folder).href);
  assert.equal(stemModule('en', (t) => `/x/${t}.wasm`), '/x/en.wasm', 'a function gives the URL');
  // A manifest's language that is not a tag names no other path or origin for its module.
  for (const t of ['//evil.example/x', '../../x', 'en/../../x', 'e', 'en1', '%2e%2e', '']) {
    assert.equal(stemModule(t, folder), null, t);
    await assert.rejects(loadStemmer(t, folder), (e) => e.code === 'SNAPSHOT_CORRUPT' && e.file === 'manifest.json', t);
  }
  for (const t of ['zh', 'pl']) await assert.rejects(loadStemmer(t, folder), (e) => e.code === 'SNAPSHOT_UNAVAILABLE', t);
  const en = await loadStemmers(new URL('en.wasm', folder));
  for (const t of ['zh', 'ja', 'pl', '', 'english', 'x']) assert.equal(en.of(t), null, t);
  // A module that is not one is a typed error (and may be retried).
  await assert.rejects(loadStemmers(new Uint8Array([0, 1, 2, 3])), (e) => e.code === 'SNAPSHOT_UNAVAILABLE');
  await assert.rejects(loadStemmers(pathToFileURL(join(ROOT, 'target/no-such-stem.wasm'))), (e) => e.code === 'SNAPSHOT_UNAVAILABLE');
  // So is no module at all (a bundle with no URL to find stem/ beside it, and no `stemmer`).
  await assert.rejects(loadStemmers(null), (e) => e.code === 'SNAPSHOT_UNAVAILABLE' && /stemmer/.test(e.message));
});

test('a site in two languages: each query is stemmed in the language it asks for, and searches only its pages', { skip: NO_MODULE, timeout: 300_000 }, async () => {
  const DIR = join(ROOT, 'target/e2e-stem-site');
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  const page = (lang, title, body) => `<!doctype html><html${lang ? ` lang="${lang}"` : ''}><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${body}</p></main></body></html>`;
  const pages = {
    'en/files.html': page('en-US', 'Reading files', 'The reader reads the files line by line, running checks.'),
    'en/owls.html': page('en', 'Owls', 'Owls hunted at night; an owl hunts by hearing.'),
    'en/kettles.html': page('en', 'Kettles', 'Descaling a kettle with vinegar.'),
    'fr/maisons.html': page('fr', 'Les maisons', 'Les maisons anciennes et les fichiers lus continuellement.'),
    'fr/chouettes.html': page('fr', 'Chouettes', 'La chouette chasse la nuit: chasses nocturnes.'),
    'plain.html': page('', 'Notes', 'Running notes, unstemmed.'),
  };
  for (const [p, html] of Object.entries(pages)) {
    mkdirSync(dirname(join(DIR, p)), { recursive: true });
    writeFileSync(join(DIR, p), html);
  }
  execFileSync(...cli(['index', DIR, '--out', join(DIR, 'webrag'), '--vectors', 'none', '--no-cache']), { cwd: ROOT, stdio: 'inherit' });
  const fsFetch = async (u) => { try { return new Response(readFileSync(decodeURIComponent(new URL(u).pathname))); } catch { return new Response('', { status: 404 }); } };
  const site = await StaticSearch.open(`file://${join(DIR, 'webrag')}/`, { fetch: fsFetch, offline: false, stemmer: pathToFileURL(MODULES) });
  assert.deepEqual(site.manifest.languages.values.map((v) => [v.lang, v.stemmed, v.pages]), [['en', true, 3], ['fr', true, 2], ['', false, 1]]);
  const search = async (q, opts) => {
    const r = await site.search(q, { mode: 'keyword', ...opts });
    assert.deepEqual(r.errors, [], q);
    return r.results;
  };
  const urls = async (q, opts) => (await search(q, opts)).map((r) => r.url).sort();
  // English: "read file" finds the page that reads files; "hunting" the page of owls that hunted.
  assert.deepEqual(await urls('read file ', { lang: 'en' }), ['/en/files.html']);
  assert.deepEqual(await urls('hunting ', { lang: 'en-GB' }), ['/en/owls.html']);
  // Typing: a word part way ("huntin", "fichie") is completed from the stems it begins with.
  assert.deepEqual(await urls('huntin', { lang: 'en' }), ['/en/owls.html']);
  assert.deepEqual(await urls('fichie', { lang: 'fr' }), ['/fr/maisons.html']);
  assert.deepEqual(await urls('descal', { lang: 'en' }), ['/en/kettles.html']);
  // A slip is corrected among the stems, and reported for the word as typed.
  const slip = await site.search('kettels ', { mode: 'keyword', lang: 'en' });
  assert.deepEqual([slip.results.map((x) => x.url), slip.corrections], [['/en/kettles.html'], { kettels: ['kettl'] }]);
  // The default language is the one most pages are in (no page here to name another).
  assert.deepEqual(await urls('hunting '), ['/en/owls.html']);
  // French: "maison" finds "maisons", "chasser" the owls' "chasse"; English pages are not searched.
  assert.deepEqual(await urls('maison ', { lang: 'fr' }), ['/fr/maisons.html']);
  assert.deepEqual(await urls('chasser ', { lang: 'fr' }), ['/fr/chouettes.html']);
  assert.deepEqual(await urls('fichier ', { lang: 'fr' }), ['/fr/maisons.html']);
  assert.deepEqual(await urls('files ', { lang: 'fr' }), [], 'the English page is another language');
  assert.deepEqual(await urls('maison ', { lang: 'en' }), [], 'the French page is another language');
  // Pages that name no language are searched in every language, their words as written.
  assert.deepEqual(await urls('running ', { lang: 'en' }), ['/en/files.html', '/plain.html']);
  assert.deepEqual(await urls('notes ', { lang: 'fr' }), ['/plain.html']);
  // A language no page is in finds nothing.
  assert.deepEqual(await urls('owls ', { lang: 'de' }), []);
  // Highlights follow the stems: "file" marks "files".
  const [r] = await search('file ', { lang: 'en' });
  const marked = r.highlights.map(([a, b]) => r.excerpt.slice(a, b).toLowerCase());
  assert.ok(marked.includes('files'), JSON.stringify([r.excerpt, marked]));
  assert.deepEqual(highlight('Files and filing', 'file ', {}).highlights, [], 'without the stemmer, no stem matches');
  await assert.rejects(site.search('owls', { lang: 7 }), TypeError);
  // Only the searched language's module is fetched.
  const asked = [];
  const counted = await StaticSearch.open(`file://${join(DIR, 'webrag')}/`, { fetch: fsFetch, offline: false, stemmer: (t) => { asked.push(t); return pathToFileURL(join(MODULES, `${t}.wasm`)); } });
  assert.deepEqual((await counted.search('maison ', { mode: 'keyword', lang: 'fr' })).results.map((x) => x.url), ['/fr/maisons.html']);
  await counted.search('chasses ', { mode: 'keyword', lang: 'fr-CA' });
  assert.deepEqual(asked, ['fr'], 'one module, loaded once');
  // Without its stemmer module (a file missing, a policy without 'wasm-unsafe-eval') the search
  // still answers and says why: each word matches as written, and also the longest vocabulary
  // word it begins with (at least half its letters), which is its stem for most words.
  const broken = await StaticSearch.open(`file://${join(DIR, 'webrag')}/`, { fetch: fsFetch, offline: false, stemmer: pathToFileURL(join(DIR, 'no-such-folder/')) });
  const brokenUrls = async (q, opts) => {
    const b = await broken.search(q, { mode: 'keyword', lang: 'en', ...opts });
    assert.ok(b.errors.some((e) => e.code === 'SNAPSHOT_UNAVAILABLE'), JSON.stringify(b.errors));
    return b.results.map((x) => x.url).sort();
  };
  assert.deepEqual(await brokenUrls('vinegar '), ['/en/kettles.html']);
  assert.deepEqual(await brokenUrls('hunting '), ['/en/owls.html'], 'hunting: the vocabulary has hunt');
  assert.deepEqual(await brokenUrls('kettles '), ['/en/kettles.html'], 'kettles: the vocabulary has kettl');
  assert.deepEqual(await brokenUrls('reading files '), ['/en/files.html']);
  assert.deepEqual(await brokenUrls('running '), ['/en/files.html', '/plain.html'], 'as written on the page of no language, by its stem on the English one');
  assert.deepEqual(await brokenUrls('huntin'), ['/en/owls.html'], 'a word typed part way');
  assert.deepEqual(await brokenUrls('maisons ', { lang: 'fr' }), ['/fr/maisons.html']);
  assert.deepEqual(await brokenUrls('chasses ', { lang: 'fr' }), ['/fr/chouettes.html']);
});

test('notes with a lang are stemmed in the page\'s engines (webrag, webrag/search), after a reopen, in another instance and after an import too, searched in one language with filter.lang; a missing module is STEMMER_UNAVAILABLE', { skip: NO_MODULE, timeout: 600_000 }, async () => {
  const server = await startServer(23000 + Math.floor(Math.random() * 1000));
  const browser = await launch({ webgpu: false });
  try {
    const page = await browser.ctx.newPage();
    await page.goto(`${server.url}/www/style.css`);
    const out = await page.evaluate(async ({ model }) => {
      const out = {};
      for (const entry of ['/pkg/index.js', '/pkg/search.js']) {
        const { WebRag } = await import(entry);
        const name = `stemmed ${entry}`;
        const docs = async (rag, q, opts) => [...new Set((await rag.search(q, { k: 10, mode: 'bm25', ...opts })).map((h) => h.docId))].sort();
        const rag = await WebRag.open({ name, model, device: 'cpu', workers: 0 });
        // Another instance, open before the languages exist: it loads their modules when it
        // hears of the commit.
        let heard;
        const changed = new Promise((resolve) => { heard = resolve; });
        const early = await WebRag.open({ name, model, device: 'cpu', workers: 0, onEvent: (e) => e.type === 'changed' && heard() });
        await rag.add([
          { id: 'en', lang: 'en-GB', text: 'The copper kettle boils water. Owls hunt mice at night.' },
          { id: 'plain', text: 'Kettles and teapots are sold in this shop.' },
          { id: 'fr', lang: 'fr', text: 'Les maisons anciennes du village sont grandes.' },
        ]);
        const r = {
          kettles: await docs(rag, 'kettles'), hunting: await docs(rag, 'hunting owl'), maison: await docs(rag, 'maison'),
          snippet: (await rag.search('kettles', { k: 10, mode: 'bm25' })).find((h) => h.docId === 'en')?.snippet.filter((p) => p.hit).map((p) => p.text),
          languages: (await rag.stats()).languages,
          // One language: its notes and those in none.
          kettlesFr: await docs(rag, 'kettles', { filter: { lang: 'fr' } }), maisonEn: await docs(rag, 'maison', { filter: { lang: 'en-US' } }),
          kettlesEn: await docs(rag, 'kettles', { filter: { lang: 'en' } }),
        };
        try { await rag.search('kettles', { filter: { lang: 'e' } }); r.badLang = 'searched'; } catch (e) { r.badLang = e.code; }
        // Another instance over the same knowledge base: its worker loads the modules at open.
        const again = await WebRag.open({ name, model, device: 'cpu', workers: 0 });
        r.reopened = await docs(again, 'hunting');
        await changed;
        r.early = await docs(early, 'hunting');
        // A knowledge-base file imported into a new one: the modules of its languages (the
        // search build has no knowledge-base file).
        if (entry === '/pkg/index.js') {
          const imported = await WebRag.open({ name: `${name} imported`, model, device: 'cpu', workers: 0 });
          await imported.importKb(await rag.exportKb());
          r.imported = await docs(imported, 'hunting');
        }
        // A folder without the modules: the add rejects, and nothing of its batch is written.
        const none = await WebRag.open({ name: `${name} none`, model, device: 'cpu', workers: 0, stem: '/nowhere/' });
        try { await none.add([{ id: 'x', text: 'Plain words.' }, { id: 'de', lang: 'de', text: 'Die Häuser des Dorfes.' }]); r.missing = 'added'; } catch (e) { r.missing = `${e.name} ${e.code}`; }
        r.missingDocuments = (await none.stats()).documents;
        try { await none.add([{ id: 'y', lang: 'e', text: 'Not a tag.' }]); r.badTag = 'added'; } catch (e) { r.badTag = e.code; }
        await none.add([{ id: 'zh', lang: 'zh-CN', text: '水壶在炉子上' }]); // no Snowball stemmer: as written, no module needed
        r.zh = await docs(none, '水壶');
        out[entry] = r;
      }
      return out;
    }, { model: '/.models/all-MiniLM-L6-v2/' });
    for (const [entry, r] of Object.entries(out)) {
      assert.deepEqual(r.kettles, ['en', 'plain'], `${entry}: kettles finds the English kettle (kettl) and the untagged Kettles`);
      assert.deepEqual(r.hunting, ['en'], entry);
      assert.deepEqual(r.maison, ['fr'], entry);
      assert.deepEqual(r.snippet, ['kettle'], `${entry}: the snippet marks the stemmed word`);
      assert.deepEqual(r.languages, ['en', 'fr'], entry);
      assert.deepEqual([r.kettlesFr, r.maisonEn, r.kettlesEn], [['plain'], [], ['en', 'plain']], `${entry}: filter.lang`);
      assert.equal(r.badLang, 'INVALID_OPTION', entry);
      assert.deepEqual(r.reopened, ['en'], `${entry}: stemmed after a reopen`);
      assert.deepEqual(r.early, ['en'], `${entry}: stemmed in an instance open before the language was added`);
      if (entry === '/pkg/index.js') assert.deepEqual(r.imported, ['en'], `${entry}: stemmed after an importKb`);
      assert.equal(r.missing, 'InputError STEMMER_UNAVAILABLE', entry);
      assert.equal(r.missingDocuments, 0, `${entry}: nothing of the batch`);
      assert.equal(r.badTag, 'INVALID_OPTION', entry);
      assert.deepEqual(r.zh, ['zh'], entry);
    }
  } finally {
    await browser.close();
    server.stop();
  }
});
