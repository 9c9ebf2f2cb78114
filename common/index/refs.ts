/**
 * Reference chains: where a word (WordIndex) or a string (StringIndex) occurs
 * in one card. The seed's encoding (seeds/003 "WordIndex", "ref:";
 * sherlock-original §4 item 11), which the chewer writes and the searcher
 * reads for every query.
 *
 * A chain comes in two forms, which differ only in the head before the refs.
 *
 * Alone (the seed's; the indexer's Postings work files, one chain a record):
 *   u32   card id in bits 0–27, length in bits 28–31 (little-endian, so the
 *         length is the high nibble of the fourth byte): the byte size of the
 *         refs, 1–15; 0 means a varint follows holding it (then ≥ 16)
 *   varint  only when the length field is 0: libucw's utf8_32 (bucket.ts)
 *   refs  exactly that many bytes
 *
 * Listed (ours; WordIndex and StringIndex format 2, a word's chains back to
 * back, card ids increasing): the card id as the gap from the chain before,
 * so that the frequent words' heads take a byte or two instead of four:
 *   varint  utf8_32 of gap << 3 | length: gap is the card id for the first
 *           chain of a list, for the others the card id minus the one before
 *           (≥ 1); length the byte size of the refs, 1–7, or 0 when a second
 *           varint follows holding it (then ≥ 8)
 *   varint  only when the length bits are 0
 *   refs  exactly that many bytes
 *
 * A ref, by its first byte. p: position bits, t: type bits, w: weight bits;
 * where a field is split, the bits in the earlier byte are the higher ones;
 * u8 is one more byte, u16 two more, little-endian, the lowest bits.
 *
 *   form  size  bits                         fields
 *   W1    1     0tpp pppp                    word type t (0 text or 1 emphasised, the
 *                                            two most frequent), delta 0–63
 *   W2    2     10pp pttt, u8                word type, delta 0–2,047
 *   W3    3     110p pttt, u16               word type, delta 1–262,143
 *   M2    2     1110 tttt wwpp pppp          meta type, weight, position 0–63
 *   M3    3     1111 0tww pppp pttt, u8      meta type (high bit, then the low 3),
 *                                            weight, position 0–8,191
 *   W4    4     1111 10tt tppp pppp, u16     word type, delta 1–8,388,607
 *   M4    4     1111 110w wppp tttt, u16     weight, meta type, position 0–524,287
 *   —           1111 111x                    reserved: rejected
 *
 * Word refs are delta-coded: a chain starts at position −1 and each word ref
 * adds its delta, so the first word at position 0 has delta 1 and a delta is
 * never 0 for a real position. Delta 0, which the seed reserves as "behind the
 * edge" in W1 and W2, marks an occurrence past the last position a card keeps
 * (the card has the word, the position is lost); it reads as WORD_EDGE, and
 * only more edge refs may follow it. Meta refs carry absolute positions, so
 * they may stand anywhere among the word refs.
 *
 * Limits (sherlock-original §4): word positions 0–32,767, meta positions
 * 0–2,047, card ids below 2^28. Types are doc-text.ts's word types (0 text,
 * 1 emphasised, 2 small, 3 heading 1, 4 heading 2, 5 alt) and doc-body.ts's
 * meta types (0 title, 1 keywords, 2 meta/description, 3 URL words, 4 file
 * name, 5 anchor text); weights are 0–3.
 *
 * The encoder writes the shortest form (W4 and M4 are never needed within the
 * limits) and refuses values outside the limits with RangeError: those are
 * the caller's bugs. The decoder accepts every form, but distrusts each byte:
 * a chain cut short, a ref running past its chain's length, a varint length
 * that the short field could have held, a reserved byte, an undefined type,
 * a position past its limit, a listed gap of 0 (card ids not increasing) or
 * a card id past MAX_CARD_ID are SherlockError SHERLOCK_CORRUPT_INDEX naming
 * the file and the offset.
 */

