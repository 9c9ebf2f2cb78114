import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';
import { crc32 } from 'node:zlib';
import { BUCKET_TYPE, BucketObject, encodeBucket } from '../../../common/bucket/bucket.js';
import {
  ALIGN,
  BucketReader,
  BucketWriter,
  DELETED_OID,
  MAX_BUCKET_LENGTH,
  lockPath,
  oidMapPath,
  readOidMap,
  type Damage,
} from '../../../common/bucket/file.js';
import { isSherlockError, type ErrorCode } from '../../../common/errors.js';
import { scratchDir } from '../../helpers/paths.js';

const V33 = BUCKET_TYPE.V33;

function bucketFile(t: TestContext): string {
  return join(scratchDir(t), 'gather', 'buckets');
}

/** A bucket file holding `payloads` (closed); returns the oids. */
function build(path: string, payloads: Buffer[]): number[] {
  const writer = BucketWriter.open(path);
  try {
    return payloads.map((data) => writer.append(V33, data));
  } finally {
    writer.close();
  }
}

function withReader<T>(path: string, body: (reader: BucketReader) => T): T {
  const reader = BucketReader.open(path);
  try {
    return body(reader);
  } finally {
    reader.close();
  }
}

function withWriter<T>(path: string, body: (writer: BucketWriter) => T): T {
  const writer = BucketWriter.open(path);
  try {
    return body(writer);
  } finally {
    writer.close();
  }
}

function throwsCode(run: () => unknown, code: ErrorCode, place: { offset?: number; message?: RegExp } = {}): void {
  assert.throws(run, (err: unknown) => {
    assert.ok(isSherlockError(err, code), `expected ${code}, got ${String(err)}`);
    if (place.offset !== undefined) assert.equal(err.place.offset, place.offset, err.message);
    if (place.message !== undefined) assert.match(err.message, place.message);
    return true;
  });
}

/** A decodable V3.3 bucket with `size` random bytes of text. */
function doc(size: number): Buffer {
  const header = new BucketObject().add('U', `http://example.com/${size}`);
  return encodeBucket(V33, { header, body: new BucketObject().add('X', randomBytes(size)) });
}

/** Bytes a bucket of `length` data bytes occupies. */
const span = (length: number) => Math.ceil((16 + length + 8) / ALIGN) * ALIGN;

test('the bytes on disk follow the table in the module comment', (t) => {
  const path = bucketFile(t);
  const data = Buffer.from('0241550002415854', 'hex');
  build(path, [data, Buffer.alloc(200, 7)]);
  const bytes = readFileSync(path);
  assert.equal(bytes.toString('latin1', 0, 16), 'SHERLOCK-BUCKETS');
  assert.deepEqual([bytes.readUInt32LE(16), bytes.readUInt32LE(20), bytes.readUInt32LE(24)], [1, 7, 0]);
  assert.equal(bytes.readUInt32LE(28), crc32(bytes.subarray(0, 28)));
  assert.ok(bytes.subarray(32, 128).every((b) => b === 0));
  assert.deepEqual([0, 4, 8, 12].map((at) => bytes.readUInt32LE(128 + at)), [0xdeadf00d, 1, data.length, V33]);
  assert.deepEqual(bytes.subarray(144, 144 + data.length), data);
  const fields = Buffer.alloc(8);
  fields.writeUInt32LE(data.length, 0);
  fields.writeUInt32LE(V33, 4);
  assert.equal(bytes.readUInt32LE(144 + data.length), crc32(fields, crc32(data)), 'CRC of the data, then length and type');
  assert.equal(bytes.readUInt32LE(148 + data.length), 0xfeedcafe);
  assert.ok(bytes.subarray(152 + data.length, 256).every((b) => b === 0), 'zero padding');
  assert.equal(bytes.readUInt32LE(256 + 4), 2, 'the second bucket has oid 256 >> 7');
  assert.equal(bytes.length, 256 + span(200));
});

