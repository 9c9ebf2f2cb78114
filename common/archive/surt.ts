/**
 * SURT keys exactly as the Internet Archive's `surt` library makes them with
 * its defaults (spec/arc-cdx.md §3), which is what pywb, cdxj-indexer and IA's
 * CDX-Writer put in the CDX `N` field and what pywb computes for every lookup:
 * a key that differs by one byte is a miss. `../shared/testdata/arc/surt-cases.tsv`
 * is the test vector.
 *
 * Strings here are byte strings: one character per byte (a Latin-1 reading),
 * as the ARC reader hands URLs over, so raw non-ASCII bytes survive and are
 * escaped byte by byte, as the library does on bytes.
 *
 * The pipeline (§3 steps):
 *   1. `-` for an empty URL; anything starting with `filedesc` unchanged;
 *   2. pre-clean: trim whitespace, drop TAB/CR/LF, add `http://` when no
 *      scheme, cut a run of `http(s)://` prefixes to the last one;
 *   3. split with the RFC 2396 appendix B expression; a netloc's trailing `:`
 *      is dropped; a non-numeric or out-of-range port makes the URL
 *      uncanonicalisable (`surt` returns undefined; IA then keys the capture
 *      by the URL itself); `http:////host/x` takes its host from the path;
 *   4. Google-style: fragment dropped; host unescaped repeatedly, IDNA for
 *      non-ASCII, `..` → `.`, dots trimmed, numeric forms as a dotted quad,
 *      else lower-cased and escaped once; path unescaped repeatedly,
 *      normalised (dot segments, empty segments) when there is a host, escaped
 *      once; query and user info unescaped repeatedly and escaped once;
 *   5. IA: `www`/`wwwN.` stripped, user info dropped, default port (80 http,
 *      443 https) dropped, path lower-cased, ASP.NET session ids cut, one
 *      trailing slash cut, query session ids cut, query lower-cased, its
 *      arguments sorted, an empty query dropped;
 *   6. output without scheme: reversed host labels joined by `,`, `:port`, `)`,
 *      path, `?query`; without a host, `scheme:` and the path.
 *
 * IDNA uses Node's `domainToASCII` (UTS #46) where the library uses Python's
 * IDNA 2003 codec; the two agree except for characters the 2003 tables map
 * differently (such as `ß`), which real hosts in ARC files have not shown.
 */

import { domainToASCII } from 'node:url';

