/**
 * Image cards (sherlock-original §2, image references `I`): the chewing
 * workers report each `<img>` with an alt text on an indexed page (an image
 * reference, chew-worker.ts IMAGE_REF_HEAD); ImageRefs gathers them by the
 * image URL's fingerprint, and once every bucket's card is chewed, each
 * image no bucket's card has becomes a card of its own (chew.ts), found by
 * its alt texts and, in the link stage, by the anchor texts of links to it.
 * Images are not fetched for this: their words are all on the pages that
 * show them.
 *
 * Bounds: an image keeps at most MAX_TEXTS distinct alt texts, and all
 * images together at most the bytes they are given (a share of
 * indexer.memory_budget); past it, images not met yet are counted and left
 * out, those met go on gathering texts within their own bound.
 */

import type { TakedownSet } from '../common/takedowns.js';
import { FINGERPRINT_SIZE } from './work-files.js';
import { IMAGE_REF_HEAD, type ImageCard } from './chew-worker.js';

/** Distinct alt texts an image card keeps: its title and what its pages say of it. */
const MAX_TEXTS = 8;
/** What an image held costs besides its strings (the map's entry, the object, the array). */
const IMAGE_OVERHEAD = 160;

export class ImageRefs {
  private readonly images = new Map<string, ImageCard>();
  private bytes = 0;
  /** Images left out because the bound was reached. */
  dropped = 0;
  /** Images left out because a takedown hides them. */
  takenDown = 0;

  constructor(
    private readonly budget: number,
    private readonly takedowns: TakedownSet,
  ) {}

  /** Takes a batch's image references (records of IMAGE_REF_HEAD and three strings). */
  add(records: Buffer): void {
    for (let at = 0; at < records.length; ) {
      const key = records.toString('latin1', at, at + FINGERPRINT_SIZE);
      const date = records.readUInt32LE(at + 12);
      const language = records[at + 16]!;
      const urlBytes = records.readUInt16LE(at + 17);
      const altBytes = records.readUInt16LE(at + 19);
      const pageBytes = records.readUInt16LE(at + 21);
      const from = at + IMAGE_REF_HEAD;
      at = from + urlBytes + altBytes + pageBytes;
      const alt = records.toString('utf8', from + urlBytes, from + urlBytes + altBytes);
      const image = this.images.get(key);
      if (image !== undefined) {
        image.date = Math.max(image.date, date);
        if (image.texts.length < MAX_TEXTS && !image.texts.includes(alt) && this.bytes + 2 * alt.length <= this.budget) {
          image.texts.push(alt);
          this.bytes += 2 * alt.length;
        }
        continue;
      }
      const cost = IMAGE_OVERHEAD + 2 * (urlBytes + altBytes + pageBytes);
      if (this.bytes + cost > this.budget) {
        this.dropped += 1;
        continue;
      }
      this.bytes += cost;
      const url = records.toString('utf8', from, from + urlBytes);
      const referrer = records.toString('utf8', from + urlBytes + altBytes, at);
      this.images.set(key, { url, texts: [alt], referrer, date, language });
    }
  }

  /**
   * The image cards, in the order their images were first met, leaving out
   * images that are documents already (a bucket's card has their
   * fingerprint: `fingerprints`, 12 bytes a card) and images a takedown
   * hides; and their fingerprints,
   * in the same order. The references are let go.
   */
  cards(fingerprints: Buffer): { cards: ImageCard[]; fingerprints: Buffer } {
    const { images } = this;
    if (images.size > 0) {
      for (let at = 0; at < fingerprints.length; at += FINGERPRINT_SIZE) images.delete(fingerprints.toString('latin1', at, at + FINGERPRINT_SIZE));
    }
    if (this.takedowns.size > 0) {
      for (const [key, image] of images) {
        if (!this.takedowns.hidesAny(image.url)) continue;
        images.delete(key);
        this.takenDown += 1;
      }
    }
    const out = Buffer.allocUnsafe(images.size * FINGERPRINT_SIZE);
    let n = 0;
    for (const key of images.keys()) out.write(key, FINGERPRINT_SIZE * n++, 'latin1');
    const cards = [...images.values()];
    images.clear();
    this.bytes = 0;
    return { cards, fingerprints: out };
  }
}
