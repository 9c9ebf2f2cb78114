/**
 * The HTTP routes beside the WebSocket API, on the same port:
 *
 *   GET /healthz          200 "ok VERSION" with an index loaded, else 503
 *   GET /                 the search page
 *   GET /search?q=…       the same page with results rendered on the server
 *                         (&site=…&type=…&lang=… filters, &page=N), for browsers
 *                         without JavaScript, shared links, curl and tests
 *   GET /page.css, /page.js, /render.js, /client.js, /suggest-box.js   the
 *                         page's assets (CORS for allowed_origins: the widget
 *                         imports the suggestion list)
 *   GET /widget.js        the search box other sites embed (page/widget.js)
 *   GET /status           the status view (page/status.html, status.js,
 *                         status.css): live figures over the status topic
 *   GET /metrics          Prometheus text format (metrics.ts); with a token
 *                         set, only for `Authorization: Bearer` with it
 *   GET /opensearch.xml   the OpenSearch description (opensearch.ts)
 *   /api/*                the JSON API (http-api.ts)
 *
 * /search obeys the same per-IP search bucket and query timeout as the
 * socket, and the bearer token (Authorization header) when one is set.
 * HTML answers carry a strict Content-Security-Policy (scripts and styles
 * only from here) and no Referer leaves for the sites a result links to,
 * since the query is in the address.
 */

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { CONTENT_TYPE } from '../common/service/metrics.js';
import { originAllowed } from './auth.js';
import type { Shared } from './connection.js';
import { decodeResult } from './engine.js';
import { handleApi } from './http-api.js';
import { STATUS_OF, errorHeaders, searchBucketRefusal, tokenRefusal } from './http-refusals.js';
import { MessageError, checkSearchFields, type ErrorFields } from './protocol.js';
import { OPENSEARCH_TYPE, openSearchDescription, requestBase } from './opensearch.js';
import { PAGE_SIZE, renderPage, stateFromParams, type Answer } from './render.js';
import { runSearch } from './search.js';

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** Source files of the page (no build step), and the renderer and the typed client as tsc compiled them. */
const ASSET_FILES: Record<string, { url: URL; type: string }> = {
  '/page.css': { url: new URL('../../searcher/page/page.css', import.meta.url), type: 'text/css; charset=utf-8' },
  '/page.js': { url: new URL('../../searcher/page/page.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  '/render.js': { url: new URL('./render.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  '/client.js': { url: new URL('../client/sherlock-client.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  '/status': { url: new URL('../../searcher/page/status.html', import.meta.url), type: 'text/html; charset=utf-8' },
  '/status.css': { url: new URL('../../searcher/page/status.css', import.meta.url), type: 'text/css; charset=utf-8' },
  '/status.js': { url: new URL('../../searcher/page/status.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  '/suggest-box.js': { url: new URL('../../searcher/page/suggest-box.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  '/widget.js': { url: new URL('../../searcher/page/widget.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
};

/** Reads the page's assets once, at start: a missing file fails the start, not a visitor. */
export function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const [path, { url, type }] of Object.entries(ASSET_FILES)) {
    const body = readFileSync(fileURLToPath(url));
    assets.set(path, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return assets;
}

const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** Answers one request; `url` is its target, already parsed (common/service/http-listener.ts). */
export function handleHttp(req: IncomingMessage, res: ServerResponse, url: URL, shared: Shared, assets: Map<string, Asset>): void | Promise<void> {
  if (url.pathname.startsWith('/api/')) return handleApi(req, res, url, shared);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
    return;
  }
  if (url.pathname === '/healthz') {
    const version = shared.engine.version;
    res.writeHead(version === undefined ? 503 : 200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
    res.end(version === undefined ? 'no index\n' : `ok ${version}\n`);
    return;
  }
  if (url.pathname === '/') {
    res.writeHead(200, HTML_HEADERS).end(renderPage(stateFromParams(url.searchParams), undefined, shared.config.opensearch_name));
    return;
  }
  if (url.pathname === '/opensearch.xml') {
    res.writeHead(200, { 'content-type': `${OPENSEARCH_TYPE}; charset=utf-8`, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' });
    res.end(openSearchDescription(requestBase(req), shared.config.opensearch_name));
    return;
  }
  if (url.pathname === '/search') {
    return searchPage(req, res, url.searchParams, shared);
  }
  if (url.pathname === '/metrics') {
    if (tokenRefusal(req, shared) !== undefined) {
      res.writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'text/plain; charset=utf-8' }).end('this searcher asks for its access token\n');
    } else {
      res.writeHead(200, { 'content-type': CONTENT_TYPE, 'cache-control': 'no-store' }).end(shared.metrics.registry.expose());
    }
    return;
  }
  const asset = assets.get(url.pathname);
  if (asset === undefined) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
    return;
  }
  // A static page (the status view) gets the same policy headers as the rendered ones.
  // The widget imports the suggestion list from here into another site's page: a module import is a CORS request.
  const origin = req.headers.origin;
  const cors = origin !== undefined && originAllowed(origin, req.headers.host, shared.config.allowed_origins) ? { 'access-control-allow-origin': origin } : {};
  const headers = { ...(asset.type.startsWith('text/html') ? HTML_HEADERS : {}), ...cors, vary: 'Origin', 'content-type': asset.type, etag: asset.etag, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' };
  if (req.headers['if-none-match'] === asset.etag) res.writeHead(304, headers).end();
  else res.writeHead(200, headers).end(asset.body);
}

async function searchPage(req: IncomingMessage, res: ServerResponse, params: URLSearchParams, shared: Shared): Promise<void> {
  const state = stateFromParams(params);
  const page = (status: number, answer: Answer | undefined, headers: Record<string, string> = {}) => {
    if (!res.destroyed) res.writeHead(status, { ...HTML_HEADERS, ...headers }).end(renderPage(state, answer, shared.config.opensearch_name));
  };
  const refuse = (error: ErrorFields) => page(STATUS_OF[error.code], error, errorHeaders(error));
  if (state.q === '') return page(200, undefined);
  const refusal = tokenRefusal(req, shared) ?? searchBucketRefusal(req, shared);
  if (refusal !== undefined) return refuse(refusal);
  let fields;
  try {
    const filters = { site: state.site, type: state.type, lang: state.lang };
    const collections = state.collections === undefined ? {} : { collections: state.collections };
    fields = checkSearchFields({ q: state.q, offset: (state.page - 1) * PAGE_SIZE, limit: PAGE_SIZE, filters, ...(state.byDate ? { sort: 'date' } : {}), ...collections });
  } catch (err) {
    if (!(err instanceof MessageError)) throw err;
    return refuse({ code: 'BAD_MESSAGE', message: err.message });
  }
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  const outcome = await runSearch(shared, fields, controller.signal, 'page');
  if (outcome.ok) page(200, { ...decodeResult(outcome.result), took_ms: outcome.took_ms });
  else page(STATUS_OF[outcome.error.code], outcome.error);
}
