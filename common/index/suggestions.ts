/**
 * Suggestions: what the searcher completes a query from as it is typed
 * (searcher/suggest.ts, docs/search.md "Suggestions"). Written by the
 * indexer's suggest stage (indexer/suggestions.ts) from the Lexicon, Cards
 * and the cards' weights and flags; optional: a version without it gives no
 * suggestions.
 *
 *   Header fields (file.ts): 0 word count W, 1 title count T, 2 body offset
 *   of the first title record
 *   Body: W word records, then T title records, each list in strictly
 *   increasing byte order of its key
 *     word:  0  4  rank (u32; higher first): the cards holding the word
 *                  (its document frequency), at most 2^24 − 1, << 8 | its
 *                  Lexicon frequency byte (lexicon.ts, occurrences on a
 *                  log scale); wordRank, rankCards
 *            4  1  K: bytes of the key, 1–255
 *            5  K  key: the plain form (common/words.ts), UTF-8
 *            5+K 1 X: bytes of the text, 0 when the text is the key
 *            6+K X text: the accent variant of the best rank
 *     title: 0  4  rank: the static weight of its heaviest card << 16 |
 *                  the cards sharing it, at most 2^16 − 1
 *            4  4  card id of its heaviest card (a takedown of that card
 *                  hides the title)
 *            8  1  K; 9 K key: the title's words, plain forms joined by
 *                  one space
 *            9+K 1 X; 10+K X text: the exact forms joined by one space
 *                  (0: the key)
 *
 * The reader holds the body (its CRC checked, so its text is the writer's
 * UTF-8; records, lengths and the order are checked) and, per list, each record's
 * offset and rank and a tree of range maxima over the ranks, so the best k
 * of a prefix's range are found in O(k log n) without walking the range (a
 * one-letter prefix covers a tenth of the words).
 */

import { IndexFileWriter, readIndexFile, type IndexFormat, type WholeIndexFile } from './file.js';

export const SUGGESTIONS_FORMAT: IndexFormat = { magic: 'SHERLOCK-SUGGEST', version: 1, fields: ['words', 'titles', 'titles at'], what: 'Suggestions' };
export const SUGGESTIONS_FILE = 'Suggestions';
export const MAX_KEY_BYTES = 255;

export interface SuggestionEntry {
  key: string;
  /** The text shown; the key when equal. */
  text: string;
  rank: number;
  /** Titles: the card whose takedown hides it. */
  card?: number;
}

/** Cards counted in a word's rank: past this many, words tie on their frequency byte. */
export const MAX_RANKED_CARDS = 0xffffff;

/** A word record's rank: the cards holding it (clamped to MAX_RANKED_CARDS), then its Lexicon frequency byte. */
export function wordRank(cards: number, frequencyByte: number): number {
  return Math.min(cards, MAX_RANKED_CARDS) * 0x100 + frequencyByte;
}

/** The cards holding a word, from its rank (MAX_RANKED_CARDS: that many or more). */
export function rankCards(rank: number): number {
  return rank >>> 8;
}

function checkU32(value: number, what: string): void {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new RangeError(`${what} ${value} is not a u32`);
}

function encode(entry: SuggestionEntry, title: boolean): Buffer {
  const key = Buffer.from(entry.key, 'utf8');
  const text = entry.text === entry.key ? Buffer.alloc(0) : Buffer.from(entry.text, 'utf8');
  if (key.length === 0 || key.length > MAX_KEY_BYTES) throw new RangeError(`suggestion key ${JSON.stringify(entry.key)} is not 1–${MAX_KEY_BYTES} bytes`);
  if (text.length > MAX_KEY_BYTES) throw new RangeError(`suggestion text ${JSON.stringify(entry.text)} is over ${MAX_KEY_BYTES} bytes`);
  checkU32(entry.rank, 'rank');
  const head = title ? 8 : 4;
  const out = Buffer.alloc(head + 2 + key.length + text.length);
  out.writeUInt32LE(entry.rank, 0);
  if (title) {
    checkU32(entry.card ?? -1, 'card id');
    out.writeUInt32LE(entry.card!, 4);
  }
  out[head] = key.length;
  key.copy(out, head + 1);
  out[head + 1 + key.length] = text.length;
  text.copy(out, head + 2 + key.length);
  return out;
}

