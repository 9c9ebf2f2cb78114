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
import { ArcReader } from '../common/arc-read.js';
import type { Bucket } from '../common/bucket.js';
import { BucketReader, bucketFilePath } from '../common/bucket-file.js';
import { httpPayloadOffset } from '../common/digest.js';
import { parseBody, type DocumentBody } from '../common/doc-body.js';
import { anchorTexts, plainText } from '../common/doc-text.js';
import { isSherlockError, SherlockError } from '../common/errors.js';
import { ExternalSorter } from '../common/external-sort.js';
import { encodeText, hashPartition, textPayload } from '../common/hadoop-io.js';
import { encodeWritable, TEXT, typed, type Typed } from '../common/hadoop-writables.js';
import { logger } from '../common/log.js';
import { MapFileWriter } from '../common/map-file.js';
import {
  CONTENT,
  CRAWL_DATUM,
  CRAWL_STATUS,
  INLINKS,
  PARSE_DATA,
  PARSE_TEXT,
  PROTOCOL_STATUS,
  PROTOCOL_STATUS_WRITABLE,
  type CrawlDatum,
  type Link,
  type Metadata,
} from '../common/nutch-writables.js';
import { bulkCodec, SequenceFileWriter, type Compression } from '../common/sequence-file.js';
import { decodeContent } from '../gatherer/content-decoding.js';
import { arcDir, parseArcAttribute } from '../gatherer/store.js';
import { crawlDatumOf, NUTCH_DEFAULT_INTERVAL } from '../shepherd/nutch-crawldb.js';
import { reportOf, type FetchResult } from '../shepherd/results.js';
import { readUrlRows } from '../shepherd/status.js';

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

/** Nutch's db.max.inlinks and db.max.anchor.length. */
const MAX_INLINKS = 10_000;
const MAX_ANCHOR = 100;
/** Open ARC files kept for the random reads of the segment pass. */
const ARC_READERS = 16;
const MAX_CONTENT = 512 * 1024 * 1024;
const SEP = '\0';

/** A URL as a sort key: its UTF-8 bytes one character each, so string order is Text order. */
function sortKey(url: string): string {
  return Buffer.from(url, 'utf8').toString('latin1');
}

function fromSortKey(key: string): string {
  return Buffer.from(key, 'latin1').toString('utf8');
}

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
  close(): void;
}

/** One writer per part; a key (a serialised Text) goes to the part Hadoop's HashPartitioner gives it. */
class Parts {
  private readonly writers: Writer[];

  constructor(parts: number, make: (part: string) => Writer) {
    this.writers = Array.from({ length: parts }, (_, i) => make(partName(i)));
  }

