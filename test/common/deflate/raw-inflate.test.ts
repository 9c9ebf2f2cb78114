import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { deflateRawSync } from 'node:zlib';
import { InflateError, RawInflater } from '../../../common/deflate/raw-inflate.js';

test('one inflater inflates stream after stream and tells how much input each used', () => {
  const inflater = new RawInflater();
  for (const text of ['first', '', 'third record '.repeat(500)]) {
    const stream = deflateRawSync(Buffer.from(text));
    const got = inflater.inflate(Buffer.concat([stream, Buffer.from('trailing bytes')]), 1 << 20);
    assert.equal(got?.data.toString(), text);
    assert.equal(got?.consumed, stream.length);
  }
});

test('output larger than the scratch buffer is whole, and each result is a buffer of its own', () => {
  const inflater = new RawInflater();
  const big = randomBytes(300_000);
  const first = inflater.inflate(deflateRawSync(big), 1 << 20)!;
  const second = inflater.inflate(deflateRawSync(Buffer.from('small')), 1 << 20)!;
  assert.ok(first.data.equals(big));
  assert.equal(second.data.toString(), 'small');
});

test('input that ends inside the stream gives undefined', () => {
  const stream = deflateRawSync(randomBytes(5000));
  assert.equal(new RawInflater().inflate(stream.subarray(0, stream.length - 3), 1 << 20), undefined);
});

test('damage is an InflateError with zlib code, and the inflater works on afterwards', () => {
  const inflater = new RawInflater();
  assert.throws(
    () => inflater.inflate(Buffer.from([0xff, 0xff, 0xff, 0xff]), 1 << 20),
    (err: unknown) => err instanceof InflateError && err.code === 'Z_DATA_ERROR',
  );
  assert.equal(inflater.inflate(deflateRawSync(Buffer.from('after')), 100)?.data.toString(), 'after');
});

test('more output than maxOutput is ERR_BUFFER_TOO_LARGE; exactly maxOutput is fine', () => {
  const inflater = new RawInflater();
  const stream = deflateRawSync(Buffer.alloc(100_000, 'a'));
  assert.throws(() => inflater.inflate(stream, 99_999), (err: unknown) => err instanceof InflateError && err.code === 'ERR_BUFFER_TOO_LARGE');
  assert.equal(inflater.inflate(stream, 100_000)?.data.length, 100_000);
});

test('borrowed output is the scratch buffer: equal bytes, no copy, overwritten by the next stream', () => {
  const inflater = new RawInflater();
  const first = inflater.inflate(deflateRawSync(Buffer.from('first stream')), 1 << 20, true)!;
  assert.equal(first.data.toString(), 'first stream');
  const copied = inflater.inflate(deflateRawSync(Buffer.from('a copy')), 1 << 20)!;
  assert.notEqual(copied.data.buffer, first.data.buffer);
  const second = inflater.inflate(deflateRawSync(Buffer.from('SECOND')), 1 << 20, true)!;
  assert.equal(second.data.buffer, first.data.buffer);
  assert.equal(first.data.toString(), 'SECONDstream');
});
