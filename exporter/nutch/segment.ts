/**
 * The records of the Nutch export's segment (export.ts), made in
 * worker threads (nutch-segment-worker.ts) so that reading the copies,
 * parsing and deflating use every core while the main thread writes.
 *
 * The main thread reads the documents' lines in URL order (from the URL
 * database), hands them out in batches of BATCH lines, round robin, and takes the answers back in
 * the order it sent them, so the files are the same bytes whatever the
 * number of threads. At most IN_FLIGHT batches a thread are out at a time:
 * memory stays a few MB however large the crawl.
 *
 * A document line is `key NUL oid NUL interval NUL score NUL last fetch NUL
 * status NUL error` (key: the URL's UTF-8 bytes as Latin-1, as the linkdb's
 * sort lines hold it; oid empty for a row whose last fetch failed without a
 * copy, which gets its crawl_generate and crawl_fetch records only, as
 * Nutch's fetcher writes no content for a 404). An answer holds the
 * records of its documents in order, packed in one transferred buffer:
 *
 *   u8 file (SEGMENT_FILES index), i32 key length, key (a serialised Text),
 *   i32 value length, value as the file stores it (RECORD: deflated already)
 *
 * and the number of documents. Errors come back as ThreadErrors (common/errors.ts).
 *
 * The linkdb's lines (`target NUL from NUL anchor`) stay in the thread that
 * made them: each sorts its own into run files under the main thread's sort
 * directory (common/external-sort.ts, a share of the sort budget each) and
 * hands the runs over when the documents are done. The main thread cuts
 * their merge into slices between targets; the same threads then make the
 * linkdb's records a slice at a time (linkdb.ts), packed as the
 * segment's, and the main thread writes them in the slices' order.
 */

import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Bucket } from '../../common/bucket/bucket.js';
import { BucketReader, bucketFilePath } from '../../common/bucket/file.js';
import { httpPayloadOffset } from '../../common/archive/digest.js';
import { parseBody, type DocumentBody } from '../../common/bucket/doc-body.js';
import { plainTextAndAnchors } from '../../common/bucket/doc-text.js';
import { fromThreadError, isSherlockError, type ThreadError } from '../../common/errors.js';
import { ExternalSorter, mergedLines, type MergeSlice } from '../../common/external-sort.js';
import { DataWriter, encodeText, javaFloat } from '../../common/hadoop/io.js';
import { encodeWritable, typed, type Typed } from '../../common/hadoop/writables.js';
import { logger } from '../../common/log.js';
import {
  CONTENT,
  CRAWL_DATUM,
  CRAWL_STATUS,
  NUTCH_DEFAULT_INTERVAL,
  PARSE_DATA,
  PARSE_TEXT,
  PROTOCOL_STATUS,
  PROTOCOL_STATUS_WRITABLE,
  type CrawlDatum,
  type Link,
  type Metadata,
} from '../../common/hadoop/nutch-writables.js';
import { bulkCodec, type Compression } from '../../common/hadoop/sequence-file.js';
import { everyCore } from '../../common/threads.js';
import { decodeContent } from '../../common/archive/content-decoding.js';
import { arcDir, archiveFile, parseArcAttribute } from '../../common/archive/arc-place.js';
import { openArchive, type ArchiveReader } from '../../common/archive/archive-read.js';
import { reportOf } from '../../shepherd/results.js';
import { LINK_SEP, linkHost, linkRecords } from './linkdb.js';
import { PERMANENT_REDIRECTS, representativeUrl } from './redirect.js';

const log = logger('export');

/** The segment's files in the order of the packed records' file byte, with Nutch's compression. */
export const SEGMENT_FILES = [
  { name: 'crawl_generate', map: false, compression: 'none', valueClass: CRAWL_DATUM.className },
  { name: 'crawl_fetch', map: true, compression: 'record', valueClass: CRAWL_DATUM.className },
  { name: 'content', map: true, compression: 'record', valueClass: CONTENT.className },
  { name: 'parse_text', map: true, compression: 'record', valueClass: PARSE_TEXT.className },
  { name: 'parse_data', map: true, compression: 'record', valueClass: PARSE_DATA.className },
  { name: 'crawl_parse', map: false, compression: 'record', valueClass: CRAWL_DATUM.className },
] as const satisfies ReadonlyArray<{ name: string; map: boolean; compression: Compression; valueClass: string }>;
const [GENERATE, FETCH, CONTENT_FILE, PARSE_TEXT_FILE, PARSE_DATA_FILE, PARSE] = [0, 1, 2, 3, 4, 5];

