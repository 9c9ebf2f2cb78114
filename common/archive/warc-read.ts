/**
 * Reading WARC files (ISO 28500; WARC/0.17 to 1.1), compressed (`.warc.gz`,
 * one gzip member per record) or plain, for the tools that read other
 * people's archives as well as ours: `arc ls|cat|verify` and `export cdx
 * --arc`. The writer is `warc.ts`; which reader a file needs is decided by
 * `archive-read.ts`.
 *
 *   record                 meaning
 *   `WARC/<version>` CRLF  version line (a bare LF is accepted at every line end)
 *   `Name: value` CRLF …   header fields; a line starting with SP or HT continues the one before
 *   CRLF                   end of the header
 *   block                  exactly Content-Length bytes
 *   CRLF CRLF              end of the record (readers accept 0..n CR/LF)
 *
 * Extents as CDX needs them, as pywb gives them: for `.warc.gz` a record's
 * member (offset and compressed size); for plain files its first byte and
 * its header and block, without the closing CRLF CRLF.
 *
 * Damage is a SherlockError (SHERLOCK_CORRUPT_WARC, or SHERLOCK_CORRUPT_GZIP
 * for a bad member) naming the file and the record's offset: no version line,
 * a header that does not end, no or a bad Content-Length, a block running
 * past the end of its member or of the file, a member holding more than one
 * record (its second record has no offset a CDX line could name). Strict
 * reading throws the first; lenient reading (`onProblem`) reports each and
 * resynchronises at the next gzip member, or (plain files) at the next line
 * starting `WARC/`. Memory is one record, as for ARC (`maxRecordSize`);
 * opening, stepping and resynchronising are record-file.ts's, as for ARC.
 */

import { isSherlockError, SherlockError } from '../errors.js';
import { findGzipMagic, hasGzipMagic, readGzipMember, type GzipMember } from './gzip-member.js';
import { openRecordSource, RecordFile, type ArchiveReadOptions, type RecordSource, type Step } from './record-file.js';
import type { WarcHeaderField } from './warc.js';

export interface WarcRecord {
  /** Offset of the record's gzip member, or (plain files) of its version line. */
  offset: number;
  /** Compressed member size, or (plain files) header and block without the closing CRLF CRLF. */
  length: number;
  /** The version line, e.g. `WARC/1.0`. */
  version: string;
  /** Header fields in order, as stored (Latin-1 reading of the bytes). */
  fields: WarcHeaderField[];
  /** The header as stored, version line to the empty line included (Latin-1). */
  head: string;
  /** Content-Length bytes (fewer when truncated). */
  block: Buffer;
  /** Lenient mode only: the block ends before its declared length. */
  truncated: boolean;
}

/** The first value of a header field, by case-insensitive name. */
export function warcField(record: Pick<WarcRecord, 'fields'>, name: string): string | undefined {
  const lower = name.toLowerCase();
  return record.fields.find((f) => f.name.toLowerCase() === lower)?.value;
}

/** WARC-Target-URI without the angle brackets WARC 1.1's grammar led some writers to add (GNU Wget). */
export function warcTargetUri(record: Pick<WarcRecord, 'fields'>): string | undefined {
  const uri = warcField(record, 'WARC-Target-URI');
  return uri !== undefined && uri.startsWith('<') && uri.endsWith('>') ? uri.slice(1, -1) : uri;
}

/** The digits of a WARC-Date (`2014-01-03T03:03:21Z`, also with fractions) as 14; undefined when it is not one. */
export function warcDateDigits(value: string): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?Z$/.exec(value.trim());
  return m === null ? undefined : m.slice(1, 7).join('');
}

/** Longest header we read (IA's readers cap ARC header lines alike). */
const MAX_HEAD = 1024 * 1024;
const CR = 0x0d;
const LF = 0x0a;
const WARC_MAGIC = Buffer.from('WARC/', 'latin1');
const SCAN = 64 * 1024;

interface Head {
  version: string;
  fields: WarcHeaderField[];
  /** Bytes of the header, the empty line included. */
  size: number;
  contentLength: number;
}

export class WarcReader extends RecordFile<WarcRecord> {
  private constructor(opened: RecordSource) {
    super(opened);
  }

  static open(path: string, options: ArchiveReadOptions = {}): WarcReader {
    return openRecordSource(path, options, (opened) => new WarcReader(opened));
  }

  protected stepAt(pos: number): Step<WarcRecord> {
    return this.compressed ? this.memberAt(pos) : this.plainAt(pos);
  }

  protected resync(pos: number): number | undefined {
    return this.compressed ? findGzipMagic(this.source, pos + 1) : this.nextVersionLine(pos + 1);
  }

  private corrupt(offset: number, message: string): SherlockError {
    return new SherlockError('SHERLOCK_CORRUPT_WARC', message, { file: this.path, offset });
  }

