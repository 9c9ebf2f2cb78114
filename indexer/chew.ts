/**
 * Stage 2, chew, the main-thread side: hands batches of cards (oids, not
 * bucket bytes) to piscina workers running chew-worker.ts, keeps every
 * worker busy with two batches each, and takes the results back in card
 * order, writing as they come:
 *
 *   Cards      the cards in the blocks the workers deflated (the final file: not copied again later)
 *   Postings   the chains, words renamed from the batch's numbers to the
 *              vocabulary's (LexRaw ids; temporary numbers once it is
 *              spilled, segments.ts)
 *   Checksums  MD5 of each card's words, for merging exact duplicates
 *   Signatures min-hashes of each card's words, for near-duplicates
 *   Links      every link (anchor, redirect, frame, image) by target fingerprint
 *   RefTexts   anchor texts by target, for the link stage
 *
 * After the buckets' cards come the image cards (images.ts): the images
 * that pages show with an alt text and that are no bucket's card, chewed by
 * the same workers once every page has been read, with the card ids that
 * follow the last bucket's.
 *
 * and keeping in memory what later stages need per card (CardFacts: about
 * 36 bytes a card), per word (the Vocabulary, within its share: segments.ts) and per card and string
 * (StringIndex keys, 48 bytes a card). Results arrive as transferred
 * buffers and strings; nothing is parsed from JSON.
 */

import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { CARD_FLAG } from '../common/index/cardinfo.js';
import type { TakedownSet } from '../common/takedowns.js';
import { CardsWriter } from '../common/index/cards.js';
import { LinksWriter } from '../common/index/fingerprints.js';
import { logger } from '../common/log.js';
import { FOOTPRINT_SIZE } from '../common/index/feedback.js';
import type { CardFacts } from './cards.js';
import { LINK_RECORD, SPELLING_BYTES, STRING_KEYS_SIZE, SUMMARY_SIZE, type ChewResult, type ChewTask, type ImageCard, type WordSegment } from './chew-worker.js';
import { ImageRefs } from './images.js';
import { rawId } from './lexicon.js';
import { Words } from './segments.js';
import { signaturesWriter, type SignatureSettings } from './signatures.js';
import { STRING_RECORD } from './wordindex.js';
import { CHECKSUM_RECORD, CHECKSUMS_FORMAT, FINGERPRINT_SIZE, POSTING_HEAD, POSTINGS_FORMAT, REFTEXTS_FORMAT, refTextLength, WorkFileWriter, type Attributes } from './work-files.js';

const log = logger('indexer');

/** Spellings a worker may keep however small the budget (a few MiB): fewer only send the same words to the main thread again and again. */
const MIN_SPELLINGS = 1 << 14;
/**
 * A worker's young generation, MiB: most of what a worker holds besides its
 * spellings is V8's nursery; capped, a build's peak fell by some 40 MiB on a
 * normal corpus and 55 on random words, with no loss of chewing time we could
 * measure (docs/indexer.md "Memory").
 */
const WORKER_YOUNG_MIB = 16;
/** Batches each worker has queued, so none waits for the main thread. */
const IN_FLIGHT_PER_WORKER = 2;

export interface ChewFiles {
  cards: string;
  postings: string;
  checksums: string;
  links: string;
  refTexts: string;
  signatures: string;
}

export interface ChewReport {
  facts: CardFacts;
  /** The fingerprint of each card's URL key, 12 bytes a card: the scan's, then the image cards'. */
  fingerprints: Buffer;
  /** Image cards, after the buckets' cards; images left out at the bound of their memory. */
  images: number;
  imagesDropped: number;
  /** Image cards left out because a takedown hides them. */
  imagesTakenDown: number;
  /** The words met, numbered (segments.ts: spilled in segments past their share of the budget). */
  words: Words;
  /** StringIndex records: key, card id (STRING_RECORD bytes each). */
  strings: Buffer;
  postings: number;
  links: number;
  /** Buckets that did not decode and became empty cards. */
  problems: number;
}

/** Worker threads for `indexer.workers`. */
export function workerCount(setting: 'auto' | number): number {
  return setting === 'auto' ? availableParallelism() : setting;
}

