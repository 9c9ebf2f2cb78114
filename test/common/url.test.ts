/**
 * URL identity: canonical URLs, footprints, URL keys and fingerprints
 * (common/url.ts). Table cases say the rules; property tests check idempotence
 * and the footprint order over nasty generated URLs; golden vectors pin the
 * exact bytes, since changing them would re-key every stored URL.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import test from 'node:test';
import fc from 'fast-check';
import { isSherlockError } from '../../common/errors.js';
import {
  MAX_URL_LENGTH,
  canonicalUrl,
  fingerprint,
  footprint,
  footprintInSite,
  siteFootprint,
  urlKey,
  urlParts,
} from '../../common/url.js';

/** The canonical URL, or undefined when canonicalUrl rejects the input with SHERLOCK_BAD_URL. */
function tryCanonical(input: string, base?: string): string | undefined {
  try {
    return canonicalUrl(input, base);
  } catch (err) {
    if (isSherlockError(err, 'SHERLOCK_BAD_URL')) return undefined;
    throw err;
  }
}

function hex(buf: Buffer): string {
  return buf.toString('hex');
}

// --- canonicalUrl: the rules, one row each ---------------------------------

const CANONICAL: Array<[what: string, input: string, expected: string]> = [
  ['lower-cases scheme and host', 'HTTP://WWW.Example.COM/Path', 'http://www.example.com/Path'],
  ['adds the root path', 'http://example.com', 'http://example.com/'],
  ['maps an IDN host to punycode', 'http://bücher.example/', 'http://xn--bcher-kva.example/'],
  ['maps an upper-case IDN host to punycode', 'http://BÜCHER.example/', 'http://xn--bcher-kva.example/'],
  ['keeps a punycode host', 'http://xn--bcher-kva.example/', 'http://xn--bcher-kva.example/'],
  ['decodes escapes in the host', 'http://ex%41mple.com/', 'http://example.com/'],
  ['drops the default http port', 'http://example.com:80/', 'http://example.com/'],
  ['drops the default https port', 'https://example.com:443/', 'https://example.com/'],
  ['drops a zero-padded default port', 'http://example.com:0080/', 'http://example.com/'],
  ['drops an empty port', 'http://example.com:/', 'http://example.com/'],
  ['keeps a non-default port', 'http://example.com:8080/', 'http://example.com:8080/'],
  ['keeps the https port on http', 'http://example.com:443/', 'http://example.com:443/'],
  ['keeps the http port on https', 'https://example.com:80/', 'https://example.com:80/'],
  ['drops the fragment', 'http://example.com/a#section', 'http://example.com/a'],
  ['drops an empty fragment', 'http://example.com/a#', 'http://example.com/a'],
  ['resolves dot segments', 'http://example.com/a/./b/../c', 'http://example.com/a/c'],
  ['resolves .. above the root', 'http://example.com/../../a', 'http://example.com/a'],
  ['resolves escaped dot segments', 'http://example.com/a/b/%2E%2e/c/%2e/d', 'http://example.com/a/c/d'],
  ['resolves mixed dot segments', 'http://example.com/a/b/.%2E/c', 'http://example.com/a/c'],
  ['keeps dots that are not a segment', 'http://example.com/a/%2E%2E%2E/b..', 'http://example.com/a/.../b..'],
  ['keeps ..%2F as a name', 'http://example.com/%2E%2E%2Fetc', 'http://example.com/..%2Fetc'],
  ['decodes an escaped tilde', 'http://example.com/%7euser/', 'http://example.com/~user/'],
  ['decodes escaped unreserved characters', 'http://example.com/%41%7A%30%2D%2E%5F%7E', 'http://example.com/Az0-._~'],
  ['keeps an escaped slash, upper-cased', 'http://example.com/a%2fb', 'http://example.com/a%2Fb'],
  ['upper-cases hex of kept escapes', 'http://example.com/%c3%bc%3a%5b', 'http://example.com/%C3%BC%3A%5B'],
  ['encodes non-ASCII in the path as UTF-8', 'http://example.com/über', 'http://example.com/%C3%BCber'],
  ['keeps an escaped percent sign', 'http://example.com/100%25', 'http://example.com/100%25'],
  ['does not decode twice', 'http://example.com/%252E', 'http://example.com/%252E'],
  ['encodes a lone percent sign', 'http://example.com/a%zz%4', 'http://example.com/a%25zz%254'],
  ['encodes a lone percent before escapes', 'http://example.com/%%32%45', 'http://example.com/%252E'],
  ['encodes spaces', 'http://example.com/a b?c d', 'http://example.com/a%20b?c%20d'],
  ['turns backslashes into slashes', 'http://example.com\\a\\b', 'http://example.com/a/b'],
  ['keeps raw characters WHATWG leaves raw', "http://example.com/a|b^c'd", "http://example.com/a|b^c'd"],
  ['drops an empty query', 'http://example.com/a?', 'http://example.com/a'],
  ['drops an empty query before a fragment', 'http://example.com/a?#x', 'http://example.com/a'],
  ['keeps the query as it is', 'http://example.com/?b=2&a=1&a=1', 'http://example.com/?b=2&a=1&a=1'],
  ['keeps a query of one question mark', 'http://example.com/??', 'http://example.com/??'],
  ['normalises escapes in the query', 'http://example.com/?q=%7e%2b%2fx%41', 'http://example.com/?q=~%2B%2FxA'],
  ['encodes non-ASCII in the query as UTF-8', 'http://example.com/?q=ü', 'http://example.com/?q=%C3%BC'],
  ['keeps + in the query', 'http://example.com/?q=a+b', 'http://example.com/?q=a+b'],
  ['drops userinfo', 'http://user:secret@example.com/', 'http://example.com/'],
  ['drops a bare user', 'https://user@example.com:8443/x', 'https://example.com:8443/x'],
  ['keeps an IPv4 host', 'http://192.0.2.1/', 'http://192.0.2.1/'],
  ['normalises an IPv4 host', 'http://0x7f.1/', 'http://127.0.0.1/'],
  ['keeps an IPv6 host with its port', 'http://[2001:db8::1]:8080/', 'http://[2001:db8::1]:8080/'],
  ['compresses an IPv6 host', 'http://[0:0:0:0:0:0:0:1]:80/', 'http://[::1]/'],
  ['keeps a trailing dot in the host', 'http://example.com./', 'http://example.com./'],
  ['trims surrounding spaces', '  http://example.com/a  ', 'http://example.com/a'],
  ['keeps case in path and query', 'http://example.com/A/b?C=D', 'http://example.com/A/b?C=D'],
];

