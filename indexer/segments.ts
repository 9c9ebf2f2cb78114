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
 * for the Lexicon (`vocab/ranked`), and hands the words by their first number
 * to an external sort (common/external-sort.ts), whose order is LexRaw's (a
 * word's first number is where the text first had it), and from LexRaw on to
 * another for LexByFreq. So the lists are the bytes the in-memory path
 * writes, and so is every index file.
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
 *
 * and `vocab/ranked` the words by rank: occurrences (f64), E, exact, P,
 * plain. All are scratch files, removed with the version's directory.
 */

import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ioError } from '../common/errors.js';
import { ExternalSorter } from '../common/external-sort.js';
import { readAt } from '../common/files.js';
import { LEXBYFREQ_FORMAT, LEXORDER_FORMAT, LEXRAW_FORMAT, writeLexicon, writeLexList, type LexiconEntry, type LexWord } from '../common/index-lexicon.js';
import { frequencyByte, rawId, Vocabulary } from './lexicon.js';

const BUFFER = 256 * 1024;
/** A record's bytes at most: the fixed part, 255 bytes of exact form and a plain form of up to 64 KiB. */
const MAX_RECORD = 17 + 255 + 0xffff;

/** A scratch file written front to back through a buffer. */
class Appender {
  private readonly fd: number;
  private readonly buffer = Buffer.allocUnsafe(BUFFER);
  private used = 0;
  private written = 0;

  constructor(readonly path: string) {
    try {
      this.fd = openSync(path, 'w');
    } catch (err) {
      throw ioError(err, path, 'creating');
    }
  }

  /** Room for `n` more bytes; returns the buffer and where to write. */
  room(n: number): { buffer: Buffer; at: number } {
    if (this.used + n > this.buffer.length) this.flush();
    return { buffer: this.buffer, at: this.used };
  }

  advance(n: number): void {
    this.used += n;
  }

