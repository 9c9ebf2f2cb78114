/**
 * Reading ARC files, compressed (`.arc.gz`, one gzip member per record) or
 * plain (spec/arc-cdx.md §1, §9 "ARC reader"). The format is in `arc.ts`.
 *
 * Compression is detected by the gzip magic `1f 8b` at offset 0, never by the
 * file name. Files are read through a file descriptor in bounded windows: one
 * record (at most `maxRecordSize` content bytes, SHERLOCK_TOO_LARGE beyond) is
 * in memory at a time, whatever the file's size.
 *
 * Each record comes with its extent as CDX needs it: for `.arc.gz` the offset
 * and compressed size of its member; for plain files the offset of its header
 * line and the header line plus content, without the separator.
 *
 * Tolerated as valid (§9): 0..n LF/CR between records or members (the
 * separator-less webarchive-commons file), members with or without the LF
 * inside, v2 lines, spaces in URL or MIME, odd dates, empty MIME, non-HTTP
 * content, any gzip header flags, files without a version block, and a version
 * block whose declared length is off by one: one byte short is absorbed by the
 * separator rule; one byte long (Heritrix counts the separator) is taken back
 * when its content then ends not in LF but in the first byte of a header line.
 *
 * Damage is a SherlockError naming the file and the offset of the record (or of
 * the garbage) concerned: a bad length (negative, non-numeric, over the cap), a
 * record running past the end of the file or of its gzip member, a bad gzip
 * member (SHERLOCK_CORRUPT_GZIP), bytes that are not a header line or a gzip
 * member. Strict mode (the default) throws the first one. Lenient mode (give
 * `onProblem`) reports each and resynchronises: at the next gzip member, or at
 * the next line that looks like a header line (`looksLikeArcHeader`) in a plain
 * file. A record whose content ends early is still yielded in lenient mode,
 * marked `truncated`, unless (plain files) a header line is found inside the
 * missing stretch, in which case reading resumes there; so
 * warcio/example-space-in-url.arc, whose last record declares 12 bytes more
 * than the file holds, is an error in strict mode and, in lenient mode, one
 * problem plus the record cdxj-indexer reports (offset 151, length 1722).
 * Read failures (SHERLOCK_IO) are always thrown. Opening, stepping from
 * record to record and resynchronising are shared with the WARC reader
 * (record-file.ts).
 */

import {
  isFiledesc,
  looksLikeArcHeader,
  MAX_HEADER_LINE,
  normalizeArcDate,
  parseArcHeader,
  type ArcHeader,
} from './arc.js';
import { isSherlockError, SherlockError } from '../errors.js';
import { findGzipMagic, hasGzipMagic, readGzipMember, type GzipMember } from './gzip-member.js';
import { openRecordSource, RecordFile, type ArchiveReadOptions, type RecordSource, type Step } from './record-file.js';

export interface ArcRecord {
  /** Offset of the record's gzip member, or (plain files) of its header line. */
  offset: number;
  /** Compressed member size, or (plain files) header line + content without the separator. */
  length: number;
  header: ArcHeader;
  content: Buffer;
  /** Lenient mode only: the content ends before its declared length (end of file or of its member). */
  truncated: boolean;
}

/** How a file is read (record-file.ts). */
export type ArcReadOptions = ArchiveReadOptions;

const LF = 0x0a;
const CR = 0x0d;
const SCAN = 64 * 1024;

export class ArcReader extends RecordFile<ArcRecord> {
  /** versionDate's answer once asked (null: not yet). */
  private fileDate: string | undefined | null = null;

  private constructor(opened: RecordSource) {
    super(opened);
  }

  static open(path: string, options: ArcReadOptions = {}): ArcReader {
    return openRecordSource(path, options, (opened) => new ArcReader(opened));
  }

  /**
   * The (normalised) date of the version block the file starts with: what
   * dates its records whose own date is not one (`captureDate`). Undefined
   * when the file has no readable version block. Ask before iterating when
   * contents are borrowed: reading it reuses the inflater.
   */
  versionDate(): string | undefined {
    if (this.fileDate === null) {
      this.fileDate = undefined;
      const first = this.skipSeparators(0);
      if (first < this.size) {
        const step = this.stepAt(first, false);
        if (step.record !== undefined && isFiledesc(step.record.header)) this.fileDate = normalizeArcDate(step.record.header.date);
      }
    }
    return this.fileDate;
  }

  protected stepAt(pos: number, lenient: boolean): Step<ArcRecord> {
    return this.compressed ? this.memberAt(pos) : this.plainAt(pos, lenient);
  }

  protected resync(pos: number): number | undefined {
    return this.compressed ? findGzipMagic(this.source, pos + 1) : this.nextHeaderLine(pos);
  }

  /**
   * `.arc.gz` only: the first offset at or after `offset` where a gzip member
   * holding one whole, well-formed record starts, or the file size: where a
   * file can be split for reading in parallel. A candidate, not proof: a
   * record may hold an archived `.arc.gz` verbatim, so whoever splits checks
   * that reading the part before ends exactly there.
   */
  recordStartAfter(offset: number): number {
    for (let at: number | undefined = findGzipMagic(this.source, offset); at !== undefined; at = findGzipMagic(this.source, at + 1)) {
      const step = this.memberAt(at);
      if (step.problem === undefined) return at;
    }
    return this.size;
  }

  private corrupt(offset: number, message: string): SherlockError {
    return new SherlockError('SHERLOCK_CORRUPT_ARC', message, { file: this.path, offset });
  }

