/**
 * The vocabulary in segments, so that it stays within its share of
 * `indexer.memory_budget` whatever the text (docs/indexer.md "Memory"):
 * random words (hashes, base64, logs) have as many distinct words as the
 * text has words.
 *
 * Words are numbered as they come (the chewer's new words in card order,
 * then the anchor texts' words) in a Vocabulary (lexicon.ts). While it holds
 * no more than its share nothing else happens: the numbers are LexRaw's and
 * the lexicon stage sorts the Vocabulary in memory (writeLexLists), as it
 * always did. Past its share the segment is spilled: its words, sorted in
 * the Lexicon's order, go to a scratch file `vocab/segment-N` and a fresh
 * Vocabulary goes on numbering after it. A word met again in a later segment
 * gets a number there too, so a word may have several temporary numbers;
 * every number is of one segment, and Postings name words by them.
 *
 * At the lexicon stage the segments are merged (a heap over the files, one
 * small buffer each): equal words come together, in the Lexicon's order, so
 * each group is the word of the next rank. The merge gives each temporary
 * number its rank (`rankOf`, 4 bytes a number: the one table that grows with
 * the words, for the WordIndex stage), writes LexOrder and the ranked words
 * for the Lexicon (`vocab/ranked`), and files each word under the segment
 * of its first number (`vocab/first-N`: a word's first number is where the
 * text first had it). LexRaw is then those files in segment order, each put
 * in number order through a table of its segment's numbers, no sort. From
 * LexRaw on, LexByFreq: words of a frequency below 64 (most of such a
 * vocabulary) go to a file each (`vocab/frequency-F`), already in id order,
 * the others through an external sort (common/external-sort.ts), written
 * first. So the lists are the bytes the in-memory path writes, and so is
 * every index file.
 *
 * A segment file holds records in the Lexicon's order:
 *
 *   offset  size  meaning
 *   0       4     temporary number (u32)
 *   4       8     occurrences (f64)
 *   12      2     the plain form's length in code points
 *   14      1     E: bytes of the exact form
 *   15      E     the exact form, UTF-8
 *   15+E    2     P: bytes of the plain form
 *   17+E    P     the plain form, UTF-8
 *   17+E+P  1     the stem's language number (0: none)
 *   18+E+P  1     S: bytes of the stem
 *   19+E+P  S     the stem, UTF-8
 *
 * and `vocab/ranked` the words by rank: occurrences (f64), E, exact, P,
 * plain, language, S, stem. A word's stem is the one of its first number
 * (the segments' ties come in segment order), as in memory, where a word
 * keeps the stem it was first added with. All are scratch files, removed
 * with the version's directory.
 */

import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ExternalSorter } from '../common/external-sort.js';
import { LEXBYFREQ_FORMAT, LEXORDER_FORMAT, LEXRAW_FORMAT, writeLexicon, writeLexList, type LexiconEntry, type LexWord } from '../common/index/lexicon.js';
import { frequencyByte, rawId, Vocabulary } from './lexicon.js';
import { readScratch, ScratchReader, ScratchWriter } from './scratch.js';

/** Frequencies below this go to LexByFreq through a file each (in id order already); the others through an external sort. */
const RARE = 64;
/** A record's bytes at most: the fixed part, 255 bytes of exact form, a plain form of up to 64 KiB, a stem of up to 255 bytes. */
const MAX_RECORD = 19 + 255 + 0xffff + 255;

/** The current record of a segment file (views into the reader's buffer, valid until next()). */
class SegmentCursor {
  temp = 0;
  frequency = 0;
  chars = 0;
  exact: Buffer = Buffer.alloc(0);
  plain: Buffer = Buffer.alloc(0);
  stemLanguage = 0;
  stem: Buffer = Buffer.alloc(0);
  done = false;
  private length = 0;

  constructor(private readonly reader: ScratchReader) {
    this.next();
  }

  next(): void {
    const { reader } = this;
    reader.skip(this.length);
    let buffer = reader.have(15);
    if (reader.left === 0) {
      this.done = true;
      this.length = 0;
      return;
    }
    let at = reader.at;
    const exactLength = buffer[at + 14]!;
    buffer = reader.have(17 + exactLength);
    at = reader.at;
    const plainLength = buffer.readUInt16LE(at + 15 + exactLength);
    const stemAt = 17 + exactLength + plainLength;
    buffer = reader.have(stemAt + 2);
    at = reader.at;
    this.length = stemAt + 2 + buffer[at + stemAt + 1]!;
    buffer = reader.have(this.length);
    at = reader.at;
    if (reader.left < this.length) throw new RangeError('vocabulary segment cut short');
    this.stemLanguage = buffer[at + stemAt]!;
    this.stem = buffer.subarray(at + stemAt + 2, at + this.length);
    this.temp = buffer.readUInt32LE(at);
    this.frequency = buffer.readDoubleLE(at + 4);
    this.chars = buffer.readUInt16LE(at + 12);
    this.exact = buffer.subarray(at + 15, at + 15 + exactLength);
    this.plain = buffer.subarray(at + 17 + exactLength, at + 17 + exactLength + plainLength);
  }
}

