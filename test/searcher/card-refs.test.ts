/**
 * A word's refs card by card: a chain decoded again from its head gives
 * what decoding the whole list gives, sorted by line; several forms merged
 * give each form's refs of the card together, in any order of loads; a
 * decoder walks every chain once with its card id and head.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { ChainDecoder, encodeChains, type Chain, type Ref } from '../../common/index/refs.js';
import { CHECKPOINT, ChainRefs, MergedRefs, StoredRefs, presentWords, type CardRefs } from '../../searcher/card-refs.js';

const ref = fc.oneof(
  fc.record({ kind: fc.constant('meta' as const), type: fc.nat(5), weight: fc.nat(3), position: fc.nat(2_047) }),
  fc.record({ kind: fc.constant('word' as const), type: fc.nat(5), position: fc.nat(30_000) }),
);

/** Chains of ascending card ids, word refs ascending and after the metas, as the chewer writes them. */
const chains = fc.uniqueArray(fc.nat(5_000), { minLength: 1, maxLength: 40 }).chain((ids) =>
  fc.tuple(...ids.sort((a, b) => a - b).map((cardId) => fc.array(ref, { minLength: 1, maxLength: 10 }).map((refs): Chain => ({ cardId, refs: ordered(refs) })))),
);

function ordered(refs: Ref[]): Ref[] {
  const metas = refs.filter((r) => r.kind === 'meta');
  const words = [...new Set(refs.filter((r) => r.kind === 'word').map((r) => r.position))].sort((a, b) => a - b);
  return [...metas, ...words.map((position): Ref => ({ kind: 'word', type: 0, position }))];
}

/** A card's refs as loaded. */
const loaded = (refs: CardRefs, i: number): number[] => {
  refs.load(i);
  return Array.from(refs.keys.subarray(refs.from, refs.to));
};

/** The word's whole list decoded at once, each card's refs sorted. */
function whole(list: readonly Chain[]): { cards: number[]; refs: number[][] } {
  const data = encodeChains(list);
  const packed = new ChainDecoder(data).packed();
  const cards = Array.from(packed.cards);
  const refs = cards.map((_, i) => Array.from(packed.refs.subarray(packed.starts[i]!, packed.starts[i + 1]!)).sort((a, b) => a - b));
  return { cards, refs };
}

function chainRefs(list: readonly Chain[]): { cards: Uint32Array; refs: ChainRefs } {
  const decoder = new ChainDecoder(encodeChains(list));
  const cards: number[] = [];
  const checkpoints: number[] = [];
  const walked = decoder.walk(0, decoder.bytes, Infinity, (cardId, head) => {
    if (cards.length % CHECKPOINT === 0) checkpoints.push(head);
    cards.push(cardId);
  });
  assert.equal(walked.count, list.length);
  return { cards: Uint32Array.from(cards), refs: new ChainRefs(decoder, Uint32Array.from(checkpoints), cards.length) };
}

test('ChainRefs gives each card\'s chain decoded again from its head, sorted by line, in any order of loads, before and after writing them out', () => {
  fc.assert(
    fc.property(chains, fc.array(fc.nat(), { maxLength: 80 }), fc.boolean(), (list, order, keep) => {
      const expected = whole(list);
      const { cards, refs } = chainRefs(list);
      let asked = 0;
      refs.keep = () => {
        asked += 1;
        return keep;
      };
      assert.deepEqual(Array.from(cards), expected.cards);
      for (const pick of [...order, ...expected.cards.keys()]) {
        const i = pick % list.length;
        assert.deepEqual(loaded(refs, i), expected.refs[i]);
      }
      // Loaded as often as it has cards, it wrote its refs out once (kept or let go: asked again after as many more).
      const loads = order.length + list.length;
      assert.equal(asked, keep ? 1 : Math.floor(loads / list.length));
      // Written out and kept, the refs replace the chains' bytes: an int32 a ref and one a card.
      const refCount = list.reduce((n, chain) => n + chain.refs.length, 0);
      assert.equal(refs.bytes, keep ? 4 * (refCount + list.length + 1) : encodeChains(list).length + 4 * Math.ceil(list.length / CHECKPOINT));
    }),
  );
});

test('MergedRefs gives each form\'s refs of a card together, sorted, going up or down the cards', () => {
  fc.assert(
    fc.property(fc.array(chains, { minLength: 1, maxLength: 4 }), fc.boolean(), (forms, down) => {
      const decoded = forms.map(whole);
      const union = [...new Set(decoded.flatMap((d) => d.cards))].sort((a, b) => a - b);
      const lists = forms.map((list) => {
        const { cards, refs } = chainRefs(list);
        return { count: cards.length, cards, refs };
      });
      const words = presentWords(lists.length);
      const present = new Uint32Array(union.length * words);
      union.forEach((cardId, i) => lists.forEach((list, f) => {
        if (list.cards.includes(cardId)) present[i * words + (f >> 5)]! |= 1 << (f & 31);
      }));
      const merged = new MergedRefs(Uint32Array.from(union), present, lists);
      const indices = [...union.keys()];
      for (const i of down ? indices.reverse() : indices) {
        const expected = decoded.flatMap((d) => d.refs[d.cards.indexOf(union[i]!)] ?? []).sort((a, b) => a - b);
        assert.deepEqual(loaded(merged, i), expected);
      }
    }),
  );
});

test('StoredRefs gives card i\'s keys between its starts', () => {
  const refs = new StoredRefs(Uint32Array.of(0, 2, 2, 5), Int32Array.of(1, 2, 3, 4, 5));
  assert.deepEqual(loaded(refs, 0), [1, 2]);
  assert.deepEqual(loaded(refs, 1), []);
  assert.deepEqual(loaded(refs, 2), [3, 4, 5]);
});

test('a merged word reading, or writing out, a form that is another term\'s reader leaves that reader\'s card as it was', () => {
  fc.assert(
    fc.property(fc.array(chains, { minLength: 2, maxLength: 3 }), (forms) => {
      const lists = forms.map((list) => {
        const { cards, refs } = chainRefs(list);
        return { count: cards.length, cards, refs };
      });
      const union = [...new Set(lists.flatMap((l) => Array.from(l.cards)))].sort((a, b) => a - b);
      const words = presentWords(lists.length);
      const present = new Uint32Array(union.length * words);
      union.forEach((cardId, i) => lists.forEach((list, f) => {
        if (list.cards.includes(cardId)) present[i * words + (f >> 5)]! |= 1 << (f & 31);
      }));
      const merged = new MergedRefs(Uint32Array.from(union), present, lists);
      // The first form holds its last card, as an AND's term would, while the merged word reads every card (and writes them out).
      const term = lists[0]!.refs;
      const held = lists[0]!.count - 1;
      term.load(held);
      const before = Array.from(term.keys.subarray(term.from, term.to));
      const kept = term.keys;
      for (let i = 0; i < union.length; i++) merged.load(i);
      assert.deepEqual(Array.from(kept.subarray(term.from, term.to)), before);
    }),
  );
});

