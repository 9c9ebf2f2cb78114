/**
 * Hadoop's SequenceFile: a flat file of key/value records, what Nutch's crawl
 * data is made of (MapFiles are two of them, map-file.ts). Reader for versions
 * 1–6, writer for version 6, both with no compression, per-record and block
 * compression. Spec: `../shared/spec/nutch-formats.md` §3–§4.
 *
 * Header (version 6):
 *   "SEQ", u8 version 6
 *   Text key class, Text value class (Java class names; Java UTF before v4)
 *   bool compressed, bool blockCompressed (v4+; v3 has only the first)
 *   Text codec class, only when compressed (v5+; DefaultCodec implied before)
 *   metadata (v6+): i32 n, n × (Text key, Text value), keys in Text order
 *   16-byte sync marker (v2+), repeated in every sync entry of the file
 *
 * Records, no compression (NONE) or per-record compression (RECORD):
 *   i32 record length (key length + stored value length), i32 key length,
 *   key, value (RECORD: the value alone through the codec)
 * Blocks (BLOCK), each after a sync entry:
 *   vint record count, then four codec units, each a vint size and that many
 *   bytes: key lengths (vints), keys, value lengths (vints), values
 * A sync entry is i32 −1 and the marker, between records or before a block.
 * The file simply ends after its last record or block.
 *
 * Where the writer puts sync entries decides whether a rewrite is
 * byte-identical to Hadoop's, so it does exactly what Hadoop's writer does:
 * the last sync position starts at 0 (not after the header); before a
 * NONE/RECORD record, if the position is at least the last sync position
 * plus the interval (2000 bytes up to Hadoop 2.7, 102400 from 2.8), a sync
 * entry is written and the position after it remembered; a BLOCK file gets
 * one before every block. A block is flushed once its keys and values reach
 * the block size (1,000,000 bytes) after an append, and at close.
 *
 * DefaultCodec is zlib with its header (RFC 1950), one stream per unit; the
 * writer deflates at level 6 like Hadoop, with libdeflate (raw-deflate.ts):
 * any zlib inflater reads its streams, but they are not stock zlib's bytes;
 * pass another `codec` (a stock-zlib deflate) where byte identity with
 * Hadoop's output matters.
 *
 * The reader distrusts the file: lengths are checked against the file size
 * before anything is read or allocated, decompressed units are bounded and
 * must use all their bytes, sync entries must carry the header's marker.
 * Damage is SHERLOCK_CORRUPT_HADOOP naming the file and the offset of the
 * record, block or unit. The writer writes in order through a small buffer,
 * so memory stays bounded whatever the number of records; a file is complete
 * once close() returns (fdatasynced). With `checksum` it also writes Hadoop's
 * `.crc` side file at close; either way an old one is removed first.
 */

import { randomBytes } from 'node:crypto';
import { closeSync, fdatasyncSync, openSync } from 'node:fs';
import { gunzipSync, gzipSync, inflateSync } from 'node:zlib';
import { adler32 } from '../bucket/bucket.js';
import { ioError, isSherlockError } from '../errors.js';
import { writeAt } from '../files.js';
import { FileWindow } from '../archive/gzip-member.js';
import { ChecksumBuilder, removeChecksumFile, writeChecksumFile } from './crc.js';
import { corruptHadoop, DataReader, DataWriter, vlongLength } from './io.js';
import { decodeWritable, findWritable, type WritableType } from './writables.js';
import { RawDeflater } from '../deflate/raw-deflate.js';

export type Compression = 'none' | 'record' | 'block';

/** One compression codec: its Java class name and one unit in, one unit out. */
export interface Codec {
  readonly className: string;
  compress(data: Uint8Array): Uint8Array;
  /** Inflates one whole unit (throws a plain Error on damage, or past `maxLength`). */
  decompress(data: Buffer, maxLength: number): Buffer;
}

export const DEFAULT_CODEC = 'org.apache.hadoop.io.compress.DefaultCodec';
const DEFLATE_CODEC = 'org.apache.hadoop.io.compress.DeflateCodec';
const GZIP_CODEC = 'org.apache.hadoop.io.compress.GzipCodec';

