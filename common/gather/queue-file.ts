/**
 * The gatherer's queues: per host a FIFO of URL rests (path and query of a
 * canonical URL) with a priority, kept as a chain of 2 KiB pages in
 * `<state>/gather/queue`, with the chain's ends in the host's record in
 * `<state>/gather/hosts` (host-file.ts). After the seed's "GatherD queue file"
 * (seeds/003, sherlock-original §2). The shepherd pushes; the gatherer takes
 * an entry, fetches it, stores the result and only then calls done(), which
 * is what moves the read position.
 *
 * The two files are one structure (host records point into pages, pages name
 * their host, and every crash argument spans both), so GatherQueue owns both,
 * under one lock, `<state>/gather/queue.lock`. host-file.ts keeps the record
 * layout; this module keeps the pages and every write order.
 *
 * Layout; every u32 is little-endian. Page N lies at offset N × 2048.
 *
 *   Page 0: file header (only the first 52 bytes are used; the rest is zero)
 *     0    16  magic "SHERLOCK-QUEUE" (ASCII) and two zero bytes
 *     16    4  format version, 1
 *     20    4  page size, 2048
 *     24    4  page count P, page 0 included: pages are 1 … P−1
 *     28    4  head of the free list, 0 if empty (the original kept it in a
 *              (0,0) pseudo-host; a header field needs no fake host)
 *     32    4  number of free pages
 *     36    4  intent: 0 none, 1 allocating a page, 2 freeing a page
 *     40    4  intent page
 *     44    4  intent host (record slot)
 *     48    4  CRC-32 of bytes 0–47
 *
 *   Page N ≥ 1
 *     0     4  next page in the chain, 0 for the last (the seed's
 *              pos_of_next_page, as a page number: × 2048 gives the offset)
 *     4     4  owner: the host's record slot; 0 for a free page
 *     8     4  used: end of the last entry, 16–2048 (16 for a free page)
 *     12    4  CRC-32 of bytes 0–11, continued over bytes 16 to used−1
 *     16       entries, back to back: url_rest (no NUL inside), 0x00, u32 priority
 *
 * A free page's next field links the free list. An entry must fit one page:
 * the rest is at most MAX_REST_LENGTH = 2027 bytes, longer ones are refused
 * with SHERLOCK_TOO_LARGE (canonical URLs may reach 8192 characters, but the
 * shepherd's trap defence keeps real ones far shorter; sitemaps cap URLs at
 * 2048). A host with an empty queue owns no page.
 *
 * Invariants. Every page 1 … P−1 is in exactly one place: one host's chain,
 * from its read page to its write page (whose next is 0), or the free list.
 * A host's queue holds pushed − consumed entries, from (read page, read
 * offset) to (write page, write offset); a page's owner is its host. The write
 * page may hold bytes past the write offset (a push cut by a crash): they are
 * not entries, and the next push overwrites them. Its used field is made equal
 * to the write offset when a page is linked behind it.
 *
 * Writes, in order. A single pwrite of up to 2048 bytes inside one page (or of
 * a 512-byte host record) is whole after kill -9; between two writes anything
 * may stop. Each operation's commit point is the host record.
 *   push, entry fits the write page:
 *     1. the page, bytes 0 to the new end (header, entries, new entry)
 *     2. host record: write offset, pushed                          ← commit
 *   push needing a page:
 *     1. header: intent = allocate (page, host); the page is taken off the
 *        free list (head and count) or from the end (count P + 1)
 *     2. the new page: next 0, owner, the entry
 *     3. if the host had pages: the old write page, next = new page
 *     4. host record: write page and offset, pushed (and read position and
 *        head priority if the queue was empty)                       ← commit
 *   done, the read position stays in its page:
 *     1. host record: read offset, consumed, head priority          ← commit
 *   done, leaving its page (or emptying the queue):
 *     1. header: intent = free (page, host)
 *     2. host record: read position on the next page (or 0: empty)  ← commit
 *     3. the page: owner 0, next = free-list head
 *     4. header: free-list head = the page, count + 1, intent none
 * Opening completes or undoes the intent, as the host record says:
 *   allocate, and the host's write page is the intent page: it finished;
 *     otherwise undo it: clear the next link of the host's write page if it
 *     names the intent page, then free the page (free steps 3 and 4);
 *   free, and the host's read page is still the intent page: it never
 *     committed, drop the intent; otherwise redo free steps 3 and 4.
 * Every recovery step is idempotent, so a crash while recovering is
 * recovered the same way. An allocate intent is left in place when the push
 * finishes (the check above then finds it finished), saving a header write.
 * Every read and check of an operation comes before its first write; if a
 * write fails (or damage turns up) midway, the queue refuses all later
 * writes, and reopening recovers as after a crash.
 *
 * What survives a crash. kill -9 at any instant: every push() and done() that
 * returned is in the files (the kernel holds the written pages); nothing done()
 * returns again; no page is lost, in two chains, or both free and used.
 * Power loss or a kernel crash: sync() fdatasyncs the queue file, then the host
 * file; everything done before it returned survives. Writes since the last
 * sync may be lost or reach the disk partly and in any order; the CRCs, page
 * owners, bounds and verify() detect the damage this can leave (a record
 * pointing at a page that never reached the disk, a page both free and
 * used), and it is reported, never followed. They cannot tell an intact older
 * version of a page the same host owned before from the current one; that
 * replays old entries. So sync before telling anyone (the shepherd's
 * database, a checkpoint) that a URL is queued or consumed.
 *
 * Exactly once. Entries carry a sequence number per host (the pushed count
 * when they were pushed). A gatherer that stores the (host, seq) of each result
 * with the result, syncs it, then calls done(), can tell after a crash whether
 * the head entry was already stored (its seq is recorded) and only call done().
 *
 * Reading distrusts the disk: page numbers are checked against P, every page
 * read is checked (CRC, owner, used), entries must end inside their page, and
 * walks are bounded by the page count and the queue length, so damage is a
 * SherlockError naming the file and offset, never a loop.
 */

