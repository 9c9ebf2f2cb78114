/**
 * Where the crawl's ARC files are and how a bucket points into them: the
 * gatherer writes `<state>/gather/arc/*.arc.gz` and gives each document's
 * bucket the header attribute `a` = "<ARC file> <offset> <length>"
 * (docs/buckets.md), the place of its gzip member. The exports and
 * `sherlock status` read both.
 */

import { join } from 'node:path';
import type { ArcWritten } from './arc-write.js';

export function arcDir(state: string): string {
  return join(state, 'gather', 'arc');
}

export interface ArcPlace {
  file: string;
  offset: number;
  length: number;
}

export function arcAttribute(written: ArcWritten): string {
  return `${written.file} ${written.offset} ${written.length}`;
}

export function parseArcAttribute(value: string | undefined): ArcPlace | undefined {
  const m = value === undefined ? null : /^(\S+) (\d+) (\d+)$/.exec(value);
  return m === null ? undefined : { file: m[1]!, offset: Number(m[2]), length: Number(m[3]) };
}