test('append, read, iterate, delete and reopen', (t) => {
  const path = bucketFile(t);
  const payloads = [Buffer.alloc(0), randomBytes(10), randomBytes(1000), randomBytes(127), randomBytes(100_000)];
  const oids = build(path, payloads);
  assert.equal(oids[0], 1);
  for (let i = 1; i < oids.length; i++) assert.equal(oids[i], oids[i - 1]! + span(payloads[i - 1]!.length) / ALIGN);

  withWriter(path, (writer) => {
    assert.deepEqual(writer.repair, { cut: undefined, damaged: [] });
    oids.forEach((oid, i) => assert.deepEqual(writer.read(oid).data, payloads[i]));
    writer.delete(oids[2]!);
    throwsCode(() => writer.read(oids[2]!), 'SHERLOCK_NOT_FOUND', { message: /deleted/ });
    throwsCode(() => writer.delete(oids[2]!), 'SHERLOCK_NOT_FOUND');
    const more = writer.append(BUCKET_TYPE.PLAIN, Buffer.from('Uhttp://x/\n'));
    assert.equal(more, oids[4]! + span(100_000) / ALIGN);
    oids.push(more);
  });

  withReader(path, (reader) => {
    assert.deepEqual(
      [...reader.buckets()].map((b) => b.oid),
      oids.filter((_, i) => i !== 2),
    );
    assert.deepEqual(
      [...reader.buckets({ from: oids[3] })].map((b) => b.oid),
      oids.slice(3),
    );
    const last = reader.read(oids[5]!);
    assert.equal(last.type, BUCKET_TYPE.PLAIN);
    assert.equal(reader.decode(last).body.string('U'), 'http://x/');
    assert.deepEqual(reader.stat(), {
      generation: 0,
      size: statSync(path).size,
      buckets: 5,
      deleted: 1,
      damaged: 0,
      end: statSync(path).size,
    });
    const bytes = readFileSync(path);
    assert.equal(bytes.readUInt32LE(oids[2]! * ALIGN + 4), DELETED_OID, 'deletion overwrites the oid field');
  });
});

test('a streamed bucket equals an appended one and is invisible until committed', (t) => {
  const path = bucketFile(t);
  const data = randomBytes(50_000);
  withWriter(path, (writer) => {
    const first = writer.append(V33, Buffer.from('x'));
    const reader = BucketReader.open(path);
    t.after(() => reader.close());
    const stream = writer.begin(BUCKET_TYPE.V33_DEFLATE);
    assert.throws(() => writer.append(V33, Buffer.from('y')), /still open/);
    for (let at = 0; at < data.length; at += 4096) stream.write(data.subarray(at, at + 4096));
    assert.deepEqual(
      [...reader.buckets()].map((b) => b.oid),
      [first],
    );
    throwsCode(() => reader.read(stream.oid), 'SHERLOCK_NOT_FOUND', { message: /being written/ });
    assert.equal(stream.commit(), stream.oid);
    assert.throws(() => stream.write(Buffer.from('late')), /already committed/);
    const read = reader.read(stream.oid);
    assert.deepEqual([read.type, read.data], [BUCKET_TYPE.V33_DEFLATE, data]);
    const appended = writer.append(BUCKET_TYPE.V33_DEFLATE, data);
    const bytes = readFileSync(path);
    const size = span(data.length);
    const from = (oid: number) => bytes.subarray(oid * ALIGN + 8, oid * ALIGN + size);
    assert.deepEqual(from(appended), from(stream.oid), 'same length, type, data, CRC, trailer and padding');
  });
});

test('an aborted stream leaves no trace and its oid is used next', (t) => {
  const path = bucketFile(t);
  withWriter(path, (writer) => {
    writer.append(V33, Buffer.from('a'));
    const size = statSync(path).size;
    const stream = writer.begin(V33);
    stream.write(randomBytes(5000));
    stream.abort();
    assert.equal(statSync(path).size, size);
    assert.equal(writer.append(V33, Buffer.from('b')), stream.oid);
  });
});

test('a reader open before the appends sees them as they are committed', (t) => {
  const path = bucketFile(t);
  withWriter(path, (writer) => {
    const reader = BucketReader.open(path);
    t.after(() => reader.close());
    assert.deepEqual([...reader.buckets()], []);
    const oid = writer.append(V33, Buffer.from('late'));
    assert.deepEqual(reader.read(oid).data, Buffer.from('late'));
  });
});

