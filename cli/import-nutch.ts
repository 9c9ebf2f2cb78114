/**
 * `sherlock import nutch --state DIR PATH`: an Apache Nutch crawldb into the
 * URL database, so a Nutch crawl can go on in sherlock (docs/nutch.md).
 *
 * PATH is a crawl directory (its `crawldb/current` is read), a crawldb (its
 * `current`), a `current` directory, or one part (a MapFile directory). Every
 * `part-*` MapFile is read in name order, its keys checked to ascend; a
 * record becomes a row as shepherd/nutch-crawldb.ts says and goes in through
 * the URL database's own restore (canonical form, footprint, the site's row
 * and budgets), 10,000 in a transaction. URLs the database knows already are
 * left as they are. Damage (a truncated or foreign file, an unknown class, a
 * corrupt block, keys out of order) stops the import with the file and
 * offset; what earlier transactions added stays (importing again adds the
 * rest, the rows already there are known).
 */

import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { SherlockError } from '../common/errors.js';
import { canonicalClassName, TEXT, UTF8 } from '../common/hadoop/writables.js';
import { logger } from '../common/log.js';
import { DATA_FILE, INDEX_FILE, MapFileReader } from '../common/hadoop/map-file.js';
import { CRAWL_DATUM, type CrawlDatum } from '../common/hadoop/nutch-writables.js';
import { corruptHadoop } from '../common/hadoop/io.js';
import { decodeRecord, recordTypes } from '../common/hadoop/sequence-file.js';
import { restoredOf } from '../shepherd/nutch-crawldb.js';
import { UrlDb, type InjectCounts, type RestoredUrl } from '../shepherd/urldb.js';
import { STATE_HELP, action, print, printJson, stateDir } from './command.js';
import { loadSettings, type GlobalOptions } from './settings.js';

const log = logger('import');
const BATCH = 10_000;

export function registerImport(program: Command): void {
  const imp = program.command('import').description('bring another crawler’s URL database into sherlock’s');
  imp
    .command('nutch')
    .description('an Apache Nutch crawldb into the URL database: URLs, states, fetch times, intervals, scores, signatures')
    .option('--state <dir>', STATE_HELP)
    .option('--crawldb <dir>', 'the crawldb (instead of PATH)')
    .option('--json', 'print the counts as one JSON object')
    .argument('[path]', 'a Nutch crawl directory, a crawldb, its current directory, or one part')
    .action(
      action((path: string | undefined, opts: { state?: string; crawldb?: string; json?: boolean }, cmd: Command) => {
        const source = path ?? opts.crawldb;
        if (source === undefined || (path !== undefined && opts.crawldb !== undefined)) throw new SherlockError('SHERLOCK_USAGE', 'give one crawldb: PATH or --crawldb DIR');
        const state = stateDir(opts);
        const config = loadSettings(cmd.optsWithGlobals<GlobalOptions>()).config;
        const db = UrlDb.open(state, config.shepherd);
        let counts: ImportCounts;
        try {
          counts = importCrawlDb(db, source, Math.floor(Date.now() / 1000));
        } finally {
          db.close();
        }
        log.notice('crawldb imported', { ...counts });
        if (opts.json === true) printJson(counts);
        else print(`${counts.records} records from ${counts.parts} parts: ${counts.added} added, ${counts.known} known, ${counts.refused} refused (not a usable URL, or over a site's budget)`);
        return 0;
      }),
    );
}

export interface ImportCounts extends InjectCounts {
  parts: number;
  records: number;
}

function isMapFile(dir: string): boolean {
  return existsSync(join(dir, DATA_FILE)) && existsSync(join(dir, INDEX_FILE));
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The part MapFiles of the crawldb at or under `path`, in name order. */
export function crawlDbParts(path: string): string[] {
  if (!existsSync(path)) throw new SherlockError('SHERLOCK_NOT_FOUND', 'no such file or directory', { file: path });
  if (isMapFile(path)) return [path];
  for (const current of [join(path, 'crawldb', 'current'), join(path, 'current'), path]) {
    if (!isDir(current)) continue;
    const parts = readdirSync(current)
      .filter((name) => name.startsWith('part-'))
      .sort()
      .map((name) => join(current, name));
    if (parts.length > 0) {
      const notMapFile = parts.find((part) => !isMapFile(part));
      if (notMapFile !== undefined) throw new SherlockError('SHERLOCK_CORRUPT_HADOOP', 'a crawldb part is not a MapFile (no data and index)', { file: notMapFile });
      return parts;
    }
  }
  throw new SherlockError('SHERLOCK_NOT_FOUND', 'no crawldb here: no crawldb/current, current or part-* MapFiles', { file: path });
}

/** Reads every part into the database; `now` (Unix seconds) is first seen for records that do not say. */
export function importCrawlDb(db: UrlDb, path: string, now: number): ImportCounts {
  const counts: ImportCounts = { parts: 0, records: 0, added: 0, known: 0, refused: 0 };
  let batch: RestoredUrl[] = [];
  const flush = () => {
    const c = db.restore(batch);
    counts.added += c.added;
    counts.known += c.known;
    counts.refused += c.refused;
    batch = [];
  };
  for (const part of crawlDbParts(path)) {
    const reader = MapFileReader.open(part);
    try {
      const types = recordTypes(reader.data);
      const { keyClass, valueClass, valueClassOffset } = reader.data.header;
      const keyName = canonicalClassName(keyClass);
      if (keyName !== TEXT.className && keyName !== UTF8.className) throw corruptHadoop(reader.data.file, 4, `crawldb keys are ${keyClass}, not Text URLs`);
      if (canonicalClassName(valueClass) !== CRAWL_DATUM.className) throw corruptHadoop(reader.data.file, valueClassOffset, `crawldb values are ${valueClass}, not CrawlDatum`);
      for (const record of reader.records()) {
        const { key, value } = decodeRecord(reader.data.file, types, record);
        batch.push(restoredOf(key as string, value as CrawlDatum, now));
        counts.records++;
        if (batch.length >= BATCH) flush();
      }
    } finally {
      reader.close();
    }
    counts.parts++;
  }
  flush();
  return counts;
}
