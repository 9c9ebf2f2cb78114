/**
 * A query node's occurrences card by card (evaluate.ts): the packed refs
 * (common/index/refs.ts packRef) of one card at a time, ascending by line,
 * which phrases, NEAR, the proximity bonus and the title bonus read for the
 * cards ranking gets to. Ranking itself needs none of them: a word's scores
 * come from its score inputs (rank.ts refInputs), made as its chains are
 * walked, so the refs of the cards that cannot reach the top are never
 * unpacked and a cached word keeps its chains' bytes (about 2.4 a ref on
 * the scale corpus) instead of an int32 per ref and an offset per card.
 *
 * - StoredRefs: keys written out (a node's HitsBuilder): card i's are
 *   keys[starts[i]..starts[i + 1]).
 * - ChainRefs: one word's chains as the WordIndex holds them, card i's
 *   chain found from the offset of every CHECKPOINT-th and decoded again
 *   when asked for.
 * - MergedRefs: several forms of a word: each form's refs of the card,
 *   found by its card id, together.
 *
 * load(i) makes card i's refs `keys[from..to)`, valid until the next load
 * of the same reader: each reader decodes into its own buffer, so the
 * readers of several words (an AND's, a phrase's) hold a card each at once.
 * A word twice in one query is one reader loaded twice at the same card,
 * which gives the same refs again.
 *
 * A reader loaded as many times as it has cards (over all the queries that
 * used it: it lives in the chain cache) writes all its refs out once and
 * reads them from there on (ski rental: what it spent decoding card by card
 * is then what decoding them all costs, so it never spends more than twice
 * the better of the two). The common words of phrases and of ANDs that look
 * into most of their cards get there; the others stay bytes.
 */

import type { ChainDecoder } from '../common/index/refs.js';
import { seek, sortKeys } from './rank.js';

/** A list without refs (site:'s): every card has none. */
export const NO_REFS: CardRefs = { keys: new Int32Array(0), from: 0, to: 0, load: () => {} };

export interface CardRefs {
  /** Makes card i's refs keys[from..to). */
  load(i: number): void;
  readonly keys: Int32Array;
  readonly from: number;
  readonly to: number;
}

/** Keys written out: card i's are keys[starts[i]..starts[i + 1]). */
export class StoredRefs implements CardRefs {
  from = 0;
  to = 0;

  constructor(
    readonly starts: Uint32Array,
    readonly keys: Int32Array,
  ) {}

  load(i: number): void {
    this.from = this.starts[i]!;
    this.to = this.starts[i + 1]!;
  }
}

/** Sorts refs[from..to) by line when they are not (a chain stores its metas first). */
function byLine(refs: Int32Array, from: number, to: number): void {
  for (let j = from + 1; j < to; j++) {
    if (refs[j - 1]! > refs[j]!) {
      sortKeys(refs, from, to);
      return;
    }
  }
}

/**
 * Refs decoded card by card (read()) until they were loaded as often as
 * there are cards, then written out (StoredRefs) if `keep` agrees: the
 * chain cache, told the new size, keeps them or not.
 */
export abstract class LazyRefs implements CardRefs {
  keys: Int32Array = NO_REFS.keys;
  from = 0;
  to = 0;
  private loads = 0;
  private stored: StoredRefs | undefined;
  /** Asked once the refs are written out, whether to keep them (the chain cache re-weighs its entry); none: kept. */
  keep: (() => boolean) | undefined;

  constructor(readonly count: number) {}

  /** Card i's refs decoded into keys[from..to). */
  protected abstract read(i: number): void;

  load(i: number): void {
    if (this.stored === undefined && ++this.loads >= this.count) this.writeOut();
    const { stored } = this;
    if (stored === undefined) return this.read(i);
    stored.load(i);
    this.keys = stored.keys;
    this.from = stored.from;
    this.to = stored.to;
  }

  private writeOut(): void {
    this.stored = this.all();
    if (this.keep !== undefined && !this.keep()) {
      this.stored = undefined;
      this.loads = 0;
    } else this.release();
  }

