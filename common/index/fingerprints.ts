/**
 * Fingerprints and Links: the two files of 12-byte URL fingerprints (url.ts)
 * the fingerprints stage writes (DESIGN §6 stage 3) and the merge and link
 * stages read. Layouts of the seed (seeds/003 "Fingerprints and CardPrints",
 * "Links"), whose u32 fingerprint[3] is the 12 fingerprint bytes as url.ts
 * makes them:
 *
 *   Fingerprints
 *     Header fields (file.ts): 0 record count N, 1 sorted (1: by
 *     fingerprint bytes, then card id; 0: in card order)
 *     Body: N records of 16 bytes
 *       0   12  fingerprint of the card's URL key
 *       12   4  card id (below 2^28)
 *
 *   Links
 *     Header fields: 0 record count N
 *     Body: N records of 16 bytes
 *       0   12  fingerprint of the link's target
 *       12   4  source card id in bits 0–27; bits 28–29 zero; bits 30–31 the
 *               link type: 0 anchor (R), 1 redirect (Y), 2 frame (F), 3 image (I)
 *
 * Both are written streaming; Links is read in blocks (it is the biggest
 * input of the link stage), Fingerprints whole, with lookup() by binary search
 * when sorted: the lowest card id with the fingerprint, as the seed's
 * resolver answers.
 */

import type { LinkType } from '../bucket/doc-body.js';
import { CountingWriter, IndexFileReader, readIndexFile, recordCount, type IndexFormat, type WholeIndexFile } from './file.js';
import { MAX_CARD_ID } from './refs.js';

export const FINGERPRINTS_FORMAT: IndexFormat = { magic: 'SHERLOCK-FPRINTS', version: 1, fields: ['records', 'sorted'], what: 'Fingerprints' };
export const LINKS_FORMAT: IndexFormat = { magic: 'SHERLOCK-LINKS', version: 1, fields: ['records'], what: 'Links' };
const FINGERPRINT_SIZE = 12;
const RECORD_SIZE = 16;
/** Link types by their number in bits 30–31 (seeds/003 "Links": ref, redirect, frame, image). */
export const LINK_TYPES: readonly LinkType[] = ['R', 'Y', 'F', 'I'];

export interface FingerprintRecord {
  fingerprint: Buffer;
  cardId: number;
}

export interface LinkRecord {
  /** Of the target's URL key. */
  target: Buffer;
  source: number;
  type: LinkType;
}

function record(fingerprint: Buffer, value: number, cardId: number): Buffer {
  if (fingerprint.length !== FINGERPRINT_SIZE) throw new RangeError(`a fingerprint has ${FINGERPRINT_SIZE} bytes, not ${fingerprint.length}`);
  if (!Number.isInteger(cardId) || cardId < 0 || cardId > MAX_CARD_ID) throw new RangeError(`card id ${cardId} outside 0–${MAX_CARD_ID}`);
  const out = Buffer.allocUnsafe(RECORD_SIZE);
  fingerprint.copy(out, 0);
  out.writeUInt32LE(value >>> 0, FINGERPRINT_SIZE);
  return out;
}

function compareRecords(a: FingerprintRecord, b: FingerprintRecord): number {
  return Buffer.compare(a.fingerprint, b.fingerprint) || a.cardId - b.cardId;
}

export class FingerprintsWriter extends CountingWriter {
  private last: FingerprintRecord | undefined;

  /** `sorted`: records will come by fingerprint, then card id (checked). */
  constructor(
    file: string,
    private readonly sorted: boolean,
  ) {
    super(file, FINGERPRINTS_FORMAT);
  }

  add(entry: FingerprintRecord): void {
    if (this.sorted && this.last !== undefined && compareRecords(this.last, entry) > 0) throw new RangeError(`card ${entry.cardId}: fingerprints out of order`);
    this.out.write(record(entry.fingerprint, entry.cardId, entry.cardId));
    this.last = entry;
    this.count += 1;
  }

