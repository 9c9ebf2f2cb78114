/**
 * Token buckets (searcher/limits.ts): a burst at once, then the rate;
 * the wait until the next token; rate 0 is no limit; a reload's new rate and
 * burst apply to a bucket already made; full buckets are forgotten.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import { KeyedBuckets, TokenBucket } from '../../searcher/limits.js';

test('a bucket gives its burst at once, then one token per 1/rate seconds', () => {
  const bucket = new TokenBucket();
  for (let i = 0; i < 3; i++) assert.equal(bucket.take(2, 3, 1000), 0);
  assert.equal(bucket.take(2, 3, 1000), 500);
  assert.equal(bucket.take(2, 3, 1250), 250);
  assert.equal(bucket.take(2, 3, 1500), 0);
  assert.equal(bucket.take(2, 3, 1500), 500);
});

test('rate 0 is no limit', () => {
  const bucket = new TokenBucket();
  for (let i = 0; i < 1000; i++) assert.equal(bucket.take(0, 1, 0), 0);
});

test('a smaller burst from a reload applies to a bucket already full', () => {
  const bucket = new TokenBucket();
  assert.equal(bucket.take(1, 100, 0), 0);
  assert.equal(bucket.take(1, 2, 0), 0);
  assert.equal(bucket.take(1, 2, 0), 0);
  assert.equal(bucket.take(1, 2, 0), 1000);
});

test('keyed buckets are separate per key, and full ones are forgotten on sweep', () => {
  const buckets = new KeyedBuckets();
  assert.equal(buckets.take('a', 1, 1, 0), 0);
  assert.equal(buckets.take('a', 1, 1, 0), 1000);
  assert.equal(buckets.take('b', 1, 1, 0), 0);
  buckets.sweep(1, 1, 500);
  assert.equal(buckets.size, 2);
  buckets.sweep(1, 1, 1000);
  assert.equal(buckets.size, 0);
});
