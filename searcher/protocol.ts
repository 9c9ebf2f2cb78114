/**
 * The WebSocket protocol `sherlock.v1` (docs/api.md is the reference for
 * clients): every message is one JSON object in one text frame, with a
 * `type`. What this module owns: the shapes of every message, the strict
 * reading of client messages (unknown fields, wrong types and out-of-range
 * values are refused naming the field), the error codes and close codes.
 * It does no I/O; connection.ts drives it.
 *
 * Client → server: hello {token?}, search {id, q, offset?, limit?, filters?},
 * suggest {id, q, limit?}, cancel {id}, subscribe {id, topic}, unsubscribe
 * {id}, ping {id?}.
 * Server → client: welcome, result, suggestions, error, event, pong.
 *
 * Every search and every suggest is answered exactly once, by a result or an error carrying its
 * id. An error about one message never closes the socket; the close codes
 * are for what ends the conversation (binary frames or a flood of invalid
 * messages 4400, authentication 4401, ignoring rate limits 4429).
 */

import { COLLECTION_NAME } from './config.js';
import { isEncoded, type EncodedResult, type SearchFilters, type SearchHit, type SearchResult, type SuggestRequest, type SuggestResult } from './engine.js';
import { MAX_QUERY_LENGTH, QueryError, parseQuery, type QueryErrorCode } from './query.js';

export const SUBPROTOCOL = 'sherlock.v1';

/** Bounds on client messages (the frame itself is bounded by MAX_PAYLOAD). */
export const MAX_PAYLOAD = 64 * 1024;
export const MAX_ID_LENGTH = 64;
export const MAX_TOKEN_LENGTH = 1024;
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;
export const MAX_OFFSET = 1000;
export const MAX_FILTER_VALUES = 16;
/** filters.age: days, at most a century. */
export const MAX_AGE_DAYS = 36_500;
export const MAX_FILTER_LENGTH = 253;
/** suggest: the text typed, and how many completions. */
export const MAX_SUGGEST_LENGTH = 256;
export const DEFAULT_SUGGEST_LIMIT = 8;
export const MAX_SUGGEST_LIMIT = 20;

export type ErrorCode =
  /** The message is not JSON, or breaks the protocol; `field` names the culprit. */
  | 'BAD_MESSAGE'
  /** The query does not parse; `reason` is the parser's code, `position` where. */
  | 'BAD_QUERY'
  /** hello was missing or its token wrong; the socket closes with 4401. */
  | 'UNAUTHORIZED'
  /** A rate or in-flight limit; `retry_after_ms` when waiting helps. */
  | 'TOO_MANY_REQUESTS'
  /** The search was cancelled by the client. */
  | 'CANCELLED'
  /** The search ran past the server's query_timeout. */
  | 'TIMEOUT'
  /** No index version is loaded yet. */
  | 'NO_INDEX'
  /** The server is shutting down. */
  | 'UNAVAILABLE'
  /** A bug on our side; the server log has the details. */
  | 'INTERNAL';

/** Close codes: 1xxx from RFC 6455 §7.4.1, 4xxx ours (4000–4999 are for applications). */
export const CLOSE = {
  goingAway: 1001,
  tooBig: 1009,
  badMessages: 4400,
  unauthorized: 4401,
  abuse: 4429,
} as const;

export type Topic = 'status';

export interface SearchFields {
  q: string;
  offset: number;
  limit: number;
  filters: SearchFilters;
  sort?: 'relevance' | 'date';
  explain?: boolean;
  /** Collection names, as written (search.ts checks them against the engine's); absent: all. */
  collections?: string[];
}

export type ClientMessage =
  | { type: 'hello'; token?: string }
  | ({ type: 'search'; id: string } & SearchFields)
  | ({ type: 'suggest'; id: string } & SuggestRequest)
  | { type: 'cancel'; id: string }
  | { type: 'subscribe'; id: string; topic: Topic }
  | { type: 'unsubscribe'; id: string }
  | { type: 'ping'; id?: string };

