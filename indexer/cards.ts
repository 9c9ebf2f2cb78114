/**
 * Stage 5, cards (DESIGN §6 stage 8): what the searcher needs per card
 * besides its chains. Cards itself is written while chewing (chew.ts), in
 * card order as the workers' batches come back, so the compressed cards are
 * never copied twice; this stage writes
 *
 *   CardInfo      one record per card: its position in Cards, site, date,
 *                 static weight (0 until the link stage computes weights),
 *                 flags (empty, accented, frameset; duplicate and merged come
 *                 with the merge stage) and type
 *   Fingerprints  fingerprint of each card's URL key → card id, sorted, so
 *                 the searcher (and the link stage) find a card by its URL
 */

import { CARD_TYPES, CardInfoWriter } from '../common/index-cardinfo.js';
import { FingerprintsWriter } from '../common/index-fingerprints.js';
import { FINGERPRINT_SIZE } from './work-files.js';

/** Per card, what the chewer found (arrays indexed by card id). */
export interface CardFacts {
  positions: Uint32Array;
  sites: Uint32Array;
  dates: Uint32Array;
  flags: Uint8Array;
  types: Uint8Array;
}

export function writeCardInfo(file: string, facts: CardFacts): void {
  const writer = new CardInfoWriter(file);
  try {
    for (let id = 0; id < facts.positions.length; id++) {
      writer.add({
        position: facts.positions[id]!,
        site: facts.sites[id]!,
        date: facts.dates[id]!,
        weight: 0,
        flags: facts.flags[id]!,
        type: CARD_TYPES[facts.types[id]!]!,
      });
    }
    writer.finish();
  } catch (err) {
    writer.abort();
    throw err;
  }
}

/** Writes Fingerprints sorted by fingerprint from `fingerprints` (12 bytes per card, in card order). */
export function writeFingerprints(file: string, fingerprints: Buffer): void {
  const cards = fingerprints.length / FINGERPRINT_SIZE;
  // Latin-1 strings of the bytes sort in byte order; card ids break no ties (the scan kept one card per fingerprint).
  const keys = Array.from({ length: cards }, (_, id) => fingerprints.toString('latin1', id * FINGERPRINT_SIZE, (id + 1) * FINGERPRINT_SIZE));
  const order = Uint32Array.from(keys.keys()).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b));
  const writer = new FingerprintsWriter(file, true);
  try {
    for (const id of order) writer.add({ fingerprint: fingerprints.subarray(id * FINGERPRINT_SIZE, (id + 1) * FINGERPRINT_SIZE), cardId: id });
    writer.finish();
  } catch (err) {
    writer.abort();
    throw err;
  }
}
