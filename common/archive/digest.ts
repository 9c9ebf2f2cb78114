/**
 * Content digests as Wayback indexes and WARC headers carry them
 * (spec/arc-cdx.md §4): SHA-1, written in RFC 4648 base32 (upper case; 20
 * bytes make exactly 32 characters, so no padding), e.g. the empty input
 * gives `3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ`. Also the buckets' MD5 body
 * checksum (`C`), in hex, so both digests are made in one place.
 *
 * The payload of an HTTP record is what follows the first empty line of the
 * stored response (the first CRLFCRLF or LFLF, whichever comes first), as
 * stored: still content-encoded. A response without an empty line has an empty
 * payload. Content that does not start with a status line (DNS answers, SSH
 * banners, the ARC version block) is digested whole. Which content counts as
 * HTTP is decided by `httpStatus`, so the CDX status field and the digest rule
 * always agree.
 */

import { createHash, hash } from 'node:crypto';

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** SHA-1 of zero bytes, what every empty payload carries. */
export const EMPTY_SHA1_BASE32 = '3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ';

/** RFC 4648 §6 base32, upper case, padded with `=` to a multiple of 8 characters. */
export function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += BASE32_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32_ALPHABET[(value << (5 - bits)) & 31];
  return out.padEnd(Math.ceil(out.length / 8) * 8, '=');
}

const BASE32_CODES = Buffer.from(BASE32_ALPHABET, 'latin1');
const base32Scratch = Buffer.allocUnsafe(32);

/**
 * The 20 bytes of a SHA-1 as 32 base32 characters, five bytes (eight
 * characters) at a time, written as bytes and read as one string: adding
 * characters one by one made 32 strings per digest.
 */
function digestBase32(d: Buffer): string {
  const out = base32Scratch;
  for (let i = 0, o = 0; i < 20; i += 5, o += 8) {
    // 40 bits: the high 8 bits and the low 32.
    const hi = d[i]!;
    const lo = d.readUInt32BE(i + 1);
    out[o] = BASE32_CODES[hi >>> 3]!;
    out[o + 1] = BASE32_CODES[((hi & 7) << 2) | (lo >>> 30)]!;
    out[o + 2] = BASE32_CODES[(lo >>> 25) & 31]!;
    out[o + 3] = BASE32_CODES[(lo >>> 20) & 31]!;
    out[o + 4] = BASE32_CODES[(lo >>> 15) & 31]!;
    out[o + 5] = BASE32_CODES[(lo >>> 10) & 31]!;
    out[o + 6] = BASE32_CODES[(lo >>> 5) & 31]!;
    out[o + 7] = BASE32_CODES[lo & 31]!;
  }
  return out.toString('latin1', 0, 32);
}

// crypto.hash is one call into OpenSSL; createHash builds a Hash object (and its stream machinery) per digest.
export function sha1Base32(data: Uint8Array): string {
  return digestBase32(hash('sha1', data, 'buffer'));
}

/** MD5 in lower-case hex: the bucket's `C` checksum of a body. */
export function md5Hex(data: Uint8Array): string {
  return createHash('md5').update(data).digest('hex');
}

const isDigit = (byte: number | undefined): boolean => byte !== undefined && byte >= 0x30 && byte <= 0x39;

/**
 * The status code when the content starts with an HTTP status line, else
 * undefined: `HTTP/1.1 200 OK`, `HTTP/2 404`, and IA's bare `HTTP 502 Bad
 * Gateway` (spec §1.5), i.e. `^HTTP(/\d+(\.\d+)?)? +(\d{3})(?=[ \t\r\n]|$)`
 * over the first 32 bytes, matched byte by byte (this runs for every record).
 */
export function httpStatus(content: Uint8Array): number | undefined {
  const end = Math.min(content.length, 32);
  if (end < 8 || content[0] !== 0x48 || content[1] !== 0x54 || content[2] !== 0x54 || content[3] !== 0x50) return undefined;
  let at = 4;
  if (content[at] === 0x2f) {
    if (++at >= end || !isDigit(content[at])) return undefined;
    while (at < end && isDigit(content[at])) at++;
    if (content[at] === 0x2e && at + 1 < end && isDigit(content[at + 1])) {
      at++;
      while (at < end && isDigit(content[at])) at++;
    }
  }
  if (at >= end || content[at] !== 0x20) return undefined;
  while (at < end && content[at] === 0x20) at++;
  if (at + 3 > end || !isDigit(content[at]) || !isDigit(content[at + 1]) || !isDigit(content[at + 2])) return undefined;
  const after = at + 3 === end ? undefined : content[at + 3];
  if (after !== undefined && after !== 0x20 && after !== 0x09 && after !== 0x0d && after !== 0x0a) return undefined;
  return (content[at]! - 0x30) * 100 + (content[at + 1]! - 0x30) * 10 + (content[at + 2]! - 0x30);
}

const CRLFCRLF = Buffer.from('\r\n\r\n');
const LFLF = Buffer.from('\n\n');

/** Where the payload of an HTTP response starts: after its first empty line, or at the end when there is none. */
export function httpPayloadOffset(content: Uint8Array): number {
  const bytes = Buffer.from(content.buffer, content.byteOffset, content.length);
  const crlf = bytes.indexOf(CRLFCRLF);
  // LFLF cannot start after the first CRLFCRLF ends, so search only up to it.
  const lf = bytes.subarray(0, crlf === -1 ? bytes.length : crlf + CRLFCRLF.length).indexOf(LFLF);
  if (lf !== -1 && (crlf === -1 || lf < crlf)) return lf + LFLF.length;
  return crlf === -1 ? bytes.length : crlf + CRLFCRLF.length;
}

/** Where the digested payload starts: after the HTTP head, or 0 for content that is not HTTP. */
export function payloadOffset(content: Uint8Array, status = httpStatus(content)): number {
  return status === undefined ? 0 : httpPayloadOffset(content);
}

/** The CDX `k` / WARC-Payload-Digest value (without `sha1:`) of one record's content (spec §4); `payloadAt` when already known. */
export function payloadDigest(content: Uint8Array, payloadAt = payloadOffset(content)): string {
  return sha1Base32(payloadAt === 0 ? content : content.subarray(payloadAt));
}
