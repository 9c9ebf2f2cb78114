/**
 * The searcher's metrics, served on its own port at /metrics (pages.ts):
 * searches by answer, their latency, WebSocket connections, rate-limited
 * requests, dropped status events, and the index version loaded. Counts the
 * server keeps for the status topic (search.ts Counters) are read from it.
 */

import { FAST_SECONDS, type Histogram, type Registry } from '../common/metrics.js';
import type { ErrorCode } from './protocol.js';
import type { Counters } from './search.js';

/** Every answer a search can get; a Record so a new error code cannot be forgotten here. */
const ANSWERS: Record<'result' | ErrorCode, true> = {
  result: true,
  BAD_MESSAGE: true,
  BAD_QUERY: true,
  UNAUTHORIZED: true,
  TOO_MANY_REQUESTS: true,
  CANCELLED: true,
  TIMEOUT: true,
  NO_INDEX: true,
  UNAVAILABLE: true,
  INTERNAL: true,
};

export interface SearcherFigures {
  counters: Counters;
  connections: number;
  /** Cards and bytes of the index version loaded (0 without one). */
  documents: number;
  indexBytes: number;
}

export class SearcherMetrics {
  private readonly latency: Histogram;

  constructor(
    readonly registry: Registry,
    figures: () => SearcherFigures,
  ) {
    let now = figures();
    registry.onCollect(() => (now = figures()));
    registry.counter({
      name: 'sherlock_searcher_queries_total',
      help: 'Searches answered (WebSocket and /search), by answer: result or an error code.',
      labels: { status: Object.keys(ANSWERS) },
      read: () => Object.entries(now.counters.answers).map(([status, n]) => [{ status }, n]),
    });
    this.latency = registry.histogram({ name: 'sherlock_searcher_query_duration_seconds', help: 'Time to answer one search, whatever the answer.', buckets: FAST_SECONDS });
    registry.gauge({ name: 'sherlock_searcher_ws_connections', help: 'Open WebSocket connections.', read: () => now.connections });
    registry.counter({ name: 'sherlock_searcher_rate_limited_total', help: 'Requests refused by a rate limit.', read: () => now.counters.rate_limited });
    registry.counter({ name: 'sherlock_searcher_ws_events_dropped_total', help: 'Status events not sent to a client that was not keeping up.', read: () => now.counters.events_dropped });
    registry.gauge({ name: 'sherlock_searcher_index_documents', help: 'Cards (documents) in the index version searched.', read: () => now.documents });
    registry.gauge({ name: 'sherlock_searcher_index_size_bytes', help: 'Bytes of the index version searched.', read: () => now.indexBytes });
  }

  searched(seconds: number): void {
    this.latency.observe(seconds);
  }
}
