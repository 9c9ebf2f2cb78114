/**
 * WordIndex and StringIndex: per word (or string) the reference chains of
 * every card it occurs in (refs.ts). Written by the WordIndex stage
 * from its k-way merge, one word at a time; read by the searcher at the
 * ref_pos the Lexicon gives. Layout after the seed (seeds/003 "WordIndex",
 * "StringIndex"):
 *
 *   Header fields (file.ts): 0 entry count N
 *   Body: N entries, keys strictly increasing
 *     0   K  key: WordIndex a u32 word id (K = 4), StringIndex a 12-byte
 *            fingerprint of the string (K = 12, byte order; stringKey())
 *     K   4  size S: bytes of the chains that follow
 *     K+4 S  chains in the listed form (refs.ts: each card id as the
 *            gap from the one before), card ids strictly increasing
 *
 * Format 2 (ours): format 1 held the chains in the seed's form, a u32 card
 * id in every head (a third of WordIndex); it is refused, naming the file:
 * rebuild the index. The searcher walks a word's whole list (or its
 * first chains, the work bound) once into columns of card ids and score
 * inputs and seeks in those, so the gaps need no skip entries; a card's
 * refs it decodes again from the bytes it keeps (searcher/card-refs.ts).
 *
 * A word's ref_pos is the body offset of its entry (the entries come in
 * Lexicon order, so lexicon.ts derives it). The writer holds one
 * entry's chains at a time (add), or none when the caller knows the size
 * and streams them (beginEntry, writeChains); the size field limits them
 * to 4 GiB per word.
 * The seed's StringMap (fingerprint → ref_pos) is not written: the
 * StringIndex reader walks the entry headers once when it opens.
 */

import { createHash } from 'node:crypto';
import { CountingWriter, INDEX_HEADER_SIZE, IndexFileReader, type IndexFormat } from './file.js';
import { ChainDecoder, encodeChains, type Chain, type PackedChains } from './refs.js';
import { urlParts } from '../url.js';
import { registrableDomain } from '../url-patterns.js';

export const WORDINDEX_FORMAT: IndexFormat = { magic: 'SHERLOCK-WORDIDX', version: 2, fields: ['words'], what: 'WordIndex' };
export const STRINGINDEX_FORMAT: IndexFormat = { magic: 'SHERLOCK-STRIDX', version: 2, fields: ['strings'], what: 'StringIndex' };

/** Bytes of a WordIndex entry before its chains: the word id and the size. */
export const WORDINDEX_ENTRY_HEAD = 8;

/** What a StringIndex string is: the searcher's `url:`, `site:` and domain restrictions. */
export const STRING_KINDS = ['url', 'host', 'domain'] as const;
export type StringKind = (typeof STRING_KINDS)[number];
const FINGERPRINT_SIZE = 12;

/**
 * The strings a card is found by: its canonical URL, its host, and the
 * host's registrable domain (the host itself when it has none: an IP
 * address, localhost). The indexer and the searcher's `url:`/`site:` agree
 * through this.
 */
export function urlStrings(canonical: string): Record<StringKind, string> {
  const { host } = urlParts(canonical);
  return { url: canonical, host, domain: registrableDomain(host) };
}

/** A StringIndex key: the first 12 bytes of MD5 of "<kind> <value>". */
export function stringKey(kind: StringKind, value: string): Buffer {
  return createHash('md5').update(`${kind} ${value}`, 'utf8').digest().subarray(0, FINGERPRINT_SIZE);
}

interface KeyCodec<K> {
  size: number;
  write(key: K, out: Buffer): void;
  read(data: Buffer): K;
  compare(a: K, b: K): number;
  show(key: K): string;
}

const WORD_KEY: KeyCodec<number> = {
  size: WORDINDEX_ENTRY_HEAD - 4,
  write: (key, out) => out.writeUInt32LE(key, 0),
  read: (data) => data.readUInt32LE(0),
  compare: (a, b) => a - b,
  show: (key) => `word ${key}`,
};

const STRING_KEY: KeyCodec<Buffer> = {
  size: FINGERPRINT_SIZE,
  write: (key, out) => {
    if (key.length !== FINGERPRINT_SIZE) throw new RangeError(`a StringIndex key has ${FINGERPRINT_SIZE} bytes, not ${key.length}`);
    key.copy(out, 0);
  },
  read: (data) => Buffer.from(data.subarray(0, FINGERPRINT_SIZE)),
  compare: (a, b) => Buffer.compare(a, b),
  show: (key) => `string ${key.toString('hex')}`,
};

/** Where an entry was written: what the Lexicon records for a word. */
export interface EntryPlace {
  refPos: number;
  chainSize: number;
}

class ChainFileWriter<K> extends CountingWriter {
  private last: K | undefined;
  /** Bytes of chains the entry begun last still expects. */
  private pending = 0;

  constructor(
    file: string,
    format: IndexFormat,
    private readonly codec: KeyCodec<K>,
  ) {
    super(file, format);
  }

