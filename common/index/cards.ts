/**
 * Cards: what a search result needs of each card (URL, title, text for
 * snippets, type, size, date, where the response lies in the archive),
 * compressed, read by position (CardInfo gives it) for the results shown.
 * Layout after the seed (seeds/003 "Cards"), the cards deflated in blocks
 * (ours):
 *
 *   Header fields (file.ts): 0 card count, 1 CARD_POS_SHIFT (5)
 *   Body: blocks of consecutive cards, each at a body offset that is a
 *   multiple of 32
 *     0   4  stored length S: bytes of the deflated block
 *     4   4  plain length P: bytes it inflates to
 *     8   4  card id of its first card F
 *     12  4  its card count n (≥ 1): cards F to F + n − 1
 *     16  4  CRC-32 of the P plain bytes
 *     20  S  the plain bytes, raw deflate (zlib level CARD_DEFLATE_LEVEL):
 *              0   4·n  u32 end of each card, counted from the end of this table
 *              4n  …    the cards back to back, each a linearized object
 *                       (bucket.ts: type byte 0x02, a V3.3 bucket with an
 *                       empty header)
 *     20+S   zero padding to the next multiple of 32
 *
 * Blocks follow in card order and every card id from 0 has its card. A
 * card's position is its block's body offset >> 5 (u32, so Cards may reach
 * 128 GiB); its place in the block is its card id minus F. A block closes
 * at the first card that brings it to CARD_BLOCK_SIZE plain bytes (or where
 * the writer's batch of cards ends): deflating 128 KiB of neighbouring
 * pages at once takes a fifth less room than card by card (docs/indexer.md
 * "Cards"), and a hit still costs one inflate of at most that much; the
 * reader keeps the last blocks it inflated.
 *
 * The card object's attributes (docs/indexer.md "Cards"):
 *   O  card id, decimal        U  canonical URL      t  title (UTF-8; absent: none)
 *   X  text with word types (doc-text.ts), possibly empty
 *   T  MIME type               z  body size in bytes, decimal
 *   D  date, Unix seconds      a  "<ARC file> <offset> <length>", as in buckets
 *   n  a PDF's page count
 *   i  an image card's referrer: the URL of the page its alt text came from
 *      (the indexer makes image cards from pages' `<img alt>`, chew.ts)
 *
 * Format 2. Format 1 deflated each card alone (a V3.3-deflate object behind
 * a u32 length) and is refused, naming the file: rebuild the index. The
 * reader checks every length against the body and the limits, the CRC-32
 * of each block it inflates, the card table and every attribute; damage is
 * SHERLOCK_CORRUPT_INDEX naming the file and the offset of the block.
 */

import { crc32 } from 'node:zlib';
import { BUCKET_TYPE, BucketObject, delinearize, linearize, MAX_BODY_LENGTH } from '../bucket/bucket.js';
import { isSherlockError } from '../errors.js';
import { CountingWriter, IndexFileReader, type IndexFormat } from './file.js';
import { RawDeflater } from '../deflate/raw-deflate.js';
import { RawInflater } from '../deflate/raw-inflate.js';

export const CARDS_FORMAT: IndexFormat = { magic: 'SHERLOCK-CARDS', version: 2, fields: ['cards', 'position shift'], what: 'Cards' };
export const CARD_POS_SHIFT = 5;
const CARD_ALIGN = 1 << CARD_POS_SHIFT;
/** Plain bytes at which a block closes: 2 % less room than 64 KiB, whose blocks each began with an empty window, for 0.2 ms more a miss (docs/indexer.md "Cards"). */
export const CARD_BLOCK_SIZE = 128 * 1024;
/** zlib level of the blocks: a tenth less room than level 1 for twice its time; 6 saves 0.4 % more for a fifth more time (docs/indexer.md "Cards"). */
export const CARD_DEFLATE_LEVEL = 5;
const BLOCK_HEAD = 20;
/** Plain bytes a block may hold: it closes past CARD_BLOCK_SIZE, so one card beyond it at most, whose text came from one bucket body (a bound against a damaged length, not a tight one). */
const MAX_BLOCK_PLAIN = CARD_BLOCK_SIZE + 2 * MAX_BODY_LENGTH;
/** Inflated blocks the reader keeps: the hits of a page often share a block. */
const CACHED_BLOCKS = 2;

