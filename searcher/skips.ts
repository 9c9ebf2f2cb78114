/**
 * Bounds of a word's scores by blocks of its cards (windows.ts ranks by
 * them): for each block of SKIP_BLOCK cards, its first and last card and
 * the highest score × static factor (rank.ts staticFactor) of its cards,
 * the static weight folded in card by card since it orders the top of a
 * common word (its best scores are within a percent of each other).
 *
 * - A Lexicon entry's table (SkipTable) also says where each block's first
 *   chain head is in the word's bytes, so a range of cards is read without
 *   the rest, and bounds its score ÷ IDF (rank.ts inputScore). Made as the
 *   word's chains are walked whole (index-version.ts postingsOf).
 * - A several-form word's table bounds its merged scores themselves (IDF and
 *   form factors in), made when the merge is kept (IndexVersion#keepMerged).
 *
 * Kept beside the chain cache at about 0.1 byte a chain: a word walked
 * once is afterwards read only in the card ranges that can reach the top.
 */

import type { ChainDecoder } from '../common/index/refs.js';
import { CHECKPOINT, ChainRefs } from './card-refs.js';
import { chainInputs } from './rank.js';

/** Cards a block: a multiple of CHECKPOINT, whose heads postingsOf keeps already. */
export const SKIP_BLOCK = 16 * CHECKPOINT;

export interface BoundTable {
  /** The cards bounded. */
  count: number;
  first: Uint32Array;
  last: Uint32Array;
  /** Each block's highest score × static factor. */
  highest: Float32Array;
}

export interface SkipTable extends BoundTable {
  /** Offset of each block's first chain head in the word's chain bytes. */
  heads: Uint32Array;
}

export const boundBytes = (table: BoundTable): number => 64 + ('heads' in table ? 16 : 12) * table.first.length;

/** Float32 rounds to the nearest: a bound must not come out below what it bounds. */
const ROUND_UP = 1 + 2 ** -20;

/** The bounds of `count` cards ascending whose scores are scores[i]; `factor` gives a card's static factor. */
export function boundTable(count: number, cards: Uint32Array, scores: Float32Array | Float64Array, factor: (cardId: number) => number): BoundTable {
  const n = Math.ceil(count / SKIP_BLOCK);
  const table: BoundTable = { count, first: new Uint32Array(n), last: new Uint32Array(n), highest: new Float32Array(n) };
  for (let b = 0; b < n; b++) {
    const from = b * SKIP_BLOCK;
    const to = Math.min(count, from + SKIP_BLOCK);
    let best = 0;
    for (let c = from; c < to; c++) best = Math.max(best, scores[c]! * factor(cards[c]!));
    table.first[b] = cards[from]!;
    table.last[b] = cards[to - 1]!;
    table.highest[b] = best * ROUND_UP;
  }
  return table;
}

/**
 * The skip table of a word's `count` chains walked whole: their cards, each
 * chain's score ÷ IDF (`alone`) and the heads of every CHECKPOINT-th chain;
 * `factor` gives a card's static factor.
 */
export function skipTable(count: number, cards: Uint32Array, alone: Float64Array, checkpoints: Uint32Array, factor: (cardId: number) => number): SkipTable {
  const bounds = boundTable(count, cards, alone, factor);
  const heads = new Uint32Array(bounds.first.length);
  for (let b = 0; b < heads.length; b++) heads[b] = checkpoints[(b * SKIP_BLOCK) / CHECKPOINT]!;
  return { ...bounds, heads };
}

/** The first index whose value is ≥ `target` in an ascending column, or its length. */
function firstAtLeast(column: Uint32Array, target: number): number {
  let low = 0;
  let high = column.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (column[mid]! < target) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** A word's chains with cards in [low, high), as postingsOf gives a whole word's. */
export interface WindowChains {
  count: number;
  cards: Uint32Array;
  bodies: Uint32Array;
  metas: Uint32Array;
  refs: ChainRefs;
}

/**
 * The chains of the word `decoder` reads whose cards are in [low, high),
 * found by its skip table, and among those only the cards set in `only`
 * (a bit per card) when given: the others' heads are read, not their refs.
 */
export function windowChains(decoder: ChainDecoder, table: SkipTable, low: number, high: number, only?: Uint32Array): WindowChains {
  const from = firstAtLeast(table.last, low);
  const to = firstAtLeast(table.first, high);
  const room = Math.min(table.count, Math.max(0, to - from) * SKIP_BLOCK);
  const cards = new Uint32Array(room);
  const bodies = new Uint32Array(room);
  const metas = new Uint32Array(room);
  // Every chain's head when some are left out: the chains kept are no longer back to back.
  const every = only === undefined ? CHECKPOINT : 1;
  const checkpoints = new Uint32Array(Math.ceil(room / every));
  let i = 0;
  if (from < to) {
    const end = to < table.heads.length ? table.heads[to]! : decoder.bytes;
    const visit = (cardId: number, head: number, start: number, stop: number): void => {
      if (cardId < low || cardId >= high || (only !== undefined && (only[cardId >>> 5]! & (1 << (cardId & 31))) === 0)) return;
      if (i % every === 0) checkpoints[i / every] = head;
      cards[i] = cardId;
      chainInputs(decoder, start, stop, bodies, metas, i++);
    };
    decoder.walk(table.heads[from]!, end, Infinity, visit, from === 0 ? -1 : table.last[from - 1]!);
  }
  return { count: i, cards: cards.subarray(0, i), bodies: bodies.subarray(0, i), metas: metas.subarray(0, i), refs: new ChainRefs(decoder, checkpoints, i, every) };
}
