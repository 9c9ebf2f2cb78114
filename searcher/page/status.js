// The status view (/status; no build step, ES module): subscribes to the
// `status` topic through the typed client (/client.js, docs/client.md), which
// reconnects by itself, and shows, once a second,
// what the gatherer is doing (its status snapshot), the index searched and
// the searches. The token, if the searcher asks for one, is the one the
// search page keeps for this tab.

import { SherlockClient } from '/client.js';

const TOKEN_KEY = 'sherlock-token';
const SPARK_POINTS = 60;

const $ = (id) => document.getElementById(id);
const number = new Intl.NumberFormat('en');
const rates = [];

function connect() {
  const client = new SherlockClient(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`, { token: sessionStorage.getItem(TOKEN_KEY) ?? undefined });
  client.on('welcome', () => ($('connection').textContent = 'Live'));
  client.on('reconnecting', () => ($('connection').textContent = 'Disconnected; reconnecting…'));
  client.on('unauthorized', () => ($('connection').textContent = 'This searcher asks for an access token: give it on the search page, then come back.'));
  client.subscribeStatus(show);
}

function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}

function list(element, items, empty) {
  element.classList.toggle('empty', items.length === 0);
  element.replaceChildren(
    ...(items.length === 0 ? [empty] : items).map((text) => {
      const li = document.createElement('li');
      li.textContent = text;
      return li;
    }),
  );
}

function show(data) {
  const g = data.gatherer;
  const state = $('gatherer-state');
  state.textContent = g === null ? 'no gatherer' : g.live ? 'fetching' : 'stopped';
  state.classList.toggle('live', g !== null && g.live);
  if (g !== null) {
    $('fetch-count').textContent = number.format(g.fetches);
    $('fetch-rate').textContent = g.live ? g.rate.toFixed(1) : '0';
    $('fetch-bytes').textContent = bytes(g.bytes);
    $('in-flight').textContent = number.format(g.in_flight);
    $('queued').textContent = number.format(g.queued);
    $('arc').textContent = g.arc === null ? 'none yet' : `${g.arc.file} (${bytes(g.arc.bytes)})`;
    list($('errors'), Object.entries(g.errors).map(([k, v]) => `${k} ${number.format(v)}`), 'none');
    list($('busiest'), g.busiest_hosts.map((h) => `${h.host}: ${number.format(h.queued)} queued`), 'none');
    list(
      $('delayed'),
      g.delayed_hosts.map((h) => `${h.host}: until ${new Date(h.until).toLocaleTimeString()} (${number.format(h.queued)} queued, ${h.errors} errors)`),
      'none',
    );
    rates.push(g.live ? g.rate : 0);
    if (rates.length > SPARK_POINTS) rates.shift();
    spark();
  }
  const e = data.engine ?? {};
  $('index-version').textContent = e.index ?? 'none';
  $('index-docs').textContent = number.format(e.cards ?? 0);
  $('index-size').textContent = bytes(e.bytes ?? 0);
  const q = data.queries;
  $('query-rate').textContent = q.rate.toFixed(1);
  $('query-latency').textContent = q.p50_ms === null ? '–' : `${q.p50_ms} / ${q.p95_ms} ms`;
  $('connections').textContent = number.format(data.connections);
  $('result-cache').textContent = resultCache(data.result_cache);
}

/** The result cache's line: off, or its hit rate over its lookups and the bytes it holds of its bound. */
function resultCache(c) {
  if (c.bound === 0) return 'off';
  const held = `${bytes(c.bytes)} of ${bytes(c.bound)}`;
  if (c.hit_rate === null) return `no lookups yet, ${held}`;
  return `${(c.hit_rate * 100).toFixed(1)} % hits of ${number.format(c.hits + c.misses)}, ${held}`;
}

function spark() {
  const canvas = $('rate-spark');
  const ctx = canvas.getContext('2d');
  const max = Math.max(1, ...rates);
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.strokeStyle = getComputedStyle(document.documentElement).getPropertyValue('--url') || '#1a7f37';
  ctx.lineWidth = 2;
  ctx.beginPath();
  rates.forEach((r, i) => {
    const x = (i / (SPARK_POINTS - 1)) * canvas.width;
    const y = canvas.height - 2 - (r / max) * (canvas.height - 4);
    if (i === 0) ctx.moveTo(x, y);
    else ctx.lineTo(x, y);
  });
  ctx.stroke();
}

connect();
