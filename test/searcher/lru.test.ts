/**
 * The searcher's bounded caches (searcher/lru.ts): the least recently used
 * entry goes first, costs bound the total, and with admission counts a
 * repeating mix larger than the bound keeps hitting a stable part instead
 * of nothing, while a key asked for far more often still gets in.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Frequencies, Lru } from '../../searcher/lru.js';

/** Asks `keys` in order `passes` times, setting each one missed; the hits of each pass. */
function cycle(cache: Lru<number, number>, keys: readonly number[], passes: number): number[] {
  const hits: number[] = [];
  for (let p = 0; p < passes; p++) {
    let n = 0;
    for (const key of keys) {
      if (cache.get(key) !== undefined) n++;
      else cache.set(key, key);
    }
    hits.push(n);
  }
  return hits;
}

test('an LRU keeps the entries used last within its bound, counted by cost', () => {
  const cache = new Lru<string, string>(10, (value) => value.length);
  cache.set('a', 'aaaa');
  cache.set('b', 'bbbb');
  assert.equal(cache.get('a'), 'aaaa', 'a is now the newest');
  cache.set('c', 'cccc');
  assert.equal(cache.get('b'), undefined, 'b, the least recently used, made room');
  assert.equal(cache.get('a'), 'aaaa');
  cache.set('d', 'd'.repeat(11));
  assert.equal(cache.get('d'), undefined, 'a value over the bound is not kept');
  cache.set('a', 'aa');
  cache.resize(4);
  assert.equal(cache.get('c'), undefined);
  assert.equal(cache.get('a'), 'aa', 'a value set again replaces its cost');
});

test('a repeating mix twice the bound hits nothing in a plain LRU and half of it with admission counts', () => {
  const keys = Array.from({ length: 20 }, (_, i) => i);
  assert.deepEqual(cycle(new Lru<number, number>(10, () => 1), keys, 4), [0, 0, 0, 0]);
  const counted = cycle(new Lru<number, number>(10, () => 1, new Frequencies(1000)), keys, 4);
  assert.equal(counted[0], 0);
  for (const hits of counted.slice(1)) assert.equal(hits, 10, `${counted}`);
});

test('with admission counts a key asked for far more often than the oldest entries gets in, and counts fade', () => {
  const frequencies = new Frequencies<number>(1000);
  const cache = new Lru<number, number>(3, () => 1, frequencies);
  for (const key of [1, 2, 3]) {
    assert.equal(cache.get(key), undefined);
    cache.set(key, key);
  }
  cache.get(4);
  cache.set(4, 4);
  assert.equal(cache.get(4), undefined, 'asked for once: the entries stay');
  for (let i = 0; i < 3; i++) cache.get(4);
  cache.set(4, 4);
  assert.equal(cache.get(4), 4, 'asked for five times against once: in');
  assert.equal(cache.get(1), undefined, 'the oldest entry made room');

  const fading = new Frequencies<string>(4);
  for (let i = 0; i < 3; i++) fading.touch('often');
  fading.touch('once');
  assert.equal(fading.of('often'), 1, 'halved after the window');
  assert.equal(fading.of('once'), 0, 'a key at one is dropped');
});

test('peek and holdsOrWouldKeep look without reordering, and count an ask only when the answer is no', () => {
  const plain = new Lru<number, number>(2, () => 1);
  plain.set(1, 1);
  plain.set(2, 2);
  assert.equal(plain.peek(1), 1);
  plain.set(3, 3);
  assert.equal(plain.peek(1), undefined, 'peeked at, 1 stayed the oldest and made room');
  assert.equal(plain.peek(2), 2);

  const frequencies = new Frequencies<number>(1000);
  const cache = new Lru<number, number>(2, () => 1, frequencies);
  for (const key of [1, 2]) {
    cache.get(key);
    cache.set(key, key);
  }
  assert.equal(cache.holdsOrWouldKeep(2, 1), true, 'kept');
  assert.equal(frequencies.of(2), 1, 'a yes counts nothing: the get() that follows does');
  assert.equal(cache.holdsOrWouldKeep(3, 1), false, 'asked for no more often than what it would push out');
  assert.equal(frequencies.of(3), 1, 'the no counts the ask');
  for (let i = 0; i < 2; i++) cache.holdsOrWouldKeep(3, 1);
  assert.equal(cache.holdsOrWouldKeep(3, 1), true, 'asked for three times against once: it would get in');
  assert.equal(frequencies.of(3), 3);
  assert.equal(cache.holdsOrWouldKeep(4, 3), false, 'a value over the bound');
});

test('an LRU tells its entries, their cost and its evictions; clear() forgets all without counting evictions', () => {
  const cache = new Lru<string, string>(10, (value) => value.length);
  cache.set('a', 'aaaa');
  cache.set('b', 'bbbb');
  assert.deepEqual([cache.size, cache.used, cache.evictions], [2, 8, 0]);
  cache.set('c', 'cccc');
  assert.deepEqual([cache.size, cache.used, cache.evictions], [2, 8, 1]);
  cache.resize(4);
  assert.deepEqual([cache.size, cache.used, cache.evictions], [1, 4, 2]);
  cache.clear();
  assert.deepEqual([cache.size, cache.used, cache.evictions], [0, 0, 2]);
  assert.equal(cache.get('c'), undefined);
});
