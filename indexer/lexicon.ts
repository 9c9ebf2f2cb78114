/**
 * Stage 3, lexicon (DESIGN §6; sherlock-original §4 items 8–9): the words
 * the chewer found become numbered words.
 *
 *   LexRaw     every word once, in the order the chewer first met it (card
 *              order, so the same corpus gives the same file); its id is
 *              8·(record number + 1), which is what Postings name words by
 *   LexByFreq  the same records by frequency, highest first (ties by id)
 *   LexOrder   the words renumbered in the Lexicon's order (common/index/lexicon.ts
 *              lexiconOrder: length of the plain form, plain form, exact
 *              form), ids 8, 16, 24, …; so accent variants get adjacent ids
 *              and adjacent chains in WordIndex
 *   Lexicon    written by the WordIndex stage once the chains' places are
 *              known (writeLexiconFile)
 *
 * Every word is of class normal (0) and context 0 for now: stop words,
 * garbage and complexes (the seed's classes) are not told apart yet.
 * Frequencies are occurrences in the whole collection; the Lexicon's byte
 * is 1 + 8·log2(frequency), at most 255.
 *
 * The vocabulary is held in memory (the words and four numbers each): its
 * size grows with the number of distinct words, not with the corpus.
 */

import { LEXBYFREQ_FORMAT, LEXORDER_FORMAT, LEXRAW_FORMAT, compareKeys, orderKey, writeLexicon, writeLexList, type LexiconEntry, type LexWord } from '../common/index/lexicon.js';

/** The words the chewer found, numbered in the order first found (LexRaw's order). */
export class Vocabulary {
  readonly exact: string[] = [];
  /** Plain forms (common/words.ts). */
  readonly plain: string[] = [];
  /** Occurrences per word, counted by the caller. */
  frequency = new Float64Array(1024);
  private readonly numbers = new Map<string, number>();

  get size(): number {
    return this.exact.length;
  }

  /** The number of `exact`, added with `plain` on first sight. */
  add(exact: string, plain: string): number {
    let n = this.numbers.get(exact);
    if (n === undefined) {
      n = this.exact.length;
      this.numbers.set(exact, n);
      this.exact.push(exact);
      this.plain.push(plain);
      if (n >= this.frequency.length) {
        const grown = new Float64Array(2 * this.frequency.length);
        grown.set(this.frequency);
        this.frequency = grown;
      }
    }
    return n;
  }
}

/** A word's LexRaw id: what Postings name it by. */
export function rawId(n: number): number {
  return (n + 1) * 8;
}

/** The words in the Lexicon's order. */
export interface LexiconOrder {
  /** Vocabulary number of the word of each rank. */
  byRank: Uint32Array;
  /** Rank of each vocabulary number; the word's id is 8·(rank + 1). */
  rank: Uint32Array;
}

/** Sorts the vocabulary into common/index/lexicon.ts's lexiconOrder. */
export function sortLexicon(vocabulary: Vocabulary): LexiconOrder {
  const { exact, plain, size } = vocabulary;
  const keys = Array.from({ length: size }, (_, n) => orderKey(exact[n]!, plain[n]!));
  const byRank = Uint32Array.from({ length: size }, (_, n) => n).sort((a, b) => compareKeys(keys[a]!, keys[b]!));
  const rank = new Uint32Array(size);
  byRank.forEach((n, r) => (rank[n] = r));
  return { byRank, rank };
}

function* lexWords(vocabulary: Vocabulary, numbers: Iterable<number>, id: (n: number) => number): IterableIterator<LexWord> {
  for (const n of numbers) yield { id: id(n), frequency: vocabulary.frequency[n]!, context: 0, word: vocabulary.exact[n]! };
}

/** Writes LexRaw, LexByFreq and LexOrder into `files` (their paths); returns the order. */
export function writeLexLists(vocabulary: Vocabulary, files: { raw: string; byFreq: string; order: string }): LexiconOrder {
  const { size, frequency } = vocabulary;
  const numbers = Uint32Array.from({ length: size }, (_, n) => n);
  writeLexList(files.raw, LEXRAW_FORMAT, lexWords(vocabulary, numbers, rawId));
  const byFrequency = Uint32Array.from(numbers).sort((a, b) => frequency[b]! - frequency[a]! || a - b);
  writeLexList(files.byFreq, LEXBYFREQ_FORMAT, lexWords(vocabulary, byFrequency, rawId));
  const order = sortLexicon(vocabulary);
  writeLexList(files.order, LEXORDER_FORMAT, lexWords(vocabulary, order.byRank, (n) => rawId(order.rank[n]!)));
  return order;
}

/** The Lexicon's frequency byte. */
export function frequencyByte(frequency: number): number {
  return frequency < 1 ? 0 : Math.min(255, 1 + Math.floor(8 * Math.log2(frequency)));
}

/** Writes the Lexicon: every word in order with the place of its WordIndex entry (size 0: none). */
export function writeLexiconFile(file: string, vocabulary: Vocabulary, order: LexiconOrder, places: { refPos: Float64Array; size: Float64Array }): void {
  function* entries(): IterableIterator<LexiconEntry> {
    for (let r = 0; r < order.byRank.length; r++) {
      const n = order.byRank[r]!;
      yield {
        id: rawId(r),
        refPos: places.refPos[r]!,
        chainSize: places.size[r]!,
        frequency: frequencyByte(vocabulary.frequency[n]!),
        context: 0,
        word: vocabulary.exact[n]!,
      };
    }
  }
  writeLexicon(file, entries());
}