for (const [what, input, expected] of CANONICAL) {
  test(`canonicalUrl ${what}: ${input}`, () => {
    assert.equal(canonicalUrl(input), expected);
    assert.equal(canonicalUrl(expected), expected);
  });
}

const RELATIVE: Array<[input: string, base: string, expected: string]> = [
  ['c', 'http://example.com/a/b', 'http://example.com/a/c'],
  ['../c?x#y', 'http://example.com/a/b/', 'http://example.com/a/c?x'],
  ['/root', 'https://example.com:8443/a/b', 'https://example.com:8443/root'],
  ['//other.example/p', 'https://example.com/', 'https://other.example/p'],
  ['?q=1', 'http://example.com/a/b', 'http://example.com/a/b?q=1'],
  ['#frag', 'http://example.com/a?q', 'http://example.com/a?q'],
  ['', 'http://example.com/a?q#f', 'http://example.com/a?q'],
  ['http://Absolute.example/%7e', 'https://example.com/', 'http://absolute.example/~'],
  ['%7Ex/./y', 'http://example.com/dir/', 'http://example.com/dir/~x/y'],
];

for (const [input, base, expected] of RELATIVE) {
  test(`canonicalUrl resolves ${JSON.stringify(input)} against ${base}`, () => {
    assert.equal(canonicalUrl(input, base), expected);
  });
}

const REJECTED: Array<[what: string, input: string, base?: string]> = [
  ['ftp', 'ftp://example.com/file'],
  ['mailto', 'mailto:someone@example.com'],
  ['javascript', 'javascript:alert(1)'],
  ['javascript against an http base', 'javascript:void(0)', 'http://example.com/'],
  ['file', 'file:///etc/passwd'],
  ['data', 'data:text/plain,hello'],
  ['garbage', 'not a url'],
  ['the empty string', ''],
  ['a scheme without host', 'http://'],
  ['a relative reference without base', '/a/b'],
  ['a host with a space', 'http://exa mple.com/'],
  ['a bad IPv6 host', 'http://[::1/'],
  ['an out-of-range port', 'http://example.com:65536/'],
  ['an input over the limit', 'http://example.com/' + 'a'.repeat(MAX_URL_LENGTH)],
  ['a canonical URL over the limit', 'http://example.com/' + 'ü'.repeat(MAX_URL_LENGTH / 4)],
];

