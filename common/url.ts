/**
 * URL identity for the whole appliance: the canonical URL, the 16-byte
 * footprint the shepherd and gatherer key on, and the 12-byte fingerprint the
 * indexer keys on (DESIGN §3, sherlock-original §3 "Footprints").
 *
 * Every stored URL is keyed by these functions, so their output must never
 * change: a change re-keys the URL database, the gatherer's queues and every
 * index. The rules below are the contract; the golden vectors in
 * test/common/url.test.ts pin them.
 *
 * Canonical URL — `canonicalUrl(input, base?)`:
 *  1. The input is at most MAX_URL_LENGTH (8192) UTF-16 code units, else rejected
 *     before parsing.
 *  2. Parsed with the WHATWG URL parser (URL Standard §4.4 "URL parsing"),
 *     resolving a relative reference against `base`. This already lower-cases
 *     the scheme and host, maps an IDN host to punycode (UTS #46 via "domain to
 *     ASCII"), normalises IPv4 (`0x7f.1` → `127.0.0.1`) and IPv6 (`[0:0::1]` →
 *     `[::1]`) hosts, percent-decodes the host, drops the port when it is the
 *     scheme's default (80 for http, 443 for https; `:0080` is 80), resolves
 *     `.` and `..` path segments (also spelled `%2e`, `.%2E`, …), turns `\` into
 *     `/`, and percent-encodes spaces, non-ASCII (as UTF-8) and other characters
 *     the Standard encodes in the path and query.
 *  3. Only the schemes http and https are accepted; the host must be non-empty.
 *  4. Dropped: the fragment (never sent to a server); userinfo (`user:pass@`:
 *     credentials do not name another document, and must not end up in the URL
 *     database, logs or the index); an empty query (a lone `?`, which servers
 *     treat as no query).
 *  5. Percent-encoding in the path and the query (the host is done by step 2):
 *     an escape `%XX` of an unreserved character (RFC 3986 §2.3: ALPHA DIGIT
 *     `-` `.` `_` `~`) is decoded; every other escape is kept, with upper-case
 *     hex (RFC 3986 §6.2.2.1), so `%2f` becomes `%2F` and stays escaped; a `%`
 *     not followed by two hex digits is encoded as `%25` (without this, `%%32%45`
 *     would become `%2E` and then `.` on a second pass). Characters the WHATWG
 *     parser leaves raw (`|`, `^`, `[`, `'` in the path, …) stay raw: raw and
 *     escaped forms of those are different canonical URLs.
 *  6. Not done: no trailing-dot removal from the host (`example.com.` stays),
 *     no query reordering, no case change in path or query, no `index.html`
 *     or trailing-slash folding, no `www.` stripping (that is urlKey's job).
 *  7. The result is `scheme://host[:port]path[?query]`: ASCII only, the path
 *     starts with `/`, and it is at most MAX_URL_LENGTH characters, else
 *     rejected. canonicalUrl is idempotent and its result re-parses (WHATWG) to
 *     itself.
 * Failures are SherlockError SHERLOCK_BAD_URL with place {url}.
 *
 * Footprint — `footprint(canonical)`, 16 bytes, byte-wise order keeps a site
 * contiguous:
 *   offset 0, 8 bytes: siteFootprint = the first 8 bytes of MD5 over
 *       u16 big-endian port — the effective port, so 80 / 443 when the URL has
 *                            none, and http and https differ;
 *       u8 protocol         — 1 = http, 2 = https;
 *       host                — the host's bytes as in the canonical URL: ASCII,
 *                             lower-case, punycode, without the port, IPv6 with
 *                             its brackets (`[::1]`).
 *   offset 8, 8 bytes: the first 8 bytes of MD5 over the rest: the canonical
 *       URL from the first `/` after the host to the end (path and query, no
 *       fragment), as ASCII.
 * Example: http://example.com/a?b hashes 00 50 01 "example.com" and "/a?b".
 *
 * URL key and fingerprint — `urlKey(canonical)`, `fingerprint(canonical)`:
 * the indexer's identity, under which `www.` and the bare host are one
 * document. The URL key is the canonical URL with one leading host label
 * matching `www` followed by zero or more ASCII digits (`www.`, `www2.`,
 * `www10.`) removed, provided what remains of the host still contains a dot
 * (so `www.com` and `www.localhost` are kept whole). Scheme, port, path and
 * query are untouched. The fingerprint is the first 12 bytes (96 bits) of MD5
 * over the URL key's ASCII bytes.
 *
 * The footprint functions take a canonical URL (the output of canonicalUrl)
 * and do not re-canonicalise it; they only check it has the canonical shape.
 */

