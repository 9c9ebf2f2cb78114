/**
 * The bucket file (`<state>/gather/buckets`): every parsed document the
 * gatherer stores, appended by one writer and read concurrently by the shepherd
 * and the indexer. After the original's obuck (sherlock-original.md §2).
 *
 * Layout; every u32 is little-endian.
 *
 *   File header, offset 0, 128 bytes
 *     0    16  magic "SHERLOCK-BUCKETS" (ASCII)
 *     16    4  format version, 1
 *     20    4  alignment shift, 7 (buckets start at multiples of 128)
 *     24    4  generation: 0 when created, +1 by every shake that rewrites the file
 *     28    4  CRC-32 of bytes 0–27
 *     32   96  zero
 *
 *   Bucket at offset P (a multiple of 128, at least 128), oid = P >> 7
 *     P+0     4  magic 0xdeadf00d; 0xdeadfee1 while the bucket is being written
 *     P+4     4  oid; 0xffffffff once the bucket is deleted
 *     P+8     4  data length L (at most MAX_BUCKET_LENGTH)
 *     P+12    4  type (bucket.ts: 0x80000000 PLAIN … 0x80000003 V3.3 deflate)
 *     P+16    L  data
 *     P+16+L  4  CRC-32 of the data, continued over the 8 bytes at P+8 (length
 *                and type), so a damaged length or type is caught too
 *     P+20+L  4  trailer 0xfeedcafe
 *     P+24+L     zero padding to the next multiple of 128
 *
 * A new file appears whole: its header is written to `<file>.tmp`, fsynced and
 * renamed into place. Oids are positions, so they are never reused; the first
 * bucket has oid 1.
 * Deleting writes 0xffffffff over the oid field, as the original did; the data
 * stays until `shake`. The magic and oid fields are outside the CRC because they
 * change after the data is written.
 *
 * Writing. One writer at a time, enforced by `<file>.lock` (lock.ts). A bucket
 * is written with the in-progress magic, data, CRC, trailer and padding; then
 * the magic is flipped to 0xdeadf00d. Readers yield only flipped buckets and
 * stop at an in-progress one, so they never see a partial bucket, and a crash
 * leaves at most one in-progress bucket, at the end. A streamed bucket (begin →
 * write → commit) carries length 0 until commit patches it, just before the flip.
 *
 * Opening a writer repairs the tail: it walks the headers (checking each bucket's
 * trailer, not its CRC) and cuts off an in-progress or truncated last bucket
 * (one that lost only padding is kept and padded again).
 * Damage with intact buckets after it (found by scanning every 128-byte boundary
 * for a bucket that passes every check, CRC included) is kept and reported, never
 * truncated: valid buckets are not given up for a damaged one.
 *
 * What survives a crash. kill -9 of the writer loses nothing that append() or
 * commit() returned: the kernel holds the written pages. Power loss or a kernel
 * crash may lose every bucket written since the last sync(), and may leave a
 * flipped bucket whose data never reached the disk; its CRC then fails and it is
 * reported as damage (readers throw, lenient iteration and verify report it).
 * So call sync() before anything outside this file (a database row, a
 * checkpoint, a message to another process) records an oid as durable.
 *
 * Shake rewrites the file without deleted buckets into `<file>.tmp`, fsyncs it,
 * writes `<file>.oidmap.<G>` (old oid → new oid for every kept bucket, G the new
 * generation), then renames the new file over the old one and fsyncs the
 * directory. Readers that had the old file open keep reading it (the old inode);
 * anyone holding oids also holds the generation they came from, and a reader
 * whose header shows a newer generation translates them with resolveOid() or
 * readOidMap(). Maps are never removed by us: one may go once nobody holds oids
 * of its old generation. A crash during shake leaves the old file in place (and
 * a `.tmp` file or an unused map, which the next shake overwrites).
 *
 *   Oid map `<file>.oidmap.<G>`
 *     0    16  magic "SHERLOCK-OID-MAP" (ASCII)
 *     16    4  format version, 1
 *     20    4  generation the old oids belong to (G − 1)
 *     24    4  generation the new oids belong to (G)
 *     28    4  number of pairs N
 *     32   8N  pairs (u32 old oid, u32 new oid), old oids strictly increasing
 *     32+8N 4  CRC-32 of bytes 0 to 31+8N
 *     36+8N 4  trailer 0xfeedcafe
 */

import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  rmSync,
  writeSync,
  writevSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { decodeBucket, type Bucket } from './bucket.js';
import { SherlockError, ioError } from '../errors.js';
import { checkFileHeader, encodeFileHeader } from '../file-header.js';
import { acquireLock, type Lock } from '../lock.js';
import { readAt, syncDirectory } from '../files.js';
import { logger } from '../log.js';

