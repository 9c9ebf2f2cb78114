/**
 * `sherlock status --state DIR [--json]`: what the appliance holds and is
 * doing, read without disturbing the daemons (no lock taken, nothing
 * repaired): which daemons hold the state, URLs by state, the shepherd's last
 * cycle, hosts and queue depth, work waiting between the parts (seed files,
 * plans, buckets not merged yet), the archive's size, and what the gatherer
 * is doing now (its status snapshot, common/gather/status.ts: fetch rate,
 * errors, busiest and most-delayed hosts, the current ARC file). A damaged
 * snapshot is reported (`fetchingProblem`: the file and the field) and the
 * rest printed all the same. Last, which deflate path this installation
 * takes (the libdeflate binding or node:zlib, and why; common/deflate/libdeflate.ts).
 */

import { existsSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { ALIGN, bucketFilePath } from '../common/bucket/file.js';
import { readPauseFlag } from '../common/gather/control.js';
import { ioError, isSherlockError, SherlockError } from '../common/errors.js';
import { listDirectory } from '../common/files.js';
import { deflatePath, describeDeflatePath, type DeflatePath } from '../common/deflate/libdeflate.js';
import { isLive, readGatherStatus, type GatherStatusSnapshot } from '../common/gather/status.js';
import { readHostRecords } from '../common/gather/host-file.js';
import { lockHolder } from '../common/lock.js';
import { listPlans } from '../common/gather/plan-file.js';
import { gatherPaths } from '../common/gather/queue-file.js';
import { arcDir } from '../common/archive/arc-place.js';
import { listSeedFiles } from '../shepherd/seed-inbox.js';
import { readShepherdStatus, type ShepherdStatus } from '../shepherd/status.js';
import { STATE_HELP, action, print, printJson, stateDir } from './command.js';

interface GathererStatus {
  runningPid?: number;
  hosts: number;
  queued: number;
  /** Hosts waiting out a back-off after errors. */
  backingOff: number;
  plansWaiting: number;
  /** Since when gathering is paused (`sherlock crawl pause`), if it is. */
  pausedSince?: string;
}

interface Status {
  state: string;
  time: string;
  shepherd?: ShepherdStatus;
  seedFilesWaiting: number;
  gatherer?: GathererStatus;
  /** Bytes of the bucket file after the shepherd's checkpoint: stored, not merged yet. */
  bucketBytesNotMerged: number;
  bucketBytes: number;
  arcFiles: number;
  arcBytes: number;
  /** The gatherer's last snapshot; `live` false when it stopped or died since. */
  fetching?: GatherStatusSnapshot & { live: boolean };
  /** Why the snapshot could not be read (SHERLOCK_CORRUPT_STATUS: the file and the field), when it could not. */
  fetchingProblem?: string;
  /** Which deflate path this installation takes (the libdeflate binding or not, and why not). */
  deflate: DeflatePath;
}

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description('URLs by state, hosts and queues, the last shepherd cycle, work waiting between the parts')
    .option('--state <dir>', STATE_HELP)
    .option('--json', 'print one JSON object')
    .action(
      action((opts: { state?: string; json?: boolean }) => {
        const state = stateDir(opts);
        if (!existsSync(state)) throw new SherlockError('SHERLOCK_NOT_FOUND', 'no such state directory', { file: state });
        const status = readStatus(state);
        if (opts.json === true) printJson(status);
        else for (const line of describe(status)) if (!print(line)) break;
      }),
    );
}

function readStatus(state: string): Status {
  const shepherd = readShepherdStatus(state);
  const buckets = bucketFilePath(state);
  const bucketBytes = fileSize(buckets);
  const arcs = listArcs(arcDir(state));
  const status: Status = {
    state,
    time: new Date().toISOString(),
    seedFilesWaiting: listSeedFiles(state).length,
    bucketBytesNotMerged: Math.max(0, bucketBytes - (shepherd?.checkpoint ?? 1) * ALIGN),
    bucketBytes,
    arcFiles: arcs.length,
    arcBytes: arcs.reduce((sum, file) => sum + file, 0),
    deflate: deflatePath(),
  };
  if (shepherd !== undefined) status.shepherd = shepherd;
  const gatherer = readGathererStatus(state);
  if (gatherer !== undefined) status.gatherer = gatherer;
  try {
    const snapshot = readGatherStatus(state);
    if (snapshot !== undefined) status.fetching = { ...snapshot, live: isLive(snapshot) };
  } catch (err) {
    if (!isSherlockError(err, 'SHERLOCK_CORRUPT_STATUS')) throw err;
    status.fetchingProblem = err.describe();
  }
  return status;
}