import { decodeVarint, putVarint, varintSize } from '../bucket/bucket.js';
import { META_TYPES } from '../bucket/doc-body.js';
import { WORD_TYPE } from '../bucket/doc-text.js';
import { SherlockError, type ErrorPlace } from '../errors.js';

export const MAX_CARD_ID = 2 ** 28 - 1;
export const MAX_WORD_POSITION = 32_767;
export const MAX_META_POSITION = 2_047;
/** The position of an occurrence past MAX_WORD_POSITION ("behind the edge"). */
export const WORD_EDGE = MAX_WORD_POSITION + 1;
export const MAX_WEIGHT = 3;
/** ChainDecoder#shortKey's keys are below this. */
export const SHORT_REF_KEYS = 256 + 65_536;
const WORD_TYPES = Object.keys(WORD_TYPE).length;
const SHORT_LENGTH_LIMIT = 15;
/** Listed chains: the low bits of the head varint hold a length up to LISTED_LENGTH_LIMIT. */
const LISTED_LENGTH_BITS = 3;
const LISTED_LENGTH_LIMIT = (1 << LISTED_LENGTH_BITS) - 1;

export interface WordRef {
  kind: 'word';
  /** doc-text.ts WORD_TYPE. */
  type: number;
  /** 0–MAX_WORD_POSITION, or WORD_EDGE. */
  position: number;
}

export interface MetaRef {
  kind: 'meta';
  /** Index into doc-body.ts META_TYPES. */
  type: number;
  weight: number;
  position: number;
}

export type Ref = WordRef | MetaRef;

export interface Chain {
  cardId: number;
  refs: Ref[];
}

// ---------------------------------------------------------------- encoding

function checkRange(value: number, max: number, what: string): void {
  if (!Number.isInteger(value) || value < 0 || value > max) throw new RangeError(`${what} ${value} outside 0–${max}`);
}

/**
 * One chain's refs, built occurrence by occurrence in a reusable buffer: no
 * Ref object per occurrence, for the chewer's hot loop. Checks what
 * encodeChain checks (RangeError); positions of word refs must increase.
 */
export class ChainBuilder {
  private refs = new Uint8Array(64);
  private used = 0;
  /** The last word position, −1 at the start. */
  private previous = -1;

  /** Forgets the refs: the builder starts a new chain. */
  reset(): void {
    this.used = 0;
    this.previous = -1;
  }

  /**
   * Starts a chain from refs already encoded (those of a chain read back,
   * refsOf): the meta refs added next go after them; word refs are refused,
   * as the last word position is not known.
   */
  resume(refs: Uint8Array): void {
    this.used = 0;
    this.room(refs.length);
    this.refs.set(refs);
    this.used = refs.length;
    this.previous = Number.POSITIVE_INFINITY;
  }

  /** Starts a new chain of these refs. */
  set(refs: readonly Ref[]): void {
    this.reset();
    for (const ref of refs) {
      if (ref.kind === 'meta') this.meta(ref.type, ref.weight, ref.position);
      else this.word(ref.type, ref.position);
    }
  }

  /** Bytes of the refs so far. */
  get length(): number {
    return this.used;
  }

  private room(n: number): void {
    if (this.used + n <= this.refs.length) return;
    const grown = new Uint8Array(Math.max(2 * this.refs.length, this.used + n));
    grown.set(this.refs.subarray(0, this.used));
    this.refs = grown;
  }

  meta(type: number, weight: number, position: number): void {
    checkRange(type, META_TYPES.length - 1, 'meta type');
    checkRange(weight, MAX_WEIGHT, 'meta weight');
    checkRange(position, MAX_META_POSITION, 'meta position');
    this.room(3);
    const { refs } = this;
    if (position < 64) {
      refs[this.used++] = 0xe0 | type;
      refs[this.used++] = (weight << 6) | position;
    } else {
      refs[this.used++] = 0xf0 | ((type >> 3) << 2) | weight;
      refs[this.used++] = ((position >> 8) << 3) | (type & 7);
      refs[this.used++] = position & 0xff;
    }
  }

