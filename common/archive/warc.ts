/**
 * Writing WARC/1.0 records (ISO 28500:2009; spec/arc-cdx.md §7) for
 * `sherlock export warc`: an ARC file becomes one `.warc.gz` with a
 * `warcinfo` record first and then one record per ARC document, each record
 * its own gzip member, so that CDX offsets and lengths address members as in
 * `.arc.gz`. The outside check is npm `warcio` (a reader we do not write).
 *
 * Record layout (framing lines end in CRLF):
 *
 *   `WARC/1.0`
 *   `Name: value` lines (below)
 *   empty line
 *   block: exactly Content-Length bytes
 *   CRLF CRLF
 *
 *   field                 warcinfo                     response (HTTP content)           resource (other content, e.g. dns:)
 *   (a 304 Not Modified is a `revisit` record instead: `revisitRecord`)
 *   WARC-Type             warcinfo                     response                          resource
 *   WARC-Record-ID        `<urn:uuid:…>`, name-based (SHA-1 of file name and record offset), so a re-export is identical
 *   WARC-Date             `YYYY-MM-DDThh:mm:ssZ` from the capture's instant (arc.ts `captureDate`, as the CDX `b`)
 *   WARC-Filename         the WARC file's name         –                                 –
 *   WARC-Target-URI       –                            the ARC URL without CR (`arcUrl`, as the CDX `a`), bytes outside printable ASCII as %XX
 *   WARC-IP-Address       –                            the ARC IP when it is an address
 *   WARC-Warcinfo-ID      –                            the warcinfo record's id
 *   WARC-Payload-Digest   –                            `sha1:` base32 of the HTTP payload (§4)
 *   WARC-Block-Digest     –                            `sha1:` base32 of the block
 *   Content-Type          application/warc-fields      application/http; msgtype=response the ARC MIME field
 *   Content-Length        block size
 *
 * The block of a response is the ARC content unchanged: status line, headers,
 * body as stored. Only the `response` mapping is what warcio does on the fly
 * for ARC; a non-HTTP body (DNS answers) is a `resource` here, because an
 * `application/http` block must parse as HTTP.
 */

import { createHash } from 'node:crypto';
import { arcUrl, escapeUrlBytes, looksLikeIp } from './arc.js';
import { EMPTY_SHA1_BASE32, httpStatus, payloadDigest, sha1Base32 } from './digest.js';
import { compressMember } from './gzip-member.js';

const CRLF = '\r\n';
const END = Buffer.from('\r\n\r\n');

export interface WarcHeaderField {
  name: string;
  value: string;
}

/** A name-based UUID (RFC 4122 §4.3 layout, version 5) from `name`: stable across runs, distinct across names. */
export function warcRecordId(name: string): string {
  const hash = createHash('sha1').update('sherlock-warc:').update(name).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `<urn:uuid:${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}>`;
}

/** A 14-digit archive date as a WARC date; it must be a real instant (`captureDate` makes them so). */
export function warcDate(arcDate14: string): string {
  const d = arcDate14;
  const iso = `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}T${d.slice(8, 10)}:${d.slice(10, 12)}:${d.slice(12, 14)}Z`;
  // Date.parse rolls 2015-12-00 over to 11-30 instead of failing, so compare the round trip.
  const time = /^\d{14}$/.test(d) ? Date.parse(iso) : Number.NaN;
  if (Number.isNaN(time) || new Date(time).toISOString() !== iso.replace('Z', '.000Z')) throw new RangeError(`${arcDate14} is not an instant`);
  return iso;
}

/** One record, uncompressed: version line, fields, Content-Length, empty line, block, CRLF CRLF. */
export function formatWarcRecord(fields: readonly WarcHeaderField[], block: Buffer): Buffer {
  for (const { name, value } of fields) {
    if (/[\r\n]/.test(name + value)) throw new RangeError(`WARC header ${name} holds a line break`);
  }
  const head = ['WARC/1.0', ...fields.map((f) => `${f.name}: ${f.value}`), `Content-Length: ${block.length}`, '', ''].join(CRLF);
  return Buffer.concat([Buffer.from(head, 'utf8'), block, END]);
}

export interface WarcinfoInput {
  /** The WARC file's name. */
  filename: string;
  /** 14-digit date. */
  date: string;
  /** `name: value` lines of the application/warc-fields block. */
  info: readonly WarcHeaderField[];
}

/** The warcinfo record opening a file, as one gzip member; `id` is its WARC-Record-ID. */
export function warcinfoRecord(input: WarcinfoInput): { id: string; bytes: Buffer } {
  const id = warcRecordId(`${input.filename}:warcinfo`);
  const block = Buffer.from(input.info.map((f) => `${f.name}: ${f.value}${CRLF}`).join(''), 'utf8');
  const fields = [
    { name: 'WARC-Type', value: 'warcinfo' },
    { name: 'WARC-Record-ID', value: id },
    { name: 'WARC-Date', value: warcDate(input.date) },
    { name: 'WARC-Filename', value: input.filename },
    { name: 'Content-Type', value: 'application/warc-fields' },
  ];
  return { id, bytes: compressMember(formatWarcRecord(fields, block)) };
}

