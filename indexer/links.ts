/**
 * The link stage (sherlock-original §4 items 4 and 7: weights, reftexts,
 * feedback-gath): links resolved to cards, static weights, anchor texts
 * attached to their targets, and the feedback to the shepherd.
 *
 *   rank       PageRank over the anchor and frame links of Links: a target
 *              is found through the cards' fingerprints (CardFinder) and a
 *              redirect is followed to its ultimate card (merge.ts); damping
 *              0.85, RANK_ITERATIONS rounds, the rank of cards without links
 *              spread over all. The graph is held as two u32 arrays, 8 bytes
 *              a link.
 *   weights    a class of duplicates weighs the sum of its cards' ranks, its
 *              primary carries it; the byte is log-scaled so it spreads:
 *              28·log2(1 + r·N / 0.15), r·N being 1 for an average card and
 *              0.15 for one nobody links to (weight 28; an average card
 *              weighs about 80), capped at 255.
 *   anchors    every anchor text (RefTexts) whose target resolves (redirects
 *              followed, then to the primary of its class) to another card
 *              with text becomes meta refs of type `ext` (anchor text) in the
 *              target's chains, from the target's first free meta position
 *              on, a gap of one between two texts, none past the last meta
 *              position (so at most 2,048 per card), once per source site
 *              (SeenTexts: a menu repeats it on every page); a text from a page of
 *              another site has meta weight CROSS_SITE_WEIGHT, one from the
 *              target's own site (its navigation) weight 0. The refs are grouped
 *              by card in bounded memory (anchor-refs.ts: packed runs, a
 *              quarter of the memory budget), then merged with Postings
 *              into AnchoredPostings: a word the card has gets the refs
 *              appended to its chain, a new word a chain of its own. AnchoredPostings has the Postings
 *              layout (work-files.ts) and is what WordIndex is built from.
 *   Feedback   (common/index/feedback.ts) per card its footprint, flags and
 *              weight, published with the version for the shepherd.
 */

import { join } from 'node:path';
import { META_TYPES } from '../common/bucket/doc-body.js';
import { CARD_FLAG, staticWeight } from '../common/index/cardinfo.js';
import { FeedbackWriter, FOOTPRINT_SIZE } from '../common/index/feedback.js';
import { readLinks } from '../common/index/fingerprints.js';
import { MAX_WORD_BYTES } from '../common/index/lexicon.js';
import { ChainBuilder, MAX_CARD_ID, MAX_META_POSITION, refsOf } from '../common/index/refs.js';
import { indexStem } from '../common/language/stem.js';
import { FNV_START, cutWords, exactForm, fnv, plainForm, type RawKind } from '../common/words.js';
import { AnchorRefs } from './anchor-refs.js';
import type { CardFacts, CardFinder } from './cards.js';
import { rawId } from './lexicon.js';
import type { Words } from './segments.js';
import { NOWHERE } from './merge.js';
import { END } from './runs.js';
import { countedBlocks, POSTING_HEAD, POSTINGS_FORMAT, postingLength, readRefTexts, WorkFileWriter } from './work-files.js';

/** 1 − DAMPING is where the static weight's scale starts (common/index/cardinfo.ts staticWeight). */
const DAMPING = 0.85;
const RANK_ITERATIONS = 20;
const EXT = META_TYPES.indexOf('ext');
/** The meta weight (0–3) of an anchor text from another site: a vote, where a site's links to itself are its navigation. */
const CROSS_SITE_WEIGHT = 1;
/** An anchor ref's position in AnchorRefs carries its meta weight above this bit (positions are at most MAX_META_POSITION). */
const WEIGHT_SHIFT = 16;

/** The card a link to `card` lands on: through a redirect chain, else the card itself; NOWHERE for a dead end. */
export function landing(card: number, flags: Uint8Array, redirects: Uint32Array): number {
  return (flags[card]! & CARD_FLAG.empty) === 0 ? card : redirects[card]!;
}