  /** A word ref at `position` (0–MAX_WORD_POSITION, or WORD_EDGE). */
  word(type: number, position: number): void {
    const { previous } = this;
    checkRange(type, WORD_TYPES - 1, 'word type');
    if (position !== WORD_EDGE) checkRange(position, MAX_WORD_POSITION, 'word position');
    if (previous === WORD_EDGE ? position !== WORD_EDGE : position <= previous) {
      throw new RangeError(`word position ${position} after ${previous}: positions must increase, edge refs come last`);
    }
    const delta = position === WORD_EDGE ? 0 : position - previous;
    this.previous = position;
    this.room(3);
    const { refs } = this;
    if (delta < 64 && type < 2) {
      refs[this.used++] = (type << 6) | delta;
    } else if (delta < 2048) {
      refs[this.used++] = 0x80 | ((delta >> 8) << 3) | type;
      refs[this.used++] = delta & 0xff;
    } else {
      refs[this.used++] = 0xc0 | ((delta >> 16) << 3) | type;
      refs[this.used++] = delta & 0xff;
      refs[this.used++] = (delta >> 8) & 0xff;
    }
  }

  /** Bytes of the whole chain: card id and length, the varint if needed, the refs. */
  get chainSize(): number {
    return 4 + (this.used <= SHORT_LENGTH_LIMIT ? 0 : varintSize(this.used)) + this.used;
  }

  /** Bytes of the listed chain (WordIndex, StringIndex) of card `cardId` after card `previous` (−1: the first of its list). */
  listedSize(cardId: number, previous: number): number {
    return listedHeadSize(cardId, previous, this.used) + this.used;
  }

  /** Writes the listed chain of card `cardId` after card `previous` (−1: the first of its list) at `out[pos]`; returns the offset after it. */
  writeListed(cardId: number, previous: number, out: Uint8Array, pos: number): number {
    if (this.used === 0) throw new RangeError(`card ${cardId}: a chain holds at least one ref`);
    pos = putListedHead(out, pos, cardId, previous, this.used);
    out.set(this.refs.subarray(0, this.used), pos);
    return pos + this.used;
  }

  /** Writes the chain of card `cardId` (at least one ref) at `out[pos]`; returns the offset after it. */
  writeTo(cardId: number, out: Uint8Array, pos: number): number {
    checkRange(cardId, MAX_CARD_ID, 'card id');
    const length = this.used;
    if (length === 0) throw new RangeError(`card ${cardId}: a chain holds at least one ref`);
    const short = length <= SHORT_LENGTH_LIMIT;
    const head = (cardId | ((short ? length : 0) << 28)) >>> 0;
    out[pos] = head & 0xff;
    out[pos + 1] = (head >>> 8) & 0xff;
    out[pos + 2] = (head >>> 16) & 0xff;
    out[pos + 3] = head >>> 24;
    pos += 4;
    if (!short) pos = putVarint(out, pos, length);
    out.set(this.refs.subarray(0, length), pos);
    return pos + length;
  }
}

/** The head varint of a listed chain (with `length` ref bytes) of card `cardId` after card `previous` (−1: the first of its list). */
function listedHead(cardId: number, previous: number, length: number): number {
  checkRange(cardId, MAX_CARD_ID, 'card id');
  if (cardId <= previous) throw new RangeError(`card id ${cardId} after ${previous}: chains must be in card order`);
  // The first chain holds its card id (not the gap from −1), so the head stays below 2^31.
  const gap = previous < 0 ? cardId : cardId - previous;
  return gap * (LISTED_LENGTH_LIMIT + 1) + (length <= LISTED_LENGTH_LIMIT ? length : 0);
}

/** Bytes of a listed chain's head: the varint of card id and length, the length's varint if needed. */
export function listedHeadSize(cardId: number, previous: number, length: number): number {
  return varintSize(listedHead(cardId, previous, length)) + (length <= LISTED_LENGTH_LIMIT ? 0 : varintSize(length));
}