test('a walk reads buckets of every size through its read-ahead exactly as one by one, and one begun before an append stops where the file ended', (t) => {
  const path = bucketFile(t);
  // Many small buckets share a read-ahead window; some are larger than a window; some end on its edge.
  const sizes = [1, 100, 5000, 70_000, 65_536 - 24, 200, 130_000, ...Array.from({ length: 300 }, (_, i) => (i * 997) % 3000)];
  const payloads = sizes.map((size) => randomBytes(size));
  withWriter(path, (writer) => {
    const oids = payloads.slice(0, 200).map((payload) => writer.append(V33, payload));
    const reader = BucketReader.open(path);
    t.after(() => reader.close());
    const walk = reader.buckets();
    const first = walk.next();
    assert.equal(first.done, false);
    const later = payloads.slice(200).map((payload) => writer.append(V33, payload));
    const seen = [first.value!, ...walk];
    assert.ok(seen.length >= 1 && seen.length <= oids.length + later.length);
    seen.forEach((bucket, i) => assert.deepEqual(bucket.data, payloads[i], `bucket ${i}`));
    const all = [...reader.buckets()];
    assert.equal(all.length, payloads.length);
    all.forEach((bucket, i) => assert.deepEqual(bucket.data, reader.read([...oids, ...later][i]!).data, `bucket ${i}`));
  });
});

test('read refuses oids that are impossible, past the end or not at a bucket start', (t) => {
  const path = bucketFile(t);
  const [first, second] = build(path, [randomBytes(1000), randomBytes(10)]);
  withReader(path, (reader) => {
    for (const oid of [0, -1, 1.5, 2 ** 32]) throwsCode(() => reader.read(oid), 'SHERLOCK_NOT_FOUND');
    throwsCode(() => reader.read(second! + 1), 'SHERLOCK_NOT_FOUND', { message: /past the end/ });
    throwsCode(() => reader.read(first! + 1), 'SHERLOCK_CORRUPT_BUCKET', { offset: (first! + 1) * ALIGN, message: /magic/ });
    throwsCode(() => [...reader.buckets({ from: first! + 1 })], 'SHERLOCK_CORRUPT_BUCKET', { offset: (first! + 1) * ALIGN });
    const damage: Damage[] = [];
    assert.deepEqual(
      [...reader.buckets({ from: first! + 1, onDamage: (d) => damage.push(d) })].map((b) => b.oid),
      [second],
    );
    assert.deepEqual(damage.map((d) => [d.offset, d.end]), [[(first! + 1) * ALIGN, second! * ALIGN]]);
  });
});

test('opening files that are not bucket files fails with the offset', (t) => {
  const dir = scratchDir(t);
  throwsCode(() => BucketReader.open(join(dir, 'missing')), 'SHERLOCK_NOT_FOUND');
  const path = join(dir, 'buckets');
  build(path, [Buffer.from('x')]);
  const good = readFileSync(path);
  for (const [at, message] of [
    [0, /bad magic/],
    [17, /CRC-32/],
    [29, /CRC-32/],
  ] as const) {
    const bad = Buffer.from(good);
    bad[at]! ^= 1;
    writeFileSync(path, bad);
    throwsCode(() => BucketReader.open(path), 'SHERLOCK_CORRUPT_BUCKET', { message });
    throwsCode(() => BucketWriter.open(path), 'SHERLOCK_CORRUPT_BUCKET', { message });
  }
  writeFileSync(path, good.subarray(0, 100));
  throwsCode(() => BucketReader.open(path), 'SHERLOCK_CORRUPT_BUCKET', { offset: 100, message: /cut short/ });
});

test('a last bucket cut at any point is cut off on open, every earlier bucket intact', (t) => {
  const dir = scratchDir(t);
  const original = join(dir, 'original');
  const payloads = [doc(100), doc(5000), doc(300)];
  const oids = build(original, payloads);
  const bytes = readFileSync(original);
  const start = oids[2]! * ALIGN;
  const length = payloads[2]!.length;
  const whole = 16 + length + 8;
  // Inside each header field, the data, the CRC, the trailer and the padding.
  const data = 16 + length;
  for (const rel of [1, 4, 8, 12, 15, 16, 17, 16 + length / 2, data - 1, data, data + 2, data + 4, whole - 1, whole, whole + 1, span(length) - 1]) {
    const path = join(dir, `cut-${rel}`);
    writeFileSync(path, bytes.subarray(0, start + rel));
    withWriter(path, (writer) => {
      for (let i = 0; i < 2; i++) assert.deepEqual(writer.read(oids[i]!).data, payloads[i], `cut ${rel}: bucket ${i}`);
      if (rel < whole) {
        assert.equal(writer.repair.cut?.offset, start, `cut ${rel}`);
        throwsCode(() => writer.read(oids[2]!), 'SHERLOCK_NOT_FOUND', { message: /past the end/ });
        assert.equal(statSync(path).size, start);
        assert.equal(writer.append(V33, doc(5)), oids[2], 'the cut oid is reused by the next append');
      } else {
        assert.equal(writer.repair.cut, undefined, 'only padding was missing: the bucket is kept');
        assert.deepEqual(writer.read(oids[2]!).data, payloads[2]);
        assert.equal(statSync(path).size, start + span(length), 'padding restored');
      }
      assert.deepEqual(writer.verify().problems, []);
    });
  }
});

