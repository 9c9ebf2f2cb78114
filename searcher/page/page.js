// The search page's script (no build step; ES module). It takes over the
// page the server rendered: as the user types, searches go over one
// WebSocket (sherlock.v1, docs/api.md), debounced; a newer search cancels the
// older one and only the latest answer is drawn, with the same renderer the
// server used (/render.js). The address bar follows the search, so back,
// forward, reload and shared links work. Without a socket the form falls
// back to GET /search, which the server renders.

import { PAGE_SIZE, renderBody, stateFromParams, stateHref, summary } from '/render.js';

const DEBOUNCE_MS = 150;
const TOKEN_KEY = 'sherlock-token';

const form = document.getElementById('search-form');
const input = document.getElementById('q');
const status = document.getElementById('status');
const region = document.getElementById('results-region');
const tokenForm = document.getElementById('token-form');
const tokenInput = document.getElementById('token');

let state = stateFromParams(new URLSearchParams(location.search));
let socket;
let open = false;
let latest; // id of the search whose answer is awaited
let due = state.q !== '' && region.dataset.rendered !== 'true'; // search once the socket opens
let serial = 0;
let debounce;
let typing = false; // the history entry of this typing run exists already
let backoff = 500;

function connect() {
  socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`, 'sherlock.v1');
  socket.onopen = () => {
    open = true;
    backoff = 500;
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token !== null) send({ type: 'hello', token });
    if (due) search();
  };
  socket.onmessage = (event) => receive(JSON.parse(event.data));
  socket.onclose = (event) => {
    open = false;
    if (latest !== undefined) due = true;
    latest = undefined;
    if (event.code === 4401) {
      sessionStorage.removeItem(TOKEN_KEY);
      tokenForm.hidden = false;
      tokenInput.focus();
      return;
    }
    setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, 30_000);
  };
}

function send(message) {
  socket.send(JSON.stringify(message));
}

function search() {
  clearTimeout(debounce);
  if (latest !== undefined && open) send({ type: 'cancel', id: latest });
  latest = undefined;
  if (state.q.trim() === '') return show(undefined);
  if (!open) {
    due = true;
    return;
  }
  due = false;
  latest = `s${++serial}`;
  const filters = { site: state.site, type: state.type, lang: state.lang };
  const collections = state.collections === undefined ? {} : { collections: state.collections };
  send({ type: 'search', id: latest, q: state.q, offset: (state.page - 1) * PAGE_SIZE, limit: PAGE_SIZE, filters, ...(state.byDate ? { sort: 'date' } : {}), ...collections });
  region.setAttribute('aria-busy', 'true');
}

function receive(message) {
  if (message.id === undefined || message.id !== latest || (message.type !== 'result' && message.type !== 'error')) return;
  latest = undefined;
  if (message.type === 'error' && message.code === 'TOO_MANY_REQUESTS') {
    debounce = setTimeout(search, message.retry_after_ms ?? 250);
    return;
  }
  show(message);
}

function show(answer) {
  status.textContent = summary(state, answer);
  region.innerHTML = renderBody(state, answer);
  region.removeAttribute('aria-busy');
  document.title = state.q === '' ? 'sherlock' : `${state.q} – sherlock`;
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
  sessionStorage.setItem(TOKEN_KEY, tokenInput.value.trim());
  tokenInput.value = '';
  tokenForm.hidden = true;
  connect();
});

connect();
