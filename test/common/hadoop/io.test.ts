import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { isSherlockError } from '../../../common/errors.js';
import { compareText, DataReader, DataWriter, decodeModifiedUtf8, encodeModifiedUtf8, encodeText, hashPartition, textHash, textPayload } from '../../../common/hadoop/io.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/ /g, ''), 'hex');
const reader = (bytes: Buffer): DataReader => new DataReader(bytes, 'f', 100);

test('VLong encodes the spec test vectors, and reads them back', () => {
  const vectors: Array<[bigint, string]> = [
    [0n, '00'],
    [1n, '01'],
    [127n, '7F'],
    [-1n, 'FF'],
    [-112n, '90'],
    [-113n, '87 70'],
    [-129n, '87 80'],
    [128n, '8F 80'],
    [255n, '8F FF'],
    [256n, '8E 01 00'],
    [1000n, '8E 03 E8'],
    [65535n, '8E FF FF'],
    [65536n, '8D 01 00 00'],
    [2147483647n, '8C 7F FF FF FF'],
    [-2147483648n, '84 7F FF FF FF'],
    [1769822764917n, '8A 01 9C 11 A8 3F 75'],
    [2n ** 63n - 1n, '88 7F FF FF FF FF FF FF FF'],
    [-(2n ** 63n), '80 7F FF FF FF FF FF FF FF'],
  ];
  for (const [value, bytes] of vectors) {
    const w = new DataWriter();
    w.vlong(value);
    assert.equal(w.toBuffer().toString('hex').toUpperCase(), bytes.replace(/ /g, ''), String(value));
    assert.equal(reader(hex(bytes)).vlong(), value);
    if (value >= -(2n ** 31n) && value < 2n ** 31n) {
      assert.equal(reader(hex(bytes)).vint(), Number(value));
      const v = new DataWriter();
      v.vint(Number(value));
      assert.equal(v.toBuffer().toString('hex').toUpperCase(), bytes.replace(/ /g, ''), `vint ${value}`);
    }
  }
});

test('property: vint writes the bytes of vlong, and Text and strings the UTF-8 Buffer.from makes (lone surrogates too)', () => {
  fc.assert(
    fc.property(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.string({ unit: 'binary' }), (int, text) => {
      const a = new DataWriter(1);
      a.vint(int);
      a.text(text);
      a.writableString(text);
      const b = new DataWriter(1);
      b.vlong(BigInt(int));
      const utf8 = Buffer.from(text, 'utf8');
      b.vlong(utf8.length);
      b.bytes(utf8);
      b.i32(utf8.length);
      b.bytes(utf8);
      assert.ok(a.toBuffer().equals(b.toBuffer()));
    }),
    { numRuns: 1000 },
  );
  for (const text of ['\ud800', 'a\udc00b', '\u{1f600}', 'é'.repeat(200)]) {
    const w = new DataWriter(1);
    w.text(text);
    assert.ok(textPayload(w.toBuffer()).equals(Buffer.from(text)), JSON.stringify(text));
  }
});

test('a VInt that does not fit 32 bits, or a cut one, is an error at its offset', () => {
  assert.throws(() => reader(hex('8B 01 00 00 00 00')).vint(), (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_HADOOP') && err.place.offset === 100);
  const r = reader(hex('01 8E 01'));
  r.u8();
  assert.throws(() => r.vint(), (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_HADOOP') && err.place.file === 'f' && err.place.offset === 102);
  assert.equal(r.truncated, true);
});

test('Text is a VInt length and UTF-8; it hashes as Hadoop does and sorts by unsigned bytes', () => {
  assert.equal(encodeText('abc').toString('hex'), '03616263');
  assert.equal(encodeText('').toString('hex'), '00');
  const hash = (s: string): number => textHash(Buffer.from(s));
  assert.equal(hash(''), 1);
  assert.equal(hash('a'), 128);
  assert.equal(hash('http://example.com/'), 1496325699);
  assert.equal(hash('http://nutch.apache.org/'), 938713182);
  assert.equal(hash('https://x.com/GeorgiaTech'), -1820200032);
  assert.equal(hashPartition(Buffer.from('https://x.com/GeorgiaTech'), 2), 0);
  // JavaScript's UTF-16 order puts U+1F600 first; Hadoop's byte order puts U+FF61 first.
  assert.ok('\u{1f600}' < '\uff61');
  assert.ok(compareText(encodeText('\uff61'), encodeText('\u{1f600}')) < 0);
  assert.ok(compareText(encodeText('ab'), encodeText('abc')) < 0);
  assert.ok(compareText(encodeText('x'.repeat(200)), encodeText('y')) < 0, 'the length prefix is not compared');
});

test('property: numbers, Text and strings round-trip through DataWriter and DataReader', () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
      fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      fc.string({ unit: 'grapheme' }),
      fc.float({ noNaN: true }),
      fc.array(fc.option(fc.string(), { nil: null }), { maxLength: 4 }),
      fc.boolean(),
      (long, int, text, float, strings, nullArray) => {
        const w = new DataWriter(1);
        w.vlong(long);
        w.vint(int);
        w.i64(long);
        w.i32(int);
        w.text(text);
        w.f32(float);
        w.stringArray(nullArray ? null : strings);
        w.javaUtf(text);
        const r = reader(w.toBuffer());
        assert.equal(r.vlong(), long);
        assert.equal(r.vint(), int);
        assert.equal(r.i64(), long);
        assert.equal(r.i32(), int);
        assert.equal(r.text(), text);
        assert.equal(r.f32(), Math.fround(float));
        assert.deepEqual(r.stringArray(), nullArray ? null : strings);
        assert.equal(r.javaUtf(), text);
        r.end('test');
        assert.ok(textPayload(encodeText(text)).equals(Buffer.from(text)));
      },
    ),
    { numRuns: 500 },
  );
});

test('modified UTF-8 writes U+0000 as C0 80 and reads the legacy single 00 too', () => {
  assert.equal(encodeModifiedUtf8('a\0é').toString('hex'), '61c080c3a9');
  assert.equal(decodeModifiedUtf8(hex('61 00 c0 80 c3 a9')), 'a\0\0é');
});

test('lengths and counts are checked against the bytes left before anything is allocated', () => {
  const bad = [hex('8C 7F FF FF FF 41'), hex('7F 41')];
  for (const bytes of bad) assert.throws(() => reader(bytes).text(), (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_HADOOP') && err.place.offset === 100);
  assert.throws(() => reader(hex('7F FF FF FF')).stringArray(), /impossible count/);
  assert.throws(() => reader(hex('00 00 00 01 7F FF FF FF')).stringArray(), /runs past the end/);
  assert.throws(() => reader(hex('00 00 00 05')).count(4, 'things'), /impossible count 5/);
});
