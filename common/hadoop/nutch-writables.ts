/**
 * Apache Nutch 1.x's Writables, the values of its crawldb, linkdb and
 * segments, registered by Java class name (writables.ts) so that
 * SequenceFiles and MapWritables naming them can be read. Spec:
 * `../shared/spec/nutch-formats.md` §7. Strings are Text unless noted;
 * "string" below is WritableUtils' (i32 length or −1 for null, UTF-8).
 *
 *   CrawlDatum v7: u8 7, u8 status, i64 fetchTime, u8 retries,
 *     i32 fetchInterval (s), f32 score, i64 modifiedTime, u8 n + n signature
 *     bytes, bool hasMetadata, MapWritable if true (written only when non-empty)
 *     Read back to v4 (Nutch 0.8): v ≤ 5 has an f32 interval (rounded, as Nutch
 *     does), v ≤ 2 no modifiedTime/signature, v ≤ 3 no metadata; v < 5 status
 *     codes are translated; v4–6 metadata in Nutch's old map layout is refused.
 *   ProtocolStatus v2: u8 2, u8 code, i64 lastModified, i32 n (−1 null) + n strings
 *   ParseStatus v2: u8 2, u8 major, i16 minor, i32 n (−1 null) + n strings
 *   Metadata: i32 names, per name: Text name, i32 n, n × Text value
 *   Content: i32 −1 (version), url, base, i32 n + n content bytes,
 *     contentType, Metadata (older compressed Content is refused)
 *   ParseText v2: u8 2, Text text
 *   Outlink, Inlink: Text url, Text anchor, bool, MapWritable if true
 *   ParseData v5: u8 5, ParseStatus, title, i32 n + n Outlinks,
 *     content Metadata, parse Metadata
 *   Inlinks: i32 n + n Inlinks
 *
 * Java longs are bigints. Lists keep the file's order (Java wrote HashMap and
 * HashSet orders), so a rewrite is byte-identical. Readers refuse versions
 * they do not know, naming the file and offset.
 */

import type { SherlockError } from '../errors.js';
import { DataWriter, type DataReader } from './io.js';
import { MAP, registerWritable, type MapWritable } from './writables.js';

/** Nutch's db.fetch.interval.default: 30 days. */
export const NUTCH_DEFAULT_INTERVAL = 2_592_000;

/** CrawlDatum status codes and the names Nutch prints for them. */
export const CRAWL_STATUS = {
  db_unfetched: 0x01,
  db_fetched: 0x02,
  db_gone: 0x03,
  db_redir_temp: 0x04,
  db_redir_perm: 0x05,
  db_notmodified: 0x06,
  db_duplicate: 0x07,
  db_orphan: 0x08,
  db_parse_failed: 0x09,
  fetch_success: 0x21,
  fetch_retry: 0x22,
  fetch_redir_temp: 0x23,
  fetch_redir_perm: 0x24,
  fetch_gone: 0x25,
  fetch_notmodified: 0x26,
  signature: 0x41,
  injected: 0x42,
  linked: 0x43,
  parse_metadata: 0x44,
  parse_failed: 0x45,
} as const;

const STATUS_NAMES = new Map<number, string>(Object.entries(CRAWL_STATUS).map(([name, code]) => [code, name]));

/** Nutch's name of a status code ("unknown" for codes it has none for). */
export function crawlStatusName(code: number): string {
  return STATUS_NAMES.get(code) ?? 'unknown';
}

/** Nutch < 1.0 (CrawlDatum v < 5) numbered statuses differently. */
const OLD_STATUS = [0x41, 0x01, 0x02, 0x03, 0x43, 0x21, 0x22, 0x25];

export interface CrawlDatum {
  status: number;
  fetchTime: bigint;
  retries: number;
  /** Seconds. */
  fetchInterval: number;
  score: number;
  modifiedTime: bigint;
  signature: Buffer | null;
  metadata: MapWritable | null;
}

export const CRAWL_DATUM_VERSION = 7;

/** Java's Math.round(float): NaN is 0, the result an int, clamped (old CrawlDatums kept the interval as a float). */
function javaRound(value: number): number {
  if (Number.isNaN(value)) return 0;
  // + 0: Math.round(-0.4) is -0, which no int is.
  return Math.min(2 ** 31 - 1, Math.max(-(2 ** 31), Math.round(value))) + 0;
}

function corruptVersion(r: DataReader, what: string, version: number, at: number): SherlockError {
  return r.corrupt(`unsupported ${what} version ${version}`, at);
}

