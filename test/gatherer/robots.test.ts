/**
 * The robots.txt policy (gatherer/robots.ts) against RFC 9309: group choice
 * (§2.2.1), longest match and wildcards (§2.2.2, §2.2.3), percent-encoding
 * (§2.2.2), what each fetch result means (§2.3.1), size limit (§2.5), and the
 * robots bucket's round trip. The texts are real robots.txt files, the URLs
 * canonical ones from common/url.
 */

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import test from 'node:test';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { BUCKET_TYPE, BucketObject, decodeBucket, encodeBucket, type Bucket } from '../../common/bucket/bucket.js';
import { SherlockError } from '../../common/errors.js';
import { canonicalUrl } from '../../common/url.js';
import { CODE, httpErrorCode, httpOutcome, type Outcome } from '../../gatherer/outcome.js';
import {
  DEFAULT_EXPIRE_MS,
  MATCH_BUDGET,
  MAX_ROBOTS_SIZE,
  RuleMatcher,
  interpretRobots,
  isExpired,
  policyFromBucket,
  robotsBucket,
  robotsUrl,
  type RobotsDecision,
  type RobotsOptions,
  type RobotsPolicy,
  type RobotsResponse,
} from '../../gatherer/robots.js';

// The matcher robots.ts replaced, as the oracle its verdicts must agree with.
const robotsParser = createRequire(import.meta.url)('robots-parser') as typeof import('robots-parser').default;

const AGENT = 'sherlock/0.1 (+https://x.invalid/bot)';
const SITE = 'https://example.com';
const ROBOTS = robotsUrl(SITE);
const NOW = Date.UTC(2024, 0, 15, 12, 0, 0, 250);
const HOUR = 3_600_000;
const OPTS: RobotsOptions = { url: ROBOTS, userAgent: AGENT, now: NOW, errorRetryMs: HOUR };

function response(status: number | undefined, body: string | Buffer = '', extra: Partial<RobotsResponse> = {}): RobotsResponse {
  return {
    outcome: status === undefined ? 'timeout' : httpOutcome(status),
    ...(status === undefined ? {} : { status }),
    headers: [['Content-Type', 'text/plain']],
    body: Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'),
    truncated: false,
    ...extra,
  };
}

function policyOf(decision: RobotsDecision): RobotsPolicy {
  assert.equal(decision.kind, 'policy', `a policy expected, got ${JSON.stringify(decision)}`);
  return (decision as { kind: 'policy'; policy: RobotsPolicy }).policy;
}

/** The policy of a robots.txt served with 200. */
function rules(text: string | Buffer, opts: Partial<RobotsOptions> = {}, extra: Partial<RobotsResponse> = {}): RobotsPolicy {
  const policy = policyOf(interpretRobots(response(200, text, extra), { ...OPTS, ...opts }, 0));
  assert.equal(policy.kind, 'rules');
  return policy;
}

/** allowed() for each path (canonicalised on our site), as a record so a failure shows every answer. */
function verdicts(policy: RobotsPolicy, paths: string[]): Record<string, boolean> {
  return Object.fromEntries(paths.map((path) => [path, policy.allowed(canonicalUrl(SITE + path))]));
}

function expectVerdicts(policy: RobotsPolicy, expected: Record<string, boolean>): void {
  assert.deepEqual(verdicts(policy, Object.keys(expected)), expected);
}

// ---------------------------------------------------------------- groups (§2.2.1)

test('our group is found by product token, case-insensitively (User-agent: SHERLOCK)', () => {
  const policy = rules(['User-agent: *', 'Disallow: /', '', 'User-agent: SHERLOCK', 'Disallow: /private/', ''].join('\n'));
  expectVerdicts(policy, { '/': true, '/public/page': true, '/private/': false, '/private/x': false });
});

test('the product token is the User-Agent header up to "/" or a space; a user-agent line is read the same way', () => {
  const text = ['User-agent: sherlock (our bot)', 'Disallow: /ours', '', 'User-agent: *', 'Disallow: /'].join('\n');
  expectVerdicts(rules(text, { userAgent: 'Sherlock 0.1' }), { '/ours': false, '/other': true });
  expectVerdicts(rules(text, { userAgent: 'sherlockbot/1.0' }), { '/ours': false, '/other': false });
});

