import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import test from 'node:test';
import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import {
  adler32,
  BUCKET_TYPE,
  BucketObject,
  decodeBucket,
  decodeVarint,
  delinearize,
  encodeBucket,
  encodeVarint,
  linearize,
  MAX_BODY_LENGTH,
  MAX_DEPTH,
  varintSize,
  type Bucket,
  type BucketType,
  type Item,
} from '../../../common/bucket/bucket.js';
import { SherlockError } from '../../../common/errors.js';

const TYPES = Object.values(BUCKET_TYPE);
const textual = (type: BucketType) => type === BUCKET_TYPE.PLAIN || type === BUCKET_TYPE.V30;

/** Names and values in a comparable form (hex values, children nested). */
type Plain = Array<[string, string | Plain]>;
function plain(object: BucketObject): Plain {
  return object.items.map((item) => [item.name, item.child === undefined ? item.value.toString('hex') : plain(item.child)]);
}

function objectArb(forText: boolean): fc.Arbitrary<BucketObject> {
  const byte = (exclude: number[]) =>
    fc
      .integer({ min: 0, max: 255 })
      .filter((c) => !exclude.includes(c))
      .map((c) => String.fromCharCode(c));
  const name = byte(forText ? [0x0a, 0x28, 0x29] : [0x28, 0x29]);
  const childName = byte(forText ? [0x0a] : []);
  const value = fc
    .oneof(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ minLength: 120, maxLength: 3000 }), fc.constant(new Uint8Array(0)))
    .map((bytes) => Buffer.from(bytes))
    .filter((bytes) => !forText || !bytes.includes(0x0a));
  const attr: fc.Arbitrary<Item> = fc.record({ name, value });
  const { object } = fc.letrec<{ object: BucketObject; item: Item }>((tie) => ({
    item: fc.oneof({ maxDepth: 3 }, attr, fc.record({ name: childName, child: tie('object') })),
    object: fc.array(tie('item'), { maxLength: 6 }).map((items) => new BucketObject(items)),
  }));
  return object;
}

function bucketArb(type: BucketType): fc.Arbitrary<Bucket> {
  const object = objectArb(textual(type));
  const header = type === BUCKET_TYPE.PLAIN ? fc.constant(new BucketObject()) : object;
  return fc.record({ header, body: object });
}

/** Decodes, asserting that a failure is a SherlockError naming an offset inside the data. */
function decodeOrCorrupt(type: BucketType, data: Buffer): Bucket | SherlockError {
  try {
    return decodeBucket(type, data);
  } catch (err) {
    assert.ok(err instanceof SherlockError, `not a SherlockError: ${String(err)}`);
    assert.equal(err.code, 'SHERLOCK_CORRUPT_BUCKET');
    assert.ok(err.place.offset !== undefined && err.place.offset >= 0 && err.place.offset <= data.length, `offset ${err.place.offset}`);
    return err;
  }
}

function expectCorrupt(run: () => unknown, offset: number, message: RegExp): void {
  assert.throws(run, (err: unknown) => {
    assert.ok(err instanceof SherlockError);
    assert.equal(err.code, 'SHERLOCK_CORRUPT_BUCKET');
    assert.equal(err.place.offset, offset);
    assert.match(err.message, message);
    return true;
  });
}

test('the varint takes 1–6 bytes at the UTF-8 boundaries and reads back', () => {
  const cases: Array<[number, number]> = [
    [0, 1],
    [127, 1],
    [128, 2],
    [2047, 2],
    [2048, 3],
    [65535, 3],
    [65536, 4],
    [2 ** 21 - 1, 4],
    [2 ** 21, 5],
    [2 ** 26 - 1, 5],
    [2 ** 26, 6],
    [2 ** 31 - 1, 6],
  ];
  for (const [value, size] of cases) {
    const bytes = encodeVarint(value);
    assert.equal(bytes.length, size, `size of ${value}`);
    assert.equal(varintSize(value), size);
    assert.deepEqual(decodeVarint(Buffer.concat([bytes, Buffer.of(0x41)]), 0), { value, next: size });
  }
  assert.deepEqual([...encodeVarint(2 ** 31 - 1)], [0xfd, 0xbf, 0xbf, 0xbf, 0xbf, 0xbf]);
  assert.throws(() => encodeVarint(2 ** 31), RangeError);
  assert.throws(() => encodeVarint(-1), RangeError);
});

