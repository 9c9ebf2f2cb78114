/**
 * One index version from the buckets (`sherlock index build`, DESIGN §6):
 * the stages in order, each writing its named files into the version
 * directory being built (docs/indexer.md "Build"):
 *
 *   scan      buckets → Attributes
 *   chew      Attributes, buckets → Cards, Postings, Checksums, Signatures, Links, RefTexts;
 *             then the image cards (images.ts)
 *   merge     Links (redirects), Checksums, Signatures → Merges; dup and merged flags
 *   links     Links, RefTexts, Postings → weights, AnchoredPostings, Feedback
 *   lexicon   the chewer's and the anchors' words → LexRaw, LexByFreq, LexOrder
 *   wordindex AnchoredPostings, LexOrder → WordIndex, Lexicon, StringIndex
 *   cards     → CardInfo, Fingerprints
 *   suggest   Lexicon, Cards, the words' card counts (wordindex) → Suggestions (suggestions.ts)
 *   publish   → Manifest; `<version>.tmp/` → `<version>/`, `current` switched
 *
 * Stages hand each other their results in memory as well (the vocabulary,
 * per-card facts): the files are there to be inspected with `sherlock index
 * dump` and read by the stages that come next (merging, links). One build
 * runs at a time per state (`state/index/build.lock`). A build that fails
 * removes its directory; one that is killed leaves it for the next build
 * to remove, and `current` untouched (publish.ts).
 */

import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { bucketFilePath } from '../common/bucket/file.js';
import { CARD_FLAG } from '../common/index/cardinfo.js';
import { SherlockError } from '../common/errors.js';
import { acquireLock } from '../common/lock.js';
import { logger } from '../common/log.js';
import { TakedownFile, takedownFilePath } from '../common/takedowns.js';
import { CardFinder, writeCardInfo, writeFingerprints } from './cards.js';
import { chew, workerCount } from './chew.js';
import type { IndexerConfig } from './config.js';
import { writeLexiconFile, writeLexLists } from './lexicon.js';
import { Words, writeRankedLexicon } from './segments.js';
import type { EntryPlace } from '../common/index/chains.js';
import { attachAnchors, rankCards, staticWeights, writeFeedback } from './links.js';
import { mergeCards, resolveRedirects } from './merge.js';
import { indexDirectory } from '../common/index/layout.js';
import type { SiteRules } from '../common/site-rules.js';
import { beginVersion, publishVersion } from './publish.js';
import { scan } from './scan.js';
import { buildSuggestions } from './suggestions.js';
import { runDirectory, writeStringIndex, writeWordIndex } from './wordindex.js';

const log = logger('indexer');

/**
 * Bytes the build holds per card from the chew stage to its end: CardFacts
 * (36), the fingerprints and CardFinder (12 + 4 + 8), the ranks, redirects
 * and Merges (8 + 4 + 4), union-find and the weights (9); the StringIndex
 * records are counted as they are.
 */
const HELD_PER_CARD = 85;
/** What the process holds besides its shares of the budget: Node's own baseline, and each chewing worker's (docs/indexer.md "Memory"). */
export const BASELINE_BYTES = 96 * 1024 * 1024;
export const PER_WORKER_BYTES = 120 * 1024 * 1024;

/**
 * What the build's shares divide (the vocabulary's, the spellings', the
 * sorts'): the budget less the fixed allowance, so that the whole process
 * stays within the budget; at least half of it, since a budget under twice
 * the allowance cannot bound the process anyway.
 */
export function sharedBudget(budget: number, workers: number): number {
  return Math.max(Math.floor(budget / 2), budget - BASELINE_BYTES - workers * PER_WORKER_BYTES);
}

/**
 * What the WordIndex stage holds per word besides the sort and the ranks:
 * each word's last card, and the cards holding it (kept for the suggest
 * stage, 4 bytes a word: 40 MiB at ten million words).
 */
const WORDINDEX_BYTES_PER_WORD = 8;

/**
 * What the suggest stage holds per word besides its sorts: the Lexicon's
 * body read whole (some 20 bytes a word; not the Lexicon opened, whose
 * lookup tables take some 110), the words' card counts, each plain form's
 * best rank and shown variant, a sorted copy of the ranks and the ties of
 * the lowest rank kept (suggestions.ts bestByRank); and per card a title's
 * rank and first card, their sorted copy and ties.
 */
const SUGGEST_BYTES_PER_WORD = 44;
const SUGGEST_BYTES_PER_CARD = 16;

/** The files of a version: what the searcher reads, and the stages' working files. */
export const INDEX_FILES = ['Cards', 'CardInfo', 'Lexicon', 'WordIndex', 'StringIndex', 'Fingerprints', 'Feedback', 'Suggestions'] as const;
export const WORK_FILES = ['Attributes', 'Postings', 'Checksums', 'Signatures', 'Links', 'RefTexts', 'Merges', 'AnchoredPostings', 'LexRaw', 'LexByFreq', 'LexOrder'] as const;

