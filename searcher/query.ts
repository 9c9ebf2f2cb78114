/**
 * The query language (DESIGN §7, issue 7; after the original's, sherlock-
 * original §5, in the spelling web users know):
 *
 *   word            cards containing the word, its other forms and accent
 *                   variants ("cafe" finds "café", "bridges" finds
 *                   "bridge"; the word as typed ranks first)
 *   =word           only the word as typed: no accent variants, no other
 *                   forms ("=café" does not find "cafe"); `="a b"` for a
 *                   phrase of such words
 *   word*           any word starting so (at least MIN_PREFIX characters),
 *                   expanded through the lexicon when evaluated
 *   "a phrase"      the words next to each other, in order
 *   -x              cards without x (a word, phrase, group or filter)
 *   a OR b          either; binds looser than the implicit AND of neighbours
 *   ( … )           grouping
 *   a NEAR/n b      a and b at most n words apart, either order (NEAR alone: 10)
 *   title:x         x (a word, prefix or phrase) in the title
 *   url:x           x among the words of the URL
 *   site:host       cards on that host or below it (site:example.org takes
 *                   www.example.org too)
 *   type:t          cards of that type: a MIME type (text/html) or a short
 *                   name (html, text, pdf, …)
 *   lang:xx         cards in that language, an ISO 639-1 code (en, cs, de,
 *                   …; "und" for pages whose language was not told)
 *   after:date      cards dated on or after the date (Last-Modified, else
 *   before:date     the fetch), before it: YYYY, YYYY-MM or YYYY-MM-DD,
 *                   in UTC; a card of unknown date is in neither
 *
 * OR and NEAR are operators only in capitals; "or" is a word. A term that
 * cuts into several words ("e-mail", "node.js", CJK text) is a phrase of
 * them, as common/words.ts cuts the indexed text the same way.
 *
 * Bounds, so that no query makes the server work without end: at most
 * MAX_QUERY_LENGTH characters, MAX_TERMS words, MAX_DEPTH nested groups;
 * NEAR distance 1–MAX_NEAR; a query must match something by itself (a
 * query of exclusions only is refused). The evaluator bounds prefix
 * expansions and work per query.
 *
 * Errors are QueryError with a stable code and the offset in the query
 * (UTF-16 code units) where the problem is; the WebSocket API passes both
 * on (docs/api.md).
 */

import { IMAGE_TYPES, OFFICE_TYPES } from '../common/index/cardinfo.js';
import { isLanguage } from '../common/language/codes.js';
import { words, type Word } from '../common/words.js';

export const MAX_QUERY_LENGTH = 1024;
export const MAX_TERMS = 32;
export const MAX_DEPTH = 8;
export const MAX_NEAR = 100;
export const DEFAULT_NEAR = 10;
export const MIN_PREFIX = 3;

export type QueryErrorCode = 'too_long' | 'too_many_terms' | 'too_deep' | 'syntax' | 'empty' | 'only_excluded' | 'bad_filter';

export class QueryError extends Error {
  constructor(
    readonly code: QueryErrorCode,
    message: string,
    /** Offset in the query where the problem is. */
    readonly position: number,
  ) {
    super(`${message} (at character ${position + 1})`);
    this.name = 'QueryError';
  }
}

export type Field = 'title' | 'url';

/** One word as the index looks it up. */
export interface QueryWord {
  exact: string;
  plain: string;
}

/**
 * A parsed query. Synonyms (synonyms.ts) add to a word the one-word
 * synonyms it also finds (`synonyms`), and put a several-word synonym
 * beside what it stands for as a phrase marked `synonym`.
 */
export type QueryNode =
  | { kind: 'word'; word: QueryWord; prefix: boolean; field?: Field; exact?: true; synonyms?: QueryWord[]; synonym?: true; start: number; end: number }
  | { kind: 'phrase'; words: QueryWord[]; field?: Field; exact?: true; synonym?: true; start: number; end: number }
  | { kind: 'near'; left: TermNode; right: TermNode; distance: number }
  | { kind: 'site'; host: string; start: number; end: number }
  | { kind: 'type'; types: string[]; start: number; end: number }
  | { kind: 'lang'; languages: string[]; start: number; end: number }
  /** Dates from `from` up to (not including) `to`, Unix seconds. */
  | { kind: 'date'; from: number; to: number; start: number; end: number }
  | { kind: 'and'; children: QueryNode[] }
  | { kind: 'or'; children: QueryNode[] }
  | { kind: 'not'; child: QueryNode };

export type TermNode = Extract<QueryNode, { kind: 'word' | 'phrase' }>;

