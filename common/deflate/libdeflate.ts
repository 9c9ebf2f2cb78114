/**
 * The Node-API binding to libdeflate (common/deflate/native/deflate.c, built at
 * install by common/deflate/native/build.mjs when libdeflate's header is there,
 * binding.gyp), typed: the compressor that raw-deflate.ts uses, the
 * raw-deflate decompressor raw-inflate.ts tries first, Adler-32, which
 * node:zlib does not export (bucket.ts), and the CRC-32 of each 512-byte
 * piece of a file (common/hadoop/crc.ts).
 *
 * The binding is an optional accelerator. `libdeflate` is undefined when it
 * was not built, does not load (no libdeflate.so, a build for another Node),
 * or `SHERLOCK_NATIVE=0` switches it off; then every user takes its portable
 * path (node:zlib and the TypeScript below) with the same results: the same
 * inflated bytes, Adler-32s and CRCs. Compressed bytes may differ between the
 * paths (each is a valid stream of the standard format), never within one.
 * `deflatePath()` says which path is in use and why, for the start-up log
 * line and `sherlock status`.
 */

import { createRequire } from 'node:module';
import { crc32 } from 'node:zlib';

declare const handleBrand: unique symbol;
export type Compressor = { readonly [handleBrand]: 'compressor' };
export type Decompressor = { readonly [handleBrand]: 'decompressor' };

export const FORMAT = { raw: 0, zlib: 1, gzip: 2 } as const;
export type Format = (typeof FORMAT)[keyof typeof FORMAT];

/** libdeflate_result values. */
export const RESULT = { success: 0, badData: 1, insufficientSpace: 3 } as const;

export interface Addon {
  /** Levels 0–12. */
  compressor(level: number): Compressor;
  /** Bytes written to `output`; 0 when it is too small. */
  compress(compressor: Compressor, format: Format, input: Uint8Array, output: Uint8Array): number;
  /** Output bytes enough for any input of `length` bytes. */
  bound(compressor: Compressor, format: Format, length: number): number;
  /** Adler-32 (RFC 1950 §8.2). */
  adler32(data: Uint8Array): number;
  /**
   * CRC-32s (zlib's) of the consecutive `chunk`-byte pieces of a stream fed
   * in parts: `state` is [CRC so far, bytes so far] of the piece under way,
   * updated; each finished piece's CRC goes big-endian to `sums` from `at`.
   * Returns how many pieces were finished.
   */
  crc32Chunks(data: Uint8Array, chunk: number, state: Float64Array, sums: Uint8Array, at: number): number;
  decompressor(): Decompressor;
  /** The raw deflate stream at the start of `input` into `output`: a RESULT; on success `used` holds [input bytes taken, output bytes]. */
  decompress(decompressor: Decompressor, input: Uint8Array, output: Uint8Array, used: Float64Array): number;
}

export interface DeflatePath {
  /** True: libdeflate's binding; false: node:zlib and TypeScript. */
  native: boolean;
  /** Why not the binding, when not. */
  why?: string;
}

// dist/common/deflate/libdeflate.js → build/Release at the package root.
const BINDING = '../../../build/Release/sherlock_deflate.node';

/** Loads the binding whatever SHERLOCK_NATIVE says: the addon, or why it did not load. */
export function loadBinding(): Addon | Error {
  try {
    return createRequire(import.meta.url)(BINDING) as Addon;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

function choose(): { addon?: Addon; path: DeflatePath } {
  if (process.env.SHERLOCK_NATIVE === '0') return { path: { native: false, why: 'SHERLOCK_NATIVE=0' } };
  const loaded = loadBinding();
  if (!(loaded instanceof Error)) return { addon: loaded, path: { native: true } };
  const code = (loaded as NodeJS.ErrnoException).code;
  const why =
    code === 'MODULE_NOT_FOUND'
      ? 'binding not built (no libdeflate headers at install; apt-get install libdeflate-dev, then npm rebuild)'
      : `binding did not load: ${loaded.message.split('\n')[0]}`;
  return { path: { native: false, why } };
}

const chosen = choose();

/** The binding in use, or undefined: take the portable path. */
export const libdeflate: Addon | undefined = chosen.addon;

export function deflatePath(): DeflatePath {
  return { ...chosen.path };
}

/** The path in words, for `sherlock status`. */
export function describeDeflatePath(path = deflatePath()): string {
  return path.native ? 'libdeflate (native binding)' : `node:zlib, no native binding: ${path.why ?? 'not loaded'}`;
}

/** The path as log fields, for the start-up line of the daemons and `sherlock demo`: path=libdeflate, or path=node:zlib and why. */
export function deflatePathFields(path = deflatePath()): { path: string; why?: string } {
  return path.native ? { path: 'libdeflate' } : { path: 'node:zlib', why: path.why ?? 'not loaded' };
}

/** Largest n with 255n(n+1)/2 + (n+1)(BASE−1) < 2^32 (zlib's NMAX): bytes between reductions mod BASE. */
const NMAX = 5552;
const BASE = 65521;

/** Adler-32 (RFC 1950 §8.2) in TypeScript, zlib's way: the sums reduced every NMAX bytes, not every byte. */
export function adler32Portable(data: Uint8Array): number {
  let a = 1;
  let b = 0;
  const length = data.length;
  for (let i = 0; i < length; ) {
    const end = Math.min(length, i + NMAX);
    for (; i < end; i++) {
      a += data[i]!;
      b += a;
    }
    a %= BASE;
    b %= BASE;
  }
  return ((b << 16) | a) >>> 0;
}

/** The binding's crc32Chunks over `zlib.crc32` (Node ≥ 20.15), same contract. */
export function crc32ChunksPortable(data: Uint8Array, chunk: number, state: Float64Array, sums: Uint8Array, at: number): number {
  if (!(state.length >= 2 && chunk >= 1)) throw new TypeError('crc32Chunks: a chunk size and a Float64Array of 2 expected');
  let crc = state[0]!;
  let partial = state[1]!;
  let done = 0;
  for (let pos = 0; pos < data.length; ) {
    const n = Math.min(chunk - partial, data.length - pos);
    crc = crc32(data.subarray(pos, pos + n), crc);
    partial += n;
    pos += n;
    if (partial === chunk) {
      const to = at + 4 * done;
      if (to + 4 > sums.length) throw new RangeError('crc32Chunks: no room left in sums');
      sums[to] = crc >>> 24;
      sums[to + 1] = crc >>> 16;
      sums[to + 2] = crc >>> 8;
      sums[to + 3] = crc;
      done++;
      crc = 0;
      partial = 0;
    }
  }
  state[0] = crc;
  state[1] = partial;
  return done;
}

/** Adler-32 by the path in use. */
export const adler32: (data: Uint8Array) => number = libdeflate === undefined ? adler32Portable : (data) => libdeflate.adler32(data);

/** CRC-32s of 512-byte pieces (see Addon.crc32Chunks) by the path in use. */
export const crc32Chunks: Addon['crc32Chunks'] =
  libdeflate === undefined ? crc32ChunksPortable : (data, chunk, state, sums, at) => libdeflate.crc32Chunks(data, chunk, state, sums, at);