/** The share of `indexer.memory_budget` the workers' spelling tables hold together: a quarter. */
export function spellingsPerWorker(budget: number, workers: number): number {
  return Math.max(MIN_SPELLINGS, Math.floor(budget / 4 / workers / SPELLING_BYTES));
}

/** Cards per batch: about 32 batches per worker, so that the last ones finish together. */
function batchSize(cards: number, workers: number): number {
  return Math.min(256, Math.max(8, Math.ceil(cards / (workers * 32))));
}

/** A buffer handed over from a worker, as a Buffer over the same memory. */
function view(array: Uint8Array): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}

/** Takes chewed batches in card order and writes the stage's files. */
class Collector {
  /** Per worker thread: its word numbers → our numbers, valid for one epoch of its vocabulary; its words, to number them again in a later segment. */
  private readonly workers = new Map<number, { epoch: number; ids: Uint32Array; exact: string[]; plain: string[]; stemLanguage: number[]; stem: string[] }>();
  facts: CardFacts;
  private strings = Buffer.allocUnsafe(1 << 16);
  private stringBytes = 0;
  postings = 0;
  links = 0;
  problems = 0;

  constructor(
    cards: number,
    readonly words: Words,
    private readonly out: { cards: CardsWriter; postings: WorkFileWriter; checksums: WorkFileWriter; links: LinksWriter; refTexts: WorkFileWriter; signatures: WorkFileWriter },
    readonly images: ImageRefs,
  ) {
    this.facts = Collector.allocate(cards);
  }

  private static allocate(cards: number): CardFacts {
    return {
      positions: new Uint32Array(cards),
      sites: new Uint32Array(cards),
      dates: new Uint32Array(cards),
      flags: new Uint8Array(cards),
      types: new Uint8Array(cards),
      footprints: Buffer.alloc(cards * FOOTPRINT_SIZE),
      urlLengths: new Uint16Array(cards),
      metaEnds: new Uint16Array(cards),
      lengths: new Uint8Array(cards),
      languages: new Uint8Array(cards),
      weights: new Uint8Array(cards),
    };
  }

  /** Makes room for `more` cards after those there are (the image cards). */
  growBy(more: number): void {
    const old = this.facts;
    const grown = Collector.allocate(old.flags.length + more);
    for (const [name, column] of Object.entries(old)) (grown[name as keyof CardFacts] as Uint8Array).set(column as Uint8Array);
    this.facts = grown;
  }

  get stringRecords(): Buffer {
    return this.strings.subarray(0, this.stringBytes);
  }

  take(first: number, count: number, result: ChewResult): void {
    const summaries = view(result.summaries);
    this.facts.positions.set(this.out.cards.addBlocks(view(result.cards)), first);
    const strings = view(result.strings);
    const checksums = Buffer.allocUnsafe(count * CHECKSUM_RECORD);
    const signatures = view(result.signatures);
    const signatureBytes = signatures.length / count;
    const signatureRecords = Buffer.allocUnsafe(count * (4 + signatureBytes));
    let checksummed = 0;
    for (let i = 0; i < count; i++) {
      const id = first + i;
      const s = i * SUMMARY_SIZE;
      this.facts.dates[id] = summaries.readUInt32LE(s);
      this.facts.sites[id] = summaries.readUInt32LE(s + 4);
      this.facts.flags[id] = summaries[s + 8]!;
      this.facts.types[id] = summaries[s + 9]!;
      this.facts.urlLengths[id] = summaries.readUInt16LE(s + 10);
      summaries.copy(this.facts.footprints, id * FOOTPRINT_SIZE, s + 32, s + 48);
      this.facts.metaEnds[id] = summaries.readUInt16LE(s + 48);
      this.facts.lengths[id] = summaries[s + 50]!;
      this.facts.languages[id] = summaries[s + 51]!;
      signatureRecords.writeUInt32LE(id, i * (4 + signatureBytes));
      signatures.copy(signatureRecords, i * (4 + signatureBytes) + 4, i * signatureBytes, (i + 1) * signatureBytes);
      if ((summaries[s + 8]! & CARD_FLAG.empty) !== 0) continue;
      if (summaries[s + 12] === 0) {
        summaries.copy(checksums, checksummed * CHECKSUM_RECORD, s + 16, s + 32);
        checksums.writeUInt32LE(id, checksummed * CHECKSUM_RECORD + 16);
        checksummed += 1;
      }
      this.addStrings(strings.subarray(i * STRING_KEYS_SIZE, (i + 1) * STRING_KEYS_SIZE), id);
    }
    this.out.checksums.write(checksums.subarray(0, checksummed * CHECKSUM_RECORD), checksummed);
    this.out.signatures.write(signatureRecords, count);
    for (const segment of result.segments) this.takeWords(result.thread, segment);
    // Between batches: a card's words are all of one segment.
    this.words.maybeSpill();
    this.takeLinks(view(result.links));
    const refTexts = view(result.refTexts);
    let records = 0;
    for (let at = 0; at < refTexts.length; at += refTextLength(refTexts, at)) records += 1;
    this.out.refTexts.write(refTexts, records);
    this.images.add(view(result.imageRefs));
    for (const problem of result.problems) log.warning('bucket indexed as an empty card', { problem });
    this.problems += result.problems.length;
  }

