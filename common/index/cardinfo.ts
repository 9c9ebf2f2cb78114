/**
 * CardInfo: one fixed-size record per card, indexed by card id, which the
 * searcher consults for every matching card (static weight, duplicates, site
 * collapsing, `type:` and date filters) and which leads to the card itself in
 * Cards. The seed gives only "Array of struct card_info[id]" (seeds/003
 * "CardInfo"); the record is ours (docs/indexer.md).
 *
 *   Header fields (file.ts): 0 card count N
 *   Body: N records of 17 bytes, record i at body offset 17·i
 *     0   4  card position in Cards: its block's body offset >> CARD_POS_SHIFT (cards.ts)
 *     4   4  site: the first 4 bytes of the site footprint (url.ts), for collapsing
 *     8   4  date: Last-Modified, else download time, Unix seconds (0: unknown)
 *     12  1  static weight 0–255
 *     13  1  flags, CARD_FLAG bits; others are zero
 *     14  1  type: index into CARD_TYPES
 *     15  1  length: the words of its body on a log scale (lengthCode)
 *     16  1  language: its number (common/language/codes.ts; 0 undetermined)
 *
 * Version 2 put the length in byte 15 (zero in version 1, which is refused:
 * its cards would all look empty to ranking's length normalisation);
 * version 3 added the language (version 2 is refused: `lang:` would find
 * nothing). The reader holds the whole body (N × 17 bytes, its CRC checked on open) so
 * that a lookup is an array access; every field is checked when read (every
 * value of the length byte means a length).
 */

import { languageCode, languageOf } from '../language/codes.js';
import { CountingWriter, readIndexFile, recordCount, type IndexFormat, type WholeIndexFile } from './file.js';

export const CARDINFO_FORMAT: IndexFormat = { magic: 'SHERLOCK-CARDINF', version: 3, fields: ['cards'], what: 'CardInfo' };
export const CARDINFO_RECORD_SIZE = 17;

/** The original's card flags that the searcher needs (sherlock-original §4). */
export const CARD_FLAG = {
  /** No content to index: noindex, a redirect, robots denied. */
  empty: 0x01,
  /** A duplicate of another card: never shown. */
  dup: 0x02,
  /** The primary card of a class of duplicates. */
  merged: 0x04,
  /** Its text has accented letters. */
  accented: 0x08,
  frameset: 0x10,
} as const;
const ALL_FLAGS = Object.values(CARD_FLAG).reduce((a, b) => a | b, 0);

/** Coarse document types for `type:` queries and the result's type field. */
export const CARD_TYPES = ['other', 'html', 'text', 'pdf', 'image', 'xml', 'office'] as const;
export type CardType = (typeof CARD_TYPES)[number];

/** The office files the gatherer reads (gatherer/office.ts): OOXML's and OpenDocument's documents, spreadsheets and presentations. */
export const OFFICE_TYPES: ReadonlySet<string> = new Set([
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/vnd.oasis.opendocument.presentation',
]);

/** Image MIME types by file extension: what the indexer names an image card that was never fetched (indexer/images.ts). */
export const IMAGE_TYPES: ReadonlyMap<string, string> = new Map([
  ['jpg', 'image/jpeg'],
  ['jpeg', 'image/jpeg'],
  ['png', 'image/png'],
  ['gif', 'image/gif'],
  ['webp', 'image/webp'],
  ['svg', 'image/svg+xml'],
  ['avif', 'image/avif'],
  ['bmp', 'image/bmp'],
  ['ico', 'image/vnd.microsoft.icon'],
  ['tif', 'image/tiff'],
  ['tiff', 'image/tiff'],
]);

/** The coarse type of a MIME type: what the indexer records and what `type:` filters on. */
export function cardType(mime: string): CardType {
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return 'html';
  if (mime === 'text/plain' || mime === 'text/csv' || mime === 'text/tab-separated-values') return 'text';
  if (mime === 'application/pdf') return 'pdf';
  if (OFFICE_TYPES.has(mime)) return 'office';
  if (mime.startsWith('image/')) return 'image';
  if (mime === 'text/xml' || mime === 'application/xml' || mime.endsWith('+xml')) return 'xml';
  return 'other';
}

/** Steps of the static weight per doubling of the rank (staticWeight). */
const WEIGHT_STEPS = 28;
/** r·N of a card nobody links to: 1 − the indexer's PageRank damping (0.85), where the weight's scale starts. */
const BASE_RANK = 0.15;

/**
 * The static weight byte of a card whose rank is `rankTimesCards` (its
 * PageRank times the number of cards: 1 on average, BASE_RANK for one
 * nobody links to): 28·log2(1 + r·N / 0.15), rounded, at most 255. A card
 * nobody links to weighs 28, an average one about 80; no card weighs 0 (its
 * rank is at least the base), so 0 means "never weighed" to the readers.
 */
