/**
 * The crawl as an Apache Nutch 1.x crawl directory that Nutch's readdb,
 * readseg, readlinkdb, updatedb, generate and indexers read as their own
 * (`sherlock export nutch`, docs/nutch.md):
 *
 * One reduce part per directory (`part-r-00000`) unless `parts` is N, which
 * spreads keys over N parts by Text hash as Hadoop's HashPartitioner does.
 *
 *   crawldb/current/part-r-00000/{data,index}   Text URL → CrawlDatum, every URL
 *                                                of the URL database, NONE
 *   linkdb/current/part-r-00000/{data,index}    Text URL → Inlinks (from URL,
 *                                                anchor) of the copies we hold, RECORD
 *   segments/<yyyyMMddHHmmss>/                  one segment of every copy we hold:
 *     crawl_generate/part-r-00000                 SequenceFile, NONE
 *     crawl_fetch/part-r-00000/{data,index}       CrawlDatum of the fetch, RECORD
 *     content/part-r-00000/{data,index}           Content: body and response header, RECORD
 *     parse_text/part-r-00000/{data,index}        ParseText (successful fetches), RECORD
 *     parse_data/part-r-00000/{data,index}        ParseData: title, outlinks with anchors, RECORD
 *     crawl_parse/part-r-00000                    signature and linked CrawlDatums, RECORD
 *
 * Compression is what Nutch's jobs write (crawldb NONE, the rest RECORD with
 * DefaultCodec, MapFile indexes BLOCK; values under 256 bytes in stored
 * deflate blocks, common/hadoop/sequence-file.ts's bulkCodec), sync entries every 102,400 bytes as
 * Hadoop 3, each file with its `.crc` (unless `checksum` is false). Keys ascend in
 * Hadoop's Text order. The URL database is read in one transaction
 * (shepherd/status.ts UrlSnapshot; SQLite sorts by URL): the copies we hold,
 * and the fetches that failed without one, go to worker threads, which make
 * the segment's records (segment.ts), and the main thread writes those in
 * order as they come back; meanwhile it writes the crawldb from a second
 * read of every row, a thousand rows at a time, so that the threads never
 * wait for it (a document's row waits for its Content-Type from them). The
 * scores are the current index version's static weights (static-weights.ts).
 * The linkdb's lines (UTF-8 bytes read as Latin-1, NUL between fields) are
 * sorted into runs by those threads (common/external-sort.ts); their merge
 * is cut into slices between targets, the same threads make each slice's
 * records (linkdb.ts) and the main thread writes the linkdb last,
 * in order. Memory stays bounded whatever the crawl's size: one row, a few
 * batches of documents, one group of inlinks at a time, plus the sorts'
 * budgets.
 *
 * A URL row maps to a CrawlDatum as crawldb.ts says. A copy we
 * hold is the bucket a row's `oid` names, and its ARC record for the content.
 * The directory is written as `<out>.tmp` and renamed when whole; `out` must
 * not exist.
 */

import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { bucketFilePath } from '../../common/bucket/file.js';
import { SherlockError } from '../../common/errors.js';
import { ExternalSorter } from '../../common/external-sort.js';
import { encodeText, hashPartition, textPayload } from '../../common/hadoop/io.js';
import { encodeWritable, TEXT } from '../../common/hadoop/writables.js';
import { logger } from '../../common/log.js';
import { MapFileWriter } from '../../common/hadoop/map-file.js';
import { CRAWL_DATUM, INLINKS, NUTCH_DEFAULT_INTERVAL } from '../../common/hadoop/nutch-writables.js';
import { bulkCodec, SequenceFileWriter, type Compression } from '../../common/hadoop/sequence-file.js';
import { crawlDatumOf, nutchScore } from './crawldb.js';
import { RedirectTargets } from './redirect.js';
import { StaticWeights } from './static-weights.js';
import { isDocument, UrlSnapshot, type UrlRowColumns } from '../../shepherd/status.js';
import { linkTarget } from './linkdb.js';
import { SEGMENT_FILES, SegmentPool, SEP, sortKey, unpackRecords } from './segment.js';

const log = logger('export');

export interface NutchExportOptions {
  out: string;
  /** Bytes of lines the linkdb's external sort holds before spilling. */
  sortMemory: number;
  /** Write Hadoop's `.crc` side files. */
  checksum: boolean;
  /** Reduce parts per directory (part-r-00000 …), keys spread by Text hash as Hadoop's HashPartitioner does. */
  parts: number;
  /** Export time, ms: names the segment. */
  now?: number;
  /** Worker threads making the segment's records (default: one a core, 1–4); the files are the same whatever the number. */
  threads?: number;
  /** Keep links within a host in the linkdb; by default they are left out, as Nutch's linkdb.ignore.internal.links (true) does. */
  internalLinks?: boolean;
}

