/**
 * The seam between the network layer and the query evaluator. The server
 * (WebSocket and HTTP alike) parses and bounds every request, then calls
 * `Engine.search` once per query; the evaluator over an index version plugs in
 * here, and everything around it (limits, cancelling, rendering) stays as it is.
 *
 * Contract of an Engine:
 * - `search` honours `signal`: once it aborts, the call settles soon (it
 *   rejects with the signal's reason or anything else; the server has already
 *   answered the client). The server caps `limit` at 100 and `offset` at 1000.
 * - It rejects with NoIndexError while no index version is loaded; any other
 *   rejection is a bug the client sees as INTERNAL and the log keeps.
 * - `snippet` is HTML: text escaped, matches inside `<mark>…</mark>` and
 *   nothing else; the renderer neutralises any other markup all the same.
 * - `search` may give the result already written as JSON text (an
 *   EncodedResult, as search threads hand theirs over): the socket splices it
 *   into its answer as it is, and only the server-rendered page parses it.
 * - `suggest` completes what is being typed (searcher/completions.ts); it
 *   rejects with NoIndexError as `search` does, and gives no suggestions
 *   (not an error) from a version without a Suggestions file.
 * - `version` names the loaded index version (undefined: none), read anew on
 *   every health check and welcome, so a live swap shows at once.
 */

import type { QueryNode } from './query.js';

export interface SearchFilters {
  /** Hosts, as `site:` takes them (a host takes its subdomains too); any of them matches. */
  site?: string[];
  /** MIME types, short names already expanded (`html` → text/html, application/xhtml+xml); any of them matches. */
  type?: string[];
  /** ISO 639-1 codes (or "und"); any of them matches. */
  lang?: string[];
  /** Days: only cards dated (Last-Modified, else fetched) at most this long ago. */
  age?: number;
}

export interface SearchRequest {
  query: QueryNode;
  /** The query as typed, for the text of a spelling suggestion (the parsed words are used without it). */
  text?: string;
  offset: number;
  limit: number;
  filters: SearchFilters;
  /** "date": newest first (CardInfo's date; ties by score), without site collapsing; default by score. */
  sort?: 'relevance' | 'date';
  /** Each hit with the parts of its score (searcher/explain.ts). */
  explain?: boolean;
  /** A searcher of several collections: the ones to search, by name (names known: Engine.collections); absent: all. */
  collections?: string[];
}

export interface SearchHit {
  url: string;
  title: string;
  /** HTML-escaped text with <mark> around matches, … between fragments. */
  snippet: string;
  score: number;
  /** The host the card is on. */
  site: string;
  /** MIME type. */
  type: string;
  /** Size of the document in bytes. */
  size: number;
  /** When it was fetched, ISO 8601. */
  date: string;
  /** Its language, ISO 639-1 ("und": not told). */
  lang: string;
  /** A PDF's hit: the page of its snippet's first match, and its page count. */
  page?: number;
  pages?: number;
  /** An image's hit (type `image`, made from pages' alt texts): the page showing it. */
  referrer?: string;
  /** Where the raw response lies in the archive, for a "cached copy" link. */
  archive?: { file: string; offset: number; length: number };
  /** With `explain`: the parts of its score. */
  explain?: Explanation;
  /** A searcher of several collections: the collection the hit is from. */
  collection?: string;
}

/** How a card has a query word: as typed, an accent variant, a word of its stem class, a synonym, a word of a synonym's stem class. */
export type FormMatch = 'exact' | 'accent' | 'stem' | 'synonym' | 'synonym stem';

/** A hit's score explained (searcher/explain.ts): score = (query.score + 1) × factor, factor from the static weight (0–255). */
export interface Explanation {
  score: number;
  weight: number;
  factor: number;
  query: ScorePart;
}

/** One node of the query on one hit: what it adds to the score, and from what. */
export interface ScorePart {
  /** The node as written: a word, "a phrase", AND, OR, a NEAR, a filter. */
  node: string;
  score: number;
  /** A phrase's, NEAR's or AND's (proximity) bonus on top of its parts; a word's accent bonus. */
  bonus?: number;
  /** A word: the closest form the card has it in, and the share of the score that form keeps. */
  match?: FormMatch;
  factor?: number;
  idf?: number;
  /** A word: the body's term frequency (occurrences weighted by word type), the metas' and anchor texts' weights, and BM25F's score of them (rank.ts fieldScore), before × idf. */
  tf?: number;
  bm25f?: number;
  metas?: number;
  anchors?: number;
  /** A word: its occurrences in the card by field (body, title, keywords, description, url, file, anchor). */
  fields?: Record<string, number>;
  /** A word: the forms the card has it in. */
  forms?: Array<{ word: string; match: FormMatch }>;
  parts?: ScorePart[];
}

export interface FacetCount {
  value: string;
  count: number;
}

export interface SearchResult {
  /** Matching cards; `gte` when the count is a lower bound (evaluation stopped early). */
  total: { value: number; relation: 'eq' | 'gte' };
  hits: SearchHit[];
  facets: { site: FacetCount[]; type: FacetCount[]; lang: FacetCount[] };
  /** A spelling correction of the query (searcher/spelling.ts); `applied` when these hits are the corrected query's (the query as typed found nothing). */
  suggest?: Suggestion;
}

export interface Suggestion {
  /** The corrected query, as text. */
  q: string;
  /** The same as HTML, escaped, each corrected word in <mark>. */
  html: string;
  applied: boolean;
}

/** A SearchResult as JSON text (`JSON.stringify` of one). */
export interface EncodedResult {
  readonly json: string;
  /** The index version that answered, when the engine says (a pool's threads may be on two versions while they swap). */
  readonly version?: string;
}

export function isEncoded(result: SearchResult | EncodedResult): result is EncodedResult {
  return 'json' in result;
}

export function decodeResult(result: SearchResult | EncodedResult): SearchResult {
  return isEncoded(result) ? (JSON.parse(result.json) as SearchResult) : result;
}

/** What is typed in the box (the cursor at its end) and how many completions are wanted. */
export interface SuggestRequest {
  q: string;
  limit: number;
}

/** A whole query the box can be replaced with: the last word completed from the vocabulary (`word`), or a title (`title`). */
export interface Completion {
  text: string;
  kind: 'word' | 'title';
}

export interface SuggestResult {
  q: string;
  suggestions: Completion[];
}

export interface Engine {
  search(request: SearchRequest, signal: AbortSignal): Promise<SearchResult | EncodedResult>;
  suggest(request: SuggestRequest, signal: AbortSignal): Promise<SuggestResult>;
  /** The index version searched, undefined while there is none. */
  readonly version: string | undefined;
  /** A searcher of several collections: their names, a request may pick among them; absent: one unnamed collection. */
  readonly collections?: readonly string[];
  /** What the `status` topic and the status page show about the index; JSON-safe. */
  status(): Record<string, unknown>;
}

/** No index version is loaded: the client sees NO_INDEX, /healthz answers 503. */
export class NoIndexError extends Error {
  constructor(message = 'no index version is loaded yet') {
    super(message);
    this.name = 'NoIndexError';
  }
}

/** The engine of a searcher without an index: every search is refused, honestly. */
export function noIndexEngine(): Engine {
  return {
    version: undefined,
    search: () => Promise.reject(new NoIndexError()),
    suggest: () => Promise.reject(new NoIndexError()),
    status: () => ({ index: null }),
  };
}