  append(key: Buffer, value: Uint8Array): void {
    const n = this.writers.length;
    this.writers[n === 1 ? 0 : hashPartition(textPayload(key), n)]!.append(key, value);
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

/** CPU time and memory of the process so far, for the progress lines. */
function usage(): { cpuMs: number; rssMiB: number; heapMiB: number; externalMiB: number } {
  const { user, system } = process.cpuUsage();
  const m = process.memoryUsage();
  const mib = (n: number) => Math.round(n / 2 ** 20);
  return { cpuMs: Math.round((user + system) / 1000), rssMiB: mib(m.rss), heapMiB: mib(m.heapUsed), externalMiB: mib(m.external + m.arrayBuffers) };
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
    const crawldb = mapFile(join(temp, 'crawldb', 'current'), CRAWL_DATUM.className, 'none', layout);
    for (const line of urls.sorted()) {
      const cut = line.indexOf(SEP);
      crawldb.append(encodeText(Buffer.from(line.slice(0, cut), 'latin1')), Buffer.from(line.slice(cut + 1), 'base64'));
    }
    crawldb.close();
    log.info('crawldb written', { ...usage() });
    const documents = await writeSegment(state, join(temp, 'segments', segment), { name: segment, time: now }, docs, links, layout);
    log.info('segment written', { segment, documents, ...usage() });
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

/** ARC files by name, a few kept open. */
class ArcFiles {
  private readonly open = new Map<string, ArcReader>();

  constructor(private readonly dir: string) {}

  /** The HTTP response of the record the bucket's `a` attribute names; undefined when it has none. */
  response(bucket: Bucket): Buffer | undefined {
    const at = parseArcAttribute(bucket.header.string('a'));
    if (at === undefined) return undefined;
    let reader = this.open.get(at.file);
    if (reader === undefined) {
      if (this.open.size >= ARC_READERS) {
        const [name, oldest] = this.open.entries().next().value as [string, ArcReader];
        oldest.close();
        this.open.delete(name);
      }
      reader = ArcReader.open(join(this.dir, at.file));
      this.open.set(at.file, reader);
    }
    return reader.recordAt(at.offset).content;
  }

  close(): void {
    for (const reader of this.open.values()) reader.close();
    this.open.clear();
  }
}

/** Header lines of an HTTP response head as Nutch Metadata (names as sent, values in order). */
function headerMetadata(head: string): Metadata {
  const byName = new Map<string, string[]>();
  for (const line of head.split(/\r?\n/).slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    const values = byName.get(name);
    if (values === undefined) byName.set(name, [value]);
    else values.push(value);
  }
  return [...byName];
}

function metadataValue(metadata: Metadata, name: string): string | undefined {
  const lower = name.toLowerCase();
  return metadata.find(([n]) => n.toLowerCase() === lower)?.[1][0];
}

const PERMANENT_REDIRECTS = new Set([301, 308]);

/** crawl_fetch status and ProtocolStatus code of a fetch result (gatherer codes as in shepherd/urldb.ts). */
function fetchStatus(r: FetchResult): { status: number; protocol: number } {
  const S = CRAWL_STATUS;
  const P = PROTOCOL_STATUS;
  if (r.code === 0) return { status: S.fetch_success, protocol: P.success };
  if (r.code === 1) {
    const permanent = r.status !== undefined && PERMANENT_REDIRECTS.has(r.status);
    return permanent ? { status: S.fetch_redir_perm, protocol: P.moved } : { status: S.fetch_redir_temp, protocol: P.temp_moved };
  }
  if (r.code === 3 || r.code === 4) return { status: S.fetch_notmodified, protocol: P.notmodified };
  if (r.code === 2304) return { status: S.fetch_gone, protocol: P.robots_denied };
  if (r.code === 2404) return { status: S.fetch_gone, protocol: P.notfound };
  if (r.code === 2410) return { status: S.fetch_gone, protocol: P.gone };
  if (r.code >= 1000 && r.code < 2000) return { status: S.fetch_retry, protocol: P.retry };
  return { status: S.fetch_gone, protocol: P.exception };
}

/** The outlinks of a parsed page: anchors (with their text), frames, redirects; none under nofollow. */
function outlinks(doc: DocumentBody): Link[] {
  if (doc.robots.nofollow) return [];
  const anchors = anchorTexts(doc.text);
  const out: Link[] = [];
  let n = 0;
  for (const link of doc.links) {
    if (link.type === 'I') continue;
    const anchor = link.type === 'R' ? (anchors.get(n++) ?? '') : '';
    out.push({ url: link.url, anchor, metadata: null });
  }
  return out;
}

async function writeSegment(
  state: string,
  dir: string,
  { name: segment, time }: { name: string; time: number },
  docs: ExternalSorter,
  links: ExternalSorter,
  layout: Layout,
): Promise<number> {
  const generateTime = typed.long(BigInt(time));
  const bucketFile = bucketFilePath(state);
  const buckets = existsSync(bucketFile) ? BucketReader.open(bucketFile) : undefined;
  const arcs = new ArcFiles(arcDir(state));
  const generate = sequenceFile(join(dir, 'crawl_generate'), 'none', layout);
  const parse = sequenceFile(join(dir, 'crawl_parse'), 'record', layout);
  const fetch = mapFile(join(dir, 'crawl_fetch'), CRAWL_DATUM.className, 'record', layout);
  const content = mapFile(join(dir, 'content'), CONTENT.className, 'record', layout);
  const parseText = mapFile(join(dir, 'parse_text'), PARSE_TEXT.className, 'record', layout);
  const parseData = mapFile(join(dir, 'parse_data'), PARSE_DATA.className, 'record', layout);
  let documents = 0;
  try {
    for (const line of docs.sorted()) {
      if (buckets === undefined) break;
      const [key, oidText, intervalText, weightText] = line.split(SEP) as [string, string, string, string];
      const url = fromSortKey(key);
      const oid = Number(oidText);
      let bucket: Bucket;
      try {
        bucket = buckets.decode(buckets.read(oid));
      } catch (err) {
        // A copy removed since (a shake) leaves the row's oid dangling: the URL stays in the crawldb.
        if (!isSherlockError(err) || err.code !== 'SHERLOCK_NOT_FOUND') throw err;
        log.warning('copy not found, left out of the segment', { url, oid });
        continue;
      }
      // Oids change when the bucket file is shaken; a bucket of another URL is not this row's copy.
      if (bucket.header.string('U') !== url) {
        log.warning('bucket holds another URL, left out of the segment', { url, oid });
        continue;
      }
      const report = reportOf(oid, bucket);
      if (report.kind !== 'fetch') continue;
      const r = report.result;
      const textKey = encodeText(url);
      const fetchTime = BigInt(r.time) * 1000n;
      const score = Number(weightText);
      const interval = Number(intervalText);
      const signature = r.checksum !== undefined && /^[0-9a-f]{32}$/i.test(r.checksum) ? Buffer.from(r.checksum, 'hex') : null;
      const mime = bucket.header.string('T') ?? '';
      const { status, protocol } = fetchStatus(r);
      const modifiedTime = r.lastModified === undefined ? 0n : BigInt(r.lastModified) * 1000n;
      const datum = (fields: Partial<CrawlDatum>): Buffer =>
        encodeWritable(CRAWL_DATUM, { status, fetchTime, retries: 0, fetchInterval: interval, score, modifiedTime: 0n, signature: null, metadata: null, ...fields });

      generate.append(textKey, datum({ status: CRAWL_STATUS.db_unfetched, metadata: { entries: [[typed.text('_ngt_'), generateTime]] } }));
      const fetchMeta: Array<[Typed, Typed]> = [[typed.text('_ngt_'), generateTime]];
      if (mime !== '') fetchMeta.push([typed.text('Content-Type'), typed.text(mime)]);
      const args = r.redirect === undefined ? null : [r.redirect];
      fetchMeta.push([typed.text('_pst_'), { className: PROTOCOL_STATUS_WRITABLE.className, value: { code: protocol, lastModified: modifiedTime, args } }]);
      if (r.status !== undefined) fetchMeta.push([typed.text('nutch.protocol.code'), typed.text(String(r.status))]);
      fetch.append(textKey, datum({ modifiedTime, signature, metadata: { entries: fetchMeta } }));

      const response = arcs.response(bucket);
      let contentMeta: Metadata = [];
      if (response !== undefined) {
        const payloadAt = httpPayloadOffset(response);
        contentMeta = headerMetadata(response.toString('latin1', 0, payloadAt));
        const coding = metadataValue(contentMeta, 'Content-Encoding');
        const raw = response.subarray(payloadAt);
        let body = raw;
        try {
          body = (await decodeContent(raw, coding, MAX_CONTENT, url)).data;
        } catch (err) {
          // A body that does not decode goes as received: the copy is still the copy.
          if (!isSherlockError(err)) throw err;
          log.warning('content left encoded', { url, reason: err.message });
        }
        contentMeta.push(['_fst_', [String(status)]], ['nutch.segment.name', [segment]]);
        const ip = bucket.header.string('k');
        if (ip !== undefined) contentMeta.push(['_ip_', [ip]]);
        content.append(textKey, encodeWritable(CONTENT, { url, base: url, content: body, contentType: mime, metadata: contentMeta }));
      }
      documents++;
      if (r.code !== 0) continue;

      const doc = parseBody(bucket.body);
      const outs = outlinks(doc);
      parseText.append(textKey, encodeWritable(PARSE_TEXT, { text: plainText(doc.text) }));
      // As Nutch's ParseSegment: the page's metas as parse metadata, the fetch's facts added to the content's.
      const parseMeta: Metadata = doc.metas.filter((m) => m.type === 'meta' || m.type === 'keywords').map((m) => [m.type === 'meta' ? 'description' : 'keywords', [m.text]]);
      const dataMeta: Metadata = [...contentMeta, ['nutch.crawl.score', [String(score)]], ['nutch.fetch.time', [String(fetchTime)]]];
      if (signature !== null) dataMeta.push(['nutch.content.digest', [signature.toString('hex')]]);
      parseData.append(textKey, encodeWritable(PARSE_DATA, { status: { majorCode: 1, minorCode: 0, args: null }, title: doc.title ?? '', outlinks: outs, contentMeta: dataMeta, parseMeta }));
      parse.append(textKey, datum({ status: CRAWL_STATUS.signature, fetchInterval: 0, score: 0, signature }));
      const share = outs.length === 0 ? 0 : score / outs.length;
      for (const link of outs) {
        parse.append(encodeText(link.url), datum({ status: CRAWL_STATUS.linked, fetchInterval: NUTCH_DEFAULT_INTERVAL, score: share }));
        if (link.url === url) continue;
        const anchor = link.anchor.replace(/\0/g, '').slice(0, MAX_ANCHOR);
        links.add([sortKey(link.url), key, sortKey(anchor)].join(SEP));
      }
    }
    for (const writer of [generate, parse, fetch, content, parseText, parseData]) writer.close();
  } finally {
    arcs.close();
    buckets?.close();
  }
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