/** Short names for type:, as a user types them. */
const TYPE_NAMES: Record<string, string[]> = {
  html: ['text/html', 'application/xhtml+xml'],
  text: ['text/plain', 'text/csv', 'text/tab-separated-values'],
  txt: ['text/plain'],
  csv: ['text/csv'],
  pdf: ['application/pdf'],
  xml: ['application/xml', 'text/xml'],
  feed: ['application/rss+xml', 'application/atom+xml', 'application/rdf+xml'],
  office: [...OFFICE_TYPES],
  image: [...new Set(IMAGE_TYPES.values())],
};
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

// ------------------------------------------------------------------- tokens

type Token =
  | { t: 'text'; text: string; start: number; end: number; field?: string; exact?: true }
  | { t: 'phrase'; text: string; start: number; end: number; field?: string; exact?: true }
  | { t: 'or' | 'open' | 'close' | 'minus'; start: number; end: number }
  | { t: 'near'; distance: number; start: number; end: number };

const SPACE = /\s/u;
const FIELDS = new Set(['title', 'url', 'site', 'type', 'lang', 'after', 'before']);

function tokenize(q: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i]!;
    if (SPACE.test(c)) {
      i++;
      continue;
    }
    if (c === '(' || c === ')') {
      out.push({ t: c === '(' ? 'open' : 'close', start: i, end: i + 1 });
      i++;
      continue;
    }
    if (c === '-' && i + 1 < q.length && !SPACE.test(q[i + 1]!) && (i === 0 || SPACE.test(q[i - 1]!) || q[i - 1] === '(')) {
      out.push({ t: 'minus', start: i, end: i + 1 });
      i++;
      continue;
    }
    if (c === '"') {
      out.push(quoted(q, i));
      i = out[out.length - 1]!.end;
      continue;
    }
    if (c === '=' && i + 1 < q.length && q[i + 1] === '"') {
      out.push({ ...quoted(q, i + 1), start: i, exact: true });
      i = out[out.length - 1]!.end;
      continue;
    }
    let end = i;
    while (end < q.length && !SPACE.test(q[end]!) && q[end] !== '(' && q[end] !== ')' && q[end] !== '"') end++;
    const text = q.slice(i, end);
    const colon = text.indexOf(':');
    const field = colon > 0 ? text.slice(0, colon) : undefined;
    if (field !== undefined && FIELDS.has(field)) {
      if (colon + 1 === text.length) {
        if (q[end] !== '"') throw new QueryError('syntax', `${field}: needs a value right after the colon`, end);
        const phrase = quoted(q, end);
        out.push({ ...phrase, start: i, field });
        i = phrase.end;
        continue;
      }
      const value = text.slice(colon + 1);
      out.push(value.startsWith('=') && value.length > 1 ? { t: 'text', text: value.slice(1), start: i, end, field, exact: true } : { t: 'text', text: value, start: i, end, field });
    } else if (text === 'OR') {
      out.push({ t: 'or', start: i, end });
    } else if (text === 'NEAR' || text.startsWith('NEAR/')) {
      out.push({ t: 'near', distance: nearDistance(text, i), start: i, end });
    } else if (text.startsWith('=') && text.length > 1) {
      out.push({ t: 'text', text: text.slice(1), start: i, end, exact: true });
    } else {
      out.push({ t: 'text', text, start: i, end });
    }
    i = end;
  }
  return out;
}

function quoted(q: string, at: number): Extract<Token, { t: 'phrase' }> {
  const close = q.indexOf('"', at + 1);
  if (close < 0) throw new QueryError('syntax', 'a quotation mark is not closed', at);
  return { t: 'phrase', text: q.slice(at + 1, close), start: at, end: close + 1 };
}

function nearDistance(text: string, at: number): number {
  if (text === 'NEAR') return DEFAULT_NEAR;
  const n = text.slice(5);
  if (!/^\d{1,3}$/.test(n) || Number(n) < 1 || Number(n) > MAX_NEAR) {
    throw new QueryError('syntax', `NEAR/n takes a distance from 1 to ${MAX_NEAR}, not ${JSON.stringify(n)}`, at);
  }
  return Number(n);
}

// ------------------------------------------------------------------- parser

class Parser {
  private i = 0;
  private terms = 0;

  constructor(
    private readonly q: string,
    private readonly tokens: Token[],
  ) {}

  parse(): QueryNode {
    if (this.tokens.length === 0) throw new QueryError('empty', 'the query has no words', 0);
    const node = this.or(0);
    const extra = this.tokens[this.i];
    if (extra !== undefined) throw new QueryError('syntax', extra.t === 'close' ? 'a closing parenthesis has no opening one' : 'unexpected text', extra.start);
    return node;
  }

  private peek(): Token | undefined {
    return this.tokens[this.i];
  }