  private addStrings(keys: Buffer, id: number): void {
    const need = this.stringBytes + (keys.length / FINGERPRINT_SIZE) * STRING_RECORD;
    if (need > this.strings.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, 2 * this.strings.length));
      this.strings.copy(grown, 0, 0, this.stringBytes);
      this.strings = grown;
    }
    for (let at = 0; at < keys.length; at += FINGERPRINT_SIZE) {
      keys.copy(this.strings, this.stringBytes, at, at + FINGERPRINT_SIZE);
      this.strings.writeUInt32LE(id, this.stringBytes + FINGERPRINT_SIZE);
      this.stringBytes += STRING_RECORD;
    }
  }

  /** Maps the worker's new words onto the vocabulary, counts the batch's words and writes its postings under their LexRaw ids (temporary numbers once the vocabulary is spilled). */
  private takeWords(thread: number, result: WordSegment): void {
    let worker = this.workers.get(thread);
    if (worker === undefined || worker.epoch !== result.epoch) {
      worker = { epoch: result.epoch, ids: new Uint32Array(1024), exact: [], plain: [], stemLanguage: [], stem: [] };
      this.workers.set(thread, worker);
    }
    const exact = result.words.split('\n');
    const plains = result.plains.split('\n');
    const stems = result.stems.split('\n');
    const fresh = exact.length - 1;
    if (result.firstWord + fresh > worker.ids.length) {
      const grown = new Uint32Array(Math.max(2 * worker.ids.length, result.firstWord + fresh));
      grown.set(worker.ids);
      worker.ids = grown;
    }
    const { words } = this;
    const ids = worker.ids;
    for (let k = 0; k < fresh; k++) {
      const plain = plains[k] || exact[k]!;
      const line = stems[k]!;
      const space = line.indexOf(' ');
      const stemLanguage = space < 0 ? 0 : Number(line.slice(0, space));
      const stem = space < 0 ? plain : line.slice(space + 1);
      const w = result.firstWord + k;
      ids[w] = words.add(exact[k]!, plain, stemLanguage, stem);
      worker.exact[w] = exact[k]!;
      worker.plain[w] = plain;
      worker.stemLanguage[w] = stemLanguage;
      worker.stem[w] = stem;
    }
    /** Our number of the worker's word `w`, numbered again if its segment was spilled since. */
    const current = (w: number): number => {
      const n = ids[w]!;
      return words.current(n) ? n : (ids[w] = words.add(worker.exact[w]!, worker.plain[w]!, worker.stemLanguage[w]!, worker.stem[w]!));
    };
    const { usage } = result;
    for (let k = 0; k < usage.length; k += 2) words.count(current(usage[k]!), usage[k + 1]!);
    const postings = view(result.postings);
    let records = 0;
    for (let at = 0; at < postings.length; at += POSTING_HEAD + postings.readUInt32LE(at + 4)) {
      postings.writeUInt32LE(rawId(current(postings.readUInt32LE(at))), at);
      records += 1;
    }
    this.out.postings.write(postings, records);
    this.postings += records;
  }

  private takeLinks(links: Buffer): void {
    this.out.links.addRecords(links);
    this.links += links.length / LINK_RECORD;
  }
}

