/**
 * The real Nutch/Hadoop files in `../shared/testdata/nutch/` as the tests see
 * them: the README's per-file table (size, compression, header, record count,
 * first key), the sync interval of the Hadoop that wrote each, and a
 * stock-zlib DefaultCodec. Hadoop deflates with the system's stock zlib;
 * node:zlib is Chromium's, whose output differs for some inputs, so byte
 * identity is checked with pako (a port of stock zlib, installed with warcio).
 * And every record of a MapFile or SequenceFile decoded, for the export's tests.
 */

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pako from 'pako';
import { isSherlockError } from '../../common/errors.js';
import { MapFileReader } from '../../common/hadoop/map-file.js';
import { decodeRecord, defaultCodec, recordTypes, SequenceFileReader, SYNC_INTERVAL, type Compression } from '../../common/hadoop/sequence-file.js';
import { testdata } from './paths.js';

export const nutchData = (...parts: string[]): string => testdata('nutch', ...parts);

export interface TestFile {
  /** Path below testdata/nutch/. */
  name: string;
  path: string;
  bytes: number;
  compression: Compression;
  codec: 'DefaultCodec' | 'GzipCodec' | null;
  version: number;
  keyClass: string;
  valueClass: string;
  records: number;
  firstKey: string;
}

/** Every SequenceFile of the README's per-file table. */
export function testFiles(): TestFile[] {
  const readme = readFileSync(nutchData('README.md'), 'utf8');
  const rows = readme.split('\n').filter((line) => /^\| `[^`]+` \| \d+ \|/.test(line));
  return rows.map((row) => {
    const [name, bytes, compression, header, records, firstKey] = row
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim().replace(/^`|`$/g, ''));
    const [kind, codec] = compression!.split(/\s+/);
    const [, version, keyClass, valueClass] = /^v(\d) (\S+)→(\S+)$/.exec(header!)!;
    return {
      name: name!,
      path: nutchData(name!),
      bytes: Number(bytes),
      compression: kind!.toLowerCase() as Compression,
      codec: (codec ?? null) as TestFile['codec'],
      version: Number(version),
      keyClass: keyClass!,
      valueClass: valueClass!,
      records: Number(records),
      firstKey: firstKey!,
    };
  });
}

/** Hadoop ≤ 2.7 wrote the Nutch 1.10 and 1.15 data, Hadoop 3.3.6 the rest (README). */
export function syncIntervalOf(name: string): number {
  return /^nutch-1\.1[05]/.test(name) ? SYNC_INTERVAL.hadoop2 : SYNC_INTERVAL.hadoop3;
}

/** DefaultCodec deflating as stock zlib at level 6 does. */
export const stockZlib = defaultCodec((data) => pako.deflate(data, { level: 6 }));

/** The Java class name of a README short name ("Text" → org.apache.hadoop.io.Text …). */
export function javaClass(short: string): string {
  const hadoop = ['Text', 'LongWritable', 'BytesWritable', 'UTF8'];
  if (hadoop.includes(short)) return `org.apache.hadoop.io.${short}`;
  const nutch: Record<string, string> = {
    CrawlDatum: 'org.apache.nutch.crawl.CrawlDatum',
    Inlinks: 'org.apache.nutch.crawl.Inlinks',
    Content: 'org.apache.nutch.protocol.Content',
    ParseData: 'org.apache.nutch.parse.ParseData',
    ParseText: 'org.apache.nutch.parse.ParseText',
  };
  return nutch[short] ?? short;
}

/** Asserts that `read` throws SHERLOCK_CORRUPT_HADOOP naming `file` (and `offset` when given). */
export function assertCorruptHadoop(read: () => unknown, file: string, offset?: number, message?: RegExp): void {
  assert.throws(read, (err: unknown) => {
    assert.ok(isSherlockError(err, 'SHERLOCK_CORRUPT_HADOOP'), `expected SHERLOCK_CORRUPT_HADOOP, got ${err instanceof Error ? err.stack : String(err)}`);
    assert.equal(err.place.file, file);
    assert.equal(typeof err.place.offset, 'number');
    if (offset !== undefined) assert.equal(err.place.offset, offset, err.message);
    if (message !== undefined) assert.match(err.message, message);
    return true;
  });
}

/** Every record of a MapFile (or SequenceFile) decoded, keys checked to ascend for MapFiles. */
export function records<V>(path: string): Array<{ key: string; value: V }> {
  const out: Array<{ key: string; value: V }> = [];
  if (existsSync(join(path, 'data'))) {
    const reader = MapFileReader.open(path);
    try {
      const types = recordTypes(reader.data);
      for (const r of reader.records()) {
        const { key, value } = decodeRecord(reader.data.file, types, r);
        out.push({ key: key as string, value: value as V });
        assert.ok(reader.get(r.key) !== undefined, `lookup of ${key as string}`);
      }
    } finally {
      reader.close();
    }
  } else {
    const reader = SequenceFileReader.open(path);
    try {
      const types = recordTypes(reader);
      for (const r of reader.records()) {
        const { key, value } = decodeRecord(reader.file, types, r);
        out.push({ key: key as string, value: value as V });
      }
    } finally {
      reader.close();
    }
  }
  return out;
}
