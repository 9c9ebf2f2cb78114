/**
 * The result-cache part's query mix (bench/result-cache.ts zipfMix): the
 * same mix for the same seed, drawn only from the set, and skewed as a Zipf
 * law is (the most frequent query about twice as often as the second, and
 * far more often than the median one), so that the mix repeats.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { zipfMix } from '../../bench/result-cache.js';

const SET = Array.from({ length: 300 }, (_, i) => `query ${i}`);

test('the mix is the same for one seed, another for another, drawn from the set only', () => {
  const mix = zipfMix(SET, 2000, 7);
  assert.deepEqual(zipfMix(SET, 2000, 7), mix);
  assert.notDeepEqual(zipfMix(SET, 2000, 8), mix);
  assert.equal(mix.length, 2000);
  assert.ok(mix.every((q) => SET.includes(q)));
});

test('the mix follows a Zipf law: ranks by count fall as 1/r, so queries repeat', () => {
  const counts = new Map<string, number>();
  for (const q of zipfMix(SET, 20_000, 3)) counts.set(q, (counts.get(q) ?? 0) + 1);
  const byCount = [...counts.values()].sort((a, b) => b - a);
  // 1/H(300) of the draws go to rank 1: about 16 % (3,170 of 20,000).
  assert.ok(byCount[0]! > 2800 && byCount[0]! < 3600, String(byCount[0]));
  assert.ok(byCount[0]! / byCount[1]! > 1.6 && byCount[0]! / byCount[1]! < 2.5, `${byCount[0]} ÷ ${byCount[1]}`);
  assert.ok(byCount[0]! > 50 * byCount[150]!, `${byCount[0]} against ${byCount[150]}`);
});
