/**
 * The result cache (the original's, sherlock-original §5): answers already
 * given, kept as their JSON text and handed out again without asking the
 * engine, in an LRU bounded by bytes (`searcher.result_cache`; 0: off).
 *
 * Contract:
 * - The key is everything a result depends on (resultKey): the parsed
 *   query with synonyms applied, as canonical text (positions left out, so
 *   queries that parse the same share an entry), the filters as sets, the
 *   page (offset, limit), the sort, explain, the collections picked, the
 *   index version (of several collections: all their versions), and for an
 *   `age` filter the minute (its cut-off moves with the clock).
 * - A result carrying a spelling suggestion also depends on the query as
 *   typed (the suggestion is that text with words replaced): such an entry
 *   answers only the same text; another spelling of the query is a miss
 *   whose answer replaces it.
 * - Only results are kept, never errors; only one the version of its key
 *   answered (store()), and all entries go when the engine's version changes
 *   (use()) or clear() is called, so no entry outlives what it was made from.
 *   A search that missed before a clear() and ends after it is not kept
 *   either (its `generation` is past): its engine may have answered before
 *   what the clear() was for took effect.
 * - The bound counts each entry's strings as V8 holds them (a byte a
 *   character, two when one is outside Latin-1) and ENTRY_OVERHEAD bytes
 *   more for the map's slot and the objects around them.
 */

import { Lru } from './lru.js';
import type { SearchFields } from './protocol.js';
import type { QueryNode } from './query.js';

/** Bytes an entry costs besides its strings: the map slot, the LRU's record, the entry object, three string headers. */
export const ENTRY_OVERHEAD = 160;

const MINUTE_MS = 60_000;

/** What the status topic and /metrics show of the cache. */
export interface ResultCacheFigures {
  hits: number;
  misses: number;
  evictions: number;
  entries: number;
  bytes: number;
  /** searcher.result_cache: the most `bytes` may be. */
  bound: number;
}

interface Entry {
  readonly json: string;
  /** The query as typed, when the result depends on it (it has a suggestion). */
  readonly typed: string | undefined;
  readonly cost: number;
}

/**
 * The key of a search: `query` is the parsed query with synonyms applied;
 * `now` (ms) matters only with an age filter.
 */
export function resultKey(query: QueryNode, fields: SearchFields, version: string, now = Date.now()): string {
  const { offset, limit, filters, sort, explain, collections } = fields;
  const set = (values: readonly string[] | undefined) => [...new Set(values ?? [])].sort();
  const minute = filters.age === undefined ? null : Math.floor(now / MINUTE_MS);
  const page = [version, offset, limit, sort ?? 'relevance', explain === true, set(filters.site), set(filters.type), set(filters.lang), filters.age ?? null, minute, set(collections)];
  return `${JSON.stringify(page)}\n${canonical(query)}`;
}

/** A query tree as JSON with its keys sorted and without the positions in the text typed (start, end). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => key !== 'start' && key !== 'end' && record[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`).join(',')}}`;
}

/** Bytes V8 keeps for the characters of `text`. */
function stringBytes(text: string): number {
  return /[^\u0000-\u00ff]/.test(text) ? 2 * text.length : text.length;
}

/** Whether a result's JSON text has a suggestion: `"suggest":` can only be an object key (a quote inside a string is escaped), and only the result has one of that name. */
function hasSuggestion(json: string): boolean {
  return json.includes('"suggest":');
}

export class ResultCache {
  private readonly lru: Lru<string, Entry>;
  private bound: number;
  /** The index version the entries were made on. */
  private version: string | undefined;
  private hits = 0;
  private misses = 0;
  /** Counts clear()s: a result is kept only when none came between its lookup and its store(). */
  private cleared = 0;

  constructor(bytes: number) {
    this.bound = bytes;
    this.lru = new Lru<string, Entry>(bytes, (entry) => entry.cost);
  }

  /** Whether searches look here at all (a bound of 0 turns the cache off). */
  get enabled(): boolean {
    return this.bound > 0;
  }

  /** A new bound (SIGHUP): shrinking pushes the oldest entries out now. */
  resize(bytes: number): void {
    this.bound = bytes;
    this.lru.resize(bytes);
  }

  /** Forgets every entry: after it no search is answered from anything cached before. */
  clear(): void {
    this.lru.clear();
    this.cleared += 1;
  }

  /** What store() is given back: the entries' generation when a search missed. */
  get generation(): number {
    return this.cleared;
  }

  /** The engine's version now: a change drops every entry. */
  use(version: string): void {
    if (version === this.version) return;
    this.clear();
    this.version = version;
  }

  /** The JSON text kept for `key` and the query as typed, counted as a hit or a miss. */
  lookup(key: string, typed: string): string | undefined {
    const entry = this.lru.get(key);
    if (entry === undefined || (entry.typed !== undefined && entry.typed !== typed)) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    return entry.json;
  }

  /** Keeps a result (its JSON text) that `version` answered for `key`, looked up in `generation`; one of another version than the entries', or from before a clear(), is not kept. */
  store(key: string, generation: number, version: string, typed: string, json: string): void {
    if (!this.enabled || version !== this.version || generation !== this.cleared) return;
    const dependent = hasSuggestion(json) ? typed : undefined;
    const cost = stringBytes(key) + stringBytes(json) + (dependent === undefined ? 0 : stringBytes(dependent)) + ENTRY_OVERHEAD;
    this.lru.set(key, { json, typed: dependent, cost });
  }

  figures(): ResultCacheFigures {
    return { hits: this.hits, misses: this.misses, evictions: this.lru.evictions, entries: this.lru.size, bytes: this.lru.used, bound: this.bound };
  }
}
