/**
 * Which reader a web archive needs, ARC (`arc-read.ts`) or WARC
 * (`warc-read.ts`), told by its first bytes, never by its name: a WARC
 * starts with `WARC/`, after gunzip for `.warc.gz`; anything else is read as
 * ARC, whose reader reports what is wrong with it. The first record of a
 * compressed file is inflated only as far as those bytes (a sync flush of a
 * short window), so sniffing costs the same for a 1 KB and a 100 MB member.
 */

import { constants, gunzipSync } from 'node:zlib';
import { ArcReader } from './arc-read.js';
import { FileWindow, hasGzipMagic } from './gzip-member.js';
import type { ArchiveReadOptions } from './record-file.js';
import { WarcReader } from './warc-read.js';

export type ArchiveFormat = 'arc' | 'warc';
export type ArchiveReader = ArcReader | WarcReader;

const MAGIC = Buffer.from('WARC/', 'latin1');
// Enough for a gzip header with a long FEXTRA or file name, and the first bytes of the deflate stream.
const SNIFF = 4096;

/** The format of the file at `path` (SHERLOCK_IO when it cannot be read). */
export function sniffArchive(path: string): ArchiveFormat {
  const file = FileWindow.open(path, SNIFF);
  try {
    let start = file.read(0, SNIFF);
    if (hasGzipMagic(start)) {
      try {
        start = gunzipSync(start, { finishFlush: constants.Z_SYNC_FLUSH });
      } catch {
        // A damaged first member: the ARC reader names it.
        return 'arc';
      }
    }
    return start.subarray(0, MAGIC.length).equals(MAGIC) ? 'warc' : 'arc';
  } finally {
    file.close();
  }
}

/** A reader of the format the file holds. */
export function openArchive(path: string, options: ArchiveReadOptions = {}): ArchiveReader {
  return sniffArchive(path) === 'warc' ? WarcReader.open(path, options) : ArcReader.open(path, options);
}
