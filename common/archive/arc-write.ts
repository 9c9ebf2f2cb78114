/**
 * Writing ARC files: the gatherer's archive of every fetched response
 * (DESIGN §4 "Store"; spec/arc-cdx.md §1, §9 "ARC writer"). The byte layout is
 * in `arc.ts`; `arc-read.ts` reads what this writes.
 *
 * Files are `<dir>/<prefix>-<YYYYMMDDhhmmss>-<serial>.arc.gz` (or `.arc` with
 * `compress: false`): the UTC time the file was started and a 5-digit serial
 * that goes on from the highest one already in the directory. While being
 * written a file's name ends in `.open`; readers take only finished names. Each
 * file starts with its own version block whose `filedesc://` URL is its final
 * base name, and holds one gzip member per record (`.arc.gz`).
 *
 * Write order and fsync points:
 *   1. the first record of a file creates `<name>.open` exclusively, then
 *      fsyncs the directory (so that `sync()` also covers the name), then
 *      appends the version block;
 *   2. each record is made whole in memory first (header line, content, LF;
 *      compressed into one finished gzip member: `frameArcRecord`, which a
 *      caller may run on another thread and hand over to `writeFramed()`) and
 *      appended with one synchronous positioned write. A record exists once
 *      that write has returned: only then does `write()` resolve with its
 *      offset and length. A failed write is cut off again (ftruncate), so the
 *      file stays a run of complete records;
 *   3. before a record, when the current file has reached `maxFileSize` (so a
 *      file exceeds it by at most one record), and on `close()`/`roll()`: fsync
 *      the file, rename `.open` away, fsync the directory. Only then is the file
 *      finished.
 * Writes are queued: two records never interleave, whatever the caller awaits.
 *
 * What survives a crash: after kill -9, every record whose `write()` resolved
 * (the kernel holds its bytes); after a power loss, every record written before
 * the last `sync()` and every finished file. `ArcWriter.open` finishes what a
 * crash left: it reads each `<prefix>-….open` file of its directory strictly,
 * cuts everything after the last complete record (a partial member, a partial
 * plain record, garbage), fsyncs and renames it; a leftover holding no document
 * record is removed, since nothing can refer to it.
 *
 * Field policy (spec §9): URLs are percent-escaped, not rejected: SP, CR, LF,
 * controls, DEL and non-ASCII characters become UTF-8 %XX (`escapeUrlBytes`),
 * `%` is left alone, so an already-escaped URL is written unchanged; the URL
 * as written is returned for the index. An empty URL is refused
 * (SHERLOCK_BAD_URL), content over `maxRecordSize` too (SHERLOCK_TOO_LARGE).
 * The IP must be a dotted quad or IPv6 address (a RangeError otherwise: the
 * caller always has the socket's address, or writes `0.0.0.0`).
 *
 * One writer per directory and prefix: the gatherer's lock guarantees it.
 */

