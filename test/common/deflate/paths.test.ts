// The two deflate paths (common/deflate/libdeflate.ts): libdeflate's binding and the
// portable one (node:zlib and TypeScript) give the same inflated bytes,
// Adler-32s and CRCs, and each inflates what the other deflates. The
// compressed bytes may differ and nothing here compares them. Where the
// binding is not there (not built, or SHERLOCK_NATIVE=0) the tests comparing
// against it are skipped; the portable path's own checks still run.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { crc32, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import fc from 'fast-check';
import { adler32Portable, crc32ChunksPortable, deflatePath, libdeflate, loadBinding } from '../../../common/deflate/libdeflate.js';
import { GzipDeflater, RawDeflater } from '../../../common/deflate/raw-deflate.js';
import { RawInflater } from '../../../common/deflate/raw-inflate.js';

const native = libdeflate;
const noBinding = native === undefined ? `the binding is not in use (${deflatePath().why})` : false;

/** Inputs of 0 B – 100 KB, most of them small, some compressible. */
const input = fc.oneof(
  fc.uint8Array({ minLength: 0, maxLength: 2000 }),
  fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 3000 })).map(([piece, times]) => Buffer.concat(Array.from({ length: times }, () => piece))),
  fc.integer({ min: 0, max: 100_000 }).map((n) => randomBytes(n)),
);

test('deflatePath says the binding is in use exactly when libdeflate is set, and why not', () => {
  const path = deflatePath();
  assert.equal(path.native, native !== undefined);
  if (!path.native) assert.ok(path.why !== undefined && path.why.length > 0);
  if (process.env.SHERLOCK_NATIVE === '0') assert.deepEqual(path, { native: false, why: 'SHERLOCK_NATIVE=0' });
});

test("the portable Adler-32 is zlib's: the zlib stream's trailer, on lengths around NMAX (5552) and its multiples", () => {
  assert.equal(adler32Portable(Buffer.from('Wikipedia')), 0x11e60398);
  assert.equal(adler32Portable(new Uint8Array(0)), 1);
  for (const length of [1, 5551, 5552, 5553, 11_104, 11_105, 100_000]) {
    for (const data of [Buffer.alloc(length, 0xff), randomBytes(length)]) {
      const z = inflateSync(new RawDeflater(1, { portable: true }).zlib(data));
      assert.ok(z.equals(data));
      const stream = new RawDeflater(0, { portable: true }).zlib(data);
      assert.equal(adler32Portable(data), stream.readUInt32BE(stream.length - 4), `${length} bytes`);
    }
  }
});

test('property: the portable CRC-32 chunks are zlib.crc32 of each 512-byte piece, however the input is cut', () => {
  fc.assert(
    fc.property(input, fc.array(fc.integer({ min: 0, max: 3000 }), { maxLength: 8 }), (data, cuts) => {
      const sums = new Uint8Array(4 * Math.ceil(data.length / 512) + 4);
      const state = new Float64Array(2);
      let at = 0;
      let from = 0;
      for (const to of [...cuts.map((c) => Math.min(data.length, from + c)), data.length]) {
        at += 4 * crc32ChunksPortable(data.subarray(from, to), 512, state, sums, at);
        from = Math.max(from, to);
      }
      const whole = Math.floor(data.length / 512);
      assert.equal(at, 4 * whole);
      for (let i = 0; i < whole; i++) assert.equal(Buffer.from(sums).readUInt32BE(4 * i), crc32(data.subarray(512 * i, 512 * i + 512)));
      assert.equal(state[1], data.length % 512);
      assert.equal(state[0], data.length % 512 === 0 ? 0 : crc32(data.subarray(512 * whole)));
    }),
    { numRuns: 200 },
  );
});

