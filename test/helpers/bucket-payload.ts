/**
 * Deterministic buckets for the bucket-file tests: a writer in a child process
 * and the parent checking its work derive the same bytes from (seed, index).
 */

import { mulberry32 as random } from '../../bench/queries.js';
import { BUCKET_TYPE, BucketObject, encodeBucket, type BucketType } from '../../common/bucket/bucket.js';

/** The bench's seeded generator: the crash tests' writers and checkers derive the same bytes from it. */
export { random };

const TYPES = Object.values(BUCKET_TYPE);

/**
 * Bucket `index` of writer run `seed`: a real bucket of one of the four types
 * (cycling), its URL naming seed and index, its text 0 to `maxText` random
 * bytes, often short, sometimes empty.
 */
export function bucketPayload(seed: number, index: number, maxText = 12_000): { type: BucketType; data: Buffer } {
  const next = random(seed * 1_000_003 + index);
  const roll = next();
  const length = roll < 0.05 ? 0 : roll < 0.6 ? Math.floor(next() * 300) : Math.floor(next() * maxText);
  const text = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) {
    const byte = Math.floor(next() * 256);
    text[i] = byte === 0x0a ? 0x20 : byte; // the textual types cannot hold an LF
  }
  const type = TYPES[index % TYPES.length]!;
  const url = `http://crash.test/${seed}/${index}`;
  const bucket =
    type === BUCKET_TYPE.PLAIN
      ? { header: new BucketObject(), body: new BucketObject().add('U', url).add('X', text) }
      : { header: new BucketObject().add('U', url), body: new BucketObject().add('X', text) };
  return { type, data: encodeBucket(type, bucket) };
}
