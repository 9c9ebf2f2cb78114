/**
 * One gzip member (RFC 1952) at a byte offset of a file, as record-per-member
 * archives (`.arc.gz`, `.warc.gz`) store them: parse its header, inflate its
 * deflate stream, check its trailer, and tell how many compressed bytes it
 * spans, so that the next member's offset is known. Also compresses one
 * member, and `FileWindow`, the bounded-memory positioned reader the archive
 * readers share.
 *
 * Member layout (RFC 1952 §2.3), little-endian numbers:
 *
 *   offset  size  meaning
 *   0       2     ID1 ID2 = 1f 8b
 *   2       1     CM = 8 (deflate)
 *   3       1     FLG: 1 FTEXT, 2 FHCRC, 4 FEXTRA, 8 FNAME, 16 FCOMMENT; 0xe0 reserved, must be 0
 *   4       4     MTIME
 *   8       1     XFL
 *   9       1     OS
 *   10      …     if FEXTRA: XLEN (2) then XLEN bytes of subfields (Heritrix writes `LX`, 4, 0 0 0 0)
 *           …     if FNAME: zero-terminated name; if FCOMMENT: zero-terminated comment
 *           …     if FHCRC: 2 bytes, the low 16 bits of the CRC-32 of the header bytes before it
 *           …     raw deflate stream (RFC 1951)
 *   end-8   4     CRC32 of the inflated data
 *   end-4   4     ISIZE = inflated length mod 2^32
 *
 * A member's compressed length is not stored anywhere: it is where inflation
 * stops plus the 8-byte trailer. We inflate a window read at the offset
 * (`raw-inflate.ts`, one reused zlib engine, which counts the compressed bytes
 * consumed even when the window holds more after the member);
 * when the window ends first (Z_BUF_ERROR) we read a larger one and retry, up
 * to a cap derived from `maxOutput`. Memory is therefore bounded by the record
 * size limit, never by the file size.
 *
 * Errors: damage is SHERLOCK_CORRUPT_GZIP, a member inflating past `maxOutput`
 * is SHERLOCK_TOO_LARGE, a failing read is SHERLOCK_IO; all name the file and
 * the member's offset.
 */