  private tooLarge(offset: number, header: ArcHeader): SherlockError | undefined {
    if (header.length <= this.maxRecordSize) return undefined;
    const message = `record declares ${header.length} content bytes, more than the limit of ${this.maxRecordSize}`;
    return new SherlockError('SHERLOCK_TOO_LARGE', message, { file: this.path, offset });
  }

  private memberAt(pos: number): Step<ArcRecord> {
    const magic = this.source.read(pos, 2);
    if (!hasGzipMagic(magic)) return { problem: this.corrupt(pos, `expected a gzip member, found bytes ${magic.toString('hex')}`) };
    let member: GzipMember;
    try {
      // Room for the header line and separators besides the content.
      member = readGzipMember(this.source, pos, this.maxRecordSize + MAX_HEADER_LINE + 1024, this.borrow);
    } catch (err) {
      if (isSherlockError(err) && err.code !== 'SHERLOCK_IO') return { problem: err };
      throw err;
    }
    const next = pos + member.length;
    const data = member.data;
    const lf = data.subarray(0, MAX_HEADER_LINE + 1).indexOf(LF);
    if (lf === -1) {
      return { problem: this.corrupt(pos, data.length === 0 ? 'empty gzip member' : 'gzip member does not start with a header line'), next };
    }
    const parsed = parseArcHeader(data.toString('latin1', 0, lf));
    if ('problem' in parsed) return { problem: this.corrupt(pos, `bad header line: ${parsed.problem}`), next };
    const header = parsed.header;
    const tooLarge = this.tooLarge(pos, header);
    if (tooLarge !== undefined) return { problem: tooLarge, next };
    const start = lf + 1;
    const content = data.subarray(start, start + header.length);
    const missing = header.length - content.length;
    const record = { offset: pos, length: member.length, header, content, truncated: false };
    if (missing > 0 && !(missing === 1 && isFiledesc(header))) {
      const problem = this.corrupt(pos, `declared length ${header.length} runs ${missing} bytes past the end of its gzip member`);
      return { record: { ...record, truncated: true }, problem, next };
    }
    const rest = data.subarray(start + content.length);
    if (rest.some((byte) => byte !== LF && byte !== CR)) {
      return { record, problem: this.corrupt(pos, `${rest.length} bytes after the record inside its gzip member`), next };
    }
    return { record, next };
  }

  private plainAt(pos: number, lenient: boolean): Step<ArcRecord> {
    const line = this.lineAt(pos);
    if (typeof line === 'string') return { problem: this.corrupt(pos, line) };
    const parsed = parseArcHeader(line.text);
    if ('problem' in parsed) return { problem: this.corrupt(pos, `bad header line: ${parsed.problem}`) };
    const header = parsed.header;
    const tooLarge = this.tooLarge(pos, header);
    if (tooLarge !== undefined) return { problem: tooLarge };
    const start = pos + line.size;
    const end = start + header.length;
    if (end > this.size) {
      const problem = this.corrupt(pos, `declared length ${header.length} runs ${end - this.size} bytes past the end of the file`);
      const resume = lenient ? this.nextHeaderLine(start) : undefined;
      if (!lenient || resume !== undefined) return { problem, next: resume };
      const content = this.source.copy(start, this.size - start);
      return { record: { offset: pos, length: this.size - pos, header, content, truncated: true }, problem, next: this.size };
    }
    // Version block lines end in LF; one that ends in the first byte of a header line counted the separator it lacks.
    const last = this.source.byte(end - 1);
    const contentEnd = isFiledesc(header) && header.length > 0 && last !== LF && last !== CR && this.headerLineAt(end - 1) ? end - 1 : end;
    const content = this.source.copy(start, contentEnd - start);
    return { record: { offset: pos, length: contentEnd - pos, header, content, truncated: false }, next: contentEnd };
  }

  /** The line starting at `pos` (Latin-1, without its LF) and its size with the LF, or what is wrong. */
  private lineAt(pos: number): { text: string; size: number } | string {
    for (let want = 4096; ; want *= 4) {
      const window = this.source.read(pos, Math.min(want, MAX_HEADER_LINE + 1));
      const lf = window.indexOf(LF);
      if (lf !== -1) return { text: window.toString('latin1', 0, lf), size: lf + 1 };
      if (pos + window.length >= this.size) return 'the file ends inside a header line';
      if (window.length > MAX_HEADER_LINE) return `no header line: no LF within ${MAX_HEADER_LINE} bytes`;
    }
  }

  /** Whether a credible header line starts at `pos`. */
  private headerLineAt(pos: number): boolean {
    const line = this.lineAt(pos);
    return typeof line !== 'string' && looksLikeArcHeader(line.text);
  }

  /** The start of the first credible header line after the line holding `after`, if any. */
  private nextHeaderLine(after: number): number | undefined {
    let at = after;
    while (at < this.size) {
      const window = this.source.read(at, SCAN);
      const lf = window.indexOf(LF);
      if (lf === -1) {
        at += window.length;
        continue;
      }
      at = this.skipSeparators(at + lf + 1);
      if (at >= this.size) return undefined;
      if (this.headerLineAt(at)) return at;
    }
    return undefined;
  }
}

/** Every record of the file at `path`; the file is closed when iteration ends or stops. */
export function* readArc(path: string, options: ArcReadOptions = {}): Generator<ArcRecord> {
  const reader = ArcReader.open(path, options);
  try {
    yield* reader.records();
  } finally {
    reader.close();
  }
}
