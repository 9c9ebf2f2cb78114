/**
 * The word lists of the lexicon stage (DESIGN §6 stage 6) and the Lexicon the
 * searcher looks words up in. Layouts after the seed (seeds/003 "LexRaw,
 * LexByFreq, LexOrder" and "Lexicon"); the seed's leading u32 word_count is
 * the header's count field here.
 *
 * LexRaw, LexByFreq, LexOrder: one record format, three magics.
 *   Header fields (file.ts): 0 word count N
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
 *   Body: N records, in lexiconOrder (format 3)
 *     0     1  the word class (bits 0–2 of its id); record n is word id
 *              8·(n + 1) + class, as in LexOrder
 *     1     v  chain size: bytes of the word's chains (WordIndex's size
 *              field), a utf8_32 varint (bucket.ts); 0 for a word without
 *     1+v   1  frequency, logarithmic, scaled to 0–255
 *     2+v   2  context slot (u16)
 *     4+v   1  length L, 1–255
 *     5+v   L  the word, UTF-8
 *     5+v+L 1  stem language: its number (common/language/codes.ts), 0 when
 *              the word has no stem (no stemmer for its language); then:
 *     6+v+L 1  K: characters (code points) of the plain form the stem keeps
 *     7+v+L 1  T: bytes of the stem's tail, 0–255
 *     8+v+L T  the tail, UTF-8: the stem is the plain form's first K
 *              characters and the tail (common/language/stem.ts)
 *   Words of one (language, stem) are a stem class: a query word stemmed
 *   under that language finds them all (Lexicon#stemClass). Format 2 had no
 *   stems, 3 bytes a stemmed word less, and is refused.
 *   A word's ref_pos (the body offset of its WordIndex entry) is not stored:
 *   the writer puts the entries in Lexicon order, so it is the sum of the
 *   entries before it (WORDINDEX_ENTRY_HEAD + chain size each), which the
 *   reader adds up; the writer refuses a ref_pos that breaks this. Like the
 *   seed's, the record keeps the class in its own byte; the id lets the
 *   searcher check the WordIndex entry it reads, and the exact size lets it
 *   read the chains in one read (the seed counted 4 KiB pages). Format 1
 *   held the id (u32), ref_pos (u64) and size (u32) in full, 13 bytes a
 *   word more, and is refused naming the file. The seed's complexes
 *   (context pairs) are not built yet.
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

import { decodeVarint, encodeVarint } from '../bucket/bucket.js';
import { isSherlockError } from '../errors.js';
import { WORDINDEX_ENTRY_HEAD } from './chains.js';
import { IndexFileWriter, readIndexFile, type IndexFormat, type WholeIndexFile } from './file.js';
import { plainForm, spellingHash } from '../words.js';

/** The original's word classes (sherlock-original §4 item 8), by their number in an id's low 3 bits. */
export const WORD_CLASSES = ['normal', 'ignored', 'garbage', 'context', 'complex', 'break'] as const;
export type WordClass = (typeof WORD_CLASSES)[number];
export const MAX_WORD_BYTES = 255;

export const LEXRAW_FORMAT: IndexFormat = { magic: 'SHERLOCK-LEXRAW', version: 1, fields: ['words'], what: 'LexRaw' };
export const LEXBYFREQ_FORMAT: IndexFormat = { magic: 'SHERLOCK-LEXFREQ', version: 1, fields: ['words'], what: 'LexByFreq' };
export const LEXORDER_FORMAT: IndexFormat = { magic: 'SHERLOCK-LEXORD', version: 1, fields: ['words'], what: 'LexOrder' };
export const LEXICON_FORMAT: IndexFormat = { magic: 'SHERLOCK-LEXICON', version: 3, fields: ['words'], what: 'Lexicon' };

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
  /** Its plain form (words.ts plainForm), when the writer has it: spares forming it again for the order check. */
  plain?: string;
  /** The language its stem is of (common/language/codes.ts), 0 for none. */
  stemLanguage: number;
  /** Its stem (common/language/stem.ts), its plain form when it has none. */
  stem: string;
}