// Appendix B of RFC 2396 with the scheme limited to legal characters; groups: 2 scheme, 5 netloc, 6 path, 8 query.
const SPLIT = /^(([a-zA-Z][a-zA-Z0-9+.-]*):)?((\/\/([^/?#]*))?([^?#]*)(\?([^#]*))?)?(#(.*))?$/s;
const HAS_SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;

/** Characters `escapeOnce` leaves alone: ASCII letters, digits and this punctuation; `%`, `#`, SP, controls and bytes ≥ 0x80 are escaped. */
const SAFE = new Set(Array.from('!"$&\'()*+,-./:;<=>?@[\\]^_`{|}~'));
const ESCAPED: string[] = Array.from({ length: 256 }, (_, byte) => {
  const c = String.fromCharCode(byte);
  return /[A-Za-z0-9]/.test(c) || SAFE.has(c) ? c : '%' + byte.toString(16).toUpperCase().padStart(2, '0');
});
const NEEDS_ESCAPE = /[^A-Za-z0-9!"$&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/;

function escapeOnce(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) out += ESCAPED[s.charCodeAt(i)]!;
  return out;
}

const PERCENT_HEX = /%([0-9A-Fa-f]{2})/g;

/** Decodes `%XX` until nothing changes (the library's `unescapeRepeatedly`). */
function unescapeRepeatedly(s: string): string {
  let current = s;
  while (current.includes('%')) {
    const next = current.replace(PERCENT_HEX, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (next === current) break;
    current = next;
  }
  return current;
}

/** ASCII-only lower case, as Python's `bytes.lower()`: Latin-1 letters stay as they are. */
function asciiLower(s: string): string {
  return /[A-Z]/.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s;
}

// Well-formed UTF-8 sequences over a byte string; what Python's decode('utf-8', 'ignore') keeps.
const UTF8_SEQUENCE =
  /[\x00-\x7f]|[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2}/g;

/** A non-ASCII host as IDNA (punycode labels), or undefined when IDNA refuses it. */
function idna(host: string): string | undefined {
  const valid = (host.match(UTF8_SEQUENCE) ?? []).join('');
  const ascii = domainToASCII(Buffer.from(valid, 'latin1').toString('utf8'));
  return ascii === '' ? undefined : ascii;
}

/** One inet_aton part: 0x… hex, 0… octal, else decimal. */
function atonPart(part: string): number | undefined {
  if (/^0[xX][0-9a-fA-F]*$/.test(part)) return part.length === 2 ? 0 : parseInt(part.slice(2), 16);
  if (/^0[0-7]*$/.test(part)) return parseInt(part, 8);
  if (/^[1-9][0-9]*$/.test(part)) return Number(part);
  return undefined;
}

/** inet_aton(3): `a`, `a.b` (b 24 bits), `a.b.c` (c 16 bits), `a.b.c.d`; what the resolver makes of a numeric host. */
function inetAton(host: string): string | undefined {
  const parts = host.split('.').map(atonPart);
  if (parts.length > 4 || parts.some((p) => p === undefined)) return undefined;
  const values = parts as number[];
  const last = values.pop()!;
  if (values.some((v) => v > 255) || last >= 2 ** (8 * (4 - values.length))) return undefined;
  const n = values.reduce((acc, v, i) => acc + v * 2 ** (8 * (3 - i)), 0) + last;
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

const DECIMAL_IP = /^[1-9][0-9]*(\.[0-9]+)?(\.[0-9]+)?(\.[0-9]+)?$/;
const OCTAL_IP = /^0[0-7]*(\.[0-7]+)?(\.[0-7]+)?(\.[0-7]+)?$/;

/** A host written as a number (`3279880203`, `0300.0250.1.1`) as its dotted quad; all digits wrap to 32 bits, as the library does for old liveweb files. */
function numericHost(host: string): string | undefined {
  if (/^[0-9]+$/.test(host)) {
    const n = Number(BigInt(host) & 0xffffffffn);
    return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
  }
  return DECIMAL_IP.test(host) || OCTAL_IP.test(host) ? inetAton(host) : undefined;
}

function canonicalHost(raw: string): string {
  let host = unescapeRepeatedly(raw);
  if (/[^\x00-\x7f]/.test(host)) host = idna(host) ?? host;
  host = host.replaceAll('..', '.').replace(/^\.+|\.+$/g, '');
  // Escapes come out upper-case and are lower-cased with the rest, as the IA step lower-cases the escaped host.
  return numericHost(host) ?? asciiLower(escapeOnce(host));
}

/** Dot segments resolved, empty segments dropped, a trailing slash kept; a `..` above the root stays. */
function normalizePath(path: string): string {
  if (path === '') return '/';
  const kept: string[] = [];
  for (const segment of path.split('/').slice(1)) {
    if (segment === '.') continue;
    if (segment === '..' && kept.length > 0) kept.pop();
    else kept.push(segment);
  }
  if (kept.length === 0) return '/';
  const last = kept.pop()!;
  return '/' + kept.filter((s) => s !== '').map((s) => s + '/').join('') + last;
}

const PATH_SESSION_IDS = [/^(.*\/)(\((?:[a-z]\([0-9a-z]{24}\))+\)\/)([^?]+\.aspx.*)$/is, /^(.*\/)(\([0-9a-z]{24}\)\/)([^?]+\.aspx.*)$/is];

const QUERY_SESSION_IDS = [
  /^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$/is,
  /^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$/is,
  /^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$/is,
  /^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$/is,
  /^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$/is,
];

function stripPathSessionIds(path: string): string {
  let out = path;
  for (const pattern of PATH_SESSION_IDS) {
    const m = pattern.exec(out);
    if (m !== null) out = m[1]! + m[3]!;
  }
  return out;
}

/** Session parameters cut together with the `&` after them (which can leave a stray `&`, as the library does). */
function stripQuerySessionIds(query: string): string {
  let out = query;
  for (const pattern of QUERY_SESSION_IDS) {
    const m = pattern.exec(out);
    if (m !== null) out = m[1]! + (m[2] ?? '');
  }
  return out;
}

/** `&`-separated arguments sorted as Python sorts (name, value) tuples: a name alone before the same name with `=`. */
function sortQuery(query: string): string {
  if (query.length <= 1) return query;
  const args = query.split('&').map((arg) => {
    const eq = arg.indexOf('=');
    return eq === -1 ? { name: arg, value: undefined } : { name: arg.slice(0, eq), value: arg.slice(eq + 1) };
  });
  args.sort((a, b) => {
    if (a.name !== b.name) return a.name < b.name ? -1 : 1;
    if (a.value === b.value) return 0;
    if (a.value === undefined) return -1;
    if (b.value === undefined) return 1;
    return a.value < b.value ? -1 : 1;
  });
  return args.map((a) => (a.value === undefined ? a.name : `${a.name}=${a.value}`)).join('&');
}

function defaultPort(scheme: string): number {
  const lower = scheme.toLowerCase();
  return lower === 'http' ? 80 : lower === 'https' ? 443 : 0;
}

/** Parts of a URL as the library's `handyurl.parse` leaves them; undefined for a port that is not a number. */
interface Parts {
  scheme: string;
  host: string | undefined;
  port: number | undefined;
  path: string | undefined;
  query: string | undefined;
}

function split(input: string): Parts | undefined {
  let url = input.replace(/^[ \t\n\r\x0b\x0c]+|[ \t\n\r\x0b\x0c]+$/g, '').replace(/[\t\n\r]/g, '');
  if (url === '') return undefined;
  if (!HAS_SCHEME.test(url)) url = 'http://' + url;
  url = url.replace(/^(https?:\/\/)+/, '$1');
  const m = SPLIT.exec(url)!;
  const scheme = m[2]!;
  let netloc = m[5] ?? '';
  let path = m[6] || undefined;
  const query = m[8] || undefined;
  netloc = netloc.replace(/:+$/, '');
  // Python's urlsplit: host and port after the last `@`; an IPv6 literal in brackets.
  const hostinfo = netloc.slice(netloc.lastIndexOf('@') + 1);
  let hostname: string;
  let portText: string;
  const bracket = hostinfo.indexOf('[');
  if (bracket !== -1) {
    const inside = hostinfo.slice(bracket + 1);
    const close = inside.indexOf(']');
    hostname = close === -1 ? inside : inside.slice(0, close);
    const after = close === -1 ? '' : inside.slice(close + 1);
    portText = after.includes(':') ? after.slice(after.indexOf(':') + 1) : '';
  } else {
    const colon = hostinfo.indexOf(':');
    hostname = colon === -1 ? hostinfo : hostinfo.slice(0, colon);
    portText = colon === -1 ? '' : hostinfo.slice(colon + 1);
  }
  let port: number | undefined;
  if (portText !== '') {
    if (!/^[0-9]+$/.test(portText) || Number(portText) > 65535) return undefined;
    port = Number(portText) || undefined;
  }
  let host = hostname === '' ? undefined : asciiLower(hostname);
  if (scheme.startsWith('http') && host === undefined && path !== undefined) {
    // `http:////host/x`: the host is the first path segment.
    const rest = path.replace(/^\/+/, '');
    const slash = rest.indexOf('/');
    host = slash === -1 ? rest : rest.slice(0, slash);
    path = '/' + (slash === -1 ? '' : rest.slice(slash + 1));
  }
  return { scheme, host, port, path, query };
}

// `http(s)://host/path?query` needing none of the general steps: a host of
// letters, digits, `-` and `_` in dot-separated labels, with at least one
// character that is not a digit (so never a numeric host), no port or user
// info, no `%`, `#`, whitespace or `(` `)` (path session ids) anywhere, no
// empty or dot path segments, and a query without what the session id rules
// look for.
const PLAIN = /^(https?):\/\/([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)(\/[A-Za-z0-9!$&'*+,:;=@_~./-]*)(?:\?([A-Za-z0-9!$&'*+,:;=@_~./?-]+))?$/;
const NOT_NUMERIC = /[A-Za-z_-]/;
const PATH_TO_NORMALIZE = /\/\/|\/\.\.?(?:\/|$)/;
const QUERY_SESSION = /sid|sessionid|cfid/i;

/** The key of a plain URL (see PLAIN), or undefined when the general path must decide; where defined, the same key. */
export function plainSurt(url: string): string | undefined {
  const m = PLAIN.exec(url);
  if (m === null) return undefined;
  const rawHost = m[2]!;
  const rawPath = m[3]!;
  const rawQuery = m[4];
  if (!NOT_NUMERIC.test(rawHost) || PATH_TO_NORMALIZE.test(rawPath) || (rawQuery !== undefined && QUERY_SESSION.test(rawQuery))) return undefined;
  let path = asciiLower(rawPath);
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  let key = asciiLower(rawHost).replace(/^www\d*\./, '').split('.').reverse().join(',') + ')' + path;
  if (rawQuery !== undefined) key += '?' + sortQuery(asciiLower(rawQuery));
  return key;
}

/**
 * The SURT key of a URL given as a byte string; undefined when the library
 * would refuse it (a port that is not a number, an empty URL after cleaning).
 */
export function surt(url: string): string | undefined {
  return plainSurt(url) ?? generalSurt(url);
}

/** `surt` without the plain-URL shortcut: every step of the library. */
export function generalSurt(url: string): string | undefined {
  if (url === '') return '-';
  if (url.startsWith('filedesc')) return url;
  const parts = split(url);
  if (parts === undefined) return undefined;
  const { scheme } = parts;
  const host = parts.host === undefined || parts.host === '' ? undefined : canonicalHost(parts.host) || undefined;
  let path = parts.path === undefined ? undefined : unescapeRepeatedly(parts.path);
  if (host !== undefined) path = normalizePath(path ?? '');
  if (path !== undefined) path = stripPathSessionIds(asciiLower(escapeOnce(path)));
  if (path !== undefined && path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  let query = parts.query === undefined ? undefined : escapeOnce(unescapeRepeatedly(parts.query));
  if (query !== undefined) query = sortQuery(asciiLower(stripQuerySessionIds(query))) || undefined;

  let key: string;
  if (host === undefined) {
    key = scheme + ':';
  } else {
    const bare = scheme === 'dns' ? host : host.replace(/^www\d*\./, '');
    const port = parts.port === undefined || parts.port === defaultPort(scheme) ? '' : `:${parts.port}`;
    key = bare.split('.').reverse().join(',') + port + ')';
  }
  if (path !== undefined && path !== '') key += path;
  else if (query !== undefined) key += '/';
  if (query !== undefined) key += '?' + query;
  return key;
}
