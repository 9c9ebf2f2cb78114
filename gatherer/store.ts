/**
 * Where fetched objects go: each response into the current ARC file
 * (`<state>/gather/arc/`), each object (document, error, robots.txt) into
 * the bucket file (`<state>/gather/buckets`), and the queue entry it came
 * from marked done, in that order, one object at a time.
 *
 * Crash contract. Store steps run strictly one after another (a promise
 * chain), and each is: ARC record written → bucket appended (it names the ARC
 * file, offset and length in `a`, and its queue entry in `q`) → the caller's
 * `after` callback (queue done) — the last two in one synchronous stretch.
 * So after kill -9:
 *   - the only ARC bytes no bucket points to are at the end of the open
 *     (`.open`) ARC file: a record written whose bucket was not. Opening cuts
 *     them (and ArcWriter's own recovery then finishes the file), so the ARC
 *     and the buckets agree record for record;
 *   - a bucket may exist whose queue entry was not marked done. The
 *     checkpoint file says from which oid on that can be; opening lists the
 *     `q` of every bucket from there, and the gatherer marks those done
 *     instead of fetching them again.
 * sync() (every gatherer.sync_interval, and on close) runs in the same chain:
 * fsync the ARC, the bucket file and the queue, then write the checkpoint
 * {bucket file generation, next oid, ARC file and size} with an atomic
 * rename. After a power loss the checkpoint therefore never claims more than
 * reached the disk.
 */

