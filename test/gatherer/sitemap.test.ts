/**
 * Sitemaps (gatherer/sitemap.ts): <urlset> and <sitemapindex> give their
 * <loc> URLs as R links, canonical and once each, with any namespace prefix
 * and entities decoded; other XML is not a sitemap; bad URLs and URLs beyond
 * the protocol's limit are counted, not fatal.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import { MAX_DEPTH, MAX_SITEMAP_URLS, parseSitemap } from '../../gatherer/sitemap.js';

const BASE = 'http://example.org/sitemap.xml';

test('a urlset gives its locs as R links, canonical, each once', () => {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> http://Example.org/a?x=1&amp;y=2 </loc><lastmod>2024-01-01</lastmod></url>
  <url><loc>http://example.org/b</loc></url>
  <url><loc>http://example.org/b</loc></url>
  <url><loc>/relative</loc></url>
  <url><loc>mailto:someone@example.org</loc></url>
  <url><priority>0.5</priority></url>
</urlset>`;
  const parsed = parseSitemap(xml, BASE);
  assert.deepEqual(
    parsed?.links.map((l) => [l.type, l.url]),
    [
      ['R', 'http://example.org/a?x=1&y=2'],
      ['R', 'http://example.org/b'],
      ['R', 'http://example.org/relative'],
    ],
  );
  assert.deepEqual(parsed?.problems, ['1 sitemap URLs without a canonical form dropped']);
});

test('a sitemap index, with a namespace prefix, gives the sitemaps it lists', () => {
  const xml = `<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:sitemap><sm:loc>http://example.org/s1.xml</sm:loc></sm:sitemap></sm:sitemapindex>`;
  assert.deepEqual(parseSitemap(xml, BASE)?.links, [{ type: 'R', url: 'http://example.org/s1.xml' }]);
});

test('other XML is not a sitemap; a loc outside an entry is not taken', () => {
  assert.equal(parseSitemap('<rss><channel><item><link>http://example.org/x</link></item></channel></rss>', BASE), undefined);
  assert.equal(parseSitemap('not xml at all', BASE), undefined);
  assert.deepEqual(parseSitemap('<urlset><loc>http://example.org/stray</loc></urlset>', BASE)?.links, []);
});

test('at most MAX_SITEMAP_URLS links; the rest counted', () => {
  const entries = Array.from({ length: MAX_SITEMAP_URLS + 5 }, (_, i) => `<url><loc>http://example.org/p${i}</loc></url>`).join('');
  const parsed = parseSitemap(`<urlset>${entries}</urlset>`, BASE)!;
  assert.equal(parsed.links.length, MAX_SITEMAP_URLS);
  assert.deepEqual(parsed.problems, [`5 sitemap URLs beyond ${MAX_SITEMAP_URLS} dropped`]);
});

test('nesting deeper than MAX_DEPTH stops the parse, keeping the URLs before it', () => {
  const before = '<url><loc>http://example.org/kept</loc></url>';
  const after = '<url><loc>http://example.org/lost</loc></url>';
  // 300,000 open elements and as many close tags matching none: htmlparser2 alone is quadratic on it.
  const hostile = `<urlset>${before}${'<x>'.repeat(300_000)}${'</y>'.repeat(300_000)}${after}</urlset>`;
  const parsed = parseSitemap(hostile, BASE)!;
  assert.deepEqual(parsed.links, [{ type: 'R', url: 'http://example.org/kept' }]);
  assert.deepEqual(parsed.problems, [`elements nested deeper than ${MAX_DEPTH}: the rest of the sitemap ignored`]);
  // Extensions nest a few levels; that is far from the bound.
  const image = `<urlset><url><loc>http://example.org/i</loc><image:image><image:loc>http://example.org/i.png</image:loc></image:image></url>${after}</urlset>`;
  assert.deepEqual(parseSitemap(image, BASE), { links: [{ type: 'R', url: 'http://example.org/i' }, { type: 'R', url: 'http://example.org/lost' }], problems: [] });
});