/** A growable list of u32 pairs. */
class Pairs {
  a: Uint32Array = new Uint32Array(1024);
  b: Uint32Array = new Uint32Array(1024);
  length = 0;

  push(x: number, y: number): void {
    if (this.length === this.a.length) {
      const grow = (array: Uint32Array): Uint32Array => {
        const grown = new Uint32Array(2 * array.length);
        grown.set(array);
        return grown;
      };
      this.a = grow(this.a);
      this.b = grow(this.b);
    }
    this.a[this.length] = x;
    this.b[this.length] = y;
    this.length += 1;
  }
}

/** PageRank of every card (summing to 1) from the anchor and frame links of `linksFile`. */
export function rankCards(linksFile: string, finder: CardFinder, flags: Uint8Array, redirects: Uint32Array): Float64Array {
  const cards = flags.length;
  const edges = new Pairs();
  const out = new Uint32Array(cards);
  for (const link of readLinks(linksFile)) {
    if (link.type !== 'R' && link.type !== 'F') continue;
    const found = finder.find(link.target);
    const target = found < 0 ? NOWHERE : landing(found, flags, redirects);
    if (target === NOWHERE || target === link.source) continue;
    edges.push(link.source, target);
    out[link.source]! += 1;
  }
  let rank = new Float64Array(cards).fill(1 / cards);
  let next = new Float64Array(cards);
  for (let round = 0; round < RANK_ITERATIONS; round++) {
    let dangling = 0;
    for (let c = 0; c < cards; c++) if (out[c] === 0) dangling += rank[c]!;
    next.fill((1 - DAMPING + DAMPING * dangling) / cards);
    for (let e = 0; e < edges.length; e++) next[edges.b[e]!]! += (DAMPING * rank[edges.a[e]!]!) / out[edges.a[e]!]!;
    [rank, next] = [next, rank];
  }
  return rank;
}

/**
 * The static weight byte of each card: its class's rank on its primary,
 * log-scaled (see above), plus its site rules' weight (`bonus`, -1 to 1 of
 * the byte's range, for the cards of the scan; common/site-rules.ts).
 */
export function staticWeights(rank: Float64Array, merges: Uint32Array, flags: Uint8Array, bonus?: Float32Array): Uint8Array {
  const cards = rank.length;
  const classRank = Float64Array.from(rank);
  for (let c = 0; c < cards; c++) {
    if ((flags[c]! & CARD_FLAG.dup) !== 0) classRank[merges[c]!]! += rank[c]!;
  }
  // Image cards come after the scan's: no bonus of their own.
  return Uint8Array.from(classRank, (r, c) => Math.min(255, Math.max(0, staticWeight(r * cards) + Math.round(255 * (bonus?.[c] ?? 0)))));
}

export interface AnchorReport {
  /** Anchor texts attached, and the Postings records written. */
  anchors: number;
  postings: number;
}

/** Vocabulary numbers of the spellings met in anchor texts (GARBAGE: too long in UTF-8), so each is formed once while the cache (MAX_ANCHOR_SPELLINGS) holds it. */
const GARBAGE = -1;

/** Spellings of anchor texts remembered at a time (a cache: the vocabulary knows every word). */
const MAX_ANCHOR_SPELLINGS = 1 << 16;
/** Slots of SeenTexts: 8 MiB, whatever the corpus. */
const SEEN_SLOTS = 1 << 20;

/**
 * The (target, source site, text) triples of anchor texts attached so far,
 * by two 32-bit hashes in a direct-mapped table: a site's menu names the
 * same target alike on each of its pages, and one of those texts says what
 * they all say. A triple evicted by another that shares its slot may be
 * attached again (the table is bounded, not exact); two triples are taken
 * for one only when both hashes agree.
 */
class SeenTexts {
  private readonly first = new Uint32Array(SEEN_SLOTS);
  private readonly second = new Uint32Array(SEEN_SLOTS);