test('a group for another bot does not apply to us', () => {
  const text = ['User-agent: ExampleBadBot', 'Disallow: /', '', 'User-agent: *', 'Disallow: /tmp/', ''].join('\n');
  expectVerdicts(rules(text), { '/': true, '/index.html': true, '/tmp/': false, '/tmp/x': false });
  expectVerdicts(rules('User-agent: ExampleBadBot\nDisallow: /\n'), { '/': true, '/anything': true });
});

test('groups naming us are combined; user-agent lines in a row share one group', () => {
  const text = [
    'User-agent: sherlock',
    'Disallow: /a',
    '',
    'User-agent: otherbot',
    'User-agent: sherlock',
    'Disallow: /b',
    '',
    'User-agent: *',
    'Disallow: /c',
  ].join('\n');
  expectVerdicts(rules(text), { '/a': false, '/b': false, '/c': true });
});

test('a group of ours without rules allows everything, even at the end of the file (RFC 9309 §2.1)', () => {
  expectVerdicts(rules('User-agent: *\nDisallow: /\n\nUser-agent: sherlock\n'), { '/': true, '/x': true });
  expectVerdicts(rules('User-agent: sherlock\nSitemap: /s.xml\nUser-agent: *\nDisallow: /\n'), { '/x': true });
});

test('rules before any user-agent line are ignored', () => {
  expectVerdicts(rules('Disallow: /\nUser-agent: *\nDisallow: /x\n'), { '/': true, '/x': false });
});

// ---------------------------------------------------------------- matching (§2.2.2, §2.2.3)

test('Disallow matches a path prefix, case-sensitively', () => {
  const policy = rules('User-agent: *\nDisallow: /fish\n');
  expectVerdicts(policy, {
    '/fish': false,
    '/fish.html': false,
    '/fish/salmon.html': false,
    '/fishheads/yummy.html': false,
    '/fish.php?id=anything': false,
    '/Fish.asp': true,
    '/catfish': true,
    '/?id=fish': true,
  });
});

test('an empty Disallow allows everything', () => {
  expectVerdicts(rules('User-agent: *\nDisallow:\n'), { '/': true, '/x': true });
});

test('the longest match wins, Allow wins a tie (RFC 9309 §2.2.2 and the §5.2 example)', () => {
  const text = [
    'User-agent: sherlock',
    'Allow: /example/page/',
    'Disallow: /example/page/disallowed.gif',
    'Disallow: /shop',
    'Allow: /shop/public',
    'Disallow: /tie',
    'Allow: /tie',
    'Allow: /a',
    'Disallow: /a*',
  ].join('\n');
  expectVerdicts(rules(text), {
    '/example/page/': true,
    '/example/page/other.gif': true,
    '/example/page/disallowed.gif': false,
    '/shop': false,
    '/shop/cart': false,
    '/shop/public': true,
    '/shop/public/list': true,
    '/tie': true,
    '/tied': true,
    // "/a*" has more octets than "/a": it wins wherever both match.
    '/a': false,
    '/ab': false,
  });
});

test('* matches any run of characters and a final $ anchors the end (RFC 9309 §2.2.3)', () => {
  const text = [
    'User-agent: *',
    'Disallow: /*.gif$',
    'Disallow: /private*/',
    'Disallow: /*?session=',
    'Disallow: /exact$',
    'Disallow: /mid$dle',
  ].join('\n');
  expectVerdicts(rules(text), {
    '/a.gif': false,
    '/dir/b.gif': false,
    '/a.gif?size=2': true,
    '/a.gifs': true,
    '/private1/x': false,
    '/private/': false,
    '/privatex': true,
    '/page?session=1': false,
    '/page?x=1&session=2': true,
    '/exact': false,
    '/exact/': true,
    '/exactly': true,
    // A $ inside a pattern is a character.
    '/mid$dle': false,
    '/middle': true,
  });
});

