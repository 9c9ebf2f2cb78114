/**
 * The word lists of the lexicon stage (DESIGN §6 stage 6) and the Lexicon the
 * searcher looks words up in. Layouts after the seed (seeds/003 "LexRaw,
 * LexByFreq, LexOrder" and "Lexicon"); the seed's leading u32 word_count is
 * the header's count field here.
 *
 * LexRaw, LexByFreq, LexOrder: one record format, three magics.
 *   Header fields (index-file.ts): 0 word count N
 *   Body: N records
 *     0   4  word id; bits 0–2 the word class (WORD_CLASSES)
 *     4   4  frequency: occurrences in the collection
 *     8   2  context class (context_t, a u16 here)
 *     10  1  length L of the word in bytes, 1–255
 *     11  L  the word, UTF-8, lower case
 *   LexRaw is in any order; LexByFreq by frequency, highest first; LexOrder by
 *   id, the first 8 and then in steps of 8 (id >> 3 is the record's number
 *   plus one), accent variants given adjacent ids so their chains are adjacent.
 *
 * Lexicon: what a query word is looked up in.
 *   Header fields: 0 word count N
 *   Body: N records, in lexiconOrder
 *     0   4  word id (as in LexOrder; bits 0–2 the class)
 *     4   8  ref_pos: body offset of the word's entry in WordIndex (u64, low
 *            u32 first); 0 with chain size 0 for words without chains
 *     12  4  chain size: bytes of the word's chains (WordIndex's size field)
 *     16  1  frequency, logarithmic, scaled to 0–255
 *     17  2  context slot (u16)
 *     19  1  length L, 1–255
 *     20  L  the word, UTF-8
 *   The seed's record keeps the class in its own byte and the chain length in
 *   4 KiB pages; here the id (which holds the class) lets the searcher check
 *   the WordIndex entry it reads, and the exact size lets it read the chains
 *   in one read. The seed's complexes (context pairs) are not built yet.
 *
 * lexiconOrder is the seed's: by length in characters, then without accents,
 * then with accents; the length counted is that of the accent-free form, so
 * that the accent variants of a word are always adjacent (for precomposed
 * letters the two lengths agree). The accent-free form is words.ts's plain
 * form, the one queries are matched on (so "straße" and "strasse" are
 * variants). Strings compare by code point.
 *
 * Readers hold the whole body (its CRC checked) and check every record:
 * class, length, UTF-8, and the order the file promises.
 */

import { IndexFileWriter, readIndexFile, type IndexFormat, type WholeIndexFile } from './index-file.js';
import { plainForm } from './words.js';

/** The original's word classes (sherlock-original §4 item 8), by their number in an id's low 3 bits. */
export const WORD_CLASSES = ['normal', 'ignored', 'garbage', 'context', 'complex', 'break'] as const;
export type WordClass = (typeof WORD_CLASSES)[number];
export const MAX_WORD_BYTES = 255;

export const LEXRAW_FORMAT: IndexFormat = { magic: 'SHERLOCK-LEXRAW', version: 1, fields: ['words'], what: 'LexRaw' };
export const LEXBYFREQ_FORMAT: IndexFormat = { magic: 'SHERLOCK-LEXFREQ', version: 1, fields: ['words'], what: 'LexByFreq' };
export const LEXORDER_FORMAT: IndexFormat = { magic: 'SHERLOCK-LEXORD', version: 1, fields: ['words'], what: 'LexOrder' };
export const LEXICON_FORMAT: IndexFormat = { magic: 'SHERLOCK-LEXICON', version: 1, fields: ['words'], what: 'Lexicon' };

export type LexListFormat = typeof LEXRAW_FORMAT | typeof LEXBYFREQ_FORMAT | typeof LEXORDER_FORMAT;

export interface LexWord {
  /** Bits 0–2: the class (index into WORD_CLASSES). */
  id: number;
  frequency: number;
  context: number;
  word: string;
}

export interface LexiconEntry {
  id: number;
  /** Body offset of the word's entry in WordIndex. */
  refPos: number;
  /** Bytes of its chains; 0 when it has none. */
  chainSize: number;
  /** 0–255, logarithmic. */
  frequency: number;
  context: number;
  word: string;
}

export function wordClass(id: number): WordClass | undefined {
  return WORD_CLASSES[id & 7];
}

interface OrderKey {
  length: number;
  stripped: Buffer;
  bytes: Buffer;
}

function orderKey(word: string): OrderKey {
  const stripped = plainForm(word);
  return { length: [...stripped].length, stripped: Buffer.from(stripped, 'utf8'), bytes: Buffer.from(word, 'utf8') };
}

