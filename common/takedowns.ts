/**
 * Takedowns: URLs, URL prefixes and whole sites the operator has withdrawn
 * (`sherlock takedown add|remove`). The CLI writes the file; the searcher
 * hides what it names at once, the indexer leaves it out of the next
 * version, the shepherd plans no fetch of it and the gatherer requests none
 * it has queued (docs/operating.md "Takedowns").
 *
 * File `state/takedowns`: append-only UTF-8 text, one change per line,
 *
 *   bytes 0–7   CRC-32 of the JSON text's UTF-8 bytes, 8 lower-case hex digits
 *   byte 8      a space
 *   9…          JSON: {"op":"add"|"remove","kind":"url"|"prefix"|"site",
 *               "target":…,"reason":…,"time":ISO-8601}; reason only on add
 *   last        LF
 *
 * The state is the changes folded in order: an add puts (kind, target) in,
 * a remove takes it out. Targets are in canonical form: a URL and a prefix
 * as common/url.ts makes them (a prefix matches by the start of the
 * canonical URL), a site a host as `site:` takes it, which hides the host
 * and every host below it, on every scheme and port.
 *
 * Writers: one at a time under `takedowns.lock` (common/lock.ts), one write
 * of a whole line, then fsync (and the directory's fsync when the file was
 * created). Crash: a writer killed mid-line leaves a tail without LF that was
 * never acknowledged; readers warn naming file:offset and ignore it, and the
 * next writer, under the lock, cuts it off before appending, so no earlier
 * line is lost and the new one starts a line of its own. A damaged line
 * followed by others (a flipped byte, an edit by hand) is an error naming
 * file:line: readTakedowns() reports it, the strict reader of the CLI
 * refuses the file, and the daemons log it at err and fold the intact lines.
 */

