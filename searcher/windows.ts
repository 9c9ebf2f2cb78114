/**
 * Ranking a word, or an AND of words, without decoding every chain of its
 * common words (index-engine.ts rankVersion), when their columns are not in
 * the chain cache:
 *
 * 1. Each word's forms' card ids are marked in a bitmap from the chain heads
 *    alone (their refs skipped), the words' bitmaps ANDed: the query's
 *    cards, counted there (the total and the facets stay exact).
 * 2. A word: its cards are ranked window by window of card ids, each
 *    window bounded by the highest score × static factor of the word's
 *    blocks in it (skips.ts; the static weight folded in card by card,
 *    since it orders the top of a common word whose best scores are within
 *    a percent of each other) plus its accent bonus; the windows are
 *    evaluated from the highest bound down, each by an Evaluation
 *    restricted to it (evaluate.ts CardWindow) that scores its cards as the
 *    whole query's would, until the top's floor is above the next bound.
 * 3. An AND: one Evaluation restricted to the cards with every word, whose
 *    other chains' refs are never decoded; its Matcher bounds and prunes
 *    them card by card as for the whole query (a window's bound, each
 *    word's highest apart, would be far above any card's).
 *
 * A word's skip table comes from its first walk whole, a several-form
 * word's bounds from its first merge; until the query's words have them,
 * when every form is cached or would be (its columns are read faster than
 * its bytes), or when the query is small, rankVersion evaluates it whole.
 * Phrases are left to the whole evaluation: their words are the hot ones
 * whose refs the cache holds written out, and reading them from the bytes
 * for a phrase's candidates made their tail longer (docs/benchmarks.md).
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import type { LexiconEntry } from '../common/index/lexicon.js';
import type { ChainDecoder } from '../common/index/refs.js';
import { hasAccents } from '../common/words.js';
import { Evaluation, MAX_CHAINS, formsKey, type Matcher } from './evaluate.js';
import { bitCount } from './form-merge.js';
import type { IndexVersion } from './index-version.js';
import type { QueryNode, TermNode } from './query.js';
import { ACCENT_BONUS, FORM, idf, staticFactor } from './rank.js';
import type { BoundTable, SkipTable } from './skips.js';

/** Cards a window: 2^12, some 250 windows at a million cards. */
export const WINDOW_BITS = 12;
/** Chains in all below which the whole query is evaluated: as quick, and its words are walked whole once. */
export const MIN_WINDOW_CHAINS = 65_536;
/** Bounds are sums in another order than the scores': a hair of room. */
const BOUND_ROOM = 1 + 1e-9;

type WordNode = Extract<TermNode, { kind: 'word' }>;

/** One word of the query: its forms, and what bounds its scores. */
interface Term {
  node: WordNode;
  forms: Array<{ entry: LexiconEntry; skips: SkipTable }>;
  /** Its forms key when it is a word of several forms (or of one that is not the word itself), scored from merged inputs. */
  key: string | undefined;
  /** The merged scores' bounds, or the one form's bounds of its score ÷ IDF. */
  bounds: BoundTable;
}

/** What rankVersion gives the windows: which cards its filters drop, counting, and scoring matches into its top. */
export interface WindowRanker {
  filtered(cardId: number): boolean;
  count(cardId: number): void;
  /** Scores matches into the top, without counting them (the bitmaps did). */
  score(matches: Matcher, count: false): number;
  /** The top's floor: −∞ until it is full. */
  floor(): number;
}

/** The query's words, or undefined when it is not a word or an AND of words. */
function wordsOf(query: QueryNode): WordNode[] | undefined {
  const plain = (node: QueryNode): node is WordNode => node.kind === 'word' && !node.prefix && node.field === undefined;
  if (plain(query)) return [query];
  return query.kind === 'and' && query.children.every(plain) ? (query.children as WordNode[]) : undefined;
}

