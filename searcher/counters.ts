/**
 * What the searcher has counted since it started: searches (and by which
 * door they came), answers by outcome, rate-limit refusals, dropped status
 * events. The server keeps one
 * set; every connection and the /search route add to it; the status topic
 * and /metrics (metrics.ts) read it.
 */

import type { ErrorCode } from './protocol.js';

/** Where a search came in: a WebSocket message, the /search page, the JSON API (/api/search). */
export type Door = 'websocket' | 'page' | 'api';

/** What the searcher has done since it started, for the status topic. */
export interface Counters {
  searches: number;
  searches_by_door: Record<Door, number>;
  /** Answers by outcome: "result" or an error code. */
  answers: Partial<Record<'result' | ErrorCode, number>>;
  rate_limited: number;
  events_dropped: number;
}

export function newCounters(): Counters {
  return { searches: 0, searches_by_door: { websocket: 0, page: 0, api: 0 }, answers: {}, rate_limited: 0, events_dropped: 0 };
}

export function count(counters: Counters, outcome: 'result' | ErrorCode): void {
  counters.answers[outcome] = (counters.answers[outcome] ?? 0) + 1;
}