export interface ArcLocation {
  file: string;
  offset: number;
  length: number;
}

export interface Card {
  cardId: number;
  url: string;
  title?: string;
  /** The `X` text (doc-text.ts), empty when there is none. */
  text: Buffer;
  /** MIME type. */
  type: string;
  size: number;
  date: number;
  arc: ArcLocation;
  /** A PDF's pages (`n`). */
  pages?: number;
  /** An image card's page (`i`). */
  referrer?: string;
}

function decimal(value: number, what: string): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} ${value} is not a whole number`);
  return String(value);
}

function cardObject(card: Card): BucketObject {
  const { file, offset, length } = card.arc;
  if (!/^\S+$/.test(file)) throw new RangeError(`ARC file name ${JSON.stringify(file)} must be non-empty without spaces`);
  const object = new BucketObject().add('O', decimal(card.cardId, 'card id')).add('U', card.url);
  if (card.title !== undefined) object.add('t', card.title);
  object
    .add('X', card.text)
    .add('T', card.type)
    .add('z', decimal(card.size, 'size'))
    .add('D', decimal(card.date, 'date'))
    .add('a', `${file} ${decimal(offset, 'ARC offset')} ${decimal(length, 'ARC length')}`);
  if (card.pages !== undefined) object.add('n', decimal(card.pages, 'page count'));
  return card.referrer === undefined ? object : object.add('i', card.referrer);
}

/**
 * Gathers cards, in card order from `first`, into blocks (with their heads,
 * deflated), handing each to `sink` as it closes: the chewing workers make
 * the blocks of their batches, CardsWriter stores them.
 */
export class CardBlocks {
  private readonly deflater = new RawDeflater(CARD_DEFLATE_LEVEL);
  private cards: Buffer[] = [];
  private plain = 0;

  /** Cards from card `next` on. */
  constructor(
    private readonly sink: (block: Buffer) => void,
    private next = 0,
  ) {}

  /** Goes on from card `next` (another batch), forgetting an open block (what a failed batch left). */
  restart(next: number): void {
    this.cards = [];
    this.plain = 0;
    this.next = next;
  }

  add(card: Card): void {
    if (card.cardId !== this.next) throw new RangeError(`card ${card.cardId} where card ${this.next} comes: Cards holds every card in order`);
    this.next += 1;
    const data = linearize(BUCKET_TYPE.V33, cardObject(card));
    this.cards.push(data);
    this.plain += 4 + data.length;
    if (this.plain >= CARD_BLOCK_SIZE) this.close();
  }

  /** Closes the open block, if any. */
  close(): void {
    const n = this.cards.length;
    if (n === 0) return;
    const table = Buffer.allocUnsafe(4 * n);
    let end = 0;
    this.cards.forEach((card, k) => table.writeUInt32LE((end += card.length), 4 * k));
    const plain = Buffer.concat([table, ...this.cards]);
    const deflated = this.deflater.deflate(plain);
    const head = Buffer.allocUnsafe(BLOCK_HEAD);
    head.writeUInt32LE(deflated.length, 0);
    head.writeUInt32LE(plain.length, 4);
    head.writeUInt32LE(this.next - n, 8);
    head.writeUInt32LE(n, 12);
    head.writeUInt32LE(crc32(plain), 16);
    this.cards = [];
    this.plain = 0;
    this.sink(Buffer.concat([head, deflated]));
  }
}

/** Streams blocks of cards; the positions of their cards come back for CardInfo. */
export class CardsWriter extends CountingWriter {
  private readonly blocks = new CardBlocks((block) => this.addBlocks(block));

  constructor(file: string) {
    super(file, CARDS_FORMAT);
  }

  /** Adds a card to the block being gathered here (not to be mixed with addBlocks); returns its position. */
  add(card: Card): number {
    const position = this.out.length / CARD_ALIGN;
    this.blocks.add(card);
    return position;
  }

  /** Appends blocks made by CardBlocks (back to back, in card order, the next card first); returns the position of each of their cards. */
  addBlocks(data: Buffer): number[] {
    const positions: number[] = [];
    for (let at = 0; at < data.length; ) {
      const size = BLOCK_HEAD + data.readUInt32LE(at);
      const first = data.readUInt32LE(at + 8);
      const n = data.readUInt32LE(at + 12);
      if (first !== this.count) throw new RangeError(`a block from card ${first} where card ${this.count} comes: Cards holds every card in order`);
      const position = this.out.length / CARD_ALIGN;
      if (position > 0xffffffff) throw new RangeError('Cards is full: positions are u32');
      this.out.write(data.subarray(at, at + size));
      this.out.align(CARD_POS_SHIFT);
      for (let k = 0; k < n; k++) positions.push(position);
      this.count += n;
      at += size;
    }
    return positions;
  }

  override finish(): void {
    this.blocks.close();
    super.finish();
  }

  protected override moreFields(): number[] {
    return [CARD_POS_SHIFT];
  }
}

/** A block inflated: its cards' linearized objects, card `first + k` from `plain[start + ends[k − 1]]` to `plain[start + ends[k]]`. */
interface Block {
  position: number;
  first: number;
  count: number;
  plain: Buffer;
  ends: Uint32Array;
  /** Where the body offset after the block is, >> CARD_POS_SHIFT. */
  next: number;
}

export class CardsReader {
  readonly count: number;
  private readonly inflater = new RawInflater();
  /** The blocks inflated last, the latest last. */
  private readonly cache: Block[] = [];

  private constructor(private readonly file: IndexFileReader) {
    this.count = file.fields[0]!;
    if (file.fields[1] !== CARD_POS_SHIFT) throw file.corruptField(1, `${file.fields[1]}, ${CARD_POS_SHIFT} expected`);
  }

  static open(file: string): CardsReader {
    return IndexFileReader.openWith(file, CARDS_FORMAT, (reader) => new CardsReader(reader));
  }

  /** The block at `position`, inflated and checked (or the one kept from before). */
  private block(position: number): Block {
    const kept = this.cache.find((block) => block.position === position);
    if (kept !== undefined) return kept;
    const offset = position * CARD_ALIGN;
    const fail = (message: string) => this.file.corrupt(offset, `card block: ${message}`);
    const head = this.file.read(offset, BLOCK_HEAD, 'card block head');
    const stored = head.readUInt32LE(0);
    const size = head.readUInt32LE(4);
    const first = head.readUInt32LE(8);
    const count = head.readUInt32LE(12);
    if (count === 0 || first + count > this.count) throw fail(`cards ${first} to ${first + count - 1}, the header says ${this.count} cards`);
    if (size > MAX_BLOCK_PLAIN || size < 4 * count) throw fail(`plain length ${size} for ${count} cards`);
    const data = this.file.read(offset + BLOCK_HEAD, stored, 'card block');
    let plain: Buffer;
    try {
      const inflated = this.inflater.inflate(data, size);
      if (inflated === undefined) throw new Error('the deflate stream is cut short');
      if (inflated.consumed !== stored) throw new Error(`${stored - inflated.consumed} bytes after the deflate stream`);
      plain = inflated.data;
    } catch (err) {
      throw this.file.corrupt(offset + BLOCK_HEAD, `card block: ${(err as Error).message}`);
    }
    if (plain.length !== size) throw fail(`inflates to ${plain.length} bytes, ${size} recorded`);
    if (crc32(plain) !== head.readUInt32LE(16)) throw fail('CRC-32 of the plain bytes mismatch');
    const ends = new Uint32Array(count);
    for (let k = 0; k < count; k++) {
      ends[k] = plain.readUInt32LE(4 * k);
      if (ends[k]! <= (k === 0 ? 0 : ends[k - 1]!)) throw fail(`card ${first + k} ends at ${ends[k]}, not after the card before`);
    }
    if (4 * count + ends[count - 1]! !== size) throw fail(`its cards end at ${4 * count + ends[count - 1]!}, the block at ${size}`);
    const block = { position, first, count, plain, ends, next: Math.ceil((offset + BLOCK_HEAD + stored) / CARD_ALIGN) };
    if (this.cache.length === CACHED_BLOCKS) this.cache.shift();
    this.cache.push(block);
    return block;
  }

  /** Card `first + k` of `block`. */
  private cardOf(block: Block, k: number): Card {
    const start = 4 * block.count;
    const from = start + (k === 0 ? 0 : block.ends[k - 1]!);
    let object: BucketObject;
    try {
      object = delinearize(block.plain.subarray(from, start + block.ends[k]!));
    } catch (err) {
      if (!isSherlockError(err)) throw err;
      throw this.file.corrupt(block.position * CARD_ALIGN, `card ${block.first + k}, at byte ${from + (err.place.offset ?? 0)} of its block: ${err.message}`);
    }
    const card = this.parse(object, block.position * CARD_ALIGN);
    if (card.cardId !== block.first + k) throw this.file.corrupt(block.position * CARD_ALIGN, `card ${card.cardId} found where card ${block.first + k} should be`);
    return card;
  }

  /** Card `cardId`, in the block at `position` (as CardInfo says). */
  get(position: number, cardId: number): Card {
    const block = this.block(position);
    const k = cardId - block.first;
    if (k < 0 || k >= block.count) throw this.file.corrupt(position * CARD_ALIGN, `card ${cardId} is not in this block (cards ${block.first} to ${block.first + block.count - 1})`);
    return this.cardOf(block, k);
  }

  /** Every card in file order, the body CRC checked at the end. */
  *[Symbol.iterator](): IterableIterator<{ position: number; card: Card }> {
    let position = 0;
    let seen = 0;
    while (position * CARD_ALIGN < this.file.bodyLength) {
      const block = this.block(position);
      if (block.first !== seen) throw this.file.corrupt(position * CARD_ALIGN, `card block from card ${block.first} where card ${seen} comes`);
      for (let k = 0; k < block.count; k++) yield { position, card: this.cardOf(block, k) };
      seen += block.count;
      position = block.next;
    }
    if (seen !== this.count) throw this.file.corrupt(this.file.bodyLength, `${seen} cards found, the header says ${this.count}`);
    this.file.verify();
  }

  private parse(object: BucketObject, offset: number): Card {
    const fail = (message: string) => this.file.corrupt(offset, `card: ${message}`);
    const text = (name: string, what: string): string => {
      const value = object.string(name);
      if (value === undefined) throw fail(`no ${what} (${name})`);
      return value;
    };
    const number = (value: string, what: string): number => {
      if (!/^\d{1,15}$/.test(value)) throw fail(`bad ${what} ${JSON.stringify(value)}`);
      return Number(value);
    };
    const arc = /^(\S+) (\S+) (\S+)$/.exec(text('a', 'ARC location'));
    if (arc === null) throw fail('bad ARC location (a)');
    const card: Card = {
      cardId: number(text('O', 'card id'), 'card id'),
      url: text('U', 'URL'),
      text: object.first('X') ?? Buffer.alloc(0),
      type: text('T', 'type'),
      size: number(text('z', 'size'), 'size'),
      date: number(text('D', 'date'), 'date'),
      arc: { file: arc[1]!, offset: number(arc[2]!, 'ARC offset'), length: number(arc[3]!, 'ARC length') },
    };
    const title = object.string('t');
    if (title !== undefined) card.title = title;
    const pages = object.string('n');
    if (pages !== undefined) card.pages = number(pages, 'page count');
    const referrer = object.string('i');
    if (referrer !== undefined) card.referrer = referrer;
    return card;
  }

  close(): void {
    this.file.close();
  }
}
