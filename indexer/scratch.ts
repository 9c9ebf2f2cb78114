/**
 * Scratch files of a build (spilled runs, vocabulary segments, anchor refs):
 * written whole or appended through a buffer, read whole or front to back
 * through a buffer. No fsync: they live in the version's directory and do
 * not outlive the build, so a crash leaves nothing that is read again.
 * Every failure is an I/O error naming the file.
 */

import { closeSync, openSync, writeSync } from 'node:fs';
import { ioError } from '../common/errors.js';
import { readAt, writeAt } from '../common/files.js';

const BUFFER = 256 * 1024;

function open(path: string, flags: 'r' | 'w'): number {
  try {
    return openSync(path, flags);
  } catch (err) {
    throw ioError(err, path, flags === 'r' ? 'opening' : 'creating');
  }
}

/** Writes a scratch file whole. */
export function writeScratch(path: string, bytes: Uint8Array): void {
  const fd = open(path, 'w');
  try {
    writeAt(fd, path, bytes, 0);
  } finally {
    closeSync(fd);
  }
}

/** Reads the first `bytes` of a scratch file whole. */
export function readScratch(path: string, bytes: number): Buffer {
  const fd = open(path, 'r');
  try {
    return readAt(fd, path, bytes, 0);
  } finally {
    closeSync(fd);
  }
}

/** A scratch file written front to back through a buffer. */
export class ScratchWriter {
  private readonly fd: number;
  private readonly buffer = Buffer.allocUnsafe(BUFFER);
  private used = 0;
  private written = 0;

  constructor(readonly path: string) {
    this.fd = open(path, 'w');
  }

  /** Room for `n` more bytes; returns the buffer and where to write. */
  room(n: number): { buffer: Buffer; at: number } {
    if (this.used + n > this.buffer.length) this.flush();
    return { buffer: this.buffer, at: this.used };
  }

  advance(n: number): void {
    this.used += n;
  }

  private flush(): void {
    try {
      for (let at = 0; at < this.used; ) at += writeSync(this.fd, this.buffer, at, this.used - at, this.written + at);
    } catch (err) {
      throw ioError(err, this.path, 'writing');
    }
    this.written += this.used;
    this.used = 0;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

/** The first `size` bytes of a scratch file read front to back through a buffer of `bufferSize` bytes (grown for a longer record). */
export class ScratchReader {
  private readonly fd: number;
  private buffer: Buffer;
  private start = 0;
  private end = 0;
  private read = 0;

  constructor(
    private readonly path: string,
    private readonly size: number,
    bufferSize = BUFFER,
  ) {
    this.fd = open(path, 'r');
    this.buffer = Buffer.allocUnsafe(bufferSize);
  }

  /** At least `n` bytes at `at` (fewer only at the end of the file); returns the buffer. */
  have(n: number): Buffer {
    if (this.end - this.start >= n || this.read === this.size) return this.buffer;
    if (n > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(n, 2 * this.buffer.length));
      this.buffer.copy(grown, 0, this.start, this.end);
      this.buffer = grown;
    } else {
      this.buffer.copy(this.buffer, 0, this.start, this.end);
    }
    this.end -= this.start;
    this.start = 0;
    const data = readAt(this.fd, this.path, Math.min(this.buffer.length - this.end, this.size - this.read), this.read);
    data.copy(this.buffer, this.end);
    this.end += data.length;
    this.read += data.length;
    return this.buffer;
  }

  /** Where the unread bytes start in the buffer. */
  get at(): number {
    return this.start;
  }

  /** Unread bytes in the buffer. */
  get left(): number {
    return this.end - this.start;
  }

  skip(n: number): void {
    this.start += n;
  }

  /** The next u32, undefined at the end of the file. */
  u32(): number | undefined {
    if (this.end - this.start < 4 && this.have(4) && this.end - this.start < 4) return undefined;
    const value = this.buffer.readUInt32LE(this.start);
    this.start += 4;
    return value;
  }

  /** Hands the next `n` bytes to `write`, in pieces. */
  stream(n: number, write: (data: Buffer) => void): void {
    while (n > 0) {
      if (this.start === this.end) this.have(1);
      if (this.start === this.end) throw new RangeError(`${this.path}: run cut short`);
      const piece = Math.min(n, this.end - this.start);
      write(this.buffer.subarray(this.start, this.start + piece));
      this.start += piece;
      n -= piece;
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}
