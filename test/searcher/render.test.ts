/**
 * The page renderer (searcher/render.ts) that server and browser share:
 * nothing from a user or a crawled page reaches the HTML unescaped, the
 * snippet keeps only <mark>, links go only to http(s), and the address of
 * a state reads back as the same state.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { MAX_OFFSET } from '../../searcher/protocol.js';
import { MAX_PAGE, PAGE_SIZE, escapeHtml, renderBody, renderPage, safeSnippet, stateFromParams, stateHref, summary, type PageState } from '../../searcher/render.js';
import { hit } from './net.js';

const state = (fields: Partial<PageState> = {}): PageState => ({ q: 'word', page: 1, site: [], type: [], lang: [], byDate: false, ...fields });
const result = (hits = [hit(1)], total = hits.length, relation: 'eq' | 'gte' = 'eq') => ({
  took_ms: 2.5,
  total: { value: total, relation },
  hits,
  facets: { site: [{ value: 'example.org', count: total }], type: [], lang: [{ value: 'en', count: total }] },
});

test('escaped text holds no markup characters', () => {
  fc.assert(fc.property(fc.string(), (text) => assert.doesNotMatch(escapeHtml(text), /[<>"']|&(?!#\d+;)/)));
});

test('a snippet keeps <mark> and character references, and nothing else that is markup', () => {
  assert.equal(safeSnippet('a <mark>b</mark> &amp; c &#39;d&#x27;'), 'a <mark>b</mark> &amp; c &#39;d&#x27;');
  assert.equal(safeSnippet('<img src=x onerror=alert(1)> & <mark class="x">'), '&#60;img src=x onerror=alert(1)&#62; &#38; &#60;mark class=&#34;x&#34;&#62;');
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.string(), fc.constantFrom('<mark>', '</mark>', '<script>', '&amp;', '&'))), (parts) => {
      const out = safeSnippet(parts.join('')).replace(/<\/?mark>/g, '');
      assert.doesNotMatch(out, /[<>"']/);
    }),
  );
});

test('result cards: escaped title and URL, a link only to http(s), size, type and date', () => {
  const html = renderBody(state(), result([hit(1, { title: '<script>alert(1)</script>', size: 5 * 1024 * 1024 }), hit(2, { url: 'javascript:alert(1)', title: '' })]));
  assert.match(html, /<h2 class="hit-title"><a href="https:\/\/example.org\/page\/1">&#60;script&#62;alert\(1\)&#60;\/script&#62;<\/a><\/h2>/);
  assert.doesNotMatch(html, /href="javascript/);
  assert.match(html, /<h2 class="hit-title">javascript:alert\(1\)<\/h2>/);
  assert.match(html, /5\.0 MiB · text\/html · <time datetime="2026-01-02T03:04:05.000Z">2026-01-02<\/time>/);
  assert.match(html, /<p class="hit-snippet">the <mark>word<\/mark> on page 1<\/p>/);
});

test('summary lines: counts, "at least" for a lower bound, pages, errors', () => {
  assert.equal(summary(state(), result([hit(1)])), '1 result (2.5 ms)');
  assert.equal(summary(state(), result([hit(1)], 12345, 'gte')), 'At least 12,345 results (2.5 ms)');
  assert.equal(summary(state({ page: 3 }), result([hit(1)], 1234)), 'Page 3 of 1,234 results (2.5 ms)');
  assert.equal(summary(state({ q: 'zz' }), result([])), 'No results for “zz” (2.5 ms)');
  assert.equal(summary(state(), { code: 'NO_INDEX', message: 'no index version is loaded yet' }), 'There is no index to search yet: nothing has been indexed.');
  assert.equal(summary(state({ q: '' }), result()), '');
});

test('the pager links pages around the current one and stops at the deepest offset', () => {
  const html = renderBody(state({ page: 7 }), result([hit(1)], 100_000));
  assert.match(html, /<a data-nav href="\/search\?q=word&#38;page=6" rel="prev">Previous<\/a>/);
  assert.match(html, /<span aria-current="page">7<\/span>/);
  assert.match(html, /<a data-nav href="\/search\?q=word&#38;page=8" rel="next">Next<\/a>/);
  const last = renderBody(state({ page: MAX_PAGE }), result([hit(1)], 100_000));
  assert.doesNotMatch(last, /rel="next"/);
  assert.equal((MAX_PAGE - 1) * PAGE_SIZE, MAX_OFFSET);
});

test('a lower-bound total leaves the next page open after a full page, an exact one does not', () => {
  const full = Array.from({ length: PAGE_SIZE }, (_, i) => hit(40 + i));
  const pruned = renderBody(state({ page: 5 }), result(full, 50, 'gte'));
  assert.match(pruned, /<a data-nav href="\/search\?q=word&#38;page=6" rel="next">Next<\/a>/);
  assert.doesNotMatch(renderBody(state({ page: 5 }), result(full, 50, 'eq')), /rel="next"/);
  assert.doesNotMatch(renderBody(state({ page: 5 }), result(full.slice(0, 3), 43, 'gte')), /rel="next"/);
});

test('facet chips add a filter, and a chosen one removes it', () => {
  const html = renderBody(state({ type: ['application/pdf'] }), result());
  assert.match(html, /<a class="chip" data-nav href="\/search\?q=word&#38;site=example.org&#38;type=application%2Fpdf">example.org <span class="count">1<\/span><\/a>/);
  assert.match(html, /<a class="chip on" data-nav href="\/search\?q=word"><span class="visually-hidden">Remove filter <\/span>application\/pdf<\/a>/);
});

test('a query error shows where the query goes wrong', () => {
  const html = renderBody(state({ q: 'a "b<' }), { code: 'BAD_QUERY', message: 'a quotation mark is not closed', position: 2 });
  assert.equal(html, '<p class="query-error" id="query-error"><code>a <span class="at">&#34;</span>b&#60;</code></p>');
});

test('the address of a state reads back as the same state; bad page numbers are clamped', () => {
  const name = fc.stringMatching(/^[a-z0-9.\/-]{1,20}$/);
  const states = fc.record({ q: fc.string({ minLength: 1 }), page: fc.integer({ min: 1, max: MAX_PAGE }), site: fc.array(name, { maxLength: 3 }), type: fc.array(name, { maxLength: 3 }), lang: fc.array(name, { maxLength: 3 }), byDate: fc.boolean() });
  fc.assert(fc.property(states, (s) => assert.deepEqual(stateFromParams(new URL(stateHref(s), 'http://x').searchParams), { ...s })));
  assert.equal(stateHref(state({ q: '' })), '/');
  assert.equal(stateFromParams(new URLSearchParams('q=a&page=0')).page, 1);
  assert.equal(stateFromParams(new URLSearchParams('q=a&page=9999')).page, MAX_PAGE);
  assert.equal(stateFromParams(new URLSearchParams('q=a&page=2x')).page, 1);
});

test('the whole page escapes the query everywhere it appears and keeps filters in the form', () => {
  const q = '"><script>alert(1)</script>';
  const html = renderPage(state({ q, site: ['a"b'] }), result());
  assert.equal(html.includes('<script>alert'), false);
  assert.match(html, /<title>&#34;&#62;&#60;script&#62;alert\(1\)&#60;\/script&#62; – sherlock<\/title>/);
  assert.match(html, /<input type="hidden" name="site" value="a&#34;b">/);
});

test('the front page shows the search tips; an answer with no hits shows suggestions, with a way out of the filters', () => {
  assert.match(renderBody(state({ q: '' }), undefined), /<section id="tips"[^>]*>.*<code>"stone bridge"<\/code>/s);
  const none = renderBody(state({ site: ['example.org'], page: 3 }), result([], 0));
  assert.match(none, /<div id="no-results">/);
  assert.match(none, /<a data-nav href="\/search\?q=word">Search without the filters<\/a>/);
  assert.match(none, /<a data-nav href="\/search\?q=word&#38;site=example.org">Go to the first page<\/a>/);
  assert.doesNotMatch(renderBody(state(), result([], 0)), /without the filters|first page/);
  assert.equal(summary(state(), { code: 'BAD_QUERY', message: 'a quotation mark is not closed (at character 1)', position: 0 }), 'A quotation mark is not closed (at character 1)');
});