/** Sync intervals of Hadoop's writer: up to 2.7, and from 2.8 on (HADOOP-1381). */
export const SYNC_INTERVAL = { hadoop2: 2000, hadoop3: 102_400 } as const;
/** `io.seqfile.compress.blocksize`: uncompressed keys + values that close a block. */
export const BLOCK_SIZE = 1_000_000;
/** Largest decompressed unit we accept: a bound against zlib bombs, far above Nutch's 64 KiB pages. */
export const MAX_UNIT_LENGTH = 512 * 1024 * 1024;

const SYNC_ESCAPE = -1;
const SYNC_SIZE = 16;
const MAGIC = Buffer.from('SEQ', 'latin1');
const VERSION = 6;
/** Bytes read ahead at a time; a record larger than this is read whole. */
const CHUNK = 256 * 1024;

function inflateWhole(data: Buffer, maxLength: number): Buffer {
  const { buffer, engine } = inflateSync(data, { info: true, maxOutputLength: maxLength }) as unknown as {
    buffer: Buffer;
    engine: { bytesWritten: number };
  };
  if (engine.bytesWritten !== data.length) throw new Error(`${data.length - engine.bytesWritten} bytes after the end of the zlib stream`);
  return buffer;
}

/** zlib streams at `level` from one deflater (made on first use). */
function zlibDeflate(level: number): (data: Uint8Array) => Uint8Array {
  let deflater: RawDeflater | undefined;
  return (data) => (deflater ??= new RawDeflater(level)).zlib(data);
}

/** DefaultCodec; `deflate` replaces the level-6 deflate (it must produce a zlib stream). */
export function defaultCodec(deflate: (data: Uint8Array) => Uint8Array = zlibDeflate(6)): Codec {
  return { className: DEFAULT_CODEC, compress: deflate, decompress: inflateWhole };
}

/** A zlib stream (RFC 1950) of stored deflate blocks (RFC 1951 §3.2.4): zlib's level 0, written without a zlib handle. */
export function storedZlib(data: Uint8Array): Buffer {
  const blocks = Math.max(1, Math.ceil(data.length / 65_535));
  const out = Buffer.allocUnsafe(2 + blocks * 5 + data.length + 4);
  out[0] = 0x78;
  out[1] = 0x01;
  let at = 2;
  for (let i = 0; i < blocks; i++) {
    const chunk = data.subarray(i * 65_535, (i + 1) * 65_535);
    out[at] = i === blocks - 1 ? 1 : 0;
    out.writeUInt16LE(chunk.length, at + 1);
    out.writeUInt16LE(~chunk.length & 0xffff, at + 3);
    out.set(chunk, at + 5);
    at += 5 + chunk.length;
  }
  out.writeUInt32BE(adler32(data), at);
  return out;
}

/**
 * DefaultCodec for bulk writing: units shorter than `storeBelow` bytes go as
 * stored blocks, the rest deflated at level 1 (as the gatherer's ARC files);
 * any inflater reads both. Deflate gains next to nothing on a value of a few
 * dozen bytes (a linked CrawlDatum) for a call that costs more than the
 * copy; libdeflate's level 1 deflates text 2.3 times as fast as its level 6
 * for 4% more bytes (198 against 87 MB/s here).
 */
export function bulkCodec(storeBelow = 256): Codec {
  const deflate = defaultCodec(zlibDeflate(1));
  return { ...deflate, compress: (data) => (data.length < storeBelow ? storedZlib(data) : deflate.compress(data)) };
}

/** The codec a header names, for reading; undefined when we have none. */
export function codecFor(className: string): Codec | undefined {
  if (className === DEFAULT_CODEC || className === DEFLATE_CODEC) return { ...defaultCodec(), className };
  if (className === GZIP_CODEC) {
    return { className, compress: (data) => gzipSync(data), decompress: (data, maxLength) => gunzipSync(data, { maxOutputLength: maxLength }) };
  }
  return undefined;
}

