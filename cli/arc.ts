/**
 * `sherlock arc ls|cat|verify FILE`: look into one ARC file, plain or `.arc.gz`
 * (told apart by content, not name).
 *
 * - `ls` lists every record, the version block included: offset, length (as
 *   CDX `V` and `S` take them), date, MIME, HTTP status (`-` when the content is
 *   not HTTP), URL. Fields are printed with bytes outside printable ASCII as
 *   %XX, so that a hostile URL cannot break the columns or the terminal.
 *   `--json`: one object per record; strings are the Latin-1 reading of the
 *   stored bytes. Reads strictly: stops with exit 1 at the first damage.
 * - `cat` writes record contents raw to stdout, all of them or the one at
 *   `--offset`; `--header` adds each record's header line and separator, so
 *   the output is itself a plain ARC file.
 * - `verify` reads every record leniently and prints each problem as
 *   `FILE: offset N: message`, then a summary line; exit 1 if there was any.
 */

import { InvalidArgumentError, type Command } from 'commander';
import { escapeUrlBytes } from '../common/archive/arc.js';
import { ArcReader, readArc, type ArcRecord } from '../common/archive/arc-read.js';
import { httpStatus, payloadDigest } from '../common/archive/digest.js';
import type { SherlockError } from '../common/errors.js';
import { action, print, printBytes, printJson } from './command.js';

export function registerArc(program: Command): void {
  const arc = program.command('arc').description('list, print and verify ARC files (.arc or .arc.gz)');

  arc
    .command('ls')
    .description('list every record: offset, length, date, MIME type, HTTP status, URL')
    .argument('<file>', 'ARC file')
    .option('--json', 'one JSON object per record')
    .action(
      action((file: string, opts: { json?: boolean }) => {
        for (const record of readArc(file)) {
          if (!(opts.json === true ? printJson(describeRecord(record)) : print(listLine(record)))) break;
        }
      }),
    );

  arc
    .command('cat')
    .description('write record contents to stdout, as stored')
    .argument('<file>', 'ARC file')
    .option('--offset <n>', 'only the record at this offset (as `arc ls` and CDX give it)', parseOffset)
    .option('--header', "also write each record's header line and separator (the output is a plain ARC)")
    .action(
      action(async (file: string, opts: { offset?: number; header?: boolean }) => {
        const reader = ArcReader.open(file);
        try {
          const records = opts.offset === undefined ? reader.records() : [reader.recordAt(opts.offset)];
          for (const record of records) {
            const parts = opts.header === true ? [Buffer.from(record.header.line + '\n', 'latin1'), record.content, LF] : [record.content];
            if (!(await printBytes(parts))) break;
          }
        } finally {
          reader.close();
        }
      }),
    );

  arc
    .command('verify')
    .description('read every record, report each problem with its offset; exit 1 if any')
    .argument('<file>', 'ARC file')
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
        for (const record of readArc(file, { onProblem })) records += record.truncated ? 0 : 1;
        const summary = { file, records, problems, ok: problems === 0 };
        if (opts.json === true) printJson(summary);
        else print(`${file}: ${problems === 0 ? 'ok' : plural(problems, 'problem')}, ${plural(records, 'complete record')}`);
        return problems === 0 ? 0 : 1;
      }),
    );
}

const LF = Buffer.from('\n');

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

function listLine(record: ArcRecord): string {
  const { header, content } = record;
  const status = httpStatus(content);
  return [record.offset, record.length, column(header.date), column(header.mime), status ?? '-', column(header.url)].join(' ');
}

function describeRecord(record: ArcRecord) {
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
