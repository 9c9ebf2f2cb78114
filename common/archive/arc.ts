/**
 * The ARC v1 archive format (spec/arc-cdx.md §1): header lines, the version
 * block, and the field rules shared by the writer (`arc-write.ts`) and the
 * reader (`arc-read.ts`), which sit beside this file.
 *
 * An ARC file is a concatenation of records; the first is the version block.
 * Every framing line ends in a bare LF; content bytes are opaque.
 *
 *   record (§1.1, §1.4)        size  meaning
 *   header line                H     `<url> <ip> <date> <mime> <length>` LF (§1.2)
 *   content                    C     exactly `length` bytes: the response as read from the socket (§1.5)
 *   separator                  1     LF (readers accept 0..n LF/CR here)
 *
 *   version block (§1.3)       `filedesc://<basename> <ip> <date> text/plain <n>` LF
 *                              `1 0 <origin>` LF
 *                              `URL IP-address Archive-date Content-type Archive-length` LF
 *                              n = the exact byte count of those two content lines (computed, never a constant)
 *
 *   `.arc.gz` (§1.6)           one gzip member per record, holding header line + content + separator;
 *                              a record's CDX offset/length are its member's offset and compressed size.
 *   plain `.arc`               a record's CDX offset/length are its header line's first byte and H + C.
 *
 * Field rules sherlock writes (§9): the URL without SP, CR, LF, controls or
 * non-ASCII (such bytes are percent-escaped, see `escapeUrlBytes`), the
 * server's IP, a 14-digit UTC date, the MIME type cut at whitespace, `;` or `,`
 * (`no-type` when absent), the decimal content length.
 *
 * Field rules sherlock reads: framing lines are bytes read as Latin-1, so every
 * byte survives as one character; v1 (5 fields) or v2 (10 fields) is decided
 * per line, never by the version block (§1.2, arc_v1_with_v2_header); spaces
 * inside the URL or the MIME are resolved by finding the IP and date tokens
 * (`parseArcHeader`); dates are kept raw (`normalizeArcDate` makes them 14
 * digits the way the Internet Archive does, then a valid instant).
 *
 * Crash safety lives in the writer: a record exists once its complete bytes
 * (its whole gzip member) are in the file; a partial trailing record is cut on
 * the next start, and only finished (renamed, fsynced) files are for readers.
 */

/** The v1 field-definition line, the second content line of every version block sherlock writes. */
export const V1_FIELDS = 'URL IP-address Archive-date Content-type Archive-length';

/** IA-family readers accept header lines up to 100 KiB (§1.2); longer is not a header. */
export const MAX_HEADER_LINE = 100 * 1024;

/** Default cap on one record's content, for readers and the writer alike. */
export const DEFAULT_MAX_RECORD_SIZE = 256 * 1024 * 1024;

export interface ArcHeader {
  /** The whole line as stored (Latin-1, without its LF). */
  line: string;
  /** The URL as stored (Latin-1 reading of the bytes), e.g. `http://example.com/` or `filedesc://x.arc.gz`. */
  url: string;
  ip: string;
  /** The archive date exactly as stored; see `normalizeArcDate`. */
  date: string;
  /** The content-type field as stored; may be empty, `no-type`, or hold spaces. */
  mime: string;
  /** The declared content length. */
  length: number;
  /** 1 for five-field lines, 2 for ten-field lines (§1.2). */
  version: 1 | 2;
  /** v2 only: result-code, checksum, location, offset and filename, as stored. */
  v2?: { resultCode: string; checksum: string; location: string; offset: string; filename: string };
}

export type HeaderParse = { header: ArcHeader } | { problem: string };

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const IPV6 = /^[0-9A-Fa-f]*:[0-9A-Fa-f]*:[0-9A-Fa-f:.]*$/;

/** Dotted quad, IPv6, or the placeholders old writers used (`None`, `-`). */
export function looksLikeIp(token: string): boolean {
  return IPV4.test(token) || IPV6.test(token) || token === 'None' || token === '-';
}

/** Eight or more digits (real files have 10 to 18), possibly followed by letters (cdx-writer/*_date*). */
function looksLikeDate(token: string): boolean {
  return /^\d{8,}[A-Za-z]*$/.test(token);
}

interface HeaderFields extends Omit<ArcHeader, 'line' | 'length'> {
  lengthToken: string;
}

