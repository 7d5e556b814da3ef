// Types of webrag/ui: a search box over a static-site snapshot (webrag/static).
import type { StaticSearch, StaticSearchGroup, StaticResult, StaticOpenOptions, SnapshotEntry } from './static.js';

export interface SearchBoxOptions {
  /**
   * The snapshot folder (the one holding manifest.json), or several searched as one
   * (`StaticSearch.open([...])`). Default '/webrag/'; the bundled `webrag-ui.js` uses its own folder.
   */
  base?: string | URL | (string | URL | SnapshotEntry)[];
  /** Results shown. Default 10; 1..=1000 (`StaticSearchOptions.k`; a `RangeError` at mount otherwise). */
  k?: number;
  /** Sections per result (the best chunk and `sections` − 1 more of its page). Default 3; 1..=20. */
  sections?: number;
  /** 'hybrid' (default: keyword, then semantic and graph when the snapshot has the static tier) or 'keyword'. */
  mode?: 'hybrid' | 'keyword';
  /** The input's accessible name. Default 'Search this site'. */
  label?: string;
  /** Default 'Search'. */
  placeholder?: string;
  /**
   * While typing, a keyword search starts once typing pauses at least this many milliseconds and
   * longer than the typist's own gaps between keys (1.5× the median of the last 5, up to 400 ms).
   * Default 120.
   */
  debounce?: number;
  /**
   * Milliseconds typing must pause before the full `mode` search (semantic and graph stages)
   * runs; Enter runs it at once. Default 700. The keyword search while typing reuses the shards
   * it fetched, so a query typed key by key costs about what it costs searched once.
   */
  pause?: number;
  /** Add the default styles (a constructed stylesheet in `document.adoptedStyleSheets`, or `<style id="webrag-ui-style">` where a browser lacks them; themable with the `--webrag-ui-*` CSS variables). Default true. */
  styles?: boolean;
  /** Options of `StaticSearch.open`. */
  open?: StaticOpenOptions;
  /** Where the site is served (`/docs/`), for the result links: `StaticSearch.open`'s `siteUrl`. Default: the snapshot's `siteRoot`. */
  siteUrl?: string;
  /**
   * The URL parameter the query is kept in (`history.replaceState` as it changes; read at mount
   * and searched), so Back to the page or a shared link shows the query and its results; false:
   * the address is left alone. Default 'q'. A `TypeError` at mount for an empty or non-string name.
   */
  param?: string | false;
  /**
   * When the snapshot has filters (`data-webrag-filter`): a group of checkboxes per filter key
   * under the status line, each value with its count of matching pages (every value of a key
   * with up to 20; beyond, those with pages and the checked ones). Checked values narrow the results to pages carrying one of
   * them per key; with no query the box lists those pages. Default true.
   */
  facets?: boolean;
}

export interface SearchBox {
  /** The search input. */
  readonly input: HTMLInputElement;
  /** The opened snapshot; rejects with its SnapshotError (the box shows "Search is unavailable (CODE)."). */
  readonly ready: Promise<StaticSearch | StaticSearchGroup>;
  /** Sets the input to `query` and searches at once; resolves to the results shown. */
  search(query: string): Promise<StaticResult[]>;
  /** Removes the box and its listeners. */
  destroy(): void;
}

/**
 * Mounts a search box into `target` (an element or a CSS selector): a `search` landmark with a
 * labelled search input, a live status line and the results (title link, heading path, excerpt
 * with `<mark>`ed matches, up to `sections` − 1 more sections of the page). Keys: ArrowDown /
 * ArrowUp between the input and the result links, Escape back to the input (there: clear), Enter
 * searches at once. While later stages (semantic, graph) run, the status ends in "refining…",
 * the list has `aria-busy="true"` and the box the class `webrag-ui-refining`. Throws TypeError
 * when `target` names no element.
 */
export function mountSearch(target: Element | string, opts?: SearchBoxOptions): SearchBox;
