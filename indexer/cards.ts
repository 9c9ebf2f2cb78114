/**
 * Stage 5, cards (DESIGN §6 stage 8): what the searcher needs per card
 * besides its chains. Cards itself is written while chewing (chew.ts), in
 * card order as the workers' batches come back, so the compressed cards are
 * never copied twice; this stage writes
 *
 *   CardInfo      one record per card: its position in Cards, site, date,
 *                 static weight (links.ts), flags (empty, accented,
 *                 frameset; duplicate and merged from merge.ts), type
 *                 and length (the words of its body, log scale)
 *   Fingerprints  fingerprint of each card's URL key → card id, sorted, so
 *                 the searcher finds a card by its URL
 *
 * The link stage finds cards by fingerprint before that, with the same
 * sorted order held in memory (CardFinder).
 */

import { CARD_TYPES, CardInfoWriter } from '../common/index/cardinfo.js';
import { FingerprintsWriter } from '../common/index/fingerprints.js';
import { languageOf } from '../common/language/codes.js';
import { FINGERPRINT_SIZE } from './work-files.js';

/** Per card, what the chewer found (arrays indexed by card id). */
export interface CardFacts {
  positions: Uint32Array;
  sites: Uint32Array;
  dates: Uint32Array;
  /** CARD_FLAG bits; the merge stage adds dup and merged. */
  flags: Uint8Array;
  types: Uint8Array;
  /** 16 bytes per card: the footprint of its URL (url.ts), for the feedback. */
  footprints: Buffer;
  /** Length of its URL: the shorter URL wins a tie between duplicates. */
  urlLengths: Uint16Array;
  /** The first meta position after its own metas: anchor texts go from there. */
  metaEnds: Uint16Array;
  /** lengthCode (common/index/cardinfo.ts) of its body's words. */
  lengths: Uint8Array;
  /** Its language's number (common/language/codes.ts). */
  languages: Uint8Array;
  /** Static weight 0–255 (links.ts). */
  weights: Uint8Array;
}

export function writeCardInfo(file: string, facts: CardFacts): void {
  const writer = new CardInfoWriter(file);
  try {
    for (let id = 0; id < facts.positions.length; id++) {
      writer.add({
        position: facts.positions[id]!,
        site: facts.sites[id]!,
        date: facts.dates[id]!,
        weight: facts.weights[id]!,
        flags: facts.flags[id]!,
        type: CARD_TYPES[facts.types[id]!]!,
        length: facts.lengths[id]!,
        language: languageOf(facts.languages[id]!),
      });
    }
    writer.finish();
  } catch (err) {
    writer.abort();
    throw err;
  }
}

/** Card ids by fingerprint, from the fingerprints of every card (12 bytes each, in card order). */
export class CardFinder {
  /** Card ids sorted by fingerprint bytes. */
  readonly order: Uint32Array;
  /**
   * Open addressing on the fingerprint's first four bytes (an MD5 slice: evenly
   * spread), −1 for a free slot: the link stages look up every link, so a
   * lookup reads three numbers instead of a binary search over buffers.
   */
  private readonly slots: Int32Array;

  constructor(private readonly fingerprints: Buffer) {
    const cards = fingerprints.length / FINGERPRINT_SIZE;
    // Latin-1 strings of the bytes sort in byte order; card ids break no ties (the scan kept one card per fingerprint).
    const keys = Array.from({ length: cards }, (_, id) => fingerprints.toString('latin1', id * FINGERPRINT_SIZE, (id + 1) * FINGERPRINT_SIZE));
    this.order = Uint32Array.from(keys.keys()).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b));
    let size = 1024;
    while (size < 2 * cards) size *= 2;
    this.slots = new Int32Array(size).fill(-1);
    const mask = size - 1;
    for (let id = 0; id < cards; id++) {
      for (let slot = fingerprints.readUInt32LE(id * FINGERPRINT_SIZE) & mask; ; slot = (slot + 1) & mask) {
        const held = this.slots[slot]!;
        if (held < 0) {
          this.slots[slot] = id;
          break;
        }
        if (this.same(held, fingerprints, id * FINGERPRINT_SIZE)) break; // the lowest card id answers
      }
    }
  }

  fingerprintOf(id: number): Buffer {
    return this.fingerprints.subarray(id * FINGERPRINT_SIZE, (id + 1) * FINGERPRINT_SIZE);
  }

  private same(id: number, other: Buffer, at: number): boolean {
    const { fingerprints } = this;
    const mine = id * FINGERPRINT_SIZE;
    return fingerprints.readUInt32LE(mine) === other.readUInt32LE(at) && fingerprints.readUInt32LE(mine + 4) === other.readUInt32LE(at + 4) && fingerprints.readUInt32LE(mine + 8) === other.readUInt32LE(at + 8);
  }

  /** The card of the fingerprint at `fingerprint[at]` (12 bytes), or −1. */
  find(fingerprint: Buffer, at = 0): number {
    const { slots } = this;
    const mask = slots.length - 1;
    for (let slot = fingerprint.readUInt32LE(at) & mask; ; slot = (slot + 1) & mask) {
      const id = slots[slot]!;
      if (id < 0 || this.same(id, fingerprint, at)) return id;
    }
  }
}

/** Writes Fingerprints sorted by fingerprint. */
export function writeFingerprints(file: string, finder: CardFinder): void {
  const writer = new FingerprintsWriter(file, true);
  try {
    for (const id of finder.order) writer.add({ fingerprint: finder.fingerprintOf(id), cardId: id });
    writer.finish();
  } catch (err) {
    writer.abort();
    throw err;
  }
}