/**
 * Splits one header line (without its LF) into fields by the rule of spec
 * §1.2: split on single spaces; the last token is the length; the IP and date
 * are the first adjacent pair of an IP-like and a date-like token (in either
 * order: IA's transposed_header has the date first); the URL is everything
 * before them and the MIME everything between them and the length. Ten tokens
 * with the IP and date in second and third place are a v2 line. A five-token
 * line whose IP or date looks like neither (hex_instead_of_date) is mapped by
 * position.
 */
function splitArcHeader(line: string): HeaderFields | string {
  const last = line.charCodeAt(line.length - 1);
  const t = (last === 0x0d || last === 0x09 || last === 0x20 ? line.replace(/[\r\t ]+$/, '') : line).split(' ');
  const n = t.length;
  if (n < 5) return `header line has ${n} fields, expected 5 (or 10)`;
  const lengthToken = t[n - 1]!;
  // The common line, what the loop below would find first, without its slicing and joining.
  if (n === 5 && looksLikeIp(t[1]!) && looksLikeDate(t[2]!)) return { url: t[0]!, ip: t[1]!, date: t[2]!, mime: t[3]!, lengthToken, version: 1 };
  if (n === 10 && looksLikeIp(t[1]!) && looksLikeDate(t[2]!)) {
    const v2 = { resultCode: t[4]!, checksum: t[5]!, location: t[6]!, offset: t[7]!, filename: t[8]! };
    return { url: t[0]!, ip: t[1]!, date: t[2]!, mime: t[3]!, lengthToken, version: 2, v2 };
  }
  for (let i = 1; i + 2 < n; i++) {
    const [a, b] = [t[i]!, t[i + 1]!];
    const ipFirst = looksLikeIp(a) && looksLikeDate(b);
    if (!ipFirst && !(looksLikeDate(a) && looksLikeIp(b))) continue;
    const mime = t.slice(i + 2, n - 1).join(' ');
    return { url: t.slice(0, i).join(' '), ip: ipFirst ? a : b, date: ipFirst ? b : a, mime, lengthToken, version: 1 };
  }
  if (n === 5) return { url: t[0]!, ip: t[1]!, date: t[2]!, mime: t[3]!, lengthToken, version: 1 };
  return 'header line has no IP address and date fields';
}

/** Parses one header line (without its LF); a problem names what is wrong with it. */
export function parseArcHeader(line: string): HeaderParse {
  const fields = splitArcHeader(line);
  if (typeof fields === 'string') return { problem: fields };
  const length = parseLength(fields.lengthToken);
  if (typeof length === 'string') return { problem: length };
  const header: ArcHeader = { line, url: fields.url, ip: fields.ip, date: fields.date, mime: fields.mime, length, version: fields.version };
  if (fields.v2 !== undefined) header.v2 = fields.v2;
  return { header };
}

function parseLength(token: string): number | string {
  if (/^\d+$/.test(token)) {
    const length = Number(token);
    return Number.isSafeInteger(length) ? length : `length ${token} is out of range`;
  }
  return /^-\d+$/.test(token) ? `negative length ${token}` : `length ${JSON.stringify(token)} is not a number`;
}

/**
 * Whether a line is credible as a header line when resynchronising after
 * damage: its URL starts with a scheme, its IP and date look like an IP and a
 * date (so the field-definition line and prose do not pass), and its length is
 * an integer; a negative one still counts, so that the damage is reported.
 */
export function looksLikeArcHeader(line: string): boolean {
  const fields = splitArcHeader(line);
  if (typeof fields === 'string') return false;
  return (
    /^-?\d+$/.test(fields.lengthToken) &&
    /^[A-Za-z][A-Za-z0-9+.-]*:/.test(fields.url) &&
    looksLikeIp(fields.ip) &&
    looksLikeDate(fields.date)
  );
}

export function isFiledesc(header: ArcHeader): boolean {
  return header.url.startsWith('filedesc:');
}

/**
 * A stored date as a valid instant in 14 digits (YYYYMMDDhhmmss): the one
 * date every view of a record shows, CDX `b` and WARC-Date alike
 * (docs/wayback.md "Dates"). The digits are taken as the Internet Archive's
 * CDX-Writer takes them: 10 digits + "0000", 12 + "00", 14 kept, 15–18 cut
 * to 14, 14 digits followed by letters cut to 14; anything else has none
 * (undefined). Then each field is clamped into its range as warcio's
 * `timestamp_to_datetime` clamps it (year 1900–2999, month 01–12, day from
 * 01 to the month's last, hour ≤ 23, minute and second ≤ 59): a WARC-Date
 * must be a real instant (pywb's indexer stops at `2015-12-00`), and the CDX
 * line must name the same one.
 */