test('percent-encoding is compared in one normal form (RFC 9309 §2.2.2, §2.2.3)', () => {
  const text = [
    'User-agent: *',
    'Disallow: /%62az', // escaped unreserved "b": the same as /baz
    'Disallow: /ツ', // non-ASCII: its UTF-8 escapes
    'Disallow: /enc%e3%83%84', // lower-case hex
    'Disallow: /a%2fb', // an escaped reserved "/" stays escaped
    'Disallow: /pipe|x', // raw in URLs, escaped by robots-parser in patterns
    "Disallow: /q?x='y'", // escaped by the WHATWG parser in queries
    'Disallow: /star-%2A.html', // a literal "*" (§2.2.3)
    'Disallow: /dollar-%24', // a literal "$" (§2.2.3)
    'Disallow: /100%', // a lone "%"
  ].join('\n');
  expectVerdicts(rules(text), {
    '/baz': false,
    '/%62azaar': false,
    '/ツ': false,
    '/%E3%83%84/x': false,
    '/encツ': false,
    '/a%2Fb': false,
    '/a%2fb': false,
    '/a/b': true,
    '/pipe|x': false,
    '/pipe%7Cx': false,
    "/q?x='y'": false,
    '/q?x=y': true,
    '/star-*.html': false,
    '/star-%2A.html': false,
    '/star-x.html': true,
    '/dollar-$': false,
    '/dollar-x': true,
    '/100%': false,
    '/100%25': false,
    '/100': true,
  });
});

test('/robots.txt itself is always allowed (RFC 9309 §2.2.2)', () => {
  const policy = rules('User-agent: *\nDisallow: /\n');
  expectVerdicts(policy, { '/robots.txt': true, '/robots.txt.bak': false, '/': false });
  const shut = policyOf(interpretRobots(response(503), OPTS, 0));
  expectVerdicts(shut, { '/robots.txt': true, '/': false });
});

test('a 200 response that is an HTML page is parsed and allows everything', () => {
  const html = '<!DOCTYPE html>\n<html><head><title>Not found</title></head>\n<body><p>Sorry: no such page</p></body></html>\n';
  const policy = rules(html);
  expectVerdicts(policy, { '/': true, '/x': true });
  assert.equal(policy.text, html);
});

// ---------------------------------------------------------------- other records

test('Crawl-delay: 2 in our group is 2000 ms; fractions are kept; junk is ignored', () => {
  assert.equal(rules('User-agent: sherlock\nCrawl-delay: 2\nDisallow: /x\n').crawlDelayMs, 2000);
  assert.equal(rules('User-agent: *\nCrawl-delay: 0.5\n').crawlDelayMs, 500);
  for (const junk of ['soon', '', '-3', '0', 'Infinity']) {
    assert.equal(rules(`User-agent: *\nCrawl-delay: ${junk}\n`).crawlDelayMs, undefined, junk);
  }
  assert.equal(rules('User-agent: *\nDisallow: /x\n').crawlDelayMs, undefined);
});

test('Crawl-delay comes from the * group when ours has none', () => {
  assert.equal(rules('User-agent: *\nCrawl-delay: 5\n').crawlDelayMs, 5000);
  assert.equal(rules('User-agent: sherlock\nDisallow: /x\n\nUser-agent: *\nCrawl-delay: 5\n').crawlDelayMs, 5000);
  assert.equal(rules('User-agent: sherlock\nCrawl-delay: 1\n\nUser-agent: *\nCrawl-delay: 5\n').crawlDelayMs, 1000);
  assert.equal(rules('User-agent: ExampleBadBot\nCrawl-delay: 30\n').crawlDelayMs, undefined);
});

test('Sitemap lines are resolved against the robots URL, canonicalised and deduplicated; bad ones dropped', () => {
  const text = [
    'Sitemap: https://example.com/sitemap.xml',
    'User-agent: *',
    'Disallow: /x',
    'Sitemap: /relative/map.xml',
    'sitemap: HTTPS://EXAMPLE.COM:443/sitemap.xml',
    'Sitemap: ftp://example.com/other.xml',
    'Sitemap: http://[bad/',
    'Sitemap: https://cdn.example.net/maps/news%7eall.xml # comment',
  ].join('\n');
  assert.deepEqual(rules(text).sitemaps, [
    'https://example.com/sitemap.xml',
    'https://example.com/relative/map.xml',
    'https://cdn.example.net/maps/news~all.xml',
  ]);
  // After a redirect the file's own URL is the base; without one, relative lines cannot be resolved.
  assert.deepEqual(rules('Sitemap: map.xml\n', { url: 'https://www.example.com/robots.txt' }).sitemaps, ['https://www.example.com/map.xml']);
  assert.deepEqual(rules('Sitemap: map.xml\nSitemap: http://a.example/m.xml\n', { url: undefined }).sitemaps, ['http://a.example/m.xml']);
});

// ---------------------------------------------------------------- fetch results (§2.3.1)

