import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { adler32 } from '../../../common/bucket/bucket.js';
import { GzipDeflater, RawDeflater } from '../../../common/deflate/raw-deflate.js';

test("one deflater makes, stream after stream, raw streams zlib's inflater reads back, and each Adler-32", () => {
  for (const level of [0, 1, 6, 12]) {
    const deflater = new RawDeflater(level);
    // Empty, small, compressible past the scratch buffer, incompressible past it (the output grows).
    for (const input of [Buffer.alloc(0), Buffer.from('first'), Buffer.from('third record '.repeat(20_000)), randomBytes(300_000), Buffer.from('small again')]) {
      const got = deflater.deflate(input);
      assert.ok(inflateRawSync(got).equals(input), `level ${level}, ${input.length} bytes`);
      assert.equal(deflater.adler32, adler32(input));
    }
  }
  // Compressible input shrinks: the level is not ignored.
  const text = Buffer.from('third record '.repeat(20_000));
  assert.ok(new RawDeflater(1).deflate(text).length < text.length / 50);
  assert.ok(new RawDeflater(0).deflate(text).length > text.length);
});

test('levels outside 0–12 are refused', () => {
  for (const level of [-1, 13, 1.5]) assert.throws(() => new RawDeflater(level), RangeError);
  assert.throws(() => new GzipDeflater(13), RangeError);
});

const WORDS = 'the of and to in is you that it was for on are as with his they at be this have from or one had by word but not what all were we when your can said there'.split(' ');

/** `length` bytes of one kind, from a seed: words and links (HTML-like text), a 3-letter alphabet, or random bytes. */
function makeInput(length: number, kind: 'words' | 'abc' | 'bytes', seed: number): Buffer {
  const noise = createHash('shake256', { outputLength: Math.max(1, length) }).update(String(seed)).digest();
  if (kind === 'bytes') return noise.subarray(0, length);
  if (kind === 'abc') return Buffer.from(noise.map((b) => 97 + (b % 3)).subarray(0, length));
  let text = '';
  for (let i = 0; text.length < length; i++) text += (noise[i]! % 20 === 0 ? `<a href="http://site${noise[i]}.example/">` : '') + WORDS[noise[i]! % WORDS.length]! + (noise[i]! % 10 === 0 ? '\n' : ' ');
  return Buffer.from(text.slice(0, length));
}

/** Inputs of 0 B – 70 KB (past the 64 KiB window), most of them small (as record values are). */
const input = fc
  .tuple(fc.integer({ min: 0, max: 1000 }), fc.constantFrom('words' as const, 'abc' as const, 'bytes' as const), fc.integer())
  .map(([k, kind, seed]) => makeInput(Math.floor(70_000 ** (k / 1000)), kind, seed));

test("property: a reused deflater's streams are a fresh one's, whatever it deflated before, and zlib reads each back", () => {
  // Files must not depend on which values a thread deflated before (the Nutch export's are the same bytes whatever its threads).
  for (const level of [1, 6, 9]) {
    fc.assert(
      fc.property(fc.array(input, { minLength: 100, maxLength: 100 }), (inputs) => {
        const deflater = new RawDeflater(level);
        const gzip = new GzipDeflater(level);
        for (const [i, data] of inputs.entries()) {
          const what = `level ${level}, input ${i} of ${data.length} bytes`;
          const zlibStream = deflater.zlib(data);
          assert.ok(zlibStream.equals(new RawDeflater(level).zlib(data)), what);
          assert.ok(inflateSync(zlibStream).equals(data), what);
          const raw = deflater.deflate(data);
          assert.ok(raw.equals(zlibStream.subarray(2, -4)), `${what}, raw`);
          const member = gzip.member(data);
          assert.ok(member.equals(new GzipDeflater(level).member(data)), `${what}, gzip`);
          assert.ok(gunzipSync(member).equals(data), `${what}, gzip`);
        }
      }),
      { numRuns: level === 1 ? 10 : 2 },
    );
  }
});

test('each result is a buffer of its own', () => {
  const deflater = new RawDeflater(1);
  const first = deflater.deflate(Buffer.from('the first stream '.repeat(10)));
  const copy = Buffer.from(first);
  deflater.zlib(Buffer.from('a second, different stream'));
  assert.ok(first.equals(copy));
});

test('one gzip deflater makes, member after member, members gunzip reads back', () => {
  for (const level of [1, undefined, 9]) {
    const deflater = new GzipDeflater(level);
    const members: Buffer[] = [];
    for (const input of [Buffer.alloc(0), Buffer.from('first'), Buffer.from('third record '.repeat(20_000)), randomBytes(300_000), Buffer.from('small again')]) {
      const got = deflater.member(input);
      assert.ok(gunzipSync(got).equals(input), `level ${level}, ${input.length} bytes`);
      members.push(got);
    }
    // Each a member of its own: concatenated, they read back as the inputs in a row.
    assert.equal(gunzipSync(Buffer.concat(members)).length, 5 + 13 * 20_000 + 300_000 + 11);
  }
});