  /** Whether the triple was seen (and, if not, remembers it). */
  seen(target: number, site: number, text: string): boolean {
    let a = fnv(FNV_START, target) ^ site;
    // A second hash of another kind: a triple is taken for one seen only when both agree.
    let b = Math.imul(site ^ 0x9e3779b9, 0x85ebca6b) ^ target;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      a = fnv(a, c);
      b = Math.imul(b + c, 0xc2b2ae35) ^ (b >>> 15);
    }
    // 0 marks an empty slot; the table holds them unsigned.
    const check = (b | 1) >>> 0;
    const slot = a & (SEEN_SLOTS - 1);
    const tag = (a | 1) >>> 0;
    if (this.first[slot] === tag && this.second[slot] === check) return true;
    this.first[slot] = tag;
    this.second[slot] = check;
    return false;
  }
}

/**
 * Attaches the anchor texts of `files.refTexts` to their targets, adding
 * their words to `words`, and writes `files.out` (AnchoredPostings) from
 * `files.postings`; `merges` is mergeCards()'s array.
 */
export function attachAnchors(
  files: { refTexts: string; postings: string; out: string; sortDir: string },
  finder: CardFinder,
  facts: CardFacts,
  merges: Uint32Array,
  words: Words,
  budget: number,
): AnchorReport {
  const { flags, sites } = facts;
  const nextMeta = Uint16Array.from(facts.metaEnds);
  const refs = new AnchorRefs(join(files.sortDir, 'anchors'), flags.length, Math.max(1 << 16, Math.floor(budget / 4)));
  const spellings = new Map<string, number>();
  const seen = new SeenTexts();
  let anchors = 0;
  let text = '';
  let target = 0;
  let base = 0;
  let weight = 0;
  let last = -1;
  const visit = (start: number, end: number, kind: RawKind, position: number): void => {
    if (kind === 'garbage') return;
    const at = base + position;
    if (at > MAX_META_POSITION) return;
    last = position;
    const spelling = text.slice(start, end);
    let n = spellings.get(spelling);
    if (n === undefined) {
      const exact = exactForm(spelling);
      const plain = plainForm(exact);
      // A word only anchors have: the language of neither page is at hand, so only its letters can tell one.
      const stem = indexStem(exact, plain, 'und');
      n = Buffer.byteLength(exact, 'utf8') > MAX_WORD_BYTES ? GARBAGE : words.add(exact, plain, stem.language, stem.stem);
      if (spellings.size >= MAX_ANCHOR_SPELLINGS) spellings.clear();
      spellings.set(spelling, n);
    }
    if (n === GARBAGE) return;
    words.count(n, 1);
    refs.add(target, rawId(n), at | (weight << WEIGHT_SHIFT));
  };
  try {
    for (const ref of readRefTexts(files.refTexts)) {
      const found = finder.find(ref.target);
      const landed = found < 0 ? NOWHERE : landing(found, flags, merges);
      // An empty card's Merges entry is its redirect's end, any other card's its class's primary.
      target = landed === NOWHERE ? NOWHERE : merges[landed]!;
      if (target === NOWHERE || (flags[target]! & CARD_FLAG.empty) !== 0 || merges[ref.source] === target || target === ref.source) continue;
      if (seen.seen(target, sites[ref.source]!, ref.text)) continue;
      text = ref.text;
      base = nextMeta[target]!;
      weight = sites[ref.source] === sites[target] ? 0 : CROSS_SITE_WEIGHT;
      last = -1;
      // Positions past the last meta position stop the text (cutWords goes on, the visitor drops them).
      cutWords(text, visit);
      // Between texts: the cache's numbers are of the segment that was current.
      if (words.maybeSpill()) spellings.clear();
      if (last >= 0) {
        nextMeta[target] = Math.min(MAX_META_POSITION + 1, base + last + 2);
        anchors += 1;
      }
    }
    refs.finish();
    return { anchors, postings: mergeAnchors(files, refs) };
  } finally {
    refs.remove();
  }
}