for (const [what, input, base] of REJECTED) {
  test(`canonicalUrl rejects ${what}`, () => {
    assert.throws(
      () => canonicalUrl(input, base),
      (err: unknown) => {
        assert.ok(isSherlockError(err, 'SHERLOCK_BAD_URL'), String(err));
        assert.ok(err.place.url !== undefined && input.startsWith(err.place.url.replace(/…$/, '')));
        return true;
      },
    );
  });
}

test('canonicalUrl accepts a URL of exactly the limit', () => {
  const url = 'http://example.com/' + 'a'.repeat(MAX_URL_LENGTH - 'http://example.com/'.length);
  assert.equal(canonicalUrl(url), url);
});

test('canonicalUrl names the URL in the error, shortened when long', () => {
  assert.throws(
    () => canonicalUrl('ftp://example.com/' + 'x'.repeat(1000)),
    (err: unknown) => {
      assert.ok(isSherlockError(err, 'SHERLOCK_BAD_URL'));
      assert.ok(err.place.url !== undefined && err.place.url.length < 300);
      assert.match(err.describe(), /^ftp:\/\/example\.com\/x+…: not an http or https URL/);
      return true;
    },
  );
});

// --- urlParts, footprint, urlKey, fingerprint: tables ------------------------

test('urlParts cuts a canonical URL into site and rest with the effective port', () => {
  assert.deepEqual(urlParts('http://example.com/a?b'), {
    scheme: 'http',
    host: 'example.com',
    port: 80,
    site: 'http://example.com',
    rest: '/a?b',
  });
  assert.deepEqual(urlParts('https://example.com/'), {
    scheme: 'https',
    host: 'example.com',
    port: 443,
    site: 'https://example.com',
    rest: '/',
  });
  assert.deepEqual(urlParts('https://[::1]:8443/x:y'), {
    scheme: 'https',
    host: '[::1]',
    port: 8443,
    site: 'https://[::1]:8443',
    rest: '/x:y',
  });
  assert.deepEqual(urlParts('http://[::1]/'), { scheme: 'http', host: '[::1]', port: 80, site: 'http://[::1]', rest: '/' });
});

test('footprint functions reject what is not a canonical URL shape', () => {
  for (const bad of ['ftp://example.com/', 'http://example.com', 'HTTP://example.com/', 'http:///', 'http://a.com:/', 'http://a.com:x/', 'http://a.com:70000/']) {
    assert.throws(() => footprint(bad), (err: unknown) => isSherlockError(err, 'SHERLOCK_BAD_URL'), bad);
  }
});

test('footprint separates http from https and default from explicit ports', () => {
  const http = footprint(canonicalUrl('http://example.com/'));
  const https = footprint(canonicalUrl('https://example.com/'));
  const http443 = footprint(canonicalUrl('http://example.com:443/'));
  assert.equal(http.length, 16);
  assert.notDeepEqual(http.subarray(0, 8), https.subarray(0, 8));
  assert.notDeepEqual(https.subarray(0, 8), http443.subarray(0, 8));
  assert.deepEqual(http.subarray(8), https.subarray(8));
  assert.deepEqual(siteFootprint('http://example.com/x'), http.subarray(0, 8));
});

const URL_KEYS: Array<[canonical: string, key: string]> = [
  ['http://www.example.com/a?b', 'http://example.com/a?b'],
  ['https://www2.example.com:8443/', 'https://example.com:8443/'],
  ['http://www10.example.co.uk/', 'http://example.co.uk/'],
  ['http://www.www.example.com/', 'http://www.example.com/'],
  ['http://example.com/www.x/', 'http://example.com/www.x/'],
  ['http://www.com/', 'http://www.com/'],
  ['http://www.localhost/', 'http://www.localhost/'],
  ['http://wwwx.example.com/', 'http://wwwx.example.com/'],
  ['http://www-1.example.com/', 'http://www-1.example.com/'],
  ['http://ww.example.com/', 'http://ww.example.com/'],
  ['http://sub.www.example.com/', 'http://sub.www.example.com/'],
  ['http://[::1]/', 'http://[::1]/'],
  ['http://127.0.0.1/', 'http://127.0.0.1/'],
];

for (const [canonical, key] of URL_KEYS) {
  test(`urlKey of ${canonical} is ${key}`, () => {
    assert.equal(urlKey(canonical), key);
  });
}