/** Writes a listed chain's head (its refs, `length` bytes, follow) at `out[pos]`; returns the offset after it. */
export function putListedHead(out: Uint8Array, pos: number, cardId: number, previous: number, length: number): number {
  pos = putVarint(out, pos, listedHead(cardId, previous, length));
  return length <= LISTED_LENGTH_LIMIT ? pos : putVarint(out, pos, length);
}

/** The card id of the chain alone at `data[at]` (written by ChainBuilder.writeTo: trusted). */
export function chainCardId(data: Buffer, at: number): number {
  return data.readUInt32LE(at) & MAX_CARD_ID;
}

/** Where the refs of the chain alone at `data[at]` start (written by ChainBuilder.writeTo: trusted). */
export function chainRefsStart(data: Buffer, at: number): number {
  return data[at + 3]! >>> 4 !== 0 ? at + 4 : decodeVarint(data, at + 4).next;
}

/** One chain's bytes alone: card id and length, then the refs (at least one). */
export function encodeChain(chain: Chain): Buffer {
  checkRange(chain.cardId, MAX_CARD_ID, 'card id');
  const builder = new ChainBuilder();
  builder.set(chain.refs);
  const out = Buffer.allocUnsafe(builder.chainSize);
  builder.writeTo(chain.cardId, out, 0);
  return out;
}

// ---------------------------------------------------------------- decoding

/** The refs of the one chain alone `chain` holds (written by ChainBuilder: its lengths are trusted). */
export function refsOf(chain: Buffer): Buffer {
  return chain.subarray(chainRefsStart(chain, 0));
}

/**
 * A ref packed into one int32 (PackedChains): `line << 7 | meta << 6 |
 * type << 2 | weight`. The line puts every occurrence of a card on one axis:
 * a word's position (WORD_EDGE behind the edge), a meta's position above
 * META_LINE; so packed refs sort by line, and two lines are near only when
 * both are words or both metas.
 */
export const META_LINE = 1 << 20;
export const PACKED_CODE_BITS = 7;
/** The bit of a packed ref that says it is a meta's (its type then in bits 2–5). */
export const PACKED_META = 1 << 6;

export function packRef(ref: Ref): number {
  return ref.kind === 'word'
    ? (ref.position << PACKED_CODE_BITS) | (ref.type << 2)
    : ((META_LINE + ref.position) << PACKED_CODE_BITS) | PACKED_META | (ref.type << 2) | ref.weight;
}

export function unpackRef(packed: number): Ref {
  const line = packed >> PACKED_CODE_BITS;
  const type = (packed >> 2) & 15;
  return (packed & PACKED_META) === 0 ? { kind: 'word', type, position: line } : { kind: 'meta', type, weight: packed & 3, position: line - META_LINE };
}

/**
 * The chains of one word (or string) in columns, for the searcher: no
 * object per chain or per ref. Chain i is card `cards[i]`, its refs are
 * `refs[starts[i]]` to `refs[starts[i + 1]]`, packed (packRef), in the
 * order they are stored.
 */
export interface PackedChains {
  count: number;
  cards: Uint32Array;
  starts: Uint32Array;
  refs: Int32Array;
  /** How many chains the word has: `count` when all were read; when `max` cut them, estimated from the bytes read (count × all ÷ read). */
  total: number;
}

/** Scratch columns for ChainDecoder#packed, grown as needed up to SCRATCH_KEPT elements (a bigger list gets its own): one decode at a time per thread. */
const SCRATCH_KEPT = 4 << 20;
let scratchCards = new Uint32Array(1024);
let scratchStarts = new Uint32Array(1025);
let scratchRefs = new Int32Array(4096);

