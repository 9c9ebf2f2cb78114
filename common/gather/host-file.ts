/**
 * The gatherer's host file (`<state>/gather/hosts`): one record per site, that
 * is per (protocol, port, host name), holding where the site's queue starts and
 * ends in the queue file, its object counts, robots.txt bucket and time, error
 * count and back-off, head priority and queue key. After the seed's "GatherD
 * host file" (seeds/003, sherlock-original §2).
 *
 * The file is written only through GatherQueue (queue-file.ts), which holds the
 * lock and orders the writes between this file and the queue file; the crash
 * argument is there. This module owns the layout, the in-memory index of the
 * records (all of them: ~300 bytes each, fine for hundreds of thousands of
 * hosts) and the queue-key encoding.
 *
 * Layout; every u32 is little-endian.
 *
 *   File header, offset 0, 512 bytes
 *     0    16  magic "SHERLOCK-HOSTS" (ASCII) and two zero bytes
 *     16    4  format version, 1
 *     20    4  record size, 512
 *     24    4  object-count sections, 4
 *     28    4  CRC-32 of bytes 0–27
 *     32  480  zero
 *
 *   Host record in slot S ≥ 1, at offset S × 512; S is the host's id
 *     0     1  protocol: 1 http, 2 https (the footprint's protocol byte)
 *     1     1  host name length L, 1–253
 *     2     2  port (the effective port: 80 or 443 when the URL names none)
 *     4     4  queue read page (0: queue empty)     } seed: queue_read_pos
 *     8     4  queue read offset within that page  }
 *     12    4  queue write page (0: queue empty)    } seed: queue_write_pos
 *     16    4  queue write offset: end of the last entry in that page
 *     20    4  entries ever pushed, modulo 2^32
 *     24    4  entries ever consumed, modulo 2^32; queue length = pushed − consumed
 *     28   16  object counts, 4 sections (seed: obj_count[SHERLOCK_NUM_SECTIONS];
 *              the shepherd assigns the sections' meaning)
 *     44    4  robots.txt bucket oid, 0 none (seed: robot_id)
 *     48    4  robots.txt fetch time, Unix seconds, 0 never (seed: robot_time)
 *     52    4  recent-error count (seed: rec_err_count)
 *     56    4  back-off until, Unix seconds: no request before then (ours: a
 *              restart must not hammer a failing host; per-IP delays stay in memory)
 *     60    4  head priority: the first queued entry's priority, 0 when empty
 *              (seed: queue_priority), kept by GatherQueue
 *     64   16  queue key (seed: queue_key, widened for IPv6), see below
 *     80    L  host name as in the canonical URL (ASCII, IPv6 in brackets)
 *     80+L     zero up to 508
 *     508   4  CRC-32 of bytes 0–507
 *
 * A record is 512 bytes so that a slot never straddles a 4 KiB page: one
 * pwrite of a record is whole after kill -9 (the kernel stops a write killed
 * by a signal only between pages). Names are at most 253 bytes, the DNS limit:
 * a longer name cannot be resolved, so it has no business in the queues.
 *
 * Queue key, 16 bytes: the address politeness is counted against.
 *   an IPv6 address, or ::ffff:a.b.c.d for IPv4 (RFC 4291 §2.5.5.2);
 *   all zero (::, never a peer) — awaiting DNS;
 *   7f 01 + 14 bytes — not an IP host; 7f 02 + 14 bytes — unresolvable.
 * The reserved prefixes are the original's 0x7f01…/0x7f02…; 7f00::/8 lies in
 * 6000::/3, which IANA has not allocated, so no peer has such an address. The
 * 14 bytes after them are the caller's (say, a hash of the name, to give such
 * hosts separate politeness slots).
 *
 * Opening cuts a torn end: bytes after the last whole slot, or a last slot
 * that is all zero (appended, but never reached the disk). Any other record
 * failing its checks is damage, reported with the slot's offset.
 */