test('property: the binding and the portable path give the same Adler-32 and CRC-32 chunks', { skip: noBinding }, () => {
  fc.assert(
    fc.property(input, fc.integer({ min: 1, max: 2000 }), (data, chunk) => {
      assert.equal(native!.adler32(data), adler32Portable(data));
      const [a, b] = [new Uint8Array(4 * Math.ceil(data.length / chunk)), new Uint8Array(4 * Math.ceil(data.length / chunk))];
      const [sa, sb] = [new Float64Array(2), new Float64Array(2)];
      const half = data.length >> 1;
      let na = native!.crc32Chunks(data.subarray(0, half), chunk, sa, a, 0);
      na += native!.crc32Chunks(data.subarray(half), chunk, sa, a, 4 * na);
      let nb = crc32ChunksPortable(data.subarray(0, half), chunk, sb, b, 0);
      nb += crc32ChunksPortable(data.subarray(half), chunk, sb, b, 4 * nb);
      assert.equal(na, nb);
      assert.deepEqual(a, b);
      assert.deepEqual(sa, sb);
    }),
    { numRuns: 300 },
  );
});

test('property: either inflater gives the same bytes and consumed count for streams either deflater made, with bytes after them', { skip: noBinding }, () => {
  const inflaters = [new RawInflater(), new RawInflater({ portable: true })];
  for (const level of [0, 1, 6, 9, 12]) {
    const deflaters = [new RawDeflater(level), new RawDeflater(level, { portable: true })];
    fc.assert(
      fc.property(input, (data) => {
        for (const deflater of deflaters) {
          const stream = deflater.deflate(data);
          const adler = deflater.adler32;
          assert.equal(adler, adler32Portable(data));
          assert.ok(inflateRawSync(stream).equals(data));
          const followed = Buffer.concat([stream, Buffer.from('next record')]);
          for (const inflater of inflaters) {
            const got = inflater.inflate(followed, data.length)!;
            assert.ok(got.data.equals(data), `level ${level}`);
            assert.equal(got.consumed, stream.length);
          }
        }
      }),
      { numRuns: level === 1 ? 60 : 15 },
    );
  }
});

test('both paths say the same about damage, a stream cut short and a stream too large', { skip: noBinding }, () => {
  const [nativeInflater, portable] = [new RawInflater(), new RawInflater({ portable: true })];
  const outcome = (inflater: RawInflater, stream: Uint8Array, max: number) => {
    try {
      const got = inflater.inflate(stream, max);
      return got === undefined ? 'cut short' : got.data.toString('base64');
    } catch (err) {
      return (err as { code?: string }).code;
    }
  };
  const data = randomBytes(20_000);
  const stream = new RawDeflater(6).deflate(data);
  for (const [bytes, max] of [
    [stream, data.length],
    [stream, data.length - 1],
    [stream.subarray(0, stream.length - 5), data.length],
    [Buffer.from([0xff, 0xff, 0xff, 0xff]), 100],
  ] as const) {
    assert.equal(outcome(nativeInflater, bytes, max), outcome(portable, bytes, max));
  }
  for (let i = 0; i < 200; i++) {
    const damaged = Buffer.from(stream);
    damaged[Math.floor(Math.random() * damaged.length)]! ^= 1 << i % 8;
    assert.equal(outcome(nativeInflater, damaged, data.length), outcome(portable, damaged, data.length), `flip ${i}`);
  }
});

test('zlib streams and gzip members from either path read back to the input; a portable deflater is stateless too', () => {
  for (const options of [{}, { portable: true }]) {
    for (const level of [0, 1, 6, 9, 10, 12]) {
      const deflater = new RawDeflater(level, options);
      const gzip = new GzipDeflater(level, options);
      for (const data of [Buffer.alloc(0), Buffer.from('some text '.repeat(3000)), randomBytes(70_000)]) {
        const z = deflater.zlib(data);
        assert.ok(inflateSync(z).equals(data));
        assert.ok(z.equals(new RawDeflater(level, options).zlib(data)));
        assert.ok(gunzipSync(gzip.member(data)).equals(data));
      }
    }
  }
});

test('loadBinding loads the binding whatever SHERLOCK_NATIVE says, or says why not', () => {
  const loaded = loadBinding();
  if (loaded instanceof Error) assert.ok(deflatePath().native === false);
  else assert.equal(loaded.adler32(Buffer.from('Wikipedia')), 0x11e60398);
});