export interface SequenceFileHeader {
  version: number;
  keyClass: string;
  valueClass: string;
  /** Where the value class name starts (for errors about it). */
  valueClassOffset: number;
  compression: Compression;
  /** Null when not compressed. */
  codecClass: string | null;
  metadata: Array<[string, string]>;
  /** Null only in version 1 files, which have no sync entries. */
  syncMarker: Buffer | null;
  /** Bytes of the header; the first record or block starts here. */
  length: number;
}

function parseHeader(r: DataReader): SequenceFileHeader {
  if (r.remaining < 4 || !r.bytesOf(3, 'magic').equals(MAGIC)) throw r.corrupt('not a SequenceFile (no "SEQ" magic)', 0);
  const version = r.u8('version');
  if (version < 1 || version > VERSION) throw r.corrupt(`unsupported SequenceFile version ${version}`, 3);
  const className = (what: string): string => (version < 4 ? r.javaUtf(what) : r.text(what));
  const keyClass = className('key class');
  const valueClassOffset = r.pos;
  const valueClass = className('value class');
  const compressed = version > 2 && r.bool('compression flag');
  const blocked = version > 3 && r.bool('block compression flag');
  if (blocked && !compressed) throw r.corrupt('block compression flag set without the compression flag', r.pos - 1);
  let codecClass: string | null = null;
  if (compressed) {
    const at = r.pos;
    codecClass = version > 4 ? r.text('codec class') : DEFAULT_CODEC;
    if (codecFor(codecClass) === undefined) throw r.corrupt(`unsupported compression codec ${codecClass}`, at);
  }
  const metadata: Array<[string, string]> = [];
  if (version > 5) {
    const n = r.count(2, 'metadata count');
    for (let i = 0; i < n; i++) metadata.push([r.text('metadata key'), r.text('metadata value')]);
  }
  const syncMarker = version > 1 ? Buffer.from(r.bytesOf(SYNC_SIZE, 'sync marker')) : null;
  const compression: Compression = blocked ? 'block' : compressed ? 'record' : 'none';
  return { version, keyClass, valueClass, valueClassOffset, compression, codecClass, metadata, syncMarker, length: r.pos };
}

/** One record; for BLOCK files `offset` is the sync entry before its block. */
export interface SequenceRecord {
  offset: number;
  key: Buffer;
  /** The value's serialisation, decompressed. */
  value: Buffer;
  /** Where key and value lie in the file; undefined when they were decompressed (errors then name `offset`). */
  keyOffset?: number;
  valueOffset?: number;
}

/** Sequential reads through a FileWindow, every one checked against the file size. */
class Cursor {
  constructor(
    private readonly window: FileWindow,
    public pos: number,
  ) {}

  /** The next `n` bytes; `start` and `what` name the structure being read in an error. */
  take(n: number, start: number, what: string): Buffer {
    const { path, size } = this.window;
    if (this.pos + n > size) throw corruptHadoop(path, start, `${what} runs past the end of the file (${size} bytes)`);
    const out = this.window.read(this.pos, n);
    if (out.length < n) throw corruptHadoop(path, start, `${what}: the file shrank while being read`);
    this.pos += n;
    return out;
  }

  i32(start: number, what: string): number {
    return this.take(4, start, what).readInt32BE();
  }

  vint(start: number, what: string): number {
    const first = this.take(1, start, what);
    const n = vlongLength(first[0]!);
    const bytes = n === 1 ? first : Buffer.concat([first, this.take(n - 1, start, what)]);
    return new DataReader(bytes, this.window.path, start, false).vint(what);
  }
}

export class SequenceFileReader {
  private readonly codec: Codec | null;

  private constructor(
    private readonly window: FileWindow,
    readonly header: SequenceFileHeader,
    private readonly maxUnitLength: number,
  ) {
    this.codec = header.codecClass === null ? null : codecFor(header.codecClass)!;
  }

  get file(): string {
    return this.window.path;
  }

  get size(): number {
    return this.window.size;
  }

