/**
 * Ranking (sherlock-original §5 "Ranking", docs/search.md): the weights of
 * occurrences by word and meta type, the bonuses for phrases, proximity and
 * accents, the static weight, and the top-k selection with site collapsing.
 *
 * A card's score for one query word is its best occurrence's weight plus the
 * second best's divided by SECOND_DIVISOR (a word said twice in the body
 * counts a little more than once, a hundred times not much more). Words
 * add up; a phrase or NEAR adds a bonus on top of its words, plain words
 * close together add a proximity bonus, and the static weight (CardInfo,
 * 0–255, from the link graph) counts once per matched term.
 */

import type { Ref } from '../common/index-refs.js';

/** By word type (doc-text.ts): text, emphasised, small, heading 1, heading 2, alt. */
const WORD_WEIGHTS = [10, 14, 5, 24, 18, 8] as const;
/** By meta type (doc-body.ts): title, keywords, description, URL words, file name, anchor text. */
const META_WEIGHTS = [40, 12, 14, 16, 16, 24] as const;
/** A meta's own weight (0–3) adds this much per step. */
const META_WEIGHT_STEP = 4;
export const SECOND_DIVISOR = 4;
/** Per pair of adjacent words of a phrase. */
export const PHRASE_BONUS = 20;
/** For NEAR at distance 1, falling to 0 at the limit. */
export const NEAR_BONUS = 20;
/** For two query words next to each other, falling to 0 at PROXIMITY_SPAN words apart. */
export const PROXIMITY_BONUS = 16;
export const PROXIMITY_SPAN = 8;
/** An accented query word found with the accents as typed. */
export const ACCENT_BONUS = 6;
/** Static weight 255 adds this much per matched term. */
const STATIC_SCALE = 10 / 255;
/** Results of one site on a page before the rest waits for later pages. */
export const SITE_MAX = 2;

/** Meta positions live above every word position, so the two never count as near. */
export const META_BASE = 1 << 20;

/** What an occurrence is worth. */
export function refWeight(ref: Ref): number {
  return ref.kind === 'word' ? (WORD_WEIGHTS[ref.type] ?? 0) : (META_WEIGHTS[ref.type] ?? 0) + ref.weight * META_WEIGHT_STEP;
}

/** Where an occurrence is, on one line of keys: word positions, then meta positions from META_BASE. */
export function refKey(ref: Ref): number {
  return ref.kind === 'word' ? ref.position : META_BASE + ref.position;
}

export function staticScore(weight: number, terms: number): number {
  return weight * STATIC_SCALE * terms;
}

/** The smallest distance between a key of `a` and one of `b` (both ascending); Infinity when either is empty. */
export function minGap(a: readonly number[], b: readonly number[]): number {
  let best = Infinity;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const d = a[i]! - b[j]!;
    best = Math.min(best, Math.abs(d));
    if (d < 0) i++;
    else j++;
  }
  return best;
}

/** The proximity bonus for two terms `gap` positions apart. */
export function proximity(gap: number): number {
  return gap >= PROXIMITY_SPAN ? 0 : (PROXIMITY_BONUS * (PROXIMITY_SPAN - gap)) / (PROXIMITY_SPAN - 1);
}

export interface Scored {
  cardId: number;
  score: number;
}

/** Better first: higher score, then lower card id (stable across runs). */
function better(a: Scored, b: Scored): boolean {
  return a.score > b.score || (a.score === b.score && a.cardId < b.cardId);
}

/** The best `k` of `items`, best first, through a min-heap of k. */
export function topK(items: Iterable<Scored>, k: number): Scored[] {
  const heap: Scored[] = [];
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < heap.length && better(heap[worst]!, heap[l]!)) worst = l;
      if (r < heap.length && better(heap[worst]!, heap[r]!)) worst = r;
      if (worst === i) return;
      [heap[i], heap[worst]] = [heap[worst]!, heap[i]!];
      i = worst;
    }
  };
  for (const item of items) {
    if (heap.length < k) {
      heap.push(item);
      for (let i = heap.length - 1; i > 0; ) {
        const parent = (i - 1) >> 1;
        if (!better(heap[parent]!, heap[i]!)) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
    } else if (k > 0 && better(item, heap[0]!)) {
      heap[0] = item;
      down(0);
    }
  }
  return heap.sort((a, b) => (better(a, b) ? -1 : 1));
}

/**
 * Site collapsing: ranked results (best first) into pages of `pageSize`
 * where one site has at most SITE_MAX results while other sites have some
 * left; the rest of a site's results move to later pages, and fill a page
 * only when nothing else is left (an index of one site still shows full pages).
 */
export function collapse<T>(ranked: readonly T[], site: (item: T) => number, pageSize: number): T[] {
  const order: T[] = [];
  let left = [...ranked];
  while (left.length > 0) {
    const onPage = new Map<number, number>();
    const page: T[] = [];
    const later: T[] = [];
    for (const item of left) {
      const n = onPage.get(site(item)) ?? 0;
      if (page.length < pageSize && n < SITE_MAX) {
        page.push(item);
        onPage.set(site(item), n + 1);
      } else later.push(item);
    }
    while (page.length < pageSize && later.length > 0) page.push(later.shift()!);
    order.push(...page);
    left = later;
  }
  return order;
}
