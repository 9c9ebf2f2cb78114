/**
 * What a running gatherer counts: the figures of its control socket's
 * `status` answer, its metrics (metrics.ts) and its live status snapshot
 * (live-status.ts), all read from the one object the gatherer keeps.
 */

/** Counters for the status page and metrics; by outcome name and in total. */
export interface GathererStatus {
  started: number;
  fetches: number;
  bytes: number;
  stored: number;
  robotsFetches: number;
  robotsDenied: number;
  retries: number;
  /** Names looked up through the system resolver (not the cache, hosts_file or address literals). */
  dnsLookups: number;
  outcomes: Record<string, number>;
  inFlight: number;
  queued: number;
  hosts: number;
  paused: boolean;
}