test('2xx: rules, trusted for expireMs (24 hours by default, RFC 9309 §2.4)', () => {
  const policy = rules('User-agent: *\nDisallow: /x\n');
  assert.equal(policy.fetchedAt, NOW);
  assert.equal(policy.expiresAt, NOW + DEFAULT_EXPIRE_MS);
  assert.equal(rules('', { expireMs: HOUR }).expiresAt, NOW + HOUR);
  const partial = policyOf(interpretRobots(response(206, 'User-agent: *\nDisallow: /\n'), OPTS, 0));
  expectVerdicts(partial, { '/x': false });
});

test('4xx (404, 401, 403, 410): unavailable, so everything is allowed (RFC 9309 §2.3.1.3)', () => {
  for (const status of [400, 401, 403, 404, 410, 451]) {
    const policy = policyOf(interpretRobots(response(status, 'User-agent: *\nDisallow: /\n'), OPTS, 0));
    assert.equal(policy.kind, 'allow-all', String(status));
    assert.equal(policy.expiresAt, NOW + DEFAULT_EXPIRE_MS);
    assert.deepEqual(policy.sitemaps, []);
    assert.equal(policy.text, undefined);
    expectVerdicts(policy, { '/': true, '/private': true });
  }
});

test('5xx, 429 and other statuses: unreachable, so nothing is allowed until now + errorRetryMs (RFC 9309 §2.3.1.4)', () => {
  for (const status of [500, 502, 503, 599, 429, 408, 100]) {
    const policy = policyOf(interpretRobots(response(status, 'User-agent: *\nAllow: /\n'), OPTS, 0));
    assert.equal(policy.kind, 'disallow-all', String(status));
    assert.equal(policy.fetchedAt, NOW);
    assert.equal(policy.expiresAt, NOW + HOUR);
    expectVerdicts(policy, { '/': false, '/page': false });
    assert.equal(isExpired(policy, NOW + HOUR - 1), false);
    assert.equal(isExpired(policy, NOW + HOUR), true);
  }
});

test('timeout, DNS, connect and TLS failures: unreachable, nothing allowed', () => {
  const failures: Array<[Outcome, number | undefined]> = [
    ['timeout', undefined],
    ['dns', undefined],
    ['connect', undefined],
    ['tls', undefined],
    // The header came, then the body timed out: a partial file is no answer.
    ['timeout', 200],
  ];
  for (const [outcome, status] of failures) {
    const policy = policyOf(interpretRobots(response(status, 'User-agent: *\nAllow: /\n', { outcome }), OPTS, 0));
    assert.equal(policy.kind, 'disallow-all', outcome);
    assert.equal(policy.expiresAt, NOW + HOUR);
  }
});

test('3xx: followed for 5 hops, then unavailable (RFC 9309 §2.3.1.2)', () => {
  const location = 'https://www.example.com/robots.txt';
  for (let hops = 0; hops < 5; hops++) {
    assert.deepEqual(interpretRobots(response(301, '', { location }), OPTS, hops), { kind: 'redirect', location });
  }
  const policy = policyOf(interpretRobots(response(301, '', { location }), OPTS, 5));
  assert.equal(policy.kind, 'allow-all');
  assert.equal(policyOf(interpretRobots(response(302), OPTS, 0)).kind, 'allow-all');
});

// ---------------------------------------------------------------- the body

test('a gzip, deflate or brotli body is decoded; a corrupt one counts as unreachable', () => {
  const text = 'User-agent: *\nDisallow: /secret\n';
  const encoded: Array<[string, Buffer]> = [
    ['gzip', gzipSync(text)],
    ['x-gzip', gzipSync(text)],
    ['deflate', deflateSync(text)],
    ['deflate', deflateRawSync(text)],
    ['br', brotliCompressSync(text)],
    ['gzip, identity', gzipSync(text)],
  ];
  for (const [coding, body] of encoded) {
    const policy = rules(body, {}, { headers: [['Content-Encoding', coding]] });
    assert.equal(policy.text, text, coding);
    expectVerdicts(policy, { '/secret/x': false, '/open': true });
  }
  const twice = rules(gzipSync(brotliCompressSync(text)), {}, { headers: [['content-encoding', 'br'], ['content-encoding', 'gzip']] });
  assert.equal(twice.text, text);
  for (const [coding, body] of [['gzip', Buffer.from(text)], ['compress', Buffer.from(text)]] as const) {
    const policy = policyOf(interpretRobots(response(200, body, { headers: [['content-encoding', coding]] }), OPTS, 0));
    assert.equal(policy.kind, 'disallow-all', coding);
    assert.equal(policy.expiresAt, NOW + HOUR);
  }
});