  private or(depth: number): QueryNode {
    const children = [this.and(depth)];
    while (this.peek()?.t === 'or') {
      const op = this.tokens[this.i++]!;
      if (this.startsOperand() === false) throw new QueryError('syntax', 'OR needs something on both sides', op.start);
      children.push(this.and(depth));
    }
    return children.length === 1 ? children[0]! : { kind: 'or', children };
  }

  private startsOperand(): boolean {
    const next = this.peek();
    return next !== undefined && (next.t === 'text' || next.t === 'phrase' || next.t === 'open' || next.t === 'minus');
  }

  private and(depth: number): QueryNode {
    const children: QueryNode[] = [];
    while (this.startsOperand()) children.push(this.unary(depth));
    if (children.length === 0) {
      const at = this.peek();
      throw new QueryError('syntax', at === undefined ? 'the query ends where a word was expected' : `${describe(at)} where a word was expected`, at?.start ?? this.q.length);
    }
    return children.length === 1 ? children[0]! : { kind: 'and', children };
  }

  private unary(depth: number): QueryNode {
    const token = this.peek()!;
    if (token.t === 'minus') {
      this.i++;
      if (!this.startsOperand() || this.peek()!.t === 'minus') throw new QueryError('syntax', 'a minus needs a word, phrase or group right after it', token.start);
      return { kind: 'not', child: this.near(depth) };
    }
    return this.near(depth);
  }

  /** A primary, or two terms joined by NEAR (chains: a NEAR b NEAR c = both pairs). */
  private near(depth: number): QueryNode {
    const first = this.primary(depth);
    if (this.peek()?.t !== 'near') return first;
    const pairs: QueryNode[] = [];
    let left = first;
    while (this.peek()?.t === 'near') {
      const op = this.tokens[this.i++] as Extract<Token, { t: 'near' }>;
      const right = this.startsOperand() && this.peek()!.t !== 'minus' ? this.primary(depth) : undefined;
      if (!isTerm(left) || right === undefined || !isTerm(right)) {
        throw new QueryError('syntax', 'NEAR joins two words or phrases', op.start);
      }
      pairs.push({ kind: 'near', left, right, distance: op.distance });
      left = right;
    }
    return pairs.length === 1 ? pairs[0]! : { kind: 'and', children: pairs };
  }

  private primary(depth: number): QueryNode {
    const token = this.tokens[this.i++]!;
    if (token.t === 'open') {
      if (depth + 1 > MAX_DEPTH) throw new QueryError('too_deep', `groups nest at most ${MAX_DEPTH} deep`, token.start);
      if (this.peek()?.t === 'close') throw new QueryError('syntax', 'empty parentheses', token.start);
      const inner = this.or(depth + 1);
      if (this.peek()?.t !== 'close') throw new QueryError('syntax', 'a parenthesis is not closed', token.start);
      this.i++;
      return inner;
    }
    if (token.t !== 'text' && token.t !== 'phrase') throw new QueryError('syntax', `${describe(token)} where a word was expected`, token.start);
    if (token.field === 'site') return this.site(token);
    if (token.field === 'type') return this.type(token);
    if (token.field === 'lang') return this.lang(token);
    if (token.field === 'after' || token.field === 'before') return this.date(token, token.field);
    const field = token.field as Field | undefined;
    return token.t === 'phrase' ? this.phrase(token, field) : this.term(token, field);
  }

  private term(token: Extract<Token, { t: 'text' }>, field: Field | undefined): QueryNode {
    const prefix = token.text.endsWith('*');
    if (prefix && token.exact === true) throw new QueryError('syntax', 'a word is either =exact or a prefix*, not both', token.start);
    const text = prefix ? token.text.slice(0, -1) : token.text;
    const found = [...words(text)];
    if (found.length === 0) {
      throw new QueryError('syntax', prefix && text === '' ? 'a * needs a word before it' : `${JSON.stringify(token.text)} has no letters or digits to search for`, token.start);
    }
    if (prefix) {
      if (found.length !== 1 || found[0]!.kind !== 'word') throw new QueryError('syntax', 'a * goes at the end of one word', token.end - 1);
      if ([...found[0]!.plain].length < MIN_PREFIX) throw new QueryError('syntax', `a prefix needs at least ${MIN_PREFIX} letters before the *`, token.start);
    }
    this.count(found.length, token.start);
    const span = { start: token.start, end: token.end, ...(field === undefined ? {} : { field }), ...(token.exact === true ? { exact: true as const } : {}) };
    if (found.length === 1) return { kind: 'word', word: queryWord(found[0]!), prefix, ...span };
    return { kind: 'phrase', words: found.map(queryWord), ...span };
  }

