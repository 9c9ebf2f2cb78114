/**
 * The merge stage (sherlock-original §4 items 3 and 6: backlinker pass 1,
 * mergefp, mergesums, mergesigns, merger): which cards are one document.
 *
 *   redirects  every empty card with a redirect link (`Y` in Links) points
 *              at the card of its target; chains are followed to their
 *              ultimate card, a loop or a target we have no card for leads
 *              nowhere (~0)
 *   classes    union-find (by size, path halving) over cards with text:
 *              equal checksums (Checksums), near-duplicate signatures
 *              (signatures.ts); equal fingerprints are one card already
 *              (the scan keeps one card per URL key)
 *   primary    the heaviest card of each class (the caller's rank, then the
 *              shorter URL, then the lower id) is kept and flagged merged
 *              when the class has others; the others are flagged dup, so
 *              the searcher skips them
 *
 *   Merges (merge → links, feedback)      magic SHERLOCK-MERGES
 *     Header fields: 0 records N (the cards)
 *     Body: N u32, one per card (seed "Merges": two arrays on top of each
 *     other): for an empty card the ultimate target of its redirect chain or
 *     ~0; for any other card the primary card of its class (itself when it
 *     is alone or the primary)
 *
 * Memory: about 20 bytes a card (union-find, redirects, primaries, Merges)
 * and a map of the distinct checksums while they are read, besides the
 * signature search (signatures.ts).
 */

import { CARD_FLAG } from '../common/index/cardinfo.js';
import { readIndexFile, recordCount, type IndexFormat } from '../common/index/file.js';
import { readLinks } from '../common/index/fingerprints.js';
import type { CardFacts, CardFinder } from './cards.js';
import { nearDuplicates } from './signatures.js';
import { readChecksums, WorkFileWriter } from './work-files.js';

export const MERGES_FORMAT: IndexFormat = { magic: 'SHERLOCK-MERGES', version: 1, fields: ['records'], what: 'Merges' };
export const NOWHERE = 0xffffffff;

/**
 * Per empty card the ultimate card its redirect chain leads to, NOWHERE
 * without one, from the `Y` links of `linksFile`; other cards get NOWHERE.
 */
export function resolveRedirects(linksFile: string, finder: CardFinder, flags: Uint8Array): Uint32Array {
  const cards = flags.length;
  const next = new Uint32Array(cards).fill(NOWHERE);
  for (const link of readLinks(linksFile)) {
    if (link.type !== 'Y' || (flags[link.source]! & CARD_FLAG.empty) === 0) continue;
    const target = finder.find(link.target);
    if (target >= 0 && target !== link.source) next[link.source] = target;
  }
  const final = new Uint32Array(cards).fill(NOWHERE);
  // 0 unvisited, 1 on the chain being followed, 2 resolved.
  const state = new Uint8Array(cards);
  const chain: number[] = [];
  for (let start = 0; start < cards; start++) {
    if (state[start] !== 0 || next[start] === NOWHERE) continue;
    let card = start;
    while (state[card] === 0 && next[card] !== NOWHERE && (flags[card]! & CARD_FLAG.empty) !== 0) {
      state[card] = 1;
      chain.push(card);
      card = next[card]!;
    }
    // Where the walk stopped: a loop leads nowhere, a resolved redirect lends its end, an empty card is a dead end.
    const end = state[card] === 1 ? NOWHERE : state[card] === 2 ? final[card]! : (flags[card]! & CARD_FLAG.empty) !== 0 ? NOWHERE : card;
    for (const c of chain) {
      final[c] = end;
      state[c] = 2;
    }
    chain.length = 0;
  }
  return final;
}

/** Union-find over card ids: by size, with path halving. */
class UnionFind {
  private readonly parent: Uint32Array;
  private readonly size: Uint32Array;

  constructor(cards: number) {
    this.parent = Uint32Array.from({ length: cards }, (_, i) => i);
    this.size = new Uint32Array(cards).fill(1);
  }

