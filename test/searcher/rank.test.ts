/**
 * Ranking's pure parts: the top-k heap agrees with a full sort, and site
 * collapsing keeps every result, in order within a site, with at most
 * SITE_MAX of a site on a page while other sites have results close behind.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { ChainDecoder, WORD_EDGE, encodeChains, packRef, unpackRef, type Chain, type Ref } from '../../common/index/refs.js';
import { lengthCode } from '../../common/index/cardinfo.js';
import { BM25_B, BM25_K1, CODE_MASK, COLLAPSE_RATIO, CODE_META, CODE_TF, SCORE_CEILING, SITE_MAX, TopK, collapse, fieldScore, chainInputs, idf, inputScore, lengthNorms, mergeBodies, mergeMetas, minGap, occurrenceScore, phraseShape, phraseWordScore, refInputs, seek, titleOf } from '../../searcher/rank.js';

test('TopK gives the k best, best first, ties by lower card id, whatever the order pushed', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }), fc.integer({ min: 0, max: 30 }), fc.boolean(), (scores, k, reversed) => {
      const items = scores.map((score, cardId) => ({ cardId, score }));
      const sorted = [...items].sort((a, b) => b.score - a.score || a.cardId - b.cardId);
      const top = new TopK(k);
      for (const item of reversed ? [...items].reverse() : items) top.push(item.cardId, item.score);
      assert.deepEqual(top.best(), sorted.slice(0, k));
    }),
  );
});

test('collapse keeps every result, each site in order, at most SITE_MAX a page while others close behind wait', () => {
  fc.assert(
    fc.property(fc.array(fc.record({ site: fc.integer({ min: 0, max: 4 }), drop: fc.integer({ min: 0, max: 30 }) }), { maxLength: 60 }), fc.integer({ min: 1, max: 10 }), (items, pageSize) => {
      let score = 1000;
      const ranked = items.map(({ site, drop }, rank) => ({ site, rank, score: (score -= drop) }));
      const order = collapse(ranked, (r) => r.site, (r) => r.score, pageSize);
      assert.deepEqual([...order].sort((x, y) => x.rank - y.rank), ranked);
      for (let s = 0; s <= 4; s++) {
        const ranks = order.filter((r) => r.site === s).map((r) => r.rank);
        assert.deepEqual(ranks, [...ranks].sort((x, y) => x - y));
      }
      for (let from = 0; from < order.length; from += pageSize) {
        const page = order.slice(from, from + pageSize);
        const later = order.slice(from + pageSize);
        const onPage = (site: number) => page.filter((r) => r.site === site).length;
        for (const site of new Set(page.map((r) => r.site))) {
          if (onPage(site) <= SITE_MAX) continue;
          // Over the cap only when every result left for later of a site under the cap scores below COLLAPSE_RATIO of this site's.
          const last = Math.min(...page.filter((r) => r.site === site).map((r) => r.score));
          for (const r of later) if (onPage(r.site) < SITE_MAX) assert.ok(r.score < COLLAPSE_RATIO * last, `rank ${r.rank} waits behind site ${site}`);
        }
      }
    }),
  );
});

test('collapse brings another site up past a result of one site over SITE_MAX, unless far behind', () => {
  const ranked = (last: number) => [...Array<number>(SITE_MAX + 1).fill(0), 1].map((site, rank) => ({ site, rank, score: site === 1 ? last : 100 - rank }));
  const order = (last: number) => collapse(ranked(last), (r) => r.site, (r) => r.score, 10).map((r) => r.rank);
  const ranks = ranked(0).map((r) => r.rank);
  assert.deepEqual(order(90), [...ranks.slice(0, SITE_MAX), SITE_MAX + 1, SITE_MAX]);
  assert.deepEqual(order(10), ranks);
});

test('minGap is the smallest distance between the lines of two ascending lists of packed refs, edge refs left out', () => {
  const words = (...positions: number[]) => Int32Array.from(positions, (position) => packRef({ kind: 'word', type: 0, position }));
  const a = words(1, 10, 20);
  const b = words(5, 18);
  assert.equal(minGap(a, 0, 3, b, 0, 2), 2);
  assert.equal(minGap(a, 1, 3, b, 1, 2), 2);
  assert.equal(minGap(a, 0, 2, b, 0, 1), 4);
  assert.equal(minGap(a, 0, 0, b, 0, 1), Infinity);
  const edge = words(32_767, WORD_EDGE);
  assert.equal(minGap(edge, 1, 2, words(32_766), 0, 1), Infinity);
  assert.equal(minGap(edge, 0, 2, words(32_766), 0, 1), 1);
  const meta = Int32Array.from([packRef({ kind: 'meta', type: 0, weight: 0, position: 3 })]);
  assert.ok(minGap(meta, 0, 1, words(3), 0, 1) > 1000);
});

test('minGap agrees with comparing every pair, merged or looked up, whatever the lengths', () => {
  const lines = (max: number) => fc.uniqueArray(fc.integer({ min: 0, max: 300 }), { maxLength: max }).map((l) => l.sort((x, y) => x - y));
  fc.assert(
    fc.property(lines(6), lines(120), fc.nat(3), fc.nat(3), (a, b, edgesA, edgesB) => {
      const packed = (positions: number[], edges: number) =>
        Int32Array.from([...positions, ...Array<number>(edges).fill(WORD_EDGE)], (position) => packRef({ kind: 'word', type: 0, position }));
      let expected = Infinity;
      for (const x of a) for (const y of b) expected = Math.min(expected, Math.abs(x - y));
      const pa = packed(a, edgesA);
      const pb = packed(b, edgesB);
      assert.equal(minGap(pa, 0, pa.length, pb, 0, pb.length), expected);
      assert.equal(minGap(pb, 0, pb.length, pa, 0, pa.length), expected);
    }),
    { numRuns: 300 },
  );
});

test('IDF falls as a word is in more cards, and stays positive', () => {
  let last = Infinity;
  for (const df of [1, 2, 10, 100, 500, 999, 1000, 5000]) {
    const value = idf(df, 1000);
    assert.ok(value > 0 && value < last, `idf(${df}) = ${value}`);
    if (df < 1000) last = value;
  }
  assert.equal(idf(5000, 1000), idf(1000, 1000));
});

test('length norms: BM25 k1·(1 − b + b·length ÷ average), the average over cards with a body', () => {
  const norms = lengthNorms(Uint8Array.from([lengthCode(100), lengthCode(300), 0]));
  assert.ok(Math.abs(norms[lengthCode(200)]! - BM25_K1) < 0.05, String(norms[lengthCode(200)]));
  assert.ok(norms[lengthCode(50)]! < norms[lengthCode(200)]! && norms[lengthCode(200)]! < norms[lengthCode(2000)]!);
  assert.ok(Math.abs(norms[0]! - BM25_K1 * (1 - BM25_B)) < 1e-9);
});

test('a word\'s score saturates with its occurrences, falls with the card\'s length, rises with IDF; a phrase\'s word never adds more than the word', () => {
  const text = (n: number, type = 0) => Int32Array.from({ length: n }, (_, i) => packRef({ kind: 'word', type, position: i }));
  const title = packRef({ kind: 'meta', type: 0, weight: 0, position: 0 });
  const score = (refs: Int32Array, norm = 1.2, weight = 1) => occurrenceScore(refs, 0, refs.length, norm, weight);
  assert.ok(score(text(2)) > score(text(1)) && score(text(2)) - score(text(1)) > score(text(20)) - score(text(19)));
  assert.ok(score(text(100)) < SCORE_CEILING);
  assert.ok(score(text(3), 0.5) > score(text(3), 3));
  assert.ok(score(text(3), 1.2, 2) > score(text(3), 1.2, 1));
  // Anchor texts from other sites count together, saturating: more sites calling a card so say more, up to k1 + 1 times one.
  const anchors = (n: number, weight = 1) => Int32Array.from({ length: n }, (_, i) => packRef({ kind: 'meta', type: 5, weight, position: i }));
  assert.ok(score(anchors(1)) < score(anchors(2)) && score(anchors(2)) < score(anchors(8)));
  assert.ok(score(anchors(1000)) < (BM25_K1 + 1) * score(anchors(1)));
  // The card's own site's texts (weight 0) count once, however many carry the word: a densely cross-linked site gains no more than one link.
  assert.equal(score(anchors(8, 0)), score(anchors(1, 0)));
  assert.ok(score(anchors(1, 0)) < score(anchors(1)));
  const mixed = Int32Array.from([...anchors(5, 0), ...anchors(1)]);
  assert.equal(score(mixed), score(anchors(2)));
  // A heading counts more than text; a title more than a plain word.
  assert.ok(score(text(1, 3)) > score(text(1)));
  assert.ok(score(Int32Array.of(title)) > score(text(1)));
  // BM25F: the title adds to the body's term frequency before one saturation, so it adds less where the text already says the word throughout.
  const titled = (n: number) => score(Int32Array.from([...text(n), title]));
  assert.ok(titled(40) - score(text(40)) < titled(1) - score(text(1)));
  assert.ok(titled(1000) < SCORE_CEILING);
  fc.assert(
    fc.property(fc.array(fc.record({ meta: fc.boolean(), type: fc.nat(5), weight: fc.nat(3) }), { minLength: 1, maxLength: 20 }), fc.double({ min: 0.3, max: 50, noNaN: true }), fc.double({ min: 0.01, max: 10, noNaN: true }), (occ, norm, weight) => {
      const refs = Int32Array.from(occ, (o, i) => packRef(o.meta ? { kind: 'meta', type: o.type, weight: o.weight, position: i } : { kind: 'word', type: o.type, position: i }));
      const whole = score(refs, norm, weight);
      // Any of the word's occurrences making phrases: their best meta, or the body's term frequency over them.
      for (let used = 1; used <= refs.length; used++) {
        const some = refs.subarray(0, used);
        const meta = Math.max(...Array.from(some, (ref) => CODE_META[ref & CODE_MASK]!));
        const tf = some.reduce((sum, ref) => sum + CODE_TF[ref & CODE_MASK]!, 0);
        assert.ok(phraseWordScore(meta, tf, norm, weight) <= whole * (1 + 1e-12));
      }
    }),
  );
  // fieldScore rises with the body's term frequency and the metas' weight, and stays below its ceiling.
  assert.ok(fieldScore(2, 0, 1.2) > fieldScore(1, 0, 1.2) && fieldScore(1, 10, 1.2) > fieldScore(1, 0, 1.2));
  assert.ok(fieldScore(1e12, 1e6, 0.3) < SCORE_CEILING);
});

test('score inputs of two forms\' refs merged score as their refs together would, and bound a phrase as those refs do', () => {
  const occurrence = fc.record({ meta: fc.boolean(), type: fc.nat(5), weight: fc.nat(3), position: fc.integer({ min: 0, max: WORD_EDGE }) });
  const packed = (list: ReadonlyArray<{ meta: boolean; type: number; weight: number; position: number }>) =>
    Int32Array.from(list, (o) => packRef(o.meta ? { kind: 'meta', type: o.type, weight: o.weight, position: Math.min(o.position, 2_047) } : { kind: 'word', type: o.type, position: o.position }));
  /** What bounds a phrase in refs: positioned word occurrences, their heaviest weight, the heaviest meta. */
  const shape = (refs: Int32Array) => {
    const words = Array.from(refs).filter((r) => r >> 7 < WORD_EDGE);
    const metas = Array.from(refs).map((r) => CODE_META[r & CODE_MASK]!);
    return { count: words.length, word: Math.max(0, ...words.map((r) => 10 * CODE_TF[r & CODE_MASK]!)), meta: Math.max(0, ...metas) };
  };
  fc.assert(
    fc.property(fc.array(fc.array(occurrence, { maxLength: 12 }), { minLength: 1, maxLength: 4 }), fc.double({ min: 0.3, max: 50, noNaN: true }), (forms, norm) => {
      const bodies = new Uint32Array(forms.length);
      const metas = new Uint32Array(forms.length);
      let body = 0;
      let meta = 0;
      forms.forEach((form, f) => {
        const refs = packed(form);
        refInputs(refs, 0, refs.length, bodies, metas, f);
        body = mergeBodies(body, bodies[f]!);
        meta = mergeMetas(meta, metas[f]!);
      });
      const together = packed(forms.flat());
      assert.equal(inputScore(body, meta, norm, 1.5), occurrenceScore(together, 0, together.length, norm, 1.5));
      const expected = shape(together);
      const got = phraseShape(body, meta);
      assert.deepEqual({ count: got >>> 16, word: (got >>> 8) & 0xff, meta: got & 0xff }, expected);
      const titles = Array.from(together).map(unpackRef).filter((r) => r.kind === 'meta' && r.type === 0);
      assert.equal(titleOf(body), Math.max(-1, ...titles.map((r) => (r.kind === 'meta' ? r.weight : -1))));
    }),
  );
});