import { hash } from 'node:crypto';
import { isSherlockError, SherlockError } from './errors.js';

/** Longest accepted input and canonical URL, in characters; longer ones are traps or garbage. */
export const MAX_URL_LENGTH = 8192;

/** Protocol bytes of the site footprint. */
const PROTOCOL_BYTE = { http: 1, https: 2 } as const;
const DEFAULT_PORT = { http: 80, https: 443 } as const;

export type Scheme = keyof typeof PROTOCOL_BYTE;

/** A canonical URL cut into the parts the gatherer and shepherd key on; `site + rest` is the URL. */
export interface UrlParts {
  scheme: Scheme;
  /** As in the URL: lower-case ASCII, punycode, IPv6 in brackets, no port. */
  host: string;
  /** The effective port: 80 or 443 when the URL names none. */
  port: number;
  /** `scheme://host[:port]` exactly as in the canonical URL. */
  site: string;
  /** Path and query, starting with `/`. */
  rest: string;
}

/** Shortens a URL for an error's place, so an 8 KiB trap does not flood the log. */
function shown(url: string): string {
  return url.length <= 200 ? url : `${url.slice(0, 200)}…`;
}

function badUrl(message: string, url: string, cause?: unknown): SherlockError {
  return new SherlockError('SHERLOCK_BAD_URL', message, { url: shown(url) }, cause === undefined ? undefined : { cause });
}

/** RFC 3986 §2.3 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~". */
function isUnreserved(code: number): boolean {
  return (
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x2d ||
    code === 0x2e ||
    code === 0x5f ||
    code === 0x7e
  );
}

const ESCAPE = /%([0-9A-Fa-f]{2})?/g;

/** Step 5 of the rules: decode unreserved escapes, upper-case the rest, `%25` for a lone `%`. */
function normaliseEscapes(text: string): string {
  if (!text.includes('%')) return text;
  return text.replace(ESCAPE, (_match: string, hex: string | undefined) => {
    if (hex === undefined) return '%25';
    const code = parseInt(hex, 16);
    return isUnreserved(code) ? String.fromCharCode(code) : `%${hex.toUpperCase()}`;
  });
}

/**
 * The canonical form of `input` (resolved against `base` when relative), by the
 * rules in the module comment; throws SHERLOCK_BAD_URL when it has none.
 */
export function canonicalUrl(input: string, base?: string): string {
  if (input.length > MAX_URL_LENGTH) throw badUrl(`URL longer than ${MAX_URL_LENGTH} characters`, input);
  let url: URL;
  try {
    url = new URL(input, base);
  } catch (err) {
    const message = base === undefined ? 'cannot parse URL' : `cannot parse URL relative to ${shown(base)}`;
    throw badUrl(message, input, err);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw badUrl(`not an http or https URL (scheme ${url.protocol})`, input);
  }
  if (url.hostname === '') throw badUrl('URL has an empty host', input);
  // `url.host` carries the port only when it is not the default; `url.search` is '' for an empty query.
  const path = normaliseEscapes(url.pathname);
  const query = url.search === '' ? '' : normaliseEscapes(url.search);
  const canonical = `${url.protocol}//${url.host}${path}${query}`;
  if (canonical.length > MAX_URL_LENGTH) throw badUrl(`canonical URL longer than ${MAX_URL_LENGTH} characters`, input);
  return canonical;
}

