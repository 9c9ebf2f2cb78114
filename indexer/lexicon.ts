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
 * The vocabulary is held in memory without a JavaScript object per word
 * (Vocabulary): the words' UTF-8 bytes in pages of a MiB, and a few typed
 * arrays and an open-addressing table of numbers, 35–70 bytes a word
 * besides its bytes (docs/indexer.md "Memory"). A Map and two
 * arrays of strings took about 150 bytes a word, and a vocabulary of random
 * words (hashes, base64, logs) has as many words as the text has. Past its
 * share of the budget the Vocabulary is spilled in segments and the lists
 * are written by merging them (segments.ts); these functions are the path
 * of a vocabulary that fits.
 */

import { LEXBYFREQ_FORMAT, LEXORDER_FORMAT, LEXRAW_FORMAT, writeLexicon, writeLexList, type LexiconEntry, type LexWord } from '../common/index/lexicon.js';
import { grow } from '../common/grow.js';

/** Bytes of a page of word bytes; a word (at most 255 bytes, its plain form a few more) never straddles two. */
const PAGE = 1 << 20;
const PAGE_BITS = 20;
/** plainAt of a word whose plain form is its exact form. */
const SAME = 0xffffffff;

/**
 * The words the chewer found, numbered in the order first found (LexRaw's
 * order): exact form, plain form (common/words.ts), occurrences (counted by
 * the caller in `frequency`). Words are found again by their exact form
 * through a table of (hash, number + 1) pairs, the hash FNV-1a over the
 * UTF-8 bytes.
 */
export class Vocabulary {
  /** Occurrences per word, counted by the caller. */
  frequency = new Float64Array(1024);
  private count = 0;
  private readonly pages: Buffer[] = [];
  /** Bytes used in the last page. */
  private used = PAGE;
  private exactAt = new Uint32Array(1024);
  private exactLength = new Uint8Array(1024);
  private plainAt = new Uint32Array(1024);
  private plainLength = new Uint16Array(1024);
  /** The stem's language number (common/language/codes.ts; 0: no stem), and the stem as the plain form's bytes are kept. */
  private stemLanguage = new Uint8Array(1024);
  private stemAt = new Uint32Array(1024);
  private stemLength = new Uint8Array(1024);
  /** Per slot: hash, number + 1 (0: free). */
  private table = new Int32Array(2 * 2048);
  private readonly scratch = Buffer.allocUnsafe(1024);

  get size(): number {
    return this.count;
  }

  /** Bytes held: the pages, the arrays and the table. */
  get bytes(): number {
    return (
      this.pages.length * PAGE +
      this.table.byteLength +
      this.frequency.byteLength +
      this.exactAt.byteLength +
      this.exactLength.byteLength +
      this.plainAt.byteLength +
      this.plainLength.byteLength +
      this.stemLanguage.byteLength +
      this.stemAt.byteLength +
      this.stemLength.byteLength
    );
  }

  /**
   * The number of `exact` (at most 255 bytes in UTF-8), added with `plain`
   * and its stem (`stem` of language number `stemLanguage`, at most 255
   * bytes; language 0: none) on first sight; a word met again keeps the stem
   * it was added with.
   */
  add(exact: string, plain: string, stemLanguage: number, stem: string): number {
    const { scratch } = this;
    const length = scratch.write(exact, 0, 'utf8');
    if (length > 255 || length === scratch.length) throw new RangeError(`word of more than 255 bytes: ${JSON.stringify(exact.slice(0, 40))}`);
    let h = 0x811c9dc5 | 0;
    for (let i = 0; i < length; i++) h = Math.imul(h ^ scratch[i]!, 0x01000193);
    const { table } = this;
    const mask = table.length / 2 - 1;
    let slot = h & mask;
    for (; ; slot = (slot + 1) & mask) {
      const entry = table[2 * slot + 1]!;
      if (entry === 0) break;
      if (table[2 * slot] !== h) continue;
      const n = entry - 1;
      if (this.exactLength[n] === length && this.equals(this.exactAt[n]!, scratch, length)) return n;
    }
    const n = this.count++;
    this.exactAt = grow(this.exactAt, n + 1);
    this.exactLength = grow(this.exactLength, n + 1);
    this.plainAt = grow(this.plainAt, n + 1);
    this.plainLength = grow(this.plainLength, n + 1);
    this.stemLanguage = grow(this.stemLanguage, n + 1);
    this.stemAt = grow(this.stemAt, n + 1);
    this.stemLength = grow(this.stemLength, n + 1);
    this.frequency = grow(this.frequency, n + 1);
    this.exactAt[n] = this.store(scratch, length);
    this.exactLength[n] = length;
    if (plain === exact) {
      this.plainAt[n] = SAME;
    } else {
      const plainLength = scratch.write(plain, 0, 'utf8');
      if (plainLength === scratch.length) throw new RangeError(`plain form of more than ${scratch.length - 1} bytes: ${JSON.stringify(plain.slice(0, 40))}`);
      this.plainAt[n] = this.store(scratch, plainLength);
      this.plainLength[n] = plainLength;
    }
    this.stemLanguage[n] = stemLanguage;
    if (stemLanguage === 0 || stem === plain) {
      this.stemAt[n] = SAME;
    } else {
      const stemLength = scratch.write(stem, 0, 'utf8');
      if (stemLength > 255) throw new RangeError(`stem of more than 255 bytes: ${JSON.stringify(stem.slice(0, 40))}`);
      this.stemAt[n] = this.store(scratch, stemLength);
      this.stemLength[n] = stemLength;
    }
    table[2 * slot] = h;
    table[2 * slot + 1] = n + 1;
    if (2 * this.count > mask + 1) this.rehash();
    return n;
  }