export interface WarcCaptureInput {
  /** Unique within the file (the ARC record's offset), for the record id. */
  name: string;
  /** The URL as stored (a byte string). */
  url: string;
  ip: string;
  /** 14-digit date. */
  date: string;
  /** The ARC MIME field, for non-HTTP content. */
  mime: string;
  /** The ARC content: the HTTP response as stored. */
  content: Buffer;
  warcinfoId: string;
  /** Its payload digest when the caller has it already (`payloadDigest`). */
  digest?: string;
}

/** The server-not-modified profile of WARC/1.0 (ISO 28500 annex): a 304 confirming an earlier capture. */
export const NOT_MODIFIED_PROFILE = 'http://netpreserve.org/warc/1.0/revisit/server-not-modified';

/** The capture a revisit confirms. */
export interface RevisitOriginal {
  /** Its WARC-Target-URI. */
  uri: string;
  /** Its 14-digit date. */
  date: string;
  /** Its WARC-Payload-Digest, without `sha1:`. */
  digest: string;
  /** Its WARC-Record-ID. */
  id: string;
}

/**
 * A 304 Not Modified as a `revisit` record of the server-not-modified
 * profile, as one gzip member. With the original: WARC-Refers-To (its id),
 * -Target-URI and -Date name it and WARC-Payload-Digest is its digest, so
 * that pywb finds it by URL, date and digest. Without one (none in the
 * export): WARC-Refers-To-Target-URI is the record's own URI and there is no
 * digest, so pywb takes the closest capture of that URL in its collection.
 * The block is empty: pywb serves a revisit's own HTTP head when it has one,
 * which would replay the 304 (the ARC keeps the 304's headers).
 */
export function revisitRecord(input: Omit<WarcCaptureInput, 'mime' | 'content' | 'digest'>, original: RevisitOriginal | undefined): Buffer {
  const uri = warcUri(input.url);
  const fields: WarcHeaderField[] = [
    { name: 'WARC-Type', value: 'revisit' },
    { name: 'WARC-Record-ID', value: warcRecordId(input.name) },
    { name: 'WARC-Date', value: warcDate(input.date) },
    { name: 'WARC-Target-URI', value: uri },
  ];
  fields.push(...ipField(input.ip), { name: 'WARC-Warcinfo-ID', value: input.warcinfoId }, { name: 'WARC-Profile', value: NOT_MODIFIED_PROFILE });
  if (original === undefined) {
    fields.push({ name: 'WARC-Refers-To-Target-URI', value: uri });
  } else {
    fields.push(
      { name: 'WARC-Refers-To', value: original.id },
      { name: 'WARC-Refers-To-Target-URI', value: original.uri },
      { name: 'WARC-Refers-To-Date', value: warcDate(original.date) },
      { name: 'WARC-Payload-Digest', value: 'sha1:' + original.digest },
    );
  }
  fields.push({ name: 'WARC-Block-Digest', value: 'sha1:' + EMPTY_SHA1_BASE32 });
  return compressMember(formatWarcRecord(fields, Buffer.alloc(0)));
}

/** WARC-IP-Address when the ARC IP field holds an address (not the `-` or `None` of old writers). */
function ipField(ip: string): WarcHeaderField[] {
  return looksLikeIp(ip) && ip !== '-' && ip !== 'None' ? [{ name: 'WARC-IP-Address', value: ip }] : [];
}

/** The WARC-Target-URI of an ARC URL: CR dropped (`arcUrl`), bytes outside printable ASCII as %XX. */
export function warcUri(url: string): string {
  return escapeUrlBytes(Buffer.from(arcUrl(url), 'latin1'));
}

/** One capture as a `response` (HTTP content) or `resource` record, as one gzip member. */
export function captureRecord(input: WarcCaptureInput): Buffer {
  const http = httpStatus(input.content) !== undefined;
  const fields: WarcHeaderField[] = [
    { name: 'WARC-Type', value: http ? 'response' : 'resource' },
    { name: 'WARC-Record-ID', value: warcRecordId(input.name) },
    { name: 'WARC-Date', value: warcDate(input.date) },
    { name: 'WARC-Target-URI', value: warcUri(input.url) },
  ];
  fields.push(
    ...ipField(input.ip),
    { name: 'WARC-Warcinfo-ID', value: input.warcinfoId },
    { name: 'WARC-Payload-Digest', value: 'sha1:' + (input.digest ?? payloadDigest(input.content)) },
    { name: 'WARC-Block-Digest', value: 'sha1:' + sha1Base32(input.content) },
    { name: 'Content-Type', value: http ? 'application/http; msgtype=response' : escapeUrlBytes(Buffer.from(input.mime, 'latin1')) || 'application/octet-stream' },
  );
  return compressMember(formatWarcRecord(fields, input.content));
}
