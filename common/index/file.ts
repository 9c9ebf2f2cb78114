/**
 * The framing every file of an index version shares (DESIGN §6; the formats
 * inside are in the `index-*.ts` modules and docs/indexer.md): a header that
 * names the format, the body, and a footer that proves the body whole.
 *
 *   Header, offset 0, 64 bytes (file-header.ts)
 *     0    16  magic, ASCII, NUL-padded: "SHERLOCK-CARDS", "SHERLOCK-LEXICON", …
 *     16    4  format version
 *     20    4  body length L, low 32 bits
 *     24    4  body length L, high 32 bits
 *     28  4·k  the format's own u32 fields (k ≤ 8: counts, parameters)
 *     28+4k 4  CRC-32 of bytes 0 to 27+4k
 *     …        zero up to 64
 *   Body, offset 64, L bytes
 *   Footer, offset 64+L, 8 bytes
 *     0     4  CRC-32 of the body
 *     4     4  trailer 0xfeedcafe
 *
 * Every u32 is little-endian. Body offsets in the formats (a card position, a
 * chain's ref_pos) count from the body's first byte; errors name file offsets.
 *
 * Writing streams: the body goes through a buffer to `<file>.tmp`, the header
 * (which holds L and the counts) is written last, then fdatasync and rename.
 * So a file either appears whole or not at all, and a writer killed midway
 * leaves only the `.tmp` file, which the next writer overwrites. An index
 * version is written once and never modified (ARCHITECTURE "indexer/").
 *
 * Reading distrusts the disk. open() checks the header (magic, CRC, version),
 * that the file is exactly 64 + L + 8 bytes long and the trailer; so a file
 * cut short anywhere, a wrong file or a newer version is refused at once with
 * SHERLOCK_CORRUPT_INDEX naming the file and offset. The body CRC is checked
 * whenever the whole body is read (readBody, verify); random reads of big
 * files (Cards, WordIndex) check every length and offset they follow instead.
 */