test('chainInputs gives each chain\'s score inputs as refInputs of its decoded refs, remembered or not', () => {
  // Short positions and deltas, so that many chains are of 1 or 2 bytes and repeat; edge refs too.
  const word = fc.record({ kind: fc.constant('word' as const), type: fc.nat(5), position: fc.integer({ min: 0, max: 70 }) });
  const meta = fc.record({ kind: fc.constant('meta' as const), type: fc.nat(5), weight: fc.nat(3), position: fc.nat(80) });
  const chain = fc.tuple(fc.array(meta, { maxLength: 2 }), fc.uniqueArray(word, { maxLength: 3, selector: (w) => w.position }), fc.boolean());
  fc.assert(
    fc.property(fc.array(chain, { minLength: 1, maxLength: 60 }), (parts) => {
      const list: Chain[] = parts.map(([metas, words, edge], cardId) => {
        const sorted = words.sort((a, b) => a.position - b.position);
        const refs: Ref[] = [...metas, ...sorted, ...(edge || metas.length + sorted.length === 0 ? [{ kind: 'word' as const, type: 0, position: WORD_EDGE }] : [])];
        return { cardId, refs };
      });
      const decoder = new ChainDecoder(encodeChains(list));
      const packed = new ChainDecoder(encodeChains(list)).packed();
      const got = { bodies: new Uint32Array(list.length), metas: new Uint32Array(list.length) };
      const want = { bodies: new Uint32Array(list.length), metas: new Uint32Array(list.length) };
      // Twice: the second walk finds the short chains' inputs remembered (and so may the first, from earlier runs).
      for (let pass = 0; pass < 2; pass++) {
        let i = 0;
        decoder.walk(0, decoder.bytes, Infinity, (_cardId, _head, start, stop) => chainInputs(decoder, start, stop, got.bodies, got.metas, i++));
        for (let c = 0; c < list.length; c++) refInputs(packed.refs, packed.starts[c]!, packed.starts[c + 1]!, want.bodies, want.metas, c);
        assert.deepEqual(got, want);
      }
    }),
  );
});

test('seek finds the first element at or above the target from any start, as a scan does, near and far', () => {
  fc.assert(
    fc.property(fc.array(fc.nat({ max: 1000 }), { maxLength: 300, size: 'max' }), fc.nat(), fc.nat({ max: 1100 }), (values, start, target) => {
      const list = Uint32Array.from(values).sort();
      const from = list.length === 0 ? 0 : start % (list.length + 1);
      let expected = from;
      while (expected < list.length && list[expected]! < target) expected++;
      assert.equal(seek(list, from, list.length, target), expected);
    }),
  );
});