import { closeSync, fstatSync, openSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { ioError, SherlockError } from '../errors.js';
import { readAt, readInto } from '../files.js';
import { GzipDeflater } from '../deflate/raw-deflate.js';
import { InflateError, RawInflater, type Inflated } from '../deflate/raw-inflate.js';

const FHCRC = 2;
const FEXTRA = 4;
const FNAME = 8;
const FCOMMENT = 16;
const FRESERVED = 0xe0;
const TRAILER_SIZE = 8;

/** Reads at byte offsets of one open file through a cached chunk; returned buffers are never overwritten later. */
export class FileWindow {
  private chunk: Buffer = Buffer.alloc(0);
  private chunkStart = 0;
  /** With `reuse`, the one buffer chunks are read into. */
  private buffer: Buffer | undefined;

  private constructor(
    readonly path: string,
    private readonly fd: number,
    /** The file's size when it was opened; bytes appended later are not seen. */
    readonly size: number,
    private readonly chunkSize: number,
    private readonly reuse: boolean,
  ) {}

  /**
   * With `reuse`, chunks are read into one buffer kept from read to read (no
   * garbage a read, for many short random reads): what `read` returned is
   * then valid only until the next `read`.
   */
  static open(path: string, chunkSize = 64 * 1024, reuse = false): FileWindow {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (err) {
      throw ioError(err, path, 'open');
    }
    try {
      return new FileWindow(path, fd, fstatSync(fd).size, chunkSize, reuse);
    } catch (err) {
      closeSync(fd);
      throw ioError(err, path, 'fstat');
    }
  }

  close(): void {
    closeSync(this.fd);
  }

  /** Up to `length` bytes from `position`, fewer only at the end of the file. May share memory with a cached chunk. */
  read(position: number, length: number): Buffer {
    const end = Math.min(position + length, this.size);
    if (position >= end) return Buffer.alloc(0);
    const chunkEnd = this.chunkStart + this.chunk.length;
    if (position >= this.chunkStart && end <= chunkEnd) {
      return this.chunk.subarray(position - this.chunkStart, end - this.chunkStart);
    }
    const want = Math.max(end - position, Math.min(this.chunkSize, this.size - position));
    if (this.reuse && (this.buffer === undefined || this.buffer.length < want)) this.buffer = Buffer.allocUnsafe(Math.max(want, this.chunkSize));
    this.chunk = this.reuse ? readInto(this.fd, this.path, this.buffer!, want, position) : this.pread(position, want);
    this.chunkStart = position;
    return this.chunk.subarray(0, end - position);
  }

  /** `length` bytes (fewer at the end of the file) in a buffer of their own, for handing to callers. */
  copy(position: number, length: number): Buffer {
    if (length >= this.chunkSize) return this.pread(position, Math.min(length, Math.max(0, this.size - position)));
    return Buffer.from(this.read(position, length));
  }

  /** The byte at `position`, or undefined at and past the end of the file. */
  byte(position: number): number | undefined {
    return position < this.size ? this.read(position, 1)[0] : undefined;
  }

  private pread(position: number, length: number): Buffer {
    return readAt(this.fd, this.path, length, position);
  }

}

export interface GzipHeader {
  flags: number;
  mtime: number;
  os: number;
  extra?: Buffer;
  name?: Buffer;
  comment?: Buffer;
  /** Bytes from the member's first byte to its deflate stream. */
  size: number;
}

export interface GzipMember {
  offset: number;
  /** Compressed size: header, deflate stream and trailer; the next member starts at offset + length. */
  length: number;
  header: GzipHeader;
  data: Buffer;
}

/** Where errors should point: the file and the member's offset in it. */
export interface MemberPlace {
  file: string;
  offset: number;
}

export function hasGzipMagic(buf: Uint8Array, at = 0): boolean {
  return buf[at] === 0x1f && buf[at + 1] === 0x8b;
}

function corrupt(place: MemberPlace, message: string, cause?: unknown): SherlockError {
  return new SherlockError('SHERLOCK_CORRUPT_GZIP', message, { ...place }, { cause });
}

/** Parses the member header at the start of `buf`; undefined when `buf` ends inside it. */
export function parseGzipHeader(buf: Buffer, place: MemberPlace): GzipHeader | undefined {
  if (buf.length < 10) {
    if (buf.length >= 2 && !hasGzipMagic(buf)) throw corrupt(place, 'not a gzip member (no 1f 8b magic)');
    return undefined;
  }
  if (!hasGzipMagic(buf)) throw corrupt(place, 'not a gzip member (no 1f 8b magic)');
  if (buf[2] !== 8) throw corrupt(place, `unknown gzip compression method ${buf[2]}`);
  const flags = buf[3]!;
  if ((flags & FRESERVED) !== 0) throw corrupt(place, `reserved gzip header flags set (0x${flags.toString(16)})`);
  const header: GzipHeader = { flags, mtime: buf.readUInt32LE(4), os: buf[9]!, size: 10 };
  let at = 10;
  if ((flags & FEXTRA) !== 0) {
    if (buf.length < at + 2) return undefined;
    const xlen = buf.readUInt16LE(at);
    if (buf.length < at + 2 + xlen) return undefined;
    header.extra = buf.subarray(at + 2, at + 2 + xlen);
    at += 2 + xlen;
  }
  for (const [flag, field] of [
    [FNAME, 'name'],
    [FCOMMENT, 'comment'],
  ] as const) {
    if ((flags & flag) === 0) continue;
    const nul = buf.indexOf(0, at);
    if (nul === -1) return undefined;
    header[field] = buf.subarray(at, nul);
    at = nul + 1;
  }
  if ((flags & FHCRC) !== 0) {
    if (buf.length < at + 2) return undefined;
    if ((crc32(buf.subarray(0, at)) & 0xffff) !== buf.readUInt16LE(at)) throw corrupt(place, 'gzip header CRC mismatch');
    at += 2;
  }
  header.size = at;
  return header;
}

// Synchronous use only, so one engine serves every reader of the process.
const inflater = new RawInflater();

/**
 * Inflates the member at the start of `buf` (which may hold more after it).
 * Returns undefined when `buf` ends before the member does; the caller decides
 * whether that means "read more" or "truncated". With `borrow`, `data` is the
 * shared inflater's scratch, valid only until the next member is parsed.
 */
export function parseGzipMember(buf: Buffer, place: MemberPlace, maxOutput: number, borrow = false): GzipMember | undefined {
  const header = parseGzipHeader(buf, place);
  if (header === undefined) return undefined;
  let inflated: Inflated | undefined;
  try {
    inflated = inflater.inflate(buf.subarray(header.size), maxOutput, borrow);
  } catch (err) {
    if (!(err instanceof InflateError)) throw err;
    if (err.code === 'ERR_BUFFER_TOO_LARGE') {
      throw new SherlockError('SHERLOCK_TOO_LARGE', `gzip member inflates to more than ${maxOutput} bytes`, { ...place }, { cause: err });
    }
    throw corrupt(place, `cannot inflate gzip member: ${err.message}`, err);
  }
  if (inflated === undefined) return undefined;
  const data = inflated.data;
  const trailerAt = header.size + inflated.consumed;
  if (buf.length < trailerAt + TRAILER_SIZE) return undefined;
  if (buf.readUInt32LE(trailerAt) !== crc32(data)) throw corrupt(place, 'gzip member CRC32 mismatch');
  if (buf.readUInt32LE(trailerAt + 4) !== data.length % 2 ** 32) throw corrupt(place, 'gzip member ISIZE mismatch');
  return { offset: place.offset, length: trailerAt + TRAILER_SIZE, header, data };
}

// A deflate stream of n bytes needs a little over n compressed bytes at worst
// (stored blocks); allow twice that for wasteful encoders, plus room for a header.
const maxCompressed = (maxOutput: number): number => 2 * maxOutput + 256 * 1024;
const FIRST_WINDOW = 16 * 1024;

/**
 * Reads and checks the gzip member starting at `offset` of `source`.
 * `maxOutput` caps the inflated size (SHERLOCK_TOO_LARGE beyond it);
 * `borrow` as for `parseGzipMember`.
 */
export function readGzipMember(source: FileWindow, offset: number, maxOutput: number, borrow = false): GzipMember {
  const place = { file: source.path, offset };
  const available = source.size - offset;
  if (available <= 0) throw corrupt(place, 'no gzip member: offset is at or past the end of the file');
  const cap = Math.min(available, maxCompressed(maxOutput));
  for (let want = Math.min(cap, FIRST_WINDOW); ; want = Math.min(cap, want * 4)) {
    const member = parseGzipMember(source.read(offset, want), place, maxOutput, borrow);
    if (member !== undefined) return member;
    if (want === cap) {
      if (cap === available) throw corrupt(place, `truncated gzip member: the file ends ${available} bytes after its start`);
      throw new SherlockError('SHERLOCK_TOO_LARGE', `gzip member longer than ${cap} compressed bytes`, place);
    }
  }
}

/** Offset of the next `1f 8b 08` (a member's first three bytes) at or after `from`, or undefined. Candidates still need checking. */
export function findGzipMagic(source: FileWindow, from: number): number | undefined {
  const step = 64 * 1024;
  for (let at = from; at < source.size; at += step - 2) {
    const hit = source.read(at, step).indexOf(MEMBER_START);
    if (hit !== -1) return at + hit;
  }
  return undefined;
}
const MEMBER_START = Buffer.from([0x1f, 0x8b, 0x08]);

/** One compressor per level asked for (raw-deflate.ts), by level (-1: the default). */
const deflaters = new Map<number, GzipDeflater>();

/**
 * Compresses `data` as one complete gzip member (header, deflate, CRC32/ISIZE
 * trailer). Synchronous: zlib's async form costs more in stream set-up and
 * thread hand-overs than a level-1 member of a web page takes to compress;
 * the gatherer runs this in its parse workers instead (arc-write.ts
 * frameArcRecord).
 */
export function compressMember(data: Uint8Array, level?: number): Buffer {
  let deflater = deflaters.get(level ?? -1);
  if (deflater === undefined) {
    deflater = new GzipDeflater(level);
    deflaters.set(level ?? -1, deflater);
  }
  return deflater.member(data);
}
