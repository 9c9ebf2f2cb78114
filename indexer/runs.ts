/**
 * The external sort of the WordIndex stage: Postings (work-files.ts, in card
 * order) are read in chunks that fit the memory budget, each chunk is sorted
 * by the word's rank in the Lexicon (stable, so card ids stay increasing
 * within a word) and kept as a run; the runs are then read side by side.
 *
 * Because every chunk holds later cards than the one before, a word's chains
 * come from run 0, then run 1, …: the merge takes the runs at a word in run
 * order, and its output does not depend on where the chunks were cut, so
 * any budget gives the same bytes. The runs are kept in a heap by (rank,
 * run), so a word costs the runs that have it, not every run (Heap).
 *
 * A run is the chunk's chains in word order, without their Postings heads,
 * and an index of (rank, bytes) pairs, one per word in the chunk; a word's
 * chains in a run are one stretch, written to WordIndex in one piece. A
 * spilled run is two scratch files in the version directory, `runs/run-N`
 * (the chains) and `runs/run-N.idx` (the pairs, u32 little-endian), read
 * sequentially through small buffers and removed after the merge. Runs stay
 * in memory as long as they fit their share of the budget (a build whose
 * postings fit writes none). Chunks are small (a few MiB) even when the
 * budget is large: gathering records by rank jumps around the chunk, which
 * is several times faster when the chunk fits the processor's cache.
 *
 * common/external-sort.ts sorts lines of text with a comparison heap; these
 * records are binary (an LF may occur anywhere) and want a counting sort on
 * an integer key, so this is written apart.
 */

import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { chainCardId, chainRefsStart, listedHeadSize, putListedHead } from '../common/index/refs.js';
import { ScratchReader, writeScratch } from './scratch.js';
import { POSTING_HEAD } from './work-files.js';

/** The rank of a cursor past its last record. */
export const END = 0xffffffff;

/** A sorted run in memory: chains by rank, and (rank, bytes) pairs. */
export interface SortedRun {
  data: Buffer;
  index: Uint32Array;
}

/**
 * Sorts a chunk of whole Postings records by rank: `rankOf(word, at)` gives
 * the rank of a LexRaw id (or throws on a word it does not know). Each chain
 * is rewritten in WordIndex's listed form (common/index/refs.ts), its card id as the
 * gap from the last card of its rank, which `lastCards` holds from chunk to
 * chunk (−1 before the first). With `join`, a card's chains of one rank
 * (a word's temporary numbers, wordindex.ts WordRanks; the chunk holds whole
 * cards) become one: the refs of the later ones appended to the first's, as
 * links.ts appends anchor refs (meta refs carry their positions, so they may
 * follow any refs). `cardCounts[rank]` is raised by one for each chain that
 * begins a card of its rank (not one joined), so it ends as the number of
 * cards holding the word: its document frequency.
 */
export function sortChunk(chunk: Buffer, ranks: number, rankOf: (word: number, at: number) => number, lastCards: Int32Array, cardCounts: Uint32Array, join = false): SortedRun {
  let count = 0;
  for (let at = 0; at < chunk.length; at += POSTING_HEAD + chunk.readUInt32LE(at + 4)) count += 1;
  const rank = new Uint32Array(count);
  const cards = new Uint32Array(count);
  const previous = new Int32Array(count);
  /** Where each chain's refs start and end in `chunk`. */
  const refsFrom = new Uint32Array(count);
  const refsTo = new Uint32Array(count);
  /** With `join`: 1 for a chain joined to an earlier one of its card and rank. */
  const joined = new Uint8Array(join ? count : 0);
  let total = 0;
  for (let i = 0, at = 0; i < count; i++) {
    const chain = at + POSTING_HEAD;
    const end = chain + chunk.readUInt32LE(at + 4);
    const r = (rank[i] = rankOf(chunk.readUInt32LE(at), at));
    const cardId = (cards[i] = chainCardId(chunk, chain));
    const from = (refsFrom[i] = chainRefsStart(chunk, chain));
    refsTo[i] = end;
    if (join && lastCards[r] === cardId) {
      // Its refs, and room for the first chain's head to grow.
      joined[i] = 1;
      total += end - from + 8;
    } else {
      previous[i] = lastCards[r]!;
      lastCards[r] = cardId;
      cardCounts[r]! += 1;
      total += listedHeadSize(cardId, previous[i]!, end - from) + end - from;
    }
    at = end;
  }
  const order = stableOrder(rank, ranks);
  const data = Buffer.allocUnsafe(total);
  const index = new Uint32Array(2 * count);
  let groups = 0;
  let pos = 0;
  const copy = (from: number, to: number): void => {
    // Chains are short: a loop beats a native call per chain.
    if (to - from <= 64) for (let j = from; j < to; j++) data[pos++] = chunk[j]!;
    else pos += chunk.copy(data, pos, from, to);
  };
  for (let k = 0; k < count; k++) {
    const i = order[k]!;
    const from = refsFrom[i]!;
    const to = refsTo[i]!;
    const start = pos;
    // The chains joined to this one follow it in rank order (same rank, same card, later in the chunk).
    let last = k;
    let length = to - from;
    if (join) for (; last + 1 < count && joined[order[last + 1]!] === 1; last++) length += refsTo[order[last + 1]!]! - refsFrom[order[last + 1]!]!;
    pos = putListedHead(data, pos, cards[i]!, previous[i]!, length);
    copy(from, to);
    for (; k < last; k++) copy(refsFrom[order[k + 1]!]!, refsTo[order[k + 1]!]!);
    if (groups === 0 || index[2 * groups - 2] !== rank[i]) {
      index[2 * groups] = rank[i]!;
      groups += 1;
    }
    index[2 * groups - 1]! += pos - start;
  }
  return { data: pos === data.length ? data : data.subarray(0, pos), index: index.slice(0, 2 * groups) };
}