  /** The exact form of word `n`. */
  exactOf(n: number): string {
    return this.text(this.exactAt[n]!, this.exactLength[n]!);
  }

  /** The plain form of word `n`. */
  plainOf(n: number): string {
    const at = this.plainAt[n]!;
    return at === SAME ? this.exactOf(n) : this.text(at, this.plainLength[n]!);
  }

  /** The language number of word `n`'s stem (0: none). */
  stemLanguageOf(n: number): number {
    return this.stemLanguage[n]!;
  }

  /** Word `n`'s stem: its plain form when it has none. */
  stemOf(n: number): string {
    const at = this.stemAt[n]!;
    return at === SAME ? this.plainOf(n) : this.text(at, this.stemLength[n]!);
  }

  /** The UTF-8 bytes of word `n`'s stem (a view into the pages). */
  stemBytes(n: number): Buffer {
    const at = this.stemAt[n]!;
    return at === SAME ? this.plainBytes(n) : this.bytesAt(at, this.stemLength[n]!);
  }

  /** The UTF-8 bytes of word `n`'s exact form (a view into the pages). */
  exactBytes(n: number): Buffer {
    return this.bytesAt(this.exactAt[n]!, this.exactLength[n]!);
  }

  /** The UTF-8 bytes of word `n`'s plain form (a view into the pages). */
  plainBytes(n: number): Buffer {
    const at = this.plainAt[n]!;
    return at === SAME ? this.exactBytes(n) : this.bytesAt(at, this.plainLength[n]!);
  }

  /** The length of word `n`'s plain form in code points. */
  plainChars(n: number): number {
    const bytes = this.plainBytes(n);
    let chars = 0;
    // A code point is a byte that does not continue one (10xx xxxx).
    for (let i = 0; i < bytes.length; i++) if ((bytes[i]! & 0xc0) !== 0x80) chars += 1;
    return chars;
  }

  private bytesAt(at: number, length: number): Buffer {
    const from = at & (PAGE - 1);
    return this.pages[at >>> PAGE_BITS]!.subarray(from, from + length);
  }

  /**
   * Word numbers 0 … size − 1 in the Lexicon's order (common/index/lexicon.ts
   * orderKey and compareKeys: the plain form's length in code points, the
   * plain form, the exact form, each by code point, which is UTF-8 byte
   * order), compared on their bytes without making strings.
   */
  lexiconOrder(): Uint32Array {
    const { count, pages } = this;
    // Where each plain form lies (SAME resolved), and its length in code points.
    const plainAt = new Uint32Array(count);
    const plainBytes = new Uint16Array(count);
    const plainChars = new Uint16Array(count);
    // First sorted natively on 64-bit keys: the plain form's length in code points (at most 255 counted),
    // its first three bytes, the word's number; then each stretch of equal leading parts by the whole comparison.
    const keys = new BigUint64Array(count);
    for (let n = 0; n < count; n++) {
      const same = this.plainAt[n] === SAME;
      const at = same ? this.exactAt[n]! : this.plainAt[n]!;
      const length = same ? this.exactLength[n]! : this.plainLength[n]!;
      plainAt[n] = at;
      plainBytes[n] = length;
      const page = pages[at >>> PAGE_BITS]!;
      const from = at & (PAGE - 1);
      let chars = 0;
      // A code point is a byte that does not continue one (10xx xxxx).
      for (let i = from; i < from + length; i++) if ((page[i]! & 0xc0) !== 0x80) chars += 1;
      plainChars[n] = chars;
      // Bytes past the form's end count as 0, below any byte of a longer form of the same start.
      const prefix = ((length > 0 ? page[from]! : 0) << 16) | ((length > 1 ? page[from + 1]! : 0) << 8) | (length > 2 ? page[from + 2]! : 0);
      keys[n] = (BigInt(Math.min(chars, 255) * 2 ** 24 + prefix) << 32n) | BigInt(n);
    }
    keys.sort();
    const compare = (a: number, b: number): number =>
      plainChars[a]! - plainChars[b]! || this.compareBytes(plainAt[a]!, plainBytes[a]!, plainAt[b]!, plainBytes[b]!) || this.compareBytes(this.exactAt[a]!, this.exactLength[a]!, this.exactAt[b]!, this.exactLength[b]!);
    const order = new Uint32Array(count);
    for (let k = 0; k < count; k++) order[k] = Number(keys[k]! & 0xffffffffn);
    for (let k = 0; k < count; ) {
      const lead = keys[k]! >> 32n;
      let end = k + 1;
      while (end < count && keys[end]! >> 32n === lead) end += 1;
      if (end - k > 1) order.subarray(k, end).sort(compare);
      k = end;
    }
    return order;
  }