  /** Parses the header at the start of `bytes`, or says what is wrong with it. */
  private parseHead(bytes: Buffer, offset: number): Head | SherlockError {
    if (!bytes.subarray(0, WARC_MAGIC.length).equals(WARC_MAGIC)) {
      return this.corrupt(offset, `no WARC version line: found ${JSON.stringify(bytes.toString('latin1', 0, 16))}`);
    }
    const fields: WarcHeaderField[] = [];
    let version = '';
    let at = 0;
    for (;;) {
      const lf = bytes.indexOf(LF, at);
      if (lf === -1 || lf > MAX_HEAD) return this.corrupt(offset, bytes.length >= MAX_HEAD ? `WARC header longer than ${MAX_HEAD} bytes` : 'the WARC header does not end');
      const line = bytes.toString('latin1', at, lf > at && bytes[lf - 1] === CR ? lf - 1 : lf);
      at = lf + 1;
      if (version === '') {
        version = line;
        continue;
      }
      if (line === '') break;
      if ((line.startsWith(' ') || line.startsWith('\t')) && fields.length > 0) {
        fields.at(-1)!.value += ' ' + line.trim();
        continue;
      }
      const colon = line.indexOf(':');
      if (colon <= 0) return this.corrupt(offset, `bad WARC header line ${JSON.stringify(line.slice(0, 80))}`);
      fields.push({ name: line.slice(0, colon), value: line.slice(colon + 1).trim() });
    }
    const declared = warcField({ fields }, 'Content-Length');
    if (declared === undefined || !/^\d+$/.test(declared)) {
      return this.corrupt(offset, declared === undefined ? 'WARC record has no Content-Length' : `bad Content-Length ${JSON.stringify(declared)}`);
    }
    const contentLength = Number(declared);
    if (!Number.isSafeInteger(contentLength) || contentLength > this.maxRecordSize) {
      const message = `record declares ${declared} block bytes, more than the limit of ${this.maxRecordSize}`;
      return new SherlockError('SHERLOCK_TOO_LARGE', message, { file: this.path, offset });
    }
    return { version, fields, size: at, contentLength };
  }

  private memberAt(pos: number): Step<WarcRecord> {
    const magic = this.source.read(pos, 2);
    if (!hasGzipMagic(magic)) return { problem: this.corrupt(pos, `expected a gzip member, found bytes ${magic.toString('hex')}`) };
    let member: GzipMember;
    try {
      member = readGzipMember(this.source, pos, this.maxRecordSize + MAX_HEAD, this.borrow);
    } catch (err) {
      if (isSherlockError(err) && err.code !== 'SHERLOCK_IO') return { problem: err };
      throw err;
    }
    const next = pos + member.length;
    const data = member.data;
    const head = this.parseHead(data, pos);
    if (head instanceof SherlockError) return { problem: head, next };
    const block = data.subarray(head.size, head.size + head.contentLength);
    const record: WarcRecord = { offset: pos, length: member.length, version: head.version, fields: head.fields, head: data.toString('latin1', 0, head.size), block, truncated: false };
    if (block.length < head.contentLength) {
      const problem = this.corrupt(pos, `Content-Length ${head.contentLength} runs ${head.contentLength - block.length} bytes past the end of its gzip member`);
      return { record: { ...record, truncated: true }, problem, next };
    }
    let rest = head.size + block.length;
    while (rest < data.length && (data[rest] === CR || data[rest] === LF)) rest++;
    if (rest < data.length) {
      const message = data.subarray(rest, rest + WARC_MAGIC.length).equals(WARC_MAGIC)
        ? 'gzip member holds more than one WARC record: only the first has an offset of its own'
        : `${data.length - rest} bytes after the record inside its gzip member`;
      return { record, problem: this.corrupt(pos, message), next };
    }
    return { record, next };
  }

  private plainAt(pos: number): Step<WarcRecord> {
    let window = this.source.read(pos, SCAN);
    let head = this.parseHead(window, pos);
    // A header longer than one window: read once more, up to the cap.
    if (head instanceof SherlockError && window.length === SCAN && /does not end/.test(head.message)) {
      window = this.source.read(pos, MAX_HEAD + 1);
      head = this.parseHead(window, pos);
    }
    if (head instanceof SherlockError) return { problem: head };
    const start = pos + head.size;
    const end = start + head.contentLength;
    const fields = { version: head.version, fields: head.fields, head: window.toString('latin1', 0, head.size) };
    if (end > this.size) {
      const problem = this.corrupt(pos, `Content-Length ${head.contentLength} runs ${end - this.size} bytes past the end of the file`);
      const resume = this.onProblem === undefined ? undefined : this.nextVersionLine(start);
      if (this.onProblem === undefined || resume !== undefined) return { problem, next: resume };
      const block = this.source.copy(start, this.size - start);
      return { record: { offset: pos, length: this.size - pos, ...fields, block, truncated: true }, problem, next: this.size };
    }
    const block = this.source.copy(start, head.contentLength);
    return { record: { offset: pos, length: end - pos, ...fields, block, truncated: false }, next: end };
  }

  /** The first line starting `WARC/` at or after `from`, if any. */
  private nextVersionLine(from: number): number | undefined {
    for (let at = from; at < this.size; ) {
      const window = this.source.read(at, SCAN);
      let hit = window.indexOf(WARC_MAGIC);
      while (hit !== -1 && at + hit > 0 && this.source.byte(at + hit - 1) !== LF) hit = window.indexOf(WARC_MAGIC, hit + 1);
      if (hit !== -1) return at + hit;
      if (window.length < SCAN) return undefined;
      at += window.length - WARC_MAGIC.length;
    }
    return undefined;
  }
}