export interface NutchExportReport {
  urls: number;
  documents: number;
  linkedUrls: number;
  segment: string;
  /** Bytes of every file written. */
  bytes: number;
}

/** Nutch's segment names: the generate time as yyyyMMddHHmmss (UTC here). */
export function segmentName(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

const codec = bulkCodec();
/** Crawldb rows written each time the segment's threads have as many batches out as they may (~7 ms). */
const ROWS_BETWEEN_BATCHES = 1000;
/**
 * Sort budgets a linkdb slice's sorted link lines (2 MiB of the default
 * 16): small enough that the slices out (IN_FLIGHT a thread,
 * segment.ts) hold a few MB, large enough that cutting the runs (a
 * binary search a run and slice) costs little.
 */
const SLICES_A_BUDGET = 8;

/** Hadoop's name of reduce part i. */
export function partName(i: number): string {
  return `part-r-${String(i).padStart(5, '0')}`;
}

interface Writer {
  append(key: Buffer, value: Uint8Array): void;
  appendStored(key: Buffer, stored: Uint8Array): void;
  close(): void;
}

/** One writer per part; a key (a serialised Text) goes to the part Hadoop's HashPartitioner gives it. */
class Parts {
  private readonly writers: Writer[];

  constructor(parts: number, make: (part: string) => Writer) {
    this.writers = Array.from({ length: parts }, (_, i) => make(partName(i)));
  }

  append(key: Buffer, value: Uint8Array): void {
    this.writer(key).append(key, value);
  }

  appendStored(key: Buffer, stored: Uint8Array): void {
    this.writer(key).appendStored(key, stored);
  }

  private writer(key: Buffer): Writer {
    const n = this.writers.length;
    return this.writers[n === 1 ? 0 : hashPartition(textPayload(key), n)]!;
  }

  close(): void {
    for (const writer of this.writers) writer.close();
  }
}

interface Layout {
  parts: number;
  checksum: boolean;
}

function mapFile(dir: string, valueClass: string, compression: Compression, { parts, checksum }: Layout): Parts {
  return new Parts(parts, (part) => MapFileWriter.create(join(dir, part), { keyClass: TEXT.className, valueClass, compression, codec, checksum }));
}

function sequenceFile(dir: string, compression: Compression, { parts, checksum }: Layout): Parts {
  mkdirSync(dir, { recursive: true });
  return new Parts(parts, (part) => SequenceFileWriter.create(join(dir, part), { keyClass: TEXT.className, valueClass: CRAWL_DATUM.className, compression, codec, checksum }));
}

/** Time (since the process started) and memory so far, for the progress lines; CPU counts every thread. */
function usage(): { wallMs: number; cpuMs: number; rssMiB: number; heapMiB: number; externalMiB: number } {
  const { user, system } = process.cpuUsage();
  const m = process.memoryUsage();
  const mib = (n: number) => Math.round(n / 2 ** 20);
  return { wallMs: Math.round(performance.now()), cpuMs: Math.round((user + system) / 1000), rssMiB: mib(m.rss), heapMiB: mib(m.heapUsed), externalMiB: mib(m.external + m.arrayBuffers) };
}

/** Bytes of the files under `dir`. */
function treeSize(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? treeSize(path) : statSync(path).size;
  }
  return total;
}

