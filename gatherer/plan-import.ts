/**
 * Moves plan files (common/gather/plan-file.ts) from the inbox into the queues,
 * each URL exactly once, whatever instant a crash hits.
 *
 * A plan's lines are pushed in one synchronous stretch: nothing else touches
 * the queues meanwhile, so the entries it adds follow each other in their
 * hosts' queues. Before the first push, a journal (`inbox/importing`,
 * written by atomic rename and fsynced) names the plan and, per host the
 * plan touches, how many entries that host had ever been pushed. Then every
 * line is pushed, the queue synced, the plan removed (directory fsynced), the
 * journal removed. Restarting with a journal whose plan is still there
 * resumes: pushed-now − pushed-before entries of each host already went in,
 * and they were that host's first lines of the plan (pushes follow line
 * order), so exactly those lines are skipped; entries the gatherer pushed
 * after the plan's (retries) only make that count larger than the plan's
 * lines of the host, which are then all skipped, as they should be. A
 * journal whose plan is gone is stale.
 *
 * The fsyncs (about 2 ms each, five per plan) and the removals (which wait
 * for the file system's journal while other writers sync) are waited for
 * off the thread, so that the gatherer goes on fetching meanwhile. It may
 * queue retries while the journal is being written: the counts are taken
 * again just before the stretch of pushes, and a journal that no longer
 * matches is written again. One import at a time (the gatherer's duty); the
 * queue must stay open until it settles.
 *
 * A plan that cannot be read (cut short, damaged, bad URL) is renamed to
 * `<name>.bad` and left for the operator; nothing of it is imported.
 */

import { existsSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { isSherlockError, ioError } from '../common/errors.js';
import { createFileInBackground, syncDirectoryInBackground } from '../common/files.js';
import { logger } from '../common/log.js';
import { inboxDir, listPlans, readPlan, type PlanEntry } from '../common/gather/plan-file.js';
import { MAX_REST_LENGTH, type GatherQueue, type Host } from '../common/gather/queue-file.js';
import { urlParts } from '../common/url.js';
import { encodeQueued } from './queue-entry.js';

const log = logger('gatherer');

interface Journal {
  plan: string;
  /** Per host ("scheme://host:port"), entries ever pushed before the import began. */
  before: Record<string, number>;
}

export interface ImportReport {
  plans: number;
  urls: number;
  /** URLs refused (longer than a queue entry can hold). */
  refused: number;
  /** Hosts that received URLs. */
  hosts: Host[];
}

function journalPath(state: string): string {
  return join(inboxDir(state), 'importing');
}

function hostKey(url: string): { key: string; parts: ReturnType<typeof urlParts> } {
  const parts = urlParts(url);
  return { key: `${parts.scheme}://${parts.host}:${parts.port}`, parts };
}

/** Imports every plan waiting in the inbox (and finishes one a crash interrupted). */
export async function importPlans(state: string, queue: GatherQueue): Promise<ImportReport> {
  const report: ImportReport = { plans: 0, urls: 0, refused: 0, hosts: [] };
  const touched = new Map<number, Host>();
  const journalFile = journalPath(state);
  let journal: Journal | undefined;
  if (existsSync(journalFile)) {
    try {
      journal = JSON.parse(readFileSync(journalFile, 'utf8')) as Journal;
    } catch (err) {
      throw ioError(err, journalFile, 'reading the import journal');
    }
  }
  for (const path of listPlans(state)) {
    const name = basename(path);
    const resume = journal !== undefined && journal.plan === name ? journal : undefined;
    let entries: PlanEntry[];
    try {
      entries = readPlan(path);
    } catch (err) {
      if (!isSherlockError(err, 'SHERLOCK_CORRUPT_PLAN')) throw err;
      log.err('plan refused; renamed to .bad, nothing of it imported', { file: path, offset: err.place.offset, problem: err.message });
      renameSync(path, `${path}.bad`);
      continue;
    }
    await importOne(state, queue, path, entries, resume, report, touched);
  }
  if (existsSync(journalFile)) unlinkSync(journalFile); // stale: its plan was finished before the crash
  report.hosts = [...touched.values()];
  return report;
}

async function importOne(
  state: string,
  queue: GatherQueue,
  path: string,
  entries: PlanEntry[],
  resume: Journal | undefined,
  report: ImportReport,
  touched: Map<number, Host>,
): Promise<void> {
  const skip = new Map<string, number>();
  const lines = entries.map((entry) => ({ entry, ...hostKey(entry.url) }));
  if (resume !== undefined) {
    for (const [key, before] of Object.entries(resume.before)) {
      const { parts } = hostKey(`${key}/`);
      const host = queue.find(parts.scheme, parts.port, parts.host);
      skip.set(key, host === undefined ? 0 : (host.pushed - before) >>> 0);
    }
    log.notice('resuming a plan import a crash interrupted', { file: path });
  } else {
    for (let before = pushedBefore(queue, lines); ; ) {
      await createFileInBackground(journalPath(state), Buffer.from(JSON.stringify({ plan: basename(path), before } satisfies Journal)));
      const now = pushedBefore(queue, lines);
      if (Object.entries(now).every(([key, count]) => before[key] === count)) break;
      before = now; // the gatherer queued a retry meanwhile
    }
  }
  for (const { entry, key, parts } of lines) {
    const rest = encodeQueued({
      rest: parts.rest,
      retries: 0,
      ...(entry.ifModifiedSince === undefined ? {} : { ifModifiedSince: entry.ifModifiedSince }),
      ...(entry.ifNoneMatch === undefined ? {} : { ifNoneMatch: entry.ifNoneMatch }),
    });
    // Refused before the skip count: a refused line was never pushed, so it is not among those to skip.
    if (Buffer.byteLength(rest) > MAX_REST_LENGTH) {
      report.refused += 1;
      log.warning('URL refused: too long for a queue entry', { url: entry.url.slice(0, 200) });
      continue;
    }
    const left = skip.get(key) ?? 0;
    if (left > 0) {
      skip.set(key, left - 1);
      continue;
    }
    const host = queue.host(parts.scheme, parts.port, parts.host);
    queue.push(host, rest, entry.priority);
    touched.set(host.slot, host);
    report.urls += 1;
  }
  await queue.syncInBackground();
  await unlink(path);
  await syncDirectoryInBackground(inboxDir(state));
  await unlink(journalPath(state));
  report.plans += 1;
}

/** Per host the plan touches, how many entries it had ever been pushed. */
function pushedBefore(queue: GatherQueue, lines: readonly ReturnType<typeof hostKey>[]): Record<string, number> {
  const before: Record<string, number> = {};
  for (const { key, parts } of lines) {
    if (key in before) continue;
    before[key] = queue.find(parts.scheme, parts.port, parts.host)?.pushed ?? 0;
  }
  return before;
}