import { closeSync, existsSync, fstatSync, ftruncateSync, fsyncSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { crc32 } from 'node:zlib';
import { SherlockError, ioError, isSherlockError } from './errors.js';
import { syncDirectory } from './files.js';
import { acquireLock } from './lock.js';
import { logger } from './log.js';
import { canonicalOrNone, canonicalUrl, urlParts } from './url.js';

const log = logger('takedowns');

export const TAKEDOWN_KINDS = ['url', 'prefix', 'site'] as const;
export type TakedownKind = (typeof TAKEDOWN_KINDS)[number];

export interface TakedownChange {
  op: 'add' | 'remove';
  kind: TakedownKind;
  /** Canonical: takedownTarget()'s output. */
  target: string;
  /** Why (an add's). */
  reason?: string;
  /** ISO-8601. */
  time: string;
}

/** A takedown in force: the add that put it in. */
export type Takedown = TakedownChange & { op: 'add' };

/** A line that does not decode, with a complete line after it. */
export interface TakedownDamage {
  line: number;
  offset: number;
  problem: string;
}

export interface TakedownRead {
  changes: TakedownChange[];
  damage: TakedownDamage[];
  /** Where a tail without LF (a write cut by a crash) starts. */
  tornAt?: number;
}

/** How long a writer waits for another's lock before giving up. */
const LOCK_WAIT_MS = 5000;
const LOCK_RETRY_MS = 20;
const LF = 0x0a;

export function takedownFilePath(state: string): string {
  return join(state, 'takedowns');
}

/** `target` in canonical form for `kind`; SHERLOCK_BAD_URL says why it has none. */
export function takedownTarget(kind: TakedownKind, target: string): string {
  if (kind !== 'site') return canonicalUrl(target);
  if (!/^[^\s/:?#@\\]+$/.test(target)) throw new SherlockError('SHERLOCK_BAD_URL', 'a site is a host name such as example.org (no scheme, port or path)', { url: target });
  return urlParts(canonicalUrl(`http://${target}/`)).host;
}

/** The line of a change, LF included. */
export function takedownLine(change: TakedownChange): string {
  const { op, kind, target, reason, time } = change;
  const json = JSON.stringify(op === 'add' ? { op, kind, target, reason: reason ?? '', time } : { op, kind, target, time });
  return `${crc32(Buffer.from(json, 'utf8')).toString(16).padStart(8, '0')} ${json}\n`;
}

/** Reads every line of `file` (none when it does not exist); damage and a torn tail are reported, not thrown. */
export function readTakedowns(file: string): TakedownRead {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { changes: [], damage: [] };
    throw ioError(err, file, 'reading');
  }
  const out: TakedownRead = { changes: [], damage: [] };
  let at = 0;
  for (let line = 1; at < bytes.length; line++) {
    const end = bytes.indexOf(LF, at);
    if (end < 0) {
      out.tornAt = at;
      break;
    }
    try {
      out.changes.push(parseLine(bytes.subarray(at, end)));
    } catch (err) {
      out.damage.push({ line, offset: at, problem: err instanceof Error ? err.message : String(err) });
    }
    at = end + 1;
  }
  return out;
}

function parseLine(bytes: Buffer): TakedownChange {
  if (bytes.length < 10 || bytes[8] !== 0x20) throw new Error('not CRC SPACE JSON');
  const crc = bytes.toString('latin1', 0, 8);
  if (!/^[0-9a-f]{8}$/.test(crc)) throw new Error('the CRC is not 8 hex digits');
  const json = bytes.subarray(9);
  if (parseInt(crc, 16) !== crc32(json)) throw new Error('CRC-32 mismatch');
  const value = JSON.parse(json.toString('utf8')) as Record<string, unknown>;
  const { op, kind, target, reason, time } = value;
  if (op !== 'add' && op !== 'remove') throw new Error(`op is ${JSON.stringify(op)}`);
  if (!TAKEDOWN_KINDS.includes(kind as TakedownKind)) throw new Error(`kind is ${JSON.stringify(kind)}`);
  if (typeof target !== 'string' || typeof time !== 'string' || (reason !== undefined && typeof reason !== 'string')) throw new Error('target, reason or time is not a string');
  if (takedownTarget(kind as TakedownKind, target) !== target) throw new Error(`target ${JSON.stringify(target)} is not in canonical form`);
  return { op, kind: kind as TakedownKind, target, ...(reason === undefined ? {} : { reason }), time };
}

/** readTakedowns() for the CLI: damage is SHERLOCK_CORRUPT_TAKEDOWNS naming file:line; a torn tail is a warning. */
export function readTakedownsStrict(file: string): TakedownChange[] {
  const read = readTakedowns(file);
  warnTorn(file, read);
  const first = read.damage[0];
  if (first !== undefined) throw new SherlockError('SHERLOCK_CORRUPT_TAKEDOWNS', `line ${first.line}: ${first.problem}`, { file, offset: first.offset });
  return read.changes;
}

function warnTorn(file: string, read: TakedownRead): void {
  if (read.tornAt !== undefined) log.warning('takedown file ends in a cut line (a write interrupted); ignored', { file, offset: read.tornAt });
}

/**
 * Appends one change, durably: under the writer lock (waiting up to
 * LOCK_WAIT_MS for another writer), a torn tail cut off first.
 */
export async function appendTakedown(file: string, change: TakedownChange): Promise<void> {
  const lock = await takeLock(`${file}.lock`);
  try {
    const created = !existsSync(file);
    let fd: number;
    try {
      fd = openSync(file, 'a+');
    } catch (err) {
      throw ioError(err, file, 'opening');
    }
    try {
      cutTornTail(fd, file);
      writeSync(fd, takedownLine(change));
      fsyncSync(fd);
    } catch (err) {
      throw isSherlockError(err) ? err : ioError(err, file, 'appending');
    } finally {
      closeSync(fd);
    }
    if (created) syncDirectory(dirname(file));
  } finally {
    lock.release();
  }
}

async function takeLock(path: string): Promise<{ release(): void }> {
  for (const deadline = Date.now() + LOCK_WAIT_MS; ; await sleep(LOCK_RETRY_MS)) {
    try {
      return acquireLock(path);
    } catch (err) {
      if (!isSherlockError(err, 'SHERLOCK_LOCKED') || Date.now() >= deadline) throw err;
    }
  }
}

/** Cuts the file after its last LF: a tail without one was never acknowledged (module comment). */
function cutTornTail(fd: number, file: string): void {
  const size = fstatSync(fd).size;
  if (size === 0) return;
  const bytes = readFileSync(fd);
  const keep = bytes.lastIndexOf(LF) + 1;
  if (keep === size) return;
  log.warning('cut line at the end of the takedown file removed before appending', { file, offset: keep, bytes: size - keep });
  ftruncateSync(fd, keep);
}

/**
 * The takedowns in force, matched fast: URLs in a Set, sites by walking
 * the host's labels, prefixes in a sorted array with none covered by
 * another, so that only the greatest one ≤ a URL can be its prefix.
 */
export class TakedownSet {
  readonly urls: ReadonlySet<string>;
  readonly sites: ReadonlySet<string>;
  readonly prefixes: readonly string[];

  private constructor(readonly entries: readonly Takedown[]) {
    this.urls = new Set(entries.filter((e) => e.kind === 'url').map((e) => e.target));
    this.sites = new Set(entries.filter((e) => e.kind === 'site').map((e) => e.target));
    const sorted = entries.filter((e) => e.kind === 'prefix').map((e) => e.target).sort(byCodeUnits);
    const prefixes: string[] = [];
    for (const p of sorted) if (prefixes.length === 0 || !p.startsWith(prefixes[prefixes.length - 1]!)) prefixes.push(p);
    this.prefixes = prefixes;
  }

  static readonly EMPTY = new TakedownSet([]);

  /** The changes folded in order. */
  static of(changes: readonly TakedownChange[]): TakedownSet {
    const inForce = new Map<string, Takedown>();
    for (const change of changes) {
      const key = `${change.kind} ${change.target}`;
      if (change.op === 'add') inForce.set(key, change as Takedown);
      else inForce.delete(key);
    }
    return new TakedownSet([...inForce.values()]);
  }

  get size(): number {
    return this.entries.length;
  }

  /** Whether `url` (canonical) is taken down. */
  hides(url: string): boolean {
    if (this.urls.has(url)) return true;
    if (this.sites.size > 0 && this.hidesHost(urlParts(url).host)) return true;
    return this.prefixes.length > 0 && this.underPrefix(url);
  }

  /** hides() for a URL in any form (a bucket's, an image's): put in canonical form first; one without any is not hidden. */
  hidesAny(url: string): boolean {
    const canonical = canonicalOrNone(url);
    return canonical !== undefined && this.hides(canonical);
  }

  /** Whether `host` or a host above it is a site taken down. */
  hidesHost(host: string): boolean {
    for (let rest = host; ; ) {
      if (this.sites.has(rest)) return true;
      const dot = rest.indexOf('.');
      if (dot < 0) return false;
      rest = rest.slice(dot + 1);
    }
  }

  private underPrefix(url: string): boolean {
    const { prefixes } = this;
    let low = 0;
    let high = prefixes.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (byCodeUnits(prefixes[mid]!, url) <= 0) low = mid + 1;
      else high = mid;
    }
    return low > 0 && url.startsWith(prefixes[low - 1]!);
  }
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The takedown file as the daemons follow it: current() reads it again
 * when its size, inode or mtime changed, logging damage (at err, file:line,
 * the intact lines folded) and a torn tail (a warning) once per change.
 * A file that cannot be read is logged when the problem starts or changes
 * and when it is readable again, not at every look (the searcher looks
 * four times a second, the gatherer before every request).
 */
export class TakedownFile {
  private stamp = '';
  private set = TakedownSet.EMPTY;
  /** Why the last look could not read the file; undefined while it can. */
  private problem: string | undefined;

  constructor(readonly path: string) {}

  /** Whether the file changed since the last current(). */
  private changed(): boolean {
    return this.stat() !== this.stamp;
  }

  current(): TakedownSet {
    const stamp = this.stat();
    if (stamp === this.stamp) return this.set;
    const read = readTakedowns(this.path);
    warnTorn(this.path, read);
    for (const d of read.damage) log.err('damaged takedown line ignored', { file: this.path, line: d.line, offset: d.offset, problem: d.problem });
    this.stamp = stamp;
    this.set = TakedownSet.of(read.changes);
    return this.set;
  }

  /** current(), but a file that cannot be read keeps the set read before (none at first): a daemon never stops for it. */
  inForce(): TakedownSet {
    return this.poll() ?? this.set;
  }

  /** The set when the file changed and was read now; undefined when it did not change or cannot be read. */
  poll(): TakedownSet | undefined {
    try {
      const set = this.changed() ? this.current() : undefined;
      if (this.problem !== undefined) log.notice('the takedown file is readable again', { file: this.path });
      this.problem = undefined;
      return set;
    } catch (err) {
      const problem = err instanceof Error ? err.message : String(err);
      if (problem !== this.problem) log.err('cannot read the takedown file; the takedowns read before stay', { file: this.path, problem });
      this.problem = problem;
      return undefined;
    }
  }

  private stat(): string {
    try {
      const s = statSync(this.path, { bigint: true });
      return `${s.ino}:${s.size}:${s.mtimeNs}`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
      throw ioError(err, this.path, 'stat');
    }
  }
}