test('a bucket left in progress at the end is cut off on open', (t) => {
  const path = bucketFile(t);
  const oids = build(path, [randomBytes(100), randomBytes(200)]);
  const bytes = readFileSync(path);
  bytes.writeUInt32LE(0xdeadfee1, oids[1]! * ALIGN);
  writeFileSync(path, bytes);
  withReader(path, (reader) => {
    assert.deepEqual([...reader.buckets()].map((b) => b.oid), [oids[0]]);
    assert.equal(reader.verify().writing, true);
  });
  withWriter(path, (writer) => {
    assert.equal(writer.repair.cut?.offset, oids[1]! * ALIGN);
    assert.match(writer.repair.cut?.message ?? '', /still being written/);
  });
  assert.equal(statSync(path).size, oids[1]! * ALIGN);
});

test('bit flips in data, header and trailer are detected at the bucket offset; the others stay readable', (t) => {
  const dir = scratchDir(t);
  const payloads = [doc(100), doc(300), doc(50)];
  const original = join(dir, 'original');
  const oids = build(original, payloads);
  const good = readFileSync(original);
  const start = oids[1]! * ALIGN;
  const length = payloads[1]!.length;
  const flips: Array<[string, number, number, RegExp, boolean]> = [
    // what, byte offset in the bucket, bit, message, header damage (seen without reading data)
    ['magic', 0, 0, /bad bucket magic/, true],
    ['oid', 5, 3, /oid field/, true],
    ['length low bit', 8, 0, /trailer/, true],
    ['length high bit', 11, 7, /over the limit/, true],
    ['type', 12, 1, /CRC-32 mismatch/, false],
    ['data', 16 + 77, 4, /CRC-32 mismatch/, false],
    ['crc', 16 + length, 0, /CRC-32 mismatch/, false],
    ['trailer', 16 + length + 6, 2, /bad trailer/, true],
  ];
  for (const [what, at, bit, message, header] of flips) {
    const path = join(dir, what.replaceAll(' ', '-'));
    const bytes = Buffer.from(good);
    bytes[start + at]! ^= 1 << bit;
    writeFileSync(path, bytes);
    withReader(path, (reader) => {
      throwsCode(() => reader.read(oids[1]!), 'SHERLOCK_CORRUPT_BUCKET', { offset: start, message });
      assert.deepEqual(reader.read(oids[0]!).data, payloads[0], what);
      assert.deepEqual(reader.read(oids[2]!).data, payloads[2], what);
      throwsCode(() => [...reader.buckets()], 'SHERLOCK_CORRUPT_BUCKET', { offset: start });
      const damage: Damage[] = [];
      assert.deepEqual([...reader.buckets({ onDamage: (d) => damage.push(d) })].map((b) => b.oid), [oids[0], oids[2]], what);
      assert.deepEqual(damage.map((d) => [d.offset, d.end]), [[start, oids[2]! * ALIGN]], what);
      const report = reader.verify();
      assert.deepEqual(report.problems.map((p) => p.offset), [start], what);
      assert.equal(report.buckets, 2);
    });
    withWriter(path, (writer) => {
      assert.equal(writer.repair.cut, undefined, `${what}: nothing cut`);
      assert.equal(writer.repair.damaged.length, header ? 1 : 0, what);
      assert.deepEqual(writer.read(oids[2]!).data, payloads[2], what);
    });
    assert.equal(statSync(path).size, good.length, `${what}: file not truncated`);
  }
});

