// webrag/ui: a search box for a static site, over `webrag/static` (plain JavaScript, no
// WebAssembly, no model). `npx webrag index <site>` writes it, bundled with everything it imports,
// as `webrag-ui.js` beside the snapshot's manifest.json; a page needs one element and one tag:
//
//   <div id="search"></div>
//   <script type="module" src="/webrag/webrag-ui.js"></script>
//
// The bundle mounts itself on `#search` (or every `[data-webrag-search]` element) and reads the
// snapshot from its own folder. With a bundler: `import { mountSearch } from 'webrag/ui'`.
//
// Accessibility (WAI-ARIA 1.2): a `search` landmark, a labelled `searchbox`, the result count in a
// polite live region, results as a list of links. Keys: ArrowDown / ArrowUp move between the
// input and the result links (sections included), Escape goes back to the input and, there, clears
// it; Enter in the input searches at once. Text from the snapshot goes into text nodes only.
import { StaticSearch } from './static.js';
import { analyze, option } from './static-text.js';

/** The box's styles; every colour, the font, the radius and the spacing are CSS variables. */
const CSS = `
.webrag-ui {
  --webrag-ui-text: #1f2328; --webrag-ui-muted: #59636e; --webrag-ui-background: #fff;
  --webrag-ui-border: #d1d9e0; --webrag-ui-accent: #0969da; --webrag-ui-mark: #fff8c5;
  --webrag-ui-focus: #0969da; --webrag-ui-font: inherit; --webrag-ui-size: 1rem;
  --webrag-ui-radius: 6px; --webrag-ui-gap: 0.75rem;
  font-family: var(--webrag-ui-font); font-size: var(--webrag-ui-size); color: var(--webrag-ui-text);
}
.webrag-ui-sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.webrag-ui-input {
  box-sizing: border-box; width: 100%; padding: 0.5em 0.75em; font: inherit; color: inherit;
  background: var(--webrag-ui-background); border: 1px solid var(--webrag-ui-border); border-radius: var(--webrag-ui-radius);
}
.webrag-ui :focus-visible { outline: 2px solid var(--webrag-ui-focus); outline-offset: 2px; }
.webrag-ui-status { color: var(--webrag-ui-muted); font-size: 0.875em; margin: 0.5em 0; min-height: 1.2em; }
.webrag-ui-results, .webrag-ui-sections { list-style: none; margin: 0; padding: 0; }
.webrag-ui-result { padding: var(--webrag-ui-gap) 0; border-top: 1px solid var(--webrag-ui-border); }
.webrag-ui-title { color: var(--webrag-ui-accent); font-weight: 600; text-decoration: none; }
.webrag-ui-title:hover, .webrag-ui-section-link:hover { text-decoration: underline; }
.webrag-ui-heading { color: var(--webrag-ui-muted); font-size: 0.875em; margin: 0.15em 0; }
.webrag-ui-excerpt { margin: 0.25em 0 0; line-height: 1.45; }
.webrag-ui-excerpt mark { background: var(--webrag-ui-mark); color: inherit; border-radius: 2px; }
.webrag-ui-sections { margin: 0.5em 0 0 1em; padding-left: 0.75em; border-left: 2px solid var(--webrag-ui-border); }
.webrag-ui-sections li + li { margin-top: 0.5em; }
.webrag-ui-section-link { color: var(--webrag-ui-accent); text-decoration: none; font-size: 0.95em; }
.webrag-ui-refining .webrag-ui-status::after { content: ''; display: inline-block; width: 0.6em; height: 0.6em; margin-left: 0.4em; border: 2px solid var(--webrag-ui-border); border-top-color: var(--webrag-ui-accent); border-radius: 50%; animation: webrag-ui-spin 0.8s linear infinite; }
.webrag-ui-facets { display: flex; flex-wrap: wrap; gap: 0.25em 1.5em; margin: 0 0 0.5em; font-size: 0.875em; }
.webrag-ui-facet { border: 0; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 0.25em 0.75em; align-items: baseline; }
.webrag-ui-facet legend { float: left; padding: 0; margin-right: 0.5em; font-weight: 600; color: var(--webrag-ui-muted); }
.webrag-ui-facet label { white-space: nowrap; cursor: pointer; }
.webrag-ui-count { color: var(--webrag-ui-muted); }
@keyframes webrag-ui-spin { to { transform: rotate(360deg); } }
@media (prefers-reduced-motion: reduce) { .webrag-ui-refining .webrag-ui-status::after { animation: none; } }
`;

let uid = 0;

/** Values of one filter the box offers at most (beyond it: those with matching pages, and the checked ones). */
const MAX_FACET_VALUES = 20;

const styled = new WeakSet(); // documents given the styles

