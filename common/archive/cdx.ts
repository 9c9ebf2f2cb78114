/**
 * CDX and CDXJ index lines for ARC and WARC records (spec/arc-cdx.md §2, §7), the lines
 * pywb and OpenWayback binary-search to find a capture, and reading a line
 * back (`cdxKey`, `parseCdxLine`) for the ZipNum lookup.
 *
 * 11-field CDX, after the legend ` CDX N b a m s k r M S V g`:
 *
 *   field  value for an ARC record                                   `-` when
 *   N      SURT key of the URL (`surt.ts`); the URL itself (as `a`)   never
 *          when the library refuses it, as IA does
 *   b      the capture's instant as 14 digits (`captureDate`: IA's    never
 *          digits made valid; the file's date when the record's is
 *          not a date)
 *   a      the URL as stored, SP LF FF BS as %20 %0A %0C %08, CR       never
 *          dropped, other bytes as stored (IA)
 *   m      the ARC content-type cut at `;`/whitespace; `unk` for       never
 *          `no-type`, empty or non-printable values (IA)
 *   s      status of an `HTTP/x.y NNN` first line                     the content is not HTTP
 *   k      base32 SHA-1 of the payload (`digest.ts`)                  never
 *   r      redirect                                                   always (pywb and IA write `-`)
 *   M      robot flags A (noarchive) F (nofollow) I (noindex) from    none found or not text/html
 *          `<meta name=robots>` and X-Robots-Tag (IA)
 *   S V    the record's length and offset as the reader gives them    never
 *   g      the ARC file's base name                                   never
 *
 * CDXJ (§2.5): `N b {json}` with the same values, in cdxj-indexer's layout
 * (`", "` separators, digest with `sha1:`, every value a string, non-ASCII as
 * `\u00XX`), leaving out fields that are `-` and an `unk` MIME type.
 *
 * Lines are byte strings (one character per byte) without their LF: the `a`
 * field keeps an old URL's raw bytes, and byte order is what sorting and
 * lookups compare (§2.4). Write them with `Buffer.from(line, 'latin1')`.
 * The version block (`filedesc://`) gets no line, as in pywb and IA's default.
 * A WARC record's fields follow pywb's indexer (`cdxFieldsOfWarc`); whether a
 * capture is a 304, which the export leaves out by default, `isNotModified`.
 */

import type { ArcRecord } from './arc-read.js';
import { arcUrl, captureDate } from './arc.js';
import { httpPayloadOffset, httpStatus, payloadDigest, payloadOffset } from './digest.js';
import { surt } from './surt.js';
import { warcDateDigits, warcField, warcTargetUri, type WarcRecord } from './warc-read.js';

export const CDX_LEGEND = ' CDX N b a m s k r M S V g';

export interface CdxFields {
  key: string;
  timestamp: string;
  original: string;
  mime: string;
  status: string;
  digest: string;
  redirect: string;
  robots: string;
  length: string;
  offset: string;
  filename: string;
}

