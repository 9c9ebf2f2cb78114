/**
 * The searcher's metrics, served on its own port at /metrics (pages.ts):
 * searches by answer, their latency, WebSocket connections, rate-limited
 * requests, dropped status events, the index version loaded, and the result
 * cache's hits, misses, evictions, entries and bytes. Counts the
 * server keeps for the status topic (search.ts Counters) are read from it.
 */

import { FAST_SECONDS, type Histogram, type Registry } from '../common/service/metrics.js';
import type { ErrorCode } from './protocol.js';
import type { Counters } from './counters.js';
import type { ResultCacheFigures } from './result-cache.js';

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
  results: ResultCacheFigures;
}

/** The window the status topic's query rate and latency are measured over. */
const RECENT_MS = 10_000;
/** Searches remembered for it at most (a busy searcher samples the window's first ones). */
const RECENT_MAX = 10_000;

export class SearcherMetrics {
  private readonly latency: Histogram;
  /** (time ms, seconds) of the searches of the last RECENT_MS. */
  private readonly window: [number, number][] = [];

  constructor(
    readonly registry: Registry,
    figures: () => SearcherFigures,
  ) {
    let now = figures();
    registry.onCollect(() => (now = figures()));
    registry.counter({
      name: 'sherlock_searcher_queries_total',
      help: 'Searches answered (WebSocket, /search and /api/search), by answer: result or an error code.',
      labels: { status: Object.keys(ANSWERS) },
      read: () => Object.entries(now.counters.answers).map(([status, n]) => [{ status }, n]),
    });
    registry.counter({
      name: 'sherlock_searcher_searches_total',
      help: 'Searches started, by the door they came in: websocket, page (/search) or api (/api/search).',
      labels: { door: Object.keys(now.counters.searches_by_door) },
      read: () => Object.entries(now.counters.searches_by_door).map(([door, n]) => [{ door }, n]),
    });
    this.latency = registry.histogram({ name: 'sherlock_searcher_query_duration_seconds', help: 'Time to answer one search, whatever the answer.', buckets: FAST_SECONDS });
    registry.gauge({ name: 'sherlock_searcher_ws_connections', help: 'Open WebSocket connections.', read: () => now.connections });
    registry.counter({ name: 'sherlock_searcher_rate_limited_total', help: 'Requests refused by a rate limit.', read: () => now.counters.rate_limited });
    registry.counter({ name: 'sherlock_searcher_ws_events_dropped_total', help: 'Status events not sent to a client that was not keeping up.', read: () => now.counters.events_dropped });
    registry.gauge({ name: 'sherlock_searcher_index_documents', help: 'Cards (documents) in the index version searched.', read: () => now.documents });
    registry.gauge({ name: 'sherlock_searcher_index_size_bytes', help: 'Bytes of the index version searched.', read: () => now.indexBytes });
    registry.counter({ name: 'sherlock_searcher_result_cache_hits_total', help: 'Searches answered from the result cache.', read: () => now.results.hits });
    registry.counter({ name: 'sherlock_searcher_result_cache_misses_total', help: 'Searches the result cache did not hold (the engine answered).', read: () => now.results.misses });
    registry.counter({ name: 'sherlock_searcher_result_cache_evictions_total', help: 'Results pushed out of the result cache by newer ones or a smaller bound.', read: () => now.results.evictions });
    registry.gauge({ name: 'sherlock_searcher_result_cache_entries', help: 'Results kept in the result cache.', read: () => now.results.entries });
    registry.gauge({ name: 'sherlock_searcher_result_cache_bytes', help: 'Bytes the result cache holds (keys, JSON text, overhead).', read: () => now.results.bytes });
    registry.gauge({ name: 'sherlock_searcher_result_cache_limit_bytes', help: 'The bound of the result cache (searcher.result_cache); 0: off.', read: () => now.results.bound });
  }

  searched(seconds: number): void {
    this.latency.observe(seconds);
    this.prune(Date.now());
    if (this.window.length < RECENT_MAX) this.window.push([Date.now(), seconds]);
  }

  /** Searches a second and their median and 95th-percentile time, over the last RECENT_MS. */
  recent(): { rate: number; p50_ms: number | null; p95_ms: number | null } {
    this.prune(Date.now());
    const times = this.window.map(([, s]) => s * 1000).sort((a, b) => a - b);
    const at = (q: number) => (times.length === 0 ? null : Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]! * 10) / 10);
    return { rate: Math.round((this.window.length / (RECENT_MS / 1000)) * 100) / 100, p50_ms: at(0.5), p95_ms: at(0.95) };
  }

  private prune(now: number): void {
    while (this.window.length > 0 && this.window[0]![0] < now - RECENT_MS) this.window.shift();
  }
}