  static open(file: string, options: { maxUnitLength?: number } = {}): SequenceFileReader {
    const window = FileWindow.open(file, CHUNK);
    try {
      // The header is small but its metadata has no bound: read more until it fits.
      for (let n = Math.min(window.size, 4096); ; n = Math.min(window.size, n * 4)) {
        const r = new DataReader(window.read(0, n), file, 0);
        try {
          return new SequenceFileReader(window, parseHeader(r), options.maxUnitLength ?? MAX_UNIT_LENGTH);
        } catch (err) {
          if (!r.truncated || n === window.size) throw err;
        }
      }
    } catch (err) {
      window.close();
      throw isSherlockError(err) ? err : ioError(err, file, 'reading');
    }
  }

  close(): void {
    this.window.close();
  }

  /**
   * Every record from `from` (the first by default; otherwise the offset of a
   * record, a sync entry or, in BLOCK files, a block's sync entry, as MapFile
   * indexes give them) to the end of the file.
   */
  *records(from = this.header.length): Generator<SequenceRecord> {
    if (from < this.header.length || from > this.size) throw corruptHadoop(this.file, from, 'offset outside the records of the file');
    const cursor = new Cursor(this.window, from);
    yield* this.header.compression === 'block' ? this.blocks(cursor) : this.plain(cursor);
  }

  private checkSync(cursor: Cursor, start: number): void {
    const marker = cursor.take(SYNC_SIZE, start, 'sync entry');
    if (this.header.syncMarker === null) throw corruptHadoop(this.file, start, 'sync entry in a version 1 file, which has none');
    if (!marker.equals(this.header.syncMarker)) throw corruptHadoop(this.file, start + 4, "sync marker differs from the header's");
  }

  private inflate(data: Buffer, at: number, what: string): Buffer {
    try {
      return this.codec!.decompress(data, this.maxUnitLength);
    } catch (err) {
      throw corruptHadoop(this.file, at, `${what} does not decompress: ${err instanceof Error ? err.message : String(err)}`, err);
    }
  }

  private *plain(cursor: Cursor): Generator<SequenceRecord> {
    while (cursor.pos < this.size) {
      const start = cursor.pos;
      const length = cursor.i32(start, 'record length');
      if (length === SYNC_ESCAPE) {
        this.checkSync(cursor, start);
        continue;
      }
      if (length < 0) throw corruptHadoop(this.file, start, `negative record length ${length}`);
      const keyLength = cursor.i32(start, 'key length');
      if (keyLength < 0 || keyLength > length) throw corruptHadoop(this.file, start + 4, `key length ${keyLength} outside record length ${length}`);
      if (start + 8 + length > this.size) throw corruptHadoop(this.file, start, `record of ${length} bytes runs past the end of the file (${this.size} bytes)`);
      const key = cursor.take(keyLength, start, 'key');
      const stored = cursor.take(length - keyLength, start, 'value');
      if (this.codec === null) yield { offset: start, key, value: stored, keyOffset: start + 8, valueOffset: start + 8 + keyLength };
      else yield { offset: start, key, value: this.inflate(stored, start, 'value'), keyOffset: start + 8 };
    }
  }

  private unit(cursor: Cursor, what: string): Buffer {
    const at = cursor.pos;
    const n = cursor.vint(at, `${what} size`);
    if (n < 0) throw corruptHadoop(this.file, at, `${what} has negative size ${n}`);
    return this.inflate(cursor.take(n, at, what), at, what);
  }

  /** Cuts `data` into `count` pieces whose lengths are the vints in `lengths`. */
  private split(lengths: Buffer, data: Buffer, count: number, at: number, what: string): Buffer[] {
    const r = new DataReader(lengths, this.file, at, false);
    const out: Buffer[] = [];
    let pos = 0;
    for (let i = 0; i < count; i++) {
      const n = r.vint(`${what} length`);
      if (n < 0 || pos + n > data.length) throw r.corrupt(`${what} ${i} of length ${n} runs past its block's ${data.length} bytes`);
      out.push(data.subarray(pos, pos + n));
      pos += n;
    }
    r.end(`${what} lengths`);
    if (pos !== data.length) throw r.corrupt(`${data.length - pos} ${what} bytes left over in the block`);
    return out;
  }