export async function exportNutch(state: string, options: NutchExportOptions): Promise<NutchExportReport> {
  const { out } = options;
  const layout: Layout = { parts: options.parts, checksum: options.checksum };
  if (existsSync(out)) throw new SherlockError('SHERLOCK_USAGE', 'the output directory exists already; give a new one', { file: out });
  const temp = `${out}.tmp`;
  rmSync(temp, { recursive: true, force: true });
  const now = options.now ?? Date.now();
  const segment = segmentName(now);
  const links = new ExternalSorter({ memoryBudget: options.sortMemory });
  // The current index version's static weights score the rows (docs/nutch.md); read before the snapshot, which must be closed.
  const weights = StaticWeights.open(state);
  const snapshot = UrlSnapshot.open(state);
  let pool: SegmentPool | undefined;
  try {
    const crawldb = mapFile(join(temp, 'crawldb', 'current'), CRAWL_DATUM.className, 'none', layout);
    const segmentDir = join(temp, 'segments', segment);
    const writers = SEGMENT_FILES.map(({ name, map, compression, valueClass }) =>
      map ? mapFile(join(segmentDir, name), valueClass, compression, layout) : sequenceFile(join(segmentDir, name), compression, layout),
    );
    let documents = 0;
    // Each document line's Content-Type, in the lines' order (the rows' order too), until its crawldb row takes it.
    const types: string[] = [];
    let typesTaken = 0;
    let documentsDone = false;
    pool = existsSync(bucketFilePath(state))
      ? new SegmentPool({ state, segment, time: now, linkRuns: links.runDirectory(), sortMemory: options.sortMemory, internalLinks: options.internalLinks ?? false }, (batch) => {
          unpackRecords(batch.records, (file, key, stored) => writers[file]!.appendStored(key, stored));
          documents += batch.count;
          types.push(...batch.types!);
        }, options.threads)
      : undefined;
    let count = 0;
    const rows = snapshot.rows();
    const targets = new RedirectTargets(snapshot.redirects());
    let held: UrlRowColumns | undefined;
    /**
     * Writes up to `n` rows into the crawldb; false once there are none
     * left. A document's row waits for its Content-Type from the threads
     * (held until the next call).
     */
    const writeRows = (n: number): boolean => {
      for (let i = 0; i < n; i++) {
        let row = held;
        held = undefined;
        if (row === undefined) {
          const next = rows.next();
          if (next.done === true) return false;
          row = next.value;
        }
        let type: string | undefined;
        if (pool !== undefined && isDocument(row)) {
          if (typesTaken === types.length) {
            if (documentsDone) throw new Error(`export nutch: no document line for ${row.url}`);
            held = row;
            return true;
          }
          type = types[typesTaken++];
          if (typesTaken === types.length) types.length = typesTaken = 0;
        }
        const datum = crawlDatumOf(row, { contentType: type, weight: weights?.weightOf(row.url), representative: targets.representativeOf(row.url) });
        crawldb.append(encodeText(row.url), encodeWritable(CRAWL_DATUM, datum));
        count++;
      }
      return true;
    };
    // The copies we hold go to the threads from a read of their own (the same commit), so that they never wait for
    // the crawldb's rows; this thread writes those while the threads work, a few milliseconds at a time.
    let rowsLeft = true;
    for (const doc of pool === undefined ? [] : snapshot.documents()) {
      const score = nutchScore(weights?.weightOf(doc.url) ?? doc.weight);
      const wait = pool!.add([sortKey(doc.url), doc.oid ?? '', doc.interval ?? NUTCH_DEFAULT_INTERVAL, score, doc.lastFetch ?? '', doc.status ?? '', doc.error ?? ''].join(SEP));
      if (wait === undefined) continue;
      if (rowsLeft) rowsLeft = writeRows(ROWS_BETWEEN_BATCHES);
      await wait;
    }
    const runs = (await pool?.finish()) ?? [];
    documentsDone = true;
    links.adoptRuns(runs);
    // The threads start on the linkdb while this one closes the segment's files and writes the crawldb's last rows,
    // letting the linkdb's slices in between.
    const linkdb = writeLinkDb(join(temp, 'linkdb', 'current'), links, runs, pool, options.sortMemory, layout);
    linkdb.catch(() => undefined);
    for (const writer of writers) writer.close();
    log.info('segment written', { segment, documents, ...usage() });
    while (rowsLeft) {
      rowsLeft = writeRows(ROWS_BETWEEN_BATCHES);
      await setImmediate();
    }
    crawldb.close();
    log.info('crawldb written', { urls: count, ...usage() });
    const linkedUrls = await linkdb;
    await pool?.close();
    log.info('linkdb written', { urls: linkedUrls, ...usage() });
    const bytes = treeSize(temp);
    renameSync(temp, out);
    return { urls: count, documents, linkedUrls, segment, bytes };
  } catch (err) {
    await pool?.abort();
    rmSync(temp, { recursive: true, force: true });
    throw err;
  } finally {
    snapshot.close();
    links.discard();
  }
}

/**
 * Inlinks grouped by target from the workers' sorted runs of lines "target
 * NUL from NUL anchor": the merge cut into slices of about an eighth of
 * the sort budget between targets, each slice's records made by a worker thread
 * (linkdb.ts) and written here in key order; returns the number
 * of targets.
 */
async function writeLinkDb(dir: string, links: ExternalSorter, runs: string[], pool: SegmentPool | undefined, sortMemory: number, layout: Layout): Promise<number> {
  const linkdb = mapFile(dir, INLINKS.className, 'record', layout);
  let targets = 0;
  if (pool !== undefined && runs.length > 0) {
    const bytes = runs.reduce((sum, run) => sum + statSync(run).size, 0);
    await pool.linkdb(links.eachSlice(Math.ceil((bytes * SLICES_A_BUDGET) / sortMemory), linkTarget), (batch) => {
      unpackRecords(batch.records, (_file, key, stored) => linkdb.appendStored(key, stored));
      targets += batch.count;
    });
  }
  linkdb.close();
  return targets;
}