/** The Lexicon's order of two cursors' words (lexicon.ts Vocabulary.lexiconOrder), then their segments. */
function before(a: SegmentCursor, b: SegmentCursor, ia: number, ib: number): boolean {
  return (a.chars - b.chars || Buffer.compare(a.plain, b.plain) || Buffer.compare(a.exact, b.exact) || ia - ib) < 0;
}

export interface Ranked {
  /** Distinct words. */
  words: number;
  /** The rank of each temporary number. */
  rankOf: Uint32Array;
  /** The words by rank (`vocab/ranked`), for the Lexicon. */
  ranked: string;
  /** Bytes of that file. */
  rankedBytes: number;
}

/** Numbers words as the chewer and the anchors meet them, in a Vocabulary that is spilled in segments past `limit` bytes. */
export class Words {
  vocabulary = new Vocabulary();
  /** The temporary number of the current segment's first word. */
  base = 0;
  private readonly segments: { path: string; bytes: number; base: number; size: number }[] = [];
  /** Segments written to disk. */
  spills = 0;

  constructor(
    private readonly dir: string,
    private readonly limit: number,
  ) {}

  /** Whether any segment went to disk (then numbers are temporary). */
  get spilled(): boolean {
    return this.spills > 0;
  }

  /** Temporary numbers given so far. */
  get numbers(): number {
    return this.base + this.vocabulary.size;
  }

  /** Bytes held. */
  get bytes(): number {
    return this.vocabulary.bytes;
  }

  /** The number of `exact` in the current segment (Vocabulary#add). */
  add(exact: string, plain: string, stemLanguage: number, stem: string): number {
    return this.base + this.vocabulary.add(exact, plain, stemLanguage, stem);
  }

  /** Whether `n` is of the current segment (an older one is on disk: the word must be added again). */
  current(n: number): boolean {
    return n >= this.base;
  }

  /** Counts `count` occurrences of `n`, of the current segment. */
  count(n: number, count: number): void {
    this.vocabulary.frequency[n - this.base]! += count;
  }

  /** Spills the current segment if it holds more than the limit; true when it did (older numbers are no longer current). */
  maybeSpill(): boolean {
    if (this.vocabulary.bytes <= this.limit || this.vocabulary.size === 0) return false;
    this.spill();
    return true;
  }

  private spill(): void {
    const { vocabulary } = this;
    mkdirSync(this.dir, { recursive: true });
    const path = join(this.dir, `segment-${String(this.segments.length).padStart(5, '0')}`);
    const out = new ScratchWriter(path);
    let bytes = 0;
    try {
      const order = vocabulary.lexiconOrder();
      for (const n of order) {
        const exact = vocabulary.exactBytes(n);
        const plain = vocabulary.plainBytes(n);
        const stem = vocabulary.stemBytes(n);
        const size = 19 + exact.length + plain.length + stem.length;
        const { buffer, at } = out.room(size);
        buffer.writeUInt32LE(this.base + n, at);
        buffer.writeDoubleLE(vocabulary.frequency[n]!, at + 4);
        buffer.writeUInt16LE(vocabulary.plainChars(n), at + 12);
        buffer[at + 14] = exact.length;
        exact.copy(buffer, at + 15);
        buffer.writeUInt16LE(plain.length, at + 15 + exact.length);
        plain.copy(buffer, at + 17 + exact.length);
        buffer[at + 17 + exact.length + plain.length] = vocabulary.stemLanguageOf(n);
        buffer[at + 18 + exact.length + plain.length] = stem.length;
        stem.copy(buffer, at + 19 + exact.length + plain.length);
        out.advance(size);
        bytes += size;
      }
    } finally {
      out.close();
    }
    this.segments.push({ path, bytes, base: this.base, size: vocabulary.size });
    this.spills += 1;
    this.base += vocabulary.size;
    this.vocabulary = new Vocabulary();
  }

