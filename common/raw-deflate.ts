/**
 * Deflating many small buffers, as the cards and bucket bodies the indexer
 * and the gatherer write, the gatherer's ARC records and the Nutch export's
 * record values need: the deflating side of raw-inflate.ts. The compressor is
 * libdeflate's (common/libdeflate.ts), not zlib's:
 *
 * - about 1.9 times zlib's speed at level 1 on HTML and text here (11.8
 *   against 22 µs for 2.3 KB), with slightly smaller output (0.230 of the
 *   input against 0.237), and faster at every level;
 * - whole-buffer and stateless: an output depends only on its input and
 *   level, whatever was deflated before. A reused zlib engine keeps the
 *   bytes of earlier streams in its window (deflateReset() does not clear
 *   it) and its match finder reads past the input's end, so its outputs
 *   depended on history unless the window was deflated over with zeros
 *   first; and `zlib.deflateSync` builds and frees an engine, with its 256
 *   KiB of window and hash tables, for every call.
 *
 * The formats are the standard ones, read by any inflater (zlib's, Hadoop's,
 * Java's): deflate() makes a raw deflate stream (RFC 1951) and keeps the
 * input's Adler-32, which buckets store; zlib() a whole zlib stream (RFC
 * 1950), as Hadoop's DefaultCodec writes; GzipDeflater whole gzip members
 * (RFC 1952) with libdeflate's header (no name, mtime 0, OS 255 "unknown").
 * Levels are libdeflate's, 0–12: 1–9 spend effort about as zlib's do, at
 * least zlib's ratio each.
 */

import { FORMAT, libdeflate, type Compressor, type Format } from './libdeflate.js';

const FIRST_SCRATCH = 64 * 1024;
/** Bytes around the raw stream in the zlib format: CMF and FLG (no preset dictionary), and the Adler-32. */
const ZLIB_HEADER = 2;
const ZLIB_TRAILER = 4;
/** libdeflate's default level, as zlib's Z_DEFAULT_COMPRESSION. */
const DEFAULT_LEVEL = 6;

/** One compressor at one level, writing into a scratch buffer that grows to the largest bound met. */
class Deflater {
  private readonly compressor: Compressor;
  private scratch = Buffer.allocUnsafe(FIRST_SCRATCH);

  constructor(
    level: number,
    private readonly format: Format,
  ) {
    if (!Number.isInteger(level) || level < 0 || level > 12) throw new RangeError(`deflate level ${level}: 0–12 expected`);
    this.compressor = libdeflate.compressor(level);
  }

  /** `input` compressed whole; a view into the scratch, valid until the next call. */
  stream(input: Uint8Array): Buffer {
    const bound = libdeflate.bound(this.compressor, this.format, input.length);
    if (bound > this.scratch.length) this.scratch = Buffer.allocUnsafe(Math.max(bound, 2 * this.scratch.length));
    const produced = libdeflate.compress(this.compressor, this.format, input, this.scratch);
    // The bound is libdeflate's own: too little room would be a bug in it, nothing to recover.
    if (produced === 0) throw new Error(`deflate: ${input.length} bytes did not fit libdeflate's bound of ${bound}`);
    return this.scratch.subarray(0, produced);
  }
}

export class RawDeflater {
  private readonly deflater: Deflater;
  /** Adler-32 of the input of the last deflate() or zlib(). */
  adler32 = 1;

  constructor(level: number) {
    this.deflater = new Deflater(level, FORMAT.zlib);
  }

  /** `input` as one raw deflate stream, in a buffer of its own; its Adler-32 is in `adler32` after. */
  deflate(input: Uint8Array): Buffer {
    const out = this.stream(input);
    return Buffer.from(out.subarray(ZLIB_HEADER, out.length - ZLIB_TRAILER));
  }

  /** `input` as one zlib stream (header, raw deflate, Adler-32), in a buffer of its own. */
  zlib(input: Uint8Array): Buffer {
    return Buffer.from(this.stream(input));
  }

  private stream(input: Uint8Array): Buffer {
    const out = this.deflater.stream(input);
    this.adler32 = out.readUInt32BE(out.length - ZLIB_TRAILER);
    return out;
  }
}

/** Gzip members (RFC 1952: header, deflate, CRC-32 and size). */
export class GzipDeflater {
  private readonly deflater: Deflater;

  /** `level` undefined: the default (6). */
  constructor(level?: number) {
    this.deflater = new Deflater(level ?? DEFAULT_LEVEL, FORMAT.gzip);
  }

  /** `input` as one gzip member, in a buffer of its own. */
  member(input: Uint8Array): Buffer {
    return Buffer.from(this.deflater.stream(input));
  }
}
