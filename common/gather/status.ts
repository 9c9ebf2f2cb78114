/**
 * The gatherer's live status: a small JSON file, `<state>/gather/status.json`,
 * that a running gatherer (`gatherer run`, `crawl`) rewrites about once a
 * second, and `sherlock status` and the searcher's status topic read. Only the
 * gatherer writes it; it is replaced whole by a rename (written to
 * `status.json.tmp` first), so a reader sees the old snapshot or the new one,
 * never half of one. It is not fsynced: after a power loss it may be old or
 * missing, which readers treat as "not running".
 *
 * Fields (JSON object; times are ISO 8601 UTC):
 *   format          "sherlock-gather-status/1"
 *   pid             the gatherer's process
 *   running         false once the gatherer stopped (its last write)
 *   time            when this snapshot was written
 *   started         when the gatherer started
 *   fetches, bytes, stored, robots_fetches, retries   counts since the start
 *   rate            pages fetched a second, over the last RATE_WINDOW_S
 *   in_flight, queued, hosts                          now
 *   outcomes        {outcome: count} since the start (gatherer/outcome.ts)
 *   errors          {outcome: count}: the outcomes that are errors, most
 *                   frequent first
 *   busiest_hosts   up to TOP_HOSTS {host, queued}: the most URLs queued
 *   delayed_hosts   up to TOP_HOSTS {host, queued, until, errors}: queued
 *                   hosts whose next request waits longest (politeness,
 *                   Crawl-delay, back-off after errors)
 *   arc             {file, bytes} the ARC file written last and its length
 *                   up to the end of its last record; null before any
 *
 * A snapshot older than STALE_MS while `running` says true comes from a
 * gatherer that died without its last write (kill -9, power loss).
 *
 * The writer checks a snapshot against the schema the reader uses before it
 * writes, so it never leaves one its readers refuse; times go through
 * statusTime(), which keeps them in the years 1970–9999 (a Retry-After for
 * the year 33715 once made `"+033715-…"`, which no ISO 8601 reader takes).
 * A reader refuses a damaged snapshot whole (SHERLOCK_CORRUPT_STATUS names the
 * file and the field); its callers report that and go on without it.
 */

import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ioError, SherlockError } from '../errors.js';

export const GATHER_STATUS_FORMAT = 'sherlock-gather-status/1';
/** Hosts listed as busiest and as most delayed. */
export const TOP_HOSTS = 5;
/** The window `rate` is measured over. */
export const RATE_WINDOW_S = 10;
/** A running gatherer rewrites its snapshot every second; one this old is from a gatherer gone. */
export const STALE_MS = 10_000;

const count = z.number().int().min(0);
const time = z.string().datetime();

const snapshotSchema = z
  .object({
    format: z.literal(GATHER_STATUS_FORMAT),
    pid: z.number().int().min(1),
    running: z.boolean(),
    time,
    started: time,
    fetches: count,
    bytes: count,
    stored: count,
    robots_fetches: count,
    retries: count,
    rate: z.number().min(0),
    in_flight: count,
    queued: count,
    hosts: count,
    outcomes: z.record(z.string(), count),
    errors: z.record(z.string(), count),
    busiest_hosts: z.array(z.object({ host: z.string(), queued: count })).max(TOP_HOSTS),
    delayed_hosts: z.array(z.object({ host: z.string(), queued: count, until: time, errors: count })).max(TOP_HOSTS),
    arc: z.object({ file: z.string(), bytes: count }).nullable(),
  })
  .strict();

export type GatherStatusSnapshot = z.output<typeof snapshotSchema>;

/** The last time a snapshot holds: ISO 8601's four-digit years end here. */
const LAST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A time (Unix ms) as a snapshot holds it: ISO 8601 UTC, clamped to 1970–9999 (not a number: 1970). */
export function statusTime(ms: number): string {
  return new Date(Number.isNaN(ms) ? 0 : Math.min(Math.max(ms, 0), LAST_TIME)).toISOString();
}

export function gatherStatusPath(state: string): string {
  return join(state, 'gather', 'status.json');
}

/** Replaces the snapshot (write, then rename over the old one); one the reader would refuse is not written but thrown. */
export function writeGatherStatus(state: string, snapshot: GatherStatusSnapshot): void {
  const path = gatherStatusPath(state);
  const checked = snapshotSchema.safeParse(snapshot);
  if (!checked.success) throw new SherlockError('SHERLOCK_CORRUPT_STATUS', `not written: ${problem(checked.error)}`, { file: path });
  const tmp = `${path}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify(snapshot) + '\n');
    renameSync(tmp, path);
  } catch (err) {
    throw ioError(err, path, 'writing the gatherer status');
  }
}

/** The snapshot, or undefined when there is none; a damaged one is an error naming the file. */
export function readGatherStatus(state: string): GatherStatusSnapshot | undefined {
  const path = gatherStatusPath(state);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw ioError(err, path, 'reading the gatherer status');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SherlockError('SHERLOCK_CORRUPT_STATUS', `not JSON: ${err instanceof Error ? err.message : String(err)}`, { file: path });
  }
  const checked = snapshotSchema.safeParse(json);
  if (!checked.success) throw new SherlockError('SHERLOCK_CORRUPT_STATUS', problem(checked.error), { file: path });
  return checked.data;
}

/** The first field that breaks the schema and what is wrong with it. */
function problem(error: z.ZodError): string {
  const issue = error.issues[0]!;
  return `${issue.path.join('.') || 'snapshot'}: ${issue.message}`;
}

/** Whether a snapshot comes from a gatherer running now. */
export function isLive(snapshot: GatherStatusSnapshot, now = Date.now()): boolean {
  return snapshot.running && now - Date.parse(snapshot.time) < STALE_MS;
}
