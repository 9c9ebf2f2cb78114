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
 * trailer and keeps the latter in `adler32`.
 */

import * as zlib from 'node:zlib';
import { codeNames, type ZlibHandle } from './raw-inflate.js';

const FIRST_SCRATCH = 64 * 1024;
/** Bytes around the raw stream in the zlib format: CMF and FLG (no preset dictionary), and the Adler-32. */
const ZLIB_HEADER = 2;
const ZLIB_TRAILER = 4;

export class RawDeflater {
  private handle: ZlibHandle;
  /** [output bytes left, input bytes left] after each writeSync. */
  private state: Uint32Array;
  private scratch = Buffer.allocUnsafe(FIRST_SCRATCH);
  private failure: Error | undefined;
  /** Adler-32 of the input of the last deflate(). */
  adler32 = 1;

  constructor(level: number) {
    const engine = zlib.createDeflate({ level }) as unknown as { _handle: ZlibHandle; _writeState: Uint32Array };
    this.handle = engine._handle;
    this.state = engine._writeState;
    this.handle.onerror = (message, errno) => {
      this.failure = new Error(`deflate: ${message} (${codeNames[String(errno)] ?? 'Z_ERRNO'})`);
    };
  }

  /** `input` as one raw deflate stream, in a buffer of its own; its Adler-32 is in `adler32` after. */
  deflate(input: Uint8Array): Buffer {
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
    this.adler32 = this.scratch.readUInt32BE(produced - ZLIB_TRAILER);
    return Buffer.from(this.scratch.subarray(ZLIB_HEADER, produced - ZLIB_TRAILER));
  }
}