/** Nutch's db.max.anchor.length. */
const MAX_ANCHOR = 100;
/** Open ARC files kept for the random reads of the segment pass. */
const ARC_READERS = 16;
/** Bytes read at a time from an ARC file: documents come in URL order, so each record is a random read of a few KiB. */
const ARC_READ_SIZE = 16 * 1024;
const MAX_CONTENT = 512 * 1024 * 1024;
export const SEP = '\0';
/**
 * Worker threads by default: one a core, at most 4. The main thread only
 * reads the URL database and writes (a third of the CPU), so on 2 cores two
 * threads beside it finish a 1M-URL export ~20% sooner than one (CPU-bound:
 * the OS shares the cores), at 244 MiB peak RSS against 193 (docs/nutch.md).
 */
const DEFAULT_THREADS = everyCore(4);
/**
 * Bytes read at a time from each run merging a linkdb slice: a slice's
 * range of a run is a few tens of KB, and every run's chunk lives at once
 * (64 KiB ones outgrew the small young generation and raised peak RSS).
 */
const SLICE_READ = 16 * 1024;
/** Documents a batch; batches out per thread. */
const BATCH = 64;
const IN_FLIGHT = 2;

const ASCII = /^[\x00-\x7f]*$/;

/** A URL as a sort key: its UTF-8 bytes one character each, so string order is Text order (ASCII is itself). */
export function sortKey(url: string): string {
  return ASCII.test(url) ? url : Buffer.from(url, 'utf8').toString('latin1');
}

function fromSortKey(key: string): string {
  return ASCII.test(key) ? key : Buffer.from(key, 'latin1').toString('utf8');
}

/** What a worker needs besides its lines. */
export interface SegmentJob {
  state: string;
  /** The segment's name, as content metadata. */
  segment: string;
  /** Generate time, ms. */
  time: number;
  /** Where the links' sort runs go (the main sorter's runDirectory()). */
  linkRuns: string;
  /** Bytes of link lines held before a run is spilled, shared out between the threads. */
  sortMemory: number;
  /** Keep links within a host in the linkdb (Nutch's linkdb.ignore.internal.links false); by default they are left out, as Nutch does. */
  internalLinks: boolean;
}

export interface SegmentBatch {
  records: Uint8Array;
  /** Documents of a batch of lines, targets of a linkdb slice. */
  count: number;
  /** A batch of lines: each line's Content-Type as crawl_fetch has it ('' for none), for the crawldb. */
  types?: string[];
}

/** Document lines; `runs` once the lines are all sent (the thread closes its files); linkdb slices. */
export type SegmentOrder = { lines: string[] } | { runs: true } | { slice: MergeSlice };
/** Orders, answered in the order they come, each with a written batch's buffer to reuse if there is one; `close` ends the thread. */
export type SegmentRequest = (SegmentOrder & { seq: number; spare?: ArrayBuffer }) | { close: true };
/** A batch's records (lines, slice), the thread's sorted link runs, or the order's error. */
export type SegmentReply =
  | { seq: number; batch: SegmentBatch }
  | { seq: number; runs: string[] }
  | { seq: number; error: ThreadError };

/** ARC files by name, a few kept open. */
class ArcFiles {
  private readonly open = new Map<string, ArchiveReader>();

  constructor(private readonly dir: string) {}