export const ALIGN_SHIFT = 7;
export const ALIGN = 1 << ALIGN_SHIFT;
export const FILE_HEADER_SIZE = ALIGN;
export const BUCKET_MAGIC = 0xdeadf00d;
export const BUCKET_MAGIC_WRITING = 0xdeadfee1;
export const BUCKET_TRAILER = 0xfeedcafe;
export const DELETED_OID = 0xffffffff;
export const MAX_OID = 0xfffffffe;
/** Larger data is refused (SHERLOCK_TOO_LARGE); a larger length on disk is damage. */
export const MAX_BUCKET_LENGTH = 1 << 30;
export const BUCKET_HEADER_SIZE = 16;
const BUCKET_TAIL_SIZE = 8;

const FILE_MAGIC = 'SHERLOCK-BUCKETS';
const MAP_MAGIC = 'SHERLOCK-OID-MAP';
const FORMAT_VERSION = 1;
/** How much a scan for the next intact bucket reads at a time (a multiple of ALIGN). */
const SCAN_CHUNK = 1 << 20;

const log = logger('buckets');

export function bucketFilePath(state: string): string {
  return join(state, 'gather', 'buckets');
}

export function lockPath(file: string): string {
  return `${file}.lock`;
}

export function oidMapPath(file: string, generation: number): string {
  return `${file}.oidmap.${generation}`;
}

export interface StoredBucket {
  oid: number;
  /** File offset of the bucket header; the data starts BUCKET_HEADER_SIZE later. */
  offset: number;
  type: number;
  data: Buffer;
}

/** A damaged stretch of the file: from `offset` up to `end`, where reading resumed (or the file ended). */
/** The oid of the bucket after this one: where a reader that stopped here continues. */
export function oidAfter(stored: StoredBucket): number {
  return alignUp(stored.offset + BUCKET_HEADER_SIZE + stored.data.length + BUCKET_TAIL_SIZE) / ALIGN;
}

export interface Damage {
  offset: number;
  end: number;
  message: string;
}

// ---------------------------------------------------------------- low level

/** An open bucket file: what the functions below read from. */
interface Source {
  fd: number;
  file: string;
}

function corrupt(file: string, offset: number, message: string): SherlockError {
  return new SherlockError('SHERLOCK_CORRUPT_BUCKET', message, { file, offset });
}

function hex(value: number): string {
  return `0x${value.toString(16).padStart(8, '0')}`;
}

function alignUp(offset: number): number {
  return Math.ceil(offset / ALIGN) * ALIGN;
}

function pread(src: Source, length: number, position: number): Buffer {
  return readAt(src.fd, src.file, length, position);
}

function pwrite(src: Source, data: Uint8Array, position: number): void {
  try {
    for (let done = 0; done < data.length; ) done += writeSync(src.fd, data, done, data.length - done, position + done);
  } catch (err) {
    throw ioError(err, src.file, `writing at offset ${position}`);
  }
}

/** Writes `parts` one after another from `position`, in one system call unless the kernel writes less. */
function pwriteParts(src: Source, parts: readonly Uint8Array[], position: number): void {
  let written: number;
  try {
    written = writevSync(src.fd, parts, position);
  } catch (err) {
    throw ioError(err, src.file, `writing at offset ${position}`);
  }
  for (const part of parts) {
    if (written < part.length) pwrite(src, part.subarray(written), position + written);
    written = Math.max(0, written - part.length);
    position += part.length;
  }
}

function fileSize(src: Source): number {
  return fstatSync(src.fd).size;
}

function u32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(value);
  return out;
}

const FILE_HEADER = { magic: FILE_MAGIC, version: FORMAT_VERSION, fields: 3, size: FILE_HEADER_SIZE, what: 'bucket file', code: 'SHERLOCK_CORRUPT_BUCKET' } as const;

function fileHeader(generation: number): Buffer {
  return encodeFileHeader(FILE_HEADER_SIZE, FILE_MAGIC, [FORMAT_VERSION, ALIGN_SHIFT, generation]);
}

/** Checks the file header; returns the generation. */
function readFileHeader(src: Source): number {
  const [, shift, generation] = checkFileHeader(pread(src, FILE_HEADER_SIZE, 0), src.file, FILE_HEADER) as [number, number, number];
  if (shift !== ALIGN_SHIFT) throw corrupt(src.file, 20, `unsupported alignment shift ${shift}`);
  return generation;
}

function bucketHeader(magic: number, oid: number, length: number, type: number): Buffer {
  const out = Buffer.alloc(BUCKET_HEADER_SIZE);
  out.writeUInt32LE(magic, 0);
  out.writeUInt32LE(oid, 4);
  out.writeUInt32LE(length, 8);
  out.writeUInt32LE(type, 12);
  return out;
}

/** CRC, trailer and padding of a bucket of `length` bytes starting at an aligned offset. */
function bucketTail(crc: number, length: number): Buffer {
  const out = Buffer.alloc(alignUp(BUCKET_HEADER_SIZE + length + BUCKET_TAIL_SIZE) - BUCKET_HEADER_SIZE - length);
  out.writeUInt32LE(crc, 0);
  out.writeUInt32LE(BUCKET_TRAILER, 4);
  return out;
}

