/**
 * Who may talk to the searcher: the bearer token (searcher.token_file), the
 * browser Origin check that stops cross-site WebSocket hijacking (a page on
 * another site opening a socket to ours with the visitor's network
 * position), and the Host check that stops DNS rebinding (a page whose own
 * name the attacker points at the searcher's address: its Origin then names
 * the same Host, so the Origin check alone lets it in). Clients that are not
 * browsers send no Origin and are let in; the token is what keeps them out
 * when one is configured.
 */

import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { readFileSync } from 'node:fs';
import { SherlockError } from '../common/errors.js';

/** The token in `file` (surrounding whitespace dropped); undefined when no file is configured. */
export function readToken(file: string): string | undefined {
  if (file === '') return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new SherlockError('SHERLOCK_BAD_CONFIG', `searcher.token_file: cannot read ${file}: ${reason}`, { key: 'searcher.token_file', file }, { cause: err });
  }
  const token = text.trim();
  if (token === '') throw new SherlockError('SHERLOCK_BAD_CONFIG', `searcher.token_file: ${file} is empty`, { key: 'searcher.token_file', file });
  return token;
}

/** Compares in constant time: hashing first makes the lengths equal and hides the token's length. */
export function tokenMatches(expected: string, given: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(expected), digest(given));
}

/** The token of an `Authorization: Bearer …` header (RFC 6750 §2.1), if any. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  return match?.[1];
}

/**
 * Whether a request with this Origin may open a socket: no Origin (not a
 * browser), the origin of the Host asked (our own page), or one configured.
 */
export function originAllowed(origin: string | undefined, host: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (allowed.includes(url.origin)) return true;
  if (host === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) return false;
  try {
    // Through URL so default ports compare equal: Host "x:80" is origin "http://x".
    return new URL(`${url.protocol}//${host}`).host === url.host;
  } catch {
    return false;
  }
}

/**
 * Whether the Host header names this searcher: an IP address (a rebinding
 * page cannot make the browser send one: its Host is the attacker's name),
 * "localhost", or one of `names` (searcher.server_names). No Host at all is
 * an HTTP/1.0 client, never a browser. A trailing dot is the same name.
 */
export function hostAllowed(host: string | undefined, names: readonly string[]): boolean {
  if (host === undefined) return true;
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(host);
  if (bracketed !== null) return isIP(bracketed[1]!) === 6;
  const name = host.replace(/:\d*$/, '').replace(/\.$/, '').toLowerCase();
  return isIP(name) === 4 || name === 'localhost' || names.includes(name);
}