test('fingerprint is 12 bytes and joins www with the bare host only', () => {
  const fp = fingerprint('http://www.example.com/a');
  assert.equal(fp.length, 12);
  assert.deepEqual(fp, fingerprint('http://example.com/a'));
  assert.deepEqual(fingerprint('http://www3.example.com/a'), fp);
  assert.notDeepEqual(fingerprint('https://example.com/a'), fp);
  assert.notDeepEqual(fingerprint('http://example.com/a/'), fp);
});

// --- golden vectors ----------------------------------------------------------

/** Fixed forever; computed outside Node (Python hashlib) from the documented layout. */
const GOLDEN_FOOTPRINTS: Array<[input: string, port: number, protocol: number, host: string, rest: string, hex: string]> = [
  ['http://example.com/', 80, 1, 'example.com', '/', '5dcd7e3a78020f356666cd76f9695646'],
  ['HTTPS://Example.com:443', 443, 2, 'example.com', '/', 'ec4f442aee601ac36666cd76f9695646'],
  ['http://example.com:8080/a/b?c=d#e', 8080, 1, 'example.com', '/a/b?c=d', 'b7d8f4706d7bea82eee12339aa4bf5d6'],
  ['https://[0::1]:8443/x', 8443, 2, '[::1]', '/x', '5c860a5da942e756cc8755609ad61864'],
  ['http://bücher.example/ü', 80, 1, 'xn--bcher-kva.example', '/%C3%BC', 'cef3f1a9cc85abea0339587a313b33d0'],
  ['http://user@127.0.0.1:80/robots.txt', 80, 1, '127.0.0.1', '/robots.txt', '8ef2524ba0e7bc7a6ed9cec3561f3e5d'],
];

const GOLDEN_FINGERPRINTS: Array<[input: string, key: string, hex: string]> = [
  ['http://www.example.com/a?b', 'http://example.com/a?b', 'eb9cbb182b8d3e44e4776a04'],
  ['https://WWW2.example.org', 'https://example.org/', 'ef57f67c6e906397e7bb672c'],
  ['http://www.com/', 'http://www.com/', '4b09f07f70c062ee47a48039'],
  ['http://www.example.com:8080/#x', 'http://example.com:8080/', 'c688358336a5989bcac198f9'],
];

function md5(data: Buffer | string): Buffer {
  return createHash('md5').update(data).digest();
}

for (const [input, port, protocol, host, rest, expected] of GOLDEN_FOOTPRINTS) {
  test(`footprint golden vector: ${input}`, () => {
    // The documented layout, rebuilt byte by byte: u16 BE port, protocol byte, host; then path+query.
    const site = Buffer.concat([Buffer.from([port >> 8, port & 0xff, protocol]), Buffer.from(host, 'ascii')]);
    const independent = Buffer.concat([md5(site).subarray(0, 8), md5(Buffer.from(rest, 'ascii')).subarray(0, 8)]);
    assert.equal(hex(independent), expected);
    const canonical = canonicalUrl(input);
    assert.equal(hex(footprint(canonical)), expected);
    assert.equal(hex(siteFootprint(canonical)), expected.slice(0, 16));
    // The shepherd's way: the site half it keeps, and the path hashed alone.
    assert.equal(hex(footprintInSite(siteFootprint(canonical), urlParts(canonical).rest)), expected);
    assert.equal(hex(footprintInSite(Buffer.from(independent.subarray(0, 8)), rest)), expected);
  });
}

for (const [input, key, expected] of GOLDEN_FINGERPRINTS) {
  test(`fingerprint golden vector: ${input}`, () => {
    assert.equal(hex(md5(Buffer.from(key, 'ascii')).subarray(0, 12)), expected);
    const canonical = canonicalUrl(input);
    assert.equal(urlKey(canonical), key);
    assert.equal(hex(fingerprint(canonical)), expected);
  });
}

// --- property tests ----------------------------------------------------------

const RUNS = { numRuns: 2000 };

/** Pieces of paths and queries chosen to break canonicalisers. */
const nastyToken = fc.constantFrom(
  '.', '..', '%2e', '%2E', '.%2e', '%2e.', '%2f', '%2F', '%5c', '%7e', '%7E', '%25', '%', '%4', '%zz', '%41', '%61',
  '%c3%bc', '%C3', '%00', '%%32%45', '%252E', '%2E%2E%2F', 'ü', 'Ü', '日本', '💩', '\u0301', 'a', 'B', 'z9', '~', '-', '_',
  ' ', '\t', '\n', '\\', '|', "'", '"', '<', '>', '`', '{', '}', '^', '[', ']', ';', '=', '&', '+', '@', ':', '!', '$', '(', '*', ',',
);