export function normalizeArcDate(raw: string): string | undefined {
  const match = /^(\d+)([A-Za-z]*)$/.exec(raw);
  if (match === null) return undefined;
  const [digits, letters] = [match[1]!, match[2]!];
  let date: string | undefined;
  if (letters !== '') date = digits.length === 14 ? digits : undefined;
  else if (digits.length === 10) date = digits + '0000';
  else if (digits.length === 12) date = digits + '00';
  else if (digits.length >= 14 && digits.length <= 18) date = digits.slice(0, 14);
  return date === undefined ? undefined : clampDate(date);
}

/** 14 digits with each field clamped into its range (warcio's rule); unchanged when already an instant. */
function clampDate(d: string): string {
  const field = (at: number, length: number, min: number, max: number): number => Math.min(max, Math.max(min, Number(d.slice(at, at + length))));
  const year = field(0, 4, 1900, 2999);
  const month = field(4, 2, 1, 12);
  const day = field(6, 2, 1, new Date(Date.UTC(year, month, 0)).getUTCDate());
  const two = (n: number): string => String(n).padStart(2, '0');
  return String(year) + two(month) + two(day) + two(field(8, 2, 0, 23)) + two(field(10, 2, 0, 59)) + two(field(12, 2, 0, 59));
}

/** The date of a record that has none, in a file that has none either: the Unix epoch, a known "unknown". */
export const UNKNOWN_DATE = '19700101000000';

/**
 * The instant of a record (14 digits, valid): its own date, else its file's
 * (`fileDate`: the version block's, normalised), else UNKNOWN_DATE. Both the
 * CDX and the WARC export take it from here, so they always agree.
 */
export function captureDate(raw: string, fileDate: string | undefined): string {
  return normalizeArcDate(raw) ?? fileDate ?? UNKNOWN_DATE;
}

/**
 * The URL of a record as every view shows it: CR dropped, as IA's CDX-Writer
 * drops it (a CR inside an old ARC URL is line-end noise, not part of the
 * address: cdx-writer/carriage_return_in_url).
 */
export function arcUrl(url: string): string {
  return url.includes('\r') ? url.replace(/\r/g, '') : url;
}

/** A time as the 14-digit UTC archive date. */
export function arcDate(time: Date): string {
  const year = time.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) throw new RangeError(`date ${String(time)} has no 14-digit form`);
  const two = (n: number): string => String(n).padStart(2, '0');
  return (
    String(year).padStart(4, '0') +
    two(time.getUTCMonth() + 1) +
    two(time.getUTCDate()) +
    two(time.getUTCHours()) +
    two(time.getUTCMinutes()) +
    two(time.getUTCSeconds())
  );
}

/** The ARC content-type field of an HTTP Content-Type value: cut at whitespace, `;` or `,`; `no-type` when empty or not printable ASCII. */
export function arcMime(contentType: string | undefined): string {
  const type = (contentType ?? '').trim().split(/[\s;,]/, 1)[0]!;
  return /^[\x21-\x7e]+$/.test(type) ? type : 'no-type';
}

/** Bytes outside printable ASCII (SP, CR, LF, controls, DEL, ≥ 0x80) as %XX; everything else, `%` included, unchanged. */
export function escapeUrlBytes(bytes: Buffer): string {
  let out = '';
  for (const byte of bytes) {
    out += byte > 0x20 && byte < 0x7f ? String.fromCharCode(byte) : '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** One header line with its LF, as Latin-1 bytes. Fields must already be safe (see the writer). */
export function formatArcHeader(fields: { url: string; ip: string; date: string; mime: string; length: number }): Buffer {
  return Buffer.from(`${fields.url} ${fields.ip} ${fields.date} ${fields.mime} ${fields.length}\n`, 'latin1');
}

/**
 * The version block's header line and content (no separator): content is
 * `1 0 <origin>` LF + the v1 field line LF, its length counted, not assumed (§1.3).
 */
export function versionBlock(name: string, ip: string, date: string, origin: string): { line: Buffer; content: Buffer } {
  const content = Buffer.from(`1 0 ${origin}\n${V1_FIELDS}\n`, 'latin1');
  return { line: formatArcHeader({ url: `filedesc://${name}`, ip, date, mime: 'text/plain', length: content.length }), content };
}
