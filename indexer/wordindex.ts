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
 * list, the runs that have a word taken off a heap (runs.ts Heap), and the
 * Lexicon is written in the same pass. So the postings, which grow with the
 * text, never take more than half the budget, leaving the other half to what
 * the build holds per card and per word and to the JavaScript heap; besides
 * it the stage holds 16 bytes per distinct word (the order both ways, each
 * word's last card, and the cards holding it, which it hands to the suggest
 * stage).
 *
 * StringIndex strings are few per card (three keys of 16 bytes each with the
 * card id, collected by the chewer) and are sorted in memory.
 */

import { join } from 'node:path';
import { StringIndexWriter, WordIndexWriter, type EntryPlace } from '../common/index/chains.js';
import { IndexFileReader } from '../common/index/file.js';
import { ChainBuilder, MAX_CARD_ID } from '../common/index/refs.js';
import { rawId } from './lexicon.js';
import { END, Heap, Runs, sortChunk } from './runs.js';
import { FINGERPRINT_SIZE, POSTING_HEAD, POSTINGS_FORMAT, postingLength, recordBlocks } from './work-files.js';

const MIN_BUFFER = 16 * 1024;
/** Chunks of Postings sorted at a time: small enough for the processor's cache (runs.ts). */
const MAX_CHUNK = 2 * 1024 * 1024;

export interface WordIndexReport {
  /** Postings read (one chain each). */
  postings: number;
  runs: number;
  /** Runs written to disk (0 when the postings fit the budget). */
  spilled: number;
  /** Per rank, the cards holding the word (its document frequency; a card's joined chains count once). */
  cardCounts: Uint32Array;
}

/**
 * How Postings name words: `rank[id / 8 − 1]` is the word's rank in the
 * Lexicon, of `words`. With `temporary` numbers (a spilled vocabulary,
 * segments.ts) one word may have two in a card, its text's and its anchors'
 * (or its anchors' in two segments), whose chains are then joined.
 */
export interface WordRanks {
  words: number;
  rank: Uint32Array;
  temporary: boolean;
}

/** Chunks of whole cards: a card's records never straddle two (its chains of one word are joined in one run). */
function* byCards(blocks: Iterable<Buffer>): IterableIterator<Buffer> {
  let carry: Buffer | undefined;
  for (const block of blocks) {
    const data = carry === undefined ? block : Buffer.concat([carry, block]);
    // Where the last card's records begin.
    let lastStart = 0;
    let lastCard = -1;
    for (let at = 0; at < data.length; at += POSTING_HEAD + data.readUInt32LE(at + 4)) {
      const card = data.readUInt32LE(at + POSTING_HEAD) & MAX_CARD_ID;
      if (card !== lastCard) {
        lastCard = card;
        lastStart = at;
      }
    }
    if (lastStart > 0) yield data.subarray(0, lastStart);
    carry = Buffer.from(data.subarray(lastStart));
  }
  if (carry !== undefined && carry.length > 0) yield carry;
}

/** No WordIndex entry: a word without chains. */
const NO_ENTRY: EntryPlace = { refPos: 0, chainSize: 0 };

/**
 * Writes `wordIndexFile` from the Postings file `postingsFile`, whose words
 * (LexRaw ids) `order` ranks; scratch runs go to `runDir`. `lexicon` is
 * handed, rank by rank, where each word's entry lies (chainSize 0: none) as
 * the merge writes it, so the Lexicon is written alongside (writeLexiconFile)
 * and no place is held per word. Rank r is the Lexicon's entry r on both
 * paths (its id 8·(r + 1), which writeLexicon checks), so the report's
 * `cardCounts` are indexed as the Lexicon is.
 */
export function writeWordIndex(postingsFile: string, wordIndexFile: string, order: WordRanks, budget: number, runDir: string, lexicon: (places: Iterable<EntryPlace>) => void): WordIndexReport {
  const { words } = order;
  const runs = new Runs(runDir, Math.floor(budget / 4));
  const postings = IndexFileReader.open(postingsFile, POSTINGS_FORMAT);
  const cardCounts = new Uint32Array(words);
  let count = 0;
  try {
    let blockAt = 0;
    const rankOf = (word: number, at: number): number => {
      const n = word / 8 - 1;
      if (!Number.isInteger(n) || n < 0 || n >= order.rank.length) throw postings.corrupt(blockAt + at, `word ${word} is not a LexRaw id (${order.rank.length} numbers)`);
      return order.rank[n]!;
    };
    const lastCards = new Int32Array(words).fill(-1);
    const blocks = recordBlocks(postings, Math.min(MAX_CHUNK, Math.max(MIN_BUFFER, Math.floor(budget / 4))), postingLength);
    for (const chunk of order.temporary ? byCards(blocks) : blocks) {
      runs.add(sortChunk(chunk, words, rankOf, lastCards, cardCounts, order.temporary));
      blockAt += chunk.length;
    }
    count = postings.fields[0]!;
  } finally {
    postings.close();
  }
  const runCount = runs.count;
  const writer = new WordIndexWriter(wordIndexFile);
  try {
    const cursors = runs.cursors(Math.max(MIN_BUFFER, Math.floor(budget / 4 / Math.max(1, runs.spilled))));
    const heap = new Heap(cursors);
    const write = (data: Buffer): void => writer.writeChains(data);
    const at: number[] = [];
    let r = 0;
    function* places(): IterableIterator<EntryPlace> {
      for (; r < words; r++) {
        if (heap.rank !== r) {
          yield NO_ENTRY;
          continue;
        }
        // The runs that have the word, in run order (card order): their sizes first, then their chains.
        at.length = 0;
        let size = 0;
        while (heap.rank === r) {
          const i = heap.pop();
          at.push(i);
          size += cursors[i]!.size;
        }
        const place = writer.beginEntry(rawId(r), size);
        for (const i of at) {
          cursors[i]!.take(write);
          heap.push(i);
        }
        yield place;
      }
    }
    lexicon(places());
    if (r !== words) throw new RangeError(`${wordIndexFile}: the Lexicon stopped at rank ${r} of ${words}`);
    if (heap.rank !== END) throw new RangeError(`${postingsFile}: runs not exhausted after the last word`);
    writer.finish();
  } catch (err) {
    writer.abort();
    throw err;
  } finally {
    runs.remove();
  }
  return { postings: count, runs: runCount, spilled: runs.spilled, cardCounts };
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