import { readFileSync, readdirSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { arcAttribute, arcDir, parseArcAttribute } from '../common/archive/arc-place.js';
import { ArcReader } from '../common/archive/arc-read.js';
import { ArcWriter, type ArcFraming, type ArcRecordInput, type ArcWritten, type FramedArcRecord, type RecoveredArc } from '../common/archive/arc-write.js';
import { BUCKET_TYPE, BucketObject, encodeBucket, encodeDeflatedBucket, type Bucket } from '../common/bucket/bucket.js';
import { BucketWriter, bucketFilePath } from '../common/bucket/file.js';
import { ioError, isSherlockError } from '../common/errors.js';
import { createFile } from '../common/files.js';
import { logger } from '../common/log.js';

/** gzip level of the ARC records: the fastest, since every response is archived on the crawl's path. */
export const ARC_LEVEL = 1;

const log = logger('gatherer');

export const ARC_PREFIX = 'sherlock';
const OPEN_SUFFIX = '.open';

function checkpointPath(state: string): string {
  return join(state, 'gather', 'checkpoint');
}

interface Checkpoint {
  generation: number;
  /** Buckets from this oid on may lack their queue's done(). */
  oid: number;
  /** The open ARC file and how much of it was synced, if one was open. */
  arc?: { file: string; size: number };
}

/** Where a bucket came from in the queues: `q` = "<host slot> <seq>[ retry]"; "retry" when a retry was queued with it. */
export interface QueueRef {
  slot: number;
  seq: number;
  retry?: boolean;
}

/** A bucket found after the checkpoint: its queue entry may still be at the head of its queue. */
export interface Unfinished extends QueueRef {
  oid: number;
  header: BucketObject;
}

export interface StoreInput {
  header: BucketObject;
  /** The body attributes, or the body already deflated (bucket.ts deflatedBody(), made by a parse worker). */
  body: BucketObject | Buffer;
  /** The response to archive, or its record already framed with `arcFraming` (parse-worker.ts); its place is added to the header as `a`. */
  arc?: ArcRecordInput | FramedArcRecord;
  /** The queue entry, added as `q`. */
  from?: QueueRef;
  /** Plain V3.3 for small objects (robots.txt), deflated V3.3 for documents. */
  deflate?: boolean;
}

export interface Stored {
  oid: number;
  arc?: ArcWritten;
}

export function queueAttribute(ref: QueueRef): string {
  return `${ref.slot} ${ref.seq}${ref.retry === true ? ' retry' : ''}`;
}

export function parseQueueAttribute(value: string | undefined): QueueRef | undefined {
  const m = value === undefined ? null : /^(\d{1,10}) (\d{1,10})( retry)?$/.exec(value);
  if (m === null) return undefined;
  return m[3] === undefined ? { slot: Number(m[1]), seq: Number(m[2]) } : { slot: Number(m[1]), seq: Number(m[2]), retry: true };
}

/** A bucket as the store appends it: plain V3.3 when `deflate` is false and the body is not deflated already, else deflated V3.3. */
export function storedForm(header: BucketObject, body: BucketObject | Buffer, deflate?: boolean): { type: number; data: Buffer } {
  const type = deflate === false && !Buffer.isBuffer(body) ? BUCKET_TYPE.V33 : BUCKET_TYPE.V33_DEFLATE;
  return { type, data: Buffer.isBuffer(body) ? encodeDeflatedBucket(header, body) : encodeBucket(type, { header, body }) };
}

export interface StoreOptions {
  arcMaxSize: number;
}

export class GatherStore {
  private chain: Promise<unknown> = Promise.resolve();
  /** The ARC file written last and its length to the end of its last record (for the status snapshot). */
  lastArc: { file: string; bytes: number } | null = null;

  private constructor(
    private readonly state: string,
    readonly buckets: BucketWriter,
    private readonly arc: ArcWriter,
    /** Buckets after the checkpoint, for the gatherer to reconcile with its queues. */
    readonly unfinished: Unfinished[],
    readonly recoveredArcs: RecoveredArc[],
  ) {}

  static async open(state: string, options: StoreOptions): Promise<GatherStore> {
    const buckets = BucketWriter.open(bucketFilePath(state));
    try {
      const checkpoint = readCheckpoint(state);
      const from = checkpoint === undefined ? 1 : checkpointOid(buckets, checkpoint);
      const unfinished: Unfinished[] = [];
      const referenced = new Map<string, number>();
      if (checkpoint?.arc !== undefined) referenced.set(checkpoint.arc.file, checkpoint.arc.size);
      for (const stored of buckets.buckets({ from })) {
        const bucket: Bucket = buckets.decode(stored);
        const place = parseArcAttribute(bucket.header.string('a'));
        if (place !== undefined) referenced.set(place.file, Math.max(referenced.get(place.file) ?? 0, place.offset + place.length));
        const ref = parseQueueAttribute(bucket.header.string('q'));
        if (ref !== undefined) unfinished.push({ ...ref, oid: stored.oid, header: bucket.header });
      }
      cutUnreferencedArcTails(arcDir(state), referenced);
      const arc = await ArcWriter.open({ dir: arcDir(state), prefix: ARC_PREFIX, maxFileSize: options.arcMaxSize, level: ARC_LEVEL });
      return new GatherStore(state, buckets, arc, unfinished, arc.recovered);
    } catch (err) {
      buckets.close();
      throw err;
    }
  }

  /** How ARC records must be framed for this store. */
  get arcFraming(): ArcFraming {
    return this.arc.framing;
  }

  /**
   * Archives the response (if any), appends the bucket, then runs `after`
   * synchronously (the queue's done) before any other store step or sync.
   */
  put(input: StoreInput, after?: (stored: Stored) => void): Promise<Stored> {
    return this.serialize(async () => {
      const header = new BucketObject([...input.header.items]);
      let written: ArcWritten | undefined;
      if (input.arc !== undefined) {
        written = await ('bytes' in input.arc ? this.arc.writeFramed(input.arc) : this.arc.write(input.arc));
        header.add('a', arcAttribute(written));
        this.lastArc = { file: written.file, bytes: written.offset + written.length };
      }
      if (input.from !== undefined) header.add('q', queueAttribute(input.from));
      const { type, data } = storedForm(header, input.body, input.deflate);
      const oid = this.buckets.append(type, data);
      const stored: Stored = written === undefined ? { oid } : { oid, arc: written };
      after?.(stored);
      return stored;
    });
  }

  /** fsyncs ARC and buckets, then `syncQueue`, then records the checkpoint (see the module comment). */
  sync(syncQueue: () => void): Promise<void> {
    return this.serialize(async () => {
      const oid = this.buckets.nextOid;
      const arc = await this.arc.position();
      await this.arc.sync();
      this.buckets.sync();
      syncQueue();
      const checkpoint: Checkpoint = { generation: this.buckets.generation, oid, ...(arc === undefined ? {} : { arc }) };
      createFile(checkpointPath(this.state), Buffer.from(JSON.stringify(checkpoint) + '\n'));
    });
  }

  /** Syncs (see sync()), finishes the open ARC file and closes both. */
  close(syncQueue: () => void): Promise<void> {
    const done = this.sync(syncQueue).then(() => this.serialize(() => this.arc.close()));
    return done.finally(() => this.buckets.close());
  }

  private serialize<T>(task: () => Promise<T>): Promise<T> {
    const run = this.chain.then(task);
    this.chain = run.catch(() => undefined);
    return run;
  }
}

/**
 * Where to start scanning: the checkpoint's oid, translated through the oid
 * map when a shake has renumbered the buckets since. The checkpoint names the
 * oid after the last bucket, which a shake may have no entry for: then every
 * bucket is scanned (slower, never wrong).
 */
function checkpointOid(buckets: BucketWriter, checkpoint: Checkpoint): number {
  if (checkpoint.generation === buckets.generation) return checkpoint.oid;
  try {
    return buckets.resolveOid(checkpoint.oid, checkpoint.generation);
  } catch (err) {
    if (!isSherlockError(err, 'SHERLOCK_NOT_FOUND')) throw err;
    return 1;
  }
}

function readCheckpoint(state: string): Checkpoint | undefined {
  const path = checkpointPath(state);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw ioError(err, path, 'reading');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const c = value as Partial<Checkpoint> | undefined;
  const whole = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  if (c === undefined || c === null || !whole(c.generation) || !whole(c.oid) || (c.arc !== undefined && (c.arc === null || typeof c.arc !== 'object' || typeof c.arc.file !== 'string' || !whole(c.arc.size)))) {
    // Written by atomic rename, so damage is outside damage; scanning every bucket is the safe answer.
    log.warning('checkpoint unreadable; checking every bucket against the queues', { file: path });
    return undefined;
  }
  return c as Checkpoint;
}

/**
 * Cuts from each ARC file still open the records no bucket points to (they
 * are at its end, see the module comment); keeps at least the version block.
 */
function cutUnreferencedArcTails(dir: string, referenced: ReadonlyMap<string, number>): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw ioError(err, dir, 'listing');
  }
  for (const name of names.filter((n) => n.startsWith(`${ARC_PREFIX}-`) && n.endsWith(OPEN_SUFFIX))) {
    const path = join(dir, name);
    const { end, size } = versionBlock(path);
    const keep = Math.max(referenced.get(name.slice(0, -OPEN_SUFFIX.length)) ?? 0, end);
    if (keep >= size) continue;
    try {
      truncateSync(path, keep);
    } catch (err) {
      throw ioError(err, path, 'truncating');
    }
    log.notice('cut ARC records that no bucket points to', { file: name, offset: keep, bytes: size - keep });
  }
}

/** The file's size and where its version block (first record) ends; 0 when even that is unreadable. */
function versionBlock(path: string): { end: number; size: number } {
  const reader = ArcReader.open(path);
  const size = reader.size;
  try {
    for (const record of reader.records()) return { end: record.offset + record.length, size };
    return { end: 0, size };
  } catch (err) {
    if (isSherlockError(err) && err.code !== 'SHERLOCK_IO') return { end: 0, size };
    throw err;
  } finally {
    reader.close();
  }
}

