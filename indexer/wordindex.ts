/**
 * Stage 4, WordIndex (DESIGN §6 stage 7): the chains of Postings regrouped
 * by word, in the Lexicon's order, into WordIndex; then the Lexicon with the
 * place of each word's entry; and StringIndex for URL, host and domain.
 *
 * Memory. Postings are read in chunks of a quarter of `indexer.memory_budget`
 * (at most 2 MiB, at least 16 KiB), each sorted into a run (runs.ts); runs
 * stay in memory up to a quarter of the budget, older ones are spilled to
 * disk; the merge reads spilled runs through two buffers each, sharing a
 * quarter of the budget (at least 16 KiB each). Chains are streamed into
 * WordIndex (common/index/chains.ts beginEntry/writeChains), never a word's whole
 * list. So the postings, which grow with the text, never take more than half
 * the budget, leaving the other half to what the build holds per card and
 * per word and to the JavaScript heap; besides it the stage holds a few
 * numbers per distinct word.
 *
 * StringIndex strings are few per card (three keys of 16 bytes each with the
 * card id, collected by the chewer) and are sorted in memory.
 */

import { join } from 'node:path';
import { StringIndexWriter, WordIndexWriter } from '../common/index/chains.js';
import { IndexFileReader } from '../common/index/file.js';
import { ChainBuilder } from '../common/index/refs.js';
import type { LexiconOrder } from './lexicon.js';
import { rawId } from './lexicon.js';
import { END, Runs, sortChunk } from './runs.js';
import { FINGERPRINT_SIZE, POSTINGS_FORMAT, postingLength, recordBlocks } from './work-files.js';

const MIN_BUFFER = 16 * 1024;
/** Chunks of Postings sorted at a time: small enough for the processor's cache (runs.ts). */
const MAX_CHUNK = 2 * 1024 * 1024;

export interface WordIndexReport {
  /** Where each rank's entry lies in WordIndex and its chain bytes (0: none). */
  places: { refPos: Float64Array; size: Float64Array };
  /** Postings read (one chain each). */
  postings: number;
  runs: number;
  /** Runs written to disk (0 when the postings fit the budget). */
  spilled: number;
}

/**
 * Writes `wordIndexFile` from the Postings file `postingsFile`, whose words
 * (LexRaw ids) `order` ranks; scratch runs go to `runDir`.
 */
export function writeWordIndex(postingsFile: string, wordIndexFile: string, order: LexiconOrder, budget: number, runDir: string): WordIndexReport {
  const words = order.rank.length;
  const sizes = new Float64Array(words);
  const runs = new Runs(runDir, Math.floor(budget / 4));
  const postings = IndexFileReader.open(postingsFile, POSTINGS_FORMAT);
  let count = 0;
  try {
    let blockAt = 0;
    const rankOf = (word: number, at: number): number => {
      const n = word / 8 - 1;
      if (!Number.isInteger(n) || n < 0 || n >= words) throw postings.corrupt(blockAt + at, `word ${word} is not a LexRaw id (${words} words)`);
      return order.rank[n]!;
    };
    const lastCards = new Int32Array(words).fill(-1);
    for (const chunk of recordBlocks(postings, Math.min(MAX_CHUNK, Math.max(MIN_BUFFER, Math.floor(budget / 4))), postingLength)) {
      runs.add(sortChunk(chunk, words, rankOf, sizes, lastCards));
      blockAt += chunk.length;
    }
    count = postings.fields[0]!;
  } finally {
    postings.close();
  }
  const places = { refPos: new Float64Array(words), size: new Float64Array(words) };
  const writer = new WordIndexWriter(wordIndexFile);
  try {
    const cursors = runs.cursors(Math.max(MIN_BUFFER, Math.floor(budget / 4 / Math.max(1, runs.spilled))));
    const write = (data: Buffer): void => writer.writeChains(data);
    for (let r = 0; r < words; r++) {
      if (sizes[r] === 0) continue;
      const place = writer.beginEntry(rawId(r), sizes[r]!);
      places.refPos[r] = place.refPos;
      places.size[r] = place.chainSize;
      for (const cursor of cursors) if (cursor.rank === r) cursor.take(write);
    }
    if (cursors.some((cursor) => cursor.rank !== END)) throw new RangeError(`${postingsFile}: runs not exhausted after the last word`);
    writer.finish();
  } catch (err) {
    writer.abort();
    throw err;
  } finally {
    runs.remove();
  }
  return { places, postings: count, runs: runs.count, spilled: runs.spilled };
}

/** Bytes per StringIndex record the chewer collects: the key, then the card id. */
export const STRING_RECORD = FINGERPRINT_SIZE + 4;

/** Writes StringIndex from `records` (key, card id; in card order); returns the number of distinct strings. */
export function writeStringIndex(file: string, records: Buffer): number {
  const n = records.length / STRING_RECORD;
  // Key bytes then the card id big-endian, as Latin-1 strings: string order is byte order.
  const keys: string[] = new Array<string>(n);
  const sortable = Buffer.allocUnsafe(STRING_RECORD);
  for (let i = 0; i < n; i++) {
    records.copy(sortable, 0, i * STRING_RECORD, i * STRING_RECORD + FINGERPRINT_SIZE);
    sortable.writeUInt32BE(records.readUInt32LE(i * STRING_RECORD + FINGERPRINT_SIZE), FINGERPRINT_SIZE);
    keys[i] = sortable.toString('latin1');
  }
  keys.sort();
  // Every chain is the same one ref: the string at position 0.
  const builder = new ChainBuilder();
  builder.word(0, 0);
  const writer = new StringIndexWriter(file);
  let strings = 0;
  try {
    for (let i = 0; i < n; ) {
      const key = keys[i]!.slice(0, FINGERPRINT_SIZE);
      let end = i + 1;
      while (end < n && keys[end]!.startsWith(key)) end += 1;
      const cards = keys.slice(i, end).map((k) => Buffer.from(k, 'latin1').readUInt32BE(FINGERPRINT_SIZE));
      const chains = Buffer.allocUnsafe(cards.reduce((size, card, k) => size + builder.listedSize(card, k === 0 ? -1 : cards[k - 1]!), 0));
      cards.reduce((pos, card, k) => builder.writeListed(card, k === 0 ? -1 : cards[k - 1]!, chains, pos), 0);
      writer.beginEntry(Buffer.from(key, 'latin1'), chains.length);
      writer.writeChains(chains);
      strings += 1;
      i = end;
    }
    writer.finish();
  } catch (err) {
    writer.abort();
    throw err;
  }
  return strings;
}

/** Where the WordIndex stage keeps its runs inside the version directory. */
export function runDirectory(dir: string): string {
  return join(dir, 'runs');
}
