import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';
import { crc32, deflateRawSync, gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { isSherlockError } from '../../../common/errors.js';
import { compressMember, FileWindow, findGzipMagic, parseGzipMember, readGzipMember } from '../../../common/archive/gzip-member.js';
import { scratchDir, testdata } from '../../helpers/paths.js';

interface HeaderFields {
  extra?: Buffer;
  name?: string;
  comment?: string;
  hcrc?: boolean;
}

/** A gzip member built byte by byte (RFC 1952 §2.3), to exercise every header flag. */
function member(data: Buffer, fields: HeaderFields = {}): Buffer {
  const flags = (fields.hcrc === true ? 2 : 0) | (fields.extra ? 4 : 0) | (fields.name !== undefined ? 8 : 0) | (fields.comment !== undefined ? 16 : 0);
  const parts: Buffer[] = [Buffer.from([0x1f, 0x8b, 8, flags, 0x78, 0x56, 0x34, 0x12, 0, 3])];
  if (fields.extra) {
    const xlen = Buffer.alloc(2);
    xlen.writeUInt16LE(fields.extra.length);
    parts.push(xlen, fields.extra);
  }
  if (fields.name !== undefined) parts.push(Buffer.from(fields.name + '\0', 'latin1'));
  if (fields.comment !== undefined) parts.push(Buffer.from(fields.comment + '\0', 'latin1'));
  if (fields.hcrc === true) {
    const crc = Buffer.alloc(2);
    crc.writeUInt16LE(crc32(Buffer.concat(parts)) & 0xffff);
    parts.push(crc);
  }
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(data), 0);
  trailer.writeUInt32LE(data.length, 4);
  return Buffer.concat([...parts, deflateRawSync(data), trailer]);
}

function fileWith(t: TestContext, bytes: Buffer): FileWindow {
  const path = join(scratchDir(t), 'members.gz');
  writeFileSync(path, bytes);
  const source = FileWindow.open(path);
  t.after(() => source.close());
  return source;
}

function expectGzipError(t: () => unknown, code: string, offset: number, message?: RegExp): void {
  assert.throws(t, (err: unknown) => {
    assert.ok(isSherlockError(err), String(err));
    assert.equal(err.code, code);
    assert.equal(err.place.offset, offset);
    if (message) assert.match(err.message, message);
    return true;
  });
}

const LX = Buffer.from([0x4c, 0x58, 4, 0, 0, 0, 0, 0]);

test('every header flag combination parses; the length covers header, deflate stream and trailer only', () => {
  const data = Buffer.from('filedesc://x.arc 0.0.0.0 20240101000000 text/plain 0\n\n');
  const after = Buffer.from('next member or garbage');
  for (let flags = 0; flags < 16; flags++) {
    const fields: HeaderFields = {};
    if (flags & 1) fields.extra = LX;
    if (flags & 2) fields.name = 'name.arc';
    if (flags & 4) fields.comment = 'a comment';
    if (flags & 8) fields.hcrc = true;
    const bytes = member(data, fields);
    const parsed = parseGzipMember(Buffer.concat([bytes, after]), { file: 'x', offset: 0 }, 1 << 20);
    assert.ok(parsed, `flags ${flags}`);
    assert.equal(parsed.length, bytes.length);
    assert.deepEqual(parsed.data, data);
    assert.deepEqual(parsed.header.extra, fields.extra);
    assert.equal(parsed.header.name?.toString(), fields.name);
    assert.equal(parsed.header.comment?.toString(), fields.comment);
    assert.equal(parsed.header.mtime, 0x12345678);
  }
});

test('a header or stream cut short asks for more bytes instead of failing', () => {
  const bytes = member(Buffer.from('some content that is long enough '.repeat(20)), { extra: LX, name: 'n', comment: 'c', hcrc: true });
  for (let cut = 0; cut < bytes.length; cut++) {
    assert.equal(parseGzipMember(bytes.subarray(0, cut), { file: 'x', offset: 0 }, 1 << 20), undefined, `cut at ${cut}`);
  }
});

test('members are read one after another from a file, with offsets chaining', async (t) => {
  const contents = [Buffer.alloc(0), Buffer.from('a'), randomBytes(70_000), Buffer.alloc(300_000, 'x'), randomBytes(1000)];
  const members = await Promise.all(contents.map((c) => compressMember(c)));
  const source = fileWith(t, Buffer.concat(members));
  let offset = 0;
  contents.forEach((content, i) => {
    const read = readGzipMember(source, offset, 1 << 20);
    assert.equal(read.offset, offset);
    assert.equal(read.length, members[i]!.length, `member ${i}`);
    assert.deepEqual(read.data, content);
    offset += read.length;
  });
  assert.equal(offset, source.size);
});