test('damage in the middle is kept, later buckets are not truncated and appends go after them', (t) => {
  const path = bucketFile(t);
  const payloads = [randomBytes(100), randomBytes(1000), randomBytes(100), randomBytes(2000)];
  const oids = build(path, payloads);
  const bytes = readFileSync(path);
  const start = oids[1]! * ALIGN;
  randomBytes(span(1000)).copy(bytes, start);
  writeFileSync(path, bytes);
  withWriter(path, (writer) => {
    assert.equal(writer.repair.cut, undefined);
    assert.deepEqual(writer.repair.damaged.map((d) => [d.offset, d.end]), [[start, oids[2]! * ALIGN]]);
    assert.deepEqual(writer.read(oids[2]!).data, payloads[2]);
    assert.deepEqual(writer.read(oids[3]!).data, payloads[3]);
    assert.equal(writer.append(V33, Buffer.from('after')), oids[3]! + span(2000) / ALIGN);
    assert.equal(writer.stat().damaged, 1);
  });
});

test('garbage after the last bucket is cut off', (t) => {
  const path = bucketFile(t);
  const oids = build(path, [randomBytes(100)]);
  const size = statSync(path).size;
  writeFileSync(path, Buffer.concat([readFileSync(path), randomBytes(1000)]));
  withWriter(path, (writer) => {
    assert.equal(writer.repair.cut?.offset, size);
    assert.deepEqual(writer.repair.damaged, []);
    assert.ok(writer.read(oids[0]!));
  });
  assert.equal(statSync(path).size, size);
});

test('a second writer is refused while the first is open', (t) => {
  const path = bucketFile(t);
  const writer = BucketWriter.open(path);
  throwsCode(() => BucketWriter.open(path), 'SHERLOCK_LOCKED');
  throwsCode(() => BucketWriter.shake(path), 'SHERLOCK_LOCKED');
  writer.close();
  assert.equal(existsSync(lockPath(path)), false);
  BucketWriter.open(path).close();
});

test('a bucket over the length limit is refused before anything is written', (t) => {
  const path = bucketFile(t);
  withWriter(path, (writer) => {
    const size = statSync(path).size;
    // Only the length is looked at before refusing: no need to allocate a gigabyte.
    const huge = { length: MAX_BUCKET_LENGTH + 1 } as Uint8Array;
    throwsCode(() => writer.append(V33, huge), 'SHERLOCK_TOO_LARGE');
    assert.equal(statSync(path).size, size);
    assert.equal(writer.append(V33, doc(1)), 1);
  });
});

test('verify decodes every bucket and names the offset where decoding fails', (t) => {
  const path = bucketFile(t);
  const good = encodeBucket(V33, { header: new BucketObject().add('U', 'http://a/'), body: new BucketObject().add('X', 'text') });
  const oids = build(path, [good, Buffer.from('0441', 'hex'), good]);
  withReader(path, (reader) => {
    const report = reader.verify();
    assert.equal(report.buckets, 2);
    assert.deepEqual(
      report.problems.map((p) => p.offset),
      [oids[1]! * ALIGN + 16],
    );
    assert.match(report.problems[0]!.message, new RegExp(`^bucket ${oids[1]}: attribute of 3 bytes runs past the end`));
  });
});

test('shake removes deleted buckets, bumps the generation and maps old oids to new ones', (t) => {
  const path = bucketFile(t);
  const payloads = Array.from({ length: 8 }, (_, i) => randomBytes(i * 97));
  const oids = build(path, payloads);
  withWriter(path, (writer) => [1, 4, 5].forEach((i) => writer.delete(oids[i]!)));
  const before = BucketReader.open(path);
  t.after(() => before.close());
  const sizeBefore = statSync(path).size;

  const report = BucketWriter.shake(path);
  assert.deepEqual(
    { kept: report.kept, removed: report.removed, generation: report.generation, bytesBefore: report.bytesBefore },
    { kept: 5, removed: 3, generation: 1, bytesBefore: sizeBefore },
  );
  assert.equal(report.bytesAfter, statSync(path).size);
  assert.equal(report.bytesAfter, 128 + [0, 2, 3, 6, 7].reduce((sum, i) => sum + span(i * 97), 0));
  assert.equal(before.replaced(), true);
  assert.deepEqual(before.read(oids[7]!).data, payloads[7], 'a reader keeps the file it opened');

  withReader(path, (reader) => {
    assert.equal(reader.generation, 1);
    assert.equal(reader.replaced(), false);
    assert.deepEqual([...reader.buckets()].map((b) => b.data), [0, 2, 3, 6, 7].map((i) => payloads[i]));
    payloads.forEach((data, i) => {
      if ([1, 4, 5].includes(i)) {
        throwsCode(() => reader.resolveOid(oids[i]!, 0), 'SHERLOCK_NOT_FOUND', { message: /removed by a shake/ });
      } else {
        assert.deepEqual(reader.read(reader.resolveOid(oids[i]!, 0)).data, data, `bucket ${i}`);
      }
    });
    assert.equal(reader.resolveOid(1, 1), 1, 'an oid of the current generation is itself');
    throwsCode(() => reader.resolveOid(1, 2), 'SHERLOCK_NOT_FOUND');
  });
  const map = readOidMap(oidMapPath(path, 1));
  assert.deepEqual([map.from, map.to, map.size], [0, 1, 5]);
  assert.equal(existsSync(lockPath(path)), false);
  assert.equal(existsSync(`${path}.tmp`), false);

  // A second shake chains: generation-0 oids still resolve through both maps.
  withWriter(path, (writer) => {
    assert.equal(writer.generation, 1);
    writer.delete(writer.resolveOid(oids[2]!, 0));
    oids.push(writer.append(V33, Buffer.from('new')));
  });
  assert.equal(BucketWriter.shake(path).generation, 2);
  withReader(path, (reader) => {
    assert.deepEqual(reader.read(reader.resolveOid(oids[7]!, 0)).data, payloads[7]);
    assert.deepEqual(reader.read(reader.resolveOid(oids[8]!, 1)).data, Buffer.from('new'));
    throwsCode(() => reader.resolveOid(oids[2]!, 0), 'SHERLOCK_NOT_FOUND');
  });
});

