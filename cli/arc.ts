/**
 * `sherlock arc ls|cat|verify FILE`: look into one ARC or WARC file, plain or
 * gzipped (format and compression told apart by content, not name:
 * common/archive/archive-read.ts).
 *
 * - `ls` lists every record, the version block included: offset, length (as
 *   CDX `V` and `S` take them), date, MIME, HTTP status (`-` when the content is
 *   not HTTP), URL. Fields are printed with bytes outside printable ASCII as
 *   %XX, so that a hostile URL cannot break the columns or the terminal.
 *   A WARC record shows its WARC-Date, its WARC-Type in the MIME column (its
 *   Content-Type mostly repeats it) and WARC-Target-URI (`-` if none).
 *   `--json`: one object per record; strings are the Latin-1 reading of the
 *   stored bytes. Reads strictly: stops with exit 1 at the first damage.
 * - `cat` writes record contents (a WARC record's block) raw to stdout, all
 *   of them or the one at `--offset`; `--header` adds each record's header
 *   and separator, so the output is itself a plain ARC (or WARC) file.
 * - `verify` reads every record leniently and prints each problem as
 *   `FILE: offset N: message`, then a summary line; exit 1 if there was any.
 */

import { InvalidArgumentError, type Command } from 'commander';
import { openArchive } from '../common/archive/archive-read.js';
import { escapeUrlBytes } from '../common/archive/arc.js';
import type { ArcRecord } from '../common/archive/arc-read.js';
import { httpStatus, payloadDigest } from '../common/archive/digest.js';
import { warcField, warcTargetUri, type WarcRecord } from '../common/archive/warc-read.js';
import type { SherlockError } from '../common/errors.js';
import { action, print, printBytes, printJson } from './command.js';

export function registerArc(program: Command): void {
  const arc = program.command('arc').description('list, print and verify ARC and WARC files (.arc, .arc.gz, .warc, .warc.gz)');

  arc
    .command('ls')
    .description('list every record: offset, length, date, MIME type, HTTP status, URL')
    .argument('<file>', 'ARC or WARC file')
    .option('--json', 'one JSON object per record')
    .action(
      action((file: string, opts: { json?: boolean }) => {
        const reader = openArchive(file);
        try {
          for (const record of reader.records()) {
            if (!(opts.json === true ? printJson(describeRecord(record)) : print(listLine(record)))) break;
          }
        } finally {
          reader.close();
        }
      }),
    );

  arc
    .command('cat')
    .description('write record contents to stdout, as stored')
    .argument('<file>', 'ARC or WARC file')
    .option('--offset <n>', 'only the record at this offset (as `arc ls` and CDX give it)', parseOffset)
    .option('--header', "also write each record's header and separator (the output is a plain ARC or WARC)")
    .action(
      action(async (file: string, opts: { offset?: number; header?: boolean }) => {
        const reader = openArchive(file);
        try {
          const records = opts.offset === undefined ? reader.records() : [reader.recordAt(opts.offset)];
          for (const record of records) {
            if (!(await printBytes(opts.header === true ? withHeader(record) : [contentOf(record)]))) break;
          }
        } finally {
          reader.close();
        }
      }),
    );

  arc
    .command('verify')
    .description('read every record, report each problem with its offset; exit 1 if any')
    .argument('<file>', 'ARC or WARC file')
    .option('--json', 'one JSON object per problem, then a summary object')
    .action(
      action((file: string, opts: { json?: boolean }) => {
        let problems = 0;
        const onProblem = (problem: SherlockError): void => {
          problems += 1;
          const { code, message } = problem;
          if (opts.json === true) printJson({ file, offset: problem.place.offset, code, message });
          else print(problem.describe());
        };
        let records = 0;
        const reader = openArchive(file, { onProblem });
        try {
          for (const record of reader.records()) records += record.truncated ? 0 : 1;
        } finally {
          reader.close();
        }
        const summary = { file, records, problems, ok: problems === 0 };
        if (opts.json === true) printJson(summary);
        else print(`${file}: ${problems === 0 ? 'ok' : plural(problems, 'problem')}, ${plural(records, 'complete record')}`);
        return problems === 0 ? 0 : 1;
      }),
    );
}

const LF = Buffer.from('\n');
const CRLF2 = Buffer.from('\r\n\r\n');

type AnyRecord = ArcRecord | WarcRecord;

/** The stored content: an ARC record's, a WARC record's block. */
function contentOf(record: AnyRecord): Buffer {
  return 'fields' in record ? record.block : record.content;
}

/** The record as stored in a plain file: header line, content, LF (ARC); header, block, CRLF CRLF (WARC). */
function withHeader(record: AnyRecord): Buffer[] {
  if ('fields' in record) return [Buffer.from(record.head, 'latin1'), record.block, CRLF2];
  return [Buffer.from(record.header.line + '\n', 'latin1'), record.content, LF];
}

function parseOffset(text: string): number {
  const offset = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(offset)) throw new InvalidArgumentError('expected a byte offset (a whole number)');
  return offset;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** A stored field for a column: bytes outside printable ASCII as %XX, `-` when empty. */
function column(field: string): string {
  return field === '' ? '-' : escapeUrlBytes(Buffer.from(field, 'latin1'));
}

function listLine(record: AnyRecord): string {
  if ('fields' in record) {
    const fields = [warcField(record, 'WARC-Date'), warcField(record, 'WARC-Type'), httpStatus(record.block), warcTargetUri(record)];
    return [record.offset, record.length, ...fields.map((f) => (f === undefined ? '-' : column(String(f))))].join(' ');
  }
  const { header, content } = record;
  const status = httpStatus(content);
  return [record.offset, record.length, column(header.date), column(header.mime), status ?? '-', column(header.url)].join(' ');
}

function describeRecord(record: AnyRecord) {
  if ('fields' in record) {
    return {
      offset: record.offset,
      length: record.length,
      version: record.version,
      type: warcField(record, 'WARC-Type') ?? null,
      url: warcTargetUri(record) ?? null,
      date: warcField(record, 'WARC-Date') ?? null,
      contentLength: record.block.length,
      status: httpStatus(record.block) ?? null,
      fields: record.fields,
    };
  }
  const { header, content } = record;
  return {
    offset: record.offset,
    length: record.length,
    url: header.url,
    ip: header.ip,
    date: header.date,
    mime: header.mime,
    contentLength: header.length,
    status: httpStatus(content) ?? null,
    digest: payloadDigest(content),
    version: header.version,
  };
}