function scratch(chains: number, refs: number): { cards: Uint32Array; starts: Uint32Array; refs: Int32Array } {
  if (scratchCards.length < chains) {
    if (chains > SCRATCH_KEPT) return { cards: new Uint32Array(chains), starts: new Uint32Array(chains + 1), refs: new Int32Array(refs) };
    scratchCards = new Uint32Array(chains);
    scratchStarts = new Uint32Array(chains + 1);
  }
  scratchStarts[0] = 0;
  if (scratchRefs.length < refs) {
    if (refs > SCRATCH_KEPT) return { cards: scratchCards, starts: scratchStarts, refs: new Int32Array(refs) };
    scratchRefs = new Int32Array(refs);
  }
  return { cards: scratchCards, starts: scratchStarts, refs: scratchRefs };
}

/** How many chains a list has, `count` of them read from `from` to `pos` of the list's bytes up to `end`: `count` when all were, else estimated from the bytes read. */
function totalOf(count: number, from: number, pos: number, end: number): number {
  return pos >= end || count === 0 ? count : Math.round((count * (end - from)) / (pos - from));
}

/** Decodes chains from bytes placed at `at` (file and offset of data[0]). */
export class ChainDecoder {
  constructor(
    private readonly data: Buffer,
    private readonly at: ErrorPlace = {},
  ) {}

  private corrupt(pos: number, message: string): SherlockError {
    return new SherlockError('SHERLOCK_CORRUPT_INDEX', message, { ...this.at, offset: (this.at.offset ?? 0) + pos });
  }

  /** The chain alone at `pos`, not past `end`, and the position after it. */
  chainAt(pos: number, end = this.data.length): { chain: Chain; next: number } {
    const { data } = this;
    if (pos + 4 > end) throw this.corrupt(pos, `chain cut short: ${end - pos} of the 4 bytes of its card id and length`);
    const head = data.readUInt32LE(pos);
    let length = head >>> 28;
    let start = pos + 4;
    if (length === 0) {
      ({ value: length, next: start } = this.varint(start, end, 'chain length'));
      if (length <= SHORT_LENGTH_LIMIT) throw this.corrupt(pos + 4, `chain length ${length} in a varint, where the 4-bit field holds it`);
    }
    const stop = this.stop(pos, start, length, end);
    const out = new Int32Array(length);
    const n = this.refs(start, stop, out, 0);
    const refs: Ref[] = [];
    for (let i = 0; i < n; i++) refs.push(unpackRef(out[i]!));
    return { chain: { cardId: head & MAX_CARD_ID, refs }, next: stop };
  }

  /** A utf8_32 varint at `pos`, a damaged one named as `what`. */
  private varint(pos: number, end: number, what: string): { value: number; next: number } {
    if (pos >= end) throw this.corrupt(pos, `chain cut short before its ${what} varint`);
    const lead = this.data[pos]!;
    if (lead < 0x80) return { value: lead, next: pos + 1 };
    try {
      return decodeVarint(this.data, pos, end);
    } catch (err) {
      throw this.corrupt((err as SherlockError).place.offset ?? pos, `${what}: ${(err as Error).message}`);
    }
  }

  /** Where the refs of the chain at `pos`, `length` bytes from `start`, end; checked against `end`. */
  private stop(pos: number, start: number, length: number, end: number): number {
    if (start + length > end) throw this.corrupt(pos, `chain cut short: its refs take ${length} bytes, ${end - start} remain`);
    return start + length;
  }

  private cutRef(at: number, size: number, end: number): SherlockError {
    return this.corrupt(at, `ref of ${size} bytes runs past its chain's end (${end - at} bytes left)`);
  }