/** Finishes the CRC of the data (`dataCrc`) over the length and type fields. */
function bucketCrc(dataCrc: number, length: number, type: number): number {
  const fields = Buffer.alloc(8);
  fields.writeUInt32LE(length, 0);
  fields.writeUInt32LE(type, 4);
  return crc32(fields, dataCrc);
}

interface BucketProbe {
  kind: 'bucket';
  offset: number;
  oid: number;
  deleted: boolean;
  type: number;
  length: number;
  crc: number;
  /** Offset of the next bucket. */
  next: number;
}

type Probe =
  | BucketProbe
  | { kind: 'eof' }
  | { kind: 'writing'; offset: number }
  | { kind: 'bad'; offset: number; message: string };

/** How `probe` and `load` read: straight from the file, or through a walk's ReadAhead. */
type Read = (length: number, position: number) => Buffer;

/** Bytes a walk reads at once: a bucket's header, data and tail and the next ones' come in one read. */
const READ_AHEAD = 64 * 1024;

/**
 * Reads for a walk through the file in order: one read of READ_AHEAD bytes
 * (or of the length asked, if more) answers every request inside it. One read
 * copies the file in ascending order, so a bucket whose flipped magic it shows
 * shows the data and tail written before the flip too; a bucket still being
 * written when it was read stays so for the walk, which stops there.
 */
function readAhead(src: Source): Read {
  let start = 0;
  let bytes: Buffer = Buffer.alloc(0);
  return (length, position) => {
    const at = position - start;
    if (at < 0 || at + length > bytes.length) {
      start = position;
      bytes = pread(src, Math.max(length, READ_AHEAD), position);
      return bytes.subarray(0, Math.min(length, bytes.length));
    }
    return bytes.subarray(at, at + length);
  };
}

/** Looks at the bucket at `offset`: header and trailer, not the data. */
function probe(src: Source, offset: number, read: Read = (length, position) => pread(src, length, position)): Probe {
  const head = read(BUCKET_HEADER_SIZE, offset);
  if (head.length === 0) return { kind: 'eof' };
  const bad = (message: string): Probe => ({ kind: 'bad', offset, message });
  if (head.length < BUCKET_HEADER_SIZE) return bad('bucket header cut short by the end of the file');
  const [magic, oidField, length, type] = [0, 4, 8, 12].map((at) => head.readUInt32LE(at)) as [number, number, number, number];
  const oid = offset / ALIGN;
  if (magic !== BUCKET_MAGIC && magic !== BUCKET_MAGIC_WRITING) return bad(`bad bucket magic ${hex(magic)}`);
  const deleted = magic === BUCKET_MAGIC && oidField === DELETED_OID;
  if (oidField !== oid && !deleted) return bad(`oid field holds ${oidField}, ${oid} expected here`);
  if (magic === BUCKET_MAGIC_WRITING) return { kind: 'writing', offset };
  if (length > MAX_BUCKET_LENGTH) return bad(`bucket length ${length} over the limit of ${MAX_BUCKET_LENGTH}`);
  const tail = read(BUCKET_TAIL_SIZE, offset + BUCKET_HEADER_SIZE + length);
  if (tail.length < BUCKET_TAIL_SIZE) return bad(`bucket of ${length} bytes cut short by the end of the file`);
  const trailer = tail.readUInt32LE(4);
  if (trailer !== BUCKET_TRAILER) return bad(`bad trailer ${hex(trailer)} after ${length} bytes of data`);
  const next = alignUp(offset + BUCKET_HEADER_SIZE + length + BUCKET_TAIL_SIZE);
  return { kind: 'bucket', offset, oid, deleted, type, length, crc: tail.readUInt32LE(0), next };
}

/** The bucket's data if its CRC matches, else what is wrong with it. */
function load(src: Source, bucket: BucketProbe, read?: Read): Buffer | string {
  const view = (read ?? ((length, position) => pread(src, length, position)))(bucket.length, bucket.offset + BUCKET_HEADER_SIZE);
  // A view of a read-ahead window is copied out: a caller keeping one bucket's data must not keep the window.
  const data = view.length === view.buffer.byteLength ? view : Buffer.from(view);
  if (data.length < bucket.length) return `bucket of ${bucket.length} bytes cut short by the end of the file`;
  const actual = bucketCrc(crc32(data), bucket.length, bucket.type);
  if (actual !== bucket.crc) return `CRC-32 mismatch: ${hex(bucket.crc)} recorded, ${hex(actual)} computed`;
  return data;
}

