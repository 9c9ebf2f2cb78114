/**
 * The gatherer's metrics (docs/metrics.md lists them): fetches by
 * outcome, bytes, fetch latency, robots.txt fetches, and at scrape time its
 * queues, hosts and requests in flight. Counts the gatherer keeps anyway
 * (GathererStatus) are read from it, not counted twice.
 */

import { Counter, Histogram, SLOW_SECONDS, type Registry } from '../common/service/metrics.js';
import { OUTCOMES, type Outcome } from './outcome.js';
import type { GathererStatus } from './counters.js';

export class GathererMetrics {
  private readonly fetchSeconds: Histogram;
  private readonly robots: Counter;

  constructor(registry: Registry, status: () => GathererStatus) {
    let now = status();
    registry.onCollect(() => (now = status()));
    const result = { result: OUTCOMES };
    registry.counter({
      name: 'sherlock_gatherer_fetches_total',
      help: 'URLs fetched (or settled without a request: robots_denied, dns), by outcome.',
      labels: result,
      read: () => Object.entries(now.outcomes).map(([outcome, n]) => [{ result: outcome }, n]),
    });
    registry.counter({ name: 'sherlock_gatherer_fetched_bytes_total', help: 'Body bytes received.', read: () => now.bytes });
    registry.counter({ name: 'sherlock_gatherer_stored_total', help: 'Objects stored (ARC record, bucket, queue entry done).', read: () => now.stored });
    registry.counter({ name: 'sherlock_gatherer_retries_total', help: 'URLs queued again after a temporary error.', read: () => now.retries });
    registry.counter({ name: 'sherlock_gatherer_dns_lookups_total', help: 'Names looked up through the system resolver (answers from the cache and gatherer.hosts_file not counted).', read: () => now.dnsLookups });
    this.fetchSeconds = registry.histogram({ name: 'sherlock_gatherer_fetch_duration_seconds', help: 'Time from request to the end of the body.', buckets: SLOW_SECONDS });
    this.robots = registry.counter({ name: 'sherlock_gatherer_robots_fetches_total', help: 'robots.txt requests, by outcome.', labels: result });
    registry.gauge({ name: 'sherlock_gatherer_queue_depth', help: 'URLs queued over all hosts.', read: () => now.queued });
    registry.gauge({ name: 'sherlock_gatherer_hosts', help: 'Hosts the gatherer keeps queues for.', read: () => now.hosts });
    registry.gauge({ name: 'sherlock_gatherer_connections_active', help: 'Requests in flight.', read: () => now.inFlight });
  }

  fetched(elapsedMs: number): void {
    this.fetchSeconds.observe(elapsedMs / 1000);
  }

  robotsFetched(outcome: Outcome): void {
    this.robots.inc({ result: outcome });
  }
}
