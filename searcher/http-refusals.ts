/**
 * What an HTTP request to the searcher (the /search page, /metrics, the
 * /api/* routes) is refused with: the status of each protocol error code
 * (docs/api.md has the table), the headers an error carries, and the two
 * checks every search over HTTP makes before it runs (the bearer token, the
 * per-IP search bucket), so the page and the API refuse alike.
 */

import type { IncomingMessage } from 'node:http';
import { bearerToken, tokenMatches } from './auth.js';
import type { Shared } from './connection.js';
import type { ErrorCode, ErrorFields } from './protocol.js';

export const STATUS_OF: Record<ErrorCode, number> = {
  BAD_MESSAGE: 400,
  BAD_QUERY: 400,
  UNAUTHORIZED: 401,
  TOO_MANY_REQUESTS: 429,
  // Nobody reads it: the client that cancels is gone (nginx's code for that).
  CANCELLED: 499,
  TIMEOUT: 504,
  NO_INDEX: 503,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

/** WWW-Authenticate for UNAUTHORIZED (RFC 6750 §3), Retry-After in whole seconds, rounded up, when the error says when. */
export function errorHeaders(error: ErrorFields): Record<string, string> {
  if (error.code === 'UNAUTHORIZED') return { 'www-authenticate': 'Bearer' };
  if (error.retry_after_ms !== undefined) return { 'retry-after': String(Math.ceil(error.retry_after_ms / 1000)) };
  return {};
}

/** UNAUTHORIZED unless no token is configured or the request's `Authorization: Bearer` holds it. */
export function tokenRefusal(req: IncomingMessage, shared: Shared): ErrorFields | undefined {
  const token = shared.token;
  if (token === undefined) return undefined;
  const given = bearerToken(req.headers.authorization);
  if (given !== undefined && tokenMatches(token, given)) return undefined;
  return { code: 'UNAUTHORIZED', message: 'This searcher asks for an access token (Authorization: Bearer).' };
}

/** Takes a token from the request's IP search bucket (ip_search_rate); TOO_MANY_REQUESTS, counted, when it is empty. */
export function searchBucketRefusal(req: IncomingMessage, shared: Shared): ErrorFields | undefined {
  const { config } = shared;
  const wait = shared.ipSearches.take(req.socket.remoteAddress ?? '', config.ip_search_rate, config.ip_search_burst, performance.now());
  if (wait === 0) return undefined;
  shared.counters.rate_limited++;
  return { code: 'TOO_MANY_REQUESTS', message: 'too many searches from this address', retry_after_ms: wait };
}
