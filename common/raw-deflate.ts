/**
 * Deflating many small buffers into raw deflate streams (RFC 1951) with one
 * zlib engine, as the cards and bucket bodies the indexer and the gatherer
 * write need: the deflating side of raw-inflate.ts, for the same reason
 * (`zlib.deflateRawSync` builds and frees an engine, with its 256 KiB of
 * window and hash tables, for every call). The engine is reset between
 * streams, so each output is byte for byte what `deflateRawSync` at the same
 * level makes. The engine writes the zlib format (RFC 1950), whose trailer is
 * the input's Adler-32: buckets store it, and zlib computes it faster than
 * a loop in JavaScript. deflate() strips the two header bytes and the
 * trailer and keeps the latter in `adler32`. GzipDeflater makes whole gzip
 * members the same way (the gatherer's ARC records, framed in its parse
 * workers).
 */

import * as zlib from 'node:zlib';
import { codeNames, type ZlibHandle } from './raw-inflate.js';

const FIRST_SCRATCH = 64 * 1024;
/** Bytes around the raw stream in the zlib format: CMF and FLG (no preset dictionary), and the Adler-32. */
const ZLIB_HEADER = 2;
const ZLIB_TRAILER = 4;

/** One zlib deflating engine (zlib or gzip format), reset before each input, so each output is what a fresh one makes. */
class DeflateEngine {
  private handle: ZlibHandle;
  /** [output bytes left, input bytes left] after each writeSync. */
  private state: Uint32Array;
  private scratch = Buffer.allocUnsafe(FIRST_SCRATCH);
  private failure: Error | undefined;

  constructor(engine: zlib.Deflate | zlib.Gzip) {
    const internals = engine as unknown as { _handle: ZlibHandle; _writeState: Uint32Array };
    this.handle = internals._handle;
    this.state = internals._writeState;
    this.handle.onerror = (message, errno) => {
      this.failure = new Error(`deflate: ${message} (${codeNames[String(errno)] ?? 'Z_ERRNO'})`);
    };
  }

  /** `input` compressed whole; a view into the scratch, valid until the next call. */
  run(input: Uint8Array): Buffer {
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
    return this.scratch.subarray(0, produced);
  }
}

export class RawDeflater {
  private readonly engine: DeflateEngine;
  /** Adler-32 of the input of the last deflate(). */
  adler32 = 1;

  constructor(level: number) {
    this.engine = new DeflateEngine(zlib.createDeflate({ level }));
  }

  /** `input` as one raw deflate stream, in a buffer of its own; its Adler-32 is in `adler32` after. */
  deflate(input: Uint8Array): Buffer {
    const out = this.engine.run(input);
    this.adler32 = out.readUInt32BE(out.length - ZLIB_TRAILER);
    return Buffer.from(out.subarray(ZLIB_HEADER, out.length - ZLIB_TRAILER));
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
    return Buffer.from(this.engine.run(input));
  }
}