export interface WelcomeMessage {
  type: 'welcome';
  protocol: typeof SUBPROTOCOL;
  /** The index version searched, null while there is none. */
  index: string | null;
  limits: Record<string, number>;
}

export interface ResultMessage {
  type: 'result';
  id: string;
  took_ms: number;
  total: SearchResult['total'];
  hits: SearchHit[];
  facets: SearchResult['facets'];
  /** A spelling suggestion (docs/search.md "Spelling"). */
  suggest?: SearchResult['suggest'];
}

export interface SuggestionsMessage extends SuggestResult {
  type: 'suggestions';
  id: string;
  took_ms: number;
}

export interface ErrorMessage {
  type: 'error';
  id?: string;
  code: ErrorCode;
  message: string;
  /** BAD_MESSAGE: the field at fault ("limit", "filters.site[2]"). */
  field?: string;
  /** BAD_QUERY: the parser's code and the offset in q (UTF-16 code units). */
  reason?: QueryErrorCode;
  position?: number;
  /** TOO_MANY_REQUESTS: when a retry will be accepted. */
  retry_after_ms?: number;
}

export type ErrorFields = Omit<ErrorMessage, 'type' | 'id'>;

export type ServerMessage =
  | WelcomeMessage
  | ResultMessage
  | SuggestionsMessage
  | ErrorMessage
  | { type: 'event'; id: string; topic: Topic; data: Record<string, unknown> }
  | { type: 'pong'; id?: string };

/** A client message that breaks the protocol; `id` is set when the message had a readable one. */
export class MessageError extends Error {
  constructor(
    message: string,
    readonly field?: string,
    readonly id?: string,
  ) {
    super(message);
    this.name = 'MessageError';
  }

  toMessage(): ErrorMessage {
    return errorMessage(this.id, { code: 'BAD_MESSAGE', message: this.message, ...(this.field === undefined ? {} : { field: this.field }) });
  }
}

export function errorMessage(id: string | undefined, fields: ErrorFields): ErrorMessage {
  return { type: 'error', ...(id === undefined ? {} : { id }), ...fields };
}

/** The parser's refusal as the client sees it. */
export function queryErrorFields(err: QueryError): ErrorFields {
  return { code: 'BAD_QUERY', message: err.message, reason: err.code, position: err.position };
}

/** The result message as JSON text; `id` undefined leaves it out (the JSON API). An encoded result is spliced in as it is, not parsed and written again. */
export function resultText(id: string | undefined, tookMs: number, result: SearchResult | EncodedResult): string {
  const head = `{"type":"result",${id === undefined ? '' : `"id":${JSON.stringify(id)},`}"took_ms":${tookMs}`;
  return isEncoded(result) ? `${head},${result.json.slice(1)}` : `${head},${JSON.stringify(result).slice(1)}`;
}

/** The fields of a search besides its id. */
const SEARCH_FIELDS = ['q', 'offset', 'limit', 'filters', 'sort', 'explain', 'collections'] as const;

/** The fields of a suggest besides its id (the HTTP route's parameters). */
export const SUGGEST_FIELDS = ['q', 'limit'] as const;

const FIELDS = {
  hello: ['token'],
  search: ['id', ...SEARCH_FIELDS],
  suggest: ['id', ...SUGGEST_FIELDS],
  cancel: ['id'],
  subscribe: ['id', 'topic'],
  unsubscribe: ['id'],
  ping: ['id'],
} as const satisfies Record<ClientMessage['type'], readonly string[]>;

type Json = Record<string, unknown>;

const ID = new RegExp(`^[\\x21-\\x7e]{1,${MAX_ID_LENGTH}}$`);

/** Refuses a field a `type` message does not have (`extra`: ones a door adds), naming it as the socket does. */
function onlyFields(type: keyof typeof FIELDS, value: Json, id: string | undefined, extra: readonly string[] = []): void {
  const allowed: readonly string[] = FIELDS[type];
  for (const key of Object.keys(value)) {
    if (key !== 'type' && !allowed.includes(key) && !extra.includes(key)) throw new MessageError(`a ${type} message has no field "${key}"`, key, id);
  }
}

