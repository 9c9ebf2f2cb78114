/**
 * Writes the gatherer's status snapshot (common/gather/status.ts) from its
 * counters and hosts: the fetch rate over a sliding window, errors by
 * outcome, the hosts with the most URLs queued and those waiting longest.
 */

import { RATE_WINDOW_S, TOP_HOSTS, GATHER_STATUS_FORMAT, statusTime, writeGatherStatus, type GatherStatusSnapshot } from '../common/gather/status.js';
import type { GathererStatus } from './counters.js';
import type { Outcome } from './outcome.js';

/** Outcomes that are not errors. */
const FINE: ReadonlySet<string> = new Set<Outcome>(['ok', 'not_modified', 'redirect']);

export interface HostRow {
  host: string;
  queued: number;
  errors: number;
  /** When its next request may go (ms). */
  nextAt: number;
}

export class LiveStatus {
  /** (time ms, fetches) once per write, over the last RATE_WINDOW_S. */
  private readonly samples: [number, number][] = [];

  constructor(private readonly state: string) {}

  /** A new snapshot; `hosts`: the hosts with URLs queued. */
  write(status: GathererStatus, hosts: readonly HostRow[], arc: GatherStatusSnapshot['arc'], running: boolean): void {
    const now = Date.now();
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
      busiest_hosts: [...hosts].sort((a, b) => b.queued - a.queued).slice(0, TOP_HOSTS).map((h) => ({ host: h.host, queued: h.queued })),
      delayed_hosts: hosts
        .filter((h) => h.nextAt > now)
        .sort((a, b) => b.nextAt - a.nextAt)
        .slice(0, TOP_HOSTS)
        .map((h) => ({ host: h.host, queued: h.queued, until: statusTime(h.nextAt), errors: h.errors })),
      arc,
    });
  }
}