import { ftruncateSync, writeSync } from 'node:fs';
import { mkdir, open, readdir, rename, truncate, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { arcDate, arcMime, DEFAULT_MAX_RECORD_SIZE, escapeUrlBytes, formatArcHeader, looksLikeIp, versionBlock } from './arc.js';
import { ArcReader } from './arc-read.js';
import { httpStatus, payloadDigest } from './digest.js';
import { ioError, isSherlockError, SherlockError } from '../errors.js';
import { syncDirectory } from '../files.js';
import { compressMember, FileWindow } from './gzip-member.js';
import { logger } from '../log.js';

const log = logger('arc');
const LF = Buffer.from('\n');
const OPEN_SUFFIX = '.open';

export interface ArcWriterOptions {
  dir: string;
  /** File name prefix: letters, digits, `.`, `_`, `-`. */
  prefix: string;
  /** `.arc.gz` with one gzip member per record (default), or plain `.arc`. */
  compress?: boolean;
  /** Roll to a new file before a record once the current file has this many bytes (default 100 MB, config `gatherer.arc_max_size`). */
  maxFileSize?: number;
  /** Largest content accepted (default 256 MiB, what readers accept by default). */
  maxRecordSize?: number;
  /** IP address for the version block (default `0.0.0.0`, as Heritrix writes). */
  ip?: string;
  /** Origin code of the version block, `1 0 <origin>` (default `sherlock`). */
  origin?: string;
  /** gzip level, 0–9 (default zlib's 6). */
  level?: number;
  /** Time for file names and version blocks (tests pass a fake clock). */
  clock?: () => Date;
}

export interface ArcRecordInput {
  url: string;
  /** IP address the response came from. */
  ip: string;
  /** When the fetch began. */
  date: Date;
  /** The HTTP Content-Type value, if any; cut to the ARC MIME field. */
  contentType?: string;
  /** Status line, header lines, empty line and body, as stored. */
  content: Buffer;
}

/** How a writer frames its records (`ArcWriter.framing`): what `frameArcRecord` needs to frame them elsewhere. */
export interface ArcFraming {
  compress: boolean;
  /** gzip level, 0–9; undefined for zlib's default. */
  level: number | undefined;
  maxRecordSize: number;
}

/** What is known of a record before it is placed in a file. */
interface RecordFacts {
  /** The URL as written (escaped). */
  url: string;
  /** 14-digit UTC date as written. */
  date: string;
  mime: string;
  /** Base32 SHA-1 payload digest (spec §4). */
  digest: string;
  /** HTTP status when the content starts with a status line. */
  status?: number;
}

/** A record made whole (`frameArcRecord`), ready for `ArcWriter.writeFramed`. */
export interface FramedArcRecord extends RecordFacts {
  /** Header line, content and LF: one gzip member, or as is. */
  bytes: Uint8Array;
  compressed: boolean;
}

/** What the CDX export needs about a written record, known without reading it back. */
export interface ArcWritten extends RecordFacts {
  /** Base name of the file once finished (without `.open`). */
  file: string;
  /** Offset of the record's gzip member (or header line, plain files). */
  offset: number;
  /** Compressed member size (or header line + content, plain files). */
  length: number;
}

/**
 * Makes one record whole (see "Field policy" in the module comment; the
 * errors are those of `write()`). Pure and synchronous, so that it can run on
 * any thread with the writer's `framing`.
 */
export function frameArcRecord(input: ArcRecordInput, framing: ArcFraming): FramedArcRecord {
  const url = escapeUrlBytes(Buffer.from(input.url, 'utf8'));
  if (url === '') throw new SherlockError('SHERLOCK_BAD_URL', 'refusing to archive a record with an empty URL', { url: input.url });
  if (!looksLikeIp(input.ip)) throw new RangeError(`bad IP address ${JSON.stringify(input.ip)} for ${url}`);
  const { content } = input;
  if (content.length > framing.maxRecordSize) {
    const message = `content of ${content.length} bytes is over the ARC record limit of ${framing.maxRecordSize}`;
    throw new SherlockError('SHERLOCK_TOO_LARGE', message, { url });
  }
  const date = arcDate(input.date);
  const mime = arcMime(input.contentType);
  const record = Buffer.concat([formatArcHeader({ url, ip: input.ip, date, mime, length: content.length }), content, LF]);
  const framed: FramedArcRecord = {
    bytes: stored(record, framing),
    compressed: framing.compress,
    url,
    date,
    mime,
    digest: payloadDigest(content),
  };
  const status = httpStatus(content);
  if (status !== undefined) framed.status = status;
  return framed;
}

/** A whole record (header line, content, separator) as stored: one gzip member, or as is. */
function stored(record: Buffer, framing: ArcFraming): Uint8Array {
  return framing.compress ? compressMember(record, framing.level) : record;
}

/** What `ArcWriter.open` did with a file a crash left open. */
export interface RecoveredArc {
  /** Base name of the leftover `.open` file. */
  file: string;
  /** Document records kept. */
  documents: number;
  /** Bytes cut from its end. */
  cut: number;
  /** Removed because it held no document record; otherwise finished under its final name. */
  removed: boolean;
}

interface OpenArc {
  /** Final base name. */
  name: string;
  /** Where it is being written (`… .open`). */
  path: string;
  handle: FileHandle;
  size: number;
  documents: number;
}

export class ArcWriter {
  private current: OpenArc | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** Set when the file may hold a partial record we could not cut off; every later write fails with it. */
  private broken: SherlockError | undefined;
  private closed = false;

  private constructor(
    private readonly options: Required<Omit<ArcWriterOptions, 'level'>> & { level: number | undefined },
    private serial: number,
    /** Leftovers of a crash finished while opening. */
    readonly recovered: RecoveredArc[],
  ) {}

  /** Creates the directory if needed and finishes files a crash left open; files are created lazily, on the first record. */
  static async open(options: ArcWriterOptions): Promise<ArcWriter> {
    if (!/^[A-Za-z0-9._-]+$/.test(options.prefix)) throw new RangeError(`bad ARC file prefix ${JSON.stringify(options.prefix)}`);
    const settings = {
      dir: options.dir,
      prefix: options.prefix,
      compress: options.compress ?? true,
      maxFileSize: options.maxFileSize ?? 100_000_000,
      maxRecordSize: options.maxRecordSize ?? DEFAULT_MAX_RECORD_SIZE,
      ip: options.ip ?? '0.0.0.0',
      origin: options.origin ?? 'sherlock',
      level: options.level,
      clock: options.clock ?? (() => new Date()),
    };
    if (!looksLikeIp(settings.ip)) throw new RangeError(`bad version block IP ${JSON.stringify(settings.ip)}`);
    if (!/^[\x20-\x7e]+$/.test(settings.origin)) throw new RangeError(`bad origin code ${JSON.stringify(settings.origin)}`);
    try {
      await mkdir(settings.dir, { recursive: true });
    } catch (err) {
      throw ioError(err, settings.dir, 'mkdir');
    }
    const names = await listDir(settings.dir);
    // The prefix holds no regex syntax but `.`.
    const pattern = new RegExp(`^${settings.prefix.replaceAll('.', '\\.')}-\\d{14}-(\\d{5,})\\.arc(?:\\.gz)?(\\.open)?$`);
    const recovered: RecoveredArc[] = [];
    let serial = 0;
    for (const name of names) {
      const match = pattern.exec(name);
      if (match === null) continue;
      serial = Math.max(serial, Number(match[1]) + 1);
      if (match[2] !== undefined) recovered.push(await recoverArc(settings.dir, name, settings.maxRecordSize));
    }
    return new ArcWriter(settings, serial, recovered);
  }

  /** How this writer's records are framed, for `frameArcRecord` run elsewhere. */
  get framing(): ArcFraming {
    const { compress, level, maxRecordSize } = this.options;
    return { compress, level, maxRecordSize };
  }

  /** Appends one record; resolves once its bytes are in the file, with the facts the index needs. */
  write(record: ArcRecordInput): Promise<ArcWritten> {
    return this.serialize(async () => {
      this.usable();
      return this.append(frameArcRecord(record, this.framing));
    });
  }

  /** Appends a record framed with this writer's `framing` (a compressed one into an `.arc.gz`, a plain one into an `.arc`). */
  writeFramed(record: FramedArcRecord): Promise<ArcWritten> {
    return this.serialize(async () => {
      this.usable();
      if (record.compressed !== this.options.compress) throw new RangeError(`a ${record.compressed ? 'compressed' : 'plain'} record for a ${this.options.compress ? 'compressed' : 'plain'} ARC file`);
      return this.append(record);
    });
  }

  /**
   * The file being written (final base name) and its size once the writes
   * queued so far have finished; undefined before the first record.
   */
  position(): Promise<{ file: string; size: number } | undefined> {
    return this.serialize(async () => (this.current === undefined ? undefined : { file: this.current.name, size: this.current.size }));
  }

  /** fsyncs the current file: records written so far survive a power loss too. */
  sync(): Promise<void> {
    return this.serialize(async () => {
      const file = this.current;
      if (file === undefined) return;
      try {
        await file.handle.sync();
      } catch (err) {
        throw this.fail(ioError(err, file.path, 'fsync'));
      }
    });
  }

  /** Finishes the current file now; the next record starts a new one. */
  roll(): Promise<void> {
    return this.serialize(() => this.finish());
  }

  /** Finishes the current file; the writer takes no more records. */
  close(): Promise<void> {
    return this.serialize(async () => {
      this.closed = true;
      await this.finish();
    });
  }

  private serialize<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private fail(err: SherlockError): SherlockError {
    this.broken = err;
    return err;
  }

  private usable(): void {
    if (this.closed) throw new Error('ArcWriter is closed');
    if (this.broken !== undefined) throw this.broken;
  }

  private async append(record: FramedArcRecord): Promise<ArcWritten> {
    const { bytes, compressed, ...facts } = record;
    const file = await this.fileForNext();
    const offset = file.size;
    this.appendBytes(file, bytes);
    file.documents += 1;
    return { file: file.name, offset, length: compressed ? bytes.length : bytes.length - 1, ...facts };
  }

  private async fileForNext(): Promise<OpenArc> {
    if (this.current !== undefined && this.current.documents > 0 && this.current.size >= this.options.maxFileSize) await this.finish();
    return this.current ?? (this.current = await this.create());
  }

  private async create(): Promise<OpenArc> {
    const { dir, prefix, compress, ip, origin, clock } = this.options;
    const started = arcDate(clock());
    const name = `${prefix}-${started}-${String(this.serial).padStart(5, '0')}.arc${compress ? '.gz' : ''}`;
    this.serial += 1;
    const path = join(dir, name + OPEN_SUFFIX);
    let handle: FileHandle;
    try {
      handle = await open(path, 'wx');
    } catch (err) {
      throw ioError(err, path, 'create');
    }
    const file: OpenArc = { name, path, handle, size: 0, documents: 0 };
    try {
      syncDirectory(dir);
      const block = versionBlock(name, ip, started, origin);
      this.appendBytes(file, stored(Buffer.concat([block.line, block.content, LF]), this.framing));
    } catch (err) {
      await handle.close().catch(() => undefined);
      await unlink(path).catch(() => undefined);
      throw err;
    }
    return file;
  }

  /** One synchronous write: a small record is in the page cache sooner than a thread pool round trip would take. */
  private appendBytes(file: OpenArc, bytes: Uint8Array): void {
    try {
      for (let done = 0; done < bytes.length; ) done += writeSync(file.handle.fd, bytes, done, bytes.length - done, file.size + done);
    } catch (err) {
      const failure = ioError(err, file.path, 'write');
      failure.place.offset = file.size;
      // Leave no partial record behind; if even that fails, stop writing to this file.
      try {
        ftruncateSync(file.handle.fd, file.size);
      } catch {
        this.fail(failure);
      }
      throw failure;
    }
    file.size += bytes.length;
  }

  private async finish(): Promise<void> {
    const file = this.current;
    if (file === undefined) return;
    this.current = undefined;
    try {
      await file.handle.sync();
      await file.handle.close();
      await rename(file.path, join(this.options.dir, file.name));
      syncDirectory(this.options.dir);
    } catch (err) {
      await file.handle.close().catch(() => undefined);
      throw this.fail(ioError(err, file.path, 'finish'));
    }
  }
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (err) {
    throw ioError(err, dir, 'list');
  }
}

/** Cuts a leftover `.open` file after its last complete record and finishes it, or removes it when no document survives. */
async function recoverArc(dir: string, openName: string, maxRecordSize: number): Promise<RecoveredArc> {
  const path = join(dir, openName);
  const { end, records, size } = completePrefix(path, maxRecordSize);
  const documents = Math.max(0, records - 1);
  const report: RecoveredArc = { file: openName, documents, cut: size - end, removed: documents === 0 };
  try {
    if (report.removed) {
      await unlink(path);
    } else {
      if (end < size) await truncate(path, end);
      const handle = await open(path, 'r+');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(path, join(dir, openName.slice(0, -OPEN_SUFFIX.length)));
    }
    syncDirectory(dir);
  } catch (err) {
    throw ioError(err, path, 'recover');
  }
  log.notice(report.removed ? 'removed ARC file left open without records' : 'finished ARC file left open', {
    file: openName,
    documents,
    cut: report.cut,
  });
  return report;
}

/** Where the run of complete records at the start of a file ends, and how many records it holds. */
function completePrefix(path: string, maxRecordSize: number): { end: number; records: number; size: number } {
  const reader = ArcReader.open(path, { maxRecordSize });
  const bytes = FileWindow.open(path);
  let end = 0;
  let records = 0;
  try {
    for (const record of reader.records()) {
      const recordEnd = record.offset + record.length;
      // A plain record is complete with its separator; a member holds its own.
      const complete = reader.compressed ? recordEnd : bytes.byte(recordEnd) === LF[0] ? recordEnd + 1 : undefined;
      if (complete === undefined) break;
      end = complete;
      records += 1;
    }
  } catch (err) {
    // Damage marks where the crash cut the file; anything else is a real failure.
    if (!isSherlockError(err) || err.code === 'SHERLOCK_IO') throw err;
  } finally {
    reader.close();
    bytes.close();
  }
  return { end, records, size: reader.size };
}
