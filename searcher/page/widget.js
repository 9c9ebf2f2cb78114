// The embeddable search box (docs/api.md "Widget"): another site adds
//   <script src="https://SEARCHER/widget.js" data-name="My Site" data-site="example.org" defer></script>
// and gets a search box where the script stands, with its results in an
// overlay below it. Everything lives in a shadow root, so the host page's
// styles do not reach in and ours do not leak out. It asks the JSON API
// (GET /api/search) of the origin the script came from, with fetch: the
// searcher must list the host page's origin in searcher.allowed_origins
// (CORS), else the box says the searcher does not answer this site. Text
// from the index is only ever set as text; a snippet keeps its <mark>s and
// nothing else. Keys: Enter searches, arrows walk the results (up from the
// first goes back to the box), Escape closes the overlay and puts the
// focus back in the box. Suggestions (GET /api/suggest) hang under the box
// as the user types: the search page's list (suggest-box.js, imported from
// the searcher, so CORS again), with its own keys while it is open. Plain
// script, no build step, like page.js.

(() => {
  const script = document.currentScript;
  if (script === null || !(script instanceof HTMLScriptElement)) return;
  const base = new URL(script.src).origin;
  const name = script.dataset.name || 'sherlock';
  const sites = (script.dataset.site || '').split(/[\s,]+/).filter((s) => s !== '');
  const LIMIT = 8;
  const SUGGESTIONS = 6;

  const host = document.createElement('div');
  host.className = 'sherlock-widget';
  script.after(host);
  const root = host.attachShadow({ mode: 'open' });

  const style = document.createElement('style');
  style.textContent = `
:host { all: initial; display: inline-block; position: relative; font: 15px/1.4 system-ui, sans-serif; color: #1b1b1b; }
form { display: flex; gap: 4px; }
input { font: inherit; padding: 6px 8px; border: 1px solid #8a8a8a; border-radius: 4px; min-width: 16em; }
.combo { position: relative; display: flex; }
.suggestions { position: absolute; top: calc(100% + 2px); left: 0; right: 0; z-index: 2147483647; list-style: none; margin: 0; padding: 4px 0;
  background: #fff; border: 1px solid #8a8a8a; border-radius: 4px; box-shadow: 0 4px 16px rgb(0 0 0 / 0.2); }
.suggestions[hidden] { display: none; }
.suggestion { padding: 3px 8px; cursor: pointer; overflow-wrap: anywhere; }
.suggestion[aria-selected="true"], .suggestion:hover { background: #e8eef9; }
button { font: inherit; padding: 6px 12px; border: 1px solid #8a8a8a; border-radius: 4px; background: #f3f3f3; cursor: pointer; }
input:focus, button:focus, a:focus { outline: 2px solid #1a5fb4; outline-offset: 1px; }
.overlay { position: absolute; top: calc(100% + 4px); left: 0; z-index: 2147483646; width: min(34em, 92vw); max-height: 70vh; overflow: auto;
  background: #fff; border: 1px solid #8a8a8a; border-radius: 6px; box-shadow: 0 6px 24px rgb(0 0 0 / 0.2); padding: 8px 12px; }
.overlay[hidden] { display: none; }
.status { margin: 0 0 6px; color: #4a4a4a; font-size: 13px; }
.status.error { color: #a51d2d; }
ol { list-style: none; margin: 0; padding: 0; }
li { margin: 0 0 10px; }
li a { color: #1a5fb4; font-weight: 600; text-decoration: none; }
li a:hover { text-decoration: underline; }
.url { color: #26712d; font-size: 12px; overflow-wrap: anywhere; }
.snippet { margin: 2px 0 0; font-size: 13px; color: #1b1b1b; }
mark { background: #fce588; color: inherit; }
.all { font-size: 13px; }
@media (prefers-color-scheme: dark) {
  :host { color: #eee; }
  .overlay, .suggestions { background: #202124; border-color: #5f6368; }
  .suggestion[aria-selected="true"], .suggestion:hover { background: #3c4043; }
  .snippet { color: #ddd; } .status { color: #bbb; } .url { color: #8fd19e; } li a { color: #8ab4f8; }
  input, button { background: #303134; color: #eee; border-color: #5f6368; }
  mark { background: #6b5a12; }
}`;

  const form = element('form', { role: 'search' });
  const label = element('label', { for: 'sherlock-q', style: 'position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)' }, `Search ${name}`);
  const input = element('input', { id: 'sherlock-q', type: 'search', maxlength: '1024', autocomplete: 'off', placeholder: `Search ${name}`, 'aria-controls': 'sherlock-results' });
  const button = element('button', { type: 'submit' }, 'Search');
  // The list suggest-box.js fills as the user types, hanging under the box.
  const suggestions = element('ul', { class: 'suggestions', id: 'sherlock-suggestions' });
  const combo = element('div', { class: 'combo' });
  combo.append(input, suggestions);
  form.append(label, combo, button);
  const overlay = element('div', { class: 'overlay', id: 'sherlock-results', role: 'region', 'aria-label': `Results from ${name}` });
  overlay.hidden = true;
  const status = element('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const list = element('ol');
  const all = element('p', { class: 'all' });
  overlay.append(status, list, all);
  root.append(style, form, overlay);

  let serial = 0;
  let controller;
  let suggesting;

  // Without the list (the import refused or failed) the box still searches.
  import(`${base}/suggest-box.js`).then(
    ({ attachSuggestions }) => attachSuggestions(input, suggestions, { fetch: suggest, choose: (text) => void search(text) }),
    () => undefined,
  );

  /** The completions of the text typed, or undefined when a newer request superseded this one. */
  async function suggest(text) {
    suggesting?.abort();
    suggesting = new AbortController();
    try {
      const res = await fetch(`${base}/api/suggest?${new URLSearchParams({ q: text, limit: String(SUGGESTIONS) })}`, { signal: suggesting.signal, credentials: 'omit' });
      const answer = await res.json();
      return answer.type === 'suggestions' ? answer.suggestions : [];
    } catch (err) {
      if (err.name === 'AbortError') return undefined;
      throw err;
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void search(input.value.trim());
  });
  root.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !overlay.hidden) {
      event.preventDefault();
      close();
    } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      const links = [...list.querySelectorAll('a.hit')];
      if (overlay.hidden || links.length === 0) return;
      event.preventDefault();
      const at = links.indexOf(root.activeElement);
      const next = event.key === 'ArrowDown' ? Math.min(at + 1, links.length - 1) : at - 1;
      if (next < 0) input.focus();
      else links[next].focus();
    }
  });
  // A click elsewhere on the host page closes the overlay, as a menu does.
  document.addEventListener('click', (event) => {
    if (!event.composedPath().includes(host)) overlay.hidden = true;
  });

  async function search(q) {
    if (q === '') return;
    controller?.abort();
    controller = new AbortController();
    const mine = ++serial;
    const params = new URLSearchParams({ q, limit: String(LIMIT) });
    for (const site of sites) params.append('site', site);
    show('Searching…');
    let answer;
    try {
      const res = await fetch(`${base}/api/search?${params}`, { signal: controller.signal, credentials: 'omit' });
      answer = await res.json();
    } catch (err) {
      if (err.name === 'AbortError') return;
      // A refused CORS request and an unreachable searcher look alike to a page.
      if (mine === serial) show(`${name} does not answer searches from this site (${location.origin} is not among its allowed origins) or cannot be reached.`, true);
      return;
    }
    if (mine !== serial) return;
    if (answer.type === 'result') draw(q, params, answer);
    else show(refusal(answer), true);
  }

  function refusal(error) {
    if (error.code === 'TOO_MANY_REQUESTS' && error.retry_after_ms !== undefined) return `Too many searches; try again in ${Math.ceil(error.retry_after_ms / 1000)} s.`;
    if (error.code === 'BAD_QUERY') return `The query does not parse: ${error.message}`;
    if (error.code === 'NO_INDEX') return `${name} has no index yet.`;
    return `The search failed: ${error.message}`;
  }

  function show(message, error = false) {
    overlay.hidden = false;
    status.textContent = message;
    status.classList.toggle('error', error);
    list.replaceChildren();
    all.replaceChildren();
  }

  function draw(q, params, result) {
    const total = result.total.value;
    show(result.hits.length === 0 ? `No results for “${q}”.` : `${total.toLocaleString()}${result.total.relation === 'gte' ? '+' : ''} result${total === 1 ? '' : 's'}`);
    for (const hit of result.hits) list.append(card(hit));
    params.delete('limit');
    if (total > result.hits.length) all.append(element('a', { href: `${base}/search?${params}` }, `All results on ${name}`));
  }

  function card(hit) {
    const item = element('li');
    const safe = /^https?:$/.test(new URL(hit.url, base).protocol);
    const title = hit.title || hit.url;
    item.append(safe ? element('a', { class: 'hit', href: hit.url }, title) : element('span', {}, title));
    item.append(element('div', { class: 'url' }, hit.url));
    const snippet = element('p', { class: 'snippet' });
    snippet.append(...marked(hit.snippet));
    item.append(snippet);
    return item;
  }

  /** The snippet's text as nodes: its <mark>s kept, every other tag read as its text, nothing run or loaded (a parsed document is inert). */
  function marked(html) {
    const body = new DOMParser().parseFromString(html, 'text/html').body;
    return [...body.childNodes].map((node) => (node.nodeName === 'MARK' ? element('mark', {}, node.textContent) : document.createTextNode(node.textContent ?? '')));
  }

  function close() {
    overlay.hidden = true;
    input.focus();
  }

  function element(tag, attributes = {}, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }
})();