/**
 * Chews every card of `attributes` (from the bucket file `buckets`) with
 * `workers` threads, writing `files`; `onProgress` gets the cards done.
 */
export async function chew(buckets: string, attributes: Attributes, files: ChewFiles, workers: number, signatures: SignatureSettings, budget: number, words: Words, takedowns: TakedownSet, onProgress?: (done: number) => void): Promise<ChewReport> {
  const out = {
    cards: new CardsWriter(files.cards),
    postings: new WorkFileWriter(files.postings, POSTINGS_FORMAT),
    checksums: new WorkFileWriter(files.checksums, CHECKSUMS_FORMAT),
    links: new LinksWriter(files.links),
    refTexts: new WorkFileWriter(files.refTexts, REFTEXTS_FORMAT),
    signatures: signaturesWriter(files.signatures),
  };
  const collector = new Collector(attributes.cards, words, out, new ImageRefs(Math.floor(budget / 8), takedowns));
  const pool = new Piscina({ filename: new URL('./chew-worker.js', import.meta.url).href, minThreads: workers, maxThreads: workers, idleTimeout: 1000, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MIB } });
  let images: ImageCard[] = [];
  let fingerprints = attributes.fingerprints;
  try {
    const maxSpellings = spellingsPerWorker(budget, workers);
    const base = { buckets, generation: attributes.generation, signatures, maxSpellings };
    /** Chews cards `from` to `from + count − 1`, `task` making the batch of those from `first` to before `end`. */
    const run = async (from: number, count: number, task: (first: number, end: number) => ChewTask): Promise<void> => {
      const size = batchSize(count, workers);
      const batches = Math.ceil(count / size);
      const results = new Map<number, Promise<ChewResult>>();
      const start = (b: number): void => {
        const first = from + b * size;
        const result = pool.run(task(first, Math.min(from + count, first + size))) as Promise<ChewResult>;
        // Awaited in card order later; a failure meanwhile must not count as unhandled.
        result.catch(() => undefined);
        results.set(b, result);
      };
      let next = 0;
      for (; next < Math.min(batches, workers * IN_FLIGHT_PER_WORKER); next++) start(next);
      for (let b = 0; b < batches; b++) {
        const result = await results.get(b)!;
        results.delete(b);
        if (next < batches) start(next++);
        const first = from + b * size;
        collector.take(first, Math.min(size, from + count - first), result);
        onProgress?.(Math.min(from + count, first + size));
      }
    };
    await run(0, attributes.cards, (first, end) => ({ ...base, first, oids: attributes.oids.slice(first, end), flags: attributes.flags.slice(first, end) }));
    // Every page read: the images they show with an alt text are known.
    const made = collector.images.cards(attributes.fingerprints);
    images = made.cards;
    if (images.length > 0) {
      fingerprints = Buffer.concat([attributes.fingerprints, made.fingerprints]);
      collector.growBy(images.length);
      const none = { oids: new Uint32Array(0), flags: new Uint8Array(0) };
      await run(attributes.cards, images.length, (first, end) => ({ ...base, ...none, first, images: images.slice(first - attributes.cards, end - attributes.cards) }));
    }
    out.cards.finish();
    out.postings.finish();
    out.checksums.finish();
    out.links.finish();
    out.refTexts.finish();
    out.signatures.finish([signatures.hashes]);
  } catch (err) {
    for (const writer of Object.values(out)) writer.abort();
    throw err;
  } finally {
    await pool.destroy();
  }
  return { facts: collector.facts, fingerprints, images: images.length, imagesDropped: collector.images.dropped, imagesTakenDown: collector.images.takenDown, words: collector.words, strings: collector.stringRecords, postings: collector.postings, links: collector.links, problems: collector.problems };
}
