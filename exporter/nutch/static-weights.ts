/**
 * The static weights of the current index version, by URL, for the Nutch
 * export's scores (crawldb.ts nutchScore): read from the version's Feedback
 * (common/index/feedback.ts: footprint, flags, weight a card), the file the
 * indexer publishes for the shepherd. Read here rather than taken from the
 * URL rows' `weight`, which holds them only once the shepherd has applied
 * that Feedback (a `sherlock index build` right before the export leaves
 * every row at 0).
 *
 * Held as an open-addressing table: the cards' footprints (16 bytes each)
 * and weights in card order, and slots of card number + 1 (0: empty) chosen
 * by the footprint's 32-bit key, at most half full: 25 bytes a card (25 MB
 * for a million). A lookup hashes the URL's footprint (url.ts) and compares
 * whole footprints.
 */

import { join } from 'node:path';
import { grow } from '../../common/grow.js';
import { FEEDBACK_NAME, FOOTPRINT_SIZE, readFeedback } from '../../common/index/feedback.js';
import { currentVersion, indexDirectory } from '../../common/index/layout.js';
import { footprint } from '../../common/url.js';

/** The 32-bit key of the footprint at `at` (its four words XORed: MD5 halves, evenly spread). */
function keyOf(bytes: Buffer, at: number): number {
  return (bytes.readUInt32LE(at) ^ bytes.readUInt32LE(at + 4) ^ bytes.readUInt32LE(at + 8) ^ bytes.readUInt32LE(at + 12)) >>> 0;
}

export class StaticWeights {
  private constructor(
    private readonly footprints: Buffer,
    private readonly weights: Uint8Array,
    private readonly slots: Uint32Array,
  ) {}

  /** The current index version's weights; undefined when there is no index version. A damaged Feedback throws its SHERLOCK_CORRUPT_INDEX. */
  static open(state: string): StaticWeights | undefined {
    const indexDir = indexDirectory(state);
    const version = currentVersion(indexDir);
    if (version === undefined) return undefined;
    let footprints = new Uint8Array(1024 * FOOTPRINT_SIZE);
    let weights = new Uint8Array(1024);
    let cards = 0;
    for (const record of readFeedback(join(indexDir, version, FEEDBACK_NAME))) {
      footprints = grow(footprints, (cards + 1) * FOOTPRINT_SIZE);
      weights = grow(weights, cards + 1);
      footprints.set(record.footprint, cards * FOOTPRINT_SIZE);
      weights[cards++] = record.weight;
    }
    const all = Buffer.from(footprints.buffer, 0, cards * FOOTPRINT_SIZE);
    let size = 1024;
    while (size < 2 * cards) size *= 2;
    const slots = new Uint32Array(size);
    for (let card = 0; card < cards; card++) {
      let slot = keyOf(all, card * FOOTPRINT_SIZE) & (size - 1);
      while (slots[slot] !== 0) slot = (slot + 1) & (size - 1);
      slots[slot] = card + 1;
    }
    return new StaticWeights(all, weights.subarray(0, cards), slots);
  }

  /** The weight of the card of a canonical URL; undefined when the version has none. */
  weightOf(url: string): number | undefined {
    const fp = footprint(url);
    const mask = this.slots.length - 1;
    for (let slot = keyOf(fp, 0) & mask; this.slots[slot] !== 0; slot = (slot + 1) & mask) {
      const card = this.slots[slot]! - 1;
      if (fp.equals(this.footprints.subarray(card * FOOTPRINT_SIZE, (card + 1) * FOOTPRINT_SIZE))) return this.weights[card];
    }
    return undefined;
  }
}