  protected override moreFields(): number[] {
    return [this.sorted ? 1 : 0];
  }
}

function cardIdAt(file: WholeIndexFile, data: Buffer, offset: number): number {
  const id = data.readUInt32LE(FINGERPRINT_SIZE);
  if (id > MAX_CARD_ID) throw file.corrupt(offset + FINGERPRINT_SIZE, `card id ${id} beyond ${MAX_CARD_ID}`);
  return id;
}

export class Fingerprints {
  readonly count: number;
  readonly sorted: boolean;

  private constructor(private readonly file: WholeIndexFile) {
    this.count = recordCount(file, RECORD_SIZE, file.fields[0]!);
    if (file.fields[1]! > 1) throw file.corrupt(0, `sorted field ${file.fields[1]} is neither 0 nor 1`);
    this.sorted = file.fields[1] === 1;
    for (let i = 0; i < this.count; i++) {
      const current = this.get(i);
      if (this.sorted && i > 0 && compareRecords(this.get(i - 1), current) > 0) throw file.corrupt(i * RECORD_SIZE, `record ${i} out of fingerprint order`);
    }
  }

  static open(file: string): Fingerprints {
    return new Fingerprints(readIndexFile(file, FINGERPRINTS_FORMAT));
  }

  get(index: number): FingerprintRecord {
    const at = index * RECORD_SIZE;
    const data = this.file.body.subarray(at, at + RECORD_SIZE);
    return { fingerprint: data.subarray(0, FINGERPRINT_SIZE), cardId: cardIdAt(this.file, data, at) };
  }

  /** The lowest card id with this fingerprint (a sorted file only). */
  lookup(fingerprint: Buffer): number | undefined {
    if (!this.sorted) throw new Error('lookup() needs a sorted Fingerprints file');
    let low = 0;
    let high = this.count;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (Buffer.compare(this.get(mid).fingerprint, fingerprint) < 0) low = mid + 1;
      else high = mid;
    }
    if (low === this.count) return undefined;
    const found = this.get(low);
    return found.fingerprint.equals(fingerprint) ? found.cardId : undefined;
  }

  *[Symbol.iterator](): IterableIterator<FingerprintRecord> {
    for (let i = 0; i < this.count; i++) yield this.get(i);
  }
}

export class LinksWriter extends CountingWriter {
  constructor(file: string) {
    super(file, LINKS_FORMAT);
  }

  add(link: LinkRecord): void {
    const type = LINK_TYPES.indexOf(link.type);
    if (type < 0) throw new RangeError(`unknown link type ${link.type}`);
    this.out.write(record(link.target, link.source | (type << 30), link.source));
    this.count += 1;
  }

  /** Appends whole records made elsewhere (the chewer's workers make them in this layout). */
  addRecords(records: Uint8Array): void {
    if (records.length % RECORD_SIZE !== 0) throw new RangeError(`Links records come in ${RECORD_SIZE} bytes, not ${records.length}`);
    this.out.write(records);
    this.count += records.length / RECORD_SIZE;
  }
}

/** Every link of a Links file, read in blocks; the CRC is checked after the last. */
export function* readLinks(path: string): IterableIterator<LinkRecord> {
  const file = IndexFileReader.open(path, LINKS_FORMAT);
  try {
    for (const { offset, data } of file.records(RECORD_SIZE, file.fields[0]!)) {
      const value = data.readUInt32LE(FINGERPRINT_SIZE);
      if ((value & 0x30000000) !== 0) throw file.corrupt(offset + FINGERPRINT_SIZE, `source 0x${value.toString(16)}: bits 28–29 are not zero`);
      yield { target: Buffer.from(data.subarray(0, FINGERPRINT_SIZE)), source: value & MAX_CARD_ID, type: LINK_TYPES[value >>> 30]! };
    }
  } finally {
    file.close();
  }
}
