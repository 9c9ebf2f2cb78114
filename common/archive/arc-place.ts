/**
 * Where the crawl's ARC files are and how a bucket points into them: the
 * gatherer writes `<state>/gather/arc/*.arc.gz` and gives each document's
 * bucket the header attribute `a` = "<file> <offset> <length>"
 * (docs/buckets.md), the place of its record (gzip member). `<file>` is the
 * name of an ARC file in the crawl's ARC directory, or, for a record of an
 * imported archive (`sherlock import archive`), the absolute path of that ARC
 * or WARC file, read where it lies (no copy). Spaces, `%` and control
 * characters of a path are percent-encoded, so the attribute stays three
 * fields separated by single spaces (CardInfo stores it so too); a crawl's
 * ARC names have none of them, so older buckets read the same. The exports,
 * the indexer, the searcher and `sherlock status` read it.
 */

import { isAbsolute, join } from 'node:path';

export function arcDir(state: string): string {
  return join(state, 'gather', 'arc');
}

export interface ArcPlace {
  /** The `a` attribute's file field as written: an ARC name in arcDir, or an encoded absolute path (archiveFile() gives the path). */
  file: string;
  offset: number;
  length: number;
}

export function arcAttribute(place: ArcPlace): string {
  return `${place.file} ${place.offset} ${place.length}`;
}

export function parseArcAttribute(value: string | undefined): ArcPlace | undefined {
  const m = value === undefined ? null : /^(\S+) (\d{1,15}) (\d{1,15})$/.exec(value);
  return m === null ? undefined : { file: m[1]!, offset: Number(m[2]), length: Number(m[3]) };
}

/** The file field for an archive outside the crawl: its absolute path with spaces, `%` and control characters percent-encoded. */
export function outsideArchiveField(absolutePath: string): string {
  if (!isAbsolute(absolutePath)) throw new RangeError(`an imported archive is named by its absolute path, not ${JSON.stringify(absolutePath)}`);
  return absolutePath.replace(/[\x00-\x20%\x7f]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** Whether the file field names an archive outside the crawl's ARC directory (an imported one). */
export function isOutsideArchive(file: string): boolean {
  return file.startsWith('/');
}

/** The file field as the operator knows it: an imported archive's path decoded, a crawl's ARC name as it is. */
export function archiveName(file: string): string {
  return isOutsideArchive(file) ? file.replace(/%([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))) : file;
}

/** The path of the file an `a` attribute's file field names: an imported archive's own path, else the crawl's ARC file in `dir` (arcDir). */
export function archiveFile(dir: string, file: string): string {
  return isOutsideArchive(file) ? archiveName(file) : join(dir, file);
}