  find(x: number): number {
    const { parent } = this;
    while (parent[x] !== x) {
      parent[x] = parent[parent[x]!]!;
      x = parent[x]!;
    }
    return x;
  }

  union(a: number, b: number): void {
    let [x, y] = [this.find(a), this.find(b)];
    if (x === y) return;
    if (this.size[x]! < this.size[y]!) [x, y] = [y, x];
    this.parent[y] = x;
    this.size[x]! += this.size[y]!;
  }

  classSize(x: number): number {
    return this.size[this.find(x)]!;
  }
}

export interface MergeInputs {
  checksums: string;
  signatures: string;
  threshold: number;
  /** Per card its rank: the heavier card of a class is kept. */
  rank: Float64Array;
}

export interface MergeReport {
  /** Per card: the Merges array (see above). */
  merges: Uint32Array;
  /** Cards flagged dup. */
  duplicates: number;
}

/**
 * Groups the cards with text into classes and picks their primaries, setting
 * CARD_FLAG.dup and CARD_FLAG.merged in `facts.flags`; `redirects` is
 * resolveRedirects()'s answer. Writes the Merges file `file`.
 */
export function mergeCards(file: string, facts: CardFacts, redirects: Uint32Array, inputs: MergeInputs): MergeReport {
  const { flags, urlLengths } = facts;
  const cards = flags.length;
  const indexed = (card: number): boolean => (flags[card]! & CARD_FLAG.empty) === 0;
  const classes = new UnionFind(cards);
  // Checksums are in card order: equal ones are found through a map of the first card of each.
  const firstOf = new Map<string, number>();
  for (const record of readChecksums(inputs.checksums)) {
    const key = record.checksum.toString('latin1');
    const first = firstOf.get(key);
    if (first === undefined) firstOf.set(key, record.cardId);
    else classes.union(first, record.cardId);
  }
  firstOf.clear();
  nearDuplicates(inputs.signatures, inputs.threshold, indexed, (a, b) => classes.union(a, b));
  const heavier = (a: number, b: number): boolean => inputs.rank[a]! > inputs.rank[b]! || (inputs.rank[a] === inputs.rank[b] && (urlLengths[a]! < urlLengths[b]! || (urlLengths[a] === urlLengths[b] && a < b)));
  // The primary of each class, kept at its root.
  const primary = new Uint32Array(cards).fill(NOWHERE);
  for (let card = 0; card < cards; card++) {
    if (!indexed(card)) continue;
    const root = classes.find(card);
    if (primary[root] === NOWHERE || heavier(card, primary[root]!)) primary[root] = card;
  }
  const merges = new Uint32Array(cards);
  let duplicates = 0;
  for (let card = 0; card < cards; card++) {
    if (!indexed(card)) {
      merges[card] = redirects[card]!;
      continue;
    }
    const kept = primary[classes.find(card)]!;
    merges[card] = kept;
    if (kept !== card) {
      flags[card]! |= CARD_FLAG.dup;
      duplicates += 1;
    } else if (classes.classSize(card) > 1) {
      flags[card]! |= CARD_FLAG.merged;
    }
  }
  const out = new WorkFileWriter(file, MERGES_FORMAT);
  try {
    const body = Buffer.allocUnsafe(4 * cards);
    merges.forEach((value, card) => body.writeUInt32LE(value, 4 * card));
    out.write(body, cards);
    out.finish();
  } catch (err) {
    out.abort();
    throw err;
  }
  return { merges, duplicates };
}

/** The Merges array of a file (for dumps and tests). */
export function readMerges(file: string): Uint32Array {
  const whole = readIndexFile(file, MERGES_FORMAT);
  const count = recordCount(whole, 4, whole.fields[0]!);
  return Uint32Array.from({ length: count }, (_, i) => whole.body.readUInt32LE(4 * i));
}
