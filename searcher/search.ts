/**
 * One search from checked fields to an outcome, shared by the WebSocket
 * connection, the HTTP /search page and the JSON API: parse the query, answer from the
 * result cache (result-cache.ts) when it holds the answer, else call the
 * engine under the caller's signal and the query timeout, keep its result
 * in the cache, and turn every failure into the protocol's error fields. It
 * always settles, and as soon as the signal or the timeout fires, whether or
 * not the engine has noticed yet.
 */

import { logger } from '../common/log.js';
import { NoIndexError, isEncoded, type EncodedResult, type Engine, type SearchRequest, type SearchResult } from './engine.js';
import { queryErrorFields, type ErrorFields, type SearchFields } from './protocol.js';
import { count, type Counters, type Door } from './counters.js';
import type { SearcherMetrics } from './metrics.js';
import type { SearcherConfig } from './config.js';
import { QueryError, parseQuery, type QueryNode } from './query.js';
import type { Synonyms } from './synonyms.js';
import { resultKey, type ResultCache } from './result-cache.js';
import { withDeadline } from './deadline.js';

const log = logger('searcher');

export type Outcome = { ok: true; result: SearchResult | EncodedResult; took_ms: number } | { ok: false; error: ErrorFields };

/** What a search needs of the server: the engine, the query timeout, the synonyms, the result cache, where to count. */
export interface SearchContext {
  readonly engine: Engine;
  readonly results: ResultCache;
  readonly config: Pick<SearcherConfig, 'query_timeout'>;
  readonly synonyms: Synonyms;
  readonly counters: Counters;
  readonly metrics: SearcherMetrics;
}

/** Runs one search that came in by `door`; `signal` is the caller's (cancel, client gone). */
export async function runSearch(context: SearchContext, fields: SearchFields, signal: AbortSignal, door: Door): Promise<Outcome> {
  const { counters, metrics } = context;
  counters.searches++;
  counters.searches_by_door[door]++;
  const started = performance.now();
  const outcome = await attempt(context, fields, signal);
  metrics.searched((performance.now() - started) / 1000);
  count(counters, outcome.ok ? 'result' : outcome.error.code);
  return outcome;
}

async function attempt({ engine, config, synonyms, results }: SearchContext, fields: SearchFields, signal: AbortSignal): Promise<Outcome> {
  const timeoutMs = config.query_timeout;
  let query;
  try {
    query = synonyms.apply(parseQuery(fields.q));
  } catch (err) {
    return err instanceof QueryError ? { ok: false, error: queryErrorFields(err) } : internal(err, fields.q);
  }
  const unknown = unknownCollection(engine, fields.collections);
  if (unknown !== undefined) return { ok: false, error: unknown };
  const started = performance.now();
  const tookMs = () => Math.round((performance.now() - started) * 10) / 10;
  // The version read now is the one a plain engine answers with: search() takes it synchronously.
  const version = engine.version;
  let key: string | undefined;
  let generation = 0;
  if (results.enabled && version !== undefined) {
    results.use(version);
    generation = results.generation;
    key = resultKey(query, fields, version);
    const json = results.lookup(key, fields.q);
    if (json !== undefined) return { ok: true, result: { json }, took_ms: tookMs() };
  }
  const settled = await withDeadline(signal, timeoutMs, (engineSignal) => engine.search(searchRequest(query, fields), engineSignal));
  if (settled.ok) {
    if (key !== undefined) keep(results, key, generation, version!, fields.q, settled.value);
    return { ok: true, result: settled.value, took_ms: tookMs() };
  }
  if (settled.why === 'cancelled') return { ok: false, error: { code: 'CANCELLED', message: 'the search was cancelled' } };
  if (settled.why === 'timeout') return { ok: false, error: { code: 'TIMEOUT', message: `the search took longer than ${timeoutMs} ms` } };
  if (settled.err instanceof NoIndexError) return { ok: false, error: { code: 'NO_INDEX', message: settled.err.message } };
  return internal(settled.err, fields.q);
}

/** Puts a result into the cache under `key`, made for `version`: an engine that says which version answered is taken at its word. */
function keep(results: ResultCache, key: string, generation: number, version: string, typed: string, result: SearchResult | EncodedResult): void {
  if (isEncoded(result)) results.store(key, generation, result.version ?? version, typed, result.json);
  else results.store(key, generation, version, typed, JSON.stringify(result));
}

/** The refusal of a collection name the engine does not have, naming it and the field. */
function unknownCollection(engine: Engine, collections: readonly string[] | undefined): ErrorFields | undefined {
  const known = engine.collections ?? [];
  const at = (collections ?? []).findIndex((name) => !known.includes(name));
  if (at < 0) return undefined;
  const name = collections![at]!;
  const which = known.length === 0 ? 'this searcher has one collection, unnamed' : `there are ${known.join(', ')}`;
  return { code: 'BAD_MESSAGE', message: `collections[${at}]: no collection "${name}"; ${which}`, field: `collections[${at}]` };
}

/** The engine's request for checked fields and their parsed query. */
function searchRequest(query: QueryNode, { q, offset, limit, filters, sort, explain, collections }: SearchFields): SearchRequest {
  return {
    query,
    text: q,
    offset,
    limit,
    filters,
    ...(sort === undefined ? {} : { sort }),
    ...(explain === true ? { explain } : {}),
    ...(collections === undefined ? {} : { collections }),
  };
}

/** A bug: the client learns only that it failed, the log gets the details. */
function internal(err: unknown, q: string): Outcome {
  log.err('search failed', { q, problem: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  return { ok: false, error: { code: 'INTERNAL', message: 'the search failed on the server; its log has the details' } };
}