  private flush(): void {
    try {
      for (let at = 0; at < this.used; ) at += writeSync(this.fd, this.buffer, at, this.used - at, this.written + at);
    } catch (err) {
      throw ioError(err, this.path, 'writing');
    }
    this.written += this.used;
    this.used = 0;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

/** A scratch file read front to back, a record at a time. */
class Reader {
  private readonly fd: number;
  private buffer = Buffer.allocUnsafe(BUFFER);
  private start = 0;
  private end = 0;
  private read = 0;
  private readonly size: number;

  constructor(private readonly path: string, size: number) {
    try {
      this.fd = openSync(path, 'r');
    } catch (err) {
      throw ioError(err, path, 'opening');
    }
    this.size = size;
  }

  /** At least `n` bytes at `start` (fewer only at the end of the file); returns the buffer. */
  have(n: number): Buffer {
    if (this.end - this.start >= n || this.read === this.size) return this.buffer;
    if (n > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(n, 2 * this.buffer.length));
      this.buffer.copy(grown, 0, this.start, this.end);
      this.buffer = grown;
    } else {
      this.buffer.copy(this.buffer, 0, this.start, this.end);
    }
    this.end -= this.start;
    this.start = 0;
    const data = readAt(this.fd, this.path, Math.min(this.buffer.length - this.end, this.size - this.read), this.read);
    data.copy(this.buffer, this.end);
    this.end += data.length;
    this.read += data.length;
    return this.buffer;
  }

  get at(): number {
    return this.start;
  }

  get left(): number {
    return this.end - this.start;
  }

  skip(n: number): void {
    this.start += n;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The current record of a segment file (views into the reader's buffer, valid until next()). */
class SegmentCursor {
  temp = 0;
  frequency = 0;
  chars = 0;
  exact: Buffer = Buffer.alloc(0);
  plain: Buffer = Buffer.alloc(0);
  done = false;
  private length = 0;

  constructor(private readonly reader: Reader) {
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
    this.length = 17 + exactLength + plainLength;
    buffer = reader.have(this.length);
    at = reader.at;
    if (reader.left < this.length) throw new RangeError('vocabulary segment cut short');
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
  private readonly segments: { path: string; bytes: number }[] = [];
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

  /** The number of `exact` in the current segment. */
  add(exact: string, plain: string): number {
    return this.base + this.vocabulary.add(exact, plain);
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
    const out = new Appender(path);
    let bytes = 0;
    try {
      const order = vocabulary.lexiconOrder();
      for (const n of order) {
        const exact = vocabulary.exactBytes(n);
        const plain = vocabulary.plainBytes(n);
        const size = 17 + exact.length + plain.length;
        const { buffer, at } = out.room(size);
        buffer.writeUInt32LE(this.base + n, at);
        buffer.writeDoubleLE(vocabulary.frequency[n]!, at + 4);
        buffer.writeUInt16LE(vocabulary.plainChars(n), at + 12);
        buffer[at + 14] = exact.length;
        exact.copy(buffer, at + 15);
        buffer.writeUInt16LE(plain.length, at + 15 + exact.length);
        plain.copy(buffer, at + 17 + exact.length);
        out.advance(size);
        bytes += size;
      }
    } finally {
      out.close();
    }
    this.segments.push({ path, bytes });
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
    const ranked = new Appender(join(this.dir, 'ranked'));
    let rankedBytes = 0;
    const sortDir = join(this.dir, 'sort');
    mkdirSync(sortDir, { recursive: true });
    const byFirst = new ExternalSorter({ memoryBudget: Math.max(1 << 20, Math.floor(budget / 8)), tmpDir: sortDir });
    const readers = this.segments.map((segment) => new Reader(segment.path, segment.bytes));
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
      let plain = Buffer.allocUnsafe(MAX_RECORD);
      function* groups(): IterableIterator<LexWord> {
        while (heap.length > 0) {
          const top = cursors[heap[0]!]!;
          const exactLength = top.exact.copy(exact);
          const plainLength = top.plain.length;
          if (plainLength > plain.length) plain = Buffer.allocUnsafe(plainLength);
          top.plain.copy(plain);
          const word = exact.subarray(0, exactLength);
          let frequency = 0;
          let first = 0xffffffff;
          const rank = words++;
          while (heap.length > 0 && cursors[heap[0]!]!.exact.equals(word)) {
            const cursor = cursors[heap[0]!]!;
            rankOf[cursor.temp] = rank;
            frequency += cursor.frequency;
            first = Math.min(first, cursor.temp);
            cursor.next();
            if (cursor.done) {
              heap[0] = heap[heap.length - 1]!;
              heap.pop();
            }
            down(0);
          }
          const size = 8 + 1 + exactLength + 2 + plainLength;
          const room = ranked.room(size);
          room.buffer.writeDoubleLE(frequency, room.at);
          room.buffer[room.at + 8] = exactLength;
          word.copy(room.buffer, room.at + 9);
          room.buffer.writeUInt16LE(plainLength, room.at + 9 + exactLength);
          plain.copy(room.buffer, room.at + 11 + exactLength, 0, plainLength);
          ranked.advance(size);
          rankedBytes += size;
          const text = word.toString('utf8');
          // LexRaw's order: by first number, then the word (a number is of one word).
          byFirst.add(first.toString(16).padStart(8, '0') + frequency.toString(16).padStart(14, '0') + word.toString('latin1'));
          yield { id: rawId(rank), frequency, context: 0, word: text };
        }
      }
      writeLexList(files.order, LEXORDER_FORMAT, groups());
    } finally {
      for (const reader of readers) reader.close();
      ranked.close();
    }
    for (const segment of this.segments.splice(0)) rmSync(segment.path, { force: true });
    // LexRaw from the words by first number; LexByFreq from LexRaw by frequency, highest first, then id.
    const byFrequency = new ExternalSorter({ memoryBudget: Math.max(1 << 20, Math.floor(budget / 8)), tmpDir: sortDir });
    const MAX_FREQUENCY = 2 ** 53;
    function* raw(): IterableIterator<LexWord> {
      let n = 0;
      for (const line of byFirst.sorted()) {
        const frequency = parseInt(line.slice(8, 22), 16);
        const word = Buffer.from(line.slice(22), 'latin1');
        const id = rawId(n++);
        byFrequency.add((MAX_FREQUENCY - frequency).toString(16).padStart(14, '0') + id.toString(16).padStart(8, '0') + line.slice(22));
        yield { id, frequency, context: 0, word: word.toString('utf8') };
      }
    }
    try {
      writeLexList(files.raw, LEXRAW_FORMAT, raw());
      function* byFreq(): IterableIterator<LexWord> {
        for (const line of byFrequency.sorted()) {
          yield { id: parseInt(line.slice(14, 22), 16), frequency: MAX_FREQUENCY - parseInt(line.slice(0, 14), 16), context: 0, word: Buffer.from(line.slice(22), 'latin1').toString('utf8') };
        }
      }
      writeLexList(files.byFreq, LEXBYFREQ_FORMAT, byFreq());
    } finally {
      byFirst.discard();
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
  const reader = new Reader(ranked.ranked, ranked.rankedBytes);
  try {
    function* entries(): IterableIterator<LexiconEntry> {
      let r = 0;
      for (const place of places) {
        let buffer = reader.have(9);
        const exactLength = buffer[reader.at + 8]!;
        buffer = reader.have(11 + exactLength);
        const plainLength = buffer.readUInt16LE(reader.at + 9 + exactLength);
        const size = 11 + exactLength + plainLength;
        buffer = reader.have(size);
        if (reader.left < size) throw new RangeError(`${ranked.ranked}: cut short at rank ${r}`);
        const at = reader.at;
        const frequency = buffer.readDoubleLE(at);
        const word = buffer.toString('utf8', at + 9, at + 9 + exactLength);
        const plain = buffer.toString('utf8', at + 11 + exactLength, at + 11 + exactLength + plainLength);
        reader.skip(size);
        yield { id: rawId(r++), refPos: place.refPos, chainSize: place.chainSize, frequency: frequencyByte(frequency), context: 0, word, plain };
      }
    }
    writeLexicon(file, entries());
  } finally {
    reader.close();
  }
}
