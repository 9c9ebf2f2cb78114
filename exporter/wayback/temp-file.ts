/**
 * An export's output file, complete or absent: written as `<path>.tmp` and
 * renamed to `path` by finish(), or removed by abandon().
 */

import { closeSync, openSync, renameSync, rmSync } from 'node:fs';
import { ioError } from '../../common/errors.js';
import { writeAt } from '../../common/files.js';

export class TempFile {
  /** The file being written, renamed to the final name by `finish`. */
  readonly temp: string;
  private readonly fd: number;
  size = 0;

  constructor(private readonly path: string) {
    this.temp = `${path}.tmp`;
    try {
      this.fd = openSync(this.temp, 'w');
    } catch (err) {
      throw ioError(err, this.temp, 'create');
    }
  }

  append(bytes: Buffer): void {
    writeAt(this.fd, this.temp, bytes, this.size);
    this.size += bytes.length;
  }

  finish(): void {
    closeSync(this.fd);
    try {
      renameSync(this.temp, this.path);
    } catch (err) {
      throw ioError(err, this.path, 'rename');
    }
  }

  abandon(): void {
    closeSync(this.fd);
    rmSync(this.temp, { force: true });
  }
}