const nastyPath = fc
  .array(fc.array(nastyToken, { maxLength: 4 }).map((t) => t.join('')), { maxLength: 6 })
  .map((segments) => '/' + segments.join('/'));

const nastyQuery = fc.option(
  fc.array(fc.oneof(nastyToken, fc.constantFrom('?', '/', '=', '&', '#')), { maxLength: 6 }).map((t) => '?' + t.join('')),
  { nil: '' },
);

const nastyFragment = fc.option(fc.array(nastyToken, { maxLength: 3 }).map((t) => '#' + t.join('')), { nil: '' });

const nastyHost = fc.constantFrom(
  'example.com', 'EXAMPLE.com', 'www.example.com', 'WWW2.Example.com', 'bücher.example', 'BÜCHER.example',
  'xn--bcher-kva.example', 'ex%41mple.com', '127.0.0.1', '0x7f.1', '2130706433', '[::1]', '[0:0::1]', '[2001:DB8::1]',
  'example.com.', 'a-b.c-d.example', '日本.example', 'xn--bcher-kva.example.', '%', 'a..b', '',
);

const nastyUrl = fc
  .tuple(
    fc.constantFrom('http', 'HTTP', 'https', 'HtTpS', 'ftp', 'javascript'),
    fc.constantFrom('//', '///', '/\\', ''),
    fc.constantFrom('', 'user@', 'u:p@', 'U%40x:@', ':@'),
    nastyHost,
    fc.constantFrom('', ':', ':80', ':443', ':8080', ':0080', ':65535', ':65536', ':x'),
    nastyPath,
    nastyQuery,
    nastyFragment,
  )
  .map(([scheme, slashes, user, host, port, path, query, fragment]) => `${scheme}:${slashes}${user}${host}${port}${path}${query}${fragment}`);

/** Any string after a known-good prefix, so every code unit reaches the path and query. */
const binaryTail = fc.string({ unit: 'binary', maxLength: 40 }).map((s) => 'http://example.com/' + s);

const relativeRef = fc
  .tuple(fc.constantFrom('', '/', '../', './', '//other.example/', '?', '#'), nastyPath, nastyQuery, nastyFragment)
  .map(([head, path, query, fragment]) => head + path.slice(1) + query + fragment);

const webUrl = fc.webUrl({
  withQueryParameters: true,
  withFragments: true,
  authoritySettings: { withIPv4: true, withIPv6: true, withIPv4Extended: true, withPort: true, withUserInfo: true },
});