  /** Appends the entry of `key` (keys increasing) with its chains (card ids increasing). */
  add(key: K, chains: Iterable<Chain>): EntryPlace {
    const data = encodeChains(chains);
    const place = this.beginEntry(key, data.length);
    this.writeChains(data);
    return place;
  }

  /**
   * Begins the entry of `key` (keys increasing) whose chains, already
   * encoded (refs.ts, card ids increasing), take `size` bytes in all;
   * writeChains() must then give exactly that many. For a writer that streams
   * a word's chains from several sorted runs without holding them.
   */
  beginEntry(key: K, size: number): EntryPlace {
    const { codec } = this;
    const head = Buffer.alloc(codec.size + 4);
    codec.write(key, head);
    if (this.pending !== 0) throw new RangeError(`${codec.show(this.last!)}: ${this.pending} bytes of its chains never came`);
    if (this.last !== undefined && codec.compare(this.last, key) >= 0) throw new RangeError(`${codec.show(key)} after ${codec.show(this.last)}: keys must increase`);
    if (size === 0) throw new RangeError(`${codec.show(key)} has no chains`);
    if (!Number.isInteger(size) || size < 0 || size > 0xffffffff) throw new RangeError(`${codec.show(key)}: chains of ${size} bytes, not 1 byte to the 4 GiB an entry holds`);
    head.writeUInt32LE(size, codec.size);
    const refPos = this.out.length;
    this.out.write(head);
    this.last = key;
    this.count += 1;
    this.pending = size;
    return { refPos, chainSize: size };
  }

  /** The next bytes of the chains of the entry begun last. */
  writeChains(data: Uint8Array): void {
    if (data.length > this.pending) throw new RangeError(`${this.last === undefined ? 'no entry' : this.codec.show(this.last)}: ${data.length} bytes of chains where ${this.pending} remain`);
    this.out.write(data);
    this.pending -= data.length;
  }

  override finish(): void {
    if (this.pending !== 0) throw new RangeError(`${this.codec.show(this.last!)}: ${this.pending} bytes of its chains never came`);
    super.finish();
  }
}

export interface ChainEntry<K> {
  key: K;
  refPos: number;
  chains: Chain[];
}

class ChainFileReader<K> {
  readonly count: number;

  constructor(
    protected readonly file: IndexFileReader,
    private readonly codec: KeyCodec<K>,
  ) {
    this.count = file.fields[0]!;
  }

  /** The key and chain size of the entry at `refPos`. */
  protected head(refPos: number): { key: K; size: number } {
    const data = this.file.read(refPos, this.codec.size + 4, 'entry header');
    return { key: this.codec.read(data), size: data.readUInt32LE(this.codec.size) };
  }

  /**
   * The decoder of the chains of the entry at `refPos`, whose key must be
   * `key` when given (as the Lexicon says); `kept`: the chains' bytes in a
   * buffer of their own (not a slice of Node's shared pool), for a caller
   * that keeps them.
   */
  protected decoderAt(refPos: number, key?: K, kept = false): { key: K; decoder: ChainDecoder; size: number; next: number } {
    const { codec } = this;
    const head = this.head(refPos);
    if (key !== undefined && codec.compare(head.key, key) !== 0) throw this.file.corrupt(refPos, `${codec.show(head.key)} found where ${codec.show(key)} should be`);
    if (head.size === 0) throw this.file.corrupt(refPos + codec.size, `${codec.show(head.key)} has no chains`);
    const start = refPos + codec.size + 4;
    const what = `chains of ${codec.show(head.key)}`;
    const data = kept ? this.file.readInto(Buffer.allocUnsafeSlow(head.size), start, head.size, what) : this.file.read(start, head.size, what);
    return { key: head.key, decoder: new ChainDecoder(data, { file: this.file.file, offset: INDEX_HEADER_SIZE + start }), size: head.size, next: start + head.size };
  }

  /** The entry at `refPos` (its first `max` chains); when `key` is given it must be that entry's key (as the Lexicon says). */
  entryAt(refPos: number, key?: K, max = Infinity): ChainEntry<K> & { next: number } {
    const entry = this.decoderAt(refPos, key);
    return { key: entry.key, refPos, chains: entry.decoder.chains(0, entry.size, max), next: entry.next };
  }

  /** The chains of the entry at `refPos` (its first `max`) in columns (refs.ts PackedChains). */
  packedAt(refPos: number, key?: K, max = Infinity): PackedChains {
    const entry = this.decoderAt(refPos, key);
    return entry.decoder.packed(0, entry.size, max);
  }

  /** Every entry in file order, keys checked to increase, the body CRC checked at the end. */
  *[Symbol.iterator](): IterableIterator<ChainEntry<K>> {
    let pos = 0;
    let seen = 0;
    let last: K | undefined;
    while (pos < this.file.bodyLength) {
      const { next, ...entry } = this.entryAt(pos);
      if (last !== undefined && this.codec.compare(last, entry.key) >= 0) throw this.file.corrupt(pos, `${this.codec.show(entry.key)} after ${this.codec.show(last)}: keys must increase`);
      yield entry;
      last = entry.key;
      pos = next;
      seen += 1;
    }
    if (seen !== this.count) throw this.file.corrupt(pos, `${seen} entries found, the header says ${this.count}`);
    this.file.verify();
  }