/** A robots.txt of about `size` bytes: a rule at the start, numbered comment lines, a rule at the end. */
function bigRobots(size: number): string {
  const lines = ['User-agent: *', 'Disallow: /early'];
  for (let length = 0, n = 0; length < size; n++) {
    const line = `# ${n} ${(n * 7919).toString(36)} filler between the rules`;
    lines.push(line);
    length += line.length + 1;
  }
  return `${lines.join('\n')}\nDisallow: /late\n`;
}

test('a 600 KiB file: rules within the first 512 KiB work, later ones are ignored (RFC 9309 §2.5)', () => {
  const text = bigRobots(600 * 1024);
  for (const [name, body, headers] of [
    ['plain', Buffer.from(text), []],
    ['gzip', gzipSync(text), [['Content-Encoding', 'gzip']]],
    ['br', brotliCompressSync(text), [['Content-Encoding', 'br']]],
  ] as Array<[string, Buffer, [string, string][]]>) {
    const policy = rules(body, {}, { headers });
    expectVerdicts(policy, { '/early': false, '/late': true, '/other': true });
    assert.ok(policy.text !== undefined && policy.text.length <= MAX_ROBOTS_SIZE && policy.text.length > 500 * 1024, name);
    assert.ok(policy.text.endsWith('\n'), `${name}: ends at a line end`);
  }
});

test('a gzip bomb stops at the size limit', () => {
  const bomb = gzipSync(Buffer.alloc(16 * 1024 * 1024, 'User-agent: *\nDisallow: /\n'));
  const policy = rules(bomb, {}, { headers: [['Content-Encoding', 'gzip']] });
  assert.ok(policy.text !== undefined && policy.text.length <= MAX_ROBOTS_SIZE && policy.text.length > 500 * 1024);
  expectVerdicts(policy, { '/x': false });
});

test('the line cut by the size limit or by the fetcher is dropped, not half applied', () => {
  const head = 'User-agent: *\n';
  const filler = '#'.repeat(MAX_ROBOTS_SIZE - head.length - 'Disallow: /a'.length) + '\n';
  // "Disallow: /abc" ends past the limit; cut, it would read "Disallow: /a".
  const policy = rules(`${head}${filler}Disallow: /abc\n`);
  expectVerdicts(policy, { '/axe': true, '/abc': true });
  const truncated = rules('User-agent: *\nDisallow: /ok\nDisallow: /pri', {}, { truncated: true });
  expectVerdicts(truncated, { '/ok': false, '/prize': true, '/private': true });
  assert.equal(truncated.text, 'User-agent: *\nDisallow: /ok\n');
  // A complete file without a final line end keeps its last line.
  expectVerdicts(rules('User-agent: *\nDisallow: /pri'), { '/prize': false });
});

test('a UTF-8 BOM at the start is skipped', () => {
  const bytes = Buffer.concat([Buffer.of(0xef, 0xbb, 0xbf), Buffer.from('User-agent: *\nDisallow: /\n')]);
  expectVerdicts(rules(bytes), { '/x': false });
});

test('CRLF and CR line ends', () => {
  const expected = { '/a/x': false, '/a/b': true, '/c': true };
  expectVerdicts(rules('User-agent: *\r\nDisallow: /a\r\nAllow: /a/b\r\n'), expected);
  expectVerdicts(rules('User-agent: *\rDisallow: /a\rAllow: /a/b\r'), expected);
});

// ---------------------------------------------------------------- the bucket

const PATHS = ['/', '/robots.txt', '/a', '/a/b', '/private/x', '/x.gif', '/x.gif?y', '/baz', '/ツ', '/shop/public', '/q?session=1'];

const ROUND_TRIP_TEXT = [
  'User-agent: *',
  'Disallow: /private/',
  'Crawl-delay: 3',
  '',
  'User-agent: Sherlock',
  'Disallow: /a',
  'Allow: /a/b',
  'Disallow: /*.gif$',
  'Disallow: /%62az',
  'Disallow: /*?session=',
  '',
  'Sitemap: /sitemap.xml',
].join('\n');

function roundTrip(bucket: Bucket): Bucket {
  return decodeBucket(BUCKET_TYPE.V33_DEFLATE, encodeBucket(BUCKET_TYPE.V33_DEFLATE, bucket));
}

