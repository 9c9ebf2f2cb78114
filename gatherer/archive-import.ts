/**
 * `sherlock import archive`: the captures of ARC and WARC files written by
 * other tools (Heritrix, wget, Webrecorder, …) stored as if the gatherer had
 * fetched them at their capture dates. Each capture (common/archive/capture.ts)
 * is parsed and made a bucket exactly as a fetch is (parse-worker.ts
 * parseForBucket, document.ts responseBucket, store.ts storedForm), with `a`
 * naming the archive file by its absolute path and the record's offset and
 * length: the payload stays where it is. The shepherd then takes the buckets
 * in as fetch results (a URL it does not know is added as fetched), and the
 * indexer indexes them; nothing else is written.
 *
 * Single writer: the bucket file is the gatherer's, so the import appends
 * through the bucket file's own lock and refuses (SHERLOCK_LOCKED) while the
 * gatherer runs (docs/decisions.md, "Importing archives").
 *
 * Exactly once. A capture's key is its `a`, `D` and `U` attributes (an
 * original and its revisits share `a`, not the date). The keys of every
 * imported bucket are read first; a capture whose key is there is known and
 * skipped. Buckets are appended whole or not at all (file.ts), so after
 * kill -9 a re-run with the same files imports what is missing and nothing
 * twice; the bucket file is synced at the end and every SYNC_EVERY records.
 *
 * Revisits (identical payload) are resolved after every file is read, to the
 * response with the same WARC-Payload-Digest among the files given, wherever
 * it lies, or else among the captures imported before (their bucket's `P`);
 * the bucket names that response's record. A revisit whose original is in
 * neither is reported and skipped. Damaged records are reported
 * with file and offset (the readers' lenient mode) and skipped.
 */

import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { openArchive, type ArchiveReader } from '../common/archive/archive-read.js';
import { arcAttribute, archiveName, isOutsideArchive, outsideArchiveField, parseArcAttribute, type ArcPlace } from '../common/archive/arc-place.js';
import { captureOfArc, captureOfWarc, type Capture } from '../common/archive/capture.js';
import { md5Hex } from '../common/archive/digest.js';
import { decodeBucketHeader } from '../common/bucket/bucket.js';
import { BUCKET_HEADER_SIZE, BucketWriter, bucketFilePath } from '../common/bucket/file.js';
import { ioError, isSherlockError, SherlockError } from '../common/errors.js';
import { canonicalOrNone } from '../common/url.js';
import { bodyCap, type TypeLimit } from './content-type.js';
import { headerValue, responseBucket } from './document.js';
import type { FetchResponse } from './fetch.js';
import { httpResult } from './outcome.js';
import { ParsePool, type DocumentLimits } from './parse-pool.js';
import { storedForm } from './store.js';

/** Records between two syncs of the bucket file: what a power loss may make a re-run import again. */
const SYNC_EVERY = 1000;
/** Captures being parsed at once: enough to keep the pool's threads busy, few enough to bound memory (each holds its payload). */
const IN_FLIGHT = 64;

export interface ImportOptions {
  /** gatherer.max_body_size: a longer payload is cut there and parsed, as a fetch's would be (too_large). */
  maxBodySize: number;
  /** gatherer.type_limits: a 2xx payload's own cap by its type (a cap of 0 does not apply: the record is archived already). */
  typeLimits: readonly TypeLimit[];
  /** gatherer.max_decoded_size. */
  maxDecodedSize: number;
  /** Threads parsing bodies (gatherer.parse_workers, parse-pool.ts); 0 parses on the calling thread. */
  parseWorkers?: number;
  /** The caps on a PDF's parse (gatherer.document_parse_time, document_parse_memory). */
  documentLimits: DocumentLimits;
  /** Each damaged record, unresolved revisit or unreadable file, as it is found. */
  onProblem?: (problem: ImportProblem) => void;
}

export interface ImportProblem {
  file: string;
  offset?: number;
  message: string;
}

export interface ImportReport {
  files: number;
  /** Records read (captures or not). */
  records: number;
  /** Buckets appended. */
  imported: number;
  /** Captures imported before (same record, URL and date). */
  known: number;
  /** Records that are not captures (warcinfo, request, metadata, DNS, …) or whose URL has no canonical form. */
  skipped: number;
  /** Revisits imported with their original's payload. */
  revisits: number;
  problems: ImportProblem[];
}

/** A revisit waiting for its original: its capture without payload and where it lies. */
interface Revisit {
  capture: Capture;
  place: ArcPlace;
  path: string;
}