  close(): void {
    this.file.close();
  }
}

export class WordIndexWriter extends ChainFileWriter<number> {
  constructor(file: string) {
    super(file, WORDINDEX_FORMAT, WORD_KEY);
  }
}

export class WordIndexReader extends ChainFileReader<number> {
  static open(file: string): WordIndexReader {
    return new WordIndexReader(IndexFileReader.open(file, WORDINDEX_FORMAT), WORD_KEY);
  }

  /** The chains of word `wordId` (the first `max`: the searcher's work bound), whose entry the Lexicon places at `refPos`. */
  chains(wordId: number, refPos: number, max = Infinity): Chain[] {
    return this.entryAt(refPos, wordId, max).chains;
  }

  /** A decoder of the chains of word `wordId` (ChainDecoder#walk from 0 to its `bytes`), which the searcher keeps: their bytes are a buffer of their own. */
  decoder(wordId: number, refPos: number): ChainDecoder {
    return this.decoderAt(refPos, wordId, true).decoder;
  }
}

export class StringIndexWriter extends ChainFileWriter<Buffer> {
  constructor(file: string) {
    super(file, STRINGINDEX_FORMAT, STRING_KEY);
  }
}

export class StringIndexReader extends ChainFileReader<Buffer> {
  /** Every entry's key, back to back in file order (ascending), and where the entry is: binary-searched, 20 bytes an entry. */
  private readonly keys: Buffer;
  private readonly places: Float64Array;

  private constructor(file: IndexFileReader) {
    super(file, STRING_KEY);
    const count = this.count;
    this.keys = Buffer.alloc(count * FINGERPRINT_SIZE);
    this.places = new Float64Array(count);
    // The entry heads are walked in the body read in blocks, not one read each (a million strings were a million reads).
    let n = 0;
    let pos = 0;
    for (const { offset, data } of file.blocks()) {
      while (pos + FINGERPRINT_SIZE + 4 <= offset + data.length) {
        if (n === count) throw file.corrupt(pos, `more entries than the ${count} the header says`);
        const at = pos - offset;
        data.copy(this.keys, n * FINGERPRINT_SIZE, at, at + FINGERPRINT_SIZE);
        if (n > 0 && this.keyAt(n - 1).compare(this.keyAt(n)) >= 0) throw file.corrupt(pos, `${STRING_KEY.show(this.keyAt(n))} after ${STRING_KEY.show(this.keyAt(n - 1))}: keys must increase`);
        this.places[n++] = pos;
        pos += FINGERPRINT_SIZE + 4 + data.readUInt32LE(at + FINGERPRINT_SIZE);
      }
      if (pos < offset + data.length && pos + FINGERPRINT_SIZE + 4 > offset + data.length) {
        // A head cut by the block's end: read it alone.
        if (n === count) throw file.corrupt(pos, `more entries than the ${count} the header says`);
        const { key, size } = this.head(pos);
        key.copy(this.keys, n * FINGERPRINT_SIZE);
        if (n > 0 && this.keyAt(n - 1).compare(this.keyAt(n)) >= 0) throw file.corrupt(pos, `${STRING_KEY.show(this.keyAt(n))} after ${STRING_KEY.show(this.keyAt(n - 1))}: keys must increase`);
        this.places[n++] = pos;
        pos += FINGERPRINT_SIZE + 4 + size;
      }
    }
    if (n !== count || pos !== file.bodyLength) throw file.corrupt(Math.min(pos, file.bodyLength), `${n} entries ending at ${pos}, the header says ${count} in ${file.bodyLength} bytes`);
  }

  static open(file: string): StringIndexReader {
    return IndexFileReader.openWith(file, STRINGINDEX_FORMAT, (reader) => new StringIndexReader(reader));
  }

  private keyAt(n: number): Buffer {
    return this.keys.subarray(n * FINGERPRINT_SIZE, (n + 1) * FINGERPRINT_SIZE);
  }

  /** The body offset of the entry of `key`, undefined if there is none. */
  private placeOf(key: Buffer): number | undefined {
    let low = 0;
    let high = this.count - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const order = this.keys.compare(key, 0, FINGERPRINT_SIZE, mid * FINGERPRINT_SIZE, (mid + 1) * FINGERPRINT_SIZE);
      // order: the key at mid against `key`.
      if (order === 0) return this.places[mid];
      if (order > 0) high = mid - 1;
      else low = mid + 1;
    }
    return undefined;
  }

  /** The chains of a string, none if it does not occur. */
  chains(key: Buffer): Chain[] {
    const refPos = this.placeOf(key);
    return refPos === undefined ? [] : this.entryAt(refPos, key).chains;
  }

  /** The cards of a string, ascending (none if it does not occur). */
  cards(key: Buffer): Uint32Array {
    const refPos = this.placeOf(key);
    return refPos === undefined ? new Uint32Array(0) : this.packedAt(refPos, key).cards;
  }
}
