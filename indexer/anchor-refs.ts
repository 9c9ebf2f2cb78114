/**
 * The anchor refs of the link stage (links.ts), regrouped by target card in
 * bounded memory: each ref is three u32 (card, LexRaw id, meta position),
 * packed into a chunk that grows up to the memory given (counting what
 * sorting it takes); a full chunk is put in card
 * order (a stable counting sort, runs.ts stableOrder) and spilled as a run
 * file, `anchors/run-N` in the version directory; the last chunk stays in
 * memory. Reading walks the cards in increasing order and, for each, takes
 * its refs from run 0, then run 1, …: the order in which they were added.
 * So the result does not depend on where chunks were cut, and any budget
 * gives the same bytes (the WordIndex runs work the same way).
 *
 * A run file is the sorted triples, u32 little-endian, nothing else:
 * scratch data, removed by remove() (and with the version directory when a
 * build fails).
 */

import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { END, stableOrder } from './runs.js';
import { ScratchReader, writeScratch } from './scratch.js';

/** Bytes a ref takes while its chunk is sorted: 12 in the chunk, 4 + 4 for the card keys and the order, 12 in the sorted copy. */
const SORT_BYTES = 32;
const READ_BUFFER = 1 << 16;

interface Cursor {
  /** Card of the current ref, END past the last. */
  card: number;
  word: number;
  position: number;
  next(): void;
}

class MemoryCursor implements Cursor {
  card = END;
  word = 0;
  position = 0;
  private at = 0;

  constructor(private readonly refs: Uint32Array) {
    this.next();
  }

  next(): void {
    const { refs, at } = this;
    if (at >= refs.length) {
      this.card = END;
      return;
    }
    this.card = refs[at]!;
    this.word = refs[at + 1]!;
    this.position = refs[at + 2]!;
    this.at = at + 3;
  }
}

class FileCursor implements Cursor {
  card = END;
  word = 0;
  position = 0;

  constructor(private readonly file: ScratchReader) {
    this.next();
  }

  next(): void {
    const card = this.file.u32();
    this.card = card ?? END;
    if (card === undefined) return;
    this.word = this.file.u32()!;
    this.position = this.file.u32()!;
  }
}

export class AnchorRefs {
  /** Grows by doubling up to `limit` numbers: a small link graph takes little memory. */
  private chunk = new Uint32Array(3 * 1024);
  private readonly limit: number;
  private used = 0;
  private readonly files: { path: string; bytes: number }[] = [];
  private cursors: Cursor[] = [];
  private readonly readers: ScratchReader[] = [];

  /** `cards`: the card ids are below it; `memory`: bytes a chunk may take while it is sorted. */
  constructor(
    private readonly dir: string,
    private readonly cards: number,
    memory: number,
  ) {
    this.limit = 3 * Math.max(1024, Math.floor(memory / SORT_BYTES));
  }

  /** Run files written so far. */
  get spilled(): number {
    return this.files.length;
  }

  add(card: number, word: number, position: number): void {
    if (this.used === this.chunk.length) {
      if (this.chunk.length < this.limit) {
        const grown = new Uint32Array(Math.min(this.limit, 2 * this.chunk.length));
        grown.set(this.chunk);
        this.chunk = grown;
      } else {
        this.spill();
      }
    }
    const { chunk, used } = this;
    chunk[used] = card;
    chunk[used + 1] = word;
    chunk[used + 2] = position;
    this.used = used + 3;
  }

  /** The chunk's refs by card, in the order added. */
  private sorted(): Uint32Array {
    const n = this.used / 3;
    const cards = new Uint32Array(n);
    for (let i = 0; i < n; i++) cards[i] = this.chunk[3 * i]!;
    const order = stableOrder(cards, this.cards);
    const { chunk } = this;
    const out = new Uint32Array(this.used);
    for (let k = 0; k < n; k++) {
      const from = 3 * order[k]!;
      out[3 * k] = chunk[from]!;
      out[3 * k + 1] = chunk[from + 1]!;
      out[3 * k + 2] = chunk[from + 2]!;
    }
    this.used = 0;
    return out;
  }

  private spill(): void {
    mkdirSync(this.dir, { recursive: true });
    const path = join(this.dir, `run-${String(this.files.length).padStart(5, '0')}`);
    const refs = this.sorted();
    writeScratch(path, new Uint8Array(refs.buffer, refs.byteOffset, refs.byteLength));
    this.files.push({ path, bytes: refs.byteLength });
  }

  /** Ends adding: from now on the refs are read by card (nextCard, take). */
  finish(): void {
    const last = new MemoryCursor(this.sorted());
    this.chunk = new Uint32Array(0);
    this.cursors = this.files.map(({ path, bytes }) => {
      const reader = new ScratchReader(path, bytes, READ_BUFFER);
      this.readers.push(reader);
      return new FileCursor(reader);
    });
    this.cursors.push(last);
  }

  /** The lowest card with refs not taken yet, END when none. */
  nextCard(): number {
    let card = END;
    for (const cursor of this.cursors) if (cursor.card < card) card = cursor.card;
    return card;
  }

  /** Hands every ref of `card` to `visit`, in the order added; `card` must not be below a card taken before. */
  take(card: number, visit: (word: number, position: number) => void): void {
    for (const cursor of this.cursors) {
      while (cursor.card === card) {
        visit(cursor.word, cursor.position);
        cursor.next();
      }
    }
  }

  /** Closes and removes the run files. */
  remove(): void {
    for (const reader of this.readers.splice(0)) reader.close();
    this.cursors = [];
    rmSync(this.dir, { recursive: true, force: true });
  }
}
