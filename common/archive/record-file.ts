/**
 * What the ARC reader (`arc-read.ts`) and the WARC reader (`warc-read.ts`)
 * share: a file read through a bounded FileWindow, compressed (one gzip
 * member per record, told by the magic at offset 0) or plain, one record per
 * step; strict (the first problem thrown) or lenient (each problem handed to
 * `onProblem`, reading resynchronised where the format says); 0..n CR/LF
 * skipped between records. A format supplies `stepAt` (read the record at an
 * offset) and `resync` (where to look for the next one after damage).
 */

import { SherlockError } from '../errors.js';
import { DEFAULT_MAX_RECORD_SIZE } from './arc.js';
import { FileWindow, hasGzipMagic } from './gzip-member.js';

export interface ArchiveReadOptions {
  /** Largest content accepted, in bytes (default 256 MiB). */
  maxRecordSize?: number;
  /** Read leniently: every problem goes here and reading resynchronises, instead of the first one being thrown. */
  onProblem?: (problem: SherlockError) => void;
  /**
   * Compressed files only: a record's content may be overwritten once the
   * next record is read (it is the inflater's scratch, not a copy), for
   * callers done with each record before asking for the next, such as the
   * CDX export.
   */
  borrowContent?: boolean;
  /** Bytes read from the file at a time (default 64 KiB): a few KiB suit random reads of single records. */
  readSize?: number;
  /**
   * Read into one buffer kept from read to read (FileWindow's `reuse`), for
   * many random reads of single records: a buffer a read was garbage, and
   * external memory that drives V8's collections. Records' contents are
   * copies either way (or the inflater's, with borrowContent).
   */
  reuseReads?: boolean;
}

/** What reading at one offset gives: a record, a problem, or both; `next` undefined means "resynchronise". */
export interface Step<R> {
  record?: R;
  problem?: SherlockError;
  next?: number;
}

/** How a reader was opened, handed to the format's constructor. */
export interface RecordSource {
  source: FileWindow;
  /** Whether the file starts with a gzip member. */
  compressed: boolean;
  maxRecordSize: number;
  onProblem: ((problem: SherlockError) => void) | undefined;
  borrow: boolean;
}

const LF = 0x0a;
const CR = 0x0d;

/** Opens `path` as the options say; `make` builds the reader (the file is closed if it throws). */
export function openRecordSource<T>(path: string, options: ArchiveReadOptions, make: (opened: RecordSource) => T): T {
  const maxRecordSize = options.maxRecordSize ?? DEFAULT_MAX_RECORD_SIZE;
  if (!Number.isSafeInteger(maxRecordSize) || maxRecordSize < 0) throw new RangeError(`bad maxRecordSize ${maxRecordSize}`);
  const source = FileWindow.open(path, options.readSize, options.reuseReads === true);
  try {
    return make({ source, compressed: hasGzipMagic(source.read(0, 2)), maxRecordSize, onProblem: options.onProblem, borrow: options.borrowContent === true });
  } catch (err) {
    source.close();
    throw err;
  }
}

export abstract class RecordFile<R extends { offset: number }> {
  protected readonly source: FileWindow;
  /** Whether the file is compressed (starts with a gzip member). */
  readonly compressed: boolean;
  protected readonly maxRecordSize: number;
  protected readonly onProblem: ((problem: SherlockError) => void) | undefined;
  protected readonly borrow: boolean;

  protected constructor(opened: RecordSource) {
    this.source = opened.source;
    this.compressed = opened.compressed;
    this.maxRecordSize = opened.maxRecordSize;
    this.onProblem = opened.onProblem;
    this.borrow = opened.borrow;
  }

  get path(): string {
    return this.source.path;
  }

  /** File size when opened. */
  get size(): number {
    return this.source.size;
  }

  close(): void {
    this.source.close();
  }

  /** The record that starts exactly at `offset`, read strictly. */
  recordAt(offset: number): R {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset >= this.size) {
      throw new SherlockError('SHERLOCK_NOT_FOUND', `no record at offset ${offset}: the file has ${this.size} bytes`, { file: this.path, offset });
    }
    const step = this.stepAt(offset, false);
    if (step.problem !== undefined) throw step.problem;
    return step.record!;
  }

  /**
   * Every record from `from` (a record boundary) that starts before `to`
   * (default: to the end of the file). The generator's return value is where
   * reading stopped: the first record boundary at or after `to`, or the size.
   */
  *records(from = 0, to = Infinity): Generator<R, number> {
    const lenient = this.onProblem !== undefined;
    const end = Math.min(to, this.size);
    let pos = from;
    for (;;) {
      pos = this.skipSeparators(pos);
      if (pos >= end) return pos;
      const step = this.stepAt(pos, lenient);
      if (step.problem !== undefined) {
        if (this.onProblem === undefined) throw step.problem;
        this.onProblem(step.problem);
      }
      if (step.record !== undefined) yield step.record;
      pos = step.next ?? this.resync(pos) ?? this.size;
    }
  }

  /** The record (or problem) at `pos`; `lenient` lets a plain file's reader look past a record cut short. */
  protected abstract stepAt(pos: number, lenient: boolean): Step<R>;

  /** Where the next record may start after damage at `pos`, if anywhere. */
  protected abstract resync(pos: number): number | undefined;

  protected skipSeparators(pos: number): number {
    let at = pos;
    for (let byte = this.source.byte(at); byte === LF || byte === CR; byte = this.source.byte(++at));
    return at;
  }
}