export function wordClass(id: number): WordClass | undefined {
  return WORD_CLASSES[id & 7];
}

/** What the Lexicon's order compares of a word (lexiconOrder). */
export interface OrderKey {
  plain: string;
  length: number;
  word: string;
  careful: boolean;
}

/** UTF-16 order is code-point order (UTF-8 byte order) unless a surrogate meets U+E000–U+FFFF. */
const HIGH = /[\ud800-\uffff]/;

/** Whether comparing `s` needs codePointCompare's careful way. */
function needsCare(s: string): boolean {
  return HIGH.test(s);
}

/** Code-point order of two strings; `careful` when either holds a character of U+D800 or above (needsCare). */
function codePointCompare(a: string, b: string, careful: boolean): number {
  if (a === b) return 0;
  if (careful) return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  return a < b ? -1 : 1;
}

/** The order key of `word`, whose plain form is `plain`. */
export function orderKey(word: string, plain = plainForm(word)): OrderKey {
  const careful = needsCare(plain) || needsCare(word);
  return { plain, length: careful ? [...plain].length : plain.length, word, careful };
}

export function compareKeys(a: OrderKey, b: OrderKey): number {
  const careful = a.careful || b.careful;
  return a.length - b.length || codePointCompare(a.plain, b.plain, careful) || codePointCompare(a.word, b.word, careful);
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
  const { id, context } = entry;
  const bytes = checkedWord(entry);
  const record = Buffer.alloc(fixed + 1 + bytes.length);
  record.writeUInt32LE(id, 0);
  record.writeUInt16LE(context, contextAt);
  record[fixed] = bytes.length;
  bytes.copy(record, fixed + 1);
  return record;
}

