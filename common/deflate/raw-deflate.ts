/**
 * Deflating many small buffers, as the cards and bucket bodies the indexer
 * and the gatherer write, the gatherer's ARC records and the Nutch export's
 * record values need: the deflating side of raw-inflate.ts. The compressor is
 * libdeflate's (common/deflate/libdeflate.ts), not zlib's:
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
 *
 * Without the binding (common/deflate/libdeflate.ts: not built, not loading, or
 * SHERLOCK_NATIVE=0) the same classes deflate with node:zlib's one-shot
 * `deflateSync` and `gzipSync`: a fresh engine a call, so an output still
 * depends only on its input and level, at zlib's speed (about half
 * libdeflate's, plus the engine's set-up per call). Levels 10–12 become
 * zlib's 9, its best; 0–9 are zlib's own. The streams are as valid and read
 * back to the same bytes; they are not libdeflate's bytes (gzip members carry
 * zlib's header: OS 3 "Unix" instead of 255).
 */

import { deflateSync, gzipSync } from 'node:zlib';
import { FORMAT, libdeflate, type Addon, type Compressor, type Format } from './libdeflate.js';

const FIRST_SCRATCH = 64 * 1024;
/** Bytes around the raw stream in the zlib format: CMF and FLG (no preset dictionary), and the Adler-32. */
const ZLIB_HEADER = 2;
const ZLIB_TRAILER = 4;
/** libdeflate's default level, as zlib's Z_DEFAULT_COMPRESSION. */
const DEFAULT_LEVEL = 6;

/** zlib's best level: libdeflate's 10–12 map to it. */
const ZLIB_MAX_LEVEL = 9;

/** Which path a deflater takes: by default the one in use (common/deflate/libdeflate.ts); `portable` forces node:zlib (tests compare the two). */
export interface DeflaterOptions {
  portable?: boolean;
}

interface Deflater {
  /** `input` compressed whole; may be a view into a scratch buffer, valid until the next call. */
  stream(input: Uint8Array): Buffer;
}

function deflater(level: number, format: Format, options: DeflaterOptions | undefined): Deflater {
  if (!Number.isInteger(level) || level < 0 || level > 12) throw new RangeError(`deflate level ${level}: 0–12 expected`);
  if (libdeflate !== undefined && options?.portable !== true) return new NativeDeflater(libdeflate, level, format);
  return new ZlibDeflater(level, format);
}

/** One libdeflate compressor at one level, writing into a scratch buffer that grows to the largest bound met. */
class NativeDeflater implements Deflater {
  private readonly compressor: Compressor;
  private scratch = Buffer.allocUnsafe(FIRST_SCRATCH);

  constructor(
    private readonly addon: Addon,
    level: number,
    private readonly format: Format,
  ) {
    this.compressor = addon.compressor(level);
  }

  stream(input: Uint8Array): Buffer {
    const bound = this.addon.bound(this.compressor, this.format, input.length);
    if (bound > this.scratch.length) this.scratch = Buffer.allocUnsafe(Math.max(bound, 2 * this.scratch.length));
    const produced = this.addon.compress(this.compressor, this.format, input, this.scratch);
    // The bound is libdeflate's own: too little room would be a bug in it, nothing to recover.
    if (produced === 0) throw new Error(`deflate: ${input.length} bytes did not fit libdeflate's bound of ${bound}`);
    return this.scratch.subarray(0, produced);
  }
}

/** node:zlib's one-shot functions: an engine of its own a call, so no history between streams. */
class ZlibDeflater implements Deflater {
  private readonly options: { level: number };

  constructor(
    level: number,
    private readonly format: Format,
  ) {
    this.options = { level: Math.min(level, ZLIB_MAX_LEVEL) };
  }

  stream(input: Uint8Array): Buffer {
    return this.format === FORMAT.gzip ? gzipSync(input, this.options) : deflateSync(input, this.options);
  }
}

export class RawDeflater {
  private readonly deflater: Deflater;
  /** Adler-32 of the input of the last deflate() or zlib(). */
  adler32 = 1;

  constructor(level: number, options?: DeflaterOptions) {
    this.deflater = deflater(level, FORMAT.zlib, options);
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
  constructor(level?: number, options?: DeflaterOptions) {
    this.deflater = deflater(level ?? DEFAULT_LEVEL, FORMAT.gzip, options);
  }

  /** `input` as one gzip member, in a buffer of its own. */
  member(input: Uint8Array): Buffer {
    return Buffer.from(this.deflater.stream(input));
  }
}
