/**
 * Apache Nutch / Hadoop files as Nutch's own dumps show them (`readdb
 * -dump`, `readlinkdb -dump`, `readseg -dump`), for `sherlock nutch dump`:
 * the SequenceFiles under a path, walked in name order, skipping `_*` and
 * `.*` entries as Hadoop does; each file's records decoded after its `.crc`
 * side file is checked; a value rendered as Nutch renders it (dates as ISO
 * 8601 UTC instead of the JVM's local time zone), or as plain JSON (longs
 * as numbers when exact, else strings; content bytes base64, signatures
 * hex).
 */

import { closeSync, openSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ioError, SherlockError } from '../../common/errors.js';
import { readAt } from '../../common/files.js';
import { javaFloat } from '../../common/hadoop/io.js';
import { verifyChecksums } from '../../common/hadoop/crc.js';
import { DATA_FILE, isMapFile, MapFileReader } from '../../common/hadoop/map-file.js';
import {
  crawlStatusName,
  PARSE_MAJOR_NAMES,
  protocolStatusName,
  type Content,
  type CrawlDatum,
  type Link,
  type Metadata,
  type ParseData,
  type ParseStatus,
  type ProtocolStatus,
} from '../../common/hadoop/nutch-writables.js';
import { decodeRecord, recordTypes, SequenceFileReader, type SequenceRecord } from '../../common/hadoop/sequence-file.js';
import { MAP, TEXT, type MapWritable, type Typed } from '../../common/hadoop/writables.js';

function startsWithSeq(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    return readAt(fd, file, 3, 0).toString('latin1') === 'SEQ';
  } finally {
    closeSync(fd);
  }
}

/** The SequenceFiles at or under `path`, in name order; MapFiles as their `data`. A file under a directory that is not a SequenceFile goes to `onSkip`. */
export function* sequenceFiles(path: string, given: boolean, onSkip: (path: string) => void): Generator<string> {
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new SherlockError('SHERLOCK_NOT_FOUND', 'no such file or directory', { file: path });
    throw ioError(err, path, 'stat');
  }
  if (!isDir) {
    if (given || startsWithSeq(path)) yield path;
    else onSkip(path);
  } else if (isMapFile(path)) {
    yield join(path, DATA_FILE);
  } else {
    const names = readdirSync(path).filter((name) => !name.startsWith('_') && !name.startsWith('.'));
    for (const name of names.sort()) yield* sequenceFiles(join(path, name), false, onSkip);
  }
}

/** One record of a dumped file, decoded. */
export interface DumpedRecord {
  recno: number;
  offset: number;
  key: unknown;
  value: unknown;
}

/**
 * The records of one SequenceFile (a MapFile's `data` checked as a MapFile:
 * keys ascending), after its `.crc` side file, if any, is checked as Hadoop's
 * reader does. `onOpen` gets the header's classes before the first record.
 */
export function* dumpedRecords(file: string, onOpen: (header: { keyIsText: boolean; valueClass: string }) => boolean): Generator<DumpedRecord> {
  verifyChecksums(file);
  const dir = file.endsWith(`/${DATA_FILE}`) ? file.slice(0, -DATA_FILE.length - 1) : undefined;
  const map = dir !== undefined && isMapFile(dir) ? MapFileReader.open(dir) : undefined;
  const reader = map?.data ?? SequenceFileReader.open(file);
  try {
    const types = recordTypes(reader);
    if (!onOpen({ keyIsText: types.key === TEXT, valueClass: reader.header.valueClass })) return;
    let recno = 0;
    const records: Iterable<SequenceRecord> = map?.records() ?? reader.records();
    for (const record of records) {
      const { key, value } = decodeRecord(file, types, record);
      yield { recno, offset: record.offset, key, value };
      recno += 1;
    }
  } finally {
    reader.close();
  }
}

// ---------------------------------------------------------------- text

function isoTime(ms: bigint): string {
  const n = Number(ms);
  return Math.abs(n) <= 8.64e15 ? new Date(n).toISOString() : String(ms);
}

