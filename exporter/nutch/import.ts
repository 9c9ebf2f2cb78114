/**
 * An Apache Nutch crawldb read as URL rows (docs/nutch.md), for `sherlock
 * import nutch`.
 *
 * The path is a crawl directory (its `crawldb/current` is read), a crawldb
 * (its `current`), a `current` directory, or one part (a MapFile directory).
 * Every `part-*` MapFile is read in name order, its keys checked to ascend; a
 * record becomes a row as crawldb.ts says. The rows go to the caller's
 * restore, which is the URL database's own (canonical form, footprint, the
 * site's row and budgets), 10,000 at a time, so each batch is one
 * transaction and this part never opens the shepherd's database itself.
 * Damage (a truncated or foreign file, an unknown class, a corrupt block,
 * keys out of order) stops the import with the file and offset; what earlier
 * batches added stays (importing again adds the rest, the rows already there
 * are known).
 */

import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SherlockError } from '../../common/errors.js';
import { corruptHadoop } from '../../common/hadoop/io.js';
import { isMapFile, MapFileReader } from '../../common/hadoop/map-file.js';
import { CRAWL_DATUM, type CrawlDatum } from '../../common/hadoop/nutch-writables.js';
import { decodeRecord, recordTypes } from '../../common/hadoop/sequence-file.js';
import { canonicalClassName, TEXT, UTF8 } from '../../common/hadoop/writables.js';
import type { InjectCounts, RestoredUrl } from '../../shepherd/urldb.js';
import { restoredOf } from './crawldb.js';

const BATCH = 10_000;

export interface ImportCounts extends InjectCounts {
  parts: number;
  records: number;
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

/**
 * Reads every part and hands its rows to `restore` (the URL database's own,
 * given by the caller) BATCH at a time; `now` (Unix seconds) is first seen for
 * records that do not say.
 */
export function importCrawlDb(path: string, now: number, restore: (rows: RestoredUrl[]) => InjectCounts): ImportCounts {
  const counts: ImportCounts = { parts: 0, records: 0, added: 0, known: 0, refused: 0 };
  let batch: RestoredUrl[] = [];
  const flush = () => {
    const c = restore(batch);
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