  /** Every card's refs, written out; other readers' refs (a form's, loaded for another term) stay as they were. */
  protected abstract all(): StoredRefs;

  /** What the reader keeps alive, as the chain cache weighs it. */
  abstract get bytes(): number;

  /** The refs are written out and kept: what they replace can go. */
  protected release(): void {}

  /** The refs written out, if they were. */
  protected get written(): StoredRefs | undefined {
    return this.stored;
  }

  /** The bytes of the refs written out, 0 if they were not. */
  protected get storedBytes(): number {
    return this.stored === undefined ? 0 : this.stored.starts.byteLength + this.stored.keys.byteLength;
  }
}

/** ChainRefs keeps the head of every CHECKPOINT-th chain: a card's chain is found from the one before it, a few chains' heads away. */
export const CHECKPOINT = 8;

/** One word's chains: card i's decoded from the chain bytes, found from the head of chain i − i % CHECKPOINT, checkpoints[i / CHECKPOINT] (ChainDecoder#walk). */
export class ChainRefs extends LazyRefs {
  /** The chains' bytes, until the refs are written out. */
  private decoder: ChainDecoder | undefined;
  /** The card after the one read last, and its chain's head. */
  private next = -1;
  private nextHead = 0;

  /** `every`: chains from one checkpoint to the next; 1 when the chains are not back to back in the bytes (a word's chains in some cards only, windows.ts). */
  constructor(
    decoder: ChainDecoder,
    private readonly checkpoints: Uint32Array,
    count: number,
    private readonly every = CHECKPOINT,
  ) {
    super(count);
    this.decoder = decoder;
  }

  protected override release(): void {
    this.decoder = undefined;
  }

  /** In one pass over the chains, not a search for each card. */
  protected override all(): StoredRefs {
    if (this.every === 1) {
      const starts = new Uint32Array(this.count + 1);
      const sink = new GrowingRefs();
      for (let i = 0; i < this.count; i++) starts[i + 1] = this.copy(i, starts[i]!, sink);
      return new StoredRefs(starts, sink.array.slice(0, starts[this.count]!));
    }
    // From the first chain's head: a window's list (windows.ts) starts inside the word's.
    const { starts, refs } = this.decoder!.packed(this.checkpoints[0] ?? 0, this.decoder!.bytes, this.count);
    for (let i = 0; i < this.count; i++) byLine(refs, starts[i]!, starts[i + 1]!);
    return new StoredRefs(starts, refs);
  }

  /** Where card i's chain starts in the chains' bytes: from the checkpoint before it, or from the chain read last when that is nearer (cards are mostly loaded in ascending order). */
  private headOf(i: number): number {
    const decoder = this.decoder!;
    const { every } = this;
    let at = i - (i % every);
    let head = this.checkpoints[at / every]!;
    if (this.next > at && this.next <= i) {
      at = this.next;
      head = this.nextHead;
    }
    for (; at < i; at++) head = decoder.after(head);
    return head;
  }

  protected read(i: number): void {
    const decoder = this.decoder!;
    const n = decoder.refsAt(this.headOf(i));
    this.next = i + 1;
    this.nextHead = decoder.chainEnd;
    this.keys = decoder.decoded;
    byLine(this.keys, 0, n);
    this.from = 0;
    this.to = n;
  }

  /**
   * Card i's refs, sorted by line, into `sink` from `at`; returns their end. Not a load, and this reader's
   * own refs (keys) stay as they were: a merged word reads its forms so,
   * and a form may be another term's reader in the same query, holding
   * another card.
   */
  copy(i: number, at: number, sink: GrowingRefs): number {
    const stored = this.written;
    if (stored !== undefined) {
      const from = stored.starts[i]!;
      const to = stored.starts[i + 1]!;
      sink.room(at, to - from).set(stored.keys.subarray(from, to), at);
      return at + to - from;
    }
    const decoder = this.decoder!;
    const span = decoder.refsSpan(this.headOf(i));
    const out = sink.room(at, span.stop - span.start);
    const end = decoder.refsInto(span.start, span.stop, out, at);
    byLine(out, at, end);
    return end;
  }