export function staticWeight(rankTimesCards: number): number {
  return Math.min(255, Math.round(WEIGHT_STEPS * Math.log2(1 + Math.max(0, rankTimesCards) / BASE_RANK)));
}

/** The rank times cards a static weight stands for (0 for 0); staticWeight of it is the weight again. */
export function rankOfStaticWeight(weight: number): number {
  return BASE_RANK * (2 ** (weight / WEIGHT_STEPS) - 1);
}

/** Steps of lengthCode per doubling of the length: each step is 2^(1/16), about 4%. */
const LENGTH_STEPS = 16;

/** A body of `words` words as one byte: 16·log2(1 + words), rounded, at most 255 (about 62,000 words and more). */
export function lengthCode(words: number): number {
  return Math.min(255, Math.round(LENGTH_STEPS * Math.log2(1 + words)));
}

/** The length a lengthCode stands for (within 2% of the words counted, below the cap). */
export function codeLength(code: number): number {
  return 2 ** (code / LENGTH_STEPS) - 1;
}

export interface CardInfo {
  /** Body offset of the card's block in Cards >> CARD_POS_SHIFT. */
  position: number;
  site: number;
  date: number;
  weight: number;
  flags: number;
  type: CardType;
  /** lengthCode of the words of its body. */
  length: number;
  /** ISO 639-1 code, "und" when not told. */
  language: string;
}

function checkU32(value: number, what: string): void {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new RangeError(`${what} ${value} is not a u32`);
}

export function encodeCardInfo(info: CardInfo, out: Buffer = Buffer.alloc(CARDINFO_RECORD_SIZE), at = 0): Buffer {
  checkU32(info.position, 'card position');
  checkU32(info.site, 'site');
  checkU32(info.date, 'date');
  if (!Number.isInteger(info.weight) || info.weight < 0 || info.weight > 255) throw new RangeError(`weight ${info.weight} outside 0–255`);
  if ((info.flags & ~ALL_FLAGS) !== 0 || !Number.isInteger(info.flags)) throw new RangeError(`undefined card flags 0x${info.flags.toString(16)}`);
  const type = CARD_TYPES.indexOf(info.type);
  if (type < 0) throw new RangeError(`unknown card type ${info.type}`);
  if (!Number.isInteger(info.length) || info.length < 0 || info.length > 255) throw new RangeError(`length code ${info.length} outside 0–255`);
  out.writeUInt32LE(info.position, at);
  out.writeUInt32LE(info.site, at + 4);
  out.writeUInt32LE(info.date, at + 8);
  out.writeUInt8(info.weight, at + 12);
  out.writeUInt8(info.flags, at + 13);
  out.writeUInt8(type, at + 14);
  out.writeUInt8(info.length, at + 15);
  out.writeUInt8(languageCode(info.language), at + 16);
  return out;
}

/** Writes CardInfo in card id order: the n-th add() is card n. */
export class CardInfoWriter extends CountingWriter {
  constructor(file: string) {
    super(file, CARDINFO_FORMAT);
  }

  /** Appends the next card's record; returns its card id. */
  add(info: CardInfo): number {
    this.out.write(encodeCardInfo(info));
    return this.count++;
  }
}

export class CardInfoReader {
  readonly count: number;

  private constructor(private readonly file: WholeIndexFile) {
    this.count = recordCount(file, CARDINFO_RECORD_SIZE, file.fields[0]!);
  }

  static open(file: string): CardInfoReader {
    return new CardInfoReader(readIndexFile(file, CARDINFO_FORMAT));
  }

  /** The record of card `id`; an id past the end is a RangeError (the caller's bug, or a chain's damage it must report). */
  get(id: number): CardInfo {
    if (!Number.isInteger(id) || id < 0 || id >= this.count) throw new RangeError(`card id ${id} outside 0–${this.count - 1}`);
    const { body } = this.file;
    const at = id * CARDINFO_RECORD_SIZE;
    const flags = body[at + 13]!;
    const type = CARD_TYPES[body[at + 14]!];
    if ((flags & ~ALL_FLAGS) !== 0) throw this.file.corrupt(at + 13, `card ${id}: undefined flags 0x${flags.toString(16)}`);
    if (type === undefined) throw this.file.corrupt(at + 14, `card ${id}: undefined type ${body[at + 14]}`);
    return {
      position: body.readUInt32LE(at),
      site: body.readUInt32LE(at + 4),
      date: body.readUInt32LE(at + 8),
      weight: body[at + 12]!,
      flags,
      type,
      length: body[at + 15]!,
      // A number this build does not name (a newer index's language) reads as undetermined.
      language: languageOf(body[at + 16]!),
    };
  }

  *[Symbol.iterator](): IterableIterator<CardInfo> {
    for (let id = 0; id < this.count; id++) yield this.get(id);
  }
}
