/**
 * `sherlock export nutch --state DIR --out DIR`: the crawl as an Apache Nutch
 * 1.x crawl directory that Nutch's readdb, readseg, readlinkdb, updatedb,
 * generate and indexers read as their own (docs/nutch.md):
 *
 * One reduce part per directory (`part-r-00000`) unless `--parts N`, which
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
 * deflate blocks, common/sequence-file.ts's bulkCodec), sync entries every 102,400 bytes as
 * Hadoop 3, each file with its `.crc` (unless --no-crc). Keys ascend in
 * Hadoop's Text order: the URLs go through common/external-sort.ts (UTF-8
 * bytes read as Latin-1, NUL before the payload), so memory stays bounded
 * whatever the crawl's size: one row, one document, one group of inlinks at a
 * time, plus the sort's budget.
 *
 * A URL row maps to a CrawlDatum as shepherd/nutch-crawldb.ts says. A copy we
 * hold is the bucket a row's `oid` names, and its ARC record for the content.
 * The directory is written as `<out>.tmp` and renamed when whole; `--out`
 * must not exist.
 */

import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { bucketFilePath } from '../common/bucket-file.js';
import { SherlockError } from '../common/errors.js';
import { ExternalSorter } from '../common/external-sort.js';
import { encodeText, hashPartition, textPayload } from '../common/hadoop-io.js';
import { encodeWritable, TEXT } from '../common/hadoop-writables.js';
import { logger } from '../common/log.js';
import { MapFileWriter } from '../common/map-file.js';
import { CRAWL_DATUM, INLINKS, type Link } from '../common/nutch-writables.js';
import { bulkCodec, SequenceFileWriter, type Compression } from '../common/sequence-file.js';
import { crawlDatumOf, NUTCH_DEFAULT_INTERVAL } from '../shepherd/nutch-crawldb.js';
import { readUrlRows } from '../shepherd/status.js';
import { fromSortKey, MAX_INLINKS, SEGMENT_FILES, segmentBatches, SEP, sortKey, unpackRecords, type SegmentJob } from './nutch-segment.js';

const log = logger('export');

export interface NutchExportOptions {
  out: string;
  /** Bytes of lines each external sort holds before spilling. */
  sortMemory: number;
  /** Write Hadoop's `.crc` side files. */
  checksum: boolean;
  /** Reduce parts per directory (part-r-00000 …), keys spread by Text hash as Hadoop's HashPartitioner does. */
  parts: number;
  /** Export time, ms: names the segment. */
  now?: number;
}

export interface NutchExportReport {
  urls: number;
  documents: number;
  linkedUrls: number;
  segment: string;
  /** Bytes of every file written. */
  bytes: number;
}

/** Crawldb records written between looks at the segment workers' answers. */
const CRAWLDB_SLICE = 2000;

/** Nutch's segment names: the generate time as yyyyMMddHHmmss (UTC here). */
export function segmentName(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

const codec = bulkCodec();

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
  const urls = new ExternalSorter({ memoryBudget: options.sortMemory });
  const docs = new ExternalSorter({ memoryBudget: options.sortMemory });
  const links = new ExternalSorter({ memoryBudget: options.sortMemory });
  try {
    let count = 0;
    for (const row of readUrlRows(state)) {
      const key = sortKey(row.url);
      urls.add(key + SEP + encodeWritable(CRAWL_DATUM, crawlDatumOf(row)).toString('base64'));
      if (row.oid !== null) docs.add([key, row.oid, row.interval ?? NUTCH_DEFAULT_INTERVAL, row.weight].join(SEP));
      count++;
    }
    log.info('URL database read', { urls: count, ...usage() });
    // The crawldb is written on the main thread while the workers make the segment's records.
    const [crawldb, segmentDone] = await Promise.allSettled([
      writeCrawlDb(join(temp, 'crawldb', 'current'), urls, layout),
      writeSegment({ state, segment, time: now }, join(temp, 'segments', segment), docs, links, layout),
    ]);
    if (crawldb.status === 'rejected') throw crawldb.reason;
    if (segmentDone.status === 'rejected') throw segmentDone.reason;
    const documents = segmentDone.value;
    log.info('crawldb and segment written', { segment, documents, ...usage() });
    const linkedUrls = writeLinkDb(join(temp, 'linkdb', 'current'), links, layout);
    log.info('linkdb written', { urls: linkedUrls, ...usage() });
    const bytes = treeSize(temp);
    renameSync(temp, out);
    return { urls: count, documents, linkedUrls, segment, bytes };
  } catch (err) {
    rmSync(temp, { recursive: true, force: true });
    throw err;
  } finally {
    for (const sorter of [urls, docs, links]) sorter.discard();
  }
}

/** The crawldb from the URLs' sort lines, giving the event loop a turn every CRAWLDB_SLICE records. */
async function writeCrawlDb(dir: string, urls: ExternalSorter, layout: Layout): Promise<void> {
  const crawldb = mapFile(dir, CRAWL_DATUM.className, 'none', layout);
  let n = 0;
  for (const line of urls.sorted()) {
    const cut = line.indexOf(SEP);
    crawldb.append(encodeText(Buffer.from(line.slice(0, cut), 'latin1')), Buffer.from(line.slice(cut + 1), 'base64'));
    if (++n % CRAWLDB_SLICE === 0) await yieldToEvents();
  }
  crawldb.close();
}

/** The segment's files from the documents' sort lines (records made in worker threads, cli/nutch-segment.ts). */
async function writeSegment(job: SegmentJob, dir: string, docs: ExternalSorter, links: ExternalSorter, layout: Layout): Promise<number> {
  const writers = SEGMENT_FILES.map(({ name, map, compression, valueClass }) =>
    map ? mapFile(join(dir, name), valueClass, compression, layout) : sequenceFile(join(dir, name), compression, layout),
  );
  let documents = 0;
  const lines = existsSync(bucketFilePath(job.state)) ? docs.sorted() : [];
  await segmentBatches(job, lines, (batch) => {
    unpackRecords(batch.records, (file, key, stored) => writers[file]!.appendStored(key, stored));
    if (batch.links !== '') for (const line of batch.links.split('\n')) links.add(line);
    documents += batch.documents;
  });
  for (const writer of writers) writer.close();
  return documents;
}

/** Inlinks grouped by target from lines "target NUL from NUL anchor" in sorted order; returns the number of targets. */
function writeLinkDb(dir: string, links: ExternalSorter, layout: Layout): number {
  const linkdb = mapFile(dir, INLINKS.className, 'record', layout);
  let target: string | undefined;
  let inlinks: Link[] = [];
  let targets = 0;
  let previous = '';
  const flush = () => {
    if (target === undefined) return;
    linkdb.append(encodeText(Buffer.from(target, 'latin1')), encodeWritable(INLINKS, inlinks));
    targets++;
  };
  for (const line of links.sorted()) {
    if (line === previous) continue;
    previous = line;
    const [to, from, anchor] = line.split(SEP) as [string, string, string];
    if (to !== target) {
      flush();
      target = to;
      inlinks = [];
    }
    if (inlinks.length < MAX_INLINKS) inlinks.push({ url: fromSortKey(from), anchor: fromSortKey(anchor), metadata: null });
  }
  flush();
  linkdb.close();
  return targets;
}