/** The `a` field: IA's CDX-Writer escapes SP, LF, FF and BS and drops CR, so that the URL is one field. */
export function cdxOriginal(url: string): string {
  return /[ \n\f\b\r]/.test(url) ? arcUrl(url).replace(/[ \n\f\b]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')) : url;
}

/** The `m` field from the ARC content-type field. */
export function cdxMime(arcMime: string): string {
  const type = arcMime.split(/[;\s]/, 1)[0]!;
  return type === '' || type === 'no-type' || !/^[\x21-\x7e]+$/.test(type) ? 'unk' : type;
}

// IA looks at the HTML head; a page that hides its robots meta deeper than this is rare.
const ROBOTS_SCAN = 64 * 1024;
const META = /<meta\b[^>]*>/gi;
const ATTRIBUTE = /([a-z-]+)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi;
const ROBOTS_HEADER = /^x-robots-tag:[ \t]*([^\r\n]*)/gim;

// Horspool shifts for `robots` over bytes folded to lower case (byte | 0x20: only the letters themselves fold onto letters).
const ROBOTS = Buffer.from('robots', 'latin1');
const ROBOTS_SHIFT = new Uint8Array(256).fill(ROBOTS.length);
for (let j = 0; j < ROBOTS.length - 1; j++) ROBOTS_SHIFT[ROBOTS[j]!] = ROBOTS.length - 1 - j;

/** Whether `robots`, in any case (as `/robots/i`), occurs in bytes [from, to): the test every HTML record takes, made without a string. */
export function mentionsRobots(bytes: Uint8Array, from: number, to: number): boolean {
  const last = ROBOTS.length - 1;
  for (let i = from + last; i < to; ) {
    const c = bytes[i]! | 0x20;
    if (c === 0x73) {
      let j = last - 1;
      while (j >= 0 && (bytes[i - last + j]! | 0x20) === ROBOTS[j]) j--;
      if (j < 0) return true;
    }
    i += ROBOTS_SHIFT[c]!;
  }
  return false;
}

function robotDirectives(content: Buffer, payloadAt: number): string {
  let directives = '';
  if (mentionsRobots(content, 0, payloadAt)) {
    const head = content.toString('latin1', 0, payloadAt);
    if (/x-robots-tag/i.test(head)) for (const m of head.matchAll(ROBOTS_HEADER)) directives += ' ' + m[1]!;
  }
  const bodyEnd = Math.min(content.length, payloadAt + ROBOTS_SCAN);
  if (!mentionsRobots(content, payloadAt, bodyEnd)) return directives;
  const body = content.toString('latin1', payloadAt, bodyEnd);
  for (const tag of body.matchAll(META)) {
    let name = '';
    let value = '';
    for (const attr of tag[0].matchAll(ATTRIBUTE)) {
      const text = attr[2]!.replace(/^["']|["']$/g, '');
      const attrName = attr[1]!.toLowerCase();
      if (attrName === 'name') name = text.toLowerCase();
      else if (attrName === 'content') value = text;
    }
    if (name === 'robots') directives += ' ' + value;
  }
  return directives;
}

/** The `M` field: A, F, I in that order, for HTML only; `payloadAt` (where the HTTP head ends) when already known. */
export function cdxRobotFlags(content: Buffer, mime: string, payloadAt?: number): string {
  if (mime !== 'text/html') return '-';
  const directives = robotDirectives(content, payloadAt ?? httpPayloadOffset(content)).toLowerCase();
  if (directives === '') return '-';
  const none = directives.includes('none');
  const flags =
    (directives.includes('noarchive') ? 'A' : '') +
    (none || directives.includes('nofollow') ? 'F' : '') +
    (none || directives.includes('noindex') ? 'I' : '');
  return flags === '' ? '-' : flags;
}

/**
 * The fields of one ARC record's line; undefined for the version block, which
 * gets none. `fileDate` (the version block's, `ArcReader#versionDate`) dates a
 * record whose own date is not one, as the WARC export does (`captureDate`).
 */
export function cdxFields(record: ArcRecord, filename: string, fileDate?: string): CdxFields | undefined {
  const { header, content } = record;
  if (header.url.startsWith('filedesc:')) return undefined;
  const original = cdxOriginal(header.url);
  const mime = cdxMime(header.mime);
  const status = httpStatus(content);
  const payloadAt = payloadOffset(content, status);
  return {
    key: surt(header.url) ?? original,
    timestamp: captureDate(header.date, fileDate),
    original,
    mime,
    status: status === undefined ? '-' : String(status),
    digest: payloadDigest(content, payloadAt),
    redirect: '-',
    // Content that is not HTTP still has its robots meta looked for after a first empty line, if any.
    robots: cdxRobotFlags(content, mime, status === undefined ? undefined : payloadAt),
    length: String(record.length),
    offset: String(record.offset),
    filename,
  };
}

/**
 * The fields of one WARC record's line, by pywb's indexer's rules (spec §7):
 * warcinfo and request records and `application/warc-fields` blocks get no
 * line; `a` is WARC-Target-URI (without `<>`); `b` the WARC-Date's digits
 * (made an instant as ARC dates are); `m` the HTTP Content-Type of an HTTP
 * block, else the record's, `warc/revisit` for a revisit; `s` the status of a
 * response only; `k` WARC-Payload-Digest without `sha1:`, else the SHA-1 of
 * the payload (none for a revisit: `-`). The robot flags follow the ARC rule.
 */
export function cdxFieldsOfWarc(record: WarcRecord, filename: string): CdxFields | undefined {
  const type = warcField(record, 'WARC-Type') ?? '';
  const contentType = warcField(record, 'Content-Type') ?? '';
  if (type === 'warcinfo' || type === 'request' || contentType === 'application/warc-fields') return undefined;
  const url = warcTargetUri(record) ?? '-';
  const original = cdxOriginal(url);
  const block = record.block;
  const httpAt = type === 'response' || type === 'revisit' ? httpStatus(block) : undefined;
  const payloadAt = httpAt === undefined ? 0 : httpPayloadOffset(block);
  const head = httpAt === undefined ? '' : block.toString('latin1', 0, payloadAt);
  const mime = type === 'revisit' ? 'warc/revisit' : cdxMime(httpAt === undefined ? contentType : (HTTP_CONTENT_TYPE.exec(head)?.[1] ?? ''));
  const declared = warcField(record, 'WARC-Payload-Digest');
  const digest = declared !== undefined ? declared.replace(/^sha1:/i, '') : type === 'revisit' ? '-' : payloadDigest(block, payloadAt);
  return {
    key: surt(url) ?? original,
    timestamp: captureDate(warcDateDigits(warcField(record, 'WARC-Date') ?? '') ?? '', undefined),
    original,
    mime,
    status: type === 'response' && httpAt !== undefined ? String(httpAt) : '-',
    digest,
    redirect: '-',
    robots: type === 'response' && httpAt !== undefined ? cdxRobotFlags(block, mime, payloadAt) : '-',
    length: String(record.length),
    offset: String(record.offset),
    filename,
  };
}

const HTTP_CONTENT_TYPE = /^content-type:[ \t]*([^\r\n]*)/im;

/**
 * Whether a capture is a 304 Not Modified: a response (ARC or WARC) with
 * status 304, or a WARC revisit of the server-not-modified profile. IA's
 * CDX-Writer leaves them out by default ("impossible to playback").
 */
export function isNotModified(fields: CdxFields, record?: WarcRecord): boolean {
  if (fields.status === '304') return true;
  return record !== undefined && fields.mime === 'warc/revisit' && (warcField(record, 'WARC-Profile') ?? '').endsWith('/revisit/server-not-modified');
}

/** One 11-field CDX line, without its LF. */
export function formatCdx(f: CdxFields): string {
  return `${f.key} ${f.timestamp} ${f.original} ${f.mime} ${f.status} ${f.digest} ${f.redirect} ${f.robots} ${f.length} ${f.offset} ${f.filename}`;
}

/** JSON string as Python's json.dumps writes it (ensure_ascii): everything outside SP…~ escaped. */
function jsonString(s: string): string {
  return JSON.stringify(s).replace(/[\x7f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

/** One CDXJ line, without its LF. */
export function formatCdxj(f: CdxFields): string {
  const entries: Array<[string, string]> = [['url', f.original]];
  // cdxj-indexer leaves out a MIME type it does not know rather than writing `unk`.
  if (f.mime !== '-' && f.mime !== 'unk') entries.push(['mime', f.mime]);
  if (f.status !== '-') entries.push(['status', f.status]);
  // No digest (a revisit without one) is left out; one of another algorithm (a WARC's `sha256:…`) keeps its own prefix.
  if (f.digest !== '-') entries.push(['digest', f.digest.includes(':') ? f.digest : 'sha1:' + f.digest]);
  if (f.redirect !== '-') entries.push(['redirect', f.redirect]);
  if (f.robots !== '-') entries.push(['robotflags', f.robots]);
  entries.push(['length', f.length], ['offset', f.offset], ['filename', f.filename]);
  return `${f.key} ${f.timestamp} {${entries.map(([name, value]) => `"${name}": ${jsonString(value)}`).join(', ')}}`;
}

/** The sort and lookup key of a CDX or CDXJ line: its first two fields (urlkey and timestamp), as the ZipNum summary holds them. */
export function cdxKey(line: string): string {
  const first = line.indexOf(' ');
  if (first === -1) return line;
  const second = line.indexOf(' ', first + 1);
  return second === -1 ? line : line.slice(0, second);
}

/** The urlkey (first field) of a CDX or CDXJ line. */
export function cdxUrlKey(line: string): string {
  const space = line.indexOf(' ');
  return space === -1 ? line : line.slice(0, space);
}

const FIELD_NAMES = ['key', 'timestamp', 'original', 'mime', 'status', 'digest', 'redirect', 'robots', 'length', 'offset', 'filename'] as const;

/** An 11-field CDX line read back; undefined for the legend or a line with another field count. */
export function parseCdxLine(line: string): CdxFields | undefined {
  if (line.startsWith(' CDX')) return undefined;
  const values = line.split(' ');
  if (values.length !== FIELD_NAMES.length) return undefined;
  return Object.fromEntries(FIELD_NAMES.map((name, i) => [name, values[i]!])) as unknown as CdxFields;
}