import { closeSync, fdatasync, fdatasyncSync, fstatSync, ftruncateSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { crc32 } from 'node:zlib';
import { SherlockError, ioError } from '../errors.js';
import { checkFileHeader, encodeFileHeader } from '../file-header.js';
import { createFile, openForUpdate, readAt, writeAt } from '../files.js';
import { logger } from '../log.js';
import type { Scheme } from '../url.js';

export const HOST_RECORD_SIZE = 512;
export const MAX_HOST_NAME = 253;
export const OBJECT_SECTIONS = 4;
export const QUEUE_KEY_SIZE = 16;

const MAGIC = 'SHERLOCK-HOSTS\0\0';
const FORMAT_VERSION = 1;
const NAME_OFFSET = 80;
const CRC_OFFSET = HOST_RECORD_SIZE - 4;
const PROTOCOL: Record<Scheme, number> = { http: 1, https: 2 };
const SCHEMES: Record<number, Scheme> = { 1: 'http', 2: 'https' };
/** Records read per chunk while loading. */
const LOAD_CHUNK = 2048;

const log = logger('gather-queue');

export function corrupt(file: string, offset: number, message: string): SherlockError {
  return new SherlockError('SHERLOCK_CORRUPT_QUEUE', message, { file, offset });
}

/** The fields a host record's owner may set directly. */
export interface HostFields {
  objectCounts: number[];
  robotsOid: number;
  robotsTime: number;
  errorCount: number;
  backoffUntil: number;
  queueKey: Buffer;
}

/** Where a host's queue lies in the queue file, and its head; kept by GatherQueue. */
export interface QueueState {
  readPage: number;
  readOffset: number;
  writePage: number;
  writeOffset: number;
  pushed: number;
  consumed: number;
  priority: number;
}

export interface HostRecord extends HostFields, QueueState {
  /** The record's slot: the host's id in both files. */
  readonly slot: number;
  readonly scheme: Scheme;
  readonly port: number;
  readonly name: string;
}

export function siteKey(scheme: Scheme, port: number, name: string): string {
  return `${scheme}://${name}:${port}`;
}

function isU32(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= 0xffffffff;
}

/** Refuses field values that do not fit the layout (our own callers' mistakes). */
export function checkFields(fields: Partial<HostFields & QueueState>): void {
  for (const [name, value] of Object.entries(fields)) {
    if (name === 'queueKey') {
      if (!(value instanceof Uint8Array) || value.length !== QUEUE_KEY_SIZE) throw new RangeError(`queueKey must be ${QUEUE_KEY_SIZE} bytes`);
    } else if (name === 'objectCounts') {
      const counts = value as number[];
      if (counts.length !== OBJECT_SECTIONS || !counts.every(isU32)) throw new RangeError(`objectCounts must be ${OBJECT_SECTIONS} u32 values`);
    } else if (!isU32(value as number)) {
      throw new RangeError(`${name} must be a u32, not ${String(value)}`);
    }
  }
}

function encodeRecord(record: HostRecord): Buffer {
  const out = Buffer.alloc(HOST_RECORD_SIZE);
  out.writeUInt8(PROTOCOL[record.scheme], 0);
  out.writeUInt8(record.name.length, 1);
  out.writeUInt16LE(record.port, 2);
  const fields = [record.readPage, record.readOffset, record.writePage, record.writeOffset, record.pushed, record.consumed];
  fields.forEach((value, i) => out.writeUInt32LE(value, 4 + 4 * i));
  record.objectCounts.forEach((value, i) => out.writeUInt32LE(value, 28 + 4 * i));
  const more = [record.robotsOid, record.robotsTime, record.errorCount, record.backoffUntil, record.priority];
  more.forEach((value, i) => out.writeUInt32LE(value, 44 + 4 * i));
  record.queueKey.copy(out, 64);
  out.write(record.name, NAME_OFFSET, 'latin1');
  out.writeUInt32LE(crc32(out.subarray(0, CRC_OFFSET)), CRC_OFFSET);
  return out;
}

/** The record in `bytes` (one slot), or what is wrong with it. */
function decodeRecord(bytes: Buffer, slot: number): HostRecord | string {
  const stored = bytes.readUInt32LE(CRC_OFFSET);
  const actual = crc32(bytes.subarray(0, CRC_OFFSET));
  if (stored !== actual) return `host record ${slot}: CRC-32 mismatch`;
  const scheme = SCHEMES[bytes.readUInt8(0)];
  const length = bytes.readUInt8(1);
  const port = bytes.readUInt16LE(2);
  const name = bytes.toString('latin1', NAME_OFFSET, NAME_OFFSET + length);
  if (scheme === undefined) return `host record ${slot}: unknown protocol ${bytes.readUInt8(0)}`;
  if (!validName(name) || port === 0) return `host record ${slot}: bad host name or port`;
  const u32 = (at: number) => bytes.readUInt32LE(at);
  return {
    slot,
    scheme,
    port,
    name,
    readPage: u32(4),
    readOffset: u32(8),
    writePage: u32(12),
    writeOffset: u32(16),
    pushed: u32(20),
    consumed: u32(24),
    objectCounts: [0, 1, 2, 3].map((i) => u32(28 + 4 * i)),
    robotsOid: u32(44),
    robotsTime: u32(48),
    errorCount: u32(52),
    backoffUntil: u32(56),
    priority: u32(60),
    queueKey: copyQueueKey(bytes.subarray(64, 80)),
  };
}

function validName(name: string): boolean {
  return name.length >= 1 && name.length <= MAX_HOST_NAME && /^[\x21-\x7e]+$/.test(name);
}

const FILE_HEADER = { magic: MAGIC, version: FORMAT_VERSION, fields: 3, what: 'host file', code: 'SHERLOCK_CORRUPT_QUEUE' } as const;

function fileHeader(): Buffer {
  return encodeFileHeader(HOST_RECORD_SIZE, MAGIC, [FORMAT_VERSION, HOST_RECORD_SIZE, OBJECT_SECTIONS]);
}

/**
 * The host file, loaded: every record in memory, indexed by site. Only the
 * caller holding the gather lock may open it (GatherQueue does).
 */
export class HostFile {
  readonly path: string;
  /** Bytes cut off a torn end when opened (0 if none). */
  readonly cut: number;
  private readonly fd: number;
  /** records[slot − 1]. */
  private readonly records: HostRecord[] = [];
  private readonly bySite = new Map<string, HostRecord>();

  private constructor(path: string, fd: number) {
    this.path = path;
    this.fd = fd;
    this.cut = this.load();
  }

  /** Creates an empty host file (atomically); it must not exist. */
  static create(path: string): void {
    createFile(path, fileHeader());
  }

  static open(path: string): HostFile {
    const fd = openForUpdate(path);
    try {
      return new HostFile(path, fd);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  private load(): number {
    const [, recordSize, sections] = checkFileHeader(readAt(this.fd, this.path, 32, 0), this.path, FILE_HEADER);
    if (recordSize !== HOST_RECORD_SIZE || sections !== OBJECT_SECTIONS) {
      throw corrupt(this.path, 20, 'unsupported record size or section count');
    }
    const size = fstatSync(this.fd).size;
    let slots = Math.max(0, Math.floor(size / HOST_RECORD_SIZE) - 1);
    for (let first = 1; first <= slots; first += LOAD_CHUNK) {
      const count = Math.min(LOAD_CHUNK, slots - first + 1);
      const chunk = readAt(this.fd, this.path, count * HOST_RECORD_SIZE, first * HOST_RECORD_SIZE);
      for (let i = 0; i < count; i++) {
        const slot = first + i;
        const bytes = chunk.subarray(i * HOST_RECORD_SIZE, (i + 1) * HOST_RECORD_SIZE);
        if (slot === slots && bytes.every((byte) => byte === 0)) {
          slots--; // appended, but the disk never got it: cut below
          break;
        }
        const record = decodeRecord(bytes, slot);
        if (typeof record === 'string') throw corrupt(this.path, slot * HOST_RECORD_SIZE, record);
        const key = siteKey(record.scheme, record.port, record.name);
        if (this.bySite.has(key)) throw corrupt(this.path, slot * HOST_RECORD_SIZE, `host record ${slot} repeats ${key}`);
        this.records.push(record);
        this.bySite.set(key, record);
      }
    }
    const end = (slots + 1) * HOST_RECORD_SIZE;
    if (size === end) return 0;
    log.warning('cut a torn record off the end of the host file', { file: this.path, offset: end, bytes: size - end });
    try {
      ftruncateSync(this.fd, end);
    } catch (err) {
      throw ioError(err, this.path, 'cutting the torn end');
    }
    return size - end;
  }

  get count(): number {
    return this.records.length;
  }

  find(scheme: Scheme, port: number, name: string): HostRecord | undefined {
    return this.bySite.get(siteKey(scheme, port, name));
  }

  get(slot: number): HostRecord | undefined {
    return Number.isInteger(slot) && slot >= 1 ? this.records[slot - 1] : undefined;
  }

  all(): readonly HostRecord[] {
    return this.records;
  }

  /** Appends a record for a new site (queue empty, every field 0, awaiting DNS). */
  add(scheme: Scheme, port: number, name: string): HostRecord {
    if (!validName(name)) {
      const message = `host name must be 1–${MAX_HOST_NAME} printable ASCII characters (got ${name.length} characters)`;
      throw new SherlockError('SHERLOCK_TOO_LARGE', message, { file: this.path });
    }
    if (PROTOCOL[scheme] === undefined) throw new RangeError(`unknown scheme ${String(scheme)}`);
    if (!Number.isInteger(port) || port < 1 || port > 0xffff) throw new RangeError(`bad port ${port}`);
    if (this.find(scheme, port, name) !== undefined) throw new Error(`host ${siteKey(scheme, port, name)} exists`);
    const record: HostRecord = {
      slot: this.records.length + 1,
      scheme,
      port,
      name,
      readPage: 0,
      readOffset: 0,
      writePage: 0,
      writeOffset: 0,
      pushed: 0,
      consumed: 0,
      objectCounts: [0, 0, 0, 0],
      robotsOid: 0,
      robotsTime: 0,
      errorCount: 0,
      backoffUntil: 0,
      priority: 0,
      queueKey: Buffer.alloc(QUEUE_KEY_SIZE),
    };
    writeAt(this.fd, this.path, encodeRecord(record), record.slot * HOST_RECORD_SIZE);
    this.records.push(record);
    this.bySite.set(siteKey(scheme, port, name), record);
    return record;
  }

  /** Writes the record with `changes` applied (one pwrite of the slot), then applies them in memory. */
  update(record: HostRecord, changes: Partial<HostFields & QueueState>): void {
    checkFields(changes);
    const next: HostRecord = { ...record, ...changes };
    writeAt(this.fd, this.path, encodeRecord(next), record.slot * HOST_RECORD_SIZE);
    Object.assign(record, changes);
  }

  sync(): void {
    try {
      fdatasyncSync(this.fd);
    } catch (err) {
      throw ioError(err, this.path, 'syncing');
    }
  }

  /** sync() waited for off the thread; the file must stay open until it settles. */
  syncInBackground(): Promise<void> {
    return datasyncInBackground(this.fd, this.path);
  }

  close(): void {
    closeSync(this.fd);
  }
}

// ---------------------------------------------------------------- queue keys

/**
 * The records as they are on disk now, read without the lock, for a status
 * page while the gatherer runs: a slot being written at this moment (its CRC
 * not matching yet) is left out, and nothing is repaired.
 */
export function readHostRecords(path: string): HostRecord[] {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw ioError(err, path, 'reading');
  }
  checkFileHeader(bytes.subarray(0, 32), path, FILE_HEADER);
  const records: HostRecord[] = [];
  for (let slot = 1; (slot + 1) * HOST_RECORD_SIZE <= bytes.length; slot++) {
    const record = decodeRecord(bytes.subarray(slot * HOST_RECORD_SIZE, (slot + 1) * HOST_RECORD_SIZE), slot);
    if (typeof record !== 'string') records.push(record);
  }
  return records;
}

export type QueueKeyKind = 'awaiting-dns' | 'not-ip' | 'unresolvable' | 'ip';

/** ::, the key of a host whose address is not known yet. */
export const AWAITING_DNS: Buffer = Buffer.alloc(QUEUE_KEY_SIZE);

/** A reserved key: 7f 01 (not an IP host) or 7f 02 (unresolvable), then `tail` (up to 14 bytes, zero-padded). */
export function reservedQueueKey(kind: 'not-ip' | 'unresolvable', tail: Uint8Array = new Uint8Array(0)): Buffer {
  if (tail.length > QUEUE_KEY_SIZE - 2) throw new RangeError('a reserved queue key holds at most 14 bytes after its prefix');
  const key = Buffer.alloc(QUEUE_KEY_SIZE);
  key[0] = 0x7f;
  key[1] = kind === 'not-ip' ? 0x01 : 0x02;
  key.set(tail, 2);
  return key;
}

export function queueKeyKind(key: Uint8Array): QueueKeyKind {
  if (key.every((byte) => byte === 0)) return 'awaiting-dns';
  if (key[0] === 0x7f && key[1] === 0x01) return 'not-ip';
  if (key[0] === 0x7f && key[1] === 0x02) return 'unresolvable';
  return 'ip';
}

/**
 * A copy of a queue key in memory of its own. Buffer.from() would cut it from
 * Node's shared 8 KiB pool, and a host's record lives as long as the
 * gatherer: one key then kept a whole 8 KiB slab alive (21.8 MB at 2,700
 * hosts in issue 32's soak, up to 80 MB at 10,000).
 */
export function copyQueueKey(key: Uint8Array): Buffer {
  const copy = Buffer.alloc(QUEUE_KEY_SIZE);
  copy.set(key);
  return copy;
}

/** The queue key of an IPv4 or IPv6 address (as dns.lookup returns it); IPv4 becomes ::ffff:a.b.c.d. */
export function queueKeyOf(address: string): Buffer {
  const bare = address.replace(/%.*$/, ''); // a zone id names the interface, not the peer
  const key = Buffer.alloc(QUEUE_KEY_SIZE);
  if (isIP(bare) === 4) {
    key[10] = 0xff;
    key[11] = 0xff;
    bare.split('.').forEach((octet, i) => (key[12 + i] = Number(octet)));
  } else if (isIP(bare) === 6) {
    let text = bare;
    const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
    if (dotted !== null) {
      const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
      text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
    }
    const [head = '', tail] = text.split('::');
    const left = head === '' ? [] : head.split(':');
    const right = tail === undefined || tail === '' ? [] : tail.split(':');
    const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
    groups.forEach((group, i) => key.writeUInt16BE(parseInt(group, 16), 2 * i));
  } else {
    throw new RangeError(`not an IP address: ${address}`);
  }
  if (queueKeyKind(key) !== 'ip') throw new RangeError(`${address} cannot be a queue key`);
  return key;
}

/** The address of an IP key (dotted for IPv4-mapped, RFC 5952 for IPv6), else the kind. */
export function queueKeyText(key: Uint8Array): string {
  const kind = queueKeyKind(key);
  if (kind !== 'ip') return kind;
  const bytes = Buffer.from(key);
  if (bytes.subarray(0, 10).every((byte) => byte === 0) && bytes.readUInt16BE(10) === 0xffff) {
    return [...bytes.subarray(12)].join('.');
  }
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(2 * i).toString(16));
  // The WHATWG URL serialiser compresses the longest zero run as RFC 5952 §4.2 asks.
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

/** fdatasync on libuv's thread pool, failing as sync() does. */
export function datasyncInBackground(fd: number, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    fdatasync(fd, (err) => (err === null ? resolve() : reject(ioError(err, file, 'syncing'))));
  });
}