/** Postings and the anchor refs, merged card by card into `files.out`; returns its records. */
function mergeAnchors(files: { postings: string; out: string }, refs: AnchorRefs): number {
  const out = new WorkFileWriter(files.out, POSTINGS_FORMAT);
  const builder = new ChainBuilder();
  let record = Buffer.allocUnsafe(1024);
  /** Writes the builder's chain of `card` as a record of `word`. */
  const write = (word: number, card: number): void => {
    const size = builder.chainSize;
    if (POSTING_HEAD + size > record.length) record = Buffer.allocUnsafe(2 * (POSTING_HEAD + size));
    record.writeUInt32LE(word, 0);
    record.writeUInt32LE(size, 4);
    builder.writeTo(card, record, POSTING_HEAD);
    out.write(record.subarray(0, POSTING_HEAD + size), 1);
  };
  /** The current card's anchor positions by word, words in the order first met. */
  let byWord = new Map<number, number[]>();
  const take = (card: number): void => {
    byWord = new Map();
    refs.take(card, (word, position) => {
      const positions = byWord.get(word);
      if (positions === undefined) byWord.set(word, [position]);
      else positions.push(position);
    });
  };
  const addMetas = (positions: number[]): void => {
    for (const position of positions) builder.meta(EXT, position >>> WEIGHT_SHIFT, position & ((1 << WEIGHT_SHIFT) - 1));
  };
  /** Chains of their own for the words left in `byWord`. */
  const flush = (card: number): void => {
    for (const [word, positions] of byWord) {
      builder.reset();
      addMetas(positions);
      write(word, card);
    }
    byWord.clear();
  };
  /** Every anchor card before `card` that has no postings. */
  const before = (card: number): void => {
    for (let alone = refs.nextCard(); alone < card; alone = refs.nextCard()) {
      take(alone);
      flush(alone);
    }
  };
  try {
    let current = -1;
    for (const block of countedBlocks(files.postings, POSTINGS_FORMAT, postingLength)) {
      // Records that stay as they are go out in stretches, not one by one.
      let stretch = 0;
      let stretchRecords = 0;
      const flushStretch = (end: number): void => {
        if (end > stretch) out.write(block.subarray(stretch, end), stretchRecords);
        stretch = end;
        stretchRecords = 0;
      };
      for (let at = 0; at < block.length; ) {
        const size = block.readUInt32LE(at + 4);
        const next = at + POSTING_HEAD + size;
        const card = block.readUInt32LE(at + POSTING_HEAD) & MAX_CARD_ID;
        if (card !== current) {
          flushStretch(at);
          flush(current);
          before(card);
          current = card;
          take(card);
        }
        const word = block.readUInt32LE(at);
        const positions = byWord.size === 0 ? undefined : byWord.get(word);
        if (positions === undefined) {
          stretchRecords += 1;
        } else {
          flushStretch(at);
          builder.resume(refsOf(block.subarray(at + POSTING_HEAD, next)));
          addMetas(positions);
          write(word, card);
          byWord.delete(word);
          stretch = next;
        }
        at = next;
      }
      flushStretch(block.length);
    }
    flush(current);
    before(END);
    out.finish();
  } catch (err) {
    out.abort();
    throw err;
  }
  return out.records;
}

/** Writes the Feedback file: per card its footprint, flags and weight. */
export function writeFeedback(file: string, facts: CardFacts): void {
  const writer = new FeedbackWriter(file);
  try {
    for (let id = 0; id < facts.flags.length; id++) {
      writer.add({ footprint: facts.footprints.subarray(id * FOOTPRINT_SIZE, (id + 1) * FOOTPRINT_SIZE), cardId: id, flags: facts.flags[id]!, weight: facts.weights[id]! });
    }
    writer.finish();
  } catch (err) {
    writer.abort();
    throw err;
  }
}
