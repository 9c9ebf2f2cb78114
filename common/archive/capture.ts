/**
 * An archived HTTP capture as a crawler would have seen it, from an ARC or
 * WARC record of any tool: URL, instant, address, status line, header fields
 * and payload. What `sherlock import archive` turns into fetch results.
 *
 * Which records are captures (the rest give undefined):
 *   ARC   every record but the version block (`filedesc:`) whose content
 *         starts with an HTTP status line (spec arc-cdx.md §1.5)
 *   WARC  `response` with an HTTP block (status line first);
 *         `resource`: the block is the payload, served as 200 with the
 *         record's Content-Type (Webrecorder and warcio write them);
 *         `revisit`: the HTTP head it carries, if any, and the payload
 *         digest of the record it revisits (ISO 28500 §6.7): whoever reads
 *         it resolves the payload (identical-payload-digest), or takes it
 *         as the 304 it is (server-not-modified)
 *   warcinfo, request, metadata, conversion and continuation records are
 *   not captures.
 */

import { arcUrl, captureDate, isFiledesc } from './arc.js';
import type { ArcRecord } from './arc-read.js';
import { httpPayloadOffset, httpStatus } from './digest.js';
import { warcDateDigits, warcField, warcTargetUri, type WarcRecord } from './warc-read.js';

export interface Capture {
  /** As archived: the ARC header's URL (CR dropped), WARC-Target-URI without `<>`. */
  url: string;
  /** Unix seconds. */
  time: number;
  /** The server's address, when the archive says. */
  ip?: string;
  status: number;
  statusText: string;
  /** Header fields in order, values as Latin-1 text. */
  headers: [string, string][];
  /** The payload: a view into the record's content. */
  body: Buffer;
  /** WARC-Payload-Digest as written: a response's, for revisits to find it by; a revisit's, the payload it stands for. */
  digest?: string;
  /** A revisit: `identical`, its payload is that of the response with its digest; `not-modified`, a 304 with none. */
  revisit?: 'identical' | 'not-modified';
}

const DATE = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/;

/** Unix seconds of a 14-digit archive date. */
export function archiveTime(digits: string): number {
  const m = DATE.exec(digits)!;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) / 1000;
}

/** Status line and header fields of an HTTP response (`content` starts with its status line), and where the payload starts. */
export function httpHead(content: Buffer): { status: number; statusText: string; headers: [string, string][]; payloadAt: number } | undefined {
  const status = httpStatus(content);
  if (status === undefined) return undefined;
  const payloadAt = httpPayloadOffset(content);
  const lines = content.toString('latin1', 0, payloadAt).split(/\r?\n/);
  const statusText = /^\S+ +\d{3} *(.*)$/.exec(lines[0]!)?.[1]?.trim() ?? '';
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    if (line === '') continue;
    // A line starting with SP or HT continues the field before (RFC 9112 §5.2, obsolete but archived).
    if ((line[0] === ' ' || line[0] === '\t') && headers.length > 0) {
      headers[headers.length - 1]![1] += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon > 0) headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  return { status, statusText, headers, payloadAt };
}

/** The capture of an ARC record; `fileDate` (ArcReader#versionDate) dates a record whose own date is not one. */
export function captureOfArc(record: ArcRecord, fileDate?: string): Capture | undefined {
  if (isFiledesc(record.header)) return undefined;
  const head = httpHead(record.content);
  if (head === undefined) return undefined;
  const { ip } = record.header;
  return {
    url: arcUrl(record.header.url),
    time: archiveTime(captureDate(record.header.date, fileDate)),
    ...(ip === '' || ip === '-' ? {} : { ip }),
    status: head.status,
    statusText: head.statusText,
    headers: head.headers,
    body: record.content.subarray(head.payloadAt),
  };
}

/** The capture of a WARC record (see the module comment). */
export function captureOfWarc(record: WarcRecord): Capture | undefined {
  const type = (warcField(record, 'WARC-Type') ?? '').toLowerCase();
  if (type !== 'response' && type !== 'resource' && type !== 'revisit') return undefined;
  const url = warcTargetUri(record);
  const date = warcDateDigits(warcField(record, 'WARC-Date') ?? '');
  if (url === undefined || date === undefined) return undefined;
  const ip = warcField(record, 'WARC-IP-Address');
  const digest = warcField(record, 'WARC-Payload-Digest');
  const base = { url, time: archiveTime(date), ...(ip === undefined ? {} : { ip }), ...(digest === undefined ? {} : { digest }) };
  if (type === 'resource') {
    const contentType = warcField(record, 'Content-Type');
    return { ...base, status: 200, statusText: 'OK', headers: contentType === undefined ? [] : [['Content-Type', contentType]], body: record.block };
  }
  const head = httpHead(record.block);
  if (type === 'response') return head === undefined ? undefined : { ...base, status: head.status, statusText: head.statusText, headers: head.headers, body: record.block.subarray(head.payloadAt) };
  const notModified = (warcField(record, 'WARC-Profile') ?? '').endsWith('/revisit/server-not-modified') || head?.status === 304;
  return {
    ...base,
    status: head?.status ?? 200,
    statusText: head?.statusText ?? '',
    headers: head?.headers ?? [],
    body: Buffer.alloc(0),
    revisit: notModified ? 'not-modified' : 'identical',
  };
}
