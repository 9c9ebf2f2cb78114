/**
 * The external sort's ordering (indexer/runs.ts stableOrder): by key, equal
 * keys in index order, whether the keys' range is small for their number
 * (a counting sort) or large (a radix sort by 11-bit digits).
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mulberry32 } from '../../bench/queries.js';
import { stableOrder } from '../../indexer/runs.js';

/** What stableOrder must give, by a comparison sort. */
function expected(keys: Uint32Array): number[] {
  return [...keys.keys()].sort((a, b) => keys[a]! - keys[b]! || a - b);
}

test('stableOrder sorts by key and keeps equal keys in index order, for every range', () => {
  const random = mulberry32(31);
  // Ranges below and above 8 × the count, and past one, two and three radix digits (2^11, 2^22, 2^32).
  for (const [count, range] of [
    [1, 1],
    [0, 5],
    [1000, 16],
    [1000, 8000],
    [1000, 9000],
    [500, 2 ** 11 + 1],
    [3000, 2 ** 22 + 5],
    [3000, 2 ** 32],
  ] as const) {
    const keys = Uint32Array.from({ length: count }, () => Math.floor(random() * range));
    // Many equal keys too: stability is what the merge relies on (card ids increasing within a word).
    for (let i = 0; i < count; i += 3) keys[i] = keys[0]!;
    assert.deepEqual([...stableOrder(keys, range)], expected(keys), `${count} keys below ${range}`);
  }
});