function compareKeys(a: OrderKey, b: OrderKey): number {
  return a.length - b.length || Buffer.compare(a.stripped, b.stripped) || Buffer.compare(a.bytes, b.bytes);
}

/** The Lexicon's order (module comment); UTF-8 byte order is code-point order. */
export function lexiconOrder(a: string, b: string): number {
  return compareKeys(orderKey(a), orderKey(b));
}

// ---------------------------------------------------------------- shared record parts

function checkU32(value: number, what: string): void {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new RangeError(`${what} ${value} is not a u32`);
}

/**
 * A record of `fixed` bytes followed by the word's length byte and bytes,
 * the id (bytes 0–3) and context (at `contextAt`) written and checked; the
 * caller fills in the rest of the fixed part.
 */
function wordRecord(fixed: number, contextAt: number, entry: { id: number; context: number; word: string }): Buffer {
  const { id, context, word } = entry;
  checkU32(id, 'word id');
  if (wordClass(id) === undefined) throw new RangeError(`word id ${id}: undefined class ${id & 7}`);
  if (!Number.isInteger(context) || context < 0 || context > 0xffff) throw new RangeError(`context ${context} is not a u16`);
  const bytes = Buffer.from(word, 'utf8');
  if (bytes.length === 0 || bytes.length > MAX_WORD_BYTES) throw new RangeError(`word ${JSON.stringify(word)} is not 1–${MAX_WORD_BYTES} bytes of UTF-8`);
  const record = Buffer.alloc(fixed + 1 + bytes.length);
  record.writeUInt32LE(id, 0);
  record.writeUInt16LE(context, contextAt);
  record[fixed] = bytes.length;
  bytes.copy(record, fixed + 1);
  return record;
}

