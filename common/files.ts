/**
 * The few file-system steps every format writer and reader here needs done the
 * same careful way: positioned reads and writes that come back whole, files
 * that appear whole (temp, fsync, rename), and directory fsyncs, without which
 * a rename or a new file may vanish on power loss.
 */

import { closeSync, fdatasyncSync, fsyncSync, openSync, readSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ioError, SherlockError } from './errors.js';

/** Reads `length` bytes at `position`: fewer only at the end of the file. Errors name the file and offset. */
export function readAt(fd: number, file: string, length: number, position: number): Buffer {
  return readInto(fd, file, Buffer.allocUnsafe(length), length, position);
}

/** readAt into the start of `out` (at least `length` bytes long), for a reader that reuses one buffer; returns the bytes read, a view of `out`. */
export function readInto(fd: number, file: string, out: Buffer, length: number, position: number): Buffer {
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
  return done === out.length ? out : out.subarray(0, done);
}

/** fsyncs a file or directory by its path. */
export function syncPath(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    fsyncSync(fd);
  } catch (err) {
    throw ioError(err, path, 'fsync');
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** fsyncs a directory, so that names created, renamed or removed in it are durable. */
export function syncDirectory(dir: string): void {
  syncPath(dir);
}

/** Renames a finished temporary file into place and fsyncs the directory, so the new name survives a power loss. */
export function renameDurably(temp: string, path: string): void {
  try {
    renameSync(temp, path);
  } catch (err) {
    throw ioError(err, path, 'renaming');
  }
  syncDirectory(dirname(path));
}

/** The names in a directory; none when it does not exist (yet). */
export function listDirectory(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw ioError(err, dir, 'listing');
  }
}

/** Writes all of `data` at `position`; errors name the file and offset. */
export function writeAt(fd: number, file: string, data: Uint8Array, position: number): void {
  try {
    for (let done = 0; done < data.length; ) done += writeSync(fd, data, done, data.length - done, position + done);
  } catch (err) {
    const failure = ioError(err, file, 'write');
    failure.place.offset = position;
    throw failure;
  }
}

/** Makes `file` appear holding exactly `content`: written to `<file>.tmp`, fsynced, renamed, directory fsynced. */
export function createFile(file: string, content: Uint8Array): void {
  const temp = `${file}.tmp`;
  try {
    const fd = openSync(temp, 'w');
    try {
      writeAt(fd, temp, content, 0);
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err instanceof SherlockError ? err : ioError(err, file, 'creating');
  }
  syncDirectory(dirname(file));
}

/** createFile, its writes and fsyncs waited for off the thread (a thread that also drives fetches must not stall on them). */
export async function createFileInBackground(file: string, content: Uint8Array): Promise<void> {
  const temp = `${file}.tmp`;
  try {
    const handle = await open(temp, 'w');
    try {
      await handle.writeFile(content);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw ioError(err, file, 'creating');
  }
  await syncDirectoryInBackground(dirname(file));
}

/** syncDirectory, waiting off the thread. */
export async function syncDirectoryInBackground(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw ioError(err, dir, 'fsync directory');
  }
}

/** Opens for reading and writing; a missing file is SHERLOCK_NOT_FOUND. */
export function openForUpdate(file: string): number {
  try {
    return openSync(file, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new SherlockError('SHERLOCK_NOT_FOUND', 'no such file', { file }, { cause: err });
    }
    throw ioError(err, file, 'opening');
  }
}
