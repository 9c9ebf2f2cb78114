/**
 * Plan files: how URLs reach the gatherer. The gatherer is the one writer of
 * its host and queue files (queue-file.ts), so whoever wants URLs fetched (the
 * shepherd, `sherlock gatherer add`, `sherlock crawl`) writes a plan file into
 * `<state>/gather/inbox/`, and the gatherer imports it into its queues and
 * removes it. A plan is written whole under a temporary name, fsynced and
 * renamed, so the gatherer never sees half of one; names sort by creation time.
 *
 * Format: UTF-8 text, LF line ends.
 *
 *   sherlock-plan 1
 *   <priority> TAB <canonical URL> [TAB <hint>]…      one line per URL
 *   end <count> <CRC-32 of every byte before this line, 8 hex digits>
 *
 * priority: decimal u32, lower is sooner (the original's bands: 0–1000M
 * anticipated refresh, 1000–2000M normal, …). Hints, `name=value`, none
 * holding a TAB or LF:
 *   m=<HTTP date>   send If-Modified-Since (the Last-Modified of the copy we have)
 *   e=<entity tag>  send If-None-Match
 * Unknown hint names are refused, so a newer writer cannot be misread.
 *
 * The trailer makes a plan self-checking: a file cut short or damaged on
 * disk is refused as a whole with its file and line, never half-imported.
 */

import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { SherlockError, ioError } from '../errors.js';
import { createFileInBackground, listDirectory, renameDurably } from '../files.js';
import { canonicalUrl } from '../url.js';

export const PLAN_MAGIC = 'sherlock-plan 1';
/** Priorities come in bands of this width (0: anticipated refresh, 1: normal, …); within one, the rank is the writer's. */
export const PRIORITY_BAND = 1_000_000_000;
export const PLAN_SUFFIX = '.plan';
export const HINT_NAMES = ['m', 'e'] as const;

export type HintName = (typeof HINT_NAMES)[number];

export interface PlanEntry {
  url: string;
  priority: number;
  /** Conditional-request validators of the copy we already have. */
  ifModifiedSince?: string;
  ifNoneMatch?: string;
}

export function inboxDir(state: string): string {
  return join(state, 'gather', 'inbox');
}

/** Plan files waiting in the inbox, oldest first (full paths). */
export function listPlans(state: string): string[] {
  const dir = inboxDir(state);
  return listDirectory(dir)
    .filter((n) => n.endsWith(PLAN_SUFFIX))
    .sort()
    .map((n) => join(dir, n));
}

function checkHintValue(value: string, what: string): void {
  if (/[\t\n\r]/.test(value) || value === '') throw new RangeError(`${what} must be non-empty and hold no TAB, CR or LF`);
}

function entryLine(entry: PlanEntry): string {
  if (!Number.isInteger(entry.priority) || entry.priority < 0 || entry.priority > 0xffffffff) {
    throw new RangeError(`priority must be a u32, not ${entry.priority}`);
  }
  const fields = [String(entry.priority), entry.url];
  if (entry.ifModifiedSince !== undefined) {
    checkHintValue(entry.ifModifiedSince, 'If-Modified-Since');
    fields.push(`m=${entry.ifModifiedSince}`);
  }
  if (entry.ifNoneMatch !== undefined) {
    checkHintValue(entry.ifNoneMatch, 'ETag');
    fields.push(`e=${entry.ifNoneMatch}`);
  }
  return fields.join('\t');
}

/** Encodes a plan; URLs must already be canonical (the reader refuses others). */
export function encodePlan(entries: readonly PlanEntry[]): Buffer {
  const body = Buffer.from([PLAN_MAGIC, ...entries.map(entryLine)].join('\n') + '\n', 'utf8');
  const trailer = `end ${entries.length} ${crc32(body).toString(16).padStart(8, '0')}\n`;
  return Buffer.concat([body, Buffer.from(trailer, 'latin1')]);
}

let serial = 0;

