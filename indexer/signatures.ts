/**
 * Near-duplicate signatures (sherlock-original §4 item 6, the matcher):
 * Broder's min-hash shingles. A shingle is a rolling hash over the last k
 * words of the card's title and text, link blocks left out (doc-text.ts
 * linkBlocks: a site's menus are on every page, and made distinct pages
 * of little text alike); N bins each keep the least scrambled shingle
 * (Shingler). Two cards whose word sets share a fraction J of their
 * shingles have each min-hash equal with probability about J, so they are
 * near-duplicates when at least `threshold` of their N min-hashes are equal
 * (`indexer.signature_threshold`).
 *
 *   Signatures (chew → merge)             magic SHERLOCK-SIGNATS
 *     Header fields: 0 records, 1 N (min-hashes per record)
 *     Body: one record per card, in card order (seed: "u32 id, u32
 *     signature[Matcher.Signatures]"), so record i is card i; the min-hashes
 *     of a card without a signature (empty, or fewer shingles than N) are
 *     all zero and never compared
 *       0   4  card id
 *       4  4N  the min-hashes
 *
 * Candidate pairs without comparing all pairs: with d = N − threshold
 * allowed differences, the first (d + 1)·⌊N/(d + 1)⌋ min-hashes are cut into
 * d + 1 bands; at most d bands hold a differing min-hash, so a near-duplicate
 * pair agrees on a whole band (pigeonhole: no pair is missed). Per band the
 * cards are sorted by the band's hash (8 bytes a card, the file streamed
 * once per band); equal hashes are candidates, verified on all N min-hashes
 * read back from the file: every pair of a small class, each member against
 * the first in a large one (mostly copies of one page).
 */

import { closeSync } from 'node:fs';
import { readAt } from '../common/files.js';
import { INDEX_HEADER_SIZE, IndexFileReader, openRead, type IndexFormat } from '../common/index/file.js';
import { FNV_START, fnv } from '../common/words.js';
import { WorkFileWriter } from './work-files.js';

export const SIGNATURES_FORMAT: IndexFormat = { magic: 'SHERLOCK-SIGNATS', version: 1, fields: ['records', 'hashes'], what: 'Signatures' };

export interface SignatureSettings {
  /** N: min-hashes per card. */
  hashes: number;
  /** k: words per shingle. */
  words: number;
}

/** The rolling hash's base (odd, so every window of words weighs each word differently). */
const BASE = 0x01000193;

/** Classes of equal band hashes up to this size are verified pair by pair. */
const ALL_PAIRS = 32;

/** An empty bin of a one-permutation signature (no shingle fell in it); no hash takes this value. */
const EMPTY = 0xffffffff;

