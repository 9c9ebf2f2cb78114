/**
 * A word's chains in blocks (windows.ts ranks by them): for each block of
 * SKIP_BLOCK chains, its first and last card, where its first chain's head
 * is in the word's bytes, and the most the word scores in any of its cards
 * before the IDF — alone (rank.ts inputScore) and as one form of several
 * (rank.ts mergeableScore). Made as a word's chains are walked whole
 * (index-version.ts postingsOf) and kept beside the chain cache, at some
 * 0.16 bytes a chain: a word walked once is afterwards read only in the
 * card ranges that can still reach the top.
 */

import type { ChainDecoder } from '../common/index/refs.js';
import { CHECKPOINT, ChainRefs } from './card-refs.js';
import { chainInputs, inputScore, mergeableScore } from './rank.js';

/** Chains a block: a multiple of CHECKPOINT, whose heads postingsOf keeps already. */
export const SKIP_BLOCK = 16 * CHECKPOINT;

export interface SkipTable {
  /** The word's chains. */
  count: number;
  first: Uint32Array;
  last: Uint32Array;
  /** Offset of each block's first chain head in the word's chain bytes. */
  heads: Uint32Array;
  /** The block's highest score ÷ IDF of the word alone, and of the word as one form of several. */
  alone: Float32Array;
  mergeable: Float32Array;
}

export const skipBytes = (table: SkipTable): number => 64 + 20 * table.first.length;

/** Float32 rounds to the nearest: a bound must not come out below what it bounds. */
const ROUND_UP = 1 + 2 ** -20;

/**
 * The skip table of a word's `count` chains walked whole: their cards,
 * score inputs and the heads of every CHECKPOINT-th chain; `norm` gives
 * a card's length normalisation. Also writes each chain's score ÷ IDF
 * into `alone`.
 */
export function skipTable(count: number, cards: Uint32Array, bodies: Uint32Array, metas: Uint32Array, checkpoints: Uint32Array, norm: (cardId: number) => number, alone: Float64Array): SkipTable {
  const blocks = Math.ceil(count / SKIP_BLOCK);
  const table: SkipTable = {
    count,
    first: new Uint32Array(blocks),
    last: new Uint32Array(blocks),
    heads: new Uint32Array(blocks),
    alone: new Float32Array(blocks),
    mergeable: new Float32Array(blocks),
  };
  for (let b = 0; b < blocks; b++) {
    const from = b * SKIP_BLOCK;
    const to = Math.min(count, from + SKIP_BLOCK);
    let best = 0;
    let merged = 0;
    for (let c = from; c < to; c++) {
      const n = norm(cards[c]!);
      const score = (alone[c] = inputScore(bodies[c]!, metas[c]!, n, 1));
      if (score > best) best = score;
      const m = mergeableScore(bodies[c]!, metas[c]!, n);
      if (m > merged) merged = m;
    }
    table.first[b] = cards[from]!;
    table.last[b] = cards[to - 1]!;
    table.heads[b] = checkpoints[from / CHECKPOINT]!;
    table.alone[b] = best * ROUND_UP;
    table.mergeable[b] = merged * ROUND_UP;
  }
  return table;
}

/** The first index in [0, n) whose value is ≥ `target` in an ascending column, or n. */
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

/** The chains of the word `decoder` reads whose cards are in [low, high), found by its skip table. */
export function windowChains(decoder: ChainDecoder, table: SkipTable, low: number, high: number): WindowChains {
  const from = firstAtLeast(table.last, low);
  const to = firstAtLeast(table.first, high);
  const room = Math.max(0, to - from) * SKIP_BLOCK;
  const cards = new Uint32Array(room);
  const bodies = new Uint32Array(room);
  const metas = new Uint32Array(room);
  const checkpoints = new Uint32Array(Math.ceil(room / CHECKPOINT));
  let i = 0;
  if (from < to) {
    const end = to < table.heads.length ? table.heads[to]! : decoder.bytes;
    const visit = (cardId: number, head: number, start: number, stop: number): void => {
      if (cardId < low || cardId >= high) return;
      if (i % CHECKPOINT === 0) checkpoints[i / CHECKPOINT] = head;
      cards[i] = cardId;
      chainInputs(decoder, start, stop, bodies, metas, i++);
    };
    decoder.walk(table.heads[from]!, end, Infinity, visit, from === 0 ? -1 : table.last[from - 1]!);
  }
  return { count: i, cards: cards.subarray(0, i), bodies: bodies.subarray(0, i), metas: metas.subarray(0, i), refs: new ChainRefs(decoder, checkpoints, i) };
}