export async function importArchives(state: string, files: readonly string[], options: ImportOptions): Promise<ImportReport> {
  const report: ImportReport = { files: 0, records: 0, imported: 0, known: 0, skipped: 0, revisits: 0, problems: [] };
  const problem = (p: ImportProblem): void => {
    report.problems.push(p);
    options.onProblem?.(p);
  };
  // A file named twice (or by two names) is read once.
  const paths = [
    ...new Set(
      files.map((file) => {
        try {
          return realpathSync(file);
        } catch (err) {
          throw ioError(err, file, 'opening');
        }
      }),
    ),
  ];
  const buckets = BucketWriter.open(bucketFilePath(state));
  const pool = new ParsePool(options.parseWorkers ?? 0, options.documentLimits);
  // Buckets being made (parsed in the pool's threads), appended in the order of their captures.
  const making: Promise<{ type: number; data: Buffer }>[] = [];
  try {
    const known = importedKeys(buckets);
    const revisits: Revisit[] = [];
    let unsynced = 0;
    const append = (stored: { type: number; data: Buffer }): void => {
      buckets.append(stored.type, stored.data);
      report.imported += 1;
      if (++unsynced >= SYNC_EVERY) {
        buckets.sync();
        unsynced = 0;
      }
    };
    const drain = async (keep: number): Promise<void> => {
      while (making.length > keep) append(await making.shift()!);
    };
    /** Queues the capture's bucket; false when it is not imported (no canonical URL, or known). */
    const store = async (capture: Capture, place: ArcPlace): Promise<boolean> => {
      const url = canonicalOrNone(capture.url);
      if (url === undefined) {
        report.skipped += 1;
        return false;
      }
      const a = arcAttribute(place);
      const key = captureKey(a, capture.time, url);
      if (known.has(key)) {
        report.known += 1;
        return false;
      }
      // Records of one file have offsets of their own; only revisits share theirs (the original's).
      if (capture.revisit !== undefined) known.add(key);
      const made = captureBucket(capture, url, options, pool).then(({ header, body }) => {
        header.add('a', a);
        if (capture.digest !== undefined) header.add('P', capture.digest);
        return storedForm(header, body);
      });
      // Awaited in turn by drain(); a failure before then must not count as unhandled.
      made.catch(() => undefined);
      making.push(made);
      await drain(IN_FLIGHT);
      return true;
    };

    for (const path of paths) {
      report.files += 1;
      const field = outsideArchiveField(path);
      let reader: ArchiveReader;
      try {
        reader = openArchive(path, { onProblem: (err) => problem(problemOf(err, path)) });
      } catch (err) {
        if (!isSherlockError(err)) throw err;
        problem(problemOf(err, path));
        continue;
      }
      try {
        const fileDate = 'versionDate' in reader ? reader.versionDate() : undefined;
        for (const record of reader.records()) {
          report.records += 1;
          const place = { file: field, offset: record.offset, length: record.length };
          // Cut short: the reader has reported it; a part of a page is not the page.
          if (record.truncated) continue;
          const capture = 'content' in record ? captureOfArc(record, fileDate) : captureOfWarc(record);
          if (capture === undefined) report.skipped += 1;
          else if (capture.revisit === 'identical') revisits.push({ capture, place, path });
          else await store(capture, place);
        }
      } finally {
        reader.close();
      }
    }

    // Every capture read is in the bucket file now, with its payload digest (`P`): the originals are found there.
    await drain(0);
    const wanted = new Set(revisits.flatMap(({ capture }) => (capture.digest === undefined ? [] : [capture.digest])));
    const originals = wanted.size === 0 ? new Map<string, string>() : importedPayloads(buckets, wanted);
    const readers = new Map<string, ArchiveReader>();
    try {
      for (const { capture, place, path } of revisits) {
        const original = capture.digest === undefined ? undefined : parseArcAttribute(originals.get(capture.digest));
        if (original === undefined) {
          problem({ file: path, offset: place.offset, message: `revisit of ${capture.digest ?? 'a record without digest'}: no response with that payload digest among the files imported, now or before` });
          continue;
        }
        let payload: Capture;
        try {
          payload = originalPayload(readers, original);
        } catch (err) {
          if (!isSherlockError(err)) throw err;
          problem({ file: path, offset: place.offset, message: `revisit of ${capture.digest!}: its original is unreadable (${err.message})` });
          continue;
        }
        const whole = { ...capture, body: payload.body, ...(capture.headers.length === 0 ? { headers: payload.headers, status: payload.status, statusText: payload.statusText } : {}) };
        if (await store(whole, original)) report.revisits += 1;
      }
    } finally {
      for (const reader of readers.values()) reader.close();
    }
    await drain(0);
    buckets.sync();
  } finally {
    await Promise.allSettled(making);
    await pool.close();
    buckets.close();
  }
  return report;
}

