import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { deflateRawSync, deflateSync } from 'node:zlib';
import { adler32 } from '../../common/bucket.js';
import { RawDeflater } from '../../common/raw-deflate.js';

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

/** A seeded generator (mulberry32), so that a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'the of and to in is you that it was for on are as with his they at be this have from or one had by word but not what all were we when your can said there'.split(' ');

/** Inputs of 0 B – 100 KiB (most of them small, as record values are): words, HTML, bytes of a small alphabet, random bytes. */
function inputs(count: number, seed: number): Buffer[] {
  const next = random(seed);
  return Array.from({ length: count }, () => {
    const length = Math.floor(Math.exp(next() * Math.log(100_000)));
    const kind = next();
    if (kind < 0.5) {
      let text = '';
      while (text.length < length) text += (next() < 0.05 ? `<a href="http://site${Math.floor(next() * 99)}.example/">` : '') + WORDS[Math.floor(next() * WORDS.length)]! + (next() < 0.1 ? '\n' : ' ');
      return Buffer.from(text.slice(0, length));
    }
    const out = Buffer.alloc(length);
    const alphabet = kind < 0.8 ? 3 : 256;
    for (let i = 0; i < length; i++) out[i] = 97 + Math.floor(next() * alphabet);
    return out;
  });
}

test("a reused deflater's streams are a fresh engine's, whatever it deflated before (zlib keeps the window's bytes on reset)", () => {
  // With a bare reset about one input in 60 of these deflates differently: the match finder reads stale bytes past the input's end.
  for (const level of [1, 6, 9]) {
    const deflater = new RawDeflater(level);
    const all = inputs(level === 1 ? 2000 : 500, level);
    for (const [i, input] of all.entries()) {
      assert.ok(deflater.zlib(input).equals(deflateSync(input, { level })), `level ${level}, input ${i} of ${input.length} bytes, after one of ${all[i - 1]?.length} bytes`);
      assert.ok(deflater.deflate(input).equals(deflateRawSync(input, { level })), `level ${level}, raw, input ${i} of ${input.length} bytes`);
    }
  }
});

test('each result is a buffer of its own', () => {
  const deflater = new RawDeflater(1);
  const first = deflater.deflate(Buffer.from('the first stream '.repeat(10)));
  const copy = Buffer.from(first);
  deflater.zlib(Buffer.from('a second, different stream'));
  assert.ok(first.equals(copy));
});
