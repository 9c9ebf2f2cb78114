/**
 * The representative URL of a redirect (exporter/nutch/redirect.ts) as
 * Nutch's URLUtil.chooseRepr picks it: the cases its comment lists, and the
 * redirects of the real Nutch 1.21 segment in ../shared/testdata/nutch
 * (crawl_fetch's `linked` datums and their `_repr_`); and the targets'
 * representatives found for the crawldb's rows in one pass.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RedirectTargets, representativeUrl } from '../../../exporter/nutch/redirect.js';

test('the representative URL of a redirect is the one Nutch chooses', () => {
  const cases: Array<[string, string, boolean, 'src' | 'dst']> = [
    // Another domain: the target, permanent or not.
    ['http://a.com/', 'http://b.com/', false, 'dst'],
    ['http://a.com/x', 'http://b.com/', true, 'dst'],
    // Permanent: the source when it is a root.
    ['http://a.com/', 'http://a.com/?y=1', false, 'src'],
    ['http://a.com/', 'http://a.com/xyz/index.html', false, 'src'],
    ['http://a.com/xyz/index.html', 'http://a.com/', false, 'dst'],
    ['http://a.com/xyz/index.html', 'http://a.com/abc/page.html', false, 'dst'],
    // Temporary: a root over a page, the shorter path, the host with fewer labels.
    ['http://a.com/', 'http://a.com/xyz/index.html', true, 'src'],
    ['http://a.com/xyz/index.html', 'http://a.com/', true, 'dst'],
    ['http://a.com/xyz/index.html', 'http://a.com/abc/page.html', true, 'dst'],
    ['http://a.com/x/y/z', 'http://a.com/longer-name', true, 'dst'],
    ['http://a.com/same', 'http://a.com/sam2', true, 'src'],
    ['http://www.a.com/xyz/index.html', 'http://www.news.a.com/xyz/index.html', true, 'src'],
    ['http://www.news.a.com/', 'http://www.a.com/', true, 'dst'],
    ['http://www.a.com/', 'http://www.news.a.com/', true, 'src'],
    // The Nutch 1.21 crawl's redirects (linked datums of segment 20260130202607).
    ['https://gatech.edu/', 'https://www.gatech.edu/', false, 'src'],
    ['https://greenbuzz.gatech.edu/', 'https://sustainability.gatech.edu/', false, 'src'],
    ['https://gatechhotel.com/', 'https://www.gatechhotel.com/', false, 'src'],
    ['https://admission.gatech.edu/visit', 'https://admission.gatech.edu/visit/', false, 'dst'],
    ['https://gatech.bncollege.com/shop/gatech/home', 'https://gatech.bncollege.com/', false, 'dst'],
  ];
  for (const [src, dst, temporary, want] of cases) {
    assert.equal(representativeUrl(src, dst, temporary), want === 'src' ? src : dst, `${src} → ${dst}${temporary ? ' (temporary)' : ''}`);
  }
});

test('the rows a redirect points to get their representative in one pass, the first source deciding', () => {
  const redirects = [
    { target: 'http://a.com/x', url: 'http://a.com/old1', status: 301 },
    { target: 'http://a.com/x', url: 'http://a.com/old2', status: 302 },
    { target: 'http://a.com/y', url: 'http://a.com/', status: 302 },
    { target: 'http://a.com/zz', url: 'http://a.com/nowhere', status: 301 },
    { target: 'http://b.com/', url: 'http://a.com/z', status: null },
  ];
  const targets = new RedirectTargets(redirects[Symbol.iterator]());
  const asked = ['http://a.com/', 'http://a.com/old1', 'http://a.com/x', 'http://a.com/y', 'http://a.com/zzz', 'http://b.com/', 'http://c.com/'];
  assert.deepEqual(
    asked.map((url) => targets.representativeOf(url)),
    [undefined, undefined, 'http://a.com/x', 'http://a.com/', undefined, 'http://b.com/', undefined],
  );
});