function bytesOf(run: SortedRun): number {
  return run.data.length + run.index.byteLength;
}

/** Digits of the radix sort: 2,048 counters fit the processor's first cache. */
const RADIX_BITS = 11;
const RADIX_MASK = (1 << RADIX_BITS) - 1;

/** Indices of `keys` (each below `range`) in key order, equal keys in index order. */
export function stableOrder(keys: Uint32Array, range: number): Uint32Array {
  const n = keys.length;
  // One counting sort costs the range; for a few records among many words (a chunk among a million documents' words), a
  // radix sort by RADIX_BITS at a time, each digit a stable counting sort. (A comparison sort through a JavaScript
  // function took half the WordIndex stage at a million documents.)
  if (8 * n < range) return radixOrder(keys, range);
  const start = new Uint32Array(range + 1);
  for (let i = 0; i < n; i++) start[keys[i]! + 1]! += 1;
  for (let k = 0; k < range; k++) start[k + 1]! += start[k]!;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[start[keys[i]!]!++] = i;
  return order;
}

function radixOrder(keys: Uint32Array, range: number): Uint32Array {
  const n = keys.length;
  let order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  let spare = new Uint32Array(n);
  const start = new Uint32Array(RADIX_MASK + 2);
  for (let shift = 0; shift < 32 && (shift === 0 || (range - 1) >>> shift !== 0); shift += RADIX_BITS) {
    start.fill(0);
    for (let i = 0; i < n; i++) start[((keys[order[i]!]! >>> shift) & RADIX_MASK) + 1]! += 1;
    for (let d = 0; d <= RADIX_MASK; d++) start[d + 1]! += start[d]!;
    for (let i = 0; i < n; i++) {
      const at = order[i]!;
      spare[start[(keys[at]! >>> shift) & RADIX_MASK]!++] = at;
    }
    [order, spare] = [spare, order];
  }
  return order;
}

/** Reads one run, a word at a time. */
export interface RunCursor {
  /** Rank of the current word, END past the last. */
  rank: number;
  /** Bytes of the current word's chains in this run. */
  readonly size: number;
  /** Hands the current word's chains to `write` (in one or more pieces) and moves to the next word. */
  take(write: (data: Buffer) => void): void;
}

class MemoryCursor implements RunCursor {
  rank = END;
  private group = 0;
  private at = 0;

  constructor(private readonly run: SortedRun) {
    this.rank = run.index.length > 0 ? run.index[0]! : END;
  }

  get size(): number {
    return this.run.index[2 * this.group + 1]!;
  }

  take(write: (data: Buffer) => void): void {
    const { index, data } = this.run;
    const size = index[2 * this.group + 1]!;
    write(data.subarray(this.at, this.at + size));
    this.at += size;
    this.group += 1;
    this.rank = 2 * this.group < index.length ? index[2 * this.group]! : END;
  }
}

class FileCursor implements RunCursor {
  rank = END;
  size = 0;

  constructor(
    private readonly index: ScratchReader,
    private readonly data: ScratchReader,
  ) {
    this.advance();
  }

