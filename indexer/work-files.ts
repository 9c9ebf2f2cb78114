/**
 * The indexer's working files: what one build stage hands the next, written
 * into the version directory being built (`state/index/<version>.tmp/`) with
 * the index framing (common/index/file.ts), so `sherlock index dump` reads
 * them, and removed before the version is published unless the build keeps
 * them (`--keep-work`). Names after the seed (seeds/003 "Index and internal
 * indexer files"); the layouts are ours where the seed has none.
 *
 *   Attributes (scan → chew, cards)       magic SHERLOCK-ATTRS
 *     Header fields: 0 cards N, 1 generation of the bucket file the oids are of
 *     Body: N records of 20 bytes, record i for card i
 *       0   4  oid of the card's bucket
 *       4  12  fingerprint of the card's URL key (common/url.ts)
 *       16  1  flags the scan knows (CARD_FLAG.empty for a redirect)
 *       17  3  zero
 *
 *   Postings (chew → WordIndex)           magic SHERLOCK-POSTING
 *     Header fields: 0 records
 *     Body: records by increasing card id, each word at most once per card
 *       0   4  word: its LexRaw id, or 8·(n + 1) for its temporary number n
              when the vocabulary was spilled (segments.ts)
 *       4   4  S: bytes of the chain
 *       8   S  the word's chain in the card (common/index/refs.ts: card id,
 *              length, refs), as it goes into WordIndex
 *
 *   Checksums (chew → merging)            magic SHERLOCK-CHKSUMS
 *     Header fields: 0 records
 *     Body: records of 20 bytes by increasing card id, cards with text only
 *       0  16  MD5 of the card's normalised text: the exact forms of the
 *              words of its title and text, separated by single spaces
 *       16  4  card id
 *
 *   RefTexts (chew → link stage)          magic SHERLOCK-REFTEXT
 *     Header fields: 0 records
 *     Body: records by increasing source card id
 *       0   4  source card id
 *       4  12  fingerprint of the link's target
 *       16  2  length L of the anchor text
 *       18  L  the anchor text, UTF-8, whitespace collapsed
 *
 * Signatures (signatures.ts) and Merges (merge.ts) are laid out in their
 * modules; AnchoredPostings (links.ts) has the Postings layout.
 *
 * These files are scratch: written without fsync (the publish step fsyncs
 * what it keeps) and rebuilt by the next build after a crash.
 */

import { CARD_FLAG } from '../common/index/cardinfo.js';
import { IndexFileReader, IndexFileWriter, readIndexFile, recordCount, type IndexFormat } from '../common/index/file.js';

export const ATTRIBUTES_FORMAT: IndexFormat = { magic: 'SHERLOCK-ATTRS', version: 1, fields: ['cards', 'generation'], what: 'Attributes' };
export const POSTINGS_FORMAT: IndexFormat = { magic: 'SHERLOCK-POSTING', version: 1, fields: ['records'], what: 'Postings' };
export const CHECKSUMS_FORMAT: IndexFormat = { magic: 'SHERLOCK-CHKSUMS', version: 1, fields: ['records'], what: 'Checksums' };
export const REFTEXTS_FORMAT: IndexFormat = { magic: 'SHERLOCK-REFTEXT', version: 1, fields: ['records'], what: 'RefTexts' };

export const ATTRIBUTES_RECORD = 20;
export const CHECKSUM_RECORD = 20;
export const FINGERPRINT_SIZE = 12;
/** Bytes of a Postings record before its chain. */
export const POSTING_HEAD = 8;
/** Bytes of a RefTexts record before its text. */
export const REFTEXT_HEAD = 18;
export const MAX_REFTEXT_BYTES = 0xffff;

/** A working file written as blocks of whole records, counted by the caller. */
export class WorkFileWriter {
  private readonly out: IndexFileWriter;
  records = 0;

  constructor(file: string, format: IndexFormat) {
    this.out = new IndexFileWriter(file, format, { scratch: true });
  }

  /** Appends `count` records held in `data`. */
  write(data: Uint8Array, count: number): void {
    this.out.write(data);
    this.records += count;
  }

  /** The header fields after the record count. */
  finish(more: readonly number[] = []): void {
    this.out.finish([this.records, ...more]);
  }

  abort(): void {
    this.out.abort();
  }
}

export interface Attributes {
  generation: number;
  cards: number;
  oids: Uint32Array;
  /** 12 bytes per card. */
  fingerprints: Buffer;
  flags: Uint8Array;
}

export function writeAttributes(file: string, attributes: Attributes): void {
  const { cards, oids, fingerprints, flags } = attributes;
  const body = Buffer.alloc(cards * ATTRIBUTES_RECORD);
  for (let i = 0; i < cards; i++) {
    const at = i * ATTRIBUTES_RECORD;
    body.writeUInt32LE(oids[i]!, at);
    fingerprints.copy(body, at + 4, i * FINGERPRINT_SIZE, (i + 1) * FINGERPRINT_SIZE);
    body[at + 16] = flags[i]!;
  }
  const out = new WorkFileWriter(file, ATTRIBUTES_FORMAT);
  try {
    out.write(body, cards);
    out.finish([attributes.generation]);
  } catch (err) {
    out.abort();
    throw err;
  }
}