  /**
   * Spills the last segment, merges them all and writes LexRaw, LexByFreq
   * and LexOrder (`files`); `budget` bounds the external sorts' lines.
   */
  rank(files: { raw: string; byFreq: string; order: string }, budget: number): Ranked {
    this.spill();
    const numbers = this.base;
    const rankOf = new Uint32Array(numbers);
    const ranked = new ScratchWriter(join(this.dir, 'ranked'));
    let rankedBytes = 0;
    const sortDir = join(this.dir, 'sort');
    mkdirSync(sortDir, { recursive: true });
    // Each word by the segment of its first number, to be put in that number's order there (LexRaw).
    const firsts = this.segments.map((_, i) => ({ out: new ScratchWriter(join(this.dir, `first-${String(i).padStart(5, '0')}`)), bytes: 0 }));
    const readers = this.segments.map((segment) => new ScratchReader(segment.path, segment.bytes));
    let words = 0;
    try {
      const cursors = readers.map((reader) => new SegmentCursor(reader));
      const heap = cursors.map((_, i) => i).filter((i) => !cursors[i]!.done);
      const less = (a: number, b: number): boolean => before(cursors[a]!, cursors[b]!, a, b);
      const down = (at: number): void => {
        for (;;) {
          const left = 2 * at + 1;
          if (left >= heap.length) return;
          const child = left + 1 < heap.length && less(heap[left + 1]!, heap[left]!) ? left + 1 : left;
          if (!less(heap[child]!, heap[at]!)) return;
          [heap[at], heap[child]] = [heap[child]!, heap[at]!];
          at = child;
        }
      };
      for (let at = (heap.length >> 1) - 1; at >= 0; at--) down(at);
      const exact = Buffer.allocUnsafe(256);
      const stem = Buffer.allocUnsafe(256);
      let plain = Buffer.allocUnsafe(MAX_RECORD);
      function* groups(): IterableIterator<LexWord> {
        while (heap.length > 0) {
          const top = cursors[heap[0]!]!;
          const exactLength = top.exact.copy(exact);
          const plainLength = top.plain.length;
          if (plainLength > plain.length) plain = Buffer.allocUnsafe(plainLength);
          top.plain.copy(plain);
          const stemLanguage = top.stemLanguage;
          const stemLength = top.stem.copy(stem);
          const word = exact.subarray(0, exactLength);
          let frequency = 0;
          // Ties come off the heap in segment order: the first cursor has the word's first number.
          const firstSegment = heap[0]!;
          const first = top.temp;
          const rank = words++;
          while (heap.length > 0 && cursors[heap[0]!]!.exact.equals(word)) {
            const cursor = cursors[heap[0]!]!;
            rankOf[cursor.temp] = rank;
            frequency += cursor.frequency;
            cursor.next();
            if (cursor.done) {
              heap[0] = heap[heap.length - 1]!;
              heap.pop();
            }
            down(0);
          }
          const size = 8 + 1 + exactLength + 2 + plainLength + 2 + stemLength;
          const room = ranked.room(size);
          room.buffer.writeDoubleLE(frequency, room.at);
          room.buffer[room.at + 8] = exactLength;
          word.copy(room.buffer, room.at + 9);
          room.buffer.writeUInt16LE(plainLength, room.at + 9 + exactLength);
          plain.copy(room.buffer, room.at + 11 + exactLength, 0, plainLength);
          room.buffer[room.at + 11 + exactLength + plainLength] = stemLanguage;
          room.buffer[room.at + 12 + exactLength + plainLength] = stemLength;
          stem.copy(room.buffer, room.at + 13 + exactLength + plainLength, 0, stemLength);
          ranked.advance(size);
          rankedBytes += size;
          const bin = firsts[firstSegment]!;
          const firstRoom = bin.out.room(13 + exactLength);
          firstRoom.buffer.writeUInt32LE(first, firstRoom.at);
          firstRoom.buffer.writeDoubleLE(frequency, firstRoom.at + 4);
          firstRoom.buffer[firstRoom.at + 12] = exactLength;
          word.copy(firstRoom.buffer, firstRoom.at + 13);
          bin.out.advance(13 + exactLength);
          bin.bytes += 13 + exactLength;
          yield { id: rawId(rank), frequency, context: 0, word: word.toString('utf8') };
        }
      }
      writeLexList(files.order, LEXORDER_FORMAT, groups());
    } finally {
      for (const reader of readers) reader.close();
      for (const bin of firsts) bin.out.close();
      ranked.close();
    }
    const segments = this.segments.splice(0);
    for (const segment of segments) rmSync(segment.path, { force: true });
    // LexRaw: each segment's words by their first number, segment after segment (a number's place in its segment is known: no sort).
    // LexByFreq from LexRaw by frequency, highest first, then id: the rare frequencies (most words) in a file each, in id order; the others sorted.
    const byFrequency = new ExternalSorter({ memoryBudget: Math.max(1 << 20, Math.floor(budget / 8)), tmpDir: sortDir });
    const MAX_FREQUENCY = 2 ** 53;
    const rare = Array.from({ length: RARE }, (_, f) => ({ out: new ScratchWriter(join(this.dir, `frequency-${f}`)), bytes: 0 }));
    const firstFiles = firsts.map((bin) => ({ path: bin.out.path, bytes: bin.bytes }));
    function* raw(): IterableIterator<LexWord> {
      let n = 0;
      for (let s = 0; s < segments.length; s++) {
        const { base, size } = segments[s]!;
        const file = firstFiles[s]!;
        const data = readScratch(file.path, file.bytes);
        const at = new Int32Array(size).fill(-1);
        for (let pos = 0; pos < data.length; pos += 13 + data[pos + 12]!) at[data.readUInt32LE(pos) - base] = pos;
        for (let local = 0; local < size; local++) {
          const pos = at[local]!;
          if (pos < 0) continue;
          const frequency = data.readDoubleLE(pos + 4);
          const exact = data.subarray(pos + 13, pos + 13 + data[pos + 12]!);
          const id = rawId(n++);
          if (frequency < RARE) {
            const bin = rare[frequency]!;
            const room = bin.out.room(5 + exact.length);
            room.buffer.writeUInt32LE(id, room.at);
            room.buffer[room.at + 4] = exact.length;
            exact.copy(room.buffer, room.at + 5);
            bin.out.advance(5 + exact.length);
            bin.bytes += 5 + exact.length;
          } else {
            byFrequency.add((MAX_FREQUENCY - frequency).toString(16).padStart(14, '0') + id.toString(16).padStart(8, '0') + exact.toString('latin1'));
          }
          yield { id, frequency, context: 0, word: exact.toString('utf8') };
        }
        rmSync(file.path, { force: true });
      }
      for (const bin of rare) bin.out.close();
    }
    try {
      writeLexList(files.raw, LEXRAW_FORMAT, raw());
      function* byFreq(): IterableIterator<LexWord> {
        for (const line of byFrequency.sorted()) {
          yield { id: parseInt(line.slice(14, 22), 16), frequency: MAX_FREQUENCY - parseInt(line.slice(0, 14), 16), context: 0, word: Buffer.from(line.slice(22), 'latin1').toString('utf8') };
        }
        for (let frequency = RARE - 1; frequency >= 0; frequency--) {
          const bin = rare[frequency]!;
          const reader = new ScratchReader(bin.out.path, bin.bytes);
          try {
            for (;;) {
              let buffer = reader.have(5);
              if (reader.left === 0) break;
              const length = buffer[reader.at + 4]!;
              buffer = reader.have(5 + length);
              if (reader.left < 5 + length) throw new RangeError(`${bin.out.path}: cut short`);
              const id = buffer.readUInt32LE(reader.at);
              const word = buffer.toString('utf8', reader.at + 5, reader.at + 5 + length);
              reader.skip(5 + length);
              yield { id, frequency, context: 0, word };
            }
          } finally {
            reader.close();
          }
        }
      }
      writeLexList(files.byFreq, LEXBYFREQ_FORMAT, byFreq());
    } finally {
      byFrequency.discard();
      rmSync(sortDir, { recursive: true, force: true });
    }
    return { words, rankOf, ranked: join(this.dir, 'ranked'), rankedBytes };
  }

