/**
 * Cards: what a search result needs of each card (URL, title, text for
 * snippets, type, size, date, where the response lies in the archive),
 * compressed, read by position (CardInfo gives it) for the results shown.
 * Layout after the seed (seeds/003 "Cards"):
 *
 *   Header fields (index-file.ts): 0 card count, 1 CARD_POS_SHIFT (5)
 *   Body: per card, at a body offset that is a multiple of 32
 *     0   4  stored length S
 *     4   S  the card as a linearized object (bucket.ts: type byte 0x03, a V3.3
 *            deflate bucket with an empty header, raw deflate in place of Lizard)
 *     4+S    zero padding to the next multiple of 32
 *
 * A card's position is its body offset >> 5 (u32, so Cards may reach 128 GiB).
 * The card object's attributes (docs/indexer.md "Cards"):
 *   O  card id, decimal        U  canonical URL      t  title (UTF-8; absent: none)
 *   X  text with word types (doc-text.ts), possibly empty
 *   T  MIME type               z  body size in bytes, decimal
 *   D  date, Unix seconds      a  "<ARC file> <offset> <length>", as in buckets
 *
 * The reader checks the length against the body, inflates (the Adler-32
 * catches damage inside), and checks every attribute; damage is
 * SHERLOCK_CORRUPT_INDEX naming the file and the offset of the card.
 */

import { BUCKET_TYPE, BucketObject, delinearize, linearize } from './bucket.js';
import { isSherlockError } from './errors.js';
import { CountingWriter, IndexFileReader, type IndexFormat } from './index-file.js';

export const CARDS_FORMAT: IndexFormat = { magic: 'SHERLOCK-CARDS', version: 1, fields: ['cards', 'position shift'], what: 'Cards' };
export const CARD_POS_SHIFT = 5;
const CARD_ALIGN = 1 << CARD_POS_SHIFT;

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
  return object
    .add('X', card.text)
    .add('T', card.type)
    .add('z', decimal(card.size, 'size'))
    .add('D', decimal(card.date, 'date'))
    .add('a', `${file} ${decimal(offset, 'ARC offset')} ${decimal(length, 'ARC length')}`);
}

/** A card as Cards stores it (without the length): the linearized, deflated object. Workers make these; CardsWriter.addEncoded() stores them. */
export function encodeCard(card: Card): Buffer {
  return linearize(BUCKET_TYPE.V33_DEFLATE, cardObject(card));
}

/** Streams cards; positions come back from add() for CardInfo. */
export class CardsWriter extends CountingWriter {
  constructor(file: string) {
    super(file, CARDS_FORMAT);
  }

  /** Appends a card; returns its position (body offset >> CARD_POS_SHIFT). */
  add(card: Card): number {
    return this.addEncoded(encodeCard(card));
  }

  /** Appends a card made by encodeCard(); returns its position. */
  addEncoded(data: Uint8Array): number {
    const position = this.out.length / CARD_ALIGN;
    if (position > 0xffffffff) throw new RangeError('Cards is full: positions are u32');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(data.length);
    this.out.write(length);
    this.out.write(data);
    this.out.align(CARD_POS_SHIFT);
    this.count += 1;
    return position;
  }

  protected override moreFields(): number[] {
    return [CARD_POS_SHIFT];
  }
}

export class CardsReader {
  readonly count: number;

  private constructor(private readonly file: IndexFileReader) {
    this.count = file.fields[0]!;
    if (file.fields[1] !== CARD_POS_SHIFT) throw file.corruptField(1, `${file.fields[1]}, ${CARD_POS_SHIFT} expected`);
  }

  static open(file: string): CardsReader {
    return IndexFileReader.openWith(file, CARDS_FORMAT, (reader) => new CardsReader(reader));
  }

  /** The card at `position`, and the position of the next one. */
  at(position: number): { card: Card; next: number } {
    const offset = position * CARD_ALIGN;
    const length = this.file.read(offset, 4, 'card length').readUInt32LE(0);
    const data = this.file.read(offset + 4, length, 'card');
    let object: BucketObject;
    try {
      object = delinearize(data);
    } catch (err) {
      if (!isSherlockError(err)) throw err;
      throw this.file.corrupt(offset + 4 + (err.place.offset ?? 0), `card object: ${err.message}`);
    }
    return { card: this.parse(object, offset), next: Math.ceil((offset + 4 + length) / CARD_ALIGN) };
  }

  /** The card at `position`, which must be card `cardId` (as CardInfo says). */
  get(position: number, cardId?: number): Card {
    const { card } = this.at(position);
    if (cardId !== undefined && card.cardId !== cardId) throw this.file.corrupt(position * CARD_ALIGN, `card ${card.cardId} found where card ${cardId} should be`);
    return card;
  }

  /** Every card in file order, the body CRC checked at the end. */
  *[Symbol.iterator](): IterableIterator<{ position: number; card: Card }> {
    let position = 0;
    let seen = 0;
    while (position * CARD_ALIGN < this.file.bodyLength) {
      const { card, next } = this.at(position);
      yield { position, card };
      position = next;
      seen += 1;
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
    return title === undefined ? card : { ...card, title };
  }

  close(): void {
    this.file.close();
  }
}