/**
 * Adds the styles once per document: a constructed stylesheet in `document.adoptedStyleSheets`
 * (CSSOM, which a Content-Security-Policy's `style-src` does not restrict, so the box is styled
 * under a policy without `'unsafe-inline'`), or, where a browser lacks them, `<style
 * id="webrag-ui-style">`.
 */
function addStyles(doc) {
  if (styled.has(doc) || doc.getElementById('webrag-ui-style')) return;
  styled.add(doc);
  const Sheet = doc.defaultView?.CSSStyleSheet;
  if (Sheet && 'replaceSync' in Sheet.prototype && 'adoptedStyleSheets' in doc) {
    const sheet = new Sheet();
    sheet.replaceSync(CSS);
    doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
    return;
  }
  const style = doc.createElement('style');
  style.id = 'webrag-ui-style';
  style.textContent = CSS;
  doc.head.append(style);
}

/** `el(doc, 'p', 'cls', child…)`: an element with a class and children (strings become text nodes). */
function el(doc, tag, cls, ...children) {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  e.append(...children.filter((c) => c != null));
  return e;
}

/** `text` with its `highlights` (`[start, end)` UTF-16 offsets, ascending) in `<mark>`. */
function marked(doc, text, highlights) {
  const p = el(doc, 'p', 'webrag-ui-excerpt');
  let at = 0;
  for (const [a, b] of highlights ?? []) {
    if (a < at || b <= a) continue;
    p.append(text.slice(at, a), el(doc, 'mark', '', text.slice(a, b)));
    at = b;
  }
  p.append(text.slice(at));
  return p;
}

/**
 * `query` with each word that `corrections` corrected (its one analyzed term a key) replaced by
 * the first word searched instead: the query the results are for.
 */
function corrected(query, corrections) {
  if (!corrections || !Object.keys(corrections).length) return query;
  return query.split(/(\s+)/).map((w) => {
    const terms = analyze(w);
    return terms.length === 1 && corrections[terms[0]]?.length ? corrections[terms[0]][0] : w;
  }).join('');
}

/** The heading path without the page title it repeats ('' when it is only the title). */
function trail(title, heading) {
  if (!heading || heading === title) return '';
  return title && heading.startsWith(`${title} › `) ? heading.slice(title.length + 3) : heading;
}

/** A link, or a plain span where the snapshot gave no safe URL. */
function link(doc, href, cls, label) {
  if (!href) return el(doc, 'span', cls, label);
  const a = el(doc, 'a', cls, label);
  a.href = href;
  return a;
}

/**
 * Mounts a search box into `target` (an element or a selector). Options: `base` (the snapshot
 * folder, default `/webrag/`, or an array of them searched as one: `StaticSearch.open([...])`),
 * `k`, `sections` and `mode` (`search`'s, checked here: a `RangeError` at mount for a bad one),
 * `label`, `placeholder`,
 * `debounce` (ms, default 120: while typing, a keyword search once typing pauses at least this
 * long, and longer than the typist's own gaps between keys: 1.5× their median, up to 400 ms),
 * `pause` (ms, default 700: a hybrid search once typing stops this long, or at Enter, so the
 * semantic and graph stages fetch their files once per query, not once per key), `styles`
 * (default true: add the default styles), `open`
 * (StaticSearch.open's options), `siteUrl` (where the site is served, for the result links:
 * `StaticSearch.open`'s), `param` (default 'q': the URL parameter the query is kept in, replaced
 * as it changes, so Back to the page or a shared link shows the query and its results; false:
 * the address is left alone), `facets` (default true: when the snapshot has filters, a group of
 * checkboxes per filter key under the status line, each value with its count of matching pages;
 * checking values narrows the results to pages carrying one of them per key, and with no query
 * lists the pages that do). While a search's later stages run, the status line ends in
 * "refining…", the results list has `aria-busy="true"` and the box the class
 * `webrag-ui-refining`. Returns `{ search(query), input, ready, destroy() }`; `ready`
 * resolves to the `StaticSearch` (or rejects with its `SnapshotError`, which the box also shows).
 */