export const STAGES = ['scan', 'chew', 'merge', 'links', 'lexicon', 'wordindex', 'cards', 'suggest', 'publish'] as const;
export type Stage = (typeof STAGES)[number];

export interface BuildOptions {
  state: string;
  config: IndexerConfig;
  /** The site rules: URLs with `index = false` are left out (scan.ts). */
  rules?: SiteRules;
  /** Publish the working files too (listed in the Manifest). */
  keepWork?: boolean;
  /** How far a stage is: `done` of `total` (buckets for the scan, cards for chewing). */
  onProgress?: (stage: Stage, done: number, total: number) => void;
  /** Asked before each stage: true abandons the build (SHERLOCK_ABORTED), `current` untouched. */
  stopRequested?: () => boolean;
}

export interface BuildReport {
  version: string;
  dir: string;
  buckets: number;
  cards: number;
  /** Of the cards, those made for images from pages' alt texts (images.ts). */
  images: number;
  /** Cards with nothing to index: redirects, noindex, undecodable. */
  emptyCards: number;
  /** Documents and images left out because a takedown hides them (common/takedowns.ts). */
  takenDown: number;
  words: number;
  postings: number;
  strings: number;
  links: number;
  /** Cards flagged dup (merged into another), and anchor texts attached to their targets. */
  duplicates: number;
  anchors: number;
  /** Sorted runs of postings, and how many of them went to disk. */
  runs: number;
  spilled: number;
  /** Segments of the vocabulary written to disk (0 when it fit its share of the budget). */
  vocabularySegments: number;
  /** Bytes of the published version. */
  bytes: number;
  seconds: number;
  /** Peak resident set of the process so far (getrusage maxRSS: every thread, the chewing workers too), bytes. */
  maxRss: number;
  /** Wall and processor seconds (all threads) of each stage. */
  stages: { stage: Stage; seconds: number; cpuSeconds: number }[];
}