test('the varint decoder rejects continuation leads, 0xFE/0xFF, overlong forms, bad continuations and truncation', () => {
  const at = (hex: string, offset: number, message: RegExp) =>
    expectCorrupt(() => decodeVarint(Buffer.from(hex, 'hex'), 0), offset, message);
  at('80', 0, /cannot start/);
  at('fe8080808080', 0, /cannot start/);
  at('ff', 0, /cannot start/);
  at('c080', 0, /overlong/);
  at('e08080', 0, /overlong/);
  at('fc8080808080', 0, /overlong/);
  at('e0a0', 0, /runs past the end/);
  at('e041bf', 1, /continuation/);
  at('', 0, /end of data/);
  expectCorrupt(() => decodeVarint(Buffer.from('41e0a080', 'hex'), 1, 3), 1, /runs past the end/);
});

test('Adler-32 matches the known value and zlib over large inputs', () => {
  assert.equal(adler32(Buffer.from('Wikipedia')), 0x11e60398);
  assert.equal(adler32(Buffer.alloc(0)), 1);
  for (const data of [randomBytes(1), randomBytes(5552), randomBytes(5553), randomBytes(100_000), Buffer.alloc(100_000, 0xff)]) {
    const zlibStream = deflateSync(data); // RFC 1950: a zlib stream ends in the big-endian Adler-32
    assert.equal(adler32(data), zlibStream.readUInt32BE(zlibStream.length - 4), `${data.length} bytes`);
  }
});

for (const type of TYPES) {
  test(`${type.toString(16)} round-trips arbitrary objects, binary and empty values and nested children`, () => {
    fc.assert(
      fc.property(bucketArb(type), (bucket) => {
        const bytes = encodeBucket(type, bucket);
        const decoded = decodeBucket(type, bytes);
        assert.deepEqual(plain(decoded.header), plain(bucket.header));
        assert.deepEqual(plain(decoded.body), plain(bucket.body));
        assert.deepEqual(encodeBucket(type, decoded), bytes, 'the encoding is canonical');
      }),
      { numRuns: 150 },
    );
  });

  test(`${type.toString(16)} decoding of any prefix or bit flip throws only SherlockError with an offset inside`, () => {
    fc.assert(
      fc.property(bucketArb(type), fc.nat(), fc.nat(7), (bucket, at, bit) => {
        const bytes = encodeBucket(type, bucket);
        decodeOrCorrupt(type, bytes.subarray(0, at % (bytes.length + 1)));
        if (bytes.length === 0) return;
        const flipped = Buffer.from(bytes);
        flipped[at % bytes.length]! ^= 1 << bit;
        decodeOrCorrupt(type, flipped);
      }),
      { numRuns: 200 },
    );
  });
}

test('the deflated body is guarded: every truncation is rejected, a flip after the header is rejected or harmless', () => {
  const type = BUCKET_TYPE.V33_DEFLATE;
  fc.assert(
    fc.property(bucketArb(type), fc.nat(), fc.nat(7), (bucket, at, bit) => {
      const bytes = encodeBucket(type, bucket);
      const bodyStart = encodeBucket(BUCKET_TYPE.V33, { header: bucket.header, body: new BucketObject() }).length;
      const cut = bodyStart + (at % (bytes.length - bodyStart));
      assert.ok(decodeOrCorrupt(type, bytes.subarray(0, cut)) instanceof SherlockError, `cut at ${cut} accepted`);
      const flipped = Buffer.from(bytes);
      const where = bodyStart + (at % (bytes.length - bodyStart));
      flipped[where]! ^= 1 << bit;
      const result = decodeOrCorrupt(type, flipped);
      // Deflate ignores a few padding bits; anything it accepts must be the original body.
      if (!(result instanceof SherlockError)) assert.deepEqual(plain(result.body), plain(bucket.body), `flip at ${where} accepted`);
    }),
    { numRuns: 300 },
  );
  const header = new BucketObject().add('U', 'http://example.com/');
  const bytes = encodeBucket(type, { header, body: new BucketObject().add('X', randomBytes(300)).add('T', 'text') });
  for (let cut = 0; cut < bytes.length; cut++) {
    assert.ok(decodeOrCorrupt(type, bytes.subarray(0, cut)) instanceof SherlockError, `cut at ${cut}`);
  }
});