import { closeSync, fdatasyncSync, fstatSync, openSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import { SherlockError, ioError } from '../errors.js';
import { checkFileHeader, encodeFileHeader, MAGIC_SIZE } from '../file-header.js';
import { readAt, readInto, syncDirectory, writeAt } from '../files.js';

export const INDEX_HEADER_SIZE = 64;
export const INDEX_FOOTER_SIZE = 8;
export const INDEX_TRAILER = 0xfeedcafe;
/** Format fields a header has room for after version and body length. */
const MAX_FIELDS = (INDEX_HEADER_SIZE - MAGIC_SIZE - 4) / 4 - 3;
/** Where the format's own header fields start. */
const FIELDS_OFFSET = MAGIC_SIZE + 12;
const BUFFER_SIZE = 1 << 20;
const TWO_32 = 2 ** 32;

/** What a reader and writer of one format agree on. */
export interface IndexFormat {
  /** Up to 16 ASCII characters. */
  magic: string;
  version: number;
  /** Names of the format's own header fields, in order (for messages and `index dump`). */
  fields: readonly string[];
  /** "Cards", "CardInfo": the seed's file name, for messages. */
  what: string;
}

function headerFormat(format: IndexFormat) {
  if (format.fields.length > MAX_FIELDS) throw new RangeError(`${format.what}: at most ${MAX_FIELDS} header fields`);
  return {
    magic: format.magic.padEnd(MAGIC_SIZE, '\0'),
    version: format.version,
    fields: 3 + format.fields.length,
    size: INDEX_HEADER_SIZE,
    what: `${format.what} file`,
    code: 'SHERLOCK_CORRUPT_INDEX' as const,
  };
}

export function corruptIndex(file: string, offset: number, message: string): SherlockError {
  return new SherlockError('SHERLOCK_CORRUPT_INDEX', message, { file, offset });
}

/** The magic a file starts with (NULs stripped), to tell formats apart; '' if too short. */
export function readMagic(file: string): string {
  const fd = openRead(file);
  try {
    return readAt(fd, file, MAGIC_SIZE, 0).toString('latin1').replace(/\0+$/, '');
  } finally {
    closeSync(fd);
  }
}

/** Opens a file for reading; a missing file is SHERLOCK_NOT_FOUND. */
export function openRead(file: string): number {
  try {
    return openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new SherlockError('SHERLOCK_NOT_FOUND', 'no such file', { file }, { cause: err });
    throw ioError(err, file, 'opening');
  }
}

/** Streams one index file: write() the body, then finish() with the header fields. */
export class IndexFileWriter {
  private readonly temp: string;
  private fd: number | undefined;
  private buffer = Buffer.allocUnsafe(BUFFER_SIZE);
  private used = 0;
  private flushed = 0;
  private crc = 0;

  /**
   * `scratch`: a working file of the indexer, removed or fsynced by the
   * publish step, so finish() skips its own fdatasync and directory fsync.
   */
  constructor(
    readonly file: string,
    private readonly format: IndexFormat,
    private readonly options: { scratch?: boolean } = {},
  ) {
    headerFormat(format);
    this.temp = `${file}.tmp`;
    try {
      this.fd = openSync(this.temp, 'w');
    } catch (err) {
      throw ioError(err, this.temp, 'creating');
    }
  }

  /** Body bytes written so far: the body offset the next write() lands at. */
  get length(): number {
    return this.flushed + this.used;
  }

  write(data: Uint8Array): void {
    if (this.fd === undefined) throw new Error(`${this.format.what} writer already finished`);
    if (this.used + data.length > this.buffer.length) this.flush();
    if (data.length >= this.buffer.length) {
      this.crc = crc32(data, this.crc);
      writeAt(this.fd, this.temp, data, INDEX_HEADER_SIZE + this.flushed);
      this.flushed += data.length;
      return;
    }
    this.buffer.set(data, this.used);
    this.used += data.length;
  }

  /** Zero bytes up to the next multiple of 2^shift (body offsets). */
  align(shift: number): void {
    const pad = -this.length & ((1 << shift) - 1);
    if (pad > 0) this.write(Buffer.alloc(pad));
  }

  private flush(): void {
    if (this.used === 0) return;
    const data = this.buffer.subarray(0, this.used);
    this.crc = crc32(data, this.crc);
    writeAt(this.fd!, this.temp, data, INDEX_HEADER_SIZE + this.flushed);
    this.flushed += this.used;
    this.used = 0;
  }

  /** Footer, then the header with `fields` (the format's, in its order); fdatasync, rename, fsync the directory. */
  finish(fields: readonly number[]): void {
    if (fields.length !== this.format.fields.length) throw new RangeError(`${this.format.what}: ${this.format.fields.length} header fields expected`);
    this.flush();
    const fd = this.fd!;
    const length = this.flushed;
    const footer = Buffer.alloc(INDEX_FOOTER_SIZE);
    footer.writeUInt32LE(this.crc >>> 0, 0);
    footer.writeUInt32LE(INDEX_TRAILER, 4);
    writeAt(fd, this.temp, footer, INDEX_HEADER_SIZE + length);
    const { magic } = headerFormat(this.format);
    const header = encodeFileHeader(INDEX_HEADER_SIZE, magic, [this.format.version, length % TWO_32, Math.floor(length / TWO_32), ...fields]);
    writeAt(fd, this.temp, header, 0);
    try {
      if (this.options.scratch !== true) fdatasyncSync(fd);
      closeSync(fd);
      this.fd = undefined;
      renameSync(this.temp, this.file);
    } catch (err) {
      this.abort();
      throw ioError(err, this.file, 'finishing');
    }
    if (this.options.scratch !== true) syncDirectory(dirname(this.file));
  }

  /** Gives the file up: closes and removes the temporary file. */
  abort(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    rmSync(this.temp, { force: true });
  }
}

/** A writer of records that counts them; the count is the format's first header field. */
export abstract class CountingWriter {
  protected readonly out: IndexFileWriter;
  protected count = 0;

  constructor(file: string, format: IndexFormat) {
    this.out = new IndexFileWriter(file, format);
  }

  /** The header fields after the count. */
  protected moreFields(): number[] {
    return [];
  }

  finish(): void {
    this.out.finish([this.count, ...this.moreFields()]);
  }

  abort(): void {
    this.out.abort();
  }
}

/** One index file opened for reading: header and framing checked, body read on demand. */
export class IndexFileReader {
  /** The format's own header fields, in its order. */
  readonly fields: readonly number[];
  readonly bodyLength: number;

  private constructor(
    readonly file: string,
    private fd: number | undefined,
    fields: number[],
    readonly format: IndexFormat,
  ) {
    this.bodyLength = fields[1]! + fields[2]! * TWO_32;
    this.fields = fields.slice(3);
  }

  static open(file: string, format: IndexFormat): IndexFileReader {
    const fd = openRead(file);
    try {
      const head = readAt(fd, file, INDEX_HEADER_SIZE, 0);
      const fields = checkFileHeader(head, file, headerFormat(format));
      const reader = new IndexFileReader(file, fd, fields, format);
      reader.checkFraming();
      return reader;
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** Opens `file` and hands it to `make` (a format's reader), closing it if that throws. */
  static openWith<T>(file: string, format: IndexFormat, make: (reader: IndexFileReader) => T): T {
    const reader = IndexFileReader.open(file, format);
    try {
      return make(reader);
    } catch (err) {
      reader.close();
      throw err;
    }
  }

  private checkFraming(): void {
    const size = fstatSync(this.fd!).size;
    const expected = INDEX_HEADER_SIZE + this.bodyLength + INDEX_FOOTER_SIZE;
    if (size !== expected) {
      const message = size < expected ? 'cut short' : 'has bytes after its footer';
      throw corruptIndex(this.file, Math.min(size, expected), `${this.format.what} file ${message}: ${size} bytes, the header says ${expected}`);
    }
    const trailer = readAt(this.fd!, this.file, 4, expected - 4);
    if (trailer.readUInt32LE(0) !== INDEX_TRAILER) throw this.corrupt(this.bodyLength + 4, `bad trailer 0x${trailer.readUInt32LE(0).toString(16)}`);
  }

  /** A SHERLOCK_CORRUPT_INDEX error at a body offset (named as the file offset). */
  corrupt(bodyOffset: number, message: string): SherlockError {
    return corruptIndex(this.file, INDEX_HEADER_SIZE + bodyOffset, message);
  }

  /** A SHERLOCK_CORRUPT_INDEX error about the format's header field `index`. */
  corruptField(index: number, message: string): SherlockError {
    return corruptIndex(this.file, FIELDS_OFFSET + 4 * index, `${this.format.fields[index]} field: ${message}`);
  }

  /** `length` body bytes at body offset `offset`; running past the body is corruption, named `what`. */
  read(offset: number, length: number, what: string): Buffer {
    return this.readInto(Buffer.allocUnsafe(length), offset, length, what);
  }

  /** read() into the start of `out` (at least `length` bytes); returns the bytes read, a view of `out`. */
  readInto(out: Buffer, offset: number, length: number, what: string): Buffer {
    if (this.fd === undefined) throw new Error(`${this.file} is closed`);
    if (offset < 0 || length < 0 || offset + length > this.bodyLength) {
      throw this.corrupt(Math.min(Math.max(offset, 0), this.bodyLength), `${what} of ${length} bytes runs past the body (${this.bodyLength} bytes)`);
    }
    return readInto(this.fd, this.file, out, length, INDEX_HEADER_SIZE + offset);
  }

  /** The whole body, its CRC checked. */
  readBody(): Buffer {
    const body = this.read(0, this.bodyLength, 'body');
    this.checkCrc(crc32(body));
    return body;
  }

  /** The body in blocks of `size` bytes (the last may be shorter); its CRC is checked after the last. */
  *blocks(size = BUFFER_SIZE): IterableIterator<{ offset: number; data: Buffer }> {
    let crc = 0;
    for (let offset = 0; offset < this.bodyLength; offset += size) {
      const data = this.read(offset, Math.min(size, this.bodyLength - offset), 'body');
      crc = crc32(data, crc);
      yield { offset, data };
    }
    this.checkCrc(crc);
  }

  /** Reads the body in blocks and checks its CRC, without holding it. */
  verify(): void {
    for (const block of this.blocks()) void block;
  }

  /** Records of `size` bytes, read in blocks; the count and the CRC are checked. */
  *records(size: number, count: number): IterableIterator<{ index: number; offset: number; data: Buffer }> {
    recordCount(this, size, count);
    let index = 0;
    for (const block of this.blocks(Math.max(1, Math.floor(BUFFER_SIZE / size)) * size)) {
      for (let at = 0; at < block.data.length; at += size) {
        yield { index: index++, offset: block.offset + at, data: block.data.subarray(at, at + size) };
      }
    }
  }

  private checkCrc(crc: number): void {
    const stored = readAt(this.fd!, this.file, 4, INDEX_HEADER_SIZE + this.bodyLength).readUInt32LE(0);
    if (stored !== crc >>> 0) throw this.corrupt(this.bodyLength, `body CRC-32 mismatch: footer says ${hex(stored)}, body has ${hex(crc >>> 0)}`);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

function hex(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/** A file read whole: its header fields, its body (CRC checked), and errors placed in it. */
export interface WholeIndexFile {
  fields: readonly number[];
  body: Buffer;
  corrupt(bodyOffset: number, message: string): SherlockError;
}

export function readIndexFile(file: string, format: IndexFormat): WholeIndexFile {
  const reader = IndexFileReader.open(file, format);
  try {
    return { fields: reader.fields, body: reader.readBody(), corrupt: (offset, message) => reader.corrupt(offset, message) };
  } finally {
    reader.close();
  }
}

/** The record count of a file of fixed-size records, checked against the body length. */
export function recordCount(file: WholeIndexFile | IndexFileReader, size: number, count: number): number {
  const length = file instanceof IndexFileReader ? file.bodyLength : file.body.length;
  if (length !== count * size) throw file.corrupt(0, `body of ${length} bytes does not hold ${count} records of ${size} bytes`);
  return count;
}