export const CRAWL_DATUM = registerWritable<CrawlDatum>({
  className: 'org.apache.nutch.crawl.CrawlDatum',
  read(r) {
    const start = r.pos;
    const version = r.i8('CrawlDatum version');
    if (version < 4 || version > CRAWL_DATUM_VERSION) throw corruptVersion(r, 'CrawlDatum', version, start);
    let status = r.i8('status');
    const fetchTime = r.i64('fetch time');
    const retries = r.i8('retries');
    const fetchInterval = version > 5 ? r.i32('fetch interval') : javaRound(r.f32('fetch interval'));
    const score = r.f32('score');
    const modifiedTime = r.i64('modified time');
    const length = r.i8('signature length');
    const signature = length > 0 ? Buffer.from(r.bytesOf(length, 'signature')) : null;
    let metadata: MapWritable | null = null;
    const flagAt = r.pos;
    if (r.bool('metadata flag')) {
      if (version < 7) throw r.corrupt(`CrawlDatum v${version} metadata (Nutch's pre-1.0 map) is not supported`, flagAt);
      metadata = MAP.read(r);
      // Nutch writes the flag only for a non-empty map and treats an empty one as none; so do we, so that what reads writes back the same.
      if (metadata.entries.length === 0) metadata = null;
    }
    if (version < 5) status = OLD_STATUS[status] ?? CRAWL_STATUS.db_unfetched;
    return { status, fetchTime, retries, fetchInterval, score, modifiedTime, signature, metadata };
  },
  write(w, d) {
    if (d.signature !== null && d.signature.length > 127) throw new RangeError(`a CrawlDatum signature has at most 127 bytes, not ${d.signature.length}`);
    w.u8(CRAWL_DATUM_VERSION);
    w.u8(d.status);
    w.i64(d.fetchTime);
    w.u8(d.retries);
    w.i32(d.fetchInterval);
    w.f32(d.score);
    w.i64(d.modifiedTime);
    w.u8(d.signature?.length ?? 0);
    if (d.signature !== null) w.bytes(d.signature);
    const hasMetadata = d.metadata !== null && d.metadata.entries.length > 0;
    w.bool(hasMetadata);
    if (hasMetadata) MAP.write(w, d.metadata!);
  },
});

/** ProtocolStatus codes and Nutch's names for them. */
export const PROTOCOL_STATUS = {
  success: 1,
  failed: 2,
  proto_not_found: 10,
  gone: 11,
  moved: 12,
  temp_moved: 13,
  notfound: 14,
  retry: 15,
  exception: 16,
  access_denied: 17,
  robots_denied: 18,
  redir_exceeded: 19,
  notfetching: 20,
  notmodified: 21,
  wouldblock: 22,
  blocked: 23,
} as const;

const PROTOCOL_NAMES = new Map<number, string>(Object.entries(PROTOCOL_STATUS).map(([name, code]) => [code, name]));

export function protocolStatusName(code: number): string {
  return PROTOCOL_NAMES.get(code) ?? 'unknown';
}

export interface ProtocolStatus {
  code: number;
  lastModified: bigint;
  args: Array<string | null> | null;
}

export const PROTOCOL_STATUS_WRITABLE = registerWritable<ProtocolStatus>({
  className: 'org.apache.nutch.protocol.ProtocolStatus',
  read(r) {
    const start = r.pos;
    const version = r.u8('ProtocolStatus version');
    if (version !== 2) throw corruptVersion(r, 'ProtocolStatus', version, start);
    return { code: r.u8('protocol status code'), lastModified: r.i64('last modified'), args: r.stringArray('protocol status arguments') };
  },
  write(w, s) {
    w.u8(2);
    w.u8(s.code);
    w.i64(s.lastModified);
    w.stringArray(s.args);
  },
});

export interface ParseStatus {
  /** 0 notparsed, 1 success, 2 failed. */
  majorCode: number;
  minorCode: number;
  args: Array<string | null> | null;
}

export const PARSE_MAJOR_NAMES = ['notparsed', 'success', 'failed'] as const;

export const PARSE_STATUS = registerWritable<ParseStatus>({
  className: 'org.apache.nutch.parse.ParseStatus',
  read(r) {
    const start = r.pos;
    const version = r.u8('ParseStatus version');
    if (version !== 2) throw corruptVersion(r, 'ParseStatus', version, start);
    return { majorCode: r.i8('parse status major code'), minorCode: r.i16('parse status minor code'), args: r.stringArray('parse status arguments') };
  },
  write(w, s) {
    w.u8(2);
    w.u8(s.majorCode);
    w.i16(s.minorCode);
    w.stringArray(s.args);
  },
});

/** Nutch's Metadata: names with one or more values each, in the file's order. */
export type Metadata = Array<[string, string[]]>;

function readMetadata(r: DataReader): Metadata {
  const n = r.count(5, 'metadata name count');
  const out: Metadata = [];
  for (let i = 0; i < n; i++) {
    const name = r.text('metadata name');
    const count = r.count(1, 'metadata value count');
    const values: string[] = [];
    for (let j = 0; j < count; j++) values.push(r.text('metadata value'));
    out.push([name, values]);
  }
  return out;
}

function writeMetadata(w: DataWriter, metadata: Metadata): void {
  w.i32(metadata.length);
  for (const [name, values] of metadata) {
    w.text(name);
    w.i32(values.length);
    for (const value of values) w.text(value);
  }
}

export const METADATA = registerWritable<Metadata>({ className: 'org.apache.nutch.metadata.Metadata', read: readMetadata, write: writeMetadata });

