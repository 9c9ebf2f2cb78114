/**
 * `sherlock nutch dump PATH [--json]`: print the records of Apache Nutch /
 * Hadoop files, like Nutch's `readdb -dump`, `readlinkdb -dump` and
 * `readseg -dump`.
 *
 * PATH is a SequenceFile, a MapFile directory (its `data` is printed, its key
 * order checked), or any directory above them (a crawldb, a linkdb, a segment,
 * a whole crawl): walked in name order, skipping `_*` and `.*` entries as
 * Hadoop does, and files that are not SequenceFiles (with a note on stderr).
 *
 * Text output: per file a `File:: PATH` line; per record `Recno:: N`, the key
 * (`URL::` for Text keys), then the value under its class's short name,
 * rendered as Nutch renders it (dates as ISO 8601 UTC instead of the JVM's
 * local time zone). --json: one object per record, {file, recno, offset, key,
 * class, value}; longs are numbers when exact, else strings; content bytes are
 * base64, signatures hex. Damage stops the dump with exit 1, naming the file
 * and offset; a file with a `.crc` side file is checked against it before a
 * record is printed, so that a flipped bit inside a value is caught too.
 */

import type { Command } from 'commander';
import { dumpedRecords, jsonValue, renderValue, sequenceFiles, valueJson } from '../exporter/nutch/dump.js';
import { action, print, printJson } from './command.js';

export function registerNutch(program: Command): void {
  const nutch = program.command('nutch').description('read Apache Nutch and Hadoop files (crawldb, linkdb, segments)');
  nutch
    .command('dump')
    .description('print every record of a SequenceFile, a MapFile, or all of them under a directory')
    .argument('<path>', 'a SequenceFile, a MapFile directory, or a crawldb, linkdb, segment or crawl directory')
    .option('--json', 'one JSON object per record')
    .action(
      action((path: string, opts: { json?: boolean }) => {
        const skip = (file: string) => process.stderr.write(`sherlock: skipping ${file}: not a SequenceFile\n`);
        for (const file of sequenceFiles(path, true, skip)) {
          if (!dumpFile(file, opts.json === true)) break;
        }
      }),
    );
}

/** Prints one file's records; false once stdout is gone. */
function dumpFile(file: string, json: boolean): boolean {
  let open = true;
  let keyName = 'Key';
  let valueClass = '';
  const records = dumpedRecords(file, (header) => {
    keyName = header.keyIsText ? 'URL' : 'Key';
    valueClass = header.valueClass;
    open = json || print(`File:: ${file}`);
    return open;
  });
  for (const { recno, offset, key, value } of records) {
    open = json
      ? printJson({ file, recno, offset, key: jsonValue(key), class: valueClass, value: valueJson(value, valueClass) })
      : print([`Recno:: ${recno}`, `${keyName}:: ${String(key)}`, '', `${valueClass.replace(/^.*\./, '')}::`, ...renderValue(value, valueClass), ''].join('\n'));
    if (!open) break;
  }
  return open;
}
