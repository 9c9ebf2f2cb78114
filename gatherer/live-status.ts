/**
 * Writes the gatherer's status snapshot (common/gather/status.ts) from its
 * counters and hosts: the fetch rate over a sliding window, errors by
 * outcome, the hosts with the most URLs queued and those waiting longest.
 */

import { RATE_WINDOW_S, TOP_HOSTS, GATHER_STATUS_FORMAT, statusTime, writeGatherStatus, type GatherStatusSnapshot } from '../common/gather/status.js';
import type { GathererStatus } from './counters.js';
import type { Outcome } from './outcome.js';

/** Outcomes that are not errors (taken_down is the operator's doing, not the site's). */
const FINE: ReadonlySet<string> = new Set<Outcome>(['ok', 'not_modified', 'redirect', 'taken_down']);

export interface HostRow {
  host: string;
  queued: number;
  errors: number;
  /** When its next request may go (ms). */
  nextAt: number;
}

/**
 * The hosts a snapshot lists, picked during one walk over every host: the
 * TOP_HOSTS with the most URLs queued and the TOP_HOSTS whose next request
 * is furthest off. A row of every host, sorted, each second made 395 MB of
 * garbage a minute at 10,000 hosts; a row is made only for a host that
 * enters a list. Ties keep the order of the walk.
 */
export class HostRanking {
  readonly busiest: HostRow[] = [];
  readonly delayed: HostRow[] = [];

  /** `now`: the time the walk is made at (ms), which the snapshot carries too. */
  constructor(readonly now: number) {}

  /** A host with URLs queued; `row` is called only if it makes a list. */
  offer(queued: number, nextAt: number, row: () => HostRow): void {
    let made: HostRow | undefined;
    const once = (): HostRow => (made ??= row());
    place(this.busiest, (h) => h.queued < queued, once);
    if (nextAt > this.now) place(this.delayed, (h) => h.nextAt < nextAt, once);
  }
}

/** Puts a row before the first entry it beats, when it beats the last of a full list; keeps TOP_HOSTS. */
function place(list: HostRow[], beats: (h: HostRow) => boolean, row: () => HostRow): void {
  if (list.length === TOP_HOSTS && !beats(list[TOP_HOSTS - 1]!)) return;
  const at = list.findIndex(beats);
  list.splice(at < 0 ? list.length : at, 0, row());
  if (list.length > TOP_HOSTS) list.pop();
}

export class LiveStatus {
  /** (time ms, fetches) once per write, over the last RATE_WINDOW_S. */
  private readonly samples: [number, number][] = [];

  constructor(private readonly state: string) {}

  /** A new snapshot, at the time of `hosts`: the ranking of the hosts with URLs queued. */
  write(status: GathererStatus, hosts: HostRanking, arc: GatherStatusSnapshot['arc'], running: boolean): void {
    const now = hosts.now;
    this.samples.push([now, status.fetches]);
    while (this.samples.length > 2 && this.samples[0]![0] < now - RATE_WINDOW_S * 1000) this.samples.shift();
    const [since, before] = this.samples[0]!;
    const rate = now > since ? ((status.fetches - before) * 1000) / (now - since) : 0;
    writeGatherStatus(this.state, {
      format: GATHER_STATUS_FORMAT,
      pid: process.pid,
      running,
      time: statusTime(now),
      started: statusTime(status.started),
      fetches: status.fetches,
      bytes: status.bytes,
      stored: status.stored,
      robots_fetches: status.robotsFetches,
      retries: status.retries,
      rate: Math.round(rate * 100) / 100,
      in_flight: status.inFlight,
      queued: status.queued,
      hosts: status.hosts,
      outcomes: status.outcomes,
      // Most frequent first, then by name, so the order does not flicker.
      errors: Object.fromEntries(
        Object.entries(status.outcomes)
          .filter(([outcome]) => !FINE.has(outcome))
          .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)),
      ),
      busiest_hosts: hosts.busiest.map((h) => ({ host: h.host, queued: h.queued })),
      delayed_hosts: hosts.delayed.map((h) => ({ host: h.host, queued: h.queued, until: statusTime(h.nextAt), errors: h.errors })),
      arc,
    });
  }
}