/** Byte order of UTF-8 keys: code-point order. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Writes the file; each list must be in strictly increasing key order
 * (compareKeys). The lists are read once, in turn, words first: the suggest
 * stage streams them from its sorts. Returns the records written.
 */
export function writeSuggestions(file: string, words: Iterable<SuggestionEntry>, titles: Iterable<SuggestionEntry>): { words: number; titles: number } {
  const out = new IndexFileWriter(file, SUGGESTIONS_FORMAT);
  try {
    let last: Buffer | undefined;
    const put = (list: Iterable<SuggestionEntry>, title: boolean): number => {
      last = undefined;
      let count = 0;
      for (const entry of list) {
        const record = encode(entry, title);
        const head = title ? 8 : 4;
        const key = record.subarray(head + 1, head + 1 + record[head]!);
        if (last !== undefined && Buffer.compare(last, key) >= 0) throw new RangeError(`suggestion key ${JSON.stringify(entry.key)} is out of order`);
        last = key;
        out.write(record);
        count += 1;
      }
      return count;
    };
    const wordCount = put(words, false);
    const titlesAt = out.length;
    const titleCount = put(titles, true);
    out.finish([wordCount, titleCount, titlesAt]);
    return { words: wordCount, titles: titleCount };
  } catch (err) {
    out.abort();
    throw err;
  }
}

/**
 * One list of the file (words or titles): records by number in key order,
 * the range of a prefix, the best of a range by rank.
 */
export class SuggestionList {
  readonly count: number;
  readonly ranks: Uint32Array;
  private readonly at: Uint32Array;
  /** The record of the highest rank (first of equals) under each node of a complete binary tree over the records; leaves from `leaves`. */
  private readonly best: Int32Array;
  private readonly leaves: number;

  constructor(
    private readonly body: Buffer,
    private readonly head: number,
    whole: WholeIndexFile,
    from: number,
    to: number,
    count: number,
    /** A title list's records must name cards below this (the version's card count). */
    cards = Number.POSITIVE_INFINITY,
  ) {
    if (count > (to - from) / (head + 3)) throw whole.corrupt(from, `${to - from} bytes cannot hold ${count} records`);
    this.count = count;
    this.at = new Uint32Array(count);
    this.ranks = new Uint32Array(count);
    let pos = from;
    for (let n = 0; n < count; n++) {
      if (pos + head + 1 > to) throw whole.corrupt(pos, `record ${n} of ${count} cut short`);
      const keyBytes = body[pos + head]!;
      const textAt = pos + head + 1 + keyBytes;
      if (keyBytes === 0 || textAt + 1 > to || textAt + 1 + body[textAt]! > to) throw whole.corrupt(pos, `record ${n}: key or text runs past the list`);
      if (n > 0 && this.compareKey(n - 1, body.subarray(pos + head + 1, textAt)) >= 0) throw whole.corrupt(pos, `record ${n}: key out of order`);
      if (head === 8 && body.readUInt32LE(pos + 4) >= cards) throw whole.corrupt(pos + 4, `record ${n}: card ${body.readUInt32LE(pos + 4)} is not among the version's ${cards} cards`);
      this.at[n] = pos;
      this.ranks[n] = body.readUInt32LE(pos);
      pos = textAt + 1 + body[textAt]!;
    }
    if (pos !== to) throw whole.corrupt(pos, `${to - pos} bytes after the last record of the list`);
    let leaves = 1;
    while (leaves < count) leaves *= 2;
    this.leaves = leaves;
    this.best = new Int32Array(2 * leaves).fill(-1);
    for (let n = 0; n < count; n++) this.best[leaves + n] = n;
    for (let node = leaves - 1; node >= 1; node--) this.best[node] = this.better(this.best[2 * node]!, this.best[2 * node + 1]!);
  }

  /** Bytes the list holds beyond the file's body. */
  get bytes(): number {
    return this.at.byteLength + this.ranks.byteLength + this.best.byteLength;
  }