  /** The refs from `pos` to `end` (one chain's), packed into `out` from `n`; returns the new count. */
  private refs(pos: number, end: number, out: Int32Array, n: number): number {
    const { data } = this;
    let previous = -1;
    while (pos < end) {
      const at = pos;
      const b0 = data[pos]!;
      // Word refs set `delta` (and `edgeAllowed`); meta refs set `metaPosition`.
      let type: number;
      let delta = -1;
      let edgeAllowed = true;
      let weight = 0;
      let metaPosition = 0;
      if (b0 < 0x80) {
        type = b0 >> 6;
        delta = b0 & 0x3f;
        pos += 1;
      } else if (b0 < 0xc0) {
        if (pos + 2 > end) throw this.cutRef(pos, 2, end);
        type = b0 & 7;
        delta = (((b0 >> 3) & 7) << 8) | data[pos + 1]!;
        pos += 2;
      } else if (b0 < 0xe0) {
        if (pos + 3 > end) throw this.cutRef(pos, 3, end);
        type = b0 & 7;
        delta = (((b0 >> 3) & 3) << 16) | data.readUInt16LE(pos + 1);
        edgeAllowed = false;
        pos += 3;
      } else if (b0 < 0xf0) {
        if (pos + 2 > end) throw this.cutRef(pos, 2, end);
        const b1 = data[pos + 1]!;
        type = b0 & 15;
        weight = b1 >> 6;
        metaPosition = b1 & 0x3f;
        pos += 2;
      } else if (b0 < 0xf8) {
        if (pos + 3 > end) throw this.cutRef(pos, 3, end);
        const b1 = data[pos + 1]!;
        type = (((b0 >> 2) & 1) << 3) | (b1 & 7);
        weight = b0 & 3;
        metaPosition = ((b1 >> 3) << 8) | data[pos + 2]!;
        pos += 3;
      } else if (b0 < 0xfc) {
        if (pos + 4 > end) throw this.cutRef(pos, 4, end);
        const b1 = data[pos + 1]!;
        type = ((b0 & 3) << 1) | (b1 >> 7);
        delta = ((b1 & 0x7f) << 16) | data.readUInt16LE(pos + 2);
        edgeAllowed = false;
        pos += 4;
      } else if (b0 < 0xfe) {
        if (pos + 4 > end) throw this.cutRef(pos, 4, end);
        const b1 = data[pos + 1]!;
        type = b1 & 15;
        weight = ((b0 & 1) << 1) | (b1 >> 7);
        metaPosition = (((b1 >> 4) & 7) << 16) | data.readUInt16LE(pos + 2);
        pos += 4;
      } else {
        throw this.corrupt(at, `reserved ref byte 0x${b0.toString(16)}`);
      }
      if (delta < 0) {
        if (type >= META_TYPES.length) throw this.corrupt(at, `undefined meta type ${type}`);
        if (metaPosition > MAX_META_POSITION) throw this.corrupt(at, `meta position ${metaPosition} beyond the limit ${MAX_META_POSITION}`);
        out[n++] = ((META_LINE + metaPosition) << PACKED_CODE_BITS) | PACKED_META | (type << 2) | weight;
        continue;
      }
      if (type >= WORD_TYPES) throw this.corrupt(at, `undefined word type ${type}`);
      let position: number;
      if (delta === 0) {
        if (!edgeAllowed) throw this.corrupt(at, 'word delta 0 in a long form (only the 1- and 2-byte forms mark the edge)');
        position = WORD_EDGE;
      } else {
        if (previous === WORD_EDGE) throw this.corrupt(at, 'word position after the edge');
        position = previous + delta;
        if (position > MAX_WORD_POSITION) throw this.corrupt(at, `word position ${position} beyond the limit ${MAX_WORD_POSITION}`);
      }
      previous = position;
      out[n++] = (position << PACKED_CODE_BITS) | (type << 2);
    }
    return n;
  }

  /** What listedAt found: the chain's card id and where its refs start (fields, not an object per chain: the walk's hottest call). */
  private listedCard = 0;
  private listedStart = 0;