  /** Removes the scratch files. */
  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Writes the Lexicon from the ranked words of a spilled vocabulary, with the place of each word's WordIndex entry (`places`, one per rank). */
export function writeRankedLexicon(file: string, ranked: Ranked, places: Iterable<{ refPos: number; chainSize: number }>): void {
  const reader = new ScratchReader(ranked.ranked, ranked.rankedBytes);
  try {
    function* entries(): IterableIterator<LexiconEntry> {
      let r = 0;
      for (const place of places) {
        let buffer = reader.have(9);
        const exactLength = buffer[reader.at + 8]!;
        buffer = reader.have(11 + exactLength);
        const plainLength = buffer.readUInt16LE(reader.at + 9 + exactLength);
        const stemAt = 11 + exactLength + plainLength;
        buffer = reader.have(stemAt + 2);
        const size = stemAt + 2 + buffer[reader.at + stemAt + 1]!;
        buffer = reader.have(size);
        if (reader.left < size) throw new RangeError(`${ranked.ranked}: cut short at rank ${r}`);
        const at = reader.at;
        const frequency = buffer.readDoubleLE(at);
        const word = buffer.toString('utf8', at + 9, at + 9 + exactLength);
        const plain = buffer.toString('utf8', at + 11 + exactLength, at + 11 + exactLength + plainLength);
        const stemLanguage = buffer[at + stemAt]!;
        const stem = buffer.toString('utf8', at + stemAt + 2, at + size);
        reader.skip(size);
        yield { id: rawId(r++), refPos: place.refPos, chainSize: place.chainSize, frequency: frequencyByte(frequency), context: 0, word, plain, stemLanguage, stem };
      }
    }
    writeLexicon(file, entries());
  } finally {
    reader.close();
  }
}
