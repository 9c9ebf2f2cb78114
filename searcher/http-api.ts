/**
 * The JSON API over HTTP, on the searcher's port beside the pages
 * (docs/api.md "JSON over HTTP"). One table of routes; each names how its
 * GET query parameters become the JSON object a POST body holds and what
 * it answers. Around every
 * route this router does the rest, in this order:
 *
 * - the Origin check and CORS: a browser request from an origin that is
 *   neither ours nor in allowed_origins is refused 403, whatever its method
 *   (a GET or a text/plain POST needs no preflight, and would otherwise
 *   search with the visitor's network position, as a foreign page opening
 *   our WebSocket would); an allowed origin gets Access-Control-Allow-Origin;
 *   preflights (OPTIONS) are answered 204 for allowed origins; a request
 *   with no Origin that the browser says another site made (Sec-Fetch-Site,
 *   an <img> or no-cors fetch) is refused too;
 * - the method (GET, POST; else 405 with Allow);
 * - the bearer token (Authorization header, never the URL; 401);
 * - the fields: query parameters for GET, a JSON body for POST (json-body.ts:
 *   415, 413, 400), checked by the route as the WebSocket checks its
 *   message (400 BAD_MESSAGE naming the field);
 * - the per-IP search bucket (429 with Retry-After and retry_after_ms);
 * - cancelling: a client that goes away aborts the work it asked for.
 *
 * Answers are the WebSocket's messages without an id: JSON, with the
 * status of the error code (http-refusals.ts).
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { originAllowed } from './auth.js';
import type { Shared } from './connection.js';
import type { ApiRoute } from './api-route.js';
import { searchRoute } from './api-search.js';
import { suggestRoute } from './api-suggest.js';
import { STATUS_OF, errorHeaders, searchBucketRefusal, tokenRefusal } from './http-refusals.js';
import { readJsonBody } from './json-body.js';
import { MAX_PAYLOAD, MessageError, errorMessage, type ErrorFields } from './protocol.js';

const ROUTES: Record<string, ApiRoute> = {
  '/api/search': searchRoute,
  '/api/suggest': suggestRoute,
};

const METHODS = 'GET, POST';
/** How long a browser may keep a preflight's answer. */
const PREFLIGHT_MAX_AGE_S = 600;

/** Answers a request to /api/…; `url` is its target, already parsed. */
export async function handleApi(req: IncomingMessage, res: ServerResponse, url: URL, shared: Shared): Promise<void> {
  const origin = req.headers.origin;
  if (!originAllowed(origin, req.headers.host, shared.config.allowed_origins) || foreignWithoutOrigin(req)) {
    return send(res, 403, errorMessage(undefined, { code: 'UNAUTHORIZED', message: 'origin not allowed (searcher.allowed_origins)' }), { vary: 'Origin' });
  }
  const cors: Record<string, string> = origin === undefined ? { vary: 'Origin' } : { vary: 'Origin', 'access-control-allow-origin': origin, 'access-control-expose-headers': 'retry-after' };
  const fail = (status: number, error: ErrorFields, headers: Record<string, string> = {}, id?: string) => send(res, status, errorMessage(id, error), { ...cors, ...headers });
  const route = Object.hasOwn(ROUTES, url.pathname) ? ROUTES[url.pathname]! : undefined;
  if (route === undefined) return fail(404, { code: 'BAD_MESSAGE', message: `no route ${url.pathname}; there are ${Object.keys(ROUTES).join(', ')}` });
  if (req.method === 'OPTIONS') {
    res.writeHead(204, {
      ...cors,
      allow: `${METHODS}, OPTIONS`,
      'access-control-allow-methods': METHODS,
      'access-control-allow-headers': 'authorization, content-type',
      'access-control-max-age': String(PREFLIGHT_MAX_AGE_S),
    });
    return void res.end();
  }
  if (req.method !== 'GET' && req.method !== 'POST') {
    return fail(405, { code: 'BAD_MESSAGE', message: `${url.pathname} takes GET and POST` }, { allow: `${METHODS}, OPTIONS` });
  }
  const unauthorized = tokenRefusal(req, shared);
  if (unauthorized !== undefined) return fail(STATUS_OF.UNAUTHORIZED, unauthorized, errorHeaders(unauthorized));
  let value: Record<string, unknown>;
  let work;
  try {
    if (req.method === 'POST') {
      if (url.search !== '') return fail(400, { code: 'BAD_MESSAGE', message: 'a POST takes its fields from the JSON body, not from query parameters' });
      const body = await readJsonBody(req, MAX_PAYLOAD);
      if (!body.ok) return fail(body.status, body.error, body.status === 413 ? { connection: 'close' } : {});
      value = body.value;
    } else {
      value = route.fromQuery(url.searchParams);
    }
    work = route.accept(value, req);
  } catch (err) {
    if (!(err instanceof MessageError)) throw err;
    const { type: _, ...fields } = err.toMessage();
    return fail(400, fields);
  }
  const limited = searchBucketRefusal(req, shared);
  if (limited !== undefined) return fail(STATUS_OF.TOO_MANY_REQUESTS, limited, errorHeaders(limited));
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  const answer = await work(shared, controller.signal);
  // Gone: the abort made the answer CANCELLED, which has no one to go to.
  if (res.destroyed || res.writableEnded) return;
  if (answer.ok) sendText(res, 200, answer.json, cors, answer.type);
  else fail(STATUS_OF[answer.error.code], answer.error, errorHeaders(answer.error), answer.id);
}

/**
 * A browser request another site's page made without an Origin header: a
 * no-cors GET (an <img>, a script, fetch in no-cors mode) carries none, yet
 * would run a search with the visitor's network position. Browsers say
 * where it came from in Sec-Fetch-Site; a link followed (a navigation of
 * the top document) is let through, an iframe's is not.
 */
function foreignWithoutOrigin(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  const followed = req.headers['sec-fetch-mode'] === 'navigate' && req.headers['sec-fetch-dest'] === 'document';
  return req.headers.origin === undefined && (site === 'cross-site' || site === 'same-site') && !followed;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  sendText(res, status, JSON.stringify(body), headers);
}

function sendText(res: ServerResponse, status: number, json: string, headers: Record<string, string>, type = 'application/json'): void {
  res.writeHead(status, { ...headers, 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }).end(json);
}