/** The first offset from `from` on (aligned) holding a bucket that passes every check. */
function scan(src: Source, from: number): number | undefined {
  const size = fileSize(src);
  for (let start = from; start < size; start += SCAN_CHUNK) {
    const chunk = pread(src, Math.min(SCAN_CHUNK, size - start), start);
    for (let at = 0; at + 4 <= chunk.length; at += ALIGN) {
      if (chunk.readUInt32LE(at) !== BUCKET_MAGIC) continue;
      const found = probe(src, start + at);
      if (found.kind === 'bucket' && typeof load(src, found) !== 'string') return start + at;
    }
  }
  return undefined;
}

type Entry =
  | (BucketProbe & { data: Buffer | undefined })
  | { kind: 'writing'; offset: number }
  | { kind: 'damage'; offset: number; end: number; message: string; final: boolean };

/**
 * Every bucket from `from` on, in file order, deleted ones included. With
 * `readData`, live buckets come with their data and a CRC mismatch is damage.
 * After a bad header it resumes at the next intact bucket; `final` damage runs
 * to the end of the file. Stops at an in-progress bucket.
 */
function* walk(src: Source, from: number, readData: boolean): Generator<Entry> {
  const read = readAhead(src);
  let offset = from;
  for (;;) {
    const found = probe(src, offset, read);
    if (found.kind === 'eof') return;
    if (found.kind === 'writing') {
      yield found;
      return;
    }
    if (found.kind === 'bucket') {
      const data = readData && !found.deleted ? load(src, found, read) : undefined;
      if (typeof data === 'string') {
        yield { kind: 'damage', offset, end: found.next, message: `bucket ${found.oid}: ${data}`, final: false };
      } else {
        yield { ...found, data };
      }
      offset = found.next;
      continue;
    }
    const next = scan(src, offset + ALIGN);
    yield { kind: 'damage', offset, end: next ?? fileSize(src), message: found.message, final: next === undefined };
    if (next === undefined) return;
    offset = next;
  }
}

function openFile(file: string, flags: string): number {
  try {
    return openSync(file, flags);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new SherlockError('SHERLOCK_NOT_FOUND', 'no such file', { file }, { cause: err });
    }
    throw ioError(err, file, 'opening');
  }
}

/** Writes `<file>.tmp` through `fill` and fsyncs it; returns its name. */
function writeTemp(file: string, fill: (src: Source) => void): string {
  const temp = `${file}.tmp`;
  const src = { fd: openFile(temp, 'w'), file: temp };
  try {
    fill(src);
    syncFile(src);
  } catch (err) {
    closeSync(src.fd);
    rmSync(temp, { force: true });
    throw err;
  }
  closeSync(src.fd);
  return temp;
}

function syncFile(src: Source): void {
  try {
    fsyncSync(src.fd);
  } catch (err) {
    throw ioError(err, src.file, 'syncing');
  }
}

/** Renames `temp` to `file` and fsyncs the directory, so the rename survives power loss. */
function publish(temp: string, file: string): void {
  try {
    renameSync(temp, file);
  } catch (err) {
    throw ioError(err, file, 'replacing');
  }
  syncDirectory(dirname(file));
}

// ---------------------------------------------------------------- reader

export interface BucketFileStat {
  generation: number;
  size: number;
  /** Live buckets (not deleted); damaged ones count among `damaged`. */
  buckets: number;
  deleted: number;
  /** Damaged stretches with intact buckets after them. */
  damaged: number;
  /** Where the readable buckets end; bytes beyond are what a writer's repair cuts off. */
  end: number;
}

export interface VerifyReport {
  file: string;
  generation: number;
  size: number;
  /** Live buckets that passed every check and decoded. */
  buckets: number;
  deleted: number;
  /** Whether the file ends in a bucket still being written (normal while a writer runs). */
  writing: boolean;
  problems: Damage[];
}

export interface IterateOptions {
  /** First oid (default 1, the first bucket). */
  from?: number;
  /** Lenient iteration: damage is reported here and skipped instead of thrown. */
  onDamage?: (damage: Damage) => void;
}

/**
 * Reads a bucket file; may be open while the writer appends. Sees only
 * finished buckets, and keeps reading the file it opened even if a shake
 * replaces it (see replaced()).
 */
export class BucketReader {
  readonly path: string;
  readonly generation: number;
  protected readonly src: Source;

  protected constructor(src: Source, generation: number) {
    this.src = src;
    this.path = src.file;
    this.generation = generation;
  }

  static open(path: string): BucketReader {
    const src = { fd: openFile(path, 'r'), file: path };
    try {
      return new BucketReader(src, readFileHeader(src));
    } catch (err) {
      closeSync(src.fd);
      throw err;
    }
  }

  /** One bucket; SHERLOCK_NOT_FOUND if deleted, past the end or still being written. */
  read(oid: number): StoredBucket {
    const offset = offsetOf(oid, this.path);
    const found = probe(this.src, offset);
    const missing = (why: string) => new SherlockError('SHERLOCK_NOT_FOUND', `bucket ${oid} ${why}`, { file: this.path, offset });
    if (found.kind === 'eof') throw missing('is past the end of the file');
    if (found.kind === 'writing') throw missing('is still being written');
    if (found.kind === 'bad') throw corrupt(this.path, offset, found.message);
    if (found.deleted) throw missing('is deleted');
    const data = load(this.src, found);
    if (typeof data === 'string') throw corrupt(this.path, offset, `bucket ${oid}: ${data}`);
    return { oid, offset, type: found.type, data };
  }