/** The first value of a metadata name, or undefined. */
export function metadataGet(metadata: Metadata, name: string): string | undefined {
  return metadata.find(([n]) => n === name)?.[1][0];
}

export interface Content {
  url: string;
  base: string;
  content: Buffer;
  contentType: string;
  metadata: Metadata;
}

export const CONTENT = registerWritable<Content>({
  className: 'org.apache.nutch.protocol.Content',
  read(r) {
    const start = r.pos;
    const version = r.i32('Content version');
    if (version !== -1) {
      throw r.corrupt(version >= 0 ? 'compressed Content of Nutch < 1.0 is not supported' : `unsupported Content version ${version}`, start);
    }
    const url = r.text('url');
    const base = r.text('base URL');
    const content = Buffer.from(r.bytesOf(r.count(1, 'content length'), 'content'));
    return { url, base, content, contentType: r.text('content type'), metadata: readMetadata(r) };
  },
  write(w, c) {
    w.i32(-1);
    w.text(c.url);
    w.text(c.base);
    w.i32(c.content.length);
    w.bytes(c.content);
    w.text(c.contentType);
    writeMetadata(w, c.metadata);
  },
});

export interface ParseText {
  text: string;
}

export const PARSE_TEXT = registerWritable<ParseText>({
  className: 'org.apache.nutch.parse.ParseText',
  read(r) {
    const start = r.pos;
    const version = r.u8('ParseText version');
    if (version !== 2) throw corruptVersion(r, 'ParseText', version, start);
    return { text: r.text('parse text') };
  },
  write(w, p) {
    w.u8(2);
    w.text(p.text);
  },
});

/** An Outlink (`url` is its toUrl) or an Inlink (`url` is its fromUrl): the same bytes. */
export interface Link {
  url: string;
  anchor: string;
  metadata: MapWritable | null;
}

function readLink(r: DataReader): Link {
  const url = r.text('link URL');
  const anchor = r.text('anchor');
  return { url, anchor, metadata: r.bool('link metadata flag') ? MAP.read(r) : null };
}

function writeLink(w: DataWriter, link: Link): void {
  w.text(link.url);
  w.text(link.anchor);
  const hasMetadata = link.metadata !== null && link.metadata.entries.length > 0;
  w.bool(hasMetadata);
  if (hasMetadata) MAP.write(w, link.metadata!);
}

export const OUTLINK = registerWritable<Link>({ className: 'org.apache.nutch.parse.Outlink', read: readLink, write: writeLink });
export const INLINK = registerWritable<Link>({ className: 'org.apache.nutch.crawl.Inlink', read: readLink, write: writeLink });

export const INLINKS = registerWritable<Link[]>({
  className: 'org.apache.nutch.crawl.Inlinks',
  read(r) {
    const n = r.count(3, 'inlink count');
    const out: Link[] = [];
    for (let i = 0; i < n; i++) out.push(readLink(r));
    return out;
  },
  write(w, links) {
    w.i32(links.length);
    for (const link of links) writeLink(w, link);
  },
});

/**
 * An Inlinks value built link by link from Text payloads (UTF-8 bytes, as
 * byte strings) as they come, without decoding them: the bytes INLINKS.write
 * gives for links without metadata. For the linkdb export, whose sort lines
 * hold those bytes.
 */
export class InlinksBuilder {
  private readonly w = new DataWriter(4096);
  count = 0;

  constructor() {
    this.clear();
  }

  /** A link whose URL and anchor are byte strings: their UTF-8 bytes, one character each. */
  add(url: string, anchor: string): void {
    this.w.textLatin1(url);
    this.w.textLatin1(anchor);
    this.w.bool(false);
    this.count++;
  }

  /** The serialised Inlinks, valid until the next clear(). */
  view(): Buffer {
    const bytes = this.w.view();
    bytes.writeInt32BE(this.count, 0);
    return bytes;
  }

  clear(): void {
    this.w.reset();
    this.w.i32(0);
    this.count = 0;
  }
}

export interface ParseData {
  status: ParseStatus;
  title: string;
  outlinks: Link[];
  contentMeta: Metadata;
  parseMeta: Metadata;
}

export const PARSE_DATA = registerWritable<ParseData>({
  className: 'org.apache.nutch.parse.ParseData',
  read(r) {
    const start = r.pos;
    const version = r.u8('ParseData version');
    if (version !== 5) throw corruptVersion(r, 'ParseData', version, start);
    const status = PARSE_STATUS.read(r);
    const title = r.text('title');
    const n = r.count(3, 'outlink count');
    const outlinks: Link[] = [];
    for (let i = 0; i < n; i++) outlinks.push(readLink(r));
    return { status, title, outlinks, contentMeta: readMetadata(r), parseMeta: readMetadata(r) };
  },
  write(w, p) {
    w.u8(5);
    PARSE_STATUS.write(w, p.status);
    w.text(p.title);
    w.i32(p.outlinks.length);
    for (const link of p.outlinks) writeLink(w, link);
    writeMetadata(w, p.contentMeta);
    writeMetadata(w, p.parseMeta);
  },
});