  /**
   * The HTTP response of the record the bucket's `a` attribute names;
   * undefined when it has none. The inflater's bytes, not a copy: valid
   * until the next call (a document's content is written before the next
   * document is read).
   */
  response(bucket: Bucket): Buffer | undefined {
    const at = parseArcAttribute(bucket.header.string('a'));
    if (at === undefined) return undefined;
    let reader = this.open.get(at.file);
    if (reader === undefined) {
      if (this.open.size >= ARC_READERS) {
        const [name, oldest] = this.open.entries().next().value as [string, ArchiveReader];
        oldest.close();
        this.open.delete(name);
      }
      // An imported archive's record (a WARC's too) is read where it lies.
      reader = openArchive(archiveFile(this.dir, at.file), { readSize: ARC_READ_SIZE, reuseReads: true, borrowContent: true });
      this.open.set(at.file, reader);
    }
    const record = reader.recordAt(at.offset);
    return 'content' in record ? record.content : record.block;
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

/**
 * The Content-Type Nutch's fetcher puts in crawl_fetch (and updatedb in the
 * crawldb): the MIME type without parameters — ours (the bucket's `T`), else
 * the response's, else application/octet-stream, what Nutch's detection
 * calls an empty redirect body without one.
 */
function contentType(named: string, header: Metadata): string {
  if (named !== '') return named;
  const sent = metadataValue(header, 'Content-Type')?.split(';')[0]!.trim().toLowerCase();
  return sent !== undefined && /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(sent) ? sent : 'application/octet-stream';
}

/** crawl_fetch status and ProtocolStatus code of a fetch's gatherer code and HTTP status (codes as in shepherd/urldb.ts). */
function fetchStatus(code: number, httpStatus: number | undefined): { status: number; protocol: number } {
  const S = CRAWL_STATUS;
  const P = PROTOCOL_STATUS;
  if (code === 0) return { status: S.fetch_success, protocol: P.success };
  if (code === 1) {
    const permanent = httpStatus !== undefined && PERMANENT_REDIRECTS.has(httpStatus);
    return permanent ? { status: S.fetch_redir_perm, protocol: P.moved } : { status: S.fetch_redir_temp, protocol: P.temp_moved };
  }
  if (code === 3 || code === 4) return { status: S.fetch_notmodified, protocol: P.notmodified };
  if (code === 2304) return { status: S.fetch_gone, protocol: P.robots_denied };
  if (code === 2404) return { status: S.fetch_gone, protocol: P.notfound };
  if (code === 2410) return { status: S.fetch_gone, protocol: P.gone };
  if (code >= 1000 && code < 2000) return { status: S.fetch_retry, protocol: P.retry };
  return { status: S.fetch_gone, protocol: P.exception };
}

/** The outlinks of a parsed page: anchors (with their text), frames, redirects; none under nofollow. */
function outlinks(doc: DocumentBody, anchors: Map<number, string>): Link[] {
  if (doc.robots.nofollow) return [];
  const out: Link[] = [];
  let n = 0;
  for (const link of doc.links) {
    if (link.type === 'I') continue;
    const anchor = link.type === 'R' ? (anchors.get(n++) ?? '') : '';
    out.push({ url: link.url, anchor, metadata: null });
  }
  return out;
}

/**
 * A page's parse text as Nutch's HTML parser makes it: DOMContentUtils
 * takes the text of the whole document, <head> too, so the title's text
 * (whitespace collapsed) comes first, then the body's. Recent Nutch breaks
 * lines between blocks (`parser.html.line.separators`), as our text does,
 * and after the title (the Nutch 1.21 segment of the test data); older ones
 * joined everything with spaces.
 */
function parseText(title: string | undefined, text: string): string {
  if (title === undefined || title === '') return text;
  return text === '' ? title : `${title}\n${text}`;
}

/** Turns document lines into packed records (one per worker thread). */
export class SegmentDocuments {
  private readonly buckets: BucketReader | undefined;
  private readonly arcs: ArcFiles;
  /** Generate time, ms. */
  private readonly time: bigint;
  private readonly codec = bulkCodec();
  private readonly out = new DataWriter(1024 * 1024);
  private readonly spares: ArrayBuffer[] = [];
  private readonly links: ExternalSorter;
  private documents = 0;

  constructor(private readonly job: SegmentJob) {
    const bucketFile = bucketFilePath(job.state);
    this.buckets = existsSync(bucketFile) ? BucketReader.open(bucketFile) : undefined;
    this.arcs = new ArcFiles(arcDir(job.state));
    this.time = BigInt(job.time);
    this.links = new ExternalSorter({ memoryBudget: job.sortMemory, tmpDir: job.linkRuns });
  }

  /** The records of a batch of lines. */
  async batch(lines: string[]): Promise<SegmentBatch> {
    const types: string[] = [];
    for (const line of lines) types.push(await this.document(line));
    return { ...this.take(this.documents), types };
  }

  /** The linkdb's records (file byte 0, values deflated) of one slice of the links' merge; `count` is the targets. */
  linkSlice(slice: MergeSlice): SegmentBatch {
    const targets = linkRecords(mergedLines(slice.runs, SLICE_READ), (target, inlinks) => this.recordStoredText(0, target, this.codec.compress(inlinks), true));
    return this.take(targets);
  }

  /** A batch's buffer back from the main thread, written: the next batch goes in it if it fits. */
  give(spare: ArrayBuffer): void {
    this.spares.push(spare);
  }

  private take(count: number): SegmentBatch {
    const n = this.out.length;
    const spare = this.spares.pop();
    // A spare too small is dropped (this thread's garbage); a new buffer has room for a larger batch next time.
    const records = new Uint8Array(spare !== undefined && spare.byteLength >= n ? spare : new ArrayBuffer(Math.ceil(n * 1.25)), 0, n);
    records.set(this.out.view());
    this.out.reset();
    this.documents = 0;
    return { records, count };
  }

  private record(file: number, key: Uint8Array, value: Uint8Array): void {
    this.recordStored(file, key, this.stored(file, value));
  }

  /** A value as `file` stores it. */
  private stored(file: number, value: Uint8Array): Uint8Array {
    return SEGMENT_FILES[file]!.compression === 'record' ? this.codec.compress(value) : value;
  }

  private recordStored(file: number, key: Uint8Array, stored: Uint8Array): void {
    this.out.u8(file);
    this.out.i32(key.length);
    this.out.bytes(key);
    this.out.i32(stored.length);
    this.out.bytes(stored);
  }

  /**
   * A record keyed by the Text of `text` (with `bytes`, of a byte string:
   * UTF-8 bytes one character each), serialised straight into the batch: a
   * key Buffer a page's outlink or a linkdb target was much of the garbage.
   */
  private recordStoredText(file: number, text: string, stored: Uint8Array, bytes = false): void {
    this.out.u8(file);
    const at = this.out.length;
    this.out.i32(0);
    if (bytes) this.out.textLatin1(text);
    else this.out.text(text);
    this.out.view().writeInt32BE(this.out.length - at - 4, at);
    this.out.i32(stored.length);
    this.out.bytes(stored);
  }

  /** Writes one line's records; returns the Content-Type its crawl_fetch record has, '' for none. */
  private async document(line: string): Promise<string> {
    const buckets = this.buckets;
    if (buckets === undefined) return '';
    const [key, oidText, intervalText, scoreText, lastFetchText, statusText, errorText] = line.split(SEP) as [string, string, string, string, string, string, string];
    const url = fromSortKey(key);
    if (oidText === '') {
      this.failedFetch(url, Number(lastFetchText), statusText === '' ? undefined : Number(statusText), Number(errorText), Number(intervalText), Number(scoreText));
      return '';
    }
    const oid = Number(oidText);
    let bucket: Bucket;
    try {
      bucket = buckets.decode(buckets.read(oid));
    } catch (err) {
      // A copy removed since (a shake) leaves the row's oid dangling: the URL stays in the crawldb.
      if (!isSherlockError(err) || err.code !== 'SHERLOCK_NOT_FOUND') throw err;
      log.warning('copy not found, left out of the segment', { url, oid });
      return '';
    }
    // Oids change when the bucket file is shaken; a bucket of another URL is not this row's copy.
    if (bucket.header.string('U') !== url) {
      log.warning('bucket holds another URL, left out of the segment', { url, oid });
      return '';
    }
    const doc = parseBody(bucket.body);
    const report = reportOf(oid, bucket, doc);
    if (report.kind !== 'fetch') return '';
    const r = report.result;
    const textKey = encodeText(url);
    const fetchTime = BigInt(r.time) * 1000n;
    const score = Number(scoreText);
    const interval = Number(intervalText);
    const signature = r.checksum !== undefined && /^[0-9a-f]{32}$/i.test(r.checksum) ? Buffer.from(r.checksum, 'hex') : null;
    const { status, protocol } = fetchStatus(r.code, r.status);
    const modifiedTime = r.lastModified === undefined ? 0n : BigInt(r.lastModified) * 1000n;
    const datum = (fields: Partial<CrawlDatum>): Buffer =>
      encodeWritable(CRAWL_DATUM, { status, fetchTime, retries: 0, fetchInterval: interval, score, modifiedTime: 0n, signature: null, metadata: null, ...fields });

    const response = this.arcs.response(bucket);
    const payloadAt = response === undefined ? 0 : httpPayloadOffset(response);
    let contentMeta: Metadata = response === undefined ? [] : headerMetadata(response.toString('latin1', 0, payloadAt));
    const mime = contentType(bucket.header.string('T') ?? '', contentMeta);
    const fetchMeta = this.generated(textKey, datum, fetchTime);
    fetchMeta.push([typed.text('Content-Type'), typed.text(mime)]);
    const args = r.redirect === undefined ? null : [r.redirect];
    fetchMeta.push([typed.text('_pst_'), { className: PROTOCOL_STATUS_WRITABLE.className, value: { code: protocol, lastModified: modifiedTime, args } }]);
    if (r.status !== undefined) fetchMeta.push([typed.text('nutch.protocol.code'), typed.text(String(r.status))]);
    this.record(FETCH, textKey, datum({ modifiedTime, signature, metadata: { entries: fetchMeta } }));

    if (response !== undefined) {
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
      // As Nutch's fetcher: the segment's name, the score (the scoring filter's passScoreBeforeParsing), the fetch status.
      contentMeta.push(['_fst_', [String(status)]], ['nutch.segment.name', [this.job.segment]], ['nutch.crawl.score', [javaFloat(Math.fround(score))]]);
      const ip = bucket.header.string('k');
      if (ip !== undefined) contentMeta.push(['_ip_', [ip]]);
      this.record(CONTENT_FILE, textKey, encodeWritable(CONTENT, { url, base: url, content: body, contentType: mime, metadata: contentMeta }));
    } else {
      contentMeta = [['nutch.crawl.score', [javaFloat(Math.fround(score))]]];
    }
    this.documents++;
    if (r.code === 1 && r.redirect !== undefined && r.redirect !== url) this.redirectTarget(url, r.redirect, status === CRAWL_STATUS.fetch_redir_temp, fetchMeta, datum);
    if (r.code !== 0) return mime;

    const { text, anchors } = plainTextAndAnchors(doc.text);
    const outs = outlinks(doc, anchors);
    this.record(PARSE_TEXT_FILE, textKey, encodeWritable(PARSE_TEXT, { text: parseText(doc.title, text) }));
    // As Nutch's ParseSegment: the page's metas as parse metadata, the fetch's facts added to the content's.
    const parseMeta: Metadata = doc.metas.filter((m) => m.type === 'meta' || m.type === 'keywords').map((m) => [m.type === 'meta' ? 'description' : 'keywords', [m.text]]);
    const dataMeta: Metadata = [...contentMeta, ['nutch.fetch.time', [String(fetchTime)]]];
    if (signature !== null) dataMeta.push(['nutch.content.digest', [signature.toString('hex')]]);
    this.record(PARSE_DATA_FILE, textKey, encodeWritable(PARSE_DATA, { status: { majorCode: 1, minorCode: 0, args: null }, title: doc.title ?? '', outlinks: outs, contentMeta: dataMeta, parseMeta }));
    this.record(PARSE, textKey, datum({ status: CRAWL_STATUS.signature, fetchInterval: 0, score: 0, signature }));
    const share = outs.length === 0 ? 0 : score / outs.length;
    // Every outlink's datum is the same bytes: made once a page.
    const linked = this.stored(PARSE, datum({ status: CRAWL_STATUS.linked, fetchInterval: NUTCH_DEFAULT_INTERVAL, score: share }));
    const fromHost = this.job.internalLinks ? undefined : linkHost(url);
    for (const link of outs) {
      this.recordStoredText(PARSE, link.url, linked);
      if (!this.job.internalLinks) {
        const toHost = linkHost(link.url);
        if (toHost === undefined || toHost === fromHost) continue;
      }
      const anchor = link.anchor.replace(/\0/g, '').slice(0, MAX_ANCHOR);
      this.links.add(sortKey(link.url) + LINK_SEP + key + LINK_SEP + sortKey(anchor));
    }
    return mime;
  }

  /**
   * The `linked` datum Nutch's fetcher writes for a redirect's target when
   * it does not follow it at once (http.redirect.max 0, the default): the
   * source's metadata and interval, `_repr_` the representative URL
   * (redirect.ts), score 0 (OPIC's initialScore). Nutch writes it into
   * crawl_fetch; ours goes into crawl_parse, which updatedb reads alike:
   * crawl_fetch is a MapFile written in URL order as the documents come,
   * and the target sorts elsewhere (docs/nutch.md).
   */
  private redirectTarget(url: string, target: string, temporary: boolean, fetchMeta: Array<[Typed, Typed]>, datum: (fields: Partial<CrawlDatum>) => Buffer): void {
    const metadata: Array<[Typed, Typed]> = [...fetchMeta, [typed.text('_repr_'), typed.text(representativeUrl(url, target, temporary))]];
    this.record(PARSE, encodeText(target), datum({ status: CRAWL_STATUS.linked, score: 0, metadata: { entries: metadata } }));
  }

  /**
   * Writes the crawl_generate record; returns the crawl_fetch metadata's
   * start. `_ngt_`, the generate time, is the export's time but never after
   * the fetch: Nutch generates, then fetches, and our one segment holds
   * fetches of many days (so each record has its own).
   */
  private generated(textKey: Buffer, datum: (fields: Partial<CrawlDatum>) => Buffer, fetchTime: bigint): Array<[Typed, Typed]> {
    const ngt: [Typed, Typed] = [typed.text('_ngt_'), typed.long(fetchTime < this.time ? fetchTime : this.time)];
    this.record(GENERATE, textKey, datum({ status: CRAWL_STATUS.db_unfetched, metadata: { entries: [ngt] } }));
    return [ngt];
  }

  /**
   * The crawl_generate and crawl_fetch records of a fetch that failed
   * without a copy (time: Unix seconds): what Nutch's fetcher writes for a
   * 404, a 410, a URL robots.txt forbids or a failed connection — no content.
   */
  private failedFetch(url: string, time: number, httpStatus: number | undefined, code: number, interval: number, score: number): void {
    const textKey = encodeText(url);
    const fetchTime = BigInt(time) * 1000n;
    const { status, protocol } = fetchStatus(code, httpStatus);
    const datum = (fields: Partial<CrawlDatum>): Buffer =>
      encodeWritable(CRAWL_DATUM, { status, fetchTime, retries: 0, fetchInterval: interval, score, modifiedTime: 0n, signature: null, metadata: null, ...fields });
    const fetchMeta = this.generated(textKey, datum, fetchTime);
    fetchMeta.push([typed.text('_pst_'), { className: PROTOCOL_STATUS_WRITABLE.className, value: { code: protocol, lastModified: 0n, args: null } }]);
    if (httpStatus !== undefined) fetchMeta.push([typed.text('nutch.protocol.code'), typed.text(String(httpStatus))]);
    this.record(FETCH, textKey, datum({ metadata: { entries: fetchMeta } }));
  }

  /** Closes the files; returns the sorted runs of the links (the caller's to cut into slices and remove). */
  close(): string[] {
    this.arcs.close();
    this.buckets?.close();
    return this.links.takeRuns();
  }
}

/** Calls `record` for each packed record of a batch, in order (file, key, stored value). */
export function unpackRecords(records: Uint8Array, record: (file: number, key: Buffer, stored: Buffer) => void): void {
  const buf = Buffer.from(records.buffer, records.byteOffset, records.byteLength);
  let at = 0;
  while (at < buf.length) {
    const file = buf[at]!;
    const keyLength = buf.readInt32BE(at + 1);
    const key = buf.subarray(at + 5, at + 5 + keyLength);
    at += 5 + keyLength;
    const valueLength = buf.readInt32BE(at);
    record(file, key, buf.subarray(at + 4, at + 4 + valueLength));
    at += 4 + valueLength;
  }
}

/**
 * Document lines in, made into records by worker threads, handed to `write`
 * in the order of the lines: add() each line (awaiting what it returns, when
 * it returns something: the oldest batch out, so that few are), then
 * finish(), which gives the threads' sorted link runs; then linkdb() has the
 * same threads make the linkdb's records, a slice of the runs' merge at a
 * time, handed over in the slices' order; close() ends the threads.
 */
export class SegmentPool {
  private readonly workers: Worker[];
  private readonly waiting = new Map<number, { resolve: (reply: SegmentReply) => void; reject: (err: Error) => void }>();
  private readonly queue: Array<{ answer: Promise<SegmentReply>; write: (batch: SegmentBatch) => void }> = [];
  /**
   * Written batches' buffers, handed back to the threads with the next
   * orders: a new buffer a batch, dead once written, piled up here between
   * this thread's collections (900 MB go through at 1M URLs; peak RSS).
   */
  private readonly spares: ArrayBuffer[] = [];
  private failure: Error | undefined;
  private seq = 0;
  private sent = 0;
  private lines: string[] = [];

  constructor(
    job: SegmentJob,
    private readonly write: (batch: SegmentBatch) => void,
    private readonly threads = DEFAULT_THREADS,
  ) {
    if (!Number.isSafeInteger(threads) || threads < 1) throw new RangeError(`threads: ${threads}`);
    const workerData: SegmentJob = { ...job, sortMemory: Math.max(1, Math.floor(job.sortMemory / threads)) };
    // A small young generation: a worker's garbage is per document.
    this.workers = Array.from({ length: threads }, () => new Worker(new URL('./segment-worker.js', import.meta.url), { workerData, resourceLimits: { maxYoungGenerationSizeMb: 8 } }));
    for (const worker of this.workers) {
      worker.on('message', (reply: SegmentReply) => {
        const waiter = this.waiting.get(reply.seq);
        this.waiting.delete(reply.seq);
        if ('error' in reply) waiter?.reject(fromThreadError(reply.error));
        else waiter?.resolve(reply);
      });
      worker.on('error', (err) => this.fail(err));
      worker.on('exit', (code) => this.fail(new Error(`a segment worker stopped (exit code ${code})`)));
    }
  }

  add(line: string): Promise<void> | undefined {
    this.lines.push(line);
    if (this.lines.length < BATCH) return undefined;
    return this.send({ lines: this.lines.splice(0) }, this.write);
  }

  /** Writes what is left, then has the threads close their files; returns their link runs. */
  async finish(): Promise<string[]> {
    // Awaited: two writeOldest() at once could write their batches out of order.
    if (this.lines.length > 0) await this.send({ lines: this.lines.splice(0) }, this.write);
    while (this.queue.length > 0) await this.writeOldest();
    const replies = await Promise.all(this.workers.map((worker) => this.ask(worker, { runs: true })));
    return replies.flatMap((reply) => ('runs' in reply ? reply.runs : []));
  }

  /** The linkdb's records of `slices` (packed as a batch's, file byte 0), handed to `write` in the slices' order. */
  async linkdb(slices: Iterable<MergeSlice>, write: (batch: SegmentBatch) => void): Promise<void> {
    for (const slice of slices) {
      const wait = this.send({ slice }, write);
      if (wait !== undefined) await wait;
    }
    while (this.queue.length > 0) await this.writeOldest();
  }

  /** Ends the threads. */
  async close(): Promise<void> {
    await Promise.all(
      this.workers.map((worker) => {
        worker.removeAllListeners('exit');
        const ended = once(worker, 'exit');
        worker.postMessage({ close: true } satisfies SegmentRequest);
        return ended;
      }),
    );
  }

  /** Ends the threads after a failure. */
  async abort(): Promise<void> {
    for (const worker of this.workers) {
      worker.removeAllListeners('exit');
      await worker.terminate();
    }
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const { reject } of this.waiting.values()) reject(err);
    this.waiting.clear();
  }

  private ask(worker: Worker, order: SegmentOrder): Promise<SegmentReply> {
    if (this.failure !== undefined) throw this.failure;
    const seq = this.seq++;
    const answer = new Promise<SegmentReply>((resolve, reject) => this.waiting.set(seq, { resolve, reject }));
    // Rejections are taken in order; one left in the queue when an earlier one throws must not be "unhandled".
    answer.catch(() => undefined);
    const spare = this.spares.pop();
    worker.postMessage({ seq, ...order, spare } satisfies SegmentRequest, spare === undefined ? [] : [spare]);
    return answer;
  }

  /** Sends a batch's order round robin; returns the wait for the oldest batch when as many are out as may be. */
  private send(order: SegmentOrder, write: (batch: SegmentBatch) => void): Promise<void> | undefined {
    this.queue.push({ answer: this.ask(this.workers[this.sent++ % this.threads]!, order), write });
    return this.queue.length >= this.threads * IN_FLIGHT ? this.writeOldest() : undefined;
  }

  private async writeOldest(): Promise<void> {
    const { answer, write } = this.queue.shift()!;
    const reply = await answer;
    if (!('batch' in reply)) return;
    write(reply.batch);
    if (this.spares.length < this.threads * IN_FLIGHT) this.spares.push(reply.batch.records.buffer as ArrayBuffer);
  }
}
