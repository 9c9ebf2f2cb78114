/**
 * Ranking's pure parts: the top-k heap agrees with a full sort, and site
 * collapsing keeps every result, in order within a site, with at most
 * SITE_MAX of a site on a page while other sites have results left.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { SITE_MAX, collapse, minGap, topK } from '../../searcher/rank.js';

test('topK gives the k best, best first, ties by lower card id', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }), fc.integer({ min: 0, max: 30 }), (scores, k) => {
      const items = scores.map((score, cardId) => ({ cardId, score }));
      const sorted = [...items].sort((a, b) => b.score - a.score || a.cardId - b.cardId);
      assert.deepEqual(topK(items, k), sorted.slice(0, k));
    }),
  );
});

test('collapse keeps every result, each site in order, at most SITE_MAX a page while others wait', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 60 }), fc.integer({ min: 1, max: 10 }), (sites, pageSize) => {
      const ranked = sites.map((site, rank) => ({ site, rank }));
      const order = collapse(ranked, (r) => r.site, pageSize);
      assert.deepEqual([...order].sort((x, y) => x.rank - y.rank), ranked);
      for (let s = 0; s <= 4; s++) {
        const ranks = order.filter((r) => r.site === s).map((r) => r.rank);
        assert.deepEqual(ranks, [...ranks].sort((x, y) => x - y));
      }
      for (let from = 0; from < order.length; from += pageSize) {
        const page = order.slice(from, from + pageSize);
        const later = order.slice(from + pageSize);
        for (const site of new Set(page.map((r) => r.site))) {
          const onPage = page.filter((r) => r.site === site).length;
          // Over the cap only when every result left for later is of a site already capped on this page.
          if (onPage > SITE_MAX) assert.ok(later.every((r) => page.filter((p) => p.site === r.site).length >= SITE_MAX));
        }
      }
    }),
  );
});

test('collapse brings another site up past a third result of one site', () => {
  const ranked = [0, 0, 0, 1].map((site, rank) => ({ site, rank }));
  assert.deepEqual(collapse(ranked, (r) => r.site, 10).map((r) => r.rank), [0, 1, 3, 2]);
});

test('minGap is the smallest distance between two ascending lists', () => {
  assert.equal(minGap([1, 10, 20], [5, 18]), 2);
  assert.equal(minGap([], [1]), Infinity);
});
