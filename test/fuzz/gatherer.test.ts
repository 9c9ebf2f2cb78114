/**
 * Fuzzing what the gatherer reads from the network: HTML (gatherer/parse.ts
 * with charsets and the document body it makes), robots.txt (the policy and
 * its bucket), XML sitemaps, Content-Encoding, and the URL canonicaliser
 * every link goes through. None of these may throw for any input but a
 * SherlockError (harness.ts); the robots bucket must give the same answers
 * as the policy it was written from, and canonical URLs are fixed points.
 */

import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { documentBody, parseBody } from '../../common/bucket/doc-body.js';
import { canonicalUrl } from '../../common/url.js';
import { decodeContent } from '../../common/archive/content-decoding.js';
import { parseTextDocument } from '../../gatherer/parse.js';
import { interpretRobots, policyFromBucket, robotsBucket } from '../../gatherer/robots.js';
import { parseSitemap } from '../../gatherer/sitemap.js';
import { bytesNear, check, fuzzFile, parsed, parsedAsync } from './harness.js';

const BASE = 'http://example.org/dir/page.html';

const HTML_SEEDS = [
  '<!doctype html><html><head><meta charset="windows-1250"><title>T&iacute;tulo</title><meta name="robots" content="noindex,nofollow"><link rel="canonical" href="/c"><base href="http://other.example/x/"></head>' +
    '<body><h1>Head</h1><p>Text <b>bold</b> <a href="rel?a=1#f">link</a> <img alt="alt text" src="i.png"><frame src="f.html"><script>var x = "<a href=no>";</script>' +
    '<small>small</small><a href="javascript:alert(1)">js</a><a href="http://[::1]:99999/">bad</a></p></body></html>',
  '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body><p>xhtml &#x1F600; &#0; &#xD800;</p></body></html>',
  '<meta http-equiv="Content-Type" content="text/html; charset=shift_jis"><title>\x93\xfa\x96\x7b</title><table><tr><td>cell<td>cell</table>',
].map((s) => Buffer.from(s, 'latin1'));

const ROBOTS_SEED = Buffer.from(
  'User-agent: *\nDisallow: /private\nAllow: /private/ok$\nCrawl-delay: 2.5\nSitemap: /sitemap.xml\n\nUser-agent: sherlock\nDisallow: /*.pdf$\nDisallow: /a*b\n# comment\nSitemap: http://[bad\n',
);

const SITEMAP_SEED = Buffer.from(
  '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://example.org/a</loc><lastmod>2024-01-01</lastmod></url><url><loc> /rel </loc></url></urlset>' +
    '<sitemapindex><sitemap><loc>http://example.org/s2.xml</loc></sitemap></sitemapindex>',
);

const contentType = fc.constantFrom(undefined, 'text/html', 'application/xhtml+xml', 'text/plain', 'image/png', 'text/html; charset=utf-16', 'x/'.repeat(50));

fuzzFile(import.meta.url, {
  'HTML: parseDocument gives a document for any bytes, and its body attributes read back as the same document': {
    runs: 600,
    property: (params) =>
      check(
        fc.tuple(bytesNear(HTML_SEEDS, 8), contentType, fc.constantFrom(undefined, 'utf-8', 'x-klingon', 'utf-16le', 'iso-2022-jp')),
        ([bytes, type, charset]) => {
          const doc = parseTextDocument({ url: BASE, body: bytes, ...(type === undefined ? {} : { contentType: type }), ...(charset === undefined ? {} : { charsetParam: charset }) });
          const { kind: _kind, charset: _charset, problems: _problems, ...body } = doc;
          assert.deepEqual(parseBody(documentBody(body)), body);
        },
        params,
      ),
  },

  'robots.txt: any body gives a policy whose answers survive the robots bucket': {
    runs: 800,
    property: (params) =>
      check(
        fc.tuple(bytesNear([ROBOTS_SEED], 8), fc.array(fc.stringMatching(/^\/[a-z/*$.?=]{0,12}$/), { maxLength: 6 })),
        ([body, paths]) => {
          const now = 1_700_000_000_000;
          const response = { outcome: 'ok' as const, status: 200, headers: [['Content-Type', 'text/plain']] as [string, string][], body, truncated: false };
          const decision = interpretRobots(response, { url: 'http://example.org/robots.txt', userAgent: 'sherlock/0.1', now, errorRetryMs: 60_000 }, 0);
          assert.equal(decision.kind, 'policy');
          if (decision.kind !== 'policy') return;
          const policy = decision.policy;
          const again = policyFromBucket(robotsBucket('http://example.org/robots.txt', policy, { status: 200, code: 0, message: 'HTTP 200' }), 'sherlock/0.1');
          for (const path of paths) {
            const url = parsed(() => canonicalUrl(path, 'http://example.org/'));
            if (url !== undefined) assert.equal(again.allowed(url), policy.allowed(url), `${url} answered differently after the bucket`);
          }
        },
        params,
      ),
  },

  'sitemaps: any XML gives links and problems, or is not a sitemap': {
    runs: 600,
    property: (params) =>
      check(bytesNear([SITEMAP_SEED], 8), (body) => {
        const result = parseSitemap(body.toString('utf8'), 'http://example.org/sitemap.xml');
        if (result !== undefined) for (const link of result.links) assert.equal(canonicalUrl(link.url), link.url);
      }, params),
  },

  'Content-Encoding: mutated gzip, deflate and brotli bodies decode within the cap or throw SHERLOCK_CORRUPT_GZIP': {
    runs: 400,
    property: async (params) => {
      const plain = Buffer.from('<p>some text that compresses</p>'.repeat(20));
      const seeds = [gzipSync(plain), gzipSync(gzipSync(plain))];
      const codings = fc.constantFrom('gzip', 'x-gzip', 'deflate', 'br', 'gzip, gzip', 'identity', 'compress', 'GZIP , br', '');
      await fc.assert(
        fc.asyncProperty(bytesNear(seeds, 4), codings, async (body, coding) => {
          const decoded = await parsedAsync(() => decodeContent(body, coding, 4096, BASE));
          if (decoded !== undefined) assert.ok(decoded.data.length <= 4096);
        }),
        params as fc.Parameters<[Buffer, string]>,
      );
      return params.numRuns ?? 100;
    },
  },

  'URL canonicaliser: any string canonicalises or throws SHERLOCK_BAD_URL, and canonical URLs are fixed points': {
    runs: 2000,
    property: (params) => {
      const seeds = ['http://example.org/a/../b/./c?x=1&y=%41#f', 'HTTPS://User:Pw@EXAMPLE.org:443/%7euser/', 'http://[::FFFF:7F00:1]:80/', 'http://0x7f.1/', 'http://xn--nxasmq6b.example/ü?q=é'].map((u) => Buffer.from(u));
      return check(fc.tuple(fc.oneof(fc.string(), bytesNear(seeds, 4).map((b) => b.toString('latin1'))), fc.constantFrom(undefined, BASE)), ([input, base]) => {
        const url = parsed(() => canonicalUrl(input, base));
        if (url !== undefined) assert.equal(canonicalUrl(url), url);
      }, params);
    },
  },
});
