/**
 * The completions of what is typed, in one index version's Suggestions
 * (common/index/suggestions.ts; docs/search.md "Suggestions"):
 *
 * - word: the last word, when the cursor ends one, completed from the
 *   vocabulary by its plain form (so "bru" finds "brûlée"), the words
 *   before it kept as typed; not inside a filter (`site:exa`) nor after a
 *   character that ends a word (`"a b"`, `foo-`). Words ranked by the cards
 *   holding them; words of one card come only when nothing in more cards
 *   starts so.
 * - title: the whole query, when it is words only (no filter, quote,
 *   parenthesis, exclusion or operator), as the start of a title's words,
 *   accent-free; after a trailing space only titles with more words.
 *   A title whose heaviest card a takedown hides is never given.
 *
 * Titles come first, up to half the limit (all of it when the words are
 * fewer), then words; a text given once.
 */

import { rankCards, type Suggestions } from '../common/index/suggestions.js';
import { words } from '../common/words.js';
import type { Completion, SuggestRequest } from './engine.js';

/** Tokens that make the query more than words: a filter or `=word` (:, =), a phrase, a group, an exclusion or operator. */
const SYNTAX = /[:"()=*]|^[-+]|^(OR|NEAR(\/\d*)?)$/;

/** What of the text typed can be completed. */
export interface Typed {
  /** The text before the last word, as typed; the last word's plain form. */
  word?: { before: string; plain: string };
  /** The start of a title's key (plain forms joined by a space, a trailing space kept). */
  title?: string;
}

export function typedParts(q: string): Typed {
  const out: Typed = {};
  const ended = /\s$/u.test(q);
  const tokens = q.trim().split(/\s+/u).filter((token) => token !== '');
  if (tokens.length === 0) return out;
  const all = [...words(q)];
  const last = all.at(-1);
  if (!ended && last !== undefined && last.end === q.length && !tokens.at(-1)!.includes(':')) out.word = { before: q.slice(0, last.start), plain: last.plain };
  if (all.length > 0 && !tokens.some((token) => SYNTAX.test(token))) out.title = all.map((word) => word.plain).join(' ') + (ended ? ' ' : '');
  return out;
}

/**
 * Up to `limit` completions of `q`; `hidden` says whether a card is taken
 * down (searcher/takedowns.ts).
 */
export function completions(suggestions: Suggestions, { q, limit }: SuggestRequest, hidden: (card: number) => boolean): Completion[] {
  const typed = typedParts(q);
  const { words: vocabulary, titles } = suggestions;
  let wordHits: Completion[] = [];
  if (typed.word !== undefined) {
    const { before, plain } = typed.word;
    const [from, to] = vocabulary.range(plain);
    let found = vocabulary.top(from, to, limit, (n) => rankCards(vocabulary.ranks[n]!) > 1);
    if (found.length === 0) found = vocabulary.top(from, to, limit);
    wordHits = found.map((n) => ({ text: before + vocabulary.text(n), kind: 'word' }));
  }
  let titleHits: Completion[] = [];
  if (typed.title !== undefined) {
    const [from, to] = titles.range(typed.title);
    titleHits = titles.top(from, to, limit, (n) => !hidden(titles.card(n))).map((n) => ({ text: titles.text(n), kind: 'title' }));
  }
  const out: Completion[] = [];
  const seen = new Set<string>();
  const add = (list: Completion[], upTo: number): void => {
    for (const item of list) {
      if (out.length >= upTo) return;
      if (seen.has(item.text)) continue;
      seen.add(item.text);
      out.push(item);
    }
  };
  add(titleHits, Math.max(Math.ceil(limit / 2), limit - wordHits.length));
  add(wordHits, limit);
  add(titleHits, limit);
  return out;
}
