/**
 * Reading back what a gatherer stored, for tests: every bucket decoded with
 * its URL, error code and ARC place, and the ARC records read independently,
 * so a test can check that the two agree.
 */

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ArcReader } from '../../common/archive/arc-read.js';
import type { Bucket } from '../../common/bucket/bucket.js';
import { BucketReader, bucketFilePath } from '../../common/bucket/file.js';

export interface StoredObject {
  oid: number;
  url: string;
  robots: boolean;
  status?: number;
  code: number;
  arc?: { file: string; offset: number; length: number };
  bucket: Bucket;
}

export function storedObjects(state: string): StoredObject[] {
  const reader = BucketReader.open(bucketFilePath(state));
  try {
    const out: StoredObject[] = [];
    for (const stored of reader.buckets()) {
      const bucket = reader.decode(stored);
      const h = bucket.header;
      const arc = /^(\S+) (\d+) (\d+)$/.exec(h.string('a') ?? '');
      const status = h.string('H');
      const error = h.string('!');
      out.push({
        oid: stored.oid,
        url: h.string('U') ?? '',
        robots: h.string('K') === 'robots',
        ...(status === undefined ? {} : { status: Number(status) }),
        code: error === undefined ? 0 : Number(error.split(' ')[0]),
        ...(arc === null ? {} : { arc: { file: arc[1]!, offset: Number(arc[2]), length: Number(arc[3]) } }),
        bucket,
      });
    }
    return out;
  } finally {
    reader.close();
  }
}

export interface ArcEntry {
  file: string;
  offset: number;
  length: number;
  url: string;
}

/** Every document record of every ARC file in `<state>/gather/arc` (the version blocks left out). */
export function arcRecords(state: string): ArcEntry[] {
  const dir = join(state, 'gather', 'arc');
  const out: ArcEntry[] = [];
  for (const name of readdirSync(dir).sort()) {
    const reader = ArcReader.open(join(dir, name));
    try {
      let first = true;
      for (const record of reader.records()) {
        if (first) {
          first = false;
          continue;
        }
        out.push({ file: name, offset: record.offset, length: record.length, url: record.header.url });
      }
    } finally {
      reader.close();
    }
  }
  return out;
}