/** Writes a plan into the inbox (temporary name, fsync, rename, fsync the directory); returns its path. */
export function writePlan(state: string, entries: readonly PlanEntry[]): string {
  const { data, path } = newPlan(state, entries);
  const temp = `${path}.tmp`;
  let fd: number | undefined;
  try {
    fd = openSync(temp, 'wx');
    writeSync(fd, data);
    fsyncSync(fd);
  } catch (err) {
    // A plan cut short (a full disk) is removed, not left in the inbox.
    rmSync(temp, { force: true });
    throw ioError(err, temp, 'writing');
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  renameDurably(temp, path);
  return path;
}

/** writePlan, its writes and fsyncs waited for off the thread (`sherlock crawl`: the thread also drives the fetches). */
export async function writePlanInBackground(state: string, entries: readonly PlanEntry[]): Promise<string> {
  const { data, path } = newPlan(state, entries);
  await createFileInBackground(path, data);
  return path;
}

/** A plan's bytes (checked: bad entries throw before anything is created) and its new path in the inbox, which is made. */
function newPlan(state: string, entries: readonly PlanEntry[]): { data: Buffer; path: string } {
  const dir = inboxDir(state);
  const data = encodePlan(entries);
  const name = `${String(Date.now()).padStart(15, '0')}-${process.pid}-${String(serial++).padStart(6, '0')}`;
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw ioError(err, dir, 'creating the directory');
  }
  return { data, path: join(dir, name + PLAN_SUFFIX) };
}

function bad(file: string, offset: number, message: string): SherlockError {
  return new SherlockError('SHERLOCK_CORRUPT_PLAN', message, { file, offset });
}

/** Reads and checks a whole plan; any fault refuses the file, naming the byte offset of the bad line. */
export function readPlan(file: string): PlanEntry[] {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch (err) {
    throw ioError(err, file, 'reading');
  }
  if (data.length === 0 || data[data.length - 1] !== 0x0a) throw bad(file, data.length, 'plan does not end with a line feed (cut short?)');
  const trailerStart = data.lastIndexOf(0x0a, data.length - 2) + 1;
  const trailer = /^end (\d+) ([0-9a-f]{8})\n$/.exec(data.subarray(trailerStart).toString('latin1'));
  if (trailer === null) throw bad(file, trailerStart, 'missing "end <count> <crc>" trailer (cut short?)');
  const body = data.subarray(0, trailerStart);
  const crc = crc32(body).toString(16).padStart(8, '0');
  if (crc !== trailer[2]) throw bad(file, trailerStart, `CRC-32 ${crc} does not match the trailer's ${trailer[2]}`);
  if (!body.subarray(0, PLAN_MAGIC.length + 1).equals(Buffer.from(`${PLAN_MAGIC}\n`))) throw bad(file, 0, `first line is not "${PLAN_MAGIC}"`);
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const entries: PlanEntry[] = [];
  for (let offset = 0; offset < body.length; ) {
    const end = body.indexOf(0x0a, offset);
    let line: string;
    try {
      line = utf8.decode(body.subarray(offset, end));
    } catch {
      throw bad(file, offset, 'line is not valid UTF-8');
    }
    if (offset === 0) {
      if (line !== PLAN_MAGIC) throw bad(file, 0, `first line is not "${PLAN_MAGIC}"`);
    } else {
      entries.push(parseLine(line, file, offset));
    }
    offset = end + 1;
  }
  if (entries.length !== Number(trailer[1])) throw bad(file, trailerStart, `trailer counts ${trailer[1]} entries, the plan holds ${entries.length}`);
  return entries;
}

function parseLine(line: string, file: string, offset: number): PlanEntry {
  const [priorityText, url, ...hints] = line.split('\t');
  if (!/^\d{1,10}$/.test(priorityText!) || Number(priorityText) > 0xffffffff) throw bad(file, offset, `bad priority ${JSON.stringify(priorityText)}`);
  if (url === undefined || url === '') throw bad(file, offset, 'line has no URL');
  let canonical: string;
  try {
    canonical = canonicalUrl(url);
  } catch (err) {
    throw bad(file, offset, `bad URL: ${(err as Error).message}`);
  }
  if (canonical !== url) throw bad(file, offset, `URL is not canonical (${JSON.stringify(url)}, canonical ${JSON.stringify(canonical)})`);
  const entry: PlanEntry = { url, priority: Number(priorityText) };
  for (const hint of hints) {
    const eq = hint.indexOf('=');
    const name = hint.slice(0, eq);
    const value = hint.slice(eq + 1);
    if (eq < 1 || value === '') throw bad(file, offset, `bad hint ${JSON.stringify(hint)}: name=value expected`);
    if (name === 'm') entry.ifModifiedSince = value;
    else if (name === 'e') entry.ifNoneMatch = value;
    else throw bad(file, offset, `unknown hint ${JSON.stringify(name)}`);
  }
  return entry;
}
