/**
 * The one-permutation min-hash signature (signatures.ts Shingler): the
 * same words give the same signature, a text with one paragraph of twenty
 * changed agrees in at least the default threshold of min-hashes, unrelated
 * texts in almost none, and a card of fewer shingles than min-hashes has
 * no signature (all zero, never compared).
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import { spellingHash } from '../../common/words.js';
import { Shingler } from '../../indexer/signatures.js';

const SETTINGS = { hashes: 32, words: 4 };
const THRESHOLD = 24;

function signature(words: readonly string[]): Uint32Array {
  const shingler = new Shingler(SETTINGS);
  shingler.reset();
  for (const word of words) shingler.add(spellingHash(word, 0, word.length));
  const out = Buffer.alloc(4 * SETTINGS.hashes);
  shingler.finish(out, 0);
  return new Uint32Array(out.buffer, out.byteOffset, SETTINGS.hashes).slice();
}

const agree = (a: Uint32Array, b: Uint32Array): number => a.reduce((n, h, i) => n + (h === b[i] ? 1 : 0), 0);

/** Twenty paragraphs of forty words; paragraph `changed` has other words. */
const text = (prefix: string, changed = -1): string[] =>
  Array.from({ length: 20 }, (_, p) => Array.from({ length: 40 }, (_, k) => (p === changed ? `edit${p}v${k}` : `${prefix}${p}v${k}`))).flat();

test('the same words give the same signature, and every bin is filled', () => {
  const a = signature(text('para'));
  assert.deepEqual(a, signature(text('para')));
  assert.ok(a.every((h) => h !== 0));
});

test('one paragraph of twenty changed agrees in most min-hashes, unrelated texts in almost none', () => {
  for (let changed = 0; changed < 20; changed++) {
    const same = agree(signature(text('para')), signature(text('para', changed)));
    assert.ok(same >= THRESHOLD, `paragraph ${changed} changed: ${same} of 32 agree`);
  }
  for (const other of ['word', 'term', 'item']) assert.ok(agree(signature(text('para')), signature(text(other))) <= 2, other);
});

test('fewer shingles than min-hashes: no signature', () => {
  // 34 words: 31 shingles of four.
  assert.ok(signature(text('para').slice(0, 34)).every((h) => h === 0));
  assert.ok(signature(text('para').slice(0, 35)).some((h) => h !== 0));
  assert.ok(signature([]).every((h) => h === 0));
});

test('a card of few shingles fills its empty bins from the others: two such cards agree only where their words do', () => {
  // 40 shingles in 32 bins leave some empty; the densified bins follow the filled ones.
  const words = text('para').slice(0, 43);
  const a = signature(words);
  assert.ok(a.every((h) => h !== 0));
  assert.deepEqual(a, signature(words));
  assert.ok(agree(a, signature(text('term').slice(0, 43))) <= 2);
});