const SCAN_FLAGS = CARD_FLAG.empty;

export function readAttributes(file: string): Attributes {
  const whole = readIndexFile(file, ATTRIBUTES_FORMAT);
  const cards = recordCount(whole, ATTRIBUTES_RECORD, whole.fields[0]!);
  const oids = new Uint32Array(cards);
  const fingerprints = Buffer.alloc(cards * FINGERPRINT_SIZE);
  const flags = new Uint8Array(cards);
  const { body } = whole;
  for (let i = 0; i < cards; i++) {
    const at = i * ATTRIBUTES_RECORD;
    oids[i] = body.readUInt32LE(at);
    body.copy(fingerprints, i * FINGERPRINT_SIZE, at + 4, at + 16);
    flags[i] = body[at + 16]!;
    if (oids[i] === 0) throw whole.corrupt(at, `card ${i}: oid 0 names no bucket`);
    if ((flags[i]! & ~SCAN_FLAGS) !== 0 || body[at + 17] !== 0 || body[at + 18] !== 0 || body[at + 19] !== 0) throw whole.corrupt(at + 16, `card ${i}: undefined flags or reserved bytes set`);
  }
  return { generation: whole.fields[1]!, cards, oids, fingerprints, flags };
}

/**
 * The body of a file of variable records in blocks of about `size` bytes that
 * hold only whole records: `recordLength(data, at)` gives the length of the
 * record at `at`, or −1 when `data` ends before the record's head does. The
 * body CRC is checked after the last block.
 */
export function* recordBlocks(file: IndexFileReader, size: number, recordLength: (data: Buffer, at: number) => number): IterableIterator<Buffer> {
  let carry: Buffer | undefined;
  let carryAt = 0;
  for (const { offset, data: block } of file.blocks(size)) {
    const data = carry === undefined ? block : Buffer.concat([carry, block]);
    const start = carry === undefined ? offset : carryAt;
    let at = 0;
    for (;;) {
      const length = recordLength(data, at);
      if (length < 0 || at + length > data.length) break;
      at += length;
    }
    if (at > 0) yield data.subarray(0, at);
    carry = at < data.length ? data.subarray(at) : undefined;
    carryAt = start + at;
  }
  if (carry !== undefined) throw file.corrupt(carryAt, `record cut short at the end of the body (${carry.length} bytes)`);
}

/** The length of the Postings record at `at`, −1 when its head is not all there. */
export function postingLength(data: Buffer, at: number): number {
  return at + POSTING_HEAD > data.length ? -1 : POSTING_HEAD + data.readUInt32LE(at + 4);
}

export function refTextLength(data: Buffer, at: number): number {
  return at + REFTEXT_HEAD > data.length ? -1 : REFTEXT_HEAD + data.readUInt16LE(at + 16);
}

/** The blocks of whole records (recordBlocks) of a file of variable records; the count is checked after the last. */
export function* countedBlocks(path: string, format: IndexFormat, recordLength: (data: Buffer, at: number) => number): IterableIterator<Buffer> {
  const file = IndexFileReader.open(path, format);
  try {
    let seen = 0;
    for (const block of recordBlocks(file, 1 << 20, recordLength)) {
      for (let at = 0; at < block.length; at += recordLength(block, at)) seen += 1;
      yield block;
    }
    if (seen !== file.fields[0]) throw file.corrupt(file.bodyLength, `${seen} records found, the header says ${file.fields[0]}`);
  } finally {
    file.close();
  }
}

/** Every record of a file of variable records, as views into its blocks; the count is checked. */
function* variableRecords(path: string, format: IndexFormat, recordLength: (data: Buffer, at: number) => number): IterableIterator<Buffer> {
  for (const block of countedBlocks(path, format, recordLength)) {
    for (let at = 0; at < block.length; at += recordLength(block, at)) yield block.subarray(at, at + recordLength(block, at));
  }
}

export interface PostingRecord {
  word: number;
  /** The encoded chain (card id, length, refs). */
  chain: Buffer;
}

export function* readPostings(path: string): IterableIterator<PostingRecord> {
  for (const record of variableRecords(path, POSTINGS_FORMAT, postingLength)) yield { word: record.readUInt32LE(0), chain: record.subarray(POSTING_HEAD) };
}

export interface RefText {
  source: number;
  target: Buffer;
  text: string;
}

export function* readRefTexts(path: string): IterableIterator<RefText> {
  for (const record of variableRecords(path, REFTEXTS_FORMAT, refTextLength)) {
    yield { source: record.readUInt32LE(0), target: record.subarray(4, 16), text: record.toString('utf8', REFTEXT_HEAD) };
  }
}

export function* readChecksums(path: string): IterableIterator<{ checksum: Buffer; cardId: number }> {
  const file = IndexFileReader.open(path, CHECKSUMS_FORMAT);
  try {
    for (const { data } of file.records(CHECKSUM_RECORD, file.fields[0]!)) yield { checksum: Buffer.from(data.subarray(0, 16)), cardId: data.readUInt32LE(16) };
  } finally {
    file.close();
  }
}
