/**
 * The search page's HTML, for both sides: the server renders whole pages
 * for GET / and GET /search (no JavaScript needed), and the browser imports
 * this same module (served as /render.js from dist/) to redraw the results
 * as answers arrive over the socket. One renderer, so both draw the same
 * cards. It must stay free of runtime imports and Node APIs: the browser
 * loads it as it is.
 *
 * Everything that came from a user or a crawled page is escaped; the one
 * piece of markup taken from the engine, the snippet, is reduced to text
 * and <mark> (safeSnippet), and links are followed only to http(s) URLs.
 * Stable ids and classes (#q, #status, #results, .hit, #facets, #pager) are
 * what browser tests select.
 */

import type { FacetCount, SearchHit, SearchResult, Suggestion } from './engine.js';

export const PAGE_SIZE = 10;
/** Pages reachable: the protocol's offset stops at 1000 (MAX_OFFSET). */
export const MAX_PAGE = 101;
const MAX_FILTERS = 16;

/** What the address bar holds: /search?q=…&site=…&type=…&lang=…&sort=date&page=N. */
export interface PageState {
  q: string;
  page: number;
  site: string[];
  type: string[];
  lang: string[];
  /** Newest first instead of by score. */
  byDate: boolean;
  /** A searcher of several collections: the ones to search (`collections=`, repeated); absent: all. */
  collections?: string[];
}

/** A result (a `result` message or the engine's result with its time) or an error (`error` message fields). */
export type Answer = (SearchResult & { took_ms: number }) | { code: string; message: string; position?: number };

export function stateFromParams(params: URLSearchParams): PageState {
  const page = Number(params.get('page') ?? '1');
  return {
    q: params.get('q') ?? '',
    page: Number.isInteger(page) ? Math.min(Math.max(page, 1), MAX_PAGE) : 1,
    site: params.getAll('site').slice(0, MAX_FILTERS),
    type: params.getAll('type').slice(0, MAX_FILTERS),
    lang: params.getAll('lang').slice(0, MAX_FILTERS),
    byDate: params.get('sort') === 'date',
    ...(params.has('collections') ? { collections: params.getAll('collections').slice(0, MAX_FILTERS) } : {}),
  };
}

