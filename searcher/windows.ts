/**
 * Ranking a word, a phrase or an AND of those window by window of card ids
 * (index-engine.ts rankVersion), so that a common word's chains are
 * decoded only where a card can still reach the top:
 *
 * 1. Each term's forms' card ids are marked in a bitmap, from the chain
 *    heads alone; the query's cards are the bitmaps ANDed (for a phrase,
 *    the cards with all its words: its candidates). A word's or an AND's
 *    are all matches, and are counted there (total and facets stay
 *    exact); a phrase's are counted as they are verified.
 * 2. Each window's bound: per term, its IDF × the sum over its forms of
 *    their highest score in the window's blocks (skips.ts; a word of
 *    several forms by the forms' mergeable scores, which add up to a
 *    bound of their merge), plus the largest bonuses the query's shape can
 *    add (accents, phrase, proximity, title: what evaluate.ts's Matchers
 *    put in their bounds), with the window's highest static weight.
 * 3. The windows with cards are evaluated from the highest bound down, each
 *    by an Evaluation restricted to it (evaluate.ts CardWindow), which
 *    scores its cards exactly as the whole query's would, until the next
 *    bound is below the top's floor.
 *
 * A word's skip table comes from its first walk whole; until every form
 * of the query has one, or when the query is small, rankVersion evaluates
 * it whole.
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import type { LexiconEntry } from '../common/index/lexicon.js';
import type { ChainDecoder } from '../common/index/refs.js';
import { hasAccents } from '../common/words.js';
import { Evaluation, MAX_CHAINS, formsKey, type Matcher } from './evaluate.js';
import { bitCount } from './form-merge.js';
import type { IndexVersion } from './index-version.js';
import type { QueryNode, TermNode } from './query.js';
import { ACCENT_BONUS, FORM, PHRASE_BONUS, TITLE_BONUS, idf, proximity, withStatic } from './rank.js';
import type { SkipTable } from './skips.js';

/** Cards a window: 2^12, some 250 windows at a million cards. */
export const WINDOW_BITS = 12;
/** Chains in all below which the whole query is evaluated: as quick, and its words are walked whole once. */
export const MIN_WINDOW_CHAINS = 65_536;
/** Bounds are sums in another order than the scores': a hair of room. */
const BOUND_ROOM = 1 + 1e-9;

/** One word of the query (a phrase has several) and what marks its cards. */
interface Term {
  node: TermNode;
  at: number;
  forms: Array<{ entry: LexiconEntry; skips: SkipTable }>;
  /** A word of several forms (or of one that is not the word itself) is scored from merged inputs. */
  merged: boolean;
  idf: number;
}

/** What rankVersion gives the windows: which cards its filters drop, counting, and scoring a window's matches into its top. */
export interface WindowRanker {
  filtered(cardId: number): boolean;
  count(cardId: number): void;
  /** Scores a window's matches into the top, counting them when `count`; returns the cards it skipped. */
  score(matches: Matcher, count: boolean): number;
  /** The top's floor: −∞ until it is full. */
  floor(): number;
}

/** The query's terms in order, or undefined when its shape is not one the windows rank. */
function termsOf(query: QueryNode): Array<{ node: TermNode; at: number }> | undefined {
  if (query.kind === 'word') return query.prefix || query.field !== undefined ? undefined : [{ node: query, at: 0 }];
  if (query.kind === 'phrase') return query.field !== undefined ? undefined : query.words.map((_, at) => ({ node: query, at }));
  if (query.kind !== 'and') return undefined;
  const terms: Array<{ node: TermNode; at: number }> = [];
  for (const child of query.children) {
    if (child.kind !== 'word' && child.kind !== 'phrase') return undefined;
    const own = termsOf(child);
    if (own === undefined) return undefined;
    terms.push(...own);
  }
  return terms;
}

/** The most a query's bonuses add to a card's score: its Matcher's bound less the words' scores. */
function bonusOf(query: QueryNode): number {
  if (query.kind === 'word') return hasAccents(query.word) ? ACCENT_BONUS : 0;
  if (query.kind === 'phrase') return PHRASE_BONUS * (query.words.length - 1) + (query.words.some(hasAccents) ? ACCENT_BONUS : 0);
  if (query.kind !== 'and') return 0;
  const n = query.children.length;
  return query.children.reduce((sum, child) => sum + bonusOf(child), 0) + (n > 1 ? (n - 1) * proximity(0) + TITLE_BONUS : 0);
}

/**
 * Ranks `query` window by window into `ranker`; undefined when it cannot
 * (its shape, a form without a skip table, too few chains), for the whole
 * evaluation to do. `lower`: a phrase's total counts only the windows
 * evaluated.
 */
