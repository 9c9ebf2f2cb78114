/**
 * Damaging files in place for the corruption tests: bytes written over a
 * file at an offset, or one byte's bits flipped.
 */

import { closeSync, openSync, readSync, writeSync } from 'node:fs';

/** Writes `bytes` over `file` at `offset`. */
export function patch(file: string, offset: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    closeSync(fd);
  }
}

/** Flips the bits of `mask` in the byte at `offset` (all of them by default). */
export function flip(file: string, offset: number, mask = 0xff): void {
  const fd = openSync(file, 'r+');
  try {
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, offset);
    byte[0]! ^= mask;
    writeSync(fd, byte, 0, 1, offset);
  } finally {
    closeSync(fd);
  }
}