/** The address of a state; the empty query is the front page. */
export function stateHref(state: PageState): string {
  if (state.q === '') return '/';
  const params = new URLSearchParams({ q: state.q });
  for (const site of state.site) params.append('site', site);
  for (const type of state.type) params.append('type', type);
  for (const lang of state.lang) params.append('lang', lang);
  if (state.byDate) params.set('sort', 'date');
  for (const name of state.collections ?? []) params.append('collections', name);
  if (state.page > 1) params.set('page', String(state.page));
  return `/search?${params.toString()}`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The engine's snippet with nothing but text, character references and
 * <mark>: stray `<`, `>`, quotes and bare `&` are escaped, so even a buggy
 * engine cannot inject markup.
 */
export function safeSnippet(html: string): string {
  return html
    .split(/(<\/?mark>)/)
    .map((part) =>
      part === '<mark>' || part === '</mark>'
        ? part
        : part.replace(/&(?![a-zA-Z][a-zA-Z0-9]{0,31};|#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};)|[<>"']/g, (c) => `&#${c.charCodeAt(0)};`),
    )
    .join('');
}

function webUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** The one line the live region (#status) reads out, as plain text. */
export function summary(state: PageState, answer: Answer | undefined): string {
  if (state.q === '' || answer === undefined) return '';
  if (!('hits' in answer)) {
    if (answer.code === 'NO_INDEX') return 'There is no index to search yet: nothing has been indexed.';
    if (answer.code === 'TOO_MANY_REQUESTS') return 'Too many searches at once; try again in a moment.';
    return answer.message.charAt(0).toUpperCase() + answer.message.slice(1);
  }
  const { value, relation } = answer.total;
  if (value === 0) return `No results for “${state.q}” (${answer.took_ms} ms)`;
  const found = `${relation === 'gte' ? 'At least ' : ''}${formatCount(value)} result${value === 1 && relation === 'eq' ? '' : 's'} (${answer.took_ms} ms)`;
  return state.page > 1 ? `Page ${state.page} of ${found.charAt(0).toLowerCase()}${found.slice(1)}` : found;
}

/** The front page's (and the emptied box's) hints on the query language. */
const TIPS = `<section id="tips" aria-label="How to search"><h2>Search tips</h2><dl>
<dt><code>"stone bridge"</code></dt><dd>the exact phrase</dd>
<dt><code>bridge -stone</code></dt><dd>pages without a word</dd>
<dt><code>cake OR pie</code></dt><dd>either word</dd>
<dt><code>config*</code></dt><dd>words starting so</dd>
<dt><code>mill NEAR/5 river</code></dt><dd>words at most 5 apart</dd>
<dt><code>site:example.org</code></dt><dd>one site only</dd>
<dt><code>type:pdf</code>, <code>title:word</code></dt><dd>by type, in the title</dd>
<dt><code>lang:cs</code>, <code>after:2024-06</code></dt><dd>by language, by date</dd>
<dt><code>=bridges</code></dt><dd>that form only</dd>
</dl><p>Accents are optional: <code>creme</code> finds “crème”; other forms count: <code>bridges</code> finds “bridge”. Press <kbd>/</kbd> to search from anywhere, arrow keys to walk the results.</p></section>`;

/** Facets, result cards and pager: what changes under #results-region with each answer. */
export function renderBody(state: PageState, answer: Answer | undefined): string {
  if (state.q === '') return TIPS;
  if (answer === undefined) return '';
  if (!('hits' in answer)) {
    if (answer.position === undefined) return '';
    // Show where the query goes wrong.
    const at = Math.min(answer.position, state.q.length);
    const mark = state.q.slice(at, at + 1) || ' ';
    return `<p class="query-error" id="query-error"><code>${escapeHtml(state.q.slice(0, at))}<span class="at">${escapeHtml(mark)}</span>${escapeHtml(state.q.slice(at + 1))}</code></p>`;
  }
  const suggestion = answer.suggest === undefined ? '' : suggest(state, answer.suggest);
  if (answer.hits.length === 0) return suggestion + facets(state, answer.facets) + noResults(state);
  return suggestion + facets(state, answer.facets) + `<ol id="results" start="${(state.page - 1) * PAGE_SIZE + 1}">${answer.hits.map(card).join('')}</ol>` + pager(state, answer.total, answer.hits.length);
}

/** "Did you mean …", or, when these are the corrected query's results, which query they answer. */
function suggest(state: PageState, suggestion: Suggestion): string {
  const link = `<a data-nav href="${escapeHtml(stateHref({ ...state, q: suggestion.q, page: 1 }))}">${safeSnippet(suggestion.html)}</a>`;
  if (!suggestion.applied) return `<p id="suggest">Did you mean ${link}?</p>`;
  return `<p id="suggest">Showing results for ${link}: nothing was found for <em>${escapeHtml(state.q)}</em>.</p>`;
}

/** What to try when nothing was found: fewer filters, another page, other words. */
function noResults(state: PageState): string {
  const tries: string[] = [];
  if (state.site.length + state.type.length + state.lang.length > 0) tries.push(`<li><a data-nav href="${escapeHtml(stateHref({ ...state, page: 1, site: [], type: [], lang: [] }))}">Search without the filters</a></li>`);
  if (state.page > 1) tries.push(`<li><a data-nav href="${escapeHtml(stateHref({ ...state, page: 1 }))}">Go to the first page</a></li>`);
  tries.push('<li>Check the spelling, or try fewer, more general words</li>', '<li>Words must all be found: <code>OR</code> asks for either</li>');
  return `<div id="no-results"><p>Suggestions:</p><ul>${tries.join('')}</ul></div>`;
}

function card(hit: SearchHit): string {
  const title = escapeHtml(hit.title === '' ? hit.url : hit.title);
  const url = escapeHtml(hit.url);
  const heading = webUrl(hit.url) ? `<a href="${url}">${title}</a>` : title;
  const date = /^\d{4}-\d{2}-\d{2}/.test(hit.date) ? `<time datetime="${escapeHtml(hit.date)}">${hit.date.slice(0, 10)}</time>` : '';
  const lang = hit.lang === 'und' ? '' : `<span class="lang" lang="${escapeHtml(hit.lang)}">${escapeHtml(hit.lang)}</span>`;
  // An image card is known from the page showing it: no size of its own, a link to that page.
  const page = hit.referrer === undefined ? '' : webUrl(hit.referrer) ? `on <a class="referrer" href="${escapeHtml(hit.referrer)}">${escapeHtml(hit.referrer)}</a>` : `on ${escapeHtml(hit.referrer)}`;
  // A PDF viewer opens a URL ending #page=N at that page.
  const where = hit.page === undefined ? '' : webUrl(hit.url) ? `<a class="page" href="${escapeHtml(`${hit.url.replace(/#.*$/s, '')}#page=${hit.page}`)}">page ${hit.page}</a>` : `page ${hit.page}`;
  const pages = hit.pages === undefined ? '' : `${hit.pages} page${hit.pages === 1 ? '' : 's'}`;
  const from = hit.collection === undefined ? '' : `<span class="collection">${escapeHtml(hit.collection)}</span>`;
  const meta = [hit.referrer === undefined ? formatSize(hit.size) : '', escapeHtml(hit.type), pages, where, date, lang, page, from].filter((part) => part !== '').join(' · ');
  return `<li class="hit"><h2 class="hit-title">${heading}</h2><p class="hit-url">${url}</p><p class="hit-snippet">${safeSnippet(hit.snippet)}</p><p class="hit-meta">${meta}</p></li>`;
}

function facets(state: PageState, counts: SearchResult['facets']): string {
  const group = (kind: 'site' | 'type' | 'lang', label: string, values: FacetCount[]): string => {
    const chosen = state[kind];
    // A chosen filter keeps its chip, to be removed, even when the engine did not count it.
    const all = [...values, ...chosen.filter((v) => !values.some((f) => f.value === v)).map((value) => ({ value, count: undefined }))];
    if (all.length === 0) return '';
    const chips = all.map(({ value, count }) => {
      const on = chosen.includes(value);
      const next = { ...state, page: 1, [kind]: on ? chosen.filter((v) => v !== value) : [...chosen, value] };
      const text = `${on ? '<span class="visually-hidden">Remove filter </span>' : ''}${escapeHtml(value)}${count === undefined ? '' : ` <span class="count">${formatCount(count)}</span>`}`;
      return `<li><a class="chip${on ? ' on' : ''}" data-nav href="${escapeHtml(stateHref(next))}">${text}</a></li>`;
    });
    return `<div class="facet"><h2>${label}</h2><ul>${chips.join('')}</ul></div>`;
  };
  // Every match of undetermined language is no choice worth a chip.
  const languages = counts.lang.filter((f) => f.value !== 'und' || state.lang.includes('und'));
  const order = (byDate: boolean, text: string) =>
    `<li><a class="order"${state.byDate === byDate ? ' aria-current="true"' : ''} data-nav href="${escapeHtml(stateHref({ ...state, page: 1, byDate }))}">${text}</a></li>`;
  const sort = `<div class="facet"><h2>Order</h2><ul>${order(false, 'Relevance')}${order(true, 'Newest first')}</ul></div>`;
  const html = group('site', 'Sites', counts.site) + group('type', 'Types', counts.type) + group('lang', 'Languages', languages) + sort;
  return html === '' ? '' : `<nav id="facets" aria-label="Filters">${html}</nav>`;
}

/** Links to the pages around this one; a lower-bound total (a pruned phrase's) after a full page leaves a next page open. */
function pager(state: PageState, total: SearchResult['total'], shown: number): string {
  const more = total.relation === 'gte' && shown === PAGE_SIZE ? state.page + 1 : 0;
  const last = Math.min(Math.max(Math.ceil(total.value / PAGE_SIZE), more), MAX_PAGE);
  if (last <= 1) return '';
  const link = (page: number, text: string, rel = '') =>
    `<a data-nav href="${escapeHtml(stateHref({ ...state, page }))}"${rel === '' ? '' : ` rel="${rel}"`}>${text}</a>`;
  const first = Math.max(1, Math.min(state.page - 4, last - 9));
  const items: string[] = [];
  if (state.page > 1) items.push(link(state.page - 1, 'Previous', 'prev'));
  for (let page = first; page <= Math.min(first + 9, last); page++) {
    items.push(page === state.page ? `<span aria-current="page">${page}</span>` : link(page, String(page)));
  }
  if (state.page < last) items.push(link(state.page + 1, 'Next', 'next'));
  return `<nav id="pager" aria-label="Result pages">${items.join(' ')}</nav>`;
}

/** The whole page: the form works without JavaScript; page.js takes over when it runs. `name`: the searcher's OpenSearch name, for the browser's list of search engines. */
export function renderPage(state: PageState, answer: Answer | undefined, name = 'sherlock'): string {
  const title = state.q === '' ? 'sherlock' : `${escapeHtml(state.q)} – sherlock`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="/page.css">
<link rel="search" type="application/opensearchdescription+xml" title="${escapeHtml(name)}" href="/opensearch.xml">
<script type="module" src="/page.js"></script>
</head>
<body>
<a class="skip" href="#results-region">Skip to results</a>
<header>
<h1><a href="/">sherlock</a></h1>
<form id="search-form" role="search" action="/search" method="get">
<label for="q" class="visually-hidden">Search</label>
<div class="combo"><input id="q" name="q" type="search" value="${escapeHtml(state.q)}" maxlength="1024" autocomplete="off" spellcheck="false" autofocus aria-describedby="status" placeholder="Search: words, &quot;phrases&quot;, -exclude, site:, type:, lang:"><ul id="suggestions" hidden></ul></div>
${[...state.site.map((v) => ['site', v]), ...state.type.map((v) => ['type', v]), ...state.lang.map((v) => ['lang', v]), ...(state.byDate ? [['sort', 'date']] : []), ...(state.collections ?? []).map((v) => ['collections', v])].map(([name, v]) => `<input type="hidden" name="${name}" value="${escapeHtml(v!)}">`).join('')}
<button type="submit">Search</button>
</form>
<form id="token-form" hidden>
<label for="token">This searcher asks for an access token</label>
<input id="token" type="password" autocomplete="current-password">
<button type="submit">Use token</button>
</form>
</header>
<main>
<p id="status" role="status" aria-live="polite">${escapeHtml(summary(state, answer))}</p>
<div id="results-region" data-rendered="${answer !== undefined}">${renderBody(state, answer)}</div>
</main>
</body>
</html>
`;
}