/** canonicalUrl, or undefined where `input` has no canonical form (SHERLOCK_BAD_URL; any other error is thrown). */
export function canonicalOrNone(input: string, base?: string): string | undefined {
  try {
    return canonicalUrl(input, base);
  } catch (err) {
    if (!isSherlockError(err, 'SHERLOCK_BAD_URL')) throw err;
    return undefined;
  }
}

/** Cuts a canonical URL into scheme, host, effective port, site and rest, without re-parsing it. */
export function urlParts(canonical: string): UrlParts {
  let scheme: Scheme;
  let hostStart: number;
  if (canonical.startsWith('https://')) {
    scheme = 'https';
    hostStart = 8;
  } else if (canonical.startsWith('http://')) {
    scheme = 'http';
    hostStart = 7;
  } else {
    throw badUrl('not a canonical http or https URL', canonical);
  }
  const slash = canonical.indexOf('/', hostStart);
  if (slash < 0) throw badUrl('canonical URL has no path', canonical);
  const authority = canonical.slice(hostStart, slash);
  // A colon after any IPv6 closing bracket starts the port.
  const colon = authority.lastIndexOf(':');
  const hasPort = colon > authority.lastIndexOf(']');
  const host = hasPort ? authority.slice(0, colon) : authority;
  const portText = hasPort ? authority.slice(colon + 1) : '';
  const port = hasPort ? Number(portText) : DEFAULT_PORT[scheme];
  if (host === '' || (hasPort && !/^\d{1,5}$/.test(portText)) || port > 0xffff) {
    throw badUrl('canonical URL has a bad host or port', canonical);
  }
  return { scheme, host, port, site: canonical.slice(0, slash), rest: canonical.slice(slash) };
}

function md5(data: string | Buffer): Buffer {
  return hash('md5', data, 'buffer');
}

function siteHash(parts: UrlParts): Buffer {
  const bytes = Buffer.allocUnsafe(3 + parts.host.length);
  bytes.writeUInt16BE(parts.port, 0);
  bytes[2] = PROTOCOL_BYTE[parts.scheme];
  bytes.write(parts.host, 3, 'latin1');
  return md5(bytes).subarray(0, 8);
}

/** The 8-byte site half of the footprint: MD5 of (u16 BE port, protocol byte, host), first 8 bytes. */
export function siteFootprint(canonical: string): Buffer {
  return siteHash(urlParts(canonical));
}

/** The 16-byte footprint: site half, then the first 8 bytes of MD5 of the path and query. */
export function footprint(canonical: string): Buffer {
  const parts = urlParts(canonical);
  return footprintInSite(siteHash(parts), parts.rest);
}

/**
 * The footprint from a site half already known (siteFootprint of the same
 * site) and urlParts().rest: one MD5 instead of two, for callers that keep
 * site halves, as the shepherd's inject does.
 */
export function footprintInSite(siteHalf: Buffer, rest: string): Buffer {
  const out = Buffer.allocUnsafe(16);
  siteHalf.copy(out, 0, 0, 8);
  // A hex digest and a hex write cost less than a Buffer digest and a copy.
  out.write(hash('md5', rest, 'hex'), 8, 8, 'hex');
  return out;
}

/** A leading `www.`, `www2.`, … label; the host must keep a dot after it goes. */
const WWW_LABEL = /^www\d*\.(?=[^.]*\.)/;

/** The indexer's URL key: the canonical URL without one leading `www`/`wwwN` host label. */
export function urlKey(canonical: string): string {
  const parts = urlParts(canonical);
  const www = WWW_LABEL.exec(parts.host);
  if (www === null) return canonical;
  const hostStart = parts.scheme.length + 3;
  return canonical.slice(0, hostStart) + canonical.slice(hostStart + www[0].length);
}

/** The 12-byte fingerprint: the first 96 bits of MD5 of urlKey(canonical). */
export function fingerprint(canonical: string): Buffer {
  return md5(urlKey(canonical)).subarray(0, 12);
}