  private *blocks(cursor: Cursor): Generator<SequenceRecord> {
    while (cursor.pos < this.size) {
      const start = cursor.pos;
      if (cursor.i32(start, 'sync entry') !== SYNC_ESCAPE) throw corruptHadoop(this.file, start, 'block does not start with a sync entry');
      this.checkSync(cursor, start);
      const count = cursor.vint(start, 'block record count');
      if (count <= 0) throw corruptHadoop(this.file, start, `block of ${count} records`);
      const keyLengths = this.unit(cursor, 'key lengths');
      const keysAt = cursor.pos;
      const keys = this.split(keyLengths, this.unit(cursor, 'keys'), count, keysAt, 'key');
      const valueLengths = this.unit(cursor, 'value lengths');
      const valuesAt = cursor.pos;
      const values = this.split(valueLengths, this.unit(cursor, 'values'), count, valuesAt, 'value');
      for (let i = 0; i < count; i++) yield { offset: start, key: keys[i]!, value: values[i]! };
    }
  }
}

/** Every record of a file, the file closed at the end (or when the loop stops early). */
export function* readSequenceFile(file: string): Generator<SequenceRecord> {
  const reader = SequenceFileReader.open(file);
  try {
    yield* reader.records();
  } finally {
    reader.close();
  }
}

/** The Writable types a file's header names; an unknown class is damage at its offset. */
export function recordTypes(reader: SequenceFileReader): { key: WritableType<unknown>; value: WritableType<unknown> } {
  const { keyClass, valueClass, valueClassOffset } = reader.header;
  const key = findWritable(keyClass);
  if (key === undefined) throw corruptHadoop(reader.file, 4, `unknown key class ${keyClass}`);
  const value = findWritable(valueClass);
  if (value === undefined) throw corruptHadoop(reader.file, valueClassOffset, `unknown value class ${valueClass}`);
  return { key, value };
}

/** Decodes one record with the types of recordTypes(). */
export function decodeRecord(
  file: string,
  types: { key: WritableType<unknown>; value: WritableType<unknown> },
  record: SequenceRecord,
): { key: unknown; value: unknown } {
  return {
    key: decodeWritable(types.key, record.key, file, record.keyOffset ?? record.offset, record.keyOffset !== undefined),
    value: decodeWritable(types.value, record.value, file, record.valueOffset ?? record.offset, record.valueOffset !== undefined),
  };
}

export interface SequenceFileWriterOptions {
  keyClass: string;
  valueClass: string;
  compression?: Compression;
  /** DefaultCodec through node:zlib unless given; used only when compressing. */
  codec?: Codec;
  /** Header metadata; written in Text order of the keys, as Hadoop's TreeMap does. */
  metadata?: ReadonlyArray<readonly [string, string]>;
  /** 16 bytes; random unless given (give the original's to reproduce a file). */
  syncMarker?: Uint8Array;
  /** Bytes between sync entries in NONE/RECORD files: SYNC_INTERVAL.hadoop3 unless given. */
  syncInterval?: number;
  /** Uncompressed keys + values that close a block: BLOCK_SIZE unless given. */
  blockSize?: number;
  /** Also write Hadoop's `.crc` side file at close. */
  checksum?: boolean;
}

/** Output held before a write to the file. */
const FLUSH_AT = 64 * 1024;

/** Writes a version 6 SequenceFile record by record; see the module comment for where syncs go. */
export class SequenceFileWriter {
  private readonly out = new DataWriter(FLUSH_AT * 2);
  private flushed = 0;
  private lastSync = 0;
  private readonly crc: ChecksumBuilder | undefined;
  private readonly codec: Codec;
  private readonly syncMarker: Uint8Array;
  private readonly syncInterval: number;
  private readonly blockSize: number;
  readonly compression: Compression;
  private readonly block = { count: 0, keyLengths: new DataWriter(), keys: new DataWriter(), valueLengths: new DataWriter(), values: new DataWriter() };
  private closed = false;

