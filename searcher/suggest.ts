/**
 * One suggest from checked fields to an outcome, shared by the WebSocket
 * connection and the HTTP route: the engine's completions under the
 * caller's signal and the query timeout (deadline.ts), every failure as
 * the protocol's error fields; and the same completions in the OpenSearch
 * suggestions format. No result cache: a suggest costs microseconds
 * (docs/search.md "Suggestions").
 */

import { logger } from '../common/log.js';
import { NoIndexError, type Engine, type SuggestRequest, type SuggestResult } from './engine.js';
import type { ErrorFields } from './protocol.js';
import type { SearcherConfig } from './config.js';
import { withDeadline } from './deadline.js';

const log = logger('searcher');

export type SuggestOutcome = { ok: true; result: SuggestResult; took_ms: number } | { ok: false; error: ErrorFields };

/** What a suggest needs of the server. */
export interface SuggestContext {
  readonly engine: Engine;
  readonly config: Pick<SearcherConfig, 'query_timeout'>;
}

/** Runs one suggest; `signal` is the caller's (client gone). */
export async function runSuggest({ engine, config }: SuggestContext, request: SuggestRequest, signal: AbortSignal): Promise<SuggestOutcome> {
  const started = performance.now();
  const timeoutMs = config.query_timeout;
  const settled = await withDeadline(signal, timeoutMs, (engineSignal) => engine.suggest(request, engineSignal));
  if (settled.ok) return { ok: true, result: settled.value, took_ms: Math.round((performance.now() - started) * 100) / 100 };
  if (settled.why === 'cancelled') return { ok: false, error: { code: 'CANCELLED', message: 'the suggest was cancelled' } };
  if (settled.why === 'timeout') return { ok: false, error: { code: 'TIMEOUT', message: `the suggest took longer than ${timeoutMs} ms` } };
  if (settled.err instanceof NoIndexError) return { ok: false, error: { code: 'NO_INDEX', message: settled.err.message } };
  log.err('suggest failed', { q: request.q, problem: settled.err instanceof Error ? (settled.err.stack ?? settled.err.message) : String(settled.err) });
  return { ok: false, error: { code: 'INTERNAL', message: 'the suggest failed on the server; its log has the details' } };
}

/**
 * The OpenSearch suggestions extension 1.1 array: the query, the
 * completions, their descriptions (the kind: "word" or "title") and their
 * URLs (the search page's, `page` the path or address of /search).
 */
export function openSearchSuggestions(result: SuggestResult, page = '/search'): [string, string[], string[], string[]] {
  const { q, suggestions } = result;
  return [q, suggestions.map((s) => s.text), suggestions.map((s) => s.kind), suggestions.map((s) => `${page}?q=${encodeURIComponent(s.text)}`)];
}