function assertSamePolicy(after: RobotsPolicy, before: RobotsPolicy): void {
  assert.equal(after.kind, before.kind);
  assert.equal(after.fetchedAt, Math.floor(before.fetchedAt / 1000) * 1000);
  assert.equal(after.expiresAt, Math.floor(before.expiresAt / 1000) * 1000);
  assert.equal(after.crawlDelayMs, before.crawlDelayMs);
  assert.deepEqual(after.sitemaps, before.sitemaps);
  assert.equal(after.text, before.text);
  assert.deepEqual(verdicts(after, PATHS), verdicts(before, PATHS));
}

test('robotsBucket writes the header and body attributes', () => {
  const policy = rules(ROUND_TRIP_TEXT);
  const bucket = robotsBucket(ROBOTS, policy, { status: 200, code: CODE.ok, message: 'ok' });
  const header = Object.fromEntries(bucket.header.items.map((item) => [item.name, item.value?.toString()]));
  assert.deepEqual(header, {
    U: ROBOTS,
    D: String(Math.floor(NOW / 1000)),
    H: '200',
    K: 'robots',
    V: String(Math.floor((NOW + DEFAULT_EXPIRE_MS) / 1000)),
    Q: 'rules',
  });
  assert.equal(bucket.body.string('B'), ROUND_TRIP_TEXT);
  assert.deepEqual(bucket.body.all('s').map(String), ['https://example.com/sitemap.xml']);

  const missing = policyOf(interpretRobots(response(404), OPTS, 0));
  const failed = robotsBucket(ROBOTS, missing, { status: 404, code: httpErrorCode(404), message: 'Not Found' });
  assert.equal(failed.header.string('!'), '2404 Not Found');
  assert.equal(failed.header.string('Q'), 'allow-all');
  assert.equal(failed.body.items.length, 0);

  const down = policyOf(interpretRobots(response(undefined), OPTS, 0));
  const timedOut = robotsBucket(ROBOTS, down, { code: CODE.timeout, message: 'timed out' });
  assert.equal(timedOut.header.string('H'), undefined);
  assert.equal(timedOut.header.string('!'), '1302 timed out');
  assert.equal(timedOut.header.string('V'), String(Math.floor((NOW + HOUR) / 1000)));
});

test('policyFromBucket gives back the policy: same answers on a list of paths', () => {
  const policies: Array<[RobotsPolicy, { status?: number; code: number; message: string }]> = [
    [rules(ROUND_TRIP_TEXT), { status: 200, code: CODE.ok, message: 'ok' }],
    [rules(''), { status: 200, code: CODE.ok, message: 'ok' }],
    [policyOf(interpretRobots(response(404), OPTS, 0)), { status: 404, code: 2404, message: 'Not Found' }],
    [policyOf(interpretRobots(response(503), OPTS, 0)), { status: 503, code: 1503, message: 'Service Unavailable' }],
  ];
  for (const [policy, fetched] of policies) {
    const rebuilt = policyFromBucket(roundTrip(robotsBucket(ROBOTS, policy, fetched)), AGENT);
    assertSamePolicy(rebuilt, policy);
  }
  const ours = policyFromBucket(robotsBucket(ROBOTS, rules(ROUND_TRIP_TEXT), { status: 200, code: 0, message: 'ok' }), AGENT);
  assert.equal(ours.crawlDelayMs, 3000);
  expectVerdicts(ours, { '/a/x': false, '/a/b': true, '/private/x': true, '/baz': false });
  // Another agent reading the same bucket gets the * group.
  const theirs = policyFromBucket(robotsBucket(ROBOTS, rules(ROUND_TRIP_TEXT), { status: 200, code: 0, message: 'ok' }), 'otherbot/2');
  expectVerdicts(theirs, { '/a/x': true, '/private/x': false });
});

test('policyFromBucket answers as the policy on generated paths', () => {
  const policy = rules(ROUND_TRIP_TEXT);
  const rebuilt = policyFromBucket(roundTrip(robotsBucket(ROBOTS, policy, { status: 200, code: 0, message: 'ok' })), AGENT);
  fc.assert(
    fc.property(fc.webPath(), fc.webQueryParameters(), (path, query) => {
      const url = canonicalUrl(`${SITE}/${path.replace(/^\/+/, '')}${query === '' ? '' : `?${query}`}`);
      assert.equal(rebuilt.allowed(url), policy.allowed(url), url);
    }),
    { numRuns: 500 },
  );
});