  private advance(): void {
    const rank = this.index.u32();
    this.rank = rank ?? END;
    this.size = rank === undefined ? 0 : this.index.u32()!;
  }

  take(write: (data: Buffer) => void): void {
    this.data.stream(this.size, write);
    this.advance();
  }
}

interface SpilledRun {
  data: string;
  index: string;
  sizes: [number, number];
}

/** The runs of one sort, in order: the newest in memory up to `memory` bytes, older ones spilled to `dir`. */
export class Runs {
  private readonly runs: (SortedRun | SpilledRun)[] = [];
  private held = 0;
  private oldestHeld = 0;
  private files = 0;
  private readonly readers: ScratchReader[] = [];

  constructor(
    private readonly dir: string,
    private readonly memory: number,
  ) {}

  get count(): number {
    return this.runs.length;
  }

  /** Runs spilled to disk so far. */
  get spilled(): number {
    return this.files;
  }

  /** Adds the next run (later cards than every run before); spills the oldest held while they take more than the memory allowed. */
  add(run: SortedRun): void {
    this.runs.push(run);
    this.held += bytesOf(run);
    while (this.held > this.memory && this.oldestHeld < this.runs.length - 1) {
      const oldest = this.runs[this.oldestHeld] as SortedRun;
      this.runs[this.oldestHeld] = this.spill(oldest);
      this.held -= bytesOf(oldest);
      this.oldestHeld += 1;
    }
  }

  private spill(run: SortedRun): SpilledRun {
    mkdirSync(this.dir, { recursive: true });
    const data = join(this.dir, `run-${String(this.files).padStart(5, '0')}`);
    const index = `${data}.idx`;
    const pairs = Buffer.from(run.index.buffer, run.index.byteOffset, run.index.byteLength);
    writeScratch(data, run.data);
    writeScratch(index, pairs);
    this.files += 1;
    return { data, index, sizes: [run.data.length, pairs.length] };
  }

  private open(path: string, size: number, bufferSize: number): ScratchReader {
    const reader = new ScratchReader(path, size, bufferSize);
    this.readers.push(reader);
    return reader;
  }

  /** A cursor per run, in run order; spilled runs are read through two buffers of `bufferSize` bytes each. */
  cursors(bufferSize: number): RunCursor[] {
    return this.runs.map((run) =>
      typeof run.data === 'string' ? new FileCursor(this.open((run as SpilledRun).index, (run as SpilledRun).sizes[1], bufferSize), this.open(run.data, (run as SpilledRun).sizes[0], bufferSize)) : new MemoryCursor(run as SortedRun),
    );
  }

  /** Closes and removes the spilled runs. */
  remove(): void {
    for (const reader of this.readers.splice(0)) reader.close();
    this.runs.length = 0;
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The run cursors by (rank, run number), least on top: the merge takes a
 * word's runs in run order (card order) and visits only the runs that have
 * it, so its time is the runs' bytes, not words × runs.
 */
export class Heap {
  private readonly heap: number[] = [];

  constructor(private readonly cursors: RunCursor[]) {
    for (let i = 0; i < cursors.length; i++) if (cursors[i]!.rank !== END) this.push(i);
  }

  /** Rank of the least cursor, END when every run is done. */
  get rank(): number {
    return this.heap.length === 0 ? END : this.cursors[this.heap[0]!]!.rank;
  }

  /** Takes the least cursor's number off the heap. */
  pop(): number {
    const { heap } = this;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      this.down(0);
    }
    return top;
  }

  /** Puts cursor `i` back (if it has a word left). */
  push(i: number): void {
    if (this.cursors[i]!.rank === END) return;
    const { heap } = this;
    let at = heap.push(i) - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.less(heap[at]!, heap[parent]!)) break;
      [heap[at], heap[parent]] = [heap[parent]!, heap[at]!];
      at = parent;
    }
  }

  private less(a: number, b: number): boolean {
    const ra = this.cursors[a]!.rank;
    const rb = this.cursors[b]!.rank;
    return ra < rb || (ra === rb && a < b);
  }

  private down(at: number): void {
    const { heap } = this;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= heap.length) return;
      const right = left + 1;
      const child = right < heap.length && this.less(heap[right]!, heap[left]!) ? right : left;
      if (!this.less(heap[child]!, heap[at]!)) return;
      [heap[at], heap[child]] = [heap[child]!, heap[at]!];
      at = child;
    }
  }
}