  private constructor(
    private readonly fd: number,
    readonly file: string,
    options: SequenceFileWriterOptions,
  ) {
    this.compression = options.compression ?? 'none';
    this.codec = options.codec ?? defaultCodec();
    this.syncMarker = options.syncMarker ?? randomBytes(SYNC_SIZE);
    if (this.syncMarker.length !== SYNC_SIZE) throw new RangeError(`a sync marker has ${SYNC_SIZE} bytes, not ${this.syncMarker.length}`);
    this.syncInterval = options.syncInterval ?? SYNC_INTERVAL.hadoop3;
    this.blockSize = options.blockSize ?? BLOCK_SIZE;
    this.crc = options.checksum === true ? new ChecksumBuilder() : undefined;
    const out = this.out;
    out.bytes(MAGIC);
    out.u8(VERSION);
    out.text(options.keyClass);
    out.text(options.valueClass);
    out.bool(this.compression !== 'none');
    out.bool(this.compression === 'block');
    if (this.compression !== 'none') out.text(this.codec.className);
    const metadata = [...(options.metadata ?? [])].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    out.i32(metadata.length);
    for (const [key, value] of metadata) {
      out.text(key);
      out.text(value);
    }
    out.bytes(this.syncMarker);
  }

  /** Creates (or truncates) `file`; any `.crc` beside it is removed first, so none can go stale. */
  static create(file: string, options: SequenceFileWriterOptions): SequenceFileWriter {
    removeChecksumFile(file);
    let fd: number;
    try {
      fd = openSync(file, 'w');
    } catch (err) {
      throw ioError(err, file, 'creating');
    }
    return new SequenceFileWriter(fd, file, options);
  }

  /** Bytes in the file so far, as Hadoop's getLength(): a BLOCK file's unflushed block not included. */
  get position(): number {
    return this.flushed + this.out.length;
  }

  /** Appends one record: the key's and the value's serialisations. */
  append(key: Uint8Array, value: Uint8Array): void {
    if (this.closed) throw new Error(`${this.file}: append after close`);
    if (this.compression === 'block') {
      const b = this.block;
      b.keyLengths.vint(key.length);
      b.keys.bytes(key);
      b.valueLengths.vint(value.length);
      b.values.bytes(value);
      b.count += 1;
      if (b.keys.length + b.values.length >= this.blockSize) this.writeBlock();
    } else {
      this.appendStored(key, this.compression === 'record' ? this.codec.compress(value) : value);
      return;
    }
    if (this.out.length >= FLUSH_AT) this.flush();
  }

  /**
   * Appends a record of a NONE or RECORD file whose value is already as the
   * file stores it (under RECORD, a zlib stream of this file's codec, made in
   * a worker thread).
   */
  appendStored(key: Uint8Array, stored: Uint8Array): void {
    if (this.closed) throw new Error(`${this.file}: append after close`);
    if (this.compression === 'block') throw new Error(`${this.file}: a BLOCK file takes no stored values`);
    if (this.position >= this.lastSync + this.syncInterval) this.sync();
    this.out.i32(key.length + stored.length);
    this.out.i32(key.length);
    this.out.bytes(key);
    this.out.bytes(stored);
    if (this.out.length >= FLUSH_AT) this.flush();
  }

  private sync(): void {
    if (this.position === this.lastSync) return;
    this.out.i32(SYNC_ESCAPE);
    this.out.bytes(this.syncMarker);
    this.lastSync = this.position;
  }

  private writeBlock(): void {
    const b = this.block;
    if (b.count === 0) return;
    this.sync();
    this.out.vint(b.count);
    for (const unit of [b.keyLengths, b.keys, b.valueLengths, b.values]) {
      const compressed = this.codec.compress(unit.view());
      this.out.vint(compressed.length);
      this.out.bytes(compressed);
      unit.reset();
    }
    b.count = 0;
  }

  private flush(): void {
    const bytes = this.out.view();
    writeAt(this.fd, this.file, bytes, this.flushed);
    this.crc?.update(bytes);
    this.flushed += bytes.length;
    this.out.reset();
  }

  /** Writes what is buffered (a BLOCK file's last block too), fdatasyncs, closes; then the `.crc` if asked for. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      if (this.compression === 'block') this.writeBlock();
      this.flush();
      fdatasyncSync(this.fd);
    } catch (err) {
      throw isSherlockError(err) ? err : ioError(err, this.file, 'writing');
    } finally {
      closeSync(this.fd);
    }
    if (this.crc !== undefined) writeChecksumFile(this.file, this.crc.finish());
  }
}