/** The bucket of a rules policy with one header attribute replaced (undefined: removed), or the body replaced. */
function damaged(name: string, value: string | undefined, body?: BucketObject): Bucket {
  const good = robotsBucket(ROBOTS, rules(ROUND_TRIP_TEXT), { status: 200, code: CODE.ok, message: 'ok' });
  const header = new BucketObject(good.header.items.filter((item) => item.name !== name));
  if (value !== undefined) header.add(name, value);
  return { header, body: body ?? good.body };
}

test('corrupted robots buckets throw SHERLOCK_CORRUPT_BUCKET naming the attribute', () => {
  const cases: Array<[string, Bucket, RegExp]> = [
    ['U missing', damaged('U', undefined), /attribute U/],
    ['D missing', damaged('D', undefined), /attribute D missing/],
    ['V missing', damaged('V', undefined), /attribute V missing/],
    ['Q missing', damaged('Q', undefined), /attribute Q/],
    ['K missing', damaged('K', undefined), /attribute K/],
    ['K another kind', damaged('K', 'page'), /attribute K is "page"/],
    ['D not a number', damaged('D', '17e8'), /attribute D is "17e8"/],
    ['D negative', damaged('D', '-5'), /attribute D is "-5"/],
    ['V empty', damaged('V', ''), /attribute V is ""/],
    ['V huge', damaged('V', '9'.repeat(40)), /attribute V/],
    ['Q unknown', damaged('Q', 'maybe'), /attribute Q is "maybe"/],
    ['B missing', damaged('Q', 'rules', new BucketObject()), /attribute B/],
  ];
  for (const [what, bucket, message] of cases) {
    assert.throws(
      () => policyFromBucket(bucket, AGENT),
      (err: unknown) => {
        assert.ok(err instanceof SherlockError, what);
        assert.equal(err.code, 'SHERLOCK_CORRUPT_BUCKET', what);
        assert.match(err.message, message, what);
        return true;
      },
    );
  }
});

test('robotsUrl and isExpired', () => {
  assert.equal(robotsUrl('http://example.com:8080'), 'http://example.com:8080/robots.txt');
  const policy = rules('', { expireMs: 1000 });
  assert.equal(isExpired(policy, NOW + 999), false);
  assert.equal(isExpired(policy, NOW + 1000), true);
});

// ---------------------------------------------------------------- matching: robots-parser's answers, bounded work

test("the matcher agrees with robots-parser's (Google's) on random rules and paths", () => {
  // Characters that encodeURI and the WHATWG parser leave alone, so both matchers see the same strings; `*` and `$`
  // anywhere. Half the cases use two letters only, where pieces overlap and repeat most.
  const text = (chars: string, max: number) => fc.array(fc.constantFrom(...chars), { maxLength: max }).map((a) => a.join(''));
  const piece = fc.oneof(text('ab*$', 5), text('ab/?=*$-', 6));
  const rule = fc.record({ pattern: piece.map((p) => `/${p}`), allow: fc.boolean() });
  const path = fc.oneof(text('ab', 5), text('ab/?=*$-', 10));
  fc.assert(
    fc.property(fc.array(rule, { maxLength: 8 }), fc.array(path, { minLength: 1, maxLength: 6 }), (rules, paths) => {
      const text = ['User-agent: *', ...rules.map((r) => `${r.allow ? 'Allow' : 'Disallow'}: ${r.pattern}`)].join('\n');
      const oracle = robotsParser('http://robots.invalid/robots.txt', text);
      const matcher = new RuleMatcher(rules);
      for (const raw of paths) {
        const url = new URL(`http://robots.invalid/${raw}`);
        const path = url.pathname + url.search;
        const verdict = matcher.verdict(path);
        assert.equal(verdict.overBudget, false);
        assert.equal(verdict.allowed, oracle.isAllowed(url.href), `${path} against ${JSON.stringify(rules)}`);
      }
    }),
    // A piece that could match before the last one ends (/*a*a$ on /ba) and the longest rule losing to a shorter Allow.
    { numRuns: 4000, examples: [[[{ pattern: '/*a*a$', allow: false }], ['ba', 'baa']], [[{ pattern: '/a*', allow: false }, { pattern: '/a', allow: true }], ['a']]] },
  );
});