/** Writes one record per item, made (and checked) by `encode`; the count goes in the header. */
function writeRecords<T>(file: string, format: IndexFormat, items: Iterable<T>, encode: (item: T, n: number) => Buffer): void {
  const out = new IndexFileWriter(file, format);
  try {
    let n = 0;
    for (const item of items) out.write(encode(item, n++));
    out.finish([n]);
  } catch (err) {
    out.abort();
    throw err;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Reads the length byte and word at `pos`, checking the id's class; returns the word and the offset after it. */
function readWord(file: WholeIndexFile, id: number, idAt: number, pos: number): { word: string; next: number } {
  const { body } = file;
  if (wordClass(id) === undefined) throw file.corrupt(idAt, `word id ${id}: undefined class ${id & 7}`);
  if (pos >= body.length) throw file.corrupt(pos, 'record cut short before its word length');
  const length = body[pos]!;
  if (length === 0) throw file.corrupt(pos, 'empty word');
  if (pos + 1 + length > body.length) throw file.corrupt(pos, `word of ${length} bytes runs past the body`);
  try {
    return { word: utf8.decode(body.subarray(pos + 1, pos + 1 + length)), next: pos + 1 + length };
  } catch {
    throw file.corrupt(pos + 1, 'word is not valid UTF-8');
  }
}

/** The records of a word file, each `fixed` bytes then the word; the class, the bounds and the count are checked. */
function* wordRecords(file: string, format: IndexFormat, fixed: number): IterableIterator<{ whole: WholeIndexFile; pos: number; id: number; word: string }> {
  const whole = readIndexFile(file, format);
  const { body } = whole;
  let pos = 0;
  let count = 0;
  while (pos < body.length) {
    if (pos + fixed > body.length) throw whole.corrupt(pos, `record cut short: ${body.length - pos} of its first ${fixed} bytes`);
    const id = body.readUInt32LE(pos);
    const { word, next } = readWord(whole, id, pos, pos + fixed);
    yield { whole, pos, id, word };
    pos = next;
    count += 1;
  }
  if (count !== whole.fields[0]) throw whole.corrupt(pos, `${count} words found, the header says ${whole.fields[0]}`);
}

// ---------------------------------------------------------------- LexRaw, LexByFreq, LexOrder

const LEX_FIXED = 10;

/** Checks the order a word list promises; returns a message if `word` (number `n`) breaks it. */
function listOrderProblem(format: LexListFormat, n: number, word: LexWord, previous: LexWord | undefined): string | undefined {
  if (format === LEXORDER_FORMAT && word.id >>> 3 !== n + 1) return `id ${word.id} at record ${n}: LexOrder ids run 8, 16, 24, … (id >> 3 = ${n + 1})`;
  if (format === LEXBYFREQ_FORMAT && previous !== undefined && word.frequency > previous.frequency) {
    return `frequency ${word.frequency} after ${previous.frequency}: LexByFreq is sorted by frequency, highest first`;
  }
  return undefined;
}

export function writeLexList(file: string, format: LexListFormat, words: Iterable<LexWord>): void {
  let previous: LexWord | undefined;
  writeRecords(file, format, words, (entry, n) => {
    const record = wordRecord(LEX_FIXED, 8, entry);
    checkU32(entry.frequency, 'frequency');
    const problem = listOrderProblem(format, n, entry, previous);
    if (problem !== undefined) throw new RangeError(problem);
    record.writeUInt32LE(entry.frequency, 4);
    previous = entry;
    return record;
  });
}

export function readLexList(file: string, format: LexListFormat): LexWord[] {
  const words: LexWord[] = [];
  for (const { whole, pos, id, word } of wordRecords(file, format, LEX_FIXED)) {
    const entry = { id, frequency: whole.body.readUInt32LE(pos + 4), context: whole.body.readUInt16LE(pos + 8), word };
    const problem = listOrderProblem(format, words.length, entry, words[words.length - 1]);
    if (problem !== undefined) throw whole.corrupt(pos, problem);
    words.push(entry);
  }
  return words;
}

// ---------------------------------------------------------------- Lexicon

const LEXICON_FIXED = 19;
const TWO_32 = 2 ** 32;

/** Writes the Lexicon; entries must come in lexiconOrder, each word once. */
export function writeLexicon(file: string, entries: Iterable<LexiconEntry>): void {
  let previous: OrderKey | undefined;
  writeRecords(file, LEXICON_FORMAT, entries, (entry) => {
    const record = wordRecord(LEXICON_FIXED, 17, entry);
    if (!Number.isSafeInteger(entry.refPos) || entry.refPos < 0) throw new RangeError(`ref_pos ${entry.refPos} is not a file offset`);
    checkU32(entry.chainSize, 'chain size');
    if (!Number.isInteger(entry.frequency) || entry.frequency < 0 || entry.frequency > 255) throw new RangeError(`frequency ${entry.frequency} outside 0–255`);
    const key = orderKey(entry.word);
    if (previous !== undefined && compareKeys(previous, key) >= 0) throw new RangeError(`word ${JSON.stringify(entry.word)} out of lexicon order`);
    previous = key;
    record.writeUInt32LE(entry.refPos % TWO_32, 4);
    record.writeUInt32LE(Math.floor(entry.refPos / TWO_32), 8);
    record.writeUInt32LE(entry.chainSize, 12);
    record[16] = entry.frequency;
    return record;
  });
}

/** The Lexicon in memory: lookup by exact word or by its accent-free form. */
export class Lexicon {
  private constructor(
    readonly entries: readonly LexiconEntry[],
    private readonly keys: readonly OrderKey[],
  ) {}

  static open(file: string): Lexicon {
    const entries: LexiconEntry[] = [];
    const keys: OrderKey[] = [];
    for (const { whole, pos, id, word } of wordRecords(file, LEXICON_FORMAT, LEXICON_FIXED)) {
      const { body } = whole;
      const key = orderKey(word);
      const last = keys[keys.length - 1];
      if (last !== undefined && compareKeys(last, key) >= 0) throw whole.corrupt(pos, `word ${JSON.stringify(word)} out of lexicon order`);
      entries.push({
        id,
        refPos: body.readUInt32LE(pos + 4) + body.readUInt32LE(pos + 8) * TWO_32,
        chainSize: body.readUInt32LE(pos + 12),
        frequency: body[pos + 16]!,
        context: body.readUInt16LE(pos + 17),
        word,
      });
      keys.push(key);
    }
    return new Lexicon(entries, keys);
  }

  /** Index of the first entry whose key is not below `key`, comparing with `compare`. */
  private lowerBound(key: OrderKey, compare: (a: OrderKey, b: OrderKey) => number): number {
    let low = 0;
    let high = this.keys.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compare(this.keys[mid]!, key) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** The entry of exactly this word. */
  lookup(word: string): LexiconEntry | undefined {
    const key = orderKey(word);
    const i = this.lowerBound(key, compareKeys);
    return i < this.keys.length && compareKeys(this.keys[i]!, key) === 0 ? this.entries[i] : undefined;
  }

  /** Every entry that is `word` up to accents (the word itself included), in lexicon order. */
  variants(word: string): LexiconEntry[] {
    const key = orderKey(word);
    const strippedOnly = (a: OrderKey, b: OrderKey) => a.length - b.length || Buffer.compare(a.stripped, b.stripped);
    const out: LexiconEntry[] = [];
    for (let i = this.lowerBound(key, strippedOnly); i < this.keys.length && strippedOnly(this.keys[i]!, key) === 0; i++) out.push(this.entries[i]!);
    return out;
  }
}
