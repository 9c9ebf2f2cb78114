// The search page's script (no build step; ES module). It takes over the
// page the server rendered: as the user types, searches go through the typed
// client (/client.js, docs/client.md) over one WebSocket, debounced; a newer
// search supersedes the older one, so only the latest answer is drawn, with
// the same renderer the server used (/render.js). The client keeps to the
// searcher's limits and reconnects by itself. The address bar follows the
// search, so back, forward, reload and shared links work. Without a socket
// the form falls back to GET /search, which the server renders.

import { SherlockClient } from '/client.js';
import { PAGE_SIZE, renderBody, stateFromParams, stateHref, summary } from '/render.js';
import { attachSuggestions } from '/suggest-box.js';

const DEBOUNCE_MS = 150;
const SUGGESTIONS = 8;
const TOKEN_KEY = 'sherlock-token';

const form = document.getElementById('search-form');
const input = document.getElementById('q');
const status = document.getElementById('status');
const region = document.getElementById('results-region');
const tokenForm = document.getElementById('token-form');
const tokenInput = document.getElementById('token');

const client = new SherlockClient(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`, { token: sessionStorage.getItem(TOKEN_KEY) ?? undefined });
let state = stateFromParams(new URLSearchParams(location.search));
let open = false;
let due = false; // a search failed for want of a connection or a token: search again once welcomed
let clearing = new AbortController(); // aborted when the box is emptied, cancelling what is out
let debounce;
let typing = false; // the history entry of this typing run exists already

// Completions as the user types (suggest-box.js); choosing one searches it at once.
const suggestions = attachSuggestions(input, document.getElementById('suggestions'), {
  fetch: (text) =>
    client.suggest(text, { limit: SUGGESTIONS, supersede: 'suggest' }).then(
      (answer) => answer.suggestions,
      (error) => (error.code === 'CANCELLED' ? undefined : []),
    ),
  choose: (text) => {
    typing = false;
    go({ ...state, q: text, page: 1 }, true);
    search();
  },
});

client.on('welcome', () => {
  open = true;
  if (due) search();
});
client.on('close', () => (open = false));
client.on('unauthorized', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  tokenForm.hidden = false;
  tokenInput.focus();
});

function search() {
  clearTimeout(debounce);
  due = false;
  if (state.q.trim() === '') {
    clearing.abort();
    clearing = new AbortController();
    return show(undefined);
  }
  const shown = state;
  const filters = { site: state.site, type: state.type, lang: state.lang };
  const collections = state.collections === undefined ? {} : { collections: state.collections };
  const fields = { q: state.q, offset: (state.page - 1) * PAGE_SIZE, limit: PAGE_SIZE, filters, ...(state.byDate ? { sort: 'date' } : {}), ...collections };
  region.setAttribute('aria-busy', 'true');
  client.search(fields, { supersede: 'box', signal: clearing.signal }).then(
    (result) => show(result, shown),
    (error) => {
      if (error.code === 'CANCELLED') return;
      if (error.code === 'UNAUTHORIZED' || error.code === 'UNAVAILABLE') {
        due = true;
        return;
      }
      show({ code: error.code, message: error.message, ...(error.position === undefined ? {} : { position: error.position }) }, shown);
    },
  );
}

function show(answer, shown = state) {
  status.textContent = summary(shown, answer);
  region.innerHTML = renderBody(shown, answer);
  region.removeAttribute('aria-busy');
  document.title = shown.q === '' ? 'sherlock' : `${shown.q} – sherlock`;
}

/** Makes `next` the current state, in a new history entry or in place of the current one. */
function go(next, push) {
  state = next;
  const href = stateHref(state);
  if (push && href !== location.pathname + location.search) history.pushState(null, '', href);
  else history.replaceState(null, '', href);
  if (input.value !== state.q) input.value = state.q;
}

input.addEventListener('input', () => {
  go({ ...state, q: input.value, page: 1 }, !typing);
  typing = true;
  clearTimeout(debounce);
  debounce = setTimeout(search, DEBOUNCE_MS);
});

form.addEventListener('submit', (event) => {
  event.preventDefault();
  suggestions.close();
  typing = false;
  go({ ...state, q: input.value, page: 1 }, true);
  // Without a socket the server renders the answer.
  if (open) search();
  else location.reload();
});

region.addEventListener('click', (event) => {
  const link = event.target.closest('a[data-nav]');
  if (link === null || !open || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  typing = false;
  go(stateFromParams(new URL(link.href).searchParams), true);
  search();
  window.scrollTo({ top: 0 });
});

window.addEventListener('popstate', () => {
  typing = false;
  go(stateFromParams(new URLSearchParams(location.search)), false);
  search();
});

// "/" focuses the search box; arrow keys walk the result links.
document.addEventListener('keydown', (event) => {
  const active = document.activeElement;
  if (event.key === '/' && active !== input && !(active instanceof HTMLInputElement)) {
    event.preventDefault();
    input.focus();
    input.select();
    return;
  }
  if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
  const links = [...region.querySelectorAll('.hit-title a')];
  const at = links.indexOf(active);
  if (at < 0 && active !== input) return;
  event.preventDefault();
  const to = event.key === 'ArrowDown' ? at + 1 : at - 1;
  if (to < 0) input.focus();
  else links[Math.min(to, links.length - 1)]?.focus();
});

tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const token = tokenInput.value.trim();
  sessionStorage.setItem(TOKEN_KEY, token);
  tokenInput.value = '';
  tokenForm.hidden = true;
  due = true;
  client.setToken(token);
});

if (state.q !== '' && region.dataset.rendered !== 'true') search();
