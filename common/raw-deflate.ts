/**
 * Deflating many small buffers with one zlib engine, as the cards and bucket
 * bodies the indexer and the gatherer write and the Nutch export's record
 * values need: the deflating side of raw-inflate.ts, for the same reason
 * (`zlib.deflateSync` builds and frees an engine, with its 256 KiB of window
 * and hash tables, for every call: ~10 µs a call whatever the size, and the
 * garbage of a stream object). deflate() makes a raw deflate stream (RFC
 * 1951) and keeps the input's Adler-32, which buckets store and zlib computes
 * faster than a loop in JavaScript; zlib() makes a whole zlib stream (RFC
 * 1950), as Hadoop's DefaultCodec writes. GzipDeflater makes whole gzip
 * members the same way (the gatherer's ARC records, framed in its parse
 * workers).
 *
 * Each output is byte for byte what `deflateRawSync` / `deflateSync` / `gzipSync` at the
 * same level makes with a fresh engine. A reset alone does not give that:
 * zlib's deflateReset() keeps the window's bytes, and the match finder reads
 * up to MAX_MATCH (258) bytes past the end of the input when it compares
 * candidates near the end (the length is cut to the input after, but which
 * candidate wins, or which hash chain a last short string lands in, can
 * differ). A fresh engine has zeros there (zlib zeroes WIN_INIT bytes past the
 * data it reads, Chromium's zlib the whole window), a reset one the bytes of
 * earlier streams: about one value in 1,500 of the Nutch export deflated
 * differently. So before a stream shorter than the window bytes earlier
 * streams dirtied, the engine deflates zeros over [0, input + WINDOW_MARGIN)
 * and resets again (~2 µs for a few KiB). Inputs longer than the window fill
 * it whole before any match is looked for, so only their own bytes are read.
 */

import * as zlib from 'node:zlib';
import { codeNames, type ZlibHandle } from './raw-inflate.js';

const FIRST_SCRATCH = 64 * 1024;
/** Bytes around the raw stream in the zlib format: CMF and FLG (no preset dictionary), and the Adler-32. */
const ZLIB_HEADER = 2;
const ZLIB_TRAILER = 4;
/** zlib's window buffer at windowBits 15 (2 × 32 KiB): where input bytes land, from 0 after a reset. */
const WINDOW_BYTES = 2 * 32 * 1024;
/** Bytes past the input the match finder may read: MAX_MATCH, and some for wide compares and hashes. */
const WINDOW_MARGIN = 512;
const ZEROS = Buffer.alloc(WINDOW_BYTES + WINDOW_MARGIN);

/** One zlib deflating engine (zlib or gzip format), reset before each input, so each output is what a fresh one makes. */
class DeflateEngine {
  private handle: ZlibHandle;
  /** [output bytes left, input bytes left] after each writeSync. */
  private state: Uint32Array;
  private scratch = Buffer.allocUnsafe(FIRST_SCRATCH);
  private failure: Error | undefined;
  /** The window's bytes from here on are zero (as in a fresh engine). */
  private dirty = 0;

  constructor(engine: zlib.Deflate | zlib.Gzip) {
    const internals = engine as unknown as { _handle: ZlibHandle; _writeState: Uint32Array };
    this.handle = internals._handle;
    this.state = internals._writeState;
    this.handle.onerror = (message, errno) => {
      this.failure = new Error(`deflate: ${message} (${codeNames[String(errno)] ?? 'Z_ERRNO'})`);
    };
  }

  /** `input` compressed whole, as a fresh engine would; a view into the scratch, valid until the next call. */
  stream(input: Uint8Array): Buffer {
    if (this.dirty > input.length) {
      const zeros = Math.min(this.dirty, input.length + WINDOW_MARGIN);
      this.run(ZEROS.subarray(0, zeros));
      if (zeros === this.dirty) this.dirty = 0;
    }
    const produced = this.run(input);
    this.dirty = Math.max(this.dirty, Math.min(input.length, WINDOW_BYTES));
    return this.scratch.subarray(0, produced);
  }

  private run(input: Uint8Array): number {
    this.handle.reset();
    let inOff = 0;
    let produced = 0;
    for (;;) {
      if (produced === this.scratch.length) {
        const bigger = Buffer.allocUnsafe(2 * this.scratch.length);
        this.scratch.copy(bigger);
        this.scratch = bigger;
      }
      const outLen = this.scratch.length - produced;
      this.failure = undefined;
      this.handle.writeSync(zlib.constants.Z_FINISH, input, inOff, input.length - inOff, this.scratch, produced, outLen);
      // Deflating memory it owns fails only on a zlib bug: nothing to recover.
      if (this.failure !== undefined) throw this.failure;
      const outLeft = this.state[0]!;
      produced += outLen - outLeft;
      inOff = input.length - this.state[1]!;
      // Output space left over means the stream ended (Z_STREAM_END); none means it may go on.
      if (outLeft > 0) break;
    }
    return produced;
  }
}

export class RawDeflater {
  private readonly engine: DeflateEngine;
  /** Adler-32 of the input of the last deflate() or zlib(). */
  adler32 = 1;

  constructor(level: number) {
    this.engine = new DeflateEngine(zlib.createDeflate({ level }));
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
    const out = this.engine.stream(input);
    this.adler32 = out.readUInt32BE(out.length - ZLIB_TRAILER);
    return out;
  }
}

/** Gzip members (RFC 1952: header, deflate, CRC-32 and size) on one reused engine: byte for byte what `gzipSync` makes. */
export class GzipDeflater {
  private readonly engine: DeflateEngine;

  /** `level` undefined: zlib's default. */
  constructor(level?: number) {
    this.engine = new DeflateEngine(zlib.createGzip(level === undefined ? {} : { level }));
  }

  /** `input` as one gzip member, in a buffer of its own. */
  member(input: Uint8Array): Buffer {
    return Buffer.from(this.engine.stream(input));
  }
}