import { closeSync, existsSync, fdatasyncSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { SherlockError, ioError } from '../errors.js';
import { checkFileHeader, encodeFileHeader } from '../file-header.js';
import { createFile, openForUpdate, readAt, writeAt } from '../files.js';
import {
  HOST_RECORD_SIZE,
  HostFile,
  checkFields,
  copyQueueKey,
  datasyncInBackground,
  corrupt,
  type HostFields,
  type HostRecord,
  type QueueState,
} from './host-file.js';
import { acquireLock, type Lock } from '../lock.js';
import { logger } from '../log.js';
import type { Scheme } from '../url.js';

export const PAGE_SIZE = 2048;
export const PAGE_HEADER_SIZE = 16;
/** Longest url rest in bytes: an entry (rest, NUL, u32) fills at most one page's entry area. */
export const MAX_REST_LENGTH = PAGE_SIZE - PAGE_HEADER_SIZE - 5;
/** Page numbers are u32. */
const MAX_PAGES = 0xffffffff;

const MAGIC = 'SHERLOCK-QUEUE\0\0';
const FORMAT_VERSION = 1;
const HEADER_SIZE = 52;
const INTENT = { none: 0, allocate: 1, free: 2 } as const;
type Intent = (typeof INTENT)[keyof typeof INTENT];

const log = logger('gather-queue');

export interface GatherPaths {
  hosts: string;
  queue: string;
  lock: string;
}

export function gatherPaths(state: string): GatherPaths {
  const dir = join(state, 'gather');
  return { hosts: join(dir, 'hosts'), queue: join(dir, 'queue'), lock: join(dir, 'queue.lock') };
}

/** One queued URL. `seq` counts per host from 0 (modulo 2^32) in push order. */
export interface QueueEntry {
  rest: string;
  priority: number;
  seq: number;
}

/** What tallies() shows of a host; queuedIn() gives its entries queued. */
export interface HostTally {
  readonly slot: number;
  readonly scheme: Scheme;
  readonly port: number;
  readonly name: string;
  readonly pushed: number;
  readonly consumed: number;
  readonly errorCount: number;
  readonly backoffUntil: number;
}

/** Entries queued: pushed − consumed, both counting modulo 2³². */
export function queuedIn(host: Pick<HostTally, 'pushed' | 'consumed'>): number {
  return (host.pushed - host.consumed) >>> 0;
}

/** A snapshot of a host record; pass it back to name the host. */
export interface Host {
  readonly slot: number;
  readonly scheme: Scheme;
  readonly port: number;
  readonly name: string;
  /** Entries queued now. */
  readonly queued: number;
  readonly pushed: number;
  readonly consumed: number;
  /** The head entry's priority, 0 when the queue is empty. */
  readonly priority: number;
  readonly objectCounts: readonly number[];
  readonly robotsOid: number;
  readonly robotsTime: number;
  readonly errorCount: number;
  readonly backoffUntil: number;
  readonly queueKey: Buffer;
}

export type HostUpdate = Partial<HostFields>;

export interface QueueProblem {
  file: string;
  offset: number;
  message: string;
}

export interface QueueReport {
  hosts: number;
  /** Pages 1 … P−1. */
  pages: number;
  freePages: number;
  queued: number;
  problems: QueueProblem[];
}

interface Header {
  pages: number;
  freeHead: number;
  freeCount: number;
  intent: Intent;
  intentPage: number;
  intentHost: number;
}

interface Page {
  number: number;
  next: number;
  owner: number;
  used: number;
  /** The whole page; bytes from `used` on are not part of it. */
  data: Buffer;
}

const FILE_HEADER = { magic: MAGIC, version: FORMAT_VERSION, fields: 8, what: 'queue file', code: 'SHERLOCK_CORRUPT_QUEUE' } as const;

function encodeHeader(header: Header): Buffer {
  const fields = [FORMAT_VERSION, PAGE_SIZE, header.pages, header.freeHead, header.freeCount, header.intent, header.intentPage, header.intentHost];
  return encodeFileHeader(HEADER_SIZE, MAGIC, fields);
}

function pageCrc(data: Buffer, used: number): number {
  return crc32(data.subarray(PAGE_HEADER_SIZE, used), crc32(data.subarray(0, 12)));
}

function encodeEntry(rest: string, priority: number): Buffer {
  if (!Number.isInteger(priority) || priority < 0 || priority > 0xffffffff) throw new RangeError(`priority must be a u32, not ${priority}`);
  if (rest.includes('\0')) throw new RangeError('a url rest cannot hold NUL');
  const bytes = Buffer.byteLength(rest);
  if (bytes > MAX_REST_LENGTH) {
    throw new SherlockError('SHERLOCK_TOO_LARGE', `url rest of ${bytes} bytes over the queue's limit of ${MAX_REST_LENGTH}`, { url: rest.slice(0, 200) });
  }
  const out = Buffer.alloc(bytes + 5);
  out.write(rest, 0, 'utf8');
  out.writeUInt32LE(priority, bytes + 1);
  return out;
}

/**
 * The queue file and host file of one state directory, opened by their one
 * writer (see the module comment). Host records live in memory; pages are read
 * when needed, the last one touched kept.
 */
export class GatherQueue {
  readonly paths: GatherPaths;
  /** What opening completed or undid after a crash, if anything. */
  readonly recovered: string | undefined;
  private readonly fd: number;
  private readonly hostFile: HostFile;
  private readonly lock: Lock;
  private header: Header;
  /** The last page read or written, as it is on disk. */
  private cached: Page | undefined;
  /** Why an operation failed midway, if one did (see writing()). */
  private broken: unknown;

  private constructor(paths: GatherPaths, fd: number, hostFile: HostFile, lock: Lock) {
    this.paths = paths;
    this.fd = fd;
    this.hostFile = hostFile;
    this.lock = lock;
    this.header = this.readHeader();
    this.recovered = this.recover();
  }

  /** Opens (creating when neither file exists) and recovers; SHERLOCK_LOCKED if another writer has it. */
  static open(state: string): GatherQueue {
    const paths = gatherPaths(state);
    try {
      mkdirSync(join(state, 'gather'), { recursive: true });
    } catch (err) {
      throw ioError(err, join(state, 'gather'), 'creating the directory');
    }
    const lock = acquireLock(paths.lock);
    let fd: number | undefined;
    let hostFile: HostFile | undefined;
    try {
      // The queue file first: a crash between the two leaves a queue without pages and no host file.
      const hostsExist = existsSync(paths.hosts);
      if (!existsSync(paths.queue)) {
        if (hostsExist) throw corrupt(paths.queue, 0, 'queue file missing while the host file exists');
        const empty = Buffer.alloc(PAGE_SIZE);
        encodeHeader({ pages: 1, freeHead: 0, freeCount: 0, intent: INTENT.none, intentPage: 0, intentHost: 0 }).copy(empty);
        createFile(paths.queue, empty);
      }
      fd = openForUpdate(paths.queue);
      if (!hostsExist) {
        const pages = readAt(fd, paths.queue, 4, 24);
        if (pages.length === 4 && pages.readUInt32LE(0) > 1) throw corrupt(paths.hosts, 0, 'host file missing while the queue holds pages');
        HostFile.create(paths.hosts);
      }
      hostFile = HostFile.open(paths.hosts);
      return new GatherQueue(paths, fd, hostFile, lock);
    } catch (err) {
      hostFile?.close();
      if (fd !== undefined) closeSync(fd);
      lock.release();
      throw err;
    }
  }

  // ------------------------------------------------------------ hosts

  /** Every host, in slot order. */
  *hosts(): Generator<Host> {
    for (const record of this.hostFile.all()) yield snapshot(record);
  }

  /**
   * Every host's record itself, typed read-only and not copied: for walks over
   * all hosts that read a few fields (the gatherer's status, once a second),
   * where hosts() would copy 10,000 records a second. Read it in one go: the
   * records change with the queue.
   */
  tallies(): readonly HostTally[] {
    return this.hostFile.all();
  }

  /** The host's record, created (empty queue, awaiting DNS) if it has none. */
  host(scheme: Scheme, port: number, name: string): Host {
    const found = this.hostFile.find(scheme, port, name);
    if (found !== undefined) return snapshot(found);
    this.usable();
    return snapshot(this.hostFile.add(scheme, port, name)); // one write: nothing to cut midway
  }

  find(scheme: Scheme, port: number, name: string): Host | undefined {
    const record = this.hostFile.find(scheme, port, name);
    return record === undefined ? undefined : snapshot(record);
  }

  /** The host as it is now (a fresh snapshot). */
  get(host: Host): Host {
    return snapshot(this.record(host));
  }

  /** Sets robots, counts, errors, back-off or queue key; one record write. */
  update(host: Host, changes: HostUpdate): Host {
    const record = this.record(host);
    const allowed: Array<keyof HostFields> = ['objectCounts', 'robotsOid', 'robotsTime', 'errorCount', 'backoffUntil', 'queueKey'];
    for (const key of Object.keys(changes)) {
      if (!allowed.includes(key as keyof HostFields)) throw new RangeError(`${key} is not a field update() sets`);
    }
    checkFields(changes);
    const copied: HostUpdate = { ...changes };
    if (changes.objectCounts !== undefined) copied.objectCounts = [...changes.objectCounts];
    if (changes.queueKey !== undefined) copied.queueKey = copyQueueKey(changes.queueKey);
    this.writing(() => this.hostFile.update(record, copied));
    return snapshot(record);
  }

  length(host: Host): number {
    return queuedIn(this.record(host));
  }

  // ------------------------------------------------------------ queues

  /** Appends an entry to the host's queue; returns its seq. Durable against kill -9 on return. */
  push(host: Host, rest: string, priority: number): number {
    const record = this.record(host);
    const entry = encodeEntry(rest, priority);
    const seq = record.pushed;
    const pushed = (seq + 1) >>> 0;
    // Every read and check before the first write, so that damage found stops the push unwritten.
    const tail = record.writePage === 0 ? undefined : this.tailPage(record);
    this.writing(() => {
      if (tail !== undefined && record.writeOffset + entry.length <= PAGE_SIZE) {
        entry.copy(tail.data, record.writeOffset);
        this.storePage({ ...tail, used: record.writeOffset + entry.length });
        this.hostFile.update(record, { writeOffset: record.writeOffset + entry.length, pushed });
        return;
      }
      const number = this.allocate(record.slot);
      const data = Buffer.alloc(PAGE_SIZE);
      entry.copy(data, PAGE_HEADER_SIZE);
      const end = PAGE_HEADER_SIZE + entry.length;
      this.storePage({ number, next: 0, owner: record.slot, used: end, data });
      if (tail === undefined) {
        this.hostFile.update(record, { readPage: number, readOffset: PAGE_HEADER_SIZE, writePage: number, writeOffset: end, pushed, priority });
      } else {
        this.storePage({ ...tail, next: number, used: record.writeOffset });
        this.hostFile.update(record, { writePage: number, writeOffset: end, pushed });
      }
    });
    return seq;
  }

  /** The host's head entry, left in the queue until done(); undefined when empty. */
  take(host: Host): QueueEntry | undefined {
    const record = this.record(host);
    if (record.pushed === record.consumed) return undefined;
    const { entry } = this.head(record);
    return { rest: entry.rest, priority: entry.priority, seq: record.consumed };
  }

  /**
   * Removes the head entry, which must be `seq` (from take()); a page left
   * empty goes to the free list. Durable against kill -9 on return.
   */
  done(host: Host, seq: number): void {
    const record = this.record(host);
    if (record.pushed === record.consumed) throw new Error(`done(${seq}): the queue of ${record.name} is empty`);
    if (seq !== record.consumed) throw new Error(`done(${seq}): the head of ${record.name} is entry ${record.consumed}`);
    const { page, entry } = this.head(record);
    const consumed = (record.consumed + 1) >>> 0;
    const tail = page.number === record.writePage;
    const end = tail ? record.writeOffset : page.used;
    if (entry.end < end) {
      const next = parseEntry(page, entry.end, end, this.paths.queue);
      this.writing(() => this.hostFile.update(record, { readOffset: entry.end, consumed, priority: next.priority }));
      return;
    }
    let moved: Partial<QueueState>;
    if (tail) {
      moved = { readPage: 0, readOffset: 0, writePage: 0, writeOffset: 0, consumed, priority: 0 };
    } else {
      const following = this.loadPage(page.next, record.slot, page.number * PAGE_SIZE);
      const limit = following.number === record.writePage ? record.writeOffset : following.used;
      const next = parseEntry(following, PAGE_HEADER_SIZE, limit, this.paths.queue);
      moved = { readPage: following.number, readOffset: PAGE_HEADER_SIZE, consumed, priority: next.priority };
    }
    this.writing(() => {
      this.writeHeader({ ...this.header, intent: INTENT.free, intentPage: page.number, intentHost: record.slot });
      this.hostFile.update(record, moved);
      this.release(page.number);
    });
  }

  /** The host's queued entries, head first (for status and checks; reads every page of the chain). */
  *entries(host: Host): Generator<QueueEntry> {
    const record = this.record(host);
    yield* this.walk(record);
  }

  /**
   * Checks everything: every chain (pages, CRCs, entries, lengths), the free
   * list, and that each page is in exactly one of them. Memory: a byte per page.
   */
  verify(): QueueReport {
    const pages = this.header.pages;
    const problems: QueueProblem[] = [];
    const problem = (err: unknown): void => {
      if (!(err instanceof SherlockError) || err.place.offset === undefined) throw err;
      problems.push({ file: err.place.file ?? this.paths.queue, offset: err.place.offset, message: err.message });
    };
    /** 0 unseen, else the owner's slot + 1 (1: the free list). */
    const seen = new Uint32Array(pages);
    const claim = (number: number, owner: number, what: string): void => {
      const previous = seen[number]!;
      if (previous !== 0) {
        const before = previous === 1 ? 'the free list' : `the chain of host ${previous - 1}`;
        throw corrupt(this.paths.queue, number * PAGE_SIZE, `page ${number} is in ${before} and in ${what}`);
      }
      seen[number] = owner + 1;
    };
    let queued = 0;
    for (const record of this.hostFile.all()) {
      try {
        for (const entry of this.walk(record, (page) => claim(page, record.slot, `the chain of host ${record.slot}`))) void entry;
        queued += queuedIn(record);
      } catch (err) {
        problem(err);
      }
    }
    let free = 0;
    try {
      let where = 28;
      for (let number = this.header.freeHead; number !== 0; ) {
        if (++free >= pages) throw corrupt(this.paths.queue, where, 'the free list is longer than the file');
        const page = this.loadPage(number, 0, where);
        claim(number, 0, 'the free list');
        where = number * PAGE_SIZE;
        number = page.next;
      }
      if (free !== this.header.freeCount) throw corrupt(this.paths.queue, 32, `header counts ${this.header.freeCount} free pages, the list holds ${free}`);
    } catch (err) {
      problem(err);
    }
    for (let number = 1; number < pages; number++) {
      if (seen[number] === 0) problems.push({ file: this.paths.queue, offset: number * PAGE_SIZE, message: `page ${number} is neither free nor in a chain` });
    }
    return { hosts: this.hostFile.count, pages: pages - 1, freePages: free, queued, problems };
  }

  /** Makes everything so far survive power loss: the queue file first, as host records point into it. */
  sync(): void {
    try {
      fdatasyncSync(this.fd);
    } catch (err) {
      throw ioError(err, this.paths.queue, 'syncing');
    }
    this.hostFile.sync();
  }

  /** sync() waited for off the thread, for a caller that must not block; keep the queue open until it settles. */
  async syncInBackground(): Promise<void> {
    await datasyncInBackground(this.fd, this.paths.queue);
    await this.hostFile.syncInBackground();
  }

  /** Closes both files and releases the lock (no sync: call sync() first for power-loss safety). */
  close(): void {
    closeSync(this.fd);
    this.hostFile.close();
    this.lock.release();
  }

  // ------------------------------------------------------------ internals

  private record(host: Host): HostRecord {
    const record = this.hostFile.get(host.slot);
    if (record === undefined || record.name !== host.name || record.port !== host.port || record.scheme !== host.scheme) {
      throw new Error(`host ${host.name} (slot ${host.slot}) is not in this queue`);
    }
    return record;
  }

  /**
   * Runs the writes of one operation. After a failure among them (I/O, or
   * damage found between two writes) it refuses every later one: the files
   * may hold a cut operation, which only reopening recovers.
   */
  private writing<T>(body: () => T): T {
    this.usable();
    try {
      return body();
    } catch (err) {
      this.broken = err;
      throw err;
    }
  }

  private usable(): void {
    if (this.broken !== undefined) {
      const message = 'an earlier operation failed midway; reopen the queue to recover';
      throw new SherlockError('SHERLOCK_IO', message, { file: this.paths.queue }, { cause: this.broken });
    }
  }

  private readHeader(): Header {
    const file = this.paths.queue;
    const [, pageSize, pages, freeHead, freeCount, intent, intentPage, intentHost] = checkFileHeader(readAt(this.fd, file, HEADER_SIZE, 0), file, FILE_HEADER) as [
      number, number, number, number, number, number, number, number,
    ];
    if (pageSize !== PAGE_SIZE) throw corrupt(file, 20, `unsupported page size ${pageSize}`);
    if (pages < 1) throw corrupt(file, 24, 'page count 0');
    if (freeHead >= pages) throw corrupt(file, 28, `free-list head ${freeHead} past the last page ${pages - 1}`);
    if (freeCount >= pages) throw corrupt(file, 32, `${freeCount} free pages in a file of ${pages - 1}`);
    if (intent !== INTENT.none && intent !== INTENT.allocate && intent !== INTENT.free) throw corrupt(file, 36, `unknown intent ${intent}`);
    if (intent !== INTENT.none && (intentPage < 1 || intentPage >= pages || this.hostFile.get(intentHost) === undefined)) {
      throw corrupt(file, 40, `intent names page ${intentPage} of host ${intentHost}, which do not exist`);
    }
    return { pages, freeHead, freeCount, intent, intentPage, intentHost };
  }

  private writeHeader(header: Header): void {
    writeAt(this.fd, this.paths.queue, encodeHeader(header), 0);
    this.header = header;
  }

  /** Finishes or undoes the operation a crash cut (module comment); returns what it did. */
  private recover(): string | undefined {
    const { intent, intentPage: number, intentHost } = this.header;
    if (intent === INTENT.none) return undefined;
    const record = this.hostFile.get(intentHost)!;
    let done: string;
    if (intent === INTENT.allocate) {
      if (record.writePage === number) return undefined;
      if (record.writePage !== 0) {
        const tail = this.tailPage(record);
        if (tail.next === number) this.storePage({ ...tail, next: 0 });
      }
      done = `undid the allocation of page ${number} by an unfinished push to ${record.name}`;
    } else if (record.readPage === number) {
      this.writeHeader({ ...this.header, intent: INTENT.none, intentPage: 0, intentHost: 0 });
      return undefined;
    } else {
      done = `finished freeing page ${number} after a done() on ${record.name}`;
    }
    this.release(number);
    log.notice('recovered the gather queue after a crash', { file: this.paths.queue, page: number, action: done });
    return done;
  }

  /** Takes a page for `slot`: free-list head or a new one at the end (push steps 1). */
  private allocate(slot: number): number {
    const header = this.header;
    if (header.freeHead !== 0) {
      const page = this.loadPage(header.freeHead, 0, 28);
      if (header.freeCount === 0) throw corrupt(this.paths.queue, 32, 'free list not empty but counted 0');
      this.writeHeader({ ...header, freeHead: page.next, freeCount: header.freeCount - 1, intent: INTENT.allocate, intentPage: page.number, intentHost: slot });
      return page.number;
    }
    if (header.pages >= MAX_PAGES) throw new SherlockError('SHERLOCK_TOO_LARGE', 'queue file is full (page numbers exhausted)', { file: this.paths.queue });
    this.writeHeader({ ...header, pages: header.pages + 1, intent: INTENT.allocate, intentPage: header.pages, intentHost: slot });
    return header.pages;
  }

  /** Puts a page on the free list and clears the intent (done steps 3 and 4). */
  private release(number: number): void {
    const data = Buffer.alloc(PAGE_SIZE);
    this.storePage({ number, next: this.header.freeHead, owner: 0, used: PAGE_HEADER_SIZE, data });
    this.writeHeader({ ...this.header, freeHead: number, freeCount: this.header.freeCount + 1, intent: INTENT.none, intentPage: 0, intentHost: 0 });
  }

  /** Writes a page's header and entries in one pwrite. */
  private storePage(page: Page): void {
    const { data } = page;
    data.writeUInt32LE(page.next, 0);
    data.writeUInt32LE(page.owner, 4);
    data.writeUInt32LE(page.used, 8);
    data.writeUInt32LE(pageCrc(data, page.used), 12);
    this.cached = undefined;
    writeAt(this.fd, this.paths.queue, data.subarray(0, page.used), page.number * PAGE_SIZE);
    this.cached = page;
  }

  /**
   * Reads and checks page `number`, which must belong to `owner` (0: free).
   * `from` is the offset of the link that named it, for the error.
   */
  private loadPage(number: number, owner: number, from: number): Page {
    const file = this.paths.queue;
    if (number < 1 || number >= this.header.pages) {
      throw corrupt(file, from, `link to page ${number}, outside 1–${this.header.pages - 1}`);
    }
    const offset = number * PAGE_SIZE;
    let page = this.cached?.number === number ? this.cached : undefined;
    if (page === undefined) {
      const read = readAt(this.fd, file, PAGE_SIZE, offset);
      if (read.length < PAGE_HEADER_SIZE) throw corrupt(file, offset, `page ${number} cut short by the end of the file`);
      const used = read.readUInt32LE(8);
      if (used < PAGE_HEADER_SIZE || used > PAGE_SIZE) throw corrupt(file, offset + 8, `page ${number}: used ${used} out of range`);
      if (used > read.length) throw corrupt(file, offset + read.length, `page ${number} cut short by the end of the file`);
      // Pages are written only up to `used`; the last one in the file may be short.
      const data = Buffer.alloc(PAGE_SIZE);
      read.copy(data);
      if (data.readUInt32LE(12) !== pageCrc(data, used)) throw corrupt(file, offset, `page ${number}: CRC-32 mismatch`);
      page = { number, next: data.readUInt32LE(0), owner: data.readUInt32LE(4), used, data };
      this.cached = page;
    }
    if (page.owner !== owner) {
      const whose = (slot: number) => (slot === 0 ? 'the free list' : `host ${slot}`);
      throw corrupt(file, offset + 4, `page ${number} belongs to ${whose(page.owner)}, not ${whose(owner)}`);
    }
    if (page.next >= this.header.pages) throw corrupt(file, offset, `page ${number} links to page ${page.next}, past the last page`);
    return { ...page, data: Buffer.from(page.data) };
  }

  /** The host's write page, checked against its record. */
  private tailPage(record: HostRecord): Page {
    const page = this.loadPage(record.writePage, record.slot, recordOffset(record) + 12);
    if (page.used < record.writeOffset || record.writeOffset < PAGE_HEADER_SIZE) {
      throw corrupt(this.paths.queue, page.number * PAGE_SIZE + 8, `page ${page.number} holds ${page.used} bytes, host ${record.slot} writes at ${record.writeOffset}`);
    }
    return page;
  }

  /** The head entry's page and entry. */
  private head(record: HostRecord): { page: Page; entry: ParsedEntry } {
    const tail = record.readPage === record.writePage;
    const page = tail ? this.tailPage(record) : this.loadPage(record.readPage, record.slot, recordOffset(record) + 4);
    const end = tail ? record.writeOffset : page.used;
    return { page, entry: parseEntry(page, record.readOffset, end, this.paths.queue) };
  }

  /** The host's entries, head first; `onPage` sees each page number of the chain first. */
  private *walk(record: HostRecord, onPage?: (page: number) => void): Generator<QueueEntry> {
    let seq = record.consumed;
    for (const { page, start, end } of this.chain(record)) {
      onPage?.(page.number);
      for (let at = start; at < end; ) {
        const entry = parseEntry(page, at, end, this.paths.queue);
        yield { rest: entry.rest, priority: entry.priority, seq };
        seq = (seq + 1) >>> 0;
        at = entry.end;
      }
    }
    if (seq !== record.pushed) {
      const counted = queuedIn(record);
      const held = (seq - record.consumed) >>> 0;
      throw corrupt(this.paths.hosts, recordOffset(record), `host record ${record.slot} counts ${counted} entries, its chain holds ${held}`);
    }
  }

  /** The pages of a host's chain with the stretch of entries in each; at most P − 1 pages. */
  private *chain(record: HostRecord): Generator<{ page: Page; start: number; end: number }> {
    if (record.readPage === 0 || record.writePage === 0) {
      if (record.readPage !== record.writePage || record.pushed !== record.consumed) {
        throw corrupt(this.paths.hosts, recordOffset(record), `host record ${record.slot} has a queue with one end missing`);
      }
      return;
    }
    let number = record.readPage;
    let from = recordOffset(record) + 4;
    let start = record.readOffset;
    for (let steps = 1; ; steps++) {
      if (steps >= this.header.pages) throw corrupt(this.paths.queue, from, `chain of host ${record.slot} is longer than the file (a cycle)`);
      if (number === record.writePage) {
        const page = this.tailPage(record);
        if (page.next !== 0) throw corrupt(this.paths.queue, page.number * PAGE_SIZE, `write page ${page.number} of host ${record.slot} links on`);
        yield { page, start, end: record.writeOffset };
        return;
      }
      const page = this.loadPage(number, record.slot, from);
      if (page.next === 0) throw corrupt(this.paths.queue, page.number * PAGE_SIZE, `chain of host ${record.slot} ends at page ${page.number} before its write page`);
      yield { page, start, end: page.used };
      from = page.number * PAGE_SIZE;
      number = page.next;
      start = PAGE_HEADER_SIZE;
    }
  }
}

interface ParsedEntry {
  rest: string;
  priority: number;
  /** Offset just past the entry in its page. */
  end: number;
}

/** The entry at `at` in `page`, which must end by `end`. */
function parseEntry(page: Page, at: number, end: number, file: string): ParsedEntry {
  const offset = page.number * PAGE_SIZE + at;
  if (at < PAGE_HEADER_SIZE || at >= end) throw corrupt(file, offset, `no entry at offset ${at} of page ${page.number} (entries end at ${end})`);
  const nul = page.data.indexOf(0, at);
  if (nul < 0 || nul + 5 > end) throw corrupt(file, offset, `entry at offset ${at} of page ${page.number} runs past ${end}`);
  return { rest: page.data.toString('utf8', at, nul), priority: page.data.readUInt32LE(nul + 1), end: nul + 5 };
}

function recordOffset(record: HostRecord): number {
  return record.slot * HOST_RECORD_SIZE;
}

function snapshot(record: HostRecord): Host {
  // The key is shared, not copied: a record's key is replaced by update() (with a copy of the caller's), never written into.
  return {
    slot: record.slot,
    scheme: record.scheme,
    port: record.port,
    name: record.name,
    queued: queuedIn(record),
    pushed: record.pushed,
    consumed: record.consumed,
    priority: record.priority,
    objectCounts: [...record.objectCounts],
    robotsOid: record.robotsOid,
    robotsTime: record.robotsTime,
    errorCount: record.errorCount,
    backoffUntil: record.backoffUntil,
    queueKey: record.queueKey,
  };
}