  /** Decodes a bucket read from this file; errors name the file and offset. */
  decode(bucket: StoredBucket): Bucket {
    return decodeBucket(bucket.type, bucket.data, { file: this.path, offset: bucket.offset + BUCKET_HEADER_SIZE });
  }

  /**
   * Finished, live buckets in oid order, from `options.from` on; stops at the
   * end of the file or at a bucket still being written. Damage throws
   * SHERLOCK_CORRUPT_BUCKET unless `onDamage` is given.
   */
  *buckets(options: IterateOptions = {}): Generator<StoredBucket> {
    for (const entry of walk(this.src, offsetOf(options.from ?? 1, this.path), true)) {
      if (entry.kind === 'damage') {
        const { offset, end, message } = entry;
        if (options.onDamage === undefined) throw corrupt(this.path, offset, message);
        options.onDamage({ offset, end, message });
      } else if (entry.kind === 'bucket' && entry.data !== undefined) {
        yield { oid: entry.oid, offset: entry.offset, type: entry.type, data: entry.data };
      }
    }
  }

  /** Counts from the headers alone (no CRC checks): cheap even for a large file. */
  stat(): BucketFileStat {
    const stat = { generation: this.generation, size: fileSize(this.src), buckets: 0, deleted: 0, damaged: 0, end: FILE_HEADER_SIZE };
    for (const entry of walk(this.src, FILE_HEADER_SIZE, false)) {
      if (entry.kind === 'bucket') {
        if (entry.deleted) stat.deleted++;
        else stat.buckets++;
        stat.end = entry.next;
      } else if (entry.kind === 'damage' && !entry.final) {
        stat.damaged++;
        stat.end = entry.end;
      }
    }
    return stat;
  }

  /** Checks every bucket (header, trailer, CRC) and decodes every live one. */
  verify(): VerifyReport {
    const report: VerifyReport = {
      file: this.path,
      generation: this.generation,
      size: fileSize(this.src),
      buckets: 0,
      deleted: 0,
      writing: false,
      problems: [],
    };
    for (const entry of walk(this.src, FILE_HEADER_SIZE, true)) {
      if (entry.kind === 'writing') {
        report.writing = true;
      } else if (entry.kind === 'damage') {
        report.problems.push({ offset: entry.offset, end: entry.end, message: entry.message });
      } else if (entry.deleted || entry.data === undefined) {
        report.deleted++;
      } else {
        try {
          this.decode({ oid: entry.oid, offset: entry.offset, type: entry.type, data: entry.data });
          report.buckets++;
        } catch (err) {
          if (!(err instanceof SherlockError)) throw err;
          const message = `bucket ${entry.oid}: ${err.message}`;
          report.problems.push({ offset: err.place.offset ?? entry.offset, end: entry.next, message });
        }
      }
    }
    return report;
  }

  /**
   * Translates an oid of an earlier generation into this file's generation
   * through the oid maps; SHERLOCK_NOT_FOUND if a shake removed the bucket or a
   * map is missing. Reads whole maps: bulk users should use readOidMap().
   */
  resolveOid(oid: number, generation: number): number {
    if (generation > this.generation) {
      throw new SherlockError('SHERLOCK_NOT_FOUND', `generation ${generation} is newer than the file's ${this.generation}`, {
        file: this.path,
      });
    }
    for (let next = generation + 1; next <= this.generation; next++) {
      const mapped = readOidMap(oidMapPath(this.path, next)).lookup(oid);
      if (mapped === undefined) {
        throw new SherlockError('SHERLOCK_NOT_FOUND', `bucket ${oid} of generation ${next - 1} was removed by a shake`, {
          file: oidMapPath(this.path, next),
        });
      }
      oid = mapped;
    }
    return oid;
  }

  /** True once the path names another file than the one open (a shake replaced it). */
  replaced(): boolean {
    try {
      return statSync(this.path).ino !== fstatSync(this.src.fd).ino;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
      throw ioError(err, this.path, 'checking');
    }
  }

  close(): void {
    closeSync(this.src.fd);
  }
}

function offsetOf(oid: number, file: string): number {
  if (!Number.isInteger(oid) || oid < 1 || oid > MAX_OID) {
    throw new SherlockError('SHERLOCK_NOT_FOUND', `no bucket can have oid ${oid}`, { file });
  }
  return oid * ALIGN;
}

// ---------------------------------------------------------------- writer