test('shake with nothing to remove leaves the file and its generation alone', (t) => {
  const path = bucketFile(t);
  build(path, [randomBytes(10), randomBytes(20)]);
  const bytes = readFileSync(path);
  const nothing = { kept: 2, removed: 0, dropped: [], bytesBefore: bytes.length, bytesAfter: bytes.length, generation: 0 };
  assert.deepEqual(BucketWriter.shake(path), nothing);
  assert.deepEqual(readFileSync(path), bytes);
  assert.equal(existsSync(oidMapPath(path, 1)), false);
  throwsCode(() => BucketWriter.shake(join(scratchDir(t), 'missing')), 'SHERLOCK_NOT_FOUND');
});

test('shake refuses damage in the middle unless told to drop it', (t) => {
  const path = bucketFile(t);
  const payloads = [doc(10), doc(20), doc(30)];
  const oids = build(path, payloads);
  const bytes = readFileSync(path);
  bytes[oids[1]! * ALIGN]! ^= 0xff;
  writeFileSync(path, bytes);
  throwsCode(() => BucketWriter.shake(path), 'SHERLOCK_CORRUPT_BUCKET', { offset: oids[1]! * ALIGN, message: /--drop-damaged/ });
  assert.deepEqual(readFileSync(path), bytes, 'untouched');
  assert.equal(existsSync(`${path}.tmp`), false);
  const report = BucketWriter.shake(path, { dropDamaged: true });
  assert.deepEqual([report.kept, report.removed, report.dropped.map((d) => d.offset)], [2, 0, [oids[1]! * ALIGN]]);
  withReader(path, (reader) => {
    assert.deepEqual(reader.verify().problems, []);
    assert.deepEqual(reader.read(reader.resolveOid(oids[2]!, 0)).data, payloads[2]);
  });
});

test('a damaged or truncated oid map is refused', (t) => {
  const path = bucketFile(t);
  const oids = build(path, [randomBytes(10), randomBytes(20)]);
  withWriter(path, (writer) => writer.delete(oids[0]!));
  BucketWriter.shake(path);
  const mapPath = oidMapPath(path, 1);
  const good = readFileSync(mapPath);
  for (const at of [0, 20, 33, good.length - 5, good.length - 1]) {
    const bad = Buffer.from(good);
    bad[at]! ^= 4;
    writeFileSync(mapPath, bad);
    throwsCode(() => readOidMap(mapPath), 'SHERLOCK_CORRUPT_BUCKET');
  }
  writeFileSync(mapPath, good.subarray(0, good.length - 8));
  throwsCode(() => readOidMap(mapPath), 'SHERLOCK_CORRUPT_BUCKET');
  truncateSync(mapPath, 0);
  throwsCode(() => readOidMap(mapPath), 'SHERLOCK_CORRUPT_BUCKET');
  throwsCode(() => readOidMap(`${mapPath}.missing`), 'SHERLOCK_NOT_FOUND');
});
