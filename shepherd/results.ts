/**
 * What the gatherer reports back, read from the bucket file: each bucket
 * after a checkpoint becomes a FetchResult (the URL's new state) and its
 * links; robots.txt buckets give sitemaps. The shepherd's merge step writes
 * them into the URL database and moves the checkpoint in the same
 * transaction, so a crash re-reads at most what was not committed.
 *
 * Header attributes read (docs/buckets.md): U URL, D download time, H HTTP
 * status, ! "<code> <message>", C MD5, L Last-Modified, e ETag, K "robots",
 * a (a file outside the crawl: an imported capture, not a fetch).
 * Body: the links R (anchors), F (frames) and Y (redirects and refreshes) are
 * followed; I (images) are not, a text search engine does not fetch images.
 * A page whose robots meta says nofollow gives no links (p attribute).
 */

import { isOutsideArchive, parseArcAttribute } from '../common/archive/arc-place.js';
import type { Bucket } from '../common/bucket/bucket.js';
import { oidAfter, type BucketReader, type Damage } from '../common/bucket/file.js';
import { parseBody, type DocumentBody } from '../common/bucket/doc-body.js';
import { SherlockError } from '../common/errors.js';

export interface FetchResult {
  oid: number;
  url: string;
  /** Unix seconds. */
  time: number;
  status?: number;
  /** 0 ok, 1 redirect, 3 not modified, ≥1000 errors (gatherer/outcome.ts ranges). */
  code: number;
  message?: string;
  /** MD5 of the body, hex. */
  checksum?: string;
  /** Last-Modified as Unix seconds. */
  lastModified?: number;
  etag?: string;
  /** Where a redirect points. */
  redirect?: string;
  /** Links to follow, canonical, each once. */
  links: string[];
  /** A capture `sherlock import archive` took from another tool's archive (its `a` names a file outside the crawl), not a fetch. */
  archived?: true;
}

export interface RobotsResult {
  oid: number;
  url: string;
  sitemaps: string[];
}

export type GatherReport = { kind: 'fetch'; result: FetchResult } | { kind: 'robots'; result: RobotsResult };

const FOLLOWED = new Set(['R', 'F', 'Y']);

function bad(oid: number, message: string): SherlockError {
  return new SherlockError('SHERLOCK_CORRUPT_BUCKET', `bucket ${oid}: ${message}`);
}

function whole(value: string | undefined, oid: number, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,15}$/.test(value)) throw bad(oid, `attribute ${name} is not a whole number: ${JSON.stringify(value.slice(0, 40))}`);
  return Number(value);
}

/** One bucket as a report; SHERLOCK_CORRUPT_BUCKET when a header attribute is malformed. `body`: the bucket's body parsed already, by a caller that needs it too. */
export function reportOf(oid: number, bucket: Bucket, body?: DocumentBody): GatherReport {
  const h = bucket.header;
  const url = h.string('U');
  if (url === undefined || url === '') throw bad(oid, 'no U (URL) attribute');
  if (h.string('K') === 'robots') {
    return { kind: 'robots', result: { oid, url, sitemaps: bucket.body.all('s').map((v) => v.toString('utf8')) } };
  }
  const time = whole(h.string('D'), oid, 'D');
  if (time === undefined) throw bad(oid, 'no D (download time) attribute');
  const result: FetchResult = { oid, url, time, code: 0, links: [] };
  const status = whole(h.string('H'), oid, 'H');
  if (status !== undefined) result.status = status;
  const error = h.string('!');
  if (error !== undefined) {
    const m = /^(\d{1,5}) ?(.*)$/s.exec(error);
    if (m === null) throw bad(oid, `attribute ! does not start with a code: ${JSON.stringify(error.slice(0, 40))}`);
    result.code = Number(m[1]);
    result.message = m[2]!;
  }
  const checksum = h.string('C');
  if (checksum !== undefined) result.checksum = checksum;
  const lastModified = whole(h.string('L'), oid, 'L');
  if (lastModified !== undefined) result.lastModified = lastModified;
  const etag = h.string('e');
  if (etag !== undefined) result.etag = etag;
  const place = parseArcAttribute(h.string('a'));
  if (place !== undefined && isOutsideArchive(place.file)) result.archived = true;
  const doc = body ?? parseBody(bucket.body);
  const redirect = doc.links.find((link) => link.type === 'Y');
  if (redirect !== undefined && result.code === 1) result.redirect = redirect.url;
  if (!doc.robots.nofollow) {
    const seen = new Set<string>();
    for (const link of doc.links) {
      if (FOLLOWED.has(link.type) && !seen.has(link.url)) {
        seen.add(link.url);
        result.links.push(link.url);
      }
    }
  }
  return { kind: 'fetch', result };
}

export interface ReadOptions {
  /** First oid to read. */
  from: number;
  /** At most this many reports (the merge commits in batches). */
  limit: number;
  /** Damaged stretches of the file, skipped (the reader keeps going). */
  onDamage?: (damage: Damage) => void;
  /** A bucket that decodes but holds nonsense, skipped. */
  onBad?: (oid: number, err: SherlockError) => void;
}

/** Reports from `from` on, and the oid to continue from (one past the last bucket read). */
export function readReports(reader: BucketReader, options: ReadOptions): { reports: GatherReport[]; next: number } {
  const reports: GatherReport[] = [];
  let next = options.from;
  for (const stored of reader.buckets({ from: options.from, ...(options.onDamage === undefined ? {} : { onDamage: options.onDamage }) })) {
    if (reports.length >= options.limit) break;
    next = oidAfter(stored);
    try {
      reports.push(reportOf(stored.oid, reader.decode(stored)));
    } catch (err) {
      if (!(err instanceof SherlockError) || options.onBad === undefined) throw err;
      options.onBad(stored.oid, err);
    }
  }
  return { reports, next };
}