test("a policy answers as robots-parser on the same file: group choice, longest match, Allow on a tie", () => {
  // Every group has a rule (deviation 4 adds none then) and plain agent names (deviation 3 changes none);
  // URL paths hold no `*` or `$` (deviation 2 escapes them), rules no `$` but a final one (deviation 1 escapes it).
  const pattern = fc.tuple(fc.stringMatching(/^[ab/*.=-]{0,6}$/), fc.boolean()).map(([p, end]) => `/${p}${end ? '$' : ''}`);
  const line = fc.tuple(fc.boolean(), pattern).map(([allow, p]) => `${allow ? 'Allow' : 'Disallow'}: ${p}`);
  const group = fc.tuple(fc.subarray(['sherlock', 'SHERLOCK', '*', 'otherbot'], { minLength: 1 }), fc.array(line, { minLength: 1, maxLength: 4 }));
  fc.assert(
    fc.property(fc.array(group, { maxLength: 4 }), fc.array(fc.stringMatching(/^[ab/.=?-]{0,10}$/), { minLength: 1, maxLength: 6 }), (groups, paths) => {
      const text = groups.map(([agents, lines]) => [...agents.map((a) => `User-agent: ${a}`), ...lines].join('\n')).join('\n\n');
      const policy = rules(text);
      const oracle = robotsParser(ROBOTS, text);
      for (const raw of paths) {
        const url = canonicalUrl(`${SITE}/${raw}`);
        if (url === ROBOTS) continue;
        assert.equal(policy.allowed(url), oracle.isAllowed(url, AGENT), `${url} against ${JSON.stringify(text)}`);
      }
    }),
    { numRuns: 2000 },
  );
});

/** The robots.txt of issue 26: as many `Disallow: /*a*a…(100 ×)…*b<i>` lines as fit under MAX_ROBOTS_SIZE. */
function wildcardFlood(): { text: string; rules: number; longest: number } {
  const lines = ['User-agent: *'];
  let bytes = lines[0]!.length + 1;
  for (let i = 0; ; i++) {
    const line = `Disallow: /${'*a'.repeat(100)}*b${i}`;
    if (bytes + line.length + 1 > MAX_ROBOTS_SIZE) break;
    lines.push(line);
    bytes += line.length + 1;
  }
  return { text: lines.join('\n') + '\n', rules: lines.length - 1, longest: lines.at(-1)!.length };
}

test('one check against 512 KiB of /*a*a…*b rules and a 1,000 character path stays within MATCH_BUDGET steps, refused as disallowed', () => {
  const flood = wildcardFlood();
  const policy = rules(flood.text);
  for (const path of [`/${'a'.repeat(1000)}`, `/${'ab'.repeat(500)}`, `/${'a'.repeat(1000)}b${flood.rules - 1}`]) {
    const verdict = policy.verdict(canonicalUrl(SITE + path));
    // Google's matcher walks every matching length at every pattern character: rules × pattern × path.
    const theirs = flood.rules * flood.longest * path.length;
    assert.ok(verdict.steps <= MATCH_BUDGET + flood.longest + path.length, `${verdict.steps} steps for ${path.slice(0, 12)}…`);
    assert.ok(verdict.steps * 100 < theirs, `${verdict.steps} steps, robots-parser about ${theirs}`);
    assert.deepEqual({ allowed: verdict.allowed, overBudget: verdict.overBudget }, { allowed: false, overBudget: true });
  }
  // The budget is not spent on a path the first rules decide, nor on a short one.
  assert.deepEqual(policy.verdict(canonicalUrl(`${SITE}/b`)), { allowed: true, steps: flood.rules, overBudget: false });
});

test('files written for people stay far below the budget: 10,000 literal rules, 500 wildcard rules, a 200 character path', () => {
  const path = `/catalogue/${'x'.repeat(180)}/item?id=7`;
  const literal = rules(['User-agent: *', ...Array.from({ length: 10_000 }, (_, i) => `Disallow: /section-${i}/page`), 'Disallow: /catalogue/'].join('\n'));
  const wildcard = rules(['User-agent: *', ...Array.from({ length: 500 }, (_, i) => `Disallow: /*?sort=${i}`), 'Allow: /*id=7$'].join('\n'));
  for (const [policy, allowed] of [[literal, false], [wildcard, true]] as const) {
    const verdict = policy.verdict(canonicalUrl(SITE + path));
    assert.equal(verdict.allowed, allowed);
    assert.equal(verdict.overBudget, false);
    assert.ok(verdict.steps < MATCH_BUDGET / 2, `${verdict.steps} steps`);
  }
});
