/**
 * Hadoop's local-filesystem checksum side files (ChecksumFileSystem): beside
 * every file F that Hadoop's LocalFileSystem writes lies a hidden `.F.crc`.
 * Spec: `../shared/spec/nutch-formats.md` §6.
 *
 *   0   4  "crc\0"
 *   4   4  bytes per checksum, i32 big-endian: 512
 *   8      one CRC-32 (zlib polynomial, u32 big-endian) per 512-byte chunk of F,
 *          the last chunk possibly short; size 8 + 4 × ceil(len / 512)
 *
 * Hadoop ignores a missing or unreadable `.crc` but fails on a mismatch, so a
 * stale one beside a rewritten file breaks every Hadoop reader. Our writers
 * therefore either write a correct one at close or remove any old one before
 * they write a byte.
 */

import { existsSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { createFile } from '../files.js';
import { FileWindow } from '../archive/gzip-member.js';
import { corruptHadoop } from './io.js';
import { crc32Chunks } from '../deflate/libdeflate.js';

export const BYTES_PER_CHECKSUM = 512;
const MAGIC = Buffer.from('crc\0', 'latin1');

/** Where Hadoop keeps the checksums of `file`: `.NAME.crc` in the same directory. */
export function checksumPath(file: string): string {
  return join(dirname(file), `.${basename(file)}.crc`);
}

/** Builds a `.crc` file's content from the bytes of its file, fed in order, in pieces of any size. */
export class ChecksumBuilder {
  // One growing buffer, 4 bytes a chunk: a Buffer object per 512-byte chunk
  // cost some 100 bytes of heap each, a fifth of the data written. The
  // chunks' CRCs are taken in one native call a piece (a call and a view per
  // chunk were ~0.5 µs each, a second of the Nutch export's main thread);
  // without the binding, a zlib.crc32 call and a view a chunk all the same.
  private sums = Buffer.allocUnsafe(4096);
  private count = 0;
  /** [CRC so far, bytes so far] of the chunk under way. */
  private readonly state = new Float64Array(2);

  update(bytes: Uint8Array): void {
    this.room(Math.floor((this.state[1]! + bytes.length) / BYTES_PER_CHECKSUM));
    this.count += 4 * crc32Chunks(bytes, BYTES_PER_CHECKSUM, this.state, this.sums, this.count);
  }

  finish(): Buffer {
    if (this.state[1]! > 0) {
      this.room(1);
      this.sums.writeUInt32BE(this.state[0]!, this.count);
      this.count += 4;
    }
    const header = Buffer.allocUnsafe(8);
    MAGIC.copy(header);
    header.writeInt32BE(BYTES_PER_CHECKSUM, 4);
    return Buffer.concat([header, this.sums.subarray(0, this.count)]);
  }

  /** Makes room for `chunks` more sums. */
  private room(chunks: number): void {
    const most = this.count + 4 * chunks;
    if (most <= this.sums.length) return;
    const grown = Buffer.allocUnsafe(Math.max(most, this.sums.length * 2));
    this.sums.copy(grown, 0, 0, this.count);
    this.sums = grown;
  }
}

/** The `.crc` content for `data`. */
export function encodeChecksums(data: Uint8Array): Buffer {
  const builder = new ChecksumBuilder();
  builder.update(data);
  return builder.finish();
}

/** Writes `.F.crc` for `file` whole (temp, fsync, rename). */
export function writeChecksumFile(file: string, content: Uint8Array): void {
  createFile(checksumPath(file), content);
}

/** Removes a `.F.crc` that would no longer match `file`. */
export function removeChecksumFile(file: string): void {
  rmSync(checksumPath(file), { force: true });
}

/**
 * Checks `file` against its `.crc` as Hadoop's LocalFileSystem does: false when
 * there is none; a mismatch throws SHERLOCK_CORRUPT_HADOOP naming the file and
 * the offset of the first bad 512-byte chunk. A `.crc` whose header is unreadable
 * is reported too (Hadoop only warns; we would rather say so).
 */
export function verifyChecksums(file: string): boolean {
  const crcFile = checksumPath(file);
  if (!existsSync(crcFile)) return false;
  const sums = FileWindow.open(crcFile);
  let data: FileWindow | undefined;
  try {
    const expected = sums.read(0, sums.size);
    data = FileWindow.open(file);
    if (expected.length < 8 || !expected.subarray(0, 4).equals(MAGIC)) throw corruptHadoop(crcFile, 0, 'not a Hadoop checksum file (bad magic)');
    const perChunk = expected.readInt32BE(4);
    if (perChunk !== BYTES_PER_CHECKSUM) throw corruptHadoop(crcFile, 4, `unsupported ${perChunk} bytes per checksum`);
    const chunks = Math.ceil(data.size / perChunk);
    if (expected.length !== 8 + 4 * chunks) {
      throw corruptHadoop(crcFile, 0, `holds ${(expected.length - 8) / 4} checksums for ${chunks} chunks of ${file}: stale`);
    }
    for (let chunk = 0; chunk < chunks; chunk++) {
      const sum = crc32(data.read(chunk * perChunk, perChunk)) >>> 0;
      if (sum !== expected.readUInt32BE(8 + 4 * chunk)) throw corruptHadoop(file, chunk * perChunk, `checksum mismatch against ${crcFile}`);
    }
    return true;
  } finally {
    sums.close();
    data?.close();
  }
}