/** Scrambles a 32-bit value (murmur3's finaliser): every bit of the input moves about half the output's. */
function scramble(value: number): number {
  let h = Math.imul(value ^ (value >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Builds the signature of one card word by word: one-permutation min-hash.
 * Each shingle is scrambled once; its top bits choose one of N bins and the
 * bin keeps its least value. Two cards' bins agree about as often as N
 * separate min-hashes would (Li, Owen and Zhang 2012, "One permutation
 * hashing"), for one multiplication a shingle instead of N. A bin left empty
 * (a card of few shingles) takes the next filled bin's value, scrambled with
 * the distance (Shrivastava and Li 2014, densification by rotation), so that
 * two short cards agree only where their shingles do.
 */
export class Shingler {
  readonly minima: Uint32Array;
  private readonly window: Int32Array;
  /** BASE^k, to take the oldest word out of the rolling hash. */
  private readonly outgoing: number;
  private rolling = 0;
  private seen = 0;
  private shingles = 0;

  constructor(readonly settings: SignatureSettings) {
    this.minima = new Uint32Array(settings.hashes);
    this.window = new Int32Array(settings.words);
    let power = 1;
    for (let i = 0; i < settings.words; i++) power = Math.imul(power, BASE);
    this.outgoing = power;
  }

  reset(): void {
    this.minima.fill(EMPTY);
    this.rolling = 0;
    this.seen = 0;
    this.shingles = 0;
  }

  add(hash: number): void {
    const k = this.settings.words;
    const slot = this.seen % k;
    this.rolling = (Math.imul(this.rolling, BASE) + hash - (this.seen >= k ? Math.imul(this.window[slot]!, this.outgoing) : 0)) | 0;
    this.window[slot] = hash;
    this.seen += 1;
    if (this.seen >= k) this.shingle(this.rolling);
  }

  /**
   * Writes the signature at `out[at]`: all zero (none, never compared) for
   * a card of fewer shingles than min-hashes, whose few shingles (a heading
   * and a site's footer) would make pages alike that are not.
   */
  finish(out: Buffer, at: number): void {
    const { minima } = this;
    const n = minima.length;
    if (this.shingles < n) minima.fill(0);
    else {
      // Twice round backwards: the first round finds the filled bin after the last ones, the second fills the empty.
      let next = -1;
      for (let i = 2 * n - 1; i >= 0; i--) {
        const bin = i % n;
        if (minima[bin] !== EMPTY) next = bin;
        else if (i < n) minima[bin] = scramble(minima[next]! + Math.imul((next - bin + n) % n, 0x9e3779b9)) >>> 1;
      }
    }
    for (let i = 0; i < n; i++) out.writeUInt32LE(minima[i]!, at + 4 * i);
  }

  private shingle(value: number): void {
    this.shingles += 1;
    const h = scramble(value);
    // The top bits choose the bin; the value kept is below EMPTY, so a filled bin never reads as empty.
    const bin = Math.floor((h / 0x100000000) * this.minima.length);
    const kept = h >>> 1;
    if (kept < this.minima[bin]!) this.minima[bin] = kept;
  }
}

/** Whether a Signatures record's min-hashes are all zero: a card without a signature. */
function unsigned(record: Buffer): boolean {
  for (let i = 4; i < record.length; i++) if (record[i] !== 0) return false;
  return true;
}

/** Bytes of a Signatures record with `hashes` min-hashes. */
export function signatureRecord(hashes: number): number {
  return 4 * (hashes + 1);
}

export function signaturesWriter(file: string): WorkFileWriter {
  return new WorkFileWriter(file, SIGNATURES_FORMAT);
}

/**
 * Pairs of near-duplicate cards among those `indexed` says to compare, from
 * the Signatures file `file`; `onPair(a, b)` gets each pair found (a < b),
 * a pair possibly more than once.
 */
export function nearDuplicates(file: string, threshold: number, indexed: (card: number) => boolean, onPair: (a: number, b: number) => void): void {
  const reader = IndexFileReader.open(file, SIGNATURES_FORMAT);
  const fd = openRead(file);
  try {
    const [cards, hashes] = [reader.fields[0]!, reader.fields[1]!];
    const size = signatureRecord(hashes);
    const bands = hashes - Math.min(threshold, hashes) + 1;
    const width = Math.floor(hashes / bands);
    const signatureOf = (card: number): Buffer => readAt(fd, file, size, INDEX_HEADER_SIZE + card * size);
    const near = (a: Buffer, b: Buffer): boolean => {
      let same = 0;
      for (let i = 4; i < size; i += 4) if (a.readUInt32LE(i) === b.readUInt32LE(i)) same += 1;
      return same >= threshold;
    };
    const keys = new Uint32Array(cards);
    for (let band = 0; band < bands; band++) {
      const members: number[] = [];
      for (const { index: card, data } of reader.records(size, cards)) {
        if (!indexed(card) || unsigned(data)) continue;
        let h = FNV_START;
        for (let i = 0; i < width; i++) h = fnv(h, data.readUInt32LE(4 + 4 * (band * width + i)));
        keys[card] = h >>> 0;
        members.push(card);
      }
      const order = Uint32Array.from(members).sort((a, b) => keys[a]! - keys[b]! || a - b);
      for (let i = 0; i < order.length; ) {
        let end = i + 1;
        while (end < order.length && keys[order[end]!] === keys[order[i]!]) end += 1;
        const lasts = end - i <= ALL_PAIRS ? end - 1 : i + 1;
        for (let a = i; a < lasts; a++) {
          const first = signatureOf(order[a]!);
          for (let b = a + 1; b < end; b++) if (near(first, signatureOf(order[b]!))) onPair(order[a]!, order[b]!);
        }
        i = end;
      }
    }
  } finally {
    closeSync(fd);
    reader.close();
  }
}

/** Every record of a Signatures file: card id and min-hashes. */
export function* readSignatures(file: string): IterableIterator<{ cardId: number; hashes: Uint32Array }> {
  const reader = IndexFileReader.open(file, SIGNATURES_FORMAT);
  try {
    const [cards, hashes] = [reader.fields[0]!, reader.fields[1]!];
    for (const { data } of reader.records(signatureRecord(hashes), cards)) {
      yield { cardId: data.readUInt32LE(0), hashes: Uint32Array.from({ length: hashes }, (_, i) => data.readUInt32LE(4 + 4 * i)) };
    }
  } finally {
    reader.close();
  }
}
