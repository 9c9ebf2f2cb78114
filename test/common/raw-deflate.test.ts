import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { deflateRawSync, gunzipSync, gzipSync } from 'node:zlib';
import { adler32 } from '../../common/bucket.js';
import { GzipDeflater, RawDeflater } from '../../common/raw-deflate.js';

test('one deflater makes, stream after stream, the bytes deflateRawSync makes at its level, and each Adler-32', () => {
  for (const level of [1, 6]) {
    const deflater = new RawDeflater(level);
    // Empty, small, compressible past the scratch buffer, incompressible past it (the output grows).
    for (const input of [Buffer.alloc(0), Buffer.from('first'), Buffer.from('third record '.repeat(20_000)), randomBytes(300_000), Buffer.from('small again')]) {
      const got = deflater.deflate(input);
      assert.ok(got.equals(deflateRawSync(input, { level })), `level ${level}, ${input.length} bytes`);
      assert.equal(deflater.adler32, adler32(input));
    }
  }
});

test('each result is a buffer of its own', () => {
  const deflater = new RawDeflater(1);
  const first = deflater.deflate(Buffer.from('the first stream '.repeat(10)));
  const copy = Buffer.from(first);
  deflater.deflate(Buffer.from('a second, different stream'));
  assert.ok(first.equals(copy));
});

test('one gzip deflater makes, member after member, the bytes gzipSync makes at its level', () => {
  for (const level of [1, undefined, 9]) {
    const deflater = new GzipDeflater(level);
    const members: Buffer[] = [];
    for (const input of [Buffer.alloc(0), Buffer.from('first'), Buffer.from('third record '.repeat(20_000)), randomBytes(300_000), Buffer.from('small again')]) {
      const got = deflater.member(input);
      assert.ok(got.equals(gzipSync(input, level === undefined ? {} : { level })), `level ${level}, ${input.length} bytes`);
      members.push(got);
    }
    // Each a member of its own: concatenated, they read back as the inputs in a row.
    assert.equal(gunzipSync(Buffer.concat(members)).length, 5 + 13 * 20_000 + 300_000 + 11);
  }
});
