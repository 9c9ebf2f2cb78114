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
 *              position (so at most 2,048 per card). The refs are sorted by
 *              card in an external sort (lines, a quarter of the memory
 *              budget), then merged with Postings into AnchoredPostings: a
 *              word the card has gets the refs appended to its chain, a new
 *              word a chain of its own. AnchoredPostings has the Postings
 *              layout (work-files.ts) and is what WordIndex is built from.
 *   Feedback   (common/index-feedback.ts) per card its footprint, flags and
 *              weight, published with the version for the shepherd.
 */

import { ExternalSorter } from '../common/external-sort.js';
import { META_TYPES } from '../common/doc-body.js';
import { CARD_FLAG } from '../common/index-cardinfo.js';
import { FeedbackWriter, FOOTPRINT_SIZE } from '../common/index-feedback.js';
import { readLinks } from '../common/index-fingerprints.js';
import { MAX_WORD_BYTES } from '../common/index-lexicon.js';
import { decodeChains, encodeChain, MAX_CARD_ID, MAX_META_POSITION, type MetaRef } from '../common/index-refs.js';
import { words } from '../common/words.js';
import type { CardFacts, CardFinder } from './cards.js';
import { rawId, type Vocabulary } from './lexicon.js';
import { NOWHERE } from './merge.js';
import { POSTING_HEAD, POSTINGS_FORMAT, readPostings, readRefTexts, WorkFileWriter } from './work-files.js';

const DAMPING = 0.85;
const RANK_ITERATIONS = 20;
/** r·N of a card nobody links to: what the weight's scale starts from. */
const BASE_RANK = 1 - DAMPING;
const WEIGHT_SCALE = 28;
const EXT = META_TYPES.indexOf('ext');

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

/** The static weight byte of each card: its class's rank on its primary, log-scaled (see above). */
export function staticWeights(rank: Float64Array, merges: Uint32Array, flags: Uint8Array): Uint8Array {
  const cards = rank.length;
  const classRank = Float64Array.from(rank);
  for (let c = 0; c < cards; c++) {
    if ((flags[c]! & CARD_FLAG.dup) !== 0) classRank[merges[c]!]! += rank[c]!;
  }
  return Uint8Array.from(classRank, (r) => Math.min(255, Math.round(WEIGHT_SCALE * Math.log2(1 + (r * cards) / BASE_RANK))));
}

/** Fixed-width hex: sorted lines compare as the numbers. */
function hex(value: number, digits: number): string {
  return value.toString(16).padStart(digits, '0');
}

export interface AnchorReport {
  /** Anchor texts attached, and the Postings records written. */
  anchors: number;
  postings: number;
}

/**
 * Attaches the anchor texts of `files.refTexts` to their targets, adding
 * their words to `vocabulary`, and writes `files.out` (AnchoredPostings) from
 * `files.postings`; `merges` is mergeCards()'s array.
 */
export function attachAnchors(
  files: { refTexts: string; postings: string; out: string; sortDir: string },
  finder: CardFinder,
  facts: CardFacts,
  merges: Uint32Array,
  vocabulary: Vocabulary,
  budget: number,
): AnchorReport {
  const { flags } = facts;
  const nextMeta = Uint16Array.from(facts.metaEnds);
  const sorter = new ExternalSorter({ memoryBudget: Math.max(1 << 16, Math.floor(budget / 4)), tmpDir: files.sortDir });
  let anchors = 0;
  for (const ref of readRefTexts(files.refTexts)) {
    const found = finder.find(ref.target);
    const landed = found < 0 ? NOWHERE : landing(found, flags, merges);
    // An empty card's Merges entry is its redirect's end, any other card's its class's primary.
    const target = landed === NOWHERE ? NOWHERE : merges[landed]!;
    if (target === NOWHERE || (flags[target]! & CARD_FLAG.empty) !== 0 || merges[ref.source] === target || target === ref.source) continue;
    const base = nextMeta[target]!;
    let last = -1;
    for (const word of words(ref.text)) {
      const position = base + word.position;
      if (position > MAX_META_POSITION) break;
      last = word.position;
      if (Buffer.byteLength(word.exact, 'utf8') > MAX_WORD_BYTES) continue;
      const n = vocabulary.add(word.exact, word.plain);
      vocabulary.frequency[n]! += 1;
      sorter.add(`${hex(target, 8)}${hex(rawId(n), 8)}${hex(position, 4)}`);
    }
    if (last >= 0) {
      nextMeta[target] = Math.min(MAX_META_POSITION + 1, base + last + 2);
      anchors += 1;
    }
  }
  return { anchors, postings: mergeAnchors(files, sorter) };
}

interface AnchorRef {
  card: number;
  word: number;
  position: number;
}

function* anchorRefs(sorter: ExternalSorter): Generator<AnchorRef> {
  for (const line of sorter.sorted()) yield { card: parseInt(line.slice(0, 8), 16), word: parseInt(line.slice(8, 16), 16), position: parseInt(line.slice(16), 16) };
}

/** Postings and the sorted anchor refs, merged card by card into `files.out`; returns its records. */
function mergeAnchors(files: { postings: string; out: string }, sorter: ExternalSorter): number {
  const out = new WorkFileWriter(files.out, POSTINGS_FORMAT);
  const refs = anchorRefs(sorter);
  let pending = refs.next();
  const head = Buffer.alloc(POSTING_HEAD);
  const write = (word: number, chain: Buffer): void => {
    head.writeUInt32LE(word, 0);
    head.writeUInt32LE(chain.length, 4);
    out.write(head, 0);
    out.write(chain, 1);
  };
  const metaRef = (position: number): MetaRef => ({ kind: 'meta', type: EXT, weight: 0, position });
  /** The anchor refs of `card`, by word. */
  const take = (card: number): Map<number, MetaRef[]> => {
    const byWord = new Map<number, MetaRef[]>();
    while (!pending.done && pending.value.card === card) {
      const { word, position } = pending.value;
      byWord.set(word, [...(byWord.get(word) ?? []), metaRef(position)]);
      pending = refs.next();
    }
    return byWord;
  };
  /** Chains of their own for the words left in `byWord`. */
  const flush = (card: number, byWord: Map<number, MetaRef[]>): void => {
    for (const [word, metas] of byWord) write(word, encodeChain({ cardId: card, refs: metas }));
  };
  /** Every anchor card before `card` that has no postings. */
  const before = (card: number): void => {
    while (!pending.done && pending.value.card < card) {
      const alone = pending.value.card;
      flush(alone, take(alone));
    }
  };
  try {
    let current = -1;
    let byWord = new Map<number, MetaRef[]>();
    for (const { word, chain } of readPostings(files.postings)) {
      const card = chain.readUInt32LE(0) & MAX_CARD_ID;
      if (card !== current) {
        flush(current, byWord);
        before(card);
        current = card;
        byWord = take(card);
      }
      const metas = byWord.get(word);
      if (metas === undefined) {
        write(word, chain);
      } else {
        const [decoded] = decodeChains(chain);
        write(word, encodeChain({ cardId: card, refs: [...decoded!.refs, ...metas] }));
        byWord.delete(word);
      }
    }
    flush(current, byWord);
    before(Infinity);
    out.finish();
  } catch (err) {
    out.abort();
    sorter.discard();
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
