/**
 * Hadoop's MapFile: a directory holding `data`, a SequenceFile of records
 * sorted by key, and `index`, a BLOCK-compressed SequenceFile of (key,
 * LongWritable offset into `data`) for every 128th record. Nutch's crawldb,
 * linkdb and most segment parts are MapFiles. Spec:
 * `../shared/spec/nutch-formats.md` §5.
 *
 * Index entries, as Hadoop's writer makes them: before record number `n` is
 * appended, with `pos` the length of `data` so far, an entry (key, pos) is
 * added when n ≥ (records at the last entry) + interval and pos > (offset of
 * the last entry); the first record always gets one. `pos` is where the
 * record (or the sync entry written just before it) starts; in a BLOCK data
 * file it only moves when a block is flushed, so entries point at blocks.
 *
 * Keys must ascend strictly in the key class's raw order (Text: unsigned
 * bytes). Hadoop's writer accepts equal keys; we refuse them too, since Nutch's
 * keys are unique URLs and a duplicate means a bug upstream. Reading checks
 * the order as it goes, because unsorted data silently breaks lookups.
 *
 * Lookup loads the whole index (small: one entry per 128 records), skips
 * entries repeating the previous offset as Hadoop does, binary-searches the
 * last entry at or before the key, and scans `data` from its offset until
 * the key is found or passed.
 *
 * The writer writes `data` and `index` in place and both are complete after
 * close(); whoever needs the directory to appear whole writes it under a
 * temporary name and renames it.
 */

import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { corruptHadoop } from './io.js';
import { canonicalClassName, decodeWritable, findWritable, LONG } from './writables.js';
import {
  type Codec,
  type Compression,
  type SequenceRecord,
  SequenceFileReader,
  SequenceFileWriter,
  type SequenceFileWriterOptions,
} from './sequence-file.js';

export const INDEX_INTERVAL = 128;
export const DATA_FILE = 'data';
export const INDEX_FILE = 'index';

/** A directory holding a MapFile's two files. */
export function isMapFile(dir: string): boolean {
  return existsSync(join(dir, DATA_FILE)) && existsSync(join(dir, INDEX_FILE));
}

/** The raw order of a key class (unsigned bytes when the class has none of its own). */
export function keyComparator(keyClass: string): (a: Buffer, b: Buffer) => number {
  return findWritable(keyClass)?.compare ?? Buffer.compare;
}

export interface MapFileWriterOptions {
  keyClass: string;
  valueClass: string;
  /** Of `data`; the index is always BLOCK with DefaultCodec (or `codec`). */
  compression?: Compression;
  codec?: Codec;
  indexInterval?: number;
  syncInterval?: number;
  blockSize?: number;
  /** Sync markers of `data` and `index`; random unless given. */
  dataSyncMarker?: Uint8Array;
  indexSyncMarker?: Uint8Array;
  checksum?: boolean;
}

export class MapFileWriter {
  private readonly data: SequenceFileWriter;
  private readonly index: SequenceFileWriter;
  private readonly compare: (a: Buffer, b: Buffer) => number;
  private readonly interval: number;
  private lastKey: Buffer | undefined;
  private size = 0;
  private lastIndexedSize = -Infinity;
  private lastIndexedPos = -1;

  private constructor(
    readonly dir: string,
    options: MapFileWriterOptions,
  ) {
    const { keyClass, codec, checksum } = options;
    const dataOptions: SequenceFileWriterOptions = {
      keyClass,
      valueClass: options.valueClass,
      compression: options.compression,
      codec,
      checksum,
      syncInterval: options.syncInterval,
      blockSize: options.blockSize,
      syncMarker: options.dataSyncMarker,
    };
    const indexOptions = { keyClass, valueClass: LONG.className, compression: 'block', codec, checksum, syncMarker: options.indexSyncMarker } as const;
    this.data = SequenceFileWriter.create(join(dir, DATA_FILE), dataOptions);
    this.index = SequenceFileWriter.create(join(dir, INDEX_FILE), indexOptions);
    this.compare = keyComparator(options.keyClass);
    this.interval = options.indexInterval ?? INDEX_INTERVAL;
  }

  /** Creates the directory (if needed) and its `data` and `index`. */
  static create(dir: string, options: MapFileWriterOptions): MapFileWriter {
    mkdirSync(dir, { recursive: true });
    return new MapFileWriter(dir, options);
  }

  /** Appends one record; its key must sort after the previous one. */
  append(key: Buffer, value: Uint8Array): void {
    this.add(key, value, false);
  }