export async function buildIndex(options: BuildOptions): Promise<BuildReport> {
  const { state, config } = options;
  const started = performance.now();
  const indexDir = indexDirectory(state);
  mkdirSync(indexDir, { recursive: true });
  const lock = acquireLock(join(indexDir, 'build.lock'));
  const stages: BuildReport['stages'] = [];
  let dir: string | undefined;
  let published = false;
  async function stage<T>(name: Stage, body: () => T | Promise<T>): Promise<T> {
    if (options.stopRequested?.() === true) throw new SherlockError('SHERLOCK_ABORTED', `build abandoned before its ${name} stage`, { file: indexDir });
    log.info('stage begins', { stage: name });
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const result = await body();
    const seconds = (performance.now() - t0) / 1000;
    // Processor time of every thread (the chewing workers included): wall time misleads on a busy machine.
    const used = process.cpuUsage(cpu0);
    const cpuSeconds = (used.user + used.system) / 1e6;
    stages.push({ stage: name, seconds, cpuSeconds });
    log.info('stage done', { stage: name, seconds: seconds.toFixed(2), cpu_seconds: cpuSeconds.toFixed(2), rss_mib: Math.round(process.memoryUsage.rss() / 1048576) });
    return result;
  }
  try {
    const now = new Date();
    const begun = beginVersion(indexDir, now);
    const { version } = begun;
    dir = begun.dir;
    const at = (name: string) => join(begun.dir, name);
    const buckets = bucketFilePath(state);
    // Read once: a takedown added during the build applies to the next one (and at once in the searcher).
    const takedowns = new TakedownFile(takedownFilePath(state)).current();
    const scanned = await stage('scan', () => scan(buckets, at('Attributes'), takedowns, (read) => options.onProgress?.('scan', read, read), options.rules));
    const workers = workerCount(config.workers);
    const budget = sharedBudget(config.memory_budget, workers);
    // The vocabulary's share of the budget; past it, it is spilled in segments (segments.ts).
    const words = new Words(join(begun.dir, 'vocab'), Math.floor(budget / 4));
    const chewed = await stage('chew', () =>
      chew(
        buckets,
        scanned,
        { cards: at('Cards'), postings: at('Postings'), checksums: at('Checksums'), links: at('Links'), refTexts: at('RefTexts'), signatures: at('Signatures') },
        workers,
        { hashes: config.signatures, words: config.shingle_words },
        budget,
        words,
        takedowns,
        (done) => options.onProgress?.('chew', Math.min(done, scanned.cards), scanned.cards),
      ),
    );
    const { facts } = chewed;
    const cards = facts.flags.length;
    if (chewed.imagesDropped > 0) log.warning('images left out of the index: their alt texts passed an eighth of the memory budget', { images: chewed.images, left_out: chewed.imagesDropped });
    const finder = new CardFinder(chewed.fingerprints);
    // What the build holds from here to its end counts in the budget; the sorts get the rest (docs/indexer.md "Memory").
    const heldPerCard = cards * HELD_PER_CARD + chewed.strings.length;
    const sortBudget = (words: number): number => Math.max(Math.floor(budget / 8), budget - heldPerCard - words);
    if (heldPerCard > budget / 2) {
      log.warning('the cards take most of the memory budget', { held_mib: Math.round(heldPerCard / 1048576), budget_mib: Math.round(config.memory_budget / 1048576), cards });
    }
    const merged = await stage('merge', () => {
      const redirects = resolveRedirects(at('Links'), finder, facts.flags);
      // Ranks first: the heaviest card of a class is the one kept.
      const rank = rankCards(at('Links'), finder, facts.flags, redirects);
      return { rank, ...mergeCards(at('Merges'), facts, redirects, { checksums: at('Checksums'), signatures: at('Signatures'), threshold: config.signature_threshold, rank }) };
    });
    const anchored = await stage('links', () => {
      facts.weights.set(staticWeights(merged.rank, merged.merges, facts.flags, scanned.bonus));
      writeFeedback(at('Feedback'), facts);
      const files = { refTexts: at('RefTexts'), postings: at('Postings'), out: at('AnchoredPostings'), sortDir: begun.dir };
      return attachAnchors(files, finder, facts, merged.merges, words, sortBudget(words.bytes));
    });
    const lists = { raw: at('LexRaw'), byFreq: at('LexByFreq'), order: at('LexOrder') };
    // A vocabulary that stayed within its share is sorted in memory; a spilled one is merged from its segments.
    const ranks = await stage('lexicon', () => {
      if (!words.spilled) {
        const order = writeLexLists(words.vocabulary, lists);
        return { words: order.rank.length, rank: order.rank, temporary: false, order };
      }
      const ranked = words.rank(lists, sortBudget(4 * words.numbers));
      return { words: ranked.words, rank: ranked.rankOf, temporary: true, ranked };
    });
    const { wordIndex, strings } = await stage('wordindex', () => {
      const held = ranks.temporary ? ranks.rank.byteLength : words.bytes + 8 * ranks.words;
      const lexicon = (places: Iterable<EntryPlace>): void => (ranks.order !== undefined ? writeLexiconFile(at('Lexicon'), words.vocabulary, ranks.order, places) : writeRankedLexicon(at('Lexicon'), ranks.ranked!, places));
      const wordIndex = writeWordIndex(at('AnchoredPostings'), at('WordIndex'), ranks, sortBudget(held + WORDINDEX_BYTES_PER_WORD * ranks.words), runDirectory(begun.dir), lexicon);
      words.remove();
      return { wordIndex, strings: writeStringIndex(at('StringIndex'), chewed.strings) };
    });
    await stage('cards', () => {
      writeCardInfo(at('CardInfo'), facts);
      writeFingerprints(at('Fingerprints'), finder);
    });
    const suggestions = await stage('suggest', () => {
      const files = { lexicon: at('Lexicon'), cards: at('Cards'), out: at('Suggestions'), work: join(begun.dir, 'suggest') };
      return buildSuggestions(files, facts, wordIndex.cardCounts, sortBudget(SUGGEST_BYTES_PER_WORD * ranks.words + SUGGEST_BYTES_PER_CARD * cards));
    });
    const emptyCards = facts.flags.reduce((n, flags) => n + ((flags & CARD_FLAG.empty) === 0 ? 0 : 1), 0);
    // bucket_generation and bucket_next say which buckets the version holds (indexer/backlog.ts).
    const counts = { bucket_generation: scanned.generation, bucket_next: scanned.next, cards, images: chewed.images, empty_cards: emptyCards, duplicates: merged.duplicates, anchors: anchored.anchors, words: ranks.words, postings: wordIndex.postings, strings, links: chewed.links, suggested_words: suggestions.words, suggested_titles: suggestions.titles };
    const files = [...INDEX_FILES, ...(options.keepWork === true ? WORK_FILES : [])];
    const publishedVersion = await stage('publish', () => publishVersion(indexDir, version, begun.dir, { files, counts, now, graceMs: config.grace_period }));
    published = true;
    const report: BuildReport = {
      version,
      dir: publishedVersion.dir,
      buckets: scanned.buckets,
      cards,
      images: chewed.images,
      emptyCards,
      takenDown: scanned.takenDown + chewed.imagesTakenDown,
      words: ranks.words,
      postings: wordIndex.postings,
      strings,
      links: chewed.links,
      duplicates: merged.duplicates,
      anchors: anchored.anchors,
      runs: wordIndex.runs,
      spilled: wordIndex.spilled,
      vocabularySegments: words.spills,
      bytes: publishedVersion.bytes,
      seconds: (performance.now() - started) / 1000,
      maxRss: process.resourceUsage().maxRSS * 1024,
      stages,
    };
    log.info('index version published', { version, cards: report.cards, taken_down: report.takenDown, words: report.words, bytes: report.bytes, seconds: report.seconds.toFixed(2) });
    return report;
  } finally {
    if (!published && dir !== undefined) rmSync(dir, { recursive: true, force: true });
    lock.release();
  }
}