  private better(a: number, b: number): number {
    if (a < 0) return b;
    if (b < 0) return a;
    return this.ranks[b]! > this.ranks[a]! || (this.ranks[b] === this.ranks[a] && b < a) ? b : a;
  }

  private keyStart(n: number): number {
    return this.at[n]! + this.head + 1;
  }

  /** Record n's key against `bytes`, the key cut to their length when `prefix`. */
  private compareKey(n: number, bytes: Uint8Array, prefix = false): number {
    const from = this.keyStart(n);
    const length = this.body[from - 1]!;
    return this.body.compare(bytes, 0, bytes.length, from, from + (prefix ? Math.min(length, bytes.length) : length));
  }

  key(n: number): string {
    const from = this.keyStart(n);
    return this.body.toString('utf8', from, from + this.body[from - 1]!);
  }

  text(n: number): string {
    const from = this.keyStart(n) + this.body[this.keyStart(n) - 1]!;
    const length = this.body[from]!;
    return length === 0 ? this.key(n) : this.body.toString('utf8', from + 1, from + 1 + length);
  }

  /** A title's card. */
  card(n: number): number {
    return this.body.readUInt32LE(this.at[n]! + 4);
  }

  /** The records whose keys start with `prefix`: [first, end). */
  range(prefix: string): [number, number] {
    const bytes = Buffer.from(prefix, 'utf8');
    const search = (past: boolean): number => {
      let low = 0;
      let high = this.count;
      while (low < high) {
        const mid = (low + high) >>> 1;
        const c = this.compareKey(mid, bytes, true);
        if (c < 0 || (past && c === 0)) low = mid + 1;
        else high = mid;
      }
      return low;
    };
    return [search(false), search(true)];
  }

  /** The record of the highest rank in [from, to), -1 when empty: O(log n). */
  private bestOf(from: number, to: number): number {
    let found = -1;
    for (let l = from + this.leaves, r = to + this.leaves; l < r; l >>= 1, r >>= 1) {
      if ((l & 1) === 1) found = this.better(found, this.best[l++]!);
      if ((r & 1) === 1) found = this.better(found, this.best[--r]!);
    }
    return found;
  }

  /**
   * Up to `k` records of [from, to) that `accept` takes, highest rank first
   * (ties in key order), looking at no more than `look` records: the range
   * is split at each best found, the best of the parts kept in a small list.
   */
  top(from: number, to: number, k: number, accept: (n: number) => boolean = () => true, look = 16 * k): number[] {
    const out: number[] = [];
    const parts: Array<[number, number, number]> = [];
    const push = (a: number, b: number): void => {
      if (a < b) parts.push([a, b, this.bestOf(a, b)]);
    };
    push(from, to);
    for (let looked = 0; out.length < k && parts.length > 0 && looked < look; looked++) {
      let pick = 0;
      for (let i = 1; i < parts.length; i++) {
        const [, , n] = parts[i]!;
        const [, , m] = parts[pick]!;
        if (this.ranks[n]! > this.ranks[m]! || (this.ranks[n] === this.ranks[m] && n < m)) pick = i;
      }
      const [a, b, n] = parts[pick]!;
      parts.splice(pick, 1);
      if (accept(n)) out.push(n);
      push(a, n);
      push(n + 1, b);
    }
    return out;
  }
}

/** The file read whole: its two lists. */
export class Suggestions {
  private constructor(
    readonly words: SuggestionList,
    readonly titles: SuggestionList,
    /** Bytes held: the body and the lists' columns. */
    readonly bytes: number,
  ) {}

  /** Reads `file`; `cards`, the version's card count, bounds the cards titles name. */
  static open(file: string, cards?: number): Suggestions {
    const whole = readIndexFile(file, SUGGESTIONS_FORMAT);
    const { body, fields } = whole;
    const titlesAt = fields[2]!;
    if (titlesAt > body.length) throw whole.corrupt(body.length, `titles at ${titlesAt}, past the body's ${body.length} bytes`);
    const words = new SuggestionList(body, 4, whole, 0, titlesAt, fields[0]!);
    const titles = new SuggestionList(body, 8, whole, titlesAt, body.length, fields[1]!, cards);
    return new Suggestions(words, titles, body.length + words.bytes + titles.bytes);
  }
}
