/**
 * Undoes a response's Content-Encoding (RFC 9110 §8.4) before the body is
 * parsed. The ARC keeps the body as received; only the parser sees the
 * decoded bytes.
 *
 * Codings: `gzip` and `x-gzip` (RFC 1952; members one after another are one
 * stream), `deflate` (RFC 9110 §8.4.1.2 says zlib, RFC 1950; servers that send
 * raw RFC 1951 data are recognised by the missing zlib header, as browsers
 * do), `br` (RFC 7932) and `identity`. Names are case-insensitive. A list such
 * as "gzip, br" names the codings in the order they were applied, so they are
 * undone from the last to the first.
 *
 * Contract:
 *  - The decoded data never exceeds `maxBytes`. Decoding streams in
 *    CHUNK_SIZE pieces and stops as soon as the cap is reached, so a
 *    compression bomb costs at most `maxBytes` plus one chunk of memory per
 *    layer; the result is then the first `maxBytes` bytes and `truncated`.
 *  - A stream that ends early (the fetcher cut the body at its own cap, or an
 *    inner layer was cut at `maxBytes`) is not an error: what decoded is
 *    returned with `truncated`. Brotli cannot tell an early end from a proper
 *    one (node:zlib reports neither), so a cut brotli body is not flagged.
 *  - Junk after a complete gzip member is ignored, and gzip trailers
 *    (CRC-32, size) are not checked, as browsers do.
 *  - Anything else is an error, a SherlockError SHERLOCK_CORRUPT_GZIP with the
 *    URL as its place: a coding we do not know (`compress`, `zstd`, …; the
 *    message says "unsupported content coding") or data that does not decode
 *    (the message names the coding and zlib's reason). The caller stores such
 *    a body and does not parse it.
 * Truncation is a result, never an error: no SHERLOCK_TOO_LARGE is thrown here.
 *
 * decodeContent is asynchronous because only node:zlib's streaming decoders
 * can stop at the cap and keep what came before it (the one-shot
 * inflateSync with maxOutputLength throws the output away); they run on the
 * thread pool, off the event loop.
 */

import type { Transform } from 'node:stream';
import { createBrotliDecompress, createInflate, createInflateRaw } from 'node:zlib';
import { isSherlockError, SherlockError } from '../errors.js';
import { hasGzipMagic, parseGzipHeader, type GzipHeader } from './gzip-member.js';

export type ContentCoding = 'gzip' | 'deflate' | 'br' | 'identity';

export interface Decoded {
  data: Buffer;
  /** The data stops short of what the body encodes (cap reached, or the body itself was cut). */
  truncated: boolean;
}

/** Output piece size: bounds the overshoot past the cap, and the thread-pool round trips per body. */
const CHUNK_SIZE = 64 * 1024;
/** CRC-32 and ISIZE after each gzip member's deflate stream. */
const GZIP_TRAILER = 8;

const CODING_NAMES = new Map<string, ContentCoding>([
  ['gzip', 'gzip'],
  ['x-gzip', 'gzip'],
  ['deflate', 'deflate'],
  ['br', 'br'],
  ['identity', 'identity'],
]);

/** The codings of a Content-Encoding header in the order applied; empty for none or identity only. */
export function contentCodings(header: string | undefined, url?: string): ContentCoding[] {
  if (header === undefined) return [];
  const codings: ContentCoding[] = [];
  for (const token of header.split(',')) {
    const name = token.trim().toLowerCase();
    if (name === '') continue;
    const coding = CODING_NAMES.get(name);
    if (coding === undefined) {
      throw new SherlockError('SHERLOCK_CORRUPT_GZIP', `unsupported content coding ${JSON.stringify(name.slice(0, 40))}`, place(url));
    }
    if (coding !== 'identity') codings.push(coding);
  }
  return codings;
}

/**
 * Decodes `body` sent with Content-Encoding `header` into at most `maxBytes`
 * bytes. `url` only names the place in errors.
 */
export async function decodeContent(body: Buffer, header: string | undefined, maxBytes: number, url?: string): Promise<Decoded> {
  if (!Number.isInteger(maxBytes) || maxBytes < 0) throw new RangeError(`bad decoded size cap ${maxBytes}`);
  const codings = contentCodings(header, url);
  let data = body;
  let truncated = false;
  for (let i = codings.length - 1; i >= 0; i--) {
    const layer = await decodeLayer(data, codings[i]!, maxBytes, url);
    data = layer.data;
    truncated ||= layer.truncated;
  }
  if (data.length > maxBytes) return { data: data.subarray(0, maxBytes), truncated: true };
  return { data, truncated };
}

