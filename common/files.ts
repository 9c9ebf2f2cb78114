/**
 * The few file-system steps every format writer and reader here needs done the
 * same careful way: positioned reads that come back whole, and directory
 * fsyncs, without which a rename or a new file may vanish on power loss.
 */

import { closeSync, fsyncSync, openSync, readSync } from 'node:fs';
import { ioError } from './errors.js';

/** Reads `length` bytes at `position`: fewer only at the end of the file. Errors name the file and offset. */
export function readAt(fd: number, file: string, length: number, position: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let done = 0;
  try {
    while (done < length) {
      const n = readSync(fd, out, done, length - done, position + done);
      if (n === 0) break;
      done += n;
    }
  } catch (err) {
    const failure = ioError(err, file, 'read');
    failure.place.offset = position;
    throw failure;
  }
  return done === length ? out : out.subarray(0, done);
}

/** fsyncs a directory, so that names created, renamed or removed in it are durable. */
export function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch (err) {
    throw ioError(err, dir, 'fsync directory');
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
