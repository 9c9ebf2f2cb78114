/**
 * Inflating many small raw deflate streams (RFC 1951), as record-per-member
 * archives and buckets need: one stream per record.
 *
 * libdeflate's decompressor (common/deflate/libdeflate.ts) inflates first: whole
 * buffer into a scratch buffer that grows as needed, about twice zlib's
 * speed. When it fails (damage, or the input ending inside the stream, which
 * it does not tell apart) zlib's engine inflates again, for the result and
 * error codes below. `zlib.inflateRawSync` builds a new engine (32 KiB
 * window, state, 16 KiB output chunks) for every call and closes it after;
 * for records of a few KiB that set-up and its garbage cost more than the
 * inflating itself. Node offers no public synchronous way to reuse an
 * engine, so this drives the engine's native handle the way
 * `inflateRawSync` does internally (`writeSync` with `_writeState`
 * reporting the bytes left, `reset` between streams), one engine per
 * inflater. Without the binding (common/deflate/libdeflate.ts: not built, not
 * loading, or SHERLOCK_NATIVE=0) that engine inflates every stream: the same
 * bytes, consumed counts and error codes, at zlib's speed.
 *
 * Results: the inflated bytes (a buffer of their own, or with `borrow` a view of
 * the scratch buffer, valid until the inflater's next call: what a caller that
 * is done with the bytes before then saves in copying and garbage) and how many input bytes
 * the stream used, so that what follows it can be found; undefined when the
 * input ends before the stream does. A stream inflating past `maxOutput` is
 * an `InflateError` with code ERR_BUFFER_TOO_LARGE; damage is an
 * `InflateError` with zlib's code (Z_DATA_ERROR …), as Node's own errors have.
 */

import * as zlib from 'node:zlib';
import { libdeflate, RESULT, type Addon, type Decompressor } from './libdeflate.js';

// zlib.codes maps errno numbers to names too; the typings have only the names.
export const codeNames = (zlib as unknown as { codes: Record<string, string> }).codes;

/** The parts of Node's zlib binding used here (and by raw-deflate.ts); stable since Node 12, not in the typings. */
export interface ZlibHandle {
  writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void;
  reset(): void;
  onerror: (message: string, errno: number) => void;
}

export class InflateError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export interface Inflated {
  data: Buffer;
  /** Input bytes the deflate stream took, from the start of the input. */
  consumed: number;
}

const FIRST_SCRATCH = 64 * 1024;

export class RawInflater {
  private handle: ZlibHandle;
  /** [output bytes left, input bytes left] after each writeSync. */
  private state: Uint32Array;
  private scratch = Buffer.allocUnsafe(FIRST_SCRATCH);
  private failure: InflateError | undefined;
  /** The binding and its decompressor; undefined on the portable path. */
  private readonly native: { addon: Addon; decompressor: Decompressor } | undefined;
  /** [input bytes taken, output bytes] of the last libdeflate call. */
  private readonly used = new Float64Array(2);

  /** `portable`: zlib's engine alone even when the binding is in use (tests compare the two). */
  constructor(options?: { portable?: boolean }) {
    this.native = libdeflate === undefined || options?.portable === true ? undefined : { addon: libdeflate, decompressor: libdeflate.decompressor() };
    const engine = zlib.createInflateRaw() as unknown as { _handle: ZlibHandle; _writeState: Uint32Array };
    this.handle = engine._handle;
    this.state = engine._writeState;
    // Keep the engine alive after damage: record the error instead of Node's handler destroying the stream.
    this.handle.onerror = (message, errno) => {
      this.failure = new InflateError(message, codeNames[String(errno)] ?? 'Z_ERRNO');
    };
  }

  /** Inflates the deflate stream at the start of `input` (which may hold more after it). */
  inflate(input: Uint8Array, maxOutput: number, borrow = false): Inflated | undefined {
    const limit = Math.max(1, maxOutput);
    const native = this.native;
    if (native === undefined) return this.inflateWithZlib(input, limit, borrow);
    for (;;) {
      const room = Math.min(this.scratch.length, limit + 1);
      const result = native.addon.decompress(native.decompressor, input, this.scratch.subarray(0, room), this.used);
      if (result === RESULT.insufficientSpace && room <= limit) {
        this.scratch = Buffer.allocUnsafe(Math.min(this.scratch.length * 4, limit + 1));
        continue;
      }
      if (result === RESULT.insufficientSpace || (result === RESULT.success && this.used[1]! > limit)) {
        throw new InflateError(`inflates to more than ${limit} bytes`, 'ERR_BUFFER_TOO_LARGE');
      }
      // Damage, or the input ending inside the stream: zlib's engine says which, with its code.
      if (result !== RESULT.success) return this.inflateWithZlib(input, limit, borrow);
      return this.result(this.used[1]!, this.used[0]!, borrow);
    }
  }

  private inflateWithZlib(input: Uint8Array, limit: number, borrow: boolean): Inflated | undefined {
    this.handle.reset();
    let inOff = 0;
    let produced = 0;
    for (;;) {
      if (produced === this.scratch.length) this.grow(limit);
      const outLen = Math.min(this.scratch.length, limit + 1) - produced;
      this.failure = undefined;
      this.handle.writeSync(zlib.constants.Z_FINISH, input, inOff, input.length - inOff, this.scratch, produced, outLen);
      const failure = this.failure as InflateError | undefined;
      if (failure !== undefined) {
        // Z_BUF_ERROR with Z_FINISH: the input ended inside the stream.
        if (failure.code === 'Z_BUF_ERROR') return undefined;
        throw failure;
      }
      const outLeft = this.state[0]!;
      const inLeft = this.state[1]!;
      produced += outLen - outLeft;
      inOff = input.length - inLeft;
      if (produced > limit) {
        throw new InflateError(`inflates to more than ${limit} bytes`, 'ERR_BUFFER_TOO_LARGE');
      }
      // Output space left over means the stream ended (Z_STREAM_END); none means it may go on.
      if (outLeft > 0) break;
    }
    return this.result(produced, inOff, borrow);
  }

  private result(produced: number, consumed: number, borrow: boolean): Inflated {
    if (borrow) return { data: this.scratch.subarray(0, produced), consumed };
    const data = Buffer.allocUnsafe(produced);
    this.scratch.copy(data, 0, 0, produced);
    return { data, consumed };
  }

  private grow(limit: number): void {
    const bigger = Buffer.allocUnsafe(Math.min(this.scratch.length * 4, limit + 1));
    this.scratch.copy(bigger);
    this.scratch = bigger;
  }
}
