// Content is data (issue 63, item 2), run the same way in every browser engine
// (tests/e2e/browsers.test.mjs): the classic payloads — `<img onerror>`, `<svg onload>`,
// `<script>`, attribute breakers, `javascript:` links — in page titles, headings, body text and
// file names of a real site built by the real builder, in notes, and in a model's answer; each
// place that shows such text (the search box under a strict Content-Security-Policy,
// webrag/static's results, the static-site demo, the notes demo's results, answer and citations)
// must show it as text: no script runs (`window.__xss` stays unset), no element the text spells
// is made, every link is http(s) on this origin, and the page's policy is never violated.
//
// Each function resolves to plain JSON the test asserts on.

// Violations of the page's Content-Security-Policy, from the moment this module runs (the
// search page loads it before the box).
const violations = [];
document.addEventListener('securitypolicyviolation', (e) => violations.push(`${e.violatedDirective} ${e.blockedURI}`));

/** The elements and attributes no shown text may create. */
const MADE = 'img, svg, script, iframe, object, embed, style, link, math, [onerror], [onload], [onclick], [onmouseover], [srcdoc], [style]';

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** Resolves when `f()` is truthy (polled), or throws after `ms`. */
async function until(f, what, ms = 60_000) {
  const end = performance.now() + ms;
  for (;;) {
    const v = f();
    if (v) return v;
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Resolves once `root` has not changed for `quiet` ms (the later search stages are done). */
async function settled(root, quiet = 1000) {
  let last = performance.now();
  const seen = new MutationObserver(() => { last = performance.now(); });
  seen.observe(root, { subtree: true, childList: true, characterData: true, attributes: true });
  try {
    await until(() => performance.now() - last > quiet, 'the results to settle');
  } finally {
    seen.disconnect();
  }
}

/** What `root` holds that shown text must not create, and its links that are not http(s) here. */
function audit(root) {
  const made = [...root.querySelectorAll(MADE)].filter((e) => !e.closest('.webrag-ui-sr')).map((e) => e.outerHTML.slice(0, 80));
  const links = [...root.querySelectorAll('a[href]')].map((a) => a.href);
  const unsafe = links.filter((h) => { const u = new URL(h); return !['http:', 'https:'].includes(u.protocol) || u.origin !== location.origin; });
  return { made, links: links.length, unsafe };
}

/**
 * On the site's search page (a strict policy in a `<meta>`, the box mounted by `webrag-ui.js`
 * from the snapshot's folder): each query through the box's form, then through webrag/static
 * directly.
 */
export async function box({ queries, snapshot }) {
  try {
    const root = await until(() => document.querySelector('#search .webrag-ui-form') && document.querySelector('#search'), 'the box');
    const input = root.querySelector('input');
    const status = root.querySelector('[role=status]');
    const shown = [];
    for (const q of queries) {
      input.value = q;
      root.querySelector('form').requestSubmit();
      await until(() => status.textContent.includes(q), `results for ${q}`);
      await settled(root);
      shown.push({ q, results: root.querySelectorAll('.webrag-ui-result').length, text: root.querySelector('ol').textContent });
    }
    const title = root.querySelector('.webrag-ui-title');
    const styled = title ? getComputedStyle(title).fontWeight : null;
    // webrag/static itself: every result's and section's link is safe, excerpts are strings.
    const { StaticSearch } = await import(`${snapshot}webrag-ui.js`);
    const site = await StaticSearch.open(snapshot);
    const urls = [];
    for (const q of queries) {
      const { results } = await site.search(q, { k: 10 });
      for (const r of results) urls.push(r.url, r.section, ...(r.sections ?? []).map((s) => s.section));
    }
    const bad = urls.filter((u) => u != null && !['http:', 'https:'].includes(new URL(u, location.href).protocol));
    return { shown, ...audit(root), styled, urls: urls.filter((u) => u != null), bad, violations, xss: window.__xss ?? null };
  } catch (e) {
    return { error: `${e.name}: ${e.message}`, violations, xss: window.__xss ?? null };
  }
}

/** On www/site.html (the static-site demo) over the same snapshot: search as one types. */
export async function siteDemo({ queries }) {
  try {
    await until(() => window.siteDemo?.ready, 'the site demo');
    const root = document.getElementById('results');
    const shown = [];
    for (const q of queries) {
      const input = document.getElementById('q');
      input.value = q;
      input.dispatchEvent(new Event('input'));
      await until(() => root.children.length > 0, `results for ${q}`);
      await settled(root);
      shown.push({ q, results: root.children.length, text: root.textContent });
    }
    return { shown, ...audit(root), xss: window.__xss ?? null };
  } catch (e) {
    return { error: `${e.name}: ${e.message}`, xss: window.__xss ?? null };
  }
}

/**
 * On the notes demo (www/): notes carrying the payloads, a search through the page's box, then
 * an answer (the scripted model at `llm` replies with the payloads and a citation) and its cited
 * source opened.
 */
export async function notesDemo({ notes, query, question, llm }) {
  const $ = (id) => document.getElementById(id);
  try {
    await until(() => window.webragDemo?.ready, 'the demo', 300_000);
    await window.webragDemo.rag.add(notes);
    $('q').value = query;
    $('q').dispatchEvent(new Event('input'));
    await until(() => $('results').querySelector('li'), 'search results', 120_000);
    await settled($('results'));
    $('llm-base').value = llm;
    $('llm-model').value = 'scripted';
    $('ask-preset').value = 'light';
    $('ask-q').value = question;
    $('ask-btn').click();
    await until(() => $('answer-meta').dataset.confidence || $('ask-error').textContent, 'the answer', 120_000);
    const cite = $('answer').querySelector('button.cite');
    cite?.click();
    await until(() => !$('source').hidden || !cite, 'the cited source');
    const places = ['results', 'answer', 'source', 'trace'].map((id) => $(id));
    const made = places.flatMap((p) => audit(p).made);
    const unsafe = places.flatMap((p) => audit(p).unsafe);
    return {
      results: $('results').textContent,
      answer: $('answer').textContent,
      source: $('source').textContent,
      cited: Boolean(cite),
      ...($('ask-error').textContent ? { error: $('ask-error').textContent } : {}), // (WebDriver sends undefined as null)
      made,
      unsafe,
      xss: window.__xss ?? null,
    };
  } catch (e) {
    return { error: `${e.name}: ${e.message}`, xss: window.__xss ?? null };
  }
}

// The driver calls these from the page's own realm (a WebDriver script's `import()` may load a
// second copy of this module elsewhere, as Firefox's does).
window.xssCases = { box, siteDemo, notesDemo };
