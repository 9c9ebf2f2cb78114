/**
 * What a fetch came to: one closed set of outcomes, each with the original
 * gatherer's numeric error code (sherlock-original §2 "Errors"), which goes
 * into the bucket's `!` attribute as "<code> <message>".
 *
 *   0–999       not an error: 0 ok, 1 redirect, 3 not modified
 *   1000–1999   temporary: the gatherer queues the URL again (after 60 s, or
 *               an hour once the host has failed 3 times in a row)
 *   2000 and up permanent: recorded, not retried by the gatherer
 *
 * Codes (docs/gatherer.md has the same table for operators):
 *
 *   outcome            temporary           permanent
 *   ok                 0
 *   redirect           1
 *   not_modified       3
 *   dns                1101 resolver       2101 no such host, 2102 address refused
 *                      failure               (private range), 2103 no address
 *   connect            1201 refused,       2201 (1201 after the last retry)
 *                      reset, unreachable
 *   tls                                    2202 certificate or handshake
 *   timeout            1302                2302 (1302 after the last retry)
 *   robots_denied                          2304 (the original's number)
 *   too_large                              2305 body cut at the cap (the part
 *                                            received is kept and parsed)
 *   unsupported_type                       2306 stored, not parsed
 *   unparseable                            2307 of a type that is parsed
 *                                            (PDF), but broken, encrypted,
 *                                            or over the parse's time cap;
 *                                            stored, not parsed. Over its
 *                                            memory cap it is too_large.
 *   taken_down                             2308 a takedown hides the URL
 *                                            (common/takedowns.ts): no
 *                                            request; the shepherd plans it
 *                                            again once the takedown is
 *                                            lifted
 *   http_4xx           1000 + status for   2000 + status (2400–2499)
 *                      408, 425, 429
 *   http_5xx           1000 + status       2000 + status after the last retry
 *                      (1500–1599)
 *
 * A temporary code becomes permanent by adding 1000 once the retries are
 * used up, so 1302 → 2302 is "timed out, gave up", as the original's 2302.
 */

import { canonicalUrl } from '../common/url.js';

export const OUTCOMES = [
  'ok',
  'not_modified',
  'redirect',
  'http_4xx',
  'http_5xx',
  'timeout',
  'dns',
  'connect',
  'tls',
  'robots_denied',
  'too_large',
  'unsupported_type',
  'unparseable',
  'taken_down',
] as const;

export type Outcome = (typeof OUTCOMES)[number];

export const CODE = {
  ok: 0,
  redirect: 1,
  notModified: 3,
  dnsTemporary: 1101,
  dnsNoHost: 2101,
  dnsRefused: 2102,
  dnsNoAddress: 2103,
  connect: 1201,
  tls: 2202,
  timeout: 1302,
  robotsDenied: 2304,
  tooLarge: 2305,
  unsupportedType: 2306,
  unparseable: 2307,
  takenDown: 2308,
} as const;

/** HTTP client errors worth asking again: request timeout, too early, too many requests. */
const TEMPORARY_4XX = new Set([408, 425, 429]);

export function isTemporary(code: number): boolean {
  return code >= 1000 && code < 2000;
}

export function isPermanent(code: number): boolean {
  return code >= 2000;
}

/** The permanent code recorded when a temporary error has used up its retries. */
export function givenUp(code: number): number {
  return isTemporary(code) ? code + 1000 : code;
}

/** The code of an HTTP status that is not a success, redirect or 304. */
export function httpErrorCode(status: number): number {
  if (status >= 500) return 1000 + status;
  return (TEMPORARY_4XX.has(status) ? 1000 : 2000) + status;
}

/** The outcome an HTTP status maps to, given that the body fitted. */
export function httpOutcome(status: number): Outcome {
  if (status === 304) return 'not_modified';
  if (status >= 300 && status < 400) return 'redirect';
  if (status >= 400 && status < 500) return 'http_4xx';
  if (status >= 500) return 'http_5xx';
  return 'ok';
}

/** What an HTTP response comes to before its body is judged: outcome, code, message, and a redirect's target. */
export interface HttpResult {
  outcome: Outcome;
  code: number;
  /** "HTTP 404 Not Found", with why a redirect has no target or a body was cut. */
  message: string;
  /** For a 3xx other than 304: Location resolved against the URL and canonicalised. */
  location?: string;
}

/**
 * The result of a response received (the fetcher's) or archived (an
 * import's): `location` the Location header as text, `cutAt` the body cap
 * when the body was cut there.
 */
export function httpResult(url: string, status: number, statusText: string, location: string | undefined, cutAt?: number): HttpResult {
  let message = `HTTP ${status}${statusText === '' ? '' : ` ${statusText}`}`;
  let outcome = httpOutcome(status);
  let code = outcome === 'ok' ? CODE.ok : outcome === 'not_modified' ? CODE.notModified : outcome === 'redirect' ? CODE.redirect : httpErrorCode(status);
  let target: string | undefined;
  if (outcome === 'redirect') {
    if (location === undefined) {
      message += ' without Location';
    } else {
      try {
        target = canonicalUrl(location.trim(), url);
      } catch {
        message += ' with an unusable Location';
      }
    }
  }
  if (cutAt !== undefined) {
    outcome = 'too_large';
    code = CODE.tooLarge;
    message += `, body cut at ${cutAt} bytes`;
  }
  return { outcome, code, message, ...(target === undefined ? {} : { location: target }) };
}

/** The `!` attribute's value: "<code> <message>". */
export function errorAttribute(code: number, message: string): string {
  return `${code} ${message}`;
}

/** Reads a `!` attribute back; undefined when it does not start with a code. */
export function parseErrorAttribute(value: string): { code: number; message: string } | undefined {
  const match = /^(\d{1,5}) ?(.*)$/s.exec(value);
  return match === null ? undefined : { code: Number(match[1]), message: match[2]! };
}