export interface ShakeReport {
  kept: number;
  removed: number;
  /** Damaged stretches dropped (only with dropDamaged). */
  dropped: Damage[];
  bytesBefore: number;
  bytesAfter: number;
  /** The file's generation afterwards (unchanged when there was nothing to remove). */
  generation: number;
}

export interface RepairReport {
  /** The in-progress or truncated tail that was cut off. */
  cut: Damage | undefined;
  /** Damage in the middle, kept because intact buckets follow it. */
  damaged: Damage[];
}

/** A bucket being streamed into the file; nothing of it is visible before commit(). */
export interface BucketStream {
  readonly oid: number;
  write(chunk: Uint8Array): void;
  /** Makes the bucket visible; returns its oid. */
  commit(): number;
  /** Drops the bucket (the file is cut back). */
  abort(): void;
}

/**
 * The one writer of a bucket file (it holds `<file>.lock`). Creates the file
 * if missing and repairs its tail on open; see the module comment.
 */
export class BucketWriter extends BucketReader {
  readonly repair: RepairReport;
  private readonly lock: Lock;
  /** Where the next bucket goes. */
  private end: number;
  private streaming = false;
  /** Set when a failed write could not be rolled back; the writer then refuses to write. */
  private broken: unknown;

  private constructor(src: Source, generation: number, lock: Lock) {
    super(src, generation);
    this.lock = lock;
    this.end = FILE_HEADER_SIZE;
    this.repair = this.repairTail();
  }

  static override open(path: string): BucketWriter {
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch (err) {
      throw ioError(err, dirname(path), 'creating the directory');
    }
    const lock = acquireLock(lockPath(path));
    let fd: number | undefined;
    try {
      if (!existsSync(path)) publish(writeTemp(path, (src) => pwrite(src, fileHeader(0), 0)), path);
      fd = openFile(path, 'r+');
      const src = { fd, file: path };
      return new BucketWriter(src, readFileHeader(src), lock);
    } catch (err) {
      if (fd !== undefined) closeSync(fd);
      lock.release();
      throw err;
    }
  }

  private repairTail(): RepairReport {
    const damaged: Damage[] = [];
    let problem: string | undefined;
    for (const entry of walk(this.src, FILE_HEADER_SIZE, false)) {
      if (entry.kind === 'bucket') {
        this.end = entry.next;
      } else if (entry.kind === 'writing') {
        problem = 'bucket still being written when the writer stopped';
      } else if (entry.final) {
        problem = entry.message;
      } else {
        const { offset, end, message } = entry;
        damaged.push({ offset, end, message });
        this.end = end;
        log.warning('damaged region kept: intact buckets follow', { file: this.path, offset, end, problem: message });
      }
    }
    const size = fileSize(this.src);
    const cut = problem === undefined ? undefined : { offset: this.end, end: size, message: problem };
    if (cut !== undefined) {
      const fields = { file: this.path, offset: cut.offset, bytes: size - cut.offset, problem: cut.message };
      log.warning('cut off the unfinished end of the bucket file', fields);
    }
    // Also restores the padding of a last bucket that lost only that.
    if (size !== this.end) {
      this.guarded(() => ftruncateSync(this.src.fd, this.end), 'repairing');
      syncFile(this.src);
    }
    return { cut, damaged };
  }

  /** The oid the next bucket will get: every bucket appended so far has a smaller one. */
  get nextOid(): number {
    return this.end / ALIGN;
  }

  /** Appends a finished bucket; returns its oid. */
  append(type: number, data: Uint8Array): number {
    const offset = this.reserve(type, data.length);
    const head = bucketHeader(BUCKET_MAGIC_WRITING, offset / ALIGN, data.length, type);
    const tail = bucketTail(bucketCrc(crc32(data), data.length, type), data.length);
    this.writing(offset, () => pwriteParts(this.src, [head, data, tail], offset));
    return this.finish(offset, data.length);
  }

  /** Starts a streamed bucket; no other bucket can be appended until it is committed or aborted. */
  begin(type: number): BucketStream {
    const offset = this.reserve(type, 0);
    const oid = offset / ALIGN;
    this.writing(offset, () => pwrite(this.src, bucketHeader(BUCKET_MAGIC_WRITING, oid, 0, type), offset));
    this.streaming = true;
    let length = 0;
    let crc = 0;
    let open = true;
    const check = () => {
      if (!open) throw new Error(`bucket stream ${oid} is already committed or aborted`);
    };
    const close = () => {
      open = false;
      this.streaming = false;
    };
    return {
      oid,
      write: (chunk) => {
        check();
        if (length + chunk.length > MAX_BUCKET_LENGTH) {
          close();
          this.rollback(offset);
          throw new SherlockError('SHERLOCK_TOO_LARGE', `streamed bucket over ${MAX_BUCKET_LENGTH} bytes`, { file: this.path, offset });
        }
        this.writing(offset, () => pwrite(this.src, chunk, offset + BUCKET_HEADER_SIZE + length), close);
        crc = crc32(chunk, crc);
        length += chunk.length;
      },
      commit: () => {
        check();
        this.writing(
          offset,
          () => {
            pwrite(this.src, bucketTail(bucketCrc(crc, length, type), length), offset + BUCKET_HEADER_SIZE + length);
            pwrite(this.src, u32(length), offset + 8);
          },
          close,
        );
        close();
        return this.finish(offset, length);
      },
      abort: () => {
        check();
        close();
        this.rollback(offset);
      },
    };
  }