/**
 * A message sent over HTTP (the JSON API's POST body): its own `type`,
 * when given, must be `type`, its `id`, when given, is checked as the
 * socket checks it and comes back in the answer, and it has only the
 * message's fields and the door's `extra` ones; the rest are the fields.
 */
export function unwrapMessage(value: Json, type: 'search' | 'suggest', extra: readonly string[] = []): { id: string | undefined; fields: Json } {
  const { type: given, id, ...fields } = value;
  if (id !== undefined && (typeof id !== 'string' || !ID.test(id))) throw new MessageError(`id must be a string of 1 to ${MAX_ID_LENGTH} visible ASCII characters`, 'id');
  if (given !== undefined && given !== type) throw new MessageError(`type must be "${type}" here (or left out)`, 'type', id);
  onlyFields(type, fields, id, extra);
  return { id, fields };
}

/** Reads one text frame; throws MessageError naming the field at fault. */
export function parseClientMessage(text: string): ClientMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new MessageError('the message is not valid JSON');
  }
  if (!isObject(value)) throw new MessageError('a message is a JSON object with a "type"');
  const id = typeof value['id'] === 'string' && ID.test(value['id']) ? value['id'] : undefined;
  const type = value['type'];
  if (typeof type !== 'string' || !Object.hasOwn(FIELDS, type)) {
    throw new MessageError(`type must be one of ${Object.keys(FIELDS).join(', ')}`, 'type', id);
  }
  const t = type as keyof typeof FIELDS;
  onlyFields(t, value, id);
  const need = (): string => {
    if (id === undefined) throw new MessageError(`id must be a string of 1 to ${MAX_ID_LENGTH} visible ASCII characters`, 'id');
    return id;
  };
  switch (t) {
    case 'hello': {
      const token = value['token'];
      if (token === undefined) return { type: 'hello' };
      if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) {
        throw new MessageError(`token must be a string of 1 to ${MAX_TOKEN_LENGTH} characters`, 'token');
      }
      return { type: 'hello', token };
    }
    case 'search':
      return { type: 'search', id: need(), ...checkSearchFields(value, id) };
    case 'suggest':
      return { type: 'suggest', id: need(), ...checkSuggestFields(value, id) };
    case 'subscribe':
      if (value['topic'] !== 'status') throw new MessageError('topic must be "status"', 'topic', id);
      return { type: 'subscribe', id: need(), topic: 'status' };
    case 'ping':
      if (value['id'] !== undefined) need();
      return id === undefined ? { type: 'ping' } : { type: 'ping', id };
    default:
      return { type: t, id: need() };
  }
}

/**
 * The fields of a search, checked and with defaults filled in; the HTTP
 * /search route reads its parameters through this too. Filters are
 * normalised as the parser reads `site:` and `type:`.
 */
export function checkSearchFields(value: Json, id?: string): SearchFields {
  const q = value['q'];
  if (typeof q !== 'string') throw new MessageError('q must be a string', 'q', id);
  if (q.length > MAX_QUERY_LENGTH) throw new MessageError(`q must be at most ${MAX_QUERY_LENGTH} characters`, 'q', id);
  const offset = integer(value, 'offset', 0, MAX_OFFSET, 0, id);
  const limit = integer(value, 'limit', 1, MAX_LIMIT, DEFAULT_LIMIT, id);
  const { sort, explain } = value;
  if (sort !== undefined && sort !== 'relevance' && sort !== 'date') throw new MessageError('sort must be "relevance" or "date"', 'sort', id);
  if (explain !== undefined && typeof explain !== 'boolean') throw new MessageError('explain must be true or false', 'explain', id);
  const collections = checkCollections(value['collections'], id);
  return {
    q,
    offset,
    limit,
    filters: checkFilters(value['filters'], id),
    ...(sort === undefined ? {} : { sort }),
    ...(explain === true ? { explain } : {}),
    ...(collections === undefined ? {} : { collections }),
  };
}