function readGathererStatus(state: string): GathererStatus | undefined {
  const paths = gatherPaths(state);
  if (!existsSync(paths.hosts)) return undefined;
  const now = Date.now() / 1000;
  const hosts = readHostRecords(paths.hosts);
  const status: GathererStatus = {
    hosts: hosts.length,
    queued: hosts.reduce((sum, h) => sum + ((h.pushed - h.consumed) >>> 0), 0),
    backingOff: hosts.filter((h) => h.backoffUntil > now).length,
    plansWaiting: listPlans(state).length,
  };
  const pid = lockHolder(paths.lock);
  if (pid !== undefined) status.runningPid = pid;
  const pausedSince = readPauseFlag(state);
  if (pausedSince !== undefined) status.pausedSince = pausedSince;
  return status;
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw ioError(err, file, 'stat');
  }
}

/** Sizes of the ARC files (finished and open). */
function listArcs(dir: string): number[] {
  return listDirectory(dir).filter((name) => /\.arc\.gz(\.open)?$/.test(name)).map((name) => fileSize(`${dir}/${name}`));
}

function describe(s: Status): string[] {
  const n = (x: number) => x.toLocaleString('en');
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  const running = (pid: number | undefined) => (pid === undefined ? 'not running' : `running (pid ${pid})`);
  const lines = [`state     ${s.state}`];
  const sh = s.shepherd;
  if (sh === undefined) {
    lines.push('shepherd  no URL database yet');
  } else {
    const cycle = sh.lastCycle;
    const last =
      cycle === undefined
        ? 'no cycle yet'
        : `last cycle ${new Date(cycle.time * 1000).toISOString()} (${Math.max(0, Math.round(Date.now() / 1000 - cycle.time))} s ago): merged ${n(cycle.merged)}, ${n(cycle.newUrls)} new URLs, planned ${n(cycle.planned)}`;
    lines.push(`shepherd  ${running(sh.runningPid)}; ${last}`);
    const states = Object.entries(sh.urls)
      .filter(([, count]) => count > 0)
      .map(([name, count]) => `${name} ${n(count)}`)
      .join(', ');
    lines.push(`URLs      ${n(sh.total)} on ${n(sh.sites)} sites${states === '' ? '' : `: ${states}`}`);
  }
  const g = s.gatherer;
  lines.push(
    g === undefined
      ? 'gatherer  no queues yet'
      : `gatherer  ${running(g.runningPid)}${g.pausedSince === undefined ? '' : `, paused since ${g.pausedSince}`}; ${n(g.hosts)} hosts, ${n(g.queued)} URLs queued, ${n(g.backingOff)} hosts backing off`,
  );
  lines.push(`waiting   ${n(s.seedFilesWaiting)} seed files, ${n(g?.plansWaiting ?? 0)} plans, ${mib(s.bucketBytesNotMerged)} of buckets not merged`);
  lines.push(`archive   ${n(s.arcFiles)} ARC files, ${mib(s.arcBytes)}; buckets ${mib(s.bucketBytes)}`);
  if (s.fetching !== undefined) lines.push(...describeFetching(s.fetching, n, mib));
  if (s.fetchingProblem !== undefined) lines.push(`fetching  status snapshot unreadable: ${s.fetchingProblem}`);
  lines.push(`deflate   ${describeDeflatePath(s.deflate)}`);
  return lines;
}

function describeFetching(f: GatherStatusSnapshot & { live: boolean }, n: (x: number) => string, mib: (bytes: number) => string): string[] {
  const counts = (record: Record<string, number>) => Object.entries(record).map(([k, v]) => `${k} ${n(v)}`).join(', ') || 'none';
  const lines = [
    f.live
      ? `fetching  ${f.rate.toFixed(1)} pages/s; ${n(f.fetches)} fetched (${mib(f.bytes)}) since ${f.started}, ${n(f.in_flight)} in flight`
      : `fetching  not now; last snapshot ${f.time}: ${n(f.fetches)} fetched (${mib(f.bytes)}) since ${f.started}`,
    `errors    ${counts(f.errors)}`,
  ];
  if (f.busiest_hosts.length > 0) lines.push(`busiest   ${f.busiest_hosts.map((h) => `${h.host} (${n(h.queued)} queued)`).join(', ')}`);
  if (f.delayed_hosts.length > 0) lines.push(`delayed   ${f.delayed_hosts.map((h) => `${h.host} until ${h.until} (${n(h.queued)} queued, ${n(h.errors)} errors)`).join(', ')}`);
  if (f.arc !== null) lines.push(`ARC       ${f.arc.file} (${mib(f.arc.bytes)})`);
  return lines;
}