function place(url: string | undefined): { url?: string } {
  return url === undefined ? {} : { url };
}

/** RFC 1950 §2.2: CM 8, a window of at most 32 KiB, and CMF·256 + FLG a multiple of 31. */
function hasZlibHeader(data: Buffer): boolean {
  if (data.length < 2) return false;
  const cmf = data[0]!;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | data[1]!) % 31 === 0;
}

interface Inflated extends Decoded {
  /** Input bytes the decoder used; what follows its stream's end is left. */
  consumed: number;
}

/**
 * Runs `input` through a node:zlib decoder, keeping at most `maxBytes` of
 * output. An input that ends inside the stream (Z_BUF_ERROR) gives what was
 * decoded, truncated.
 */
function inflate(stream: Transform & { bytesWritten: number }, input: Buffer, maxBytes: number, coding: string, url: string | undefined): Promise<Inflated> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const finish = (truncated: boolean): void => {
      settled = true;
      resolve({ data: Buffer.concat(chunks, total), truncated, consumed: stream.bytesWritten });
    };
    stream.on('data', (chunk: Buffer) => {
      if (settled) return;
      const room = maxBytes - total;
      if (chunk.length >= room) {
        chunks.push(chunk.subarray(0, room));
        total += room;
        // Stop decoding: a bomb must not run on once the cap is reached.
        stream.destroy();
        // Exactly at the cap the stream may have ended too; calling it cut is the safe side.
        finish(true);
        return;
      }
      chunks.push(chunk);
      total += chunk.length;
    });
    stream.on('end', () => {
      if (!settled) finish(false);
    });
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (settled) return;
      if (err.code === 'Z_BUF_ERROR') return finish(true); // "unexpected end of file": the body was cut
      settled = true;
      reject(new SherlockError('SHERLOCK_CORRUPT_GZIP', `${coding} content does not decode: ${err.message}`, place(url), { cause: err }));
    });
    stream.end(input);
  });
}

/**
 * RFC 1952 members one after another, each a header (parsed by
 * common/archive/gzip-member.ts), a raw deflate stream and an 8-byte trailer (not
 * checked: a browser shows such a page too). Whatever follows a member and
 * does not start with the gzip magic is junk and ignored.
 */
async function gunzip(data: Buffer, maxBytes: number, url: string | undefined): Promise<Decoded> {
  const parts: Buffer[] = [];
  let total = 0;
  let pos = 0;
  do {
    let header: GzipHeader | undefined;
    try {
      header = parseGzipHeader(data.subarray(pos), { file: 'body', offset: pos });
    } catch (err) {
      if (!isSherlockError(err)) throw err;
      throw new SherlockError(err.code, `gzip content does not decode at byte ${pos}: ${err.message}`, place(url), { cause: err });
    }
    if (header === undefined) return { data: Buffer.concat(parts, total), truncated: data.length > pos };
    const member = await inflate(createInflateRaw({ chunkSize: CHUNK_SIZE }), data.subarray(pos + header.size), maxBytes - total, 'gzip', url);
    parts.push(member.data);
    total += member.data.length;
    if (member.truncated) return { data: Buffer.concat(parts, total), truncated: true };
    pos += header.size + member.consumed + GZIP_TRAILER;
  } while (hasGzipMagic(data, pos));
  return { data: Buffer.concat(parts, total), truncated: false };
}

function decodeLayer(data: Buffer, coding: ContentCoding, maxBytes: number, url: string | undefined): Promise<Decoded> {
  const options = { chunkSize: CHUNK_SIZE };
  switch (coding) {
    case 'identity':
      return Promise.resolve({ data, truncated: false });
    case 'gzip':
      return gunzip(data, maxBytes, url);
    case 'deflate':
      return inflate(hasZlibHeader(data) ? createInflate(options) : createInflateRaw(options), data, maxBytes, coding, url);
    case 'br':
      return inflate(createBrotliDecompress(options), data, maxBytes, coding, url);
  }
}
