/**
 * The header our own fixed-layout files start with (STYLE §3: magic and
 * version first, a checksum after): bucket file, host file, queue file.
 *
 *   0    16  magic, ASCII, padded with NUL to 16 bytes
 *   16  4·n  n u32 fields, little-endian; the first is the format version
 *   16+4n 4  CRC-32 of bytes 0 to 16+4n−1
 * The rest of the header block, up to the size the format gives, is zero.
 * Each format names the fields after the version in its own byte table.
 */

import { crc32 } from 'node:zlib';
import { SherlockError, type ErrorCode } from './errors.js';

export const MAGIC_SIZE = 16;

export function encodeFileHeader(size: number, magic: string, fields: readonly number[]): Buffer {
  const out = Buffer.alloc(size);
  out.write(magic, 0, 'latin1');
  fields.forEach((value, i) => out.writeUInt32LE(value, MAGIC_SIZE + 4 * i));
  const end = MAGIC_SIZE + 4 * fields.length;
  out.writeUInt32LE(crc32(out.subarray(0, end)), end);
  return out;
}

export interface HeaderFormat {
  magic: string;
  version: number;
  /** u32 fields, the version included. */
  fields: number;
  /** Bytes the header block must have (default: through the CRC). */
  size?: number;
  /** "bucket file", "queue file": for messages. */
  what: string;
  code: ErrorCode;
}

/** Checks length, magic, CRC and version of a header read from `file`; returns its fields (version first). */
export function checkFileHeader(head: Buffer, file: string, format: HeaderFormat): number[] {
  const end = MAGIC_SIZE + 4 * format.fields;
  const fail = (offset: number, message: string) => new SherlockError(format.code, message, { file, offset });
  if (head.length < (format.size ?? end + 4)) throw fail(head.length, `${format.what} header cut short`);
  if (head.toString('latin1', 0, MAGIC_SIZE) !== format.magic) throw fail(0, `not a ${format.what} (bad magic)`);
  if (head.readUInt32LE(end) !== crc32(head.subarray(0, end))) throw fail(end, `${format.what} header CRC-32 mismatch`);
  const fields = Array.from({ length: format.fields }, (_, i) => head.readUInt32LE(MAGIC_SIZE + 4 * i));
  if (fields[0] !== format.version) throw fail(MAGIC_SIZE, `unsupported format version ${fields[0]}: this build reads ${format.what} version ${format.version}`);
  return fields;
}