  /** append() with the value as `data` stores it (SequenceFileWriter.appendStored). */
  appendStored(key: Buffer, stored: Uint8Array): void {
    this.add(key, stored, true);
  }

  private add(key: Buffer, value: Uint8Array, stored: boolean): void {
    if (this.lastKey !== undefined && this.compare(this.lastKey, key) >= 0) {
      throw corruptHadoop(this.data.file, this.data.position, `key out of order: ${printable(key)} after ${printable(this.lastKey)}`);
    }
    const pos = this.data.position;
    if (this.size >= this.lastIndexedSize + this.interval && pos > this.lastIndexedPos) {
      const offset = Buffer.allocUnsafe(8);
      offset.writeBigInt64BE(BigInt(pos));
      this.index.append(key, offset);
      this.lastIndexedSize = this.size;
      this.lastIndexedPos = pos;
    }
    if (stored) this.data.appendStored(key, value);
    else this.data.append(key, value);
    this.lastKey = Buffer.from(key);
    this.size += 1;
  }

  close(): void {
    this.data.close();
    this.index.close();
  }
}

/** A key for a message: its bytes as Latin-1 with controls escaped, cut at 200 characters. */
function printable(key: Buffer): string {
  const text = key.toString('latin1', 0, Math.min(key.length, 200)).replace(/[\x00-\x1f\x7f-\xff]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return JSON.stringify(text);
}

export interface IndexEntry {
  key: Buffer;
  offset: number;
}

export class MapFileReader {
  private readonly compare: (a: Buffer, b: Buffer) => number;

  private constructor(
    readonly dir: string,
    readonly data: SequenceFileReader,
    readonly index: readonly IndexEntry[],
  ) {
    this.compare = keyComparator(data.header.keyClass);
  }

  /** Opens `dir/data` and loads `dir/index`, checking that its keys ascend and its offsets fit `data`. */
  static open(dir: string): MapFileReader {
    const data = SequenceFileReader.open(join(dir, DATA_FILE));
    try {
      return new MapFileReader(dir, data, loadIndex(join(dir, INDEX_FILE), data));
    } catch (err) {
      data.close();
      throw err;
    }
  }

  close(): void {
    this.data.close();
  }

  /** Every record in order; a key not above its predecessor is damage. */
  *records(): Generator<SequenceRecord> {
    let last: Buffer | undefined;
    for (const record of this.data.records()) {
      if (last !== undefined && this.compare(last, record.key) >= 0) {
        throw corruptHadoop(this.data.file, record.offset, `key out of order: ${printable(record.key)} after ${printable(last)}`);
      }
      last = record.key;
      yield record;
    }
  }

  /** The record with exactly this key (its serialisation), or undefined. */
  get(key: Buffer): SequenceRecord | undefined {
    let lo = 0;
    let hi = this.index.length - 1;
    let from = this.data.header.length;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(this.index[mid]!.key, key) <= 0) {
        from = this.index[mid]!.offset;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    for (const record of this.data.records(from)) {
      const c = this.compare(record.key, key);
      if (c === 0) return record;
      if (c > 0) return undefined;
    }
    return undefined;
  }
}

function loadIndex(file: string, data: SequenceFileReader): IndexEntry[] {
  const index = SequenceFileReader.open(file);
  try {
    const { keyClass, valueClass } = index.header;
    if (canonicalClassName(keyClass) !== canonicalClassName(data.header.keyClass)) throw corruptHadoop(file, 4, `index key class ${keyClass} differs from the data's ${data.header.keyClass}`);
    if (findWritable(valueClass) !== LONG) throw corruptHadoop(file, index.header.valueClassOffset, `index values are ${valueClass}, not LongWritable`);
    const compare = keyComparator(keyClass);
    const entries: IndexEntry[] = [];
    for (const record of index.records()) {
      const at = record.valueOffset ?? record.offset;
      const offset = Number(decodeWritable(LONG, record.value, file, at, record.valueOffset !== undefined));
      if (offset < data.header.length || offset > data.size) throw corruptHadoop(file, at, `index offset ${offset} outside ${data.file}`);
      const previous = entries[entries.length - 1];
      if (previous !== undefined && offset === previous.offset) continue;
      if (previous !== undefined && (compare(previous.key, record.key) >= 0 || offset < previous.offset)) {
        throw corruptHadoop(file, record.offset, `index entry ${printable(record.key)} out of order`);
      }
      entries.push({ key: Buffer.from(record.key), offset });
    }
    return entries;
  } finally {
    index.close();
  }
}