  private compareBytes(a: number, aLength: number, b: number, bLength: number): number {
    const pageA = this.pages[a >>> PAGE_BITS]!;
    const pageB = this.pages[b >>> PAGE_BITS]!;
    const fromA = a & (PAGE - 1);
    const fromB = b & (PAGE - 1);
    const common = Math.min(aLength, bLength);
    for (let i = 0; i < common; i++) {
      const d = pageA[fromA + i]! - pageB[fromB + i]!;
      if (d !== 0) return d;
    }
    return aLength - bLength;
  }

  private text(at: number, length: number): string {
    const from = at & (PAGE - 1);
    return this.pages[at >>> PAGE_BITS]!.toString('utf8', from, from + length);
  }

  private equals(at: number, bytes: Buffer, length: number): boolean {
    const page = this.pages[at >>> PAGE_BITS]!;
    const from = at & (PAGE - 1);
    for (let i = 0; i < length; i++) if (page[from + i] !== bytes[i]) return false;
    return true;
  }

  /** Copies `length` bytes of `bytes` into the pages; returns where. */
  private store(bytes: Buffer, length: number): number {
    if (this.used + length > PAGE) {
      if (this.pages.length >= 2 ** (32 - PAGE_BITS)) throw new RangeError('vocabulary of more than 4 GiB of words');
      this.pages.push(Buffer.allocUnsafeSlow(PAGE));
      this.used = 0;
    }
    const at = (this.pages.length - 1) * PAGE + this.used;
    bytes.copy(this.pages[this.pages.length - 1]!, this.used, 0, length);
    this.used += length;
    return at;
  }

  private rehash(): void {
    const old = this.table;
    const table = new Int32Array(2 * old.length);
    const mask = table.length / 2 - 1;
    for (let s = 0; s < old.length; s += 2) {
      if (old[s + 1] === 0) continue;
      let slot = old[s]! & mask;
      while (table[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
      table[2 * slot] = old[s]!;
      table[2 * slot + 1] = old[s + 1]!;
    }
    this.table = table;
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
  const byRank = vocabulary.lexiconOrder();
  const rank = new Uint32Array(byRank.length);
  for (let r = 0; r < byRank.length; r++) rank[byRank[r]!] = r;
  return { byRank, rank };
}

function* lexWords(vocabulary: Vocabulary, numbers: Iterable<number>, id: (n: number) => number): IterableIterator<LexWord> {
  for (const n of numbers) yield { id: id(n), frequency: vocabulary.frequency[n]!, context: 0, word: vocabulary.exactOf(n) };
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

/** Writes the Lexicon: every word in order with the place of its WordIndex entry (`places`, one per rank; size 0: none). */
export function writeLexiconFile(file: string, vocabulary: Vocabulary, order: LexiconOrder, places: Iterable<{ refPos: number; chainSize: number }>): void {
  function* entries(): IterableIterator<LexiconEntry> {
    let r = 0;
    for (const place of places) {
      const n = order.byRank[r]!;
      yield {
        id: rawId(r++),
        refPos: place.refPos,
        chainSize: place.chainSize,
        frequency: frequencyByte(vocabulary.frequency[n]!),
        context: 0,
        word: vocabulary.exactOf(n),
        plain: vocabulary.plainOf(n),
        stemLanguage: vocabulary.stemLanguageOf(n),
        stem: vocabulary.stemOf(n),
      };
    }
  }
  writeLexicon(file, entries());
}