/** What every canonical URL looks like, whatever went in. */
function assertCanonicalShape(c: string): void {
  assert.match(c, /^https?:\/\/[^/?#@\s]+\/[^#\s]*$/, c);
  assert.ok(/^[\x21-\x7e]*$/.test(c), `not printable ASCII: ${c}`);
  assert.ok(!/%(?![0-9A-F]{2})/.test(c), `lone % or lower-case hex: ${c}`);
  assert.ok(!/%(?:[46][1-9A-F]|[57][0-9A]|3[0-9]|2D|2E|5F|7E)/.test(c), `escaped unreserved character: ${c}`);
  assert.ok(!c.includes('?') || new URL(c).search !== '', `empty query kept: ${c}`);
  assert.ok(c.length <= MAX_URL_LENGTH);
}

function checkCanonical(input: string, base?: string): void {
  const c = tryCanonical(input, base);
  if (c === undefined) return;
  assertCanonicalShape(c);
  assert.equal(canonicalUrl(c), c, `not idempotent: ${JSON.stringify(input)}`);
  assert.equal(new URL(c).href, c, `does not re-parse to itself: ${JSON.stringify(input)}`);
}

test('canonicalUrl is idempotent and re-parses to itself on nasty URLs', () => {
  fc.assert(fc.property(nastyUrl, (input) => checkCanonical(input)), RUNS);
});

test('canonicalUrl is idempotent on arbitrary code units in path and query', () => {
  fc.assert(fc.property(binaryTail, (input) => checkCanonical(input)), RUNS);
});

test('canonicalUrl is idempotent on relative references resolved against nasty bases', () => {
  fc.assert(
    fc.property(nastyUrl, relativeRef, (base, input) => {
      const c = tryCanonical(input, base);
      if (c === undefined) return;
      assertCanonicalShape(c);
      assert.equal(canonicalUrl(c), c);
      // Resolving against the canonical base gives the same document.
      const canonicalBase = tryCanonical(base);
      if (canonicalBase !== undefined) assert.equal(canonicalUrl(input, canonicalBase), c);
    }),
    RUNS,
  );
});

test('canonicalUrl accepts every generated web URL and is idempotent on it', () => {
  fc.assert(
    fc.property(webUrl, (input) => {
      const c = canonicalUrl(input);
      assertCanonicalShape(c);
      assert.equal(canonicalUrl(c), c);
      assert.equal(new URL(c).href, c);
    }),
    RUNS,
  );
});

test('urlParts puts every canonical URL back together as site + rest', () => {
  fc.assert(
    fc.property(fc.oneof(nastyUrl, webUrl), (input) => {
      const c = tryCanonical(input);
      if (c === undefined) return;
      const parts = urlParts(c);
      assert.equal(parts.site + parts.rest, c);
      const url = new URL(c);
      assert.equal(parts.host, url.hostname);
      assert.equal(parts.port, url.port === '' ? (parts.scheme === 'http' ? 80 : 443) : Number(url.port));
    }),
    RUNS,
  );
});

const SITES = [
  'http://a.example',
  'https://a.example',
  'http://a.example:8080',
  'http://www.a.example',
  'http://b.example',
  'https://[::1]',
  'http://127.0.0.1:8000',
];

test('sorting footprints keeps each site contiguous', () => {
  const siteFootprints = SITES.map((site) => siteFootprint(canonicalUrl(site)));
  const url = fc.tuple(fc.nat(SITES.length - 1), nastyPath, nastyQuery);
  fc.assert(
    fc.property(fc.array(url, { minLength: 1, maxLength: 60 }), (urls) => {
      const entries: Array<{ site: number; fp: Buffer }> = [];
      for (const [site, path, query] of urls) {
        const c = tryCanonical(SITES[site]! + path + query);
        if (c !== undefined) entries.push({ site, fp: footprint(c) });
      }
      entries.sort((x, y) => Buffer.compare(x.fp, y.fp));
      const finished = new Set<number>();
      for (let i = 0; i < entries.length; i++) {
        const { site, fp } = entries[i]!;
        assert.deepEqual(fp.subarray(0, 8), siteFootprints[site]);
        const previous = i > 0 ? entries[i - 1]!.site : undefined;
        if (previous !== undefined && previous !== site) {
          finished.add(previous);
          assert.ok(!finished.has(site), `site ${SITES[site]} split in footprint order`);
        }
      }
    }),
    { numRuns: 300 },
  );
});

test('equal canonical URLs have equal footprints and different ones differ', () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(nastyUrl, fc.tuple(fc.constantFrom(...SITES), nastyPath).map(([s, p]) => s + p)), { maxLength: 80 }), (inputs) => {
      const byUrl = new Map<string, string>();
      const byFootprint = new Map<string, string>();
      for (const input of inputs) {
        const c = tryCanonical(input);
        if (c === undefined) continue;
        const fp = hex(footprint(c));
        if (byUrl.has(c)) assert.equal(byUrl.get(c), fp);
        if (byFootprint.has(fp)) assert.equal(byFootprint.get(fp), c);
        byUrl.set(c, fp);
        byFootprint.set(fp, c);
      }
      assert.equal(byUrl.size, byFootprint.size);
    }),
    { numRuns: 300 },
  );
});

test('fingerprint of www.host equals fingerprint of host for the same path and query', () => {
  const domain = fc.domain().filter((d) => !/^www\d*\./i.test(d) && tryCanonical(`http://${d}/`) !== undefined);
  fc.assert(
    fc.property(
      fc.constantFrom('http', 'https'),
      fc.constantFrom('www.', 'WWW.', 'www2.', 'www10.'),
      domain,
      fc.constantFrom('', ':8080'),
      nastyPath,
      nastyQuery,
      (scheme, www, host, port, path, query) => {
        const bare = tryCanonical(`${scheme}://${host}${port}${path}${query}`);
        const withWww = tryCanonical(`${scheme}://${www}${host}${port}${path}${query}`);
        if (bare === undefined || withWww === undefined) return;
        // Only www-stripping joins them: footprints (the shepherd's identity) still differ.
        assert.deepEqual(fingerprint(withWww), fingerprint(bare));
        assert.equal(urlKey(withWww), urlKey(bare));
        assert.notDeepEqual(footprint(withWww), footprint(bare));
      },
    ),
    RUNS,
  );
});