test('decoding errors name the offset of the failure', () => {
  const v33 = (hex: string) => () => decodeBucket(BUCKET_TYPE.V33, Buffer.from(hex, 'hex'));
  expectCorrupt(v33('0441424355'), 5, /header not ended/);
  expectCorrupt(v33('00034142'), 1, /runs past the end/);
  expectCorrupt(v33('000241580041'), 4, /separator 0x00 in a body/);
  expectCorrupt(v33('000129'), 1, /without a matching/);
  expectCorrupt(v33('00025228024141'), 1, /never closed/);
  expectCorrupt(v33('00035253280129'), 1, /holds 2 bytes/);
  expectCorrupt(v33('000252280241290229'), 4, /closer '\)' holds 1 bytes/);
  const plainBytes = (text: string) => () => decodeBucket(BUCKET_TYPE.PLAIN, Buffer.from(text, 'latin1'));
  expectCorrupt(plainBytes('Uone\nTtwo'), 5, /not ended by LF/);
  expectCorrupt(plainBytes('Uone\n\nTtwo\n'), 5, /empty line/);
  expectCorrupt(plainBytes('(R\nxa\n'), 0, /never closed/);
  expectCorrupt(() => decodeBucket(BUCKET_TYPE.V30, Buffer.from('Uone\nTtwo\n')), 10, /header not ended/);
  expectCorrupt(() => decodeBucket(0x80000007, Buffer.alloc(0)), 0, /unknown bucket type 0x80000007/);
});

test('a child is written as libucw does: a ( attribute with the name, the items, an empty ) attribute', () => {
  const body = new BucketObject().add('T', 'a').addChild('R', new BucketObject().add('x', 'b'));
  const bucket = { header: new BucketObject(), body };
  assert.equal(encodeBucket(BUCKET_TYPE.PLAIN, bucket).toString('latin1'), 'Ta\n(R\nxb\n)\n');
  assert.equal(encodeBucket(BUCKET_TYPE.V33, bucket).toString('hex'), '00' + '026154' + '025228' + '026278' + '0129');
});

test('the V3.3 deflate layout: header, 0, u32 LE length, u32 LE Adler-32, raw deflate', () => {
  const header = new BucketObject().add('U', 'http://example.com/');
  const body = new BucketObject().add('X', 'hello '.repeat(50));
  const bytes = encodeBucket(BUCKET_TYPE.V33_DEFLATE, { header, body });
  const bodyV33 = encodeBucket(BUCKET_TYPE.V33, { header: new BucketObject(), body }).subarray(1);
  const at = encodeBucket(BUCKET_TYPE.V33, { header, body: new BucketObject() }).length;
  assert.equal(bytes.readUInt32LE(at), bodyV33.length);
  assert.equal(bytes.readUInt32LE(at + 4), adler32(bodyV33));
  assert.ok(bytes.length < bodyV33.length, 'compressed');

  const badAdler = Buffer.from(bytes);
  badAdler[at + 4]! ^= 0x10;
  expectCorrupt(() => decodeBucket(BUCKET_TYPE.V33_DEFLATE, badAdler), at + 4, /Adler-32/);
  const badLength = Buffer.from(bytes);
  badLength.writeUInt32LE(bodyV33.length + 1, at);
  expectCorrupt(() => decodeBucket(BUCKET_TYPE.V33_DEFLATE, badLength), at, /inflates to/);
  const shortLength = Buffer.from(bytes);
  shortLength.writeUInt32LE(bodyV33.length - 1, at);
  expectCorrupt(() => decodeBucket(BUCKET_TYPE.V33_DEFLATE, shortLength), at + 8, /deflated body/);
  expectCorrupt(() => decodeBucket(BUCKET_TYPE.V33_DEFLATE, Buffer.concat([bytes, Buffer.of(1)])), at + 8, /after the end of the stream/);
  const hugeLength = Buffer.from(bytes);
  hugeLength.writeUInt32LE(MAX_BODY_LENGTH + 1, at);
  expectCorrupt(() => decodeBucket(BUCKET_TYPE.V33_DEFLATE, hugeLength), at, /over the limit/);
});