/** The fields of a suggest, checked, the limit defaulted; the HTTP route reads its parameters through this too. */
export function checkSuggestFields(value: Json, id?: string): SuggestRequest {
  const q = value['q'];
  if (typeof q !== 'string' || q.length === 0 || q.length > MAX_SUGGEST_LENGTH) throw new MessageError(`q must be a string of 1 to ${MAX_SUGGEST_LENGTH} characters`, 'q', id);
  return { q, limit: integer(value, 'limit', 1, MAX_SUGGEST_LIMIT, DEFAULT_SUGGEST_LIMIT, id) };
}

/** A list of collection names, each once; an empty list is absent (all). */
function checkCollections(list: unknown, id: string | undefined): string[] | undefined {
  if (list === undefined) return undefined;
  if (!Array.isArray(list) || list.length > MAX_FILTER_VALUES) throw new MessageError(`collections must be a list of at most ${MAX_FILTER_VALUES} collection names`, 'collections', id);
  for (const [i, name] of list.entries()) {
    if (typeof name !== 'string' || !COLLECTION_NAME.test(name)) throw new MessageError(`collections[${i}] is not a collection name (a-z, 0-9, _ and -, at most 32)`, `collections[${i}]`, id);
  }
  return list.length === 0 ? undefined : [...new Set(list as string[])];
}

function integer(value: Json, field: string, min: number, max: number, fallback: number, id: string | undefined): number {
  const n = value[field];
  if (n === undefined) return fallback;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    throw new MessageError(`${field} must be a whole number from ${min} to ${max}`, field, id);
  }
  return n;
}

function checkFilters(filters: unknown, id: string | undefined): SearchFilters {
  if (filters === undefined) return {};
  if (!isObject(filters)) throw new MessageError('filters must be an object with "site", "type" and/or "lang" lists and/or "age"', 'filters', id);
  const out: SearchFilters = {};
  for (const [key, list] of Object.entries(filters)) {
    if (key === 'age') {
      if (typeof list !== 'number' || !Number.isInteger(list) || list < 1 || list > MAX_AGE_DAYS) {
        throw new MessageError(`filters.age must be a whole number of days from 1 to ${MAX_AGE_DAYS}`, 'filters.age', id);
      }
      out.age = list;
      continue;
    }
    if (key !== 'site' && key !== 'type' && key !== 'lang') throw new MessageError(`filters.${key} is not a filter; there are site, type, lang and age`, `filters.${key}`, id);
    if (!Array.isArray(list) || list.length > MAX_FILTER_VALUES) {
      throw new MessageError(`filters.${key} must be a list of at most ${MAX_FILTER_VALUES} strings`, `filters.${key}`, id);
    }
    const values = list.flatMap((item: unknown, i) => filterValues(key, item, `filters.${key}[${i}]`, id));
    if (values.length > 0) out[key] = [...new Set(values)];
  }
  return out;
}

/** One filter value as the query parser reads `site:VALUE`, `type:VALUE` or `lang:VALUE`. */
function filterValues(kind: 'site' | 'type' | 'lang', item: unknown, field: string, id: string | undefined): string[] {
  const bad = (why: string) => new MessageError(`${field} ${why}`, field, id);
  if (typeof item !== 'string' || item.length === 0 || item.length > MAX_FILTER_LENGTH) {
    throw bad(`must be a string of 1 to ${MAX_FILTER_LENGTH} characters`);
  }
  if (/[\s"()]/.test(item)) throw bad('must not hold spaces, quotes or parentheses');
  try {
    const node = parseQuery(`${kind}:${item}`);
    if (node.kind === 'site') return [node.host];
    if (node.kind === 'type') return node.types;
    if (node.kind === 'lang') return node.languages;
  } catch (err) {
    if (!(err instanceof QueryError)) throw err;
  }
  throw bad(kind === 'site' ? 'is not a host name' : kind === 'type' ? 'is not a MIME type (text/html) or a short type name (html, pdf, …)' : 'is not an ISO 639-1 language code (en, cs, de, …) or und');
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