export function mountSearch(target, opts = {}) {
  const root = typeof target === 'string' ? document.querySelector(target) : target;
  if (!root) throw new TypeError(`webrag/ui: no element ${String(target)}`);
  const doc = root.ownerDocument;
  const {
    base = '/webrag/', debounce = 120, pause = 700, styles = true, label = 'Search this site', placeholder = 'Search', open = {},
    siteUrl, param = 'q', facets = true,
  } = opts;
  if (param !== false && (typeof param !== 'string' || !param)) throw new TypeError('webrag/ui: param is a URL parameter name or false');
  const [k, sections, mode] = [option('k', opts.k), option('sections', opts.sections), option('mode', opts.mode)];
  if (styles) addStyles(doc);
  const id = `webrag-ui-${++uid}`;
  root.classList.add('webrag-ui');

  const input = el(doc, 'input', 'webrag-ui-input');
  Object.assign(input, { type: 'search', id: `${id}-input`, placeholder, autocomplete: 'off', spellcheck: false });
  input.setAttribute('aria-controls', `${id}-results`);
  input.setAttribute('aria-describedby', `${id}-status`);
  const lbl = el(doc, 'label', 'webrag-ui-sr', label);
  lbl.htmlFor = input.id;
  const form = el(doc, 'form', 'webrag-ui-form', lbl, input);
  form.setAttribute('role', 'search');
  const status = el(doc, 'div', 'webrag-ui-status');
  Object.assign(status, { id: `${id}-status` });
  status.setAttribute('role', 'status');
  status.setAttribute('aria-live', 'polite');
  const list = el(doc, 'ol', 'webrag-ui-results');
  list.id = `${id}-results`;
  list.setAttribute('aria-label', 'Search results');
  const facetBox = el(doc, 'div', 'webrag-ui-facets');
  facetBox.hidden = true;
  facetBox.setAttribute('aria-label', 'Filters');
  facetBox.setAttribute('role', 'group');
  root.replaceChildren(form, status, facetBox, list);
  const chosen = new Map(); // filter key → the values checked

  /** The checked values as `search`'s `filters`, or undefined. */
  function checkedFilters() {
    const f = Object.fromEntries([...chosen].filter(([, vs]) => vs.size).map(([key, vs]) => [key, [...vs]]));
    return Object.keys(f).length ? f : undefined;
  }

  /** The facets: per key a fieldset of checkboxes, each value with its count; focus kept on re-render. */
  function renderFacets(counts) {
    if (!facets || !counts || !Object.keys(counts).length) { facetBox.hidden = true; facetBox.replaceChildren(); return; }
    const focused = facetBox.contains(doc.activeElement) ? [doc.activeElement.dataset.key, doc.activeElement.dataset.value] : null;
    let n = 0;
    let refocus = null;
    facetBox.replaceChildren(...Object.entries(counts).map(([key, values]) => {
      const sel = chosen.get(key) ?? new Set();
      const fs = el(doc, 'fieldset', 'webrag-ui-facet', el(doc, 'legend', '', key));
      // Every value while they are few (their places stay put as counts change), else those
      // with pages and the checked ones.
      const all = Object.entries(values);
      const offered = all.length <= MAX_FACET_VALUES ? all : all.filter(([v, c]) => c > 0 || sel.has(v)).slice(0, MAX_FACET_VALUES);
      for (const [value, count] of offered) {
        const box = el(doc, 'input', '');
        Object.assign(box, { type: 'checkbox', checked: sel.has(value), id: `${id}-facet-${++n}` });
        Object.assign(box.dataset, { key, value });
        if (focused && focused[0] === key && focused[1] === value) refocus = box;
        fs.append(el(doc, 'label', '', box, ` ${value} `, el(doc, 'span', 'webrag-ui-count', `(${count})`)));
      }
      return fs;
    }));
    facetBox.hidden = false;
    refocus?.focus();
  }

  const ready = StaticSearch.open(base, siteUrl === undefined ? open : { ...open, siteUrl });
  ready.catch((e) => { status.textContent = `Search is unavailable (${e.code ?? e.name}).`; });

  let seq = 0; // the latest query's number: a slower, older search never overwrites a newer one
  let timer = 0; // the keyword search while typing
  let refine = 0; // the full search once typing pauses

  /**
   * Shows `results`; `refining`: later stages (semantic, graph) are still running;
   * `corrections`: the query's misspelled words and the words searched instead.
   */
  function render(site, query, results, refining = false, corrections = {}, counts = undefined) {
    renderFacets(counts);
    list.replaceChildren(...results.map((r) => {
      const li = el(doc, 'li', 'webrag-ui-result',
        link(doc, site.link(r.url), 'webrag-ui-title', r.title || r.url || '(untitled)'),
        trail(r.title, r.heading) ? el(doc, 'p', 'webrag-ui-heading', trail(r.title, r.heading)) : null,
        marked(doc, r.excerpt, r.highlights));
      if (r.sections?.length) {
        li.append(el(doc, 'ul', 'webrag-ui-sections', ...r.sections.map((s) => el(doc, 'li', '',
          link(doc, site.link(s.section), 'webrag-ui-section-link', s.heading || r.title || '(section)'),
          marked(doc, s.excerpt, s.highlights)))));
      }
      return li;
    }));
    const n = results.length;
    const shown = corrected(query, corrections);
    const what = query ? ` for “${shown}”` : '';
    status.textContent = (n ? `${n} result${n === 1 ? '' : 's'}${what}` : `No results${what}`)
      + (shown !== query ? ` (no match for “${query}”)` : '') + (refining ? ' · refining…' : '');
    busy(refining);
  }

  /** The "refining…" state: `aria-busy` on the results and a class to style them by. */
  function busy(on) {
    list.setAttribute('aria-busy', String(on));
    root.classList.toggle('webrag-ui-refining', on);
  }

  /** Keeps the query in the address (`?{param}=`, replaced, not pushed), so Back to this page restores it. */
  function remember(query) {
    const win = doc.defaultView;
    if (!param || !win?.history?.replaceState) return;
    try {
      const u = new URL(win.location.href);
      if ((u.searchParams.get(param) ?? '') === query) return;
      if (query) u.searchParams.set(param, query);
      else u.searchParams.delete(param);
      win.history.replaceState(win.history.state, '', u.href);
    } catch { /* an opaque or sandboxed document: the address stays as it is */ }
  }

  async function search(query, typing = false) {
    const mine = ++seq;
    clearTimeout(timer);
    if (!typing) clearTimeout(refine);
    const q = query.trim();
    remember(q);
    const filters = checkedFilters();
    if (!q && !filters) { list.replaceChildren(); status.textContent = ''; busy(false); renderFacets(null); return []; }
    let site;
    try { site = await ready; } catch { return []; }
    // A stage before the last: the later ones are still running.
    const onProgress = ({ results, corrections, filters: counts }) => { if (mine === seq) render(site, q, results, !typing, corrections, counts); };
    try {
      const { results, corrections, filters: counts } = await site.search(q, { k, mode: typing ? 'keyword' : mode, sections, filters, facets, onProgress });
      if (mine === seq) render(site, q, results, false, corrections, counts);
      return results;
    } catch (e) {
      if (mine === seq) { status.textContent = `Search failed (${e.code ?? e.name}).`; busy(false); }
      return [];
    }
  }

  /** The focusable links of the results, in order. */
  const links = () => [...list.querySelectorAll('a')];
  // The typist's pace: the last few gaps between keys (a gap over a second is a pause, not pace).
  const gaps = [];
  let lastKey = 0;
  const onInput = () => {
    const now = performance.now();
    if (lastKey && now - lastKey < 1000 && gaps.push(now - lastKey) > 5) gaps.shift();
    lastKey = now;
    clearTimeout(timer);
    clearTimeout(refine);
    // A search starts when typing pauses: longer than this typist's usual gap between keys (1.5×
    // the median of the last 5), at least `debounce`, at most 400 ms.
    const pace = gaps.length >= 2 ? 1.5 * [...gaps].sort((a, b) => a - b)[gaps.length >> 1] : 0;
    const wait = Math.min(Math.max(debounce, pace), Math.max(debounce, 400));
    if (mode !== 'keyword') refine = setTimeout(() => search(input.value), Math.max(pause, wait));
    timer = setTimeout(() => search(input.value, mode !== 'keyword'), wait);
  };
  const onSubmit = (e) => { e.preventDefault(); search(input.value); };
  const onFacet = (e) => {
    const { key, value } = e.target.dataset ?? {};
    if (key === undefined || value === undefined) return;
    if (!chosen.has(key)) chosen.set(key, new Set());
    if (e.target.checked) chosen.get(key).add(value);
    else chosen.get(key).delete(value);
    search(input.value);
  };
  const onKey = (e) => {
    const all = links();
    const at = all.indexOf(doc.activeElement);
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const next = e.key === 'ArrowDown' ? at + 1 : (at === -1 ? -1 : at - 1);
      if (next >= 0 && next < all.length) all[next].focus();
      else if (next === -1 && at !== -1) input.focus();
      else return;
      e.preventDefault();
    } else if (e.key === 'Escape') {
      if (doc.activeElement === input) { input.value = ''; search(''); } else input.focus();
      e.preventDefault();
    }
  };
  input.addEventListener('input', onInput);
  form.addEventListener('submit', onSubmit);
  facetBox.addEventListener('change', onFacet);
  root.addEventListener('keydown', onKey);
  // A query kept in the address (Back from a result, a shared link): searched at once.
  let kept = '';
  try { kept = param ? new URL(doc.defaultView?.location?.href ?? '').searchParams.get(param) ?? '' : ''; } catch { /* no address */ }
  if (kept.trim()) { input.value = kept; search(kept); }

  return {
    input,
    ready,
    search: (query) => { input.value = query; return search(query); },
    destroy() {
      clearTimeout(timer);
      clearTimeout(refine);
      seq++;
      input.removeEventListener('input', onInput);
      form.removeEventListener('submit', onSubmit);
      facetBox.removeEventListener('change', onFacet);
      root.removeEventListener('keydown', onKey);
      root.replaceChildren();
      root.classList.remove('webrag-ui');
    },
  };
}