test('a member larger than the first read window is found by reading larger windows', (t) => {
  // Random bytes do not compress: the member is ~400 KB, far past the first 16 KiB window.
  const data = randomBytes(400_000);
  const bytes = member(data, { name: 'big' });
  const source = fileWith(t, Buffer.concat([Buffer.from('garbage'), bytes, bytes]));
  const read = readGzipMember(source, 7, 1 << 20);
  assert.equal(read.length, bytes.length);
  assert.deepEqual(read.data, data);
  assert.equal(readGzipMember(source, 7 + bytes.length, 1 << 20).length, bytes.length);
});

test('a member truncated anywhere is SHERLOCK_CORRUPT_GZIP at its offset', (t) => {
  const bytes = member(randomBytes(3000), { extra: LX });
  const dir = scratchDir(t);
  fc.assert(
    fc.property(fc.integer({ min: 1, max: bytes.length - 1 }), (cut) => {
      const path = join(dir, `cut-${cut}.gz`);
      writeFileSync(path, Buffer.concat([member(Buffer.from('first')), bytes.subarray(0, cut)]));
      const source = FileWindow.open(path);
      try {
        const first = readGzipMember(source, 0, 1 << 20);
        expectGzipError(() => readGzipMember(source, first.length, 1 << 20), 'SHERLOCK_CORRUPT_GZIP', first.length);
      } finally {
        source.close();
      }
    }),
    { numRuns: 60 },
  );
});

test('damage is reported with the member offset: CRC32, ISIZE, header CRC, flags, method, magic, deflate data', (t) => {
  const data = Buffer.from('HTTP/1.1 200 OK\r\n\r\nhello world, hello world, hello world');
  const good = member(data, { hcrc: true, name: 'x' });
  const damaged = (at: number, xor: number): Buffer => {
    const copy = Buffer.from(good);
    copy[at]! ^= xor;
    return copy;
  };
  const cases: Array<[Buffer, RegExp]> = [
    [damaged(good.length - 8, 1), /CRC32 mismatch/],
    [damaged(good.length - 4, 1), /ISIZE mismatch/],
    [damaged(10, 1), /header CRC mismatch/], // a byte of the name, which FHCRC covers
    [damaged(3, 0x20), /reserved gzip header flags/],
    [damaged(2, 1), /compression method/],
    [damaged(1, 0xff), /no 1f 8b magic/],
  ];
  for (const [bytes, message] of cases) {
    const source = fileWith(t, Buffer.concat([Buffer.from('0123456789'), bytes]));
    expectGzipError(() => readGzipMember(source, 10, 1 << 20), 'SHERLOCK_CORRUPT_GZIP', 10, message);
  }
  const stream = member(Buffer.from('x'.repeat(100)));
  stream[10] = 0xff; // block type 11: reserved
  expectGzipError(() => parseGzipMember(stream, { file: 'f', offset: 5 }, 1 << 20), 'SHERLOCK_CORRUPT_GZIP', 5, /cannot inflate/);
});

test('a member inflating past maxOutput is SHERLOCK_TOO_LARGE, not an allocation', (t) => {
  const source = fileWith(t, member(Buffer.alloc(2_000_000)));
  expectGzipError(() => readGzipMember(source, 0, 1_000_000), 'SHERLOCK_TOO_LARGE', 0);
  assert.equal(readGzipMember(source, 0, 2_000_000).data.length, 2_000_000);
});

test('reading at or past the end of the file is an error naming the offset', (t) => {
  const source = fileWith(t, member(Buffer.from('x')));
  expectGzipError(() => readGzipMember(source, source.size, 100), 'SHERLOCK_CORRUPT_GZIP', source.size, /past the end/);
});

test('compressMember makes one complete member that gunzip reads, at any level', async () => {
  const data = Buffer.from('record\n'.repeat(1000));
  for (const level of [undefined, 0, 1, 9]) {
    const bytes = await compressMember(data, level);
    assert.deepEqual(gunzipSync(bytes), data);
    const parsed = parseGzipMember(Buffer.concat([bytes, bytes]), { file: 'x', offset: 0 }, 1 << 20);
    assert.equal(parsed?.length, bytes.length);
  }
});

test('findGzipMagic finds member starts, also across its scan windows', (t) => {
  const first = member(Buffer.from('a'));
  const filler = Buffer.alloc(64 * 1024 - 1 - first.length, 0x20);
  const source = fileWith(t, Buffer.concat([first, filler, member(Buffer.from('b'))]));
  assert.equal(findGzipMagic(source, 0), 0);
  assert.equal(findGzipMagic(source, 1), first.length + filler.length);
  assert.equal(findGzipMagic(source, first.length + filler.length + 1), undefined);
});

test('Heritrix/Alexa members with the LX extra field read as any other', (t) => {
  const source = FileWindow.open(testdata('arc', 'cdx-writer', 'alexa_short_header.arc.gz'));
  t.after(() => source.close());
  const first = readGzipMember(source, 0, 1 << 20);
  assert.equal(first.header.extra?.subarray(0, 2).toString(), 'LX');
  assert.equal(first.length, 161);
  const second = readGzipMember(source, 161, 1 << 20);
  assert.equal(second.length, 139);
  assert.equal(161 + 139, source.size);
});