  private phrase(token: Extract<Token, { t: 'phrase' }>, field: Field | undefined): QueryNode {
    const found = [...words(token.text)];
    if (found.length === 0) throw new QueryError('syntax', 'the quotation holds no words', token.start);
    this.count(found.length, token.start);
    const span = { start: token.start, end: token.end, ...(field === undefined ? {} : { field }), ...(token.exact === true ? { exact: true as const } : {}) };
    if (found.length === 1) return { kind: 'word', word: queryWord(found[0]!), prefix: false, ...span };
    return { kind: 'phrase', words: found.map(queryWord), ...span };
  }

  private site(token: Extract<Token, { t: 'text' | 'phrase' }>): QueryNode {
    let host: string;
    try {
      host = new URL(`http://${token.text}/`).hostname;
    } catch {
      host = '';
    }
    if (token.text === '' || host === '' || /[/?#@]/.test(token.text)) throw new QueryError('bad_filter', `site: takes a host name, not ${JSON.stringify(token.text)}`, token.start);
    return { kind: 'site', host: host.startsWith('www.') ? host.slice(4) : host, start: token.start, end: token.end };
  }

  private type(token: Extract<Token, { t: 'text' | 'phrase' }>): QueryNode {
    const value = token.text.toLowerCase();
    const types = TYPE_NAMES[value] ?? (MIME.test(value) ? [value] : undefined);
    if (types === undefined) {
      throw new QueryError('bad_filter', `type: takes a MIME type or one of ${Object.keys(TYPE_NAMES).join(', ')}, not ${JSON.stringify(token.text)}`, token.start);
    }
    return { kind: 'type', types, start: token.start, end: token.end };
  }

  private lang(token: Extract<Token, { t: 'text' | 'phrase' }>): QueryNode {
    const value = token.text.toLowerCase();
    if (value !== 'und' && !isLanguage(value)) {
      throw new QueryError('bad_filter', `lang: takes an ISO 639-1 language code (en, cs, de, …) or und, not ${JSON.stringify(token.text.slice(0, 40))}`, token.start);
    }
    return { kind: 'lang', languages: [value], start: token.start, end: token.end };
  }

  private date(token: Extract<Token, { t: 'text' | 'phrase' }>, bound: 'after' | 'before'): QueryNode {
    const seconds = dateSeconds(token.text);
    if (seconds === undefined) throw new QueryError('bad_filter', `${bound}: takes a date as YYYY, YYYY-MM or YYYY-MM-DD, not ${JSON.stringify(token.text.slice(0, 40))}`, token.start);
    return bound === 'after' ? { kind: 'date', from: seconds, to: LAST_DATE, start: token.start, end: token.end } : { kind: 'date', from: 1, to: seconds, start: token.start, end: token.end };
  }

  private count(n: number, at: number): void {
    this.terms += n;
    if (this.terms > MAX_TERMS) throw new QueryError('too_many_terms', `a query has at most ${MAX_TERMS} words`, at);
  }
}

/** Past every date CardInfo can hold (u32 seconds). */
export const LAST_DATE = 2 ** 32;

/** The first second (UTC) of a day, month or year written YYYY[-MM[-DD]], or undefined when it is no such date (or before 1970). */
export function dateSeconds(text: string): number | undefined {
  const match = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/.exec(text);
  if (match === null) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2] ?? 1), Number(match[3] ?? 1)];
  const ms = Date.UTC(year, month - 1, day);
  const back = new Date(ms);
  // Date.UTC rolls 2024-02-30 over into March: such a date is refused.
  if (back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day || ms < 0) return undefined;
  return Math.min(ms / 1000, LAST_DATE);
}

function isTerm(node: QueryNode): node is TermNode {
  return node.kind === 'word' || node.kind === 'phrase';
}

function queryWord(w: Word): QueryWord {
  return { exact: w.exact, plain: w.plain };
}

function describe(token: Token): string {
  switch (token.t) {
    case 'or':
      return 'OR';
    case 'near':
      return 'NEAR';
    case 'close':
      return 'a closing parenthesis';
    case 'open':
      return 'an opening parenthesis';
    case 'minus':
      return 'a minus';
    default:
      return JSON.stringify(token.text);
  }
}

/** Whether a node can match cards by itself (not only exclude or filter them). */
function positive(node: QueryNode): boolean {
  switch (node.kind) {
    case 'not':
      return false;
    case 'and':
      return node.children.some(positive);
    case 'or':
      return node.children.every(positive);
    default:
      return true;
  }
}

/** Parses a query; a QueryError names what is wrong and where. */
export function parseQuery(q: string): QueryNode {
  if (q.length > MAX_QUERY_LENGTH) throw new QueryError('too_long', `a query has at most ${MAX_QUERY_LENGTH} characters`, MAX_QUERY_LENGTH);
  const node = new Parser(q, tokenize(q)).parse();
  if (!positive(node)) throw new QueryError('only_excluded', 'a query needs something to find, not only words to exclude', 0);
  return node;
}