/** A capture's key, hashed: 16 bytes (a latin1 string) rather than the 100 or so of its parts, for each capture of a file imported again. */
function captureKey(a: string, time: number, url: string): string {
  return createHash('md5').update(`${a}\n${time}\n${url}`).digest().toString('latin1');
}

/** The headers of the buckets stored, each decodable one (one the indexer and shepherd skip holds no capture to count). */
function* storedHeaders(buckets: BucketWriter): Generator<ReturnType<typeof decodeBucketHeader>> {
  for (const stored of buckets.buckets()) {
    try {
      yield decodeBucketHeader(stored.type, stored.data, { file: buckets.path, offset: stored.offset + BUCKET_HEADER_SIZE });
    } catch (err) {
      if (!isSherlockError(err)) throw err;
    }
  }
}

/** The keys of the captures imported before (buckets whose `a` names an archive outside the crawl): what a re-run must not import again. */
function importedKeys(buckets: BucketWriter): Set<string> {
  const keys = new Set<string>();
  for (const header of storedHeaders(buckets)) {
    const a = header.string('a');
    const place = parseArcAttribute(a);
    if (place === undefined || !isOutsideArchive(place.file)) continue;
    keys.add(captureKey(a!, Number(header.string('D')), header.string('U') ?? ''));
  }
  return keys;
}

/** The `a` of imported buckets whose payload digest (`P`) is wanted: the originals of revisits, imported by this run or an earlier one. */
function importedPayloads(buckets: BucketWriter, wanted: ReadonlySet<string>): Map<string, string> {
  const found = new Map<string, string>();
  for (const header of storedHeaders(buckets)) {
    const digest = header.string('P');
    const a = header.string('a');
    if (digest !== undefined && a !== undefined && wanted.has(digest)) found.set(digest, a);
  }
  return found;
}

/** The capture the response record at `place` holds, read through a reader kept open per file. */
function originalPayload(readers: Map<string, ArchiveReader>, place: ArcPlace): Capture {
  const path = archiveName(place.file);
  let reader = readers.get(path);
  if (reader === undefined) readers.set(path, (reader = openArchive(path)));
  const record = reader.recordAt(place.offset);
  const capture = 'content' in record ? captureOfArc(record) : captureOfWarc(record);
  if (capture === undefined) throw new SherlockError('SHERLOCK_CORRUPT_WARC', 'the record a revisit names is no longer a response', { file: path, offset: place.offset });
  return capture;
}

/** The bucket header and body of a capture, as the gatherer would have stored its fetch. */
async function captureBucket(capture: Capture, url: string, options: ImportOptions, pool: ParsePool): Promise<ReturnType<typeof responseBucket>> {
  // A type's own cap applies as to a fetch; a type the crawl does not fetch (0) is imported all the same, archived already.
  const typeCap = capture.status >= 200 && capture.status < 300 ? bodyCap(options.typeLimits, headerValue(capture.headers, 'content-type'), options.maxBodySize) : 0;
  const cap = typeCap === 0 ? options.maxBodySize : typeCap;
  const cut = capture.body.length > cap;
  const body = cut ? capture.body.subarray(0, cap) : capture.body;
  const location = headerValue(capture.headers, 'location');
  const result = httpResult(url, capture.status, capture.statusText, location, cut ? cap : undefined);
  const response: FetchResponse = {
    ...result,
    url,
    address: capture.ip ?? '',
    startedAt: new Date(capture.time * 1000),
    elapsedMs: 0,
    status: capture.status,
    statusText: capture.statusText,
    headers: capture.headers,
    body,
    truncated: cut,
  };
  const document = result.outcome === 'ok' || result.outcome === 'too_large';
  // A copy of the body alone: a view would take its whole buffer to the worker.
  const parsed = document ? await pool.parse(new Uint8Array(body), { url, headers: capture.headers, maxDecodedSize: options.maxDecodedSize }) : {};
  return responseBucket(response, md5Hex(body), parsed.parsed);
}

function problemOf(err: SherlockError, path: string): ImportProblem {
  return { file: path, ...(err.place.offset === undefined ? {} : { offset: err.place.offset }), message: err.message };
}