export async function rankByWindows(
  version: IndexVersion,
  query: QueryNode,
  evaluation: Evaluation,
  ranker: WindowRanker,
  signal: AbortSignal,
  languages: readonly number[] | undefined,
  bits = WINDOW_BITS,
  minChains = MIN_WINDOW_CHAINS,
): Promise<{ lower: boolean } | undefined> {
  const shape = termsOf(query);
  if (shape === undefined) return undefined;
  const cardCount = version.cardCount;
  const terms: Term[] = [];
  const planned = new Map<number, SkipTable>();
  let chains = 0;
  for (const { node, at } of shape) {
    const { entries, kinds } = evaluation.entries(node, at);
    const forms: Term['forms'] = [];
    for (const entry of entries) {
      const skips = version.skips(entry);
      if (skips === undefined) return undefined;
      forms.push({ entry, skips });
      planned.set(entry.id, skips);
      chains += skips.count;
    }
    terms.push({ node, at, forms, merged: !(entries.length === 1 && kinds[0] === FORM.word), idf: 0 });
  }
  if (chains < minChains || chains > MAX_CHAINS || cardCount <= 2 << bits) return undefined;

  // 1. The cards: each term's bitmap, ANDed.
  const words = Math.ceil(cardCount / 32);
  const matched = new Uint32Array(words).fill(~0);
  const term = new Uint32Array(words);
  const decoders = new Map<number, ChainDecoder>();
  const unions = new Map<string, number>();
  for (const t of terms) {
    term.fill(0);
    for (const { entry } of t.forms) {
      let decoder = decoders.get(entry.id);
      if (decoder === undefined) decoders.set(entry.id, (decoder = version.decoder(entry)));
      decoder.markCards(0, decoder.bytes, term);
      signal.throwIfAborted();
      await nextTurn();
    }
    let df = Math.max(...t.forms.map((form) => form.skips.count));
    if (t.merged) {
      let union = 0;
      for (let w = 0; w < words; w++) union += bitCount(term[w]!);
      df = Math.max(df, union);
      const exact = t.node.kind === 'word' ? t.node.word.exact : t.node.words[t.at]!.exact;
      unions.set(formsKey(t.node, exact, languages), union);
    }
    t.idf = idf(df, cardCount);
    for (let w = 0; w < words; w++) matched[w]! &= term[w]!;
  }
  const certain = !(query.kind === 'phrase' || (query.kind === 'and' && query.children.some((child) => child.kind === 'phrase')));
  const windows = Math.ceil(cardCount / 2 ** bits);
  const held = new Uint8Array(windows);
  for (let w = 0; w < words; w++) {
    for (let v = matched[w]!; v !== 0; v &= v - 1) {
      const cardId = 32 * w + 31 - Math.clz32(v & -v);
      if (ranker.filtered(cardId)) continue;
      held[cardId >>> bits] = 1;
      if (certain) ranker.count(cardId);
    }
  }

  // 2. Each window's bound.
  const sums = new Float64Array(windows);
  const form = new Float64Array(windows);
  for (const t of terms) {
    for (const { skips } of t.forms) {
      form.fill(0);
      const highest = t.merged ? skips.mergeable : skips.alone;
      for (let b = 0; b < highest.length; b++) {
        for (let w = skips.first[b]! >>> bits; w <= skips.last[b]! >>> bits; w++) if (highest[b]! > form[w]!) form[w] = highest[b]!;
      }
      for (let w = 0; w < windows; w++) sums[w]! += t.idf * form[w]!;
    }
  }
  const bonus = bonusOf(query);
  const weights = version.windowWeights(bits);
  const order: number[] = [];
  for (let w = 0; w < windows; w++) {
    if (held[w] === 0) continue;
    sums[w] = withStatic(sums[w]! + bonus, weights[w]!) * BOUND_ROOM;
    order.push(w);
  }
  order.sort((a, b) => sums[b]! - sums[a]! || a - b);

  // 3. The windows from the highest bound down.
  let evaluated = 0;
  let skipped = 0;
  for (const w of order) {
    if (sums[w]! < ranker.floor()) break;
    const low = w << bits;
    const high = Math.min(cardCount, low + 2 ** bits);
    const postings = (entry: LexiconEntry) => {
      const skips = planned.get(entry.id);
      const decoder = decoders.get(entry.id);
      if (skips === undefined || decoder === undefined) throw new Error(`windows: entry ${entry.id} was not planned`);
      return version.windowPostings(entry, decoder, skips, low, high);
    };
    const restricted = new Evaluation(version, signal, languages, MAX_CHAINS, { postings, union: (key) => unions.get(key) });
    skipped += ranker.score(await restricted.matcher(query), !certain);
    evaluated += 1;
  }
  return { lower: !certain && (skipped > 0 || evaluated < order.length) };
}