/** C0 controls other than TAB, LF and CR are shown as \xNN, so content cannot drive the terminal. */
function safeText(s: string): string {
  return s.replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

function protocolStatusText(s: ProtocolStatus): string {
  const args = s.args === null ? '' : `, args=[${s.args.join(', ')}]`;
  return `${protocolStatusName(s.code)}(${s.code}), lastModified=${s.lastModified}${args}`;
}

function typedText({ className, value }: Typed): string {
  if (className === 'org.apache.nutch.protocol.ProtocolStatus') return protocolStatusText(value as ProtocolStatus);
  if (className === 'org.apache.hadoop.io.FloatWritable') return javaFloat(value as number);
  if (className === MAP.className) return JSON.stringify(jsonValue(value));
  return Buffer.isBuffer(value) ? value.toString('hex') : String(value);
}

function mapLines(map: MapWritable | null, indent: string): string[] {
  return (map?.entries ?? []).map(([k, v]) => `${indent}${typedText(k)}=${typedText(v)}`);
}

function metadataText(metadata: Metadata): string {
  return metadata.map(([name, values]) => values.map((v) => `${name}=${v}`).join(' ')).join(' ');
}

function parseStatusText(s: ParseStatus): string {
  const args = s.args === null ? '' : `: ${s.args.join(', ')}`;
  return `${PARSE_MAJOR_NAMES[s.majorCode] ?? 'unknown'}(${s.majorCode},${s.minorCode})${args}`;
}

export function renderValue(value: unknown, valueClass: string): string[] {
  switch (valueClass) {
    case 'org.apache.nutch.crawl.CrawlDatum': {
      const d = value as CrawlDatum;
      return [
        'Version: 7',
        `Status: ${d.status} (${crawlStatusName(d.status)})`,
        `Fetch time: ${isoTime(d.fetchTime)}`,
        `Modified time: ${isoTime(d.modifiedTime)}`,
        `Retries since fetch: ${d.retries}`,
        `Retry interval: ${d.fetchInterval} seconds (${Math.trunc(d.fetchInterval / 86400)} days)`,
        `Score: ${javaFloat(d.score)}`,
        `Signature: ${d.signature === null ? 'null' : d.signature.toString('hex')}`,
        'Metadata:',
        ...mapLines(d.metadata, '\t'),
      ];
    }
    case 'org.apache.nutch.protocol.Content': {
      const c = value as Content;
      return [
        'Version: -1',
        `url: ${c.url}`,
        `base: ${c.base}`,
        `contentType: ${c.contentType}`,
        `metadata: ${metadataText(c.metadata)}`,
        'Content:',
        safeText(c.content.toString('utf8')),
      ];
    }
    case 'org.apache.nutch.parse.ParseData': {
      const p = value as ParseData;
      return [
        'Version: 5',
        `Status: ${parseStatusText(p.status)}`,
        `Title: ${p.title}`,
        `Outlinks: ${p.outlinks.length}`,
        ...p.outlinks.map((o) => `  outlink: toUrl: ${o.url} anchor: ${o.anchor}`),
        `Content Metadata: ${metadataText(p.contentMeta)}`,
        `Parse Metadata: ${metadataText(p.parseMeta)}`,
      ];
    }
    case 'org.apache.nutch.parse.ParseText':
      return [safeText((value as { text: string }).text)];
    case 'org.apache.nutch.crawl.Inlinks':
      return (value as Link[]).map((l) => ` fromUrl: ${l.url} anchor: ${l.anchor}${l.metadata === null ? '' : ` metadata: ${mapLines(l.metadata, '').join(' ')}`}`);
    default:
      return [typeof value === 'object' && value !== null ? JSON.stringify(jsonValue(value)) : String(value)];
  }
}

// ---------------------------------------------------------------- JSON

/** Plain JSON for any decoded value: bigints as numbers when exact, buffers as base64, maps as objects. */
export function jsonValue(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : String(value);
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (Array.isArray(value)) return value.map(jsonValue);
  if (typeof value === 'object' && value !== null) {
    if ('entries' in value && Array.isArray((value as MapWritable).entries)) {
      return Object.fromEntries((value as MapWritable).entries.map(([k, v]) => [String(jsonValue(k.value)), typedJson(v)]));
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonValue(v)]));
  }
  return value;
}

function typedJson({ className, value }: Typed): unknown {
  if (className === 'org.apache.nutch.protocol.ProtocolStatus') {
    const s = value as ProtocolStatus;
    return { code: s.code, name: protocolStatusName(s.code), lastModified: jsonValue(s.lastModified), args: s.args };
  }
  return jsonValue(value);
}

function metadataJson(metadata: Metadata): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, values] of metadata) out[name] = [...(out[name] ?? []), ...values];
  return out;
}

export function valueJson(value: unknown, valueClass: string): unknown {
  switch (valueClass) {
    case 'org.apache.nutch.crawl.CrawlDatum': {
      const d = value as CrawlDatum;
      return {
        status: d.status,
        statusName: crawlStatusName(d.status),
        fetchTime: jsonValue(d.fetchTime),
        retries: d.retries,
        fetchInterval: d.fetchInterval,
        score: Number(javaFloat(d.score)),
        modifiedTime: jsonValue(d.modifiedTime),
        signature: d.signature?.toString('hex') ?? null,
        metadata: jsonValue(d.metadata ?? { entries: [] }),
      };
    }
    case 'org.apache.nutch.protocol.Content': {
      const c = value as Content;
      return { url: c.url, base: c.base, contentType: c.contentType, metadata: metadataJson(c.metadata), length: c.content.length, content: c.content.toString('base64') };
    }
    case 'org.apache.nutch.parse.ParseData': {
      const p = value as ParseData;
      return {
        status: { majorCode: p.status.majorCode, minorCode: p.status.minorCode, name: PARSE_MAJOR_NAMES[p.status.majorCode] ?? 'unknown', args: p.status.args },
        title: p.title,
        outlinks: jsonValue(p.outlinks),
        contentMeta: metadataJson(p.contentMeta),
        parseMeta: metadataJson(p.parseMeta),
      };
    }
    default:
      return jsonValue(value);
  }
}