test('errors name the file and absolute offset when the caller says where the bucket lies', () => {
  const data = Buffer.from('000341', 'hex');
  assert.throws(
    () => decodeBucket(BUCKET_TYPE.V33, data, { file: 'buckets', offset: 1000 }),
    (err: unknown) => err instanceof SherlockError && err.place.file === 'buckets' && err.place.offset === 1001,
  );
});

test('textual encoders refuse an LF with an error naming the attribute, and PLAIN refuses a header', () => {
  const body = new BucketObject().add('T', 'ok').add('X', 'two\nlines');
  for (const type of [BUCKET_TYPE.PLAIN, BUCKET_TYPE.V30]) {
    assert.throws(() => encodeBucket(type, { header: new BucketObject(), body }), /attribute "X".*LF/);
  }
  assert.throws(() => encodeBucket(BUCKET_TYPE.PLAIN, { header: new BucketObject().add('U', 'x'), body }), /no header/);
  const v33 = encodeBucket(BUCKET_TYPE.V33, { header: new BucketObject(), body });
  assert.equal(decodeBucket(BUCKET_TYPE.V33, v33).body.string('X'), 'two\nlines', 'V3.3 holds any byte');
});

test('names are single bytes and ( ) are reserved for children', () => {
  assert.throws(() => new BucketObject().add('UR', 'x'), RangeError);
  assert.throws(() => new BucketObject().add('(', 'x'), RangeError);
  assert.throws(() => new BucketObject().add('\u0100', 'x'), RangeError);
  new BucketObject().add('\u00ff', 'x').addChild(')', new BucketObject());
});

test('children nested deeper than the limit are refused', () => {
  const nest = (depth: number) => {
    let object = new BucketObject().add('x', 'leaf');
    for (let i = 0; i < depth; i++) object = new BucketObject().addChild('c', object);
    return encodeBucket(BUCKET_TYPE.V33, { header: new BucketObject(), body: object });
  };
  decodeBucket(BUCKET_TYPE.V33, nest(MAX_DEPTH));
  expectCorrupt(() => decodeBucket(BUCKET_TYPE.V33, nest(MAX_DEPTH + 1)), 1 + 3 * MAX_DEPTH, /nested deeper/);
});

test('accessors find the first value, every value and the children of a name', () => {
  const body = new BucketObject()
    .add('R', 'http://a/')
    .addChild('R', new BucketObject().add('x', 'anchor'))
    .add('R', Buffer.from([0xff, 0x00]))
    .add('T', 'žluťoučký');
  assert.equal(body.string('R'), 'http://a/');
  assert.equal(body.string('T'), 'žluťoučký');
  assert.deepEqual(body.all('R'), [Buffer.from('http://a/'), Buffer.from([0xff, 0x00])]);
  assert.equal(body.children('R').length, 1);
  assert.equal(body.children('R')[0]!.string('x'), 'anchor');
  assert.equal(body.first('Q'), undefined);
  assert.deepEqual(body.all('Q'), []);
});

test('linearized objects carry their type in the first byte and round-trip', () => {
  const object = new BucketObject().add('M', 'meta').addChild('R', new BucketObject().add('x', 'y'));
  for (const type of [BUCKET_TYPE.V33, BUCKET_TYPE.V33_DEFLATE] as const) {
    const bytes = linearize(type, object);
    assert.equal(bytes[0], type - BUCKET_TYPE.PLAIN);
    assert.equal(bytes[1], 0, 'empty header');
    assert.deepEqual(plain(delinearize(bytes)), plain(object));
  }
  expectCorrupt(() => delinearize(Buffer.from('0100', 'hex')), 0, /linearized object of type v3.0/);
  expectCorrupt(() => delinearize(Buffer.from('020141', 'hex')), 3, /header not ended/);
});