  /** Marks a bucket deleted (its oid field becomes 0xffffffff); shake reclaims the space. */
  delete(oid: number): void {
    const offset = offsetOf(oid, this.path);
    const found = probe(this.src, offset);
    if (found.kind === 'bad') throw corrupt(this.path, offset, found.message);
    if (found.kind !== 'bucket' || found.deleted) {
      throw new SherlockError('SHERLOCK_NOT_FOUND', `no live bucket ${oid} to delete`, { file: this.path, offset });
    }
    this.guarded(() => pwrite(this.src, u32(DELETED_OID), offset + 4), `deleting bucket ${oid}`);
  }

  /** fdatasync: buckets appended so far survive power loss (see the module comment). */
  sync(): void {
    this.guarded(() => fdatasyncSync(this.src.fd), 'syncing');
  }

  /** Drops an open stream, closes the file and releases the lock. */
  override close(): void {
    if (this.streaming) this.rollback(this.end);
    super.close();
    this.lock.release();
  }

  /** Checks that a bucket of `length` bytes may start now; returns its offset. */
  private reserve(type: number, length: number): number {
    const place = { file: this.path };
    if (this.broken !== undefined) {
      throw new SherlockError('SHERLOCK_IO', 'an earlier write failed and could not be undone; reopen the writer', place, { cause: this.broken });
    }
    if (this.streaming) throw new Error('a streamed bucket is still open');
    if (!Number.isInteger(type) || type < 0 || type > 0xffffffff) throw new RangeError(`bad bucket type ${type}`);
    if (length > MAX_BUCKET_LENGTH) {
      throw new SherlockError('SHERLOCK_TOO_LARGE', `bucket of ${length} bytes over the limit of ${MAX_BUCKET_LENGTH}`, place);
    }
    if (this.end / ALIGN > MAX_OID) throw new SherlockError('SHERLOCK_TOO_LARGE', 'bucket file is full (oids exhausted)', place);
    return this.end;
  }

  /** Runs a write of the bucket at `offset`; on failure cuts the file back to it. */
  private writing(offset: number, write: () => void, onFailure?: () => void): void {
    try {
      write();
    } catch (err) {
      onFailure?.();
      this.rollback(offset);
      throw err;
    }
  }

  /** Flips the magic: the bucket becomes visible to readers. */
  private finish(offset: number, length: number): number {
    this.writing(offset, () => pwrite(this.src, u32(BUCKET_MAGIC), offset));
    this.end = alignUp(offset + BUCKET_HEADER_SIZE + length + BUCKET_TAIL_SIZE);
    return offset / ALIGN;
  }

  private rollback(offset: number): void {
    try {
      ftruncateSync(this.src.fd, offset);
    } catch (err) {
      this.broken = err;
    }
  }

  private guarded(body: () => void, doing: string): void {
    try {
      body();
    } catch (err) {
      throw err instanceof SherlockError ? err : ioError(err, this.path, doing);
    }
  }

  /**
   * Compacts the file: rewrites it without deleted buckets and writes the oid
   * map (module comment). Opens a writer, so it refuses (SHERLOCK_LOCKED) while
   * another holds the lock, and repairs the tail first. Damage in the middle
   * makes it refuse (SHERLOCK_CORRUPT_BUCKET) unless `dropDamaged`, which
   * discards damaged stretches and buckets. Without deleted buckets or damage
   * seen in the headers (and without `dropDamaged`) it leaves the file alone.
   * A process holding the writer must close it first.
   */
  static shake(path: string, options: { dropDamaged?: boolean } = {}): ShakeReport {
    if (!existsSync(path)) throw new SherlockError('SHERLOCK_NOT_FOUND', 'no such file', { file: path });
    const writer = BucketWriter.open(path);
    try {
      return writer.shakeInto(options.dropDamaged === true);
    } finally {
      writer.close();
    }
  }