/** The word's UTF-8 bytes, after checking them, the id's class and the context. */
function checkedWord(entry: { id: number; context: number; word: string }): Buffer {
  const { id, context, word } = entry;
  checkU32(id, 'word id');
  if (wordClass(id) === undefined) throw new RangeError(`word id ${id}: undefined class ${id & 7}`);
  if (!Number.isInteger(context) || context < 0 || context > 0xffff) throw new RangeError(`context ${context} is not a u16`);
  const bytes = Buffer.from(word, 'utf8');
  if (bytes.length === 0 || bytes.length > MAX_WORD_BYTES) throw new RangeError(`word ${JSON.stringify(word)} is not 1–${MAX_WORD_BYTES} bytes of UTF-8`);
  return bytes;
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

/**
 * Writes the Lexicon; entries must come in lexiconOrder, each word once, ids
 * as LexOrder's, and the words with chains at the ref_pos their WordIndex
 * entries take in that order (0 for the others).
 */
export function writeLexicon(file: string, entries: Iterable<LexiconEntry>): void {
  let previous: OrderKey | undefined;
  let refPos = 0;
  writeRecords(file, LEXICON_FORMAT, entries, (entry, n) => {
    const bytes = checkedWord(entry);
    const key = orderKey(entry.word, entry.plain);
    if (previous !== undefined && compareKeys(previous, key) >= 0) throw new RangeError(`word ${JSON.stringify(entry.word)} out of lexicon order`);
    previous = key;
    if (entry.id >>> 3 !== n + 1) throw new RangeError(`id ${entry.id} at record ${n}: Lexicon ids run 8, 16, 24, … (id >> 3 = ${n + 1})`);
    checkU32(entry.chainSize, 'chain size');
    if (entry.refPos !== (entry.chainSize === 0 ? 0 : refPos)) throw new RangeError(`ref_pos ${entry.refPos} of ${JSON.stringify(entry.word)}: the WordIndex entries follow in Lexicon order, ${entry.chainSize === 0 ? 0 : refPos} expected`);
    if (!Number.isInteger(entry.frequency) || entry.frequency < 0 || entry.frequency > 255) throw new RangeError(`frequency ${entry.frequency} outside 0–255`);
    if (entry.chainSize > 0) refPos += WORDINDEX_ENTRY_HEAD + entry.chainSize;
    const size = encodeVarint(entry.chainSize);
    const stem = stemParts(entry, key);
    const record = Buffer.alloc(1 + size.length + 4 + bytes.length + 1 + (stem === undefined ? 0 : 2 + stem.tail.length));
    record[0] = entry.id & 7;
    size.copy(record, 1);
    let at = 1 + size.length;
    record[at++] = entry.frequency;
    at = record.writeUInt16LE(entry.context, at);
    record[at++] = bytes.length;
    at += bytes.copy(record, at);
    record[at++] = entry.stemLanguage;
    if (stem !== undefined) {
      record[at++] = stem.keep;
      record[at++] = stem.tail.length;
      stem.tail.copy(record, at);
    }
    return record;
  });
}

/** The stem as the plain form's first `keep` characters and a tail; undefined for a word without a stem. */
function stemParts(entry: LexiconEntry, key: OrderKey): { keep: number; tail: Buffer } | undefined {
  const { stemLanguage, stem, word } = entry;
  if (!Number.isInteger(stemLanguage) || stemLanguage < 0 || stemLanguage > 255) throw new RangeError(`stem language ${stemLanguage} of ${JSON.stringify(word)} is not a byte`);
  if (stemLanguage === 0) return undefined;
  const plain = [...key.plain];
  const stemChars = [...stem];
  let keep = 0;
  while (keep < plain.length && keep < stemChars.length && keep < 255 && plain[keep] === stemChars[keep]) keep++;
  const tail = Buffer.from(stemChars.slice(keep).join(''), 'utf8');
  if (stem === '' || tail.length > 255) throw new RangeError(`stem ${JSON.stringify(stem)} of ${JSON.stringify(word)}: empty, or its tail past the plain form over 255 bytes`);
  return { keep, tail };
}

/** Reads a record's stem after its word at `pos`; returns it (the plain form when none) and the offset after it. */
function readStem(file: WholeIndexFile, pos: number, key: OrderKey): { language: number; stem: string; next: number } {
  const { body } = file;
  if (pos >= body.length) throw file.corrupt(pos, 'record cut short before its stem language');
  const language = body[pos]!;
  if (language === 0) return { language, stem: key.plain, next: pos + 1 };
  if (pos + 3 > body.length) throw file.corrupt(pos, 'record cut short in its stem');
  const keep = body[pos + 1]!;
  const tailLength = body[pos + 2]!;
  if (pos + 3 + tailLength > body.length) throw file.corrupt(pos + 2, `stem tail of ${tailLength} bytes runs past the body`);
  const kept = key.careful ? [...key.plain].slice(0, keep).join('') : key.plain.slice(0, keep);
  if (kept.length < keep) throw file.corrupt(pos + 1, `stem keeps ${keep} characters of a plain form of ${key.length}`);
  let tail: string;
  try {
    tail = utf8.decode(body.subarray(pos + 3, pos + 3 + tailLength));
  } catch {
    throw file.corrupt(pos + 3, 'stem tail is not valid UTF-8');
  }
  if (kept + tail === '') throw file.corrupt(pos, 'empty stem');
  return { language, stem: kept + tail, next: pos + 3 + tailLength };
}

/** An open-addressing table of strings (their first entry + 1 per slot): built in milliseconds where a Map of 140,000 strings took a fifth of a second. */
function slotsFor(count: number): Int32Array {
  return new Int32Array(2 ** Math.ceil(Math.log2(2 * count + 2)));
}

/** Columns filled while a Lexicon's records are read, one element per word of the header's count. */
class Columns {
  count = 0;
  /** Where each word, plain form and stem is in the text (UTF-8), and its bytes. */
  readonly wordAt: Uint32Array;
  readonly wordBytes: Uint8Array;
  readonly plainAt: Uint32Array;
  readonly plainBytes: Uint8Array;
  readonly stemAt: Uint32Array;
  readonly stemBytes: Uint16Array;
  readonly ids: Uint32Array;
  readonly refPos: Float64Array;
  readonly chainSizes: Float64Array;
  readonly frequencies: Uint8Array;
  readonly contexts: Uint16Array;
  readonly stemLanguages: Uint8Array;
  /** Each plain form's length in code points (the Lexicon's first order key). */
  readonly plainLengths: Uint16Array;
  /** spellingHash of each plain form and of each (language, stem), for the tables; dropped after. */
  plainHashes: Int32Array;
  stemHashes: Int32Array;
  /** Plain forms and stems that are not a word's bytes, to follow the body in the text. */
  extra = Buffer.allocUnsafe(1 << 16);
  extraBytes = 0;

  constructor(
    readonly words: number,
    private readonly bodyLength: number,
  ) {
    this.wordAt = new Uint32Array(words);
    this.wordBytes = new Uint8Array(words);
    this.plainAt = new Uint32Array(words);
    this.plainBytes = new Uint8Array(words);
    this.stemAt = new Uint32Array(words);
    this.stemBytes = new Uint16Array(words);
    this.ids = new Uint32Array(words);
    this.refPos = new Float64Array(words);
    this.chainSizes = new Float64Array(words);
    this.frequencies = new Uint8Array(words);
    this.contexts = new Uint16Array(words);
    this.stemLanguages = new Uint8Array(words);
    this.plainLengths = new Uint16Array(words);
    this.plainHashes = new Int32Array(words);
    this.stemHashes = new Int32Array(words);
  }

  /** Where `text` (UTF-8) lands after the body: appended once. */
  place(text: string): { at: number; bytes: number } {
    // A UTF-16 unit takes at most 3 bytes of UTF-8.
    if (this.extraBytes + 3 * text.length > this.extra.length) {
      const grown = Buffer.allocUnsafe(2 * this.extra.length + 3 * text.length);
      this.extra.copy(grown, 0, 0, this.extraBytes);
      this.extra = grown;
    }
    const at = this.bodyLength + this.extraBytes;
    const bytes = this.extra.write(text, this.extraBytes, 'utf8');
    this.extraBytes += bytes;
    return { at, bytes };
  }
}

const stemHash = (language: number, stem: string): number => spellingHash(stem, 0, stem.length) ^ Math.imul(language, 0x9e3779b1);

/** A Lexicon record as read in order; `wordAt`: the body offset of its word's length byte. */
export interface LexiconRecord {
  n: number;
  pos: number;
  id: number;
  chainSize: number;
  refPos: number;
  frequency: number;
  context: number;
  word: string;
  wordAt: number;
  key: OrderKey;
  language: number;
  stem: string;
}

/**
 * The records of a Lexicon file read whole, in order, checked (classes,
 * bounds, UTF-8, lexicon order, the header's count at the end): what
 * Lexicon.open makes its columns of, and what the suggest stage walks
 * without holding them.
 */
export function* lexiconRecords(whole: WholeIndexFile): Generator<LexiconRecord> {
  let last: OrderKey | undefined;
  const { body } = whole;
  let refPos = 0;
  let n = 0;
  for (let pos = 0; pos < body.length; n++) {
    if (body[pos]! >= WORD_CLASSES.length) throw whole.corrupt(pos, `undefined word class ${body[pos]}`);
    const id = 8 * (n + 1) + body[pos]!;
    let size;
    try {
      size = decodeVarint(body, pos + 1);
    } catch (err) {
      if (!isSherlockError(err)) throw err;
      throw whole.corrupt(err.place.offset ?? pos + 1, `chain size: ${err.message}`);
    }
    const fixed = size.next + 3;
    if (fixed > body.length) throw whole.corrupt(pos, `record cut short: ${body.length - pos} bytes before its word`);
    const { word, next: stemAt } = readWord(whole, id, pos, fixed);
    const key = orderKey(word);
    if (last !== undefined && compareKeys(last, key) >= 0) throw whole.corrupt(pos, `word ${JSON.stringify(word)} out of lexicon order`);
    const { language, stem, next } = readStem(whole, stemAt, key);
    const chainSize = size.value;
    yield { n, pos, id, chainSize, refPos: chainSize === 0 ? 0 : refPos, frequency: body[size.next]!, context: body.readUInt16LE(size.next + 1), word, wordAt: fixed, key, language, stem };
    if (chainSize > 0) refPos += WORDINDEX_ENTRY_HEAD + chainSize;
    last = key;
    pos = next;
  }
  if (n !== whole.fields[0]) throw whole.corrupt(body.length, `${n} words found, the header says ${whole.fields[0]}`);
}

/**
 * The Lexicon in memory: lookup by exact word, by its accent-free form, or
 * by stem class. Held as columns (typed arrays and one buffer of UTF-8
 * text), not an object and strings per word: a million words as objects
 * were some hundred megabytes of heap that every full garbage collection
 * walked (30 ms at 250,000 words, each time), in every search thread. An
 * entry is made as an object when a query asks for it (entry()).
 */
export class Lexicon {
  readonly count: number;
  /** Each entry's frequency byte (0–255, logarithmic), by entry number. */
  readonly frequencies: Uint8Array;
  /** The stem languages the words have, each once (numbers of common/language/codes.ts). */
  readonly stemLanguages: readonly number[];
  /** The body's bytes, then the plain forms and stems that are not a word's own bytes. */
  private readonly text: Buffer;
  private readonly c: Columns;
  /**
   * Accent variants lie side by side in lexicon order: an open-addressing
   * table on the plain form's spellingHash gives the first entry of its run
   * (+ 1; 0 is a free slot), and per first entry where its run ends. A query
   * word is one probe, not a binary search of Buffer comparisons.
   */
  private readonly runs: Int32Array;
  private readonly runEnd: Uint32Array;
  /**
   * Stem classes: a table on the hash of language and stem gives a class's
   * first entry (+ 1), and each entry the next of its class (+ 1; 0 ends).
   */
  private readonly stemClasses: Int32Array;
  private readonly nextInClass: Int32Array;
  /** Where each plain-form length (in code points) starts and ends in lexicon order (its first and last entry + 1). */
  private readonly lengths = new Map<number, [number, number]>();

  private constructor(body: Buffer, columns: Columns) {
    const n = columns.count;
    const { plainLengths } = columns;
    this.count = n;
    this.c = columns;
    this.text = Buffer.concat([body, columns.extra.subarray(0, columns.extraBytes)]);
    columns.extra = Buffer.alloc(0);
    this.frequencies = columns.frequencies;
    this.runEnd = new Uint32Array(n);
    this.runs = slotsFor(n);
    const mask = this.runs.length - 1;
    let first = 0;
    for (let i = 1; i <= n; i++) {
      if (i < n && this.samePlain(i, first)) continue;
      let slot = columns.plainHashes[first]! & mask;
      while (this.runs[slot] !== 0) slot = (slot + 1) & mask;
      this.runs[slot] = first + 1;
      this.runEnd[first] = i;
      first = i;
    }
    this.stemClasses = slotsFor(n);
    this.nextInClass = new Int32Array(n);
    const last = new Int32Array(n);
    const languages = new Set<number>();
    const stemMask = this.stemClasses.length - 1;
    for (let i = 0; i < n; i++) {
      const language = columns.stemLanguages[i]!;
      if (language === 0) continue;
      languages.add(language);
      let slot = columns.stemHashes[i]! & stemMask;
      for (let head = this.stemClasses[slot]!; head !== 0 && !this.sameStem(head - 1, i); head = this.stemClasses[slot]!) slot = (slot + 1) & stemMask;
      const head = this.stemClasses[slot]!;
      if (head === 0) this.stemClasses[slot] = i + 1;
      else this.nextInClass[last[head - 1]!] = i + 1;
      last[head === 0 ? i : head - 1] = i;
    }
    this.stemLanguages = [...languages].sort((a, b) => a - b);
    for (let i = 0; i < n; i++) {
      const range = this.lengths.get(plainLengths[i]!);
      if (range === undefined) this.lengths.set(plainLengths[i]!, [i, i + 1]);
      else range[1] = i + 1;
    }
    // The hashes served the tables; the columns keep what lookups read.
    columns.plainHashes = new Int32Array(0);
    columns.stemHashes = new Int32Array(0);
  }

  private samePlain(a: number, b: number): boolean {
    const { plainAt, plainBytes } = this.c;
    return plainBytes[a] === plainBytes[b] && this.text.compare(this.text, plainAt[b]!, plainAt[b]! + plainBytes[b]!, plainAt[a]!, plainAt[a]! + plainBytes[a]!) === 0;
  }

  private sameStem(a: number, b: number): boolean {
    const { stemAt, stemBytes, stemLanguages } = this.c;
    return stemLanguages[a] === stemLanguages[b] && stemBytes[a] === stemBytes[b] && this.text.compare(this.text, stemAt[b]!, stemAt[b]! + stemBytes[b]!, stemAt[a]!, stemAt[a]! + stemBytes[a]!) === 0;
  }

  /** Entry `i`'s word. */
  word(i: number): string {
    return this.text.toString('utf8', this.c.wordAt[i]!, this.c.wordAt[i]! + this.c.wordBytes[i]!);
  }

  /** Entry `i`'s plain form (words.ts plainForm). */
  plain(i: number): string {
    return this.text.toString('utf8', this.c.plainAt[i]!, this.c.plainAt[i]! + this.c.plainBytes[i]!);
  }

  /** Bytes of entry `i`'s chains; 0 when it has none. */
  chainSize(i: number): number {
    return this.c.chainSizes[i]!;
  }

  /** Entry `i` (in lexicon order) as an object. */
  entry(i: number): LexiconEntry {
    const { c } = this;
    const language = c.stemLanguages[i]!;
    return {
      id: c.ids[i]!,
      refPos: c.refPos[i]!,
      chainSize: c.chainSizes[i]!,
      frequency: c.frequencies[i]!,
      context: c.contexts[i]!,
      word: this.word(i),
      stemLanguage: language,
      stem: this.text.toString('utf8', c.stemAt[i]!, c.stemAt[i]! + c.stemBytes[i]!),
    };
  }

  /** Every entry, in lexicon order: for dumps and tests, not for queries. */
  all(): LexiconEntry[] {
    return Array.from({ length: this.count }, (_, i) => this.entry(i));
  }

  /** Where the entries whose plain forms have `length` code points start and end, if any. */
  lengthRange(length: number): readonly [number, number] | undefined {
    return this.lengths.get(length);
  }

  /** The entries whose plain forms start with `prefix` (itself a plain form), in lexicon order: a search by halves in each length's stretch, sorted by plain form. */
  withPrefix(prefix: string): number[] {
    const bytes = Buffer.from(prefix, 'utf8');
    const { plainAt, plainBytes } = this.c;
    // Compares entry i's plain form, cut to the prefix's length, with the prefix: UTF-8 byte order is the Lexicon's code-point order.
    const against = (i: number): number => this.text.compare(bytes, 0, bytes.length, plainAt[i]!, plainAt[i]! + Math.min(plainBytes[i]!, bytes.length));
    const out: number[] = [];
    const shortest = [...prefix].length;
    for (const [length, [from, to]] of this.lengths) {
      if (length < shortest) continue;
      let low = from;
      let high = to;
      while (low < high) {
        const mid = (low + high) >>> 1;
        if (against(mid) < 0) low = mid + 1;
        else high = mid;
      }
      for (let i = low; i < to && against(i) === 0; i++) out.push(i);
    }
    return out.sort((a, b) => a - b);
  }

  /** The words of a stem class, in lexicon order; none when no word has that stem in that language. */
  stemClass(language: number, stem: string): LexiconEntry[] {
    const mask = this.stemClasses.length - 1;
    const bytes = Buffer.from(stem, 'utf8');
    const { stemAt, stemBytes, stemLanguages } = this.c;
    let slot = stemHash(language, stem) & mask;
    for (let head = this.stemClasses[slot]!; head !== 0; head = this.stemClasses[slot]!) {
      const at = head - 1;
      if (stemLanguages[at] === language && stemBytes[at] === bytes.length && bytes.compare(this.text, stemAt[at]!, stemAt[at]! + stemBytes[at]!) === 0) {
        const out: LexiconEntry[] = [];
        for (let i = head; i !== 0; i = this.nextInClass[i - 1]!) out.push(this.entry(i - 1));
        return out;
      }
      slot = (slot + 1) & mask;
    }
    return [];
  }

  static open(file: string): Lexicon {
    const whole = readIndexFile(file, LEXICON_FORMAT);
    const { body } = whole;
    // A record takes at least 6 bytes: a header's count past that is refused before the columns are allocated for it.
    if (whole.fields[0]! > body.length / 6) throw whole.corrupt(body.length, `${body.length} bytes cannot hold the ${whole.fields[0]} words the header says`);
    const columns = new Columns(whole.fields[0]!, body.length);
    for (const { n, pos, id, chainSize, refPos, frequency, context, word, wordAt, key, language, stem } of lexiconRecords(whole)) {
      if (n === columns.words) throw whole.corrupt(pos, `more words than the ${columns.words} the header says`);
      const wordBytes = body[wordAt]!;
      const plain = key.plain === word ? { at: wordAt + 1, bytes: wordBytes } : columns.place(key.plain);
      const stemPlace = stem === key.plain ? plain : columns.place(stem);
      columns.wordAt[n] = wordAt + 1;
      columns.wordBytes[n] = wordBytes;
      columns.plainAt[n] = plain.at;
      columns.plainBytes[n] = plain.bytes;
      columns.stemAt[n] = stemPlace.at;
      columns.stemBytes[n] = stemPlace.bytes;
      columns.ids[n] = id;
      columns.refPos[n] = refPos;
      columns.chainSizes[n] = chainSize;
      columns.frequencies[n] = frequency;
      columns.contexts[n] = context;
      columns.stemLanguages[n] = language;
      columns.plainHashes[n] = spellingHash(key.plain, 0, key.plain.length);
      columns.stemHashes[n] = language === 0 ? 0 : stemHash(language, stem);
      columns.plainLengths[n] = key.length;
      columns.count += 1;
    }
    return new Lexicon(body, columns);
  }

  /** The entry of exactly this word. */
  lookup(word: string): LexiconEntry | undefined {
    return this.variants(word).find((entry) => entry.word === word);
  }

  /** The entry number of the first of `plain`'s accent variants, -1 if the Lexicon has none. */
  private firstVariant(plain: string): number {
    const bytes = Buffer.from(plain, 'utf8');
    const { plainAt, plainBytes } = this.c;
    const mask = this.runs.length - 1;
    for (let slot = spellingHash(plain, 0, plain.length) & mask; this.runs[slot] !== 0; slot = (slot + 1) & mask) {
      const first = this.runs[slot]! - 1;
      if (plainBytes[first] === bytes.length && bytes.compare(this.text, plainAt[first]!, plainAt[first]! + plainBytes[first]!) === 0) return first;
    }
    return -1;
  }

  /** Every entry that is `word` up to accents (the word itself included), in lexicon order. */
  variants(word: string): LexiconEntry[] {
    const first = this.firstVariant(plainForm(word));
    const out: LexiconEntry[] = [];
    if (first >= 0) for (let i = first; i < this.runEnd[first]!; i++) out.push(this.entry(i));
    return out;
  }
}