  /** What the reader keeps: the chains' bytes and checkpoints, or the refs written out (weighed so before the bytes go). */
  get bytes(): number {
    const stored = this.storedBytes;
    return stored > 0 ? stored : this.decoder!.bytes + this.checkpoints.byteLength;
  }
}

/** Where ChainRefs#copy writes: an array grown by doubling. */
class GrowingRefs {
  array = new Int32Array(64);

  /** The array, with room for `need` refs from `at` (those before `at` kept). */
  room(at: number, need: number): Int32Array {
    if (at + need > this.array.length) {
      const grown = new Int32Array(Math.max(2 * this.array.length, at + need));
      grown.set(this.array.subarray(0, at));
      this.array = grown;
    }
    return this.array;
  }
}

/** A form's cards, ascending, with the refs of each. */
export interface FormList {
  readonly count: number;
  readonly cards: Uint32Array;
  readonly refs: ChainRefs;
}

/** Words of MergedRefs' `present` a card takes: a bit per form. */
export const presentWords = (forms: number): number => Math.ceil(forms / 32);

/**
 * Several forms of a word merged by card (`cards`, ascending): card i's
 * refs are each form's refs of it, together. `present` says which forms
 * have card i: bit f of present[i × presentWords(forms) + (f >> 5)].
 *
 * It holds the forms' cards and chains, and weighs them in its own bytes:
 * the chain cache may let a form go while the merged word stays, and what
 * this keeps alive must count somewhere (a form in the cache beside it is
 * counted twice). Fetching a form again instead, once let go, cost more
 * than the cache saved: a whole list read for each card looked at.
 */
export class MergedRefs extends LazyRefs {
  /** Where read() puts a card's refs. */
  private readonly buffer = new GrowingRefs();
  /** Where each form was found last: loads come mostly in ascending card order. */
  private readonly at: Int32Array;
  private readonly words: number;
  private readonly forms: readonly FormList[];

  constructor(
    private readonly cards: Uint32Array,
    private readonly present: Uint32Array,
    forms: readonly FormList[],
  ) {
    super(cards.length);
    this.at = new Int32Array(forms.length);
    this.words = presentWords(forms.length);
    // Their cards and chains only: not the rest of a cached entry.
    this.forms = forms.map(({ count, cards, refs }) => ({ count, cards, refs }));
  }

  protected read(i: number): void {
    this.to = this.gather(i, 0, this.buffer);
    this.keys = this.buffer.array;
    this.from = 0;
  }

  protected override all(): StoredRefs {
    const starts = new Uint32Array(this.count + 1);
    const out = new GrowingRefs();
    for (let i = 0; i < this.count; i++) starts[i + 1] = this.gather(i, starts[i]!, out);
    return new StoredRefs(starts, out.array.slice(0, starts[this.count]));
  }

  /** Card i's refs, each form's of it together, sorted by line, into `sink` from `at`; returns their end. */
  private gather(i: number, at: number, sink: GrowingRefs): number {
    const cardId = this.cards[i]!;
    let n = at;
    let parts = 0;
    for (let w = 0; w < this.words; w++) {
      for (let bits = this.present[i * this.words + w]!; bits !== 0; bits &= bits - 1) {
        const f = 32 * w + 31 - Math.clz32(bits & -bits);
        const form = this.forms[f]!;
        let j = this.at[f]!;
        // Back to the start when the card comes before where the form was left.
        if (j >= form.count || form.cards[j]! > cardId) j = 0;
        j = this.at[f] = seek(form.cards, j, form.count, cardId);
        // Not counted as the form's loads: the merged word's are what count.
        n = form.refs.copy(j, n, sink);
        parts += 1;
      }
    }
    if (parts > 1) sortKeys(sink.array, at, n);
    return n;
  }

  /** What the reader keeps: which forms each card has, the forms' cards and chains, the refs once written out. */
  get bytes(): number {
    return this.present.byteLength + this.storedBytes + this.forms.reduce((n, form) => n + form.cards.byteLength + form.refs.bytes, 0);
  }
}