  /**
   * The listed chain whose head is at `pos` (after a chain ending there, or
   * at the list's start, when `previous` is −1): its card id, given `previous`
   * (the card id before it), and where its refs start, into listedCard and
   * listedStart; returns where they stop.
   */
  private listedAt(pos: number, end: number, previous: number): number {
    const { data } = this;
    // Most heads take one byte, the others mostly two (utf8_32: 110x xxxx 10xx xxxx, at least 0x80).
    const lead = data[pos]!;
    let value: number;
    let start: number;
    if (lead < 0x80) {
      value = lead;
      start = pos + 1;
    } else if (lead >= 0xc2 && lead < 0xe0 && pos + 1 < end && (data[pos + 1]! & 0xc0) === 0x80) {
      value = ((lead & 0x1f) << 6) | (data[pos + 1]! & 0x3f);
      start = pos + 2;
    } else {
      ({ value, next: start } = this.varint(pos, end, 'chain head'));
    }
    const gap = Math.floor(value / (LISTED_LENGTH_LIMIT + 1));
    let length = value & LISTED_LENGTH_LIMIT;
    if (previous >= 0 && gap === 0) throw this.corrupt(pos, `card id gap 0 after card ${previous}: chains must be in card order`);
    const cardId = previous < 0 ? gap : previous + gap;
    if (cardId > MAX_CARD_ID) throw this.corrupt(pos, `card id ${cardId} beyond the limit ${MAX_CARD_ID}`);
    if (length === 0) {
      const at = start;
      ({ value: length, next: start } = this.varint(start, end, 'chain length'));
      if (length <= LISTED_LENGTH_LIMIT) throw this.corrupt(at, `chain length ${length} in a varint, where the head holds it`);
    }
    this.listedCard = cardId;
    this.listedStart = start;
    return this.stop(pos, start, length, end);
  }

  /** Every listed chain from `pos` to `end` (the first `max` of them), packed; card ids must increase. */
  packed(pos = 0, end = this.data.length, max = Infinity): PackedChains {
    const from = pos;
    // A chain takes at least 2 bytes (a head byte, a ref), a ref at least 1: the columns are decoded into
    // scratch arrays that big, and copied out at their size (allocating the bounds for each list made most of a miss's garbage).
    const room = Math.max(0, Math.min(Math.floor((end - pos) / 2), max));
    const { cards, starts, refs } = scratch(room, end - pos);
    let count = 0;
    let n = 0;
    let cardId = -1;
    while (pos < end && count < max) {
      const stop = this.listedAt(pos, end, cardId);
      cardId = cards[count] = this.listedCard;
      n = this.refs(this.listedStart, stop, refs, n);
      starts[++count] = n;
      pos = stop;
    }
    return { count, cards: cards.slice(0, count), starts: starts.slice(0, count + 1), refs: refs.slice(0, n), total: totalOf(count, from, pos, end) };
  }

  /**
   * Walks the listed chains from `pos` to `end` (the first `max` of them),
   * card ids increasing: `visit` gets each chain's card id, the offset of its
   * head in the data (refsSpan finds the chain again from there) and where
   * its refs' bytes start and stop (refsInto decodes them, shortKey names
   * the shortest). Returns the chains walked and their estimated total
   * (PackedChains). From a chain inside the list, `previous` is the card
   * id of the chain before it.
   */
  walk(pos: number, end: number, max: number, visit: (cardId: number, head: number, start: number, stop: number) => void, previous = -1): { count: number; total: number } {
    const from = pos;
    let count = 0;
    let cardId = previous;
    while (pos < end && count < max) {
      const stop = this.listedAt(pos, end, cardId);
      cardId = this.listedCard;
      visit(cardId, pos, this.listedStart, stop);
      count += 1;
      pos = stop;
    }
    return { count, total: totalOf(count, from, pos, end) };
  }

  /** Sets bit c of `bits` (c >> 5, 1 << (c & 31)) for every card c of the listed chains; their refs are skipped, not read. Returns the chains. */
  markCards(bits: Uint32Array): number {
    const { data } = this;
    const end = data.length;
    let pos = 0;
    let count = 0;
    let cardId = -1;
    while (pos < end) {
      const lead = data[pos]!;
      // A one-byte head with its length in it (most chains) is read here; the others as the walk reads them.
      if (lead < 0x80 && (lead & LISTED_LENGTH_LIMIT) !== 0 && cardId >= 0 && lead >= LISTED_LENGTH_LIMIT + 1) {
        cardId += lead >>> LISTED_LENGTH_BITS;
        if (cardId > MAX_CARD_ID) throw this.corrupt(pos, `card id ${cardId} beyond the limit ${MAX_CARD_ID}`);
        pos = this.stop(pos, pos + 1, lead & LISTED_LENGTH_LIMIT, end);
      } else {
        pos = this.listedAt(pos, end, cardId);
        cardId = this.listedCard;
      }
      bits[cardId >>> 5]! |= 1 << (cardId & 31);
      count += 1;
    }
    return count;
  }

