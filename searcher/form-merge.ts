/**
 * Several forms of a query word merged by card (evaluate.ts): each card's
 * score inputs as the forms' refs together would give them (rank.ts
 * mergeBodies, mergeMetas), the closest form it has (rank.ts FORM), whether
 * it has the exact form, and which forms it has (card-refs.ts MergedRefs).
 *
 * The forms are added one after the other into columns indexed by card id,
 * a bit per card saying which are met, then swept in card order: a
 * k-way merge looked at every form at every card (its cost grew with
 * forms × cards, and a stem class may have dozens of forms), this reads
 * each form once. The columns are one set per thread, as many elements as
 * the version has cards (some 18 bytes a card), made on first use.
 */

import { presentWords } from './card-refs.js';
import { mergeBodies, mergeMetas } from './rank.js';

/** A form's cards, ascending, with its score inputs in each. */
export interface FormInputs {
  readonly count: number;
  readonly cards: Uint32Array;
  readonly bodies: Uint32Array;
  readonly metas: Uint32Array;
}

/** The union of the forms' cards, ascending, with what evaluate.ts scores them by; every column at its size. */
export interface MergedForms {
  count: number;
  cards: Uint32Array;
  bodies: Uint32Array;
  metas: Uint32Array;
  /** The closest FORM each card has. */
  closest: Uint8Array;
  exact: Uint8Array;
  /** Bit f of present[i × presentWords(forms) + (f >> 5)]: card i has form f. */
  present: Uint32Array;
}

/** The columns by card id; `seen` a bit per card. */
let dense = columns(0, 1);

function columns(cards: number, words: number) {
  return {
    cards,
    words,
    seen: new Uint32Array(Math.ceil(cards / 32)),
    bodies: new Uint32Array(cards),
    metas: new Uint32Array(cards),
    closest: new Uint8Array(cards),
    exact: new Uint8Array(cards),
    present: new Uint32Array(cards * words),
  };
}

/** Merges `forms` (card ids below `cardCount`); form f is of kind kinds[f] (FORM) and is the query word's exact form when isExact[f] is 1. */
export function mergeForms(forms: readonly FormInputs[], kinds: Uint8Array, isExact: Uint8Array, cardCount: number): MergedForms {
  const words = presentWords(forms.length);
  if (dense.cards < cardCount || dense.words < words) dense = columns(Math.max(cardCount, dense.cards), Math.max(words, dense.words));
  // Locals: a store into one typed array could alias another's memory, so V8 would load each field again per card.
  const { seen, bodies: denseBodies, metas: denseMetas, closest: denseClosest, exact: denseExact, present: densePresent, words: stride } = dense;
  let low = seen.length;
  let high = -1;
  for (let f = 0; f < forms.length; f++) {
    const { count, cards, bodies, metas } = forms[f]!;
    const kind = kinds[f]!;
    const exact = isExact[f]!;
    const word = f >> 5;
    const bit = 1 << (f & 31);
    if (count > 0) {
      low = Math.min(low, cards[0]! >>> 5);
      high = Math.max(high, cards[count - 1]! >>> 5);
    }
    for (let i = 0; i < count; i++) {
      const card = cards[i]!;
      const w = card >>> 5;
      const mask = 1 << (card & 31);
      const met = seen[w]!;
      if ((met & mask) === 0) {
        seen[w] = met | mask;
        denseBodies[card] = bodies[i]!;
        denseMetas[card] = metas[i]!;
        denseClosest[card] = kind;
        denseExact[card] = exact;
      } else {
        denseBodies[card] = mergeBodies(denseBodies[card]!, bodies[i]!);
        denseMetas[card] = mergeMetas(denseMetas[card]!, metas[i]!);
        if (kind < denseClosest[card]!) denseClosest[card] = kind;
        denseExact[card]! |= exact;
      }
      densePresent[card * stride + word]! |= bit;
    }
  }
  // Counted first, so that the columns are made at their size once (forms overlap: their sum is no bound worth allocating).
  let union = 0;
  for (let w = low; w <= high; w++) union += bitCount(seen[w]!);
  const out: MergedForms = {
    count: union,
    cards: new Uint32Array(union),
    bodies: new Uint32Array(union),
    metas: new Uint32Array(union),
    closest: new Uint8Array(union),
    exact: new Uint8Array(union),
    present: new Uint32Array(union * words),
  };
  let n = 0;
  const { cards: outCards, bodies: outBodies, metas: outMetas, closest: outClosest, exact: outExact, present: outPresent } = out;
  for (let w = low; w <= high; w++) {
    for (let bits = seen[w]!; bits !== 0; bits &= bits - 1) {
      const card = 32 * w + 31 - Math.clz32(bits & -bits);
      outCards[n] = card;
      outBodies[n] = denseBodies[card]!;
      outMetas[n] = denseMetas[card]!;
      outClosest[n] = denseClosest[card]!;
      outExact[n] = denseExact[card]!;
      for (let k = 0; k < words; k++) {
        outPresent[n * words + k] = densePresent[card * stride + k]!;
        densePresent[card * stride + k] = 0;
      }
      n += 1;
    }
    seen[w] = 0;
  }
  return out;
}

/** The bits set in a 32-bit word. */
export function bitCount(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}
