/**
 * `sherlock bucket ls|cat|verify|shake --state DIR`: look into the bucket file
 * (`<state>/gather/buckets`), check it, and compact it. Reading commands can run
 * while the gatherer writes; shake refuses while a writer holds the lock.
 */

import type { Command } from 'commander';
import { bucketTypeName, type Bucket, type BucketObject } from '../common/bucket/bucket.js';
import { BucketReader, BucketWriter, MAX_OID, bucketFilePath } from '../common/bucket/file.js';
import { SherlockError } from '../common/errors.js';
import { STATE_HELP, action, print, printJson, stateDir } from './command.js';

interface StateOptions {
  state?: string;
  json?: boolean;
}

export function registerBucket(program: Command): void {
  const bucket = program.command('bucket').description('list, print, verify and compact the bucket file');

  bucket
    .command('ls')
    .description('list live buckets: oid, type, length, URL')
    .option('--state <dir>', STATE_HELP)
    .option('--from <oid>', 'start at this oid')
    .option('--json', 'one JSON document per bucket')
    .action(
      action((opts: StateOptions & { from?: string }) => {
        const reader = BucketReader.open(bucketFilePath(stateDir(opts)));
        let problems = 0;
        const report = (offset: number, message: string) => {
          problems++;
          process.stderr.write(`${reader.path}: offset ${offset}: ${message}\n`);
        };
        try {
          const from = opts.from === undefined ? 1 : parseOid(opts.from);
          for (const stored of reader.buckets({ from, onDamage: (damage) => report(damage.offset, damage.message) })) {
            let url: string | undefined;
            try {
              url = urlOf(reader.decode(stored));
            } catch (err) {
              if (!(err instanceof SherlockError)) throw err;
              report(err.place.offset ?? stored.offset, `bucket ${stored.oid}: ${err.message}`);
            }
            const row = { oid: stored.oid, type: bucketTypeName(stored.type), length: stored.data.length, url: url ?? null };
            if (opts.json === true) printJson(row);
            else print(`${row.oid} ${row.type} ${row.length} ${url === undefined ? '-' : escape(url)}`);
          }
        } finally {
          reader.close();
        }
        return problems > 0 ? 1 : 0;
      }),
    );

  bucket
    .command('cat')
    .description("print one bucket's attributes: header, an empty line, body; children as (x … )")
    .argument('<oid>', 'the bucket')
    .option('--state <dir>', STATE_HELP)
    .option('--json', 'print {oid, type, header, body} with values as text, or base64 when not UTF-8')
    .action(
      action((oid: string, opts: StateOptions) => {
        const reader = BucketReader.open(bucketFilePath(stateDir(opts)));
        try {
          const stored = reader.read(parseOid(oid));
          const decoded = reader.decode(stored);
          if (opts.json === true) {
            printJson({ oid: stored.oid, type: bucketTypeName(stored.type), header: toJson(decoded.header), body: toJson(decoded.body) });
          } else {
            for (const line of textLines(decoded.header, '')) print(line);
            print('');
            for (const line of textLines(decoded.body, '')) print(line);
          }
        } finally {
          reader.close();
        }
      }),
    );

  bucket
    .command('verify')
    .description('check every bucket (header, trailer, CRC-32, encoding); exit 1 on any problem')
    .option('--state <dir>', STATE_HELP)
    .option('--json', 'print the report as one JSON document')
    .action(
      action((opts: StateOptions) => {
        const reader = BucketReader.open(bucketFilePath(stateDir(opts)));
        let report;
        try {
          report = reader.verify();
        } finally {
          reader.close();
        }
        if (opts.json === true) {
          printJson(report);
        } else {
          for (const problem of report.problems) print(`${report.file}: offset ${problem.offset}: ${problem.message}`);
          const writing = report.writing ? ', 1 being written' : '';
          print(`${report.file}: ${report.buckets} buckets ok, ${report.deleted} deleted${writing}, ${report.problems.length} problems`);
        }
        return report.problems.length > 0 ? 1 : 0;
      }),
    );

  bucket
    .command('shake')
    .description('compact the bucket file: drop deleted buckets, write an old → new oid map, bump the generation')
    .option('--state <dir>', STATE_HELP)
    .option('--drop-damaged', 'discard damaged buckets instead of refusing')
    .option('--json', 'print the report as one JSON document')
    .action(
      action((opts: StateOptions & { dropDamaged?: boolean }) => {
        const report = BucketWriter.shake(bucketFilePath(stateDir(opts)), { dropDamaged: opts.dropDamaged === true });
        if (opts.json === true) {
          printJson(report);
          return;
        }
        for (const damage of report.dropped) print(`dropped damage at offset ${damage.offset}: ${damage.message}`);
        const saved = report.bytesBefore - report.bytesAfter;
        print(`kept ${report.kept}, removed ${report.removed}, saved ${saved} bytes, generation ${report.generation}`);
      }),
    );
}

function parseOid(text: string): number {
  const oid = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(oid >= 1 && oid <= MAX_OID)) throw new SherlockError('SHERLOCK_USAGE', `bad oid ${JSON.stringify(text)}: 1 to ${MAX_OID} expected`);
  return oid;
}

function urlOf(bucket: Bucket): string | undefined {
  return bucket.header.string('U') ?? bucket.body.string('U');
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function text(value: Buffer): string | undefined {
  try {
    return utf8.decode(value);
  } catch {
    return undefined;
  }
}

/** Printable on a terminal: UTF-8 text with control bytes and backslashes escaped, other bytes as \xNN. */
function display(value: Buffer): string {
  const decoded = text(value);
  if (decoded !== undefined) return escape(decoded);
  return [...value].map((byte) => (byte >= 0x20 && byte < 0x7f ? escape(String.fromCharCode(byte)) : hexByte(byte))).join('');
}

function escape(line: string): string {
  return line.replace(/[\x00-\x1f\x7f\\]/g, (c) => (c === '\\' ? '\\\\' : hexByte(c.charCodeAt(0))));
}

function hexByte(byte: number): string {
  return `\\x${byte.toString(16).padStart(2, '0')}`;
}

function textLines(object: BucketObject, indent: string): string[] {
  return object.items.flatMap((item) =>
    item.child === undefined
      ? [`${indent}${display(Buffer.from(item.name, 'latin1'))} ${display(item.value)}`]
      : [`${indent}(${display(Buffer.from(item.name, 'latin1'))}`, ...textLines(item.child, indent + '  '), `${indent})`],
  );
}

type JsonItem = { name: string; value: string } | { name: string; base64: string } | { name: string; items: JsonItem[] };

function toJson(object: BucketObject): JsonItem[] {
  return object.items.map((item) => {
    if (item.child !== undefined) return { name: item.name, items: toJson(item.child) };
    const value = text(item.value);
    return value === undefined ? { name: item.name, base64: item.value.toString('base64') } : { name: item.name, value };
  });
}
