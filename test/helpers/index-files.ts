/**
 * Damage every index file must survive (common/index/file.ts framing): cut
 * at every byte, a wrong magic, a newer version, a flipped body byte. Each
 * must give SHERLOCK_CORRUPT_INDEX naming the file, never another error, a
 * crash or a hang.
 */

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { isSherlockError } from '../../common/errors.js';
import { INDEX_HEADER_SIZE, type IndexFormat } from '../../common/index/file.js';

/** Asserts that `read` throws SHERLOCK_CORRUPT_INDEX naming `file` (and `offset`, `message` when given). */
export function assertCorrupt(read: () => unknown, file: string, offset?: number, message?: RegExp): void {
  assert.throws(read, (err: unknown) => {
    assert.ok(isSherlockError(err, 'SHERLOCK_CORRUPT_INDEX'), `expected SHERLOCK_CORRUPT_INDEX, got ${String(err)}`);
    assert.equal(err.place.file, file);
    if (offset !== undefined) assert.equal(err.place.offset, offset, err.message);
    if (message !== undefined) assert.match(err.message, message);
    return true;
  });
}

/** Byte offset of the header's CRC for `format`. */
function headerCrcOffset(format: IndexFormat): number {
  return 16 + 4 * (3 + format.fields.length);
}

/** The file with its format version raised by one and the header CRC made right again. */
export function newerVersion(data: Buffer, format: IndexFormat): Buffer {
  return withVersion(data, format, format.version + 1);
}

/** The file claiming format version `version`, the header CRC made right again. */
export function withVersion(data: Buffer, format: IndexFormat, version: number): Buffer {
  const out = Buffer.from(data);
  out.writeUInt32LE(version, 16);
  const end = headerCrcOffset(format);
  out.writeUInt32LE(crc32(out.subarray(0, end)), end);
  return out;
}

/** A copy of `file` as format version `version` (an older one) is refused by `open`, naming the file and the version field. */
export function assertOldVersionRefused(file: string, scratch: string, format: IndexFormat, version: number, open: (file: string) => unknown): void {
  writeFileSync(scratch, withVersion(readFileSync(file), format, version));
  assertCorrupt(() => open(scratch), scratch, 16, new RegExp(`unsupported format version ${version}: this build reads ${format.what} file version ${format.version}`));
}

/** `body` framed as a file of `format` (header fields as in `like`), with right CRCs: for well-framed nonsense. */
export function reframe(like: Buffer, format: IndexFormat, body: Buffer): Buffer {
  const header = Buffer.from(like.subarray(0, INDEX_HEADER_SIZE));
  header.writeUInt32LE(body.length, 20);
  header.writeUInt32LE(0, 24);
  const end = headerCrcOffset(format);
  header.writeUInt32LE(crc32(header.subarray(0, end)), end);
  const footer = Buffer.alloc(8);
  footer.writeUInt32LE(crc32(body), 0);
  footer.writeUInt32LE(0xfeedcafe, 4);
  return Buffer.concat([header, body, footer]);
}

/**
 * Runs `readAll` (which must read every byte the format's reader reads) on
 * damaged copies of the good file `file`, written to `scratch`: cut at every
 * length, bad magic, newer version, a bit flipped in every byte that counts.
 */
export function assertDamageRefused(file: string, scratch: string, format: IndexFormat, readAll: (file: string) => unknown): void {
  const good = readFileSync(file);
  readAll(file);
  for (let length = 0; length < good.length; length++) {
    writeFileSync(scratch, good.subarray(0, length));
    assertCorrupt(() => readAll(scratch), scratch);
  }
  const magic = Buffer.from(good);
  magic[0] = 0x58;
  writeFileSync(scratch, magic);
  assertCorrupt(() => readAll(scratch), scratch, 0, /bad magic/);
  writeFileSync(scratch, newerVersion(good, format));
  assertCorrupt(() => readAll(scratch), scratch, 16, new RegExp(`unsupported format version ${format.version + 1}`));
  const headerEnd = headerCrcOffset(format) + 4;
  for (let at = 0; at < good.length; at++) {
    if (at >= headerEnd && at < INDEX_HEADER_SIZE) continue; // unused header bytes
    const flipped = Buffer.from(good);
    flipped[at] ^= 0x01;
    writeFileSync(scratch, flipped);
    assertCorrupt(() => readAll(scratch), scratch);
  }
}