/**
 * Ranks `query` into `ranker` and counts its cards; false when it does not
 * (its shape, a word without bounds, cached or small), for the whole
 * evaluation to do.
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
): Promise<boolean> {
  const words = wordsOf(query);
  if (words === undefined) return false;
  const cardCount = version.cardCount;
  const terms: Term[] = [];
  const planned = new Map<number, SkipTable>();
  let chains = 0;
  let cached = true;
  for (const node of words) {
    const { entries, kinds } = evaluation.entries(node, 0);
    const forms: Term['forms'] = [];
    for (const entry of entries) {
      const skips = version.skips(entry);
      if (skips === undefined) return false;
      forms.push({ entry, skips });
      planned.set(entry.id, skips);
      chains += skips.count;
      if (!version.cachesChains(entry, skips.count)) cached = false;
    }
    if (forms.length === 0) return false;
    const key = entries.length === 1 && kinds[0] === FORM.word ? undefined : formsKey(node, node.word.exact, languages);
    const bounds = key === undefined ? forms[0]!.skips : version.mergedBounds(key);
    if (bounds === undefined) return false;
    terms.push({ node, forms, key, bounds });
  }
  if (cached || chains < minChains || chains > MAX_CHAINS || cardCount <= 2 << bits) return false;
  for (const { key } of terms) if (key !== undefined) version.askMerged(key);

  // 1. The cards: each word's bitmap, ANDed; a several-form word's union counted for its IDF.
  const bitmapWords = Math.ceil(cardCount / 32);
  const matched = new Uint32Array(bitmapWords).fill(~0);
  const marked = new Uint32Array(bitmapWords);
  const decoders = new Map<number, ChainDecoder>();
  const unions = new Map<string, number>();
  for (const { forms, key } of terms) {
    marked.fill(0);
    for (const { entry } of forms) {
      let decoder = decoders.get(entry.id);
      if (decoder === undefined) decoders.set(entry.id, (decoder = version.decoder(entry)));
      decoder.markCards(marked);
      signal.throwIfAborted();
    }
    if (key !== undefined) {
      let union = 0;
      for (let w = 0; w < bitmapWords; w++) union += bitCount(marked[w]!);
      unions.set(key, union);
    }
    for (let w = 0; w < bitmapWords; w++) matched[w]! &= marked[w]!;
    await nextTurn();
    signal.throwIfAborted();
  }
  const windows = Math.ceil(cardCount / 2 ** bits);
  const held = new Uint8Array(windows);
  for (let w = 0; w < bitmapWords; w++) {
    for (let v = matched[w]!; v !== 0; v &= v - 1) {
      const cardId = 32 * w + 31 - Math.clz32(v & -v);
      if (ranker.filtered(cardId)) continue;
      held[cardId >>> bits] = 1;
      ranker.count(cardId);
    }
  }

  const restricted = (low: number, high: number, only?: Uint32Array): Evaluation => {
    const postings = (entry: LexiconEntry) => {
      const skips = planned.get(entry.id);
      const decoder = decoders.get(entry.id);
      if (skips === undefined || decoder === undefined) throw new Error(`windows: entry ${entry.id} was not planned`);
      return version.windowPostings(entry, decoder, skips, low, high, only);
    };
    return new Evaluation(version, signal, languages, MAX_CHAINS, { postings, union: (key) => unions.get(key) });
  };
  if (terms.length > 1) {
    ranker.score(await restricted(0, cardCount, matched).matcher(query), false);
    return true;
  }

  // 2. Each window's bound: (the word's score + its accent bonus + 1) × the static factor, the score's with each card's folded in.
  const { node, forms, key, bounds } = terms[0]!;
  const scale = key === undefined ? idf(forms[0]!.skips.count, cardCount) : 1;
  const sums = new Float64Array(windows);
  const { first, last, highest } = bounds;
  for (let b = 0; b < highest.length; b++) {
    const value = scale * highest[b]!;
    for (let w = first[b]! >>> bits; w <= last[b]! >>> bits; w++) if (value > sums[w]!) sums[w] = value;
  }
  const bonus = hasAccents(node.word) ? ACCENT_BONUS : 0;
  const weights = version.windowWeights(bits);
  const order: number[] = [];
  for (let w = 0; w < windows; w++) {
    if (held[w] === 0) continue;
    sums[w] = (sums[w]! + (bonus + 1) * staticFactor(weights[w]!)) * BOUND_ROOM;
    order.push(w);
  }
  order.sort((a, b) => sums[b]! - sums[a]! || a - b);
  for (const w of order) {
    if (sums[w]! < ranker.floor()) break;
    const low = w << bits;
    ranker.score(await restricted(low, Math.min(cardCount, low + 2 ** bits)).matcher(query), false);
  }
  return true;
}
