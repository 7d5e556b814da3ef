// Entry of `webrag-ui.js`, the ready-to-serve bundle `npx webrag index` writes beside a
// snapshot's manifest.json (esbuild at package build: this file, `ui.js`, `webrag/static` and
// idb-keyval in one ES module, no bare imports). Loaded with
// `<script type="module" src="/webrag/webrag-ui.js">`, it mounts a search box on `#search` and on
// every `[data-webrag-search]` element, over the snapshot in its own folder. `data-k`,
// `data-placeholder`, `data-label` and `data-site-url` on the element set those options.
import { mountSearch } from './ui.js';
import { RANGES } from './static-text.js';

export { mountSearch };
export { StaticSearch, SnapshotError } from './static.js';

const base = new URL('./', import.meta.url).href;

function mountAll() {
  for (const el of document.querySelectorAll('#search, [data-webrag-search]')) {
    if (el.dataset.webragMounted) continue;
    el.dataset.webragMounted = 'true';
    const k = Number.parseInt(el.dataset.k ?? '', 10);
    mountSearch(el, {
      base,
      ...(k >= RANGES.k[1] && k <= RANGES.k[2] ? { k } : {}), // a bad data-k is left out
      ...(el.dataset.placeholder ? { placeholder: el.dataset.placeholder } : {}),
      ...(el.dataset.label ? { label: el.dataset.label } : {}),
      ...(el.dataset.siteUrl ? { siteUrl: el.dataset.siteUrl } : {}),
    });
  }
}

if (typeof document !== 'undefined') {
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mountAll, { once: true });
  else mountAll();
}