  /**
   * The bytes of refs from `start` to `stop` as one number when they are 1
   * or 2 (b0, or 256 + b0 · 256 + b1), else −1: refs that short decode
   * the same wherever they stand (a chain starts afresh), so what was made
   * of them once may be remembered under this key (below SHORT_REF_KEYS).
   */
  shortKey(start: number, stop: number): number {
    const { data } = this;
    if (stop - start === 1) return data[start]!;
    return stop - start === 2 ? 256 + (data[start]! << 8) + data[start + 1]! : -1;
  }

  /** One chain's refs, for refsAt. */
  private chainRefs = new Int32Array(64);
  /** Where the chain refsAt read last ends: the next chain's head. */
  chainEnd = 0;

  /**
   * The refs of the listed chain whose head is at `head` (as walk() gave it),
   * packed in the order stored into `decoded` from 0, valid until the next
   * chain is read; returns their count.
   */
  refsAt(head: number): number {
    const stop = (this.chainEnd = this.listedAt(head, this.data.length, -1));
    const start = this.listedStart;
    if (this.chainRefs.length < stop - start) this.chainRefs = new Int32Array(Math.max(stop - start, 2 * this.chainRefs.length));
    return this.refs(start, stop, this.chainRefs, 0);
  }

  /** Where the refs of the chain whose head is at `head` start and stop: their bytes, at least their count. */
  refsSpan(head: number): { start: number; stop: number } {
    const stop = this.listedAt(head, this.data.length, -1);
    return { start: this.listedStart, stop };
  }

  /** The refs whose bytes run from `start` to `stop` (walk, refsSpan), packed into `out` from `at` (a ref a byte of room there); returns the end. */
  refsInto(start: number, stop: number, out: Int32Array, at: number): number {
    return this.refs(start, stop, out, at);
  }

  /** Where the listed chain whose head is at `head` ends: the next chain's head. */
  after(head: number): number {
    return this.listedAt(head, this.data.length, -1);
  }

  /** The bytes of the chains decoded. */
  get bytes(): number {
    return this.data.length;
  }

  /** Where refsAt() puts a chain's refs. */
  get decoded(): Int32Array {
    return this.chainRefs;
  }

  /** Every listed chain from `pos` to `end` (the first `max` of them); card ids must increase. */
  chains(pos = 0, end = this.data.length, max = Infinity): Chain[] {
    const packed = this.packed(pos, end, max);
    const out: Chain[] = [];
    for (let i = 0; i < packed.count; i++) {
      const refs: Ref[] = [];
      for (let j = packed.starts[i]!; j < packed.starts[i + 1]!; j++) refs.push(unpackRef(packed.refs[j]!));
      out.push({ cardId: packed.cards[i]!, refs });
    }
    return out;
  }
}

/** A sequence of listed chains, as WordIndex and StringIndex hold them per word or string. */
export function encodeChains(chains: Iterable<Chain>): Buffer {
  const parts: Buffer[] = [];
  const builder = new ChainBuilder();
  let last = -1;
  for (const chain of chains) {
    builder.set(chain.refs);
    const out = Buffer.allocUnsafe(builder.listedSize(chain.cardId, last));
    builder.writeListed(chain.cardId, last, out, 0);
    parts.push(out);
    last = chain.cardId;
  }
  return Buffer.concat(parts);
}

/** The listed chains of `data`. */
export function decodeChains(data: Buffer, at: ErrorPlace = {}): Chain[] {
  return new ChainDecoder(data, at).chains();
}