  private shakeInto(dropDamaged: boolean): ShakeReport {
    const before = this.stat();
    const report: ShakeReport = {
      kept: before.buckets,
      removed: before.deleted,
      dropped: [],
      bytesBefore: before.size,
      bytesAfter: before.size,
      generation: this.generation,
    };
    if (before.deleted === 0 && before.damaged === 0 && !dropDamaged) return report;

    const generation = this.generation + 1;
    let pairs = new Uint32Array(1024);
    let count = 0;
    report.kept = 0;
    const temp = writeTemp(this.path, (out) => {
      pwrite(out, fileHeader(generation), 0);
      let offset = FILE_HEADER_SIZE;
      for (const entry of walk(this.src, FILE_HEADER_SIZE, true)) {
        if (entry.kind === 'damage') {
          if (!dropDamaged) {
            throw corrupt(this.path, entry.offset, `${entry.message} (bucket verify lists the damage; shake --drop-damaged discards it)`);
          }
          report.dropped.push({ offset: entry.offset, end: entry.end, message: entry.message });
        } else if (entry.kind === 'bucket' && entry.data !== undefined) {
          if (2 * count + 2 > pairs.length) {
            const grown = new Uint32Array(pairs.length * 2);
            grown.set(pairs);
            pairs = grown;
          }
          pairs[2 * count] = entry.oid;
          pairs[2 * count + 1] = offset / ALIGN;
          count++;
          pwrite(out, bucketHeader(BUCKET_MAGIC, offset / ALIGN, entry.length, entry.type), offset);
          pwrite(out, entry.data, offset + BUCKET_HEADER_SIZE);
          pwrite(out, bucketTail(entry.crc, entry.length), offset + BUCKET_HEADER_SIZE + entry.length);
          offset += entry.next - entry.offset;
        }
      }
      report.bytesAfter = offset;
    });
    report.kept = count;
    // The map first: whoever sees the new generation must find its map.
    const map = oidMapPath(this.path, generation);
    publish(writeTemp(map, (out) => pwrite(out, encodeOidMap(this.generation, generation, pairs.subarray(0, 2 * count)), 0)), map);
    publish(temp, this.path);
    report.generation = generation;
    log.notice('bucket file shaken', { file: this.path, kept: report.kept, removed: report.removed, generation });
    return report;
  }
}

// ---------------------------------------------------------------- oid maps

function encodeOidMap(from: number, to: number, pairs: Uint32Array): Buffer {
  const out = Buffer.alloc(40 + 4 * pairs.length);
  out.write(MAP_MAGIC, 0, 'latin1');
  out.writeUInt32LE(FORMAT_VERSION, 16);
  out.writeUInt32LE(from, 20);
  out.writeUInt32LE(to, 24);
  out.writeUInt32LE(pairs.length / 2, 28);
  pairs.forEach((oid, i) => out.writeUInt32LE(oid, 32 + 4 * i));
  const end = 32 + 4 * pairs.length;
  out.writeUInt32LE(crc32(out.subarray(0, end)), end);
  out.writeUInt32LE(BUCKET_TRAILER, end + 4);
  return out;
}

/** Old oid → new oid across one shake. */
export class OidMap {
  readonly from: number;
  readonly to: number;
  /** Pairs (old, new), old strictly increasing. */
  private readonly pairs: Uint32Array;

  constructor(from: number, to: number, pairs: Uint32Array) {
    this.from = from;
    this.to = to;
    this.pairs = pairs;
  }

  get size(): number {
    return this.pairs.length / 2;
  }

  /** The new oid, or undefined if the bucket was removed. */
  lookup(oid: number): number | undefined {
    let [low, high] = [0, this.size - 1];
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const old = this.pairs[2 * mid]!;
      if (old === oid) return this.pairs[2 * mid + 1];
      if (old < oid) low = mid + 1;
      else high = mid - 1;
    }
    return undefined;
  }
}

/** Reads and checks an oid map (`oidMapPath(file, generation)`). */
export function readOidMap(path: string): OidMap {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new SherlockError('SHERLOCK_NOT_FOUND', 'no such oid map', { file: path }, { cause: err });
    }
    throw ioError(err, path, 'reading');
  }
  if (bytes.length < 40 || bytes.toString('latin1', 0, 16) !== MAP_MAGIC) throw corrupt(path, 0, 'not an oid map (bad magic)');
  const version = bytes.readUInt32LE(16);
  if (version !== FORMAT_VERSION) throw corrupt(path, 16, `unsupported format version ${version}`);
  const count = bytes.readUInt32LE(28);
  const end = 32 + 8 * count;
  if (bytes.length !== end + 8) throw corrupt(path, 28, `${count} pairs do not fit ${bytes.length} bytes`);
  if (bytes.readUInt32LE(end + 4) !== BUCKET_TRAILER) throw corrupt(path, end + 4, 'bad trailer');
  if (bytes.readUInt32LE(end) !== crc32(bytes.subarray(0, end))) throw corrupt(path, end, 'CRC-32 mismatch');
  const pairs = new Uint32Array(2 * count);
  for (let i = 0; i < pairs.length; i++) {
    pairs[i] = bytes.readUInt32LE(32 + 4 * i);
    if (i % 2 === 0 && i > 0 && pairs[i]! <= pairs[i - 2]!) throw corrupt(path, 32 + 4 * i, 'old oids out of order');
  }
  return new OidMap(bytes.readUInt32LE(20), bytes.readUInt32LE(24), pairs);
}
