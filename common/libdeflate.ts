/**
 * The Node-API binding to Debian's libdeflate (common/native/deflate.c,
 * built by node-gyp at `npm ci`, binding.gyp), typed: the compressor that
 * raw-deflate.ts uses, the raw-deflate decompressor raw-inflate.ts tries
 * first, Adler-32, which node:zlib does not export (bucket.ts), and the
 * CRC-32 of each 512-byte piece of a file (hadoop-crc.ts).
 */

import { createRequire } from 'node:module';

declare const handleBrand: unique symbol;
export type Compressor = { readonly [handleBrand]: 'compressor' };
export type Decompressor = { readonly [handleBrand]: 'decompressor' };

export const FORMAT = { raw: 0, zlib: 1, gzip: 2 } as const;
export type Format = (typeof FORMAT)[keyof typeof FORMAT];

/** libdeflate_result values. */
export const RESULT = { success: 0, badData: 1, insufficientSpace: 3 } as const;

interface Addon {
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

// dist/common/libdeflate.js → build/Release at the package root.
export const libdeflate = createRequire(import.meta.url)('../../build/Release/sherlock_deflate.node') as Addon;
