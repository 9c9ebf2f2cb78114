/**
 * Ranking (sherlock-original §5 "Ranking", docs/search.md): the weights of
 * occurrences by word and meta type, the bonuses for phrases, proximity and
 * accents, the static weight, and the top-k selection with site collapsing.
 *
 * A card's score for one query word is BM25F's: the word's IDF times one
 * saturating function of its term frequency over all the card's fields,
 * the body's length-normalised (each occurrence counted by its word type, a
 * heading more than text) plus its metas' (the best meta occurrence —
 * title, URL … — and the second best's ÷ SECOND_DIVISOR, and its anchor
 * texts, other pages' words for the card) by their weights: a rare word
 * counts more than a common one, a short page about a word more than a long
 * page that mentions it as often, a title more than the body, and a title
 * adds little to a page whose text already says the word throughout.
 * Words add up; a phrase or NEAR adds a bonus on top of its words, plain
 * words close together add a proximity bonus, an AND whose every term is
 * in a title no longer than the query adds TITLE_BONUS, and the static
 * weight (CardInfo, 0–255, from the link graph) raises the sum by up to
 * STATIC_SHARE.
 */

import { codeLength } from '../common/index/cardinfo.js';
import { PACKED_CODE_BITS, SHORT_REF_KEYS, WORD_EDGE, unpackRef, type ChainDecoder, type Ref } from '../common/index/refs.js';

/** By word type (doc-text.ts): text, emphasised, small, heading 1, heading 2, alt. */
const WORD_WEIGHTS = [10, 14, 5, 24, 18, 8] as const;
/**
 * By meta type (doc-body.ts): title, keywords, description, URL words, file
 * name, anchor text. An anchor text weighs as a description: a site's own
 * links to a card count once a word however many of its pages and texts
 * carry it (occurrenceScore), so its navigation adds no more than one
 * cross-reference does; the indexer gives one from another site meta
 * weight 1 (+4), and their number saturates, so together they stay below
 * a title.
 */
const META_WEIGHTS = [40, 12, 14, 16, 16, 10] as const;
/** A meta's own weight (0–3) adds this much per step. */
const META_WEIGHT_STEP = 4;
/**
 * A title's occurrence by the title's weight, which the indexer gives by
 * its length (indexer/chew-worker.ts titleWeight: 9 positions or more, 5–8,
 * 3–4, 1–2): BM25F's length normalisation of a title field with a single
 * occurrence, k1 = 1.2, b = 0.75, about 5 words on average, × 40.
 */
const TITLE_WEIGHTS = [28, 38, 46, 56] as const;
/** Meta type of titles (doc-body.ts META_TYPES). */
export const TITLE_META = 0;
export const SECOND_DIVISOR = 4;
/**
 * BM25's term frequency saturation and length normalisation. k1 above
 * Lucene's 1.2: tf counts a heading's occurrence as 2.4 and an emphasised
 * one as 1.4 (CODE_TF), so a page saturates sooner than on plain counts.
 * b below Lucene's 0.75: in a manual the long page is the reference one
 * (every function of a family, every setting of a chapter), which full
 * length normalisation ranks below the short pages that mention it (the
 * relevance bench, docs/decisions.md "Length normalisation").
 */
export const BM25_K1 = 3;
export const BM25_B = 0.5;
/**
 * BM25F (Robertson, Zaragoza and Taylor, "Simple BM25 extension to
 * multiple weighted fields", 2004): a word's fields are added up as term
 * frequency, each by its weight, before one saturation, rather than each
 * field saturated and the scores added. A meta occurrence of weight w
 * (META_WEIGHTS, TITLE_WEIGHTS; the anchor texts' part, itself saturating
 * with their number) counts as w × META_TF plain occurrences in a body of
 * average length: a short title (56) as some 22, a URL word (16) as 6, one
 * of the site's own links (10) as 4. Added separately (as before), a
 * common word's one-word title (60 × its IDF) outweighed what the body
 * of the page about the query's rare word could reach (40 × its IDF); in
 * one saturation a title is worth most where the text says little, and
 * little where the text already says the word throughout. Measured on the
 * relevance bench (docs/decisions.md "Ranking against outside judgments"):
 * 0.3 to 0.8 all raise the English sets; above 0.5 the Czech one falls to
 * its peer's figure.
 */
export const META_TF = 0.4;
/** A word's score ÷ its IDF for one plain occurrence in a card of average length; as its term frequency grows it tends to (k1 + 1) times this. 20 (twice the separate body part's 10) keeps a title-only match about where it was (≈ 70 against 56), so the phrase, proximity and accent bonuses weigh as before beside it. */
const SCORE_WEIGHT = 20;
/** What fieldScore never reaches, whatever the term frequencies and length. */
export const SCORE_CEILING = SCORE_WEIGHT * (BM25_K1 + 1);
/** Per pair of adjacent words of a phrase. */
export const PHRASE_BONUS = 20;
/** For NEAR at distance 1, falling to 0 at the limit. */
export const NEAR_BONUS = 20;
/** For two query words next to each other, falling to 0 at PROXIMITY_SPAN words apart. */
export const PROXIMITY_BONUS = 16;
export const PROXIMITY_SPAN = 8;
/**
 * An AND (of two terms or more) whose every term has an occurrence in the
 * card's title, the title no longer than the query (by the indexer's length
 * classes of titles, TITLE_WEIGHTS): the page titled by the query, as an
 * editor would name the page about it ("CREATE USER" for `create user`,
 * not "CREATE USER MAPPING"). Each word's own title occurrence is in its
 * score already, but saturated with the rest of its fields, which on the
 * reference pages of a manual say the words throughout and leave such
 * pages within a few points of each other.
 */
export const TITLE_BONUS = 20;
/** The title length class (TITLE_WEIGHTS' index, indexer/chew-worker.ts titleWeight) of a title of `words` words. */
export function titleClass(words: number): number {
  return words <= 2 ? 3 : words <= 4 ? 2 : words <= 8 ? 1 : 0;
}
/** An accented query word found with the accents as typed. */
export const ACCENT_BONUS = 6;
/** How a Lexicon word stands for a query word, from the closest: the word itself or an accent variant, a word of its stem class, a synonym (or its accent variant), a word of a synonym's stem class (evaluate.ts). */
export const FORM = { word: 0, stem: 1, synonym: 2, synonymStem: 3 } as const;
/** A word matched only through other words of its stem class ("bridges" for "bridge") scores this share of the same occurrences of the word itself. */
export const STEM_FACTOR = 0.8;
/** A word matched only through a synonym (searcher/synonyms.ts) or its forms scores this share. */
export const SYNONYM_FACTOR = 0.6;
/** The share of the score a card keeps by the closest form it matched in (FORM order). */
export const FORM_FACTORS: readonly number[] = [1, STEM_FACTOR, SYNONYM_FACTOR, SYNONYM_FACTOR * STEM_FACTOR];
/** Static weight 255 raises a card's score (plus one) by this share: a tie-breaker among near-equal scores (the link graph of a site's navigation says little more). */
const STATIC_SHARE = 0.05;
/** Results of one site on a page (of 10) before the rest waits for later pages. */
export const SITE_MAX = 3;
/** A site's result past SITE_MAX stays on the page when the best other result left scores below this share of it. */
export const COLLAPSE_RATIO = 0.8;

/** What an occurrence is worth. */
function refWeight(ref: Ref): number {
  if (ref.kind === 'word') return WORD_WEIGHTS[ref.type] ?? 0;
  return ref.type === TITLE_META ? TITLE_WEIGHTS[ref.weight]! : (META_WEIGHTS[ref.type] ?? 0) + ref.weight * META_WEIGHT_STEP;
}

/** refWeight of a packed ref (common/index/refs.ts packRef) by its low bits: `CODE_WEIGHT[packed & CODE_MASK]`. */
export const CODE_MASK = (1 << PACKED_CODE_BITS) - 1;
export const CODE_WEIGHT = Float64Array.from({ length: CODE_MASK + 1 }, (_, code) => refWeight(unpackRef(code)));
/** By packed code: a word occurrence's term frequency (its weight ÷ plain text's), 0 for a meta. */
export const CODE_TF = Float64Array.from({ length: CODE_MASK + 1 }, (_, code) => {
  const ref = unpackRef(code);
  return ref.kind === 'word' ? refWeight(ref) / WORD_WEIGHTS[0] : 0;
});
/** By packed code: a meta occurrence's weight, 0 for a word. */
export const CODE_META = Float64Array.from({ length: CODE_MASK + 1 }, (_, code) => (unpackRef(code).kind === 'meta' ? CODE_WEIGHT[code]! : 0));
/** Meta type of anchor texts (doc-body.ts META_TYPES 'ext'). */
const ANCHOR_META = 5;
/** By packed code: an anchor text's occurrence, OWN_ANCHOR from the card's own site (meta weight 0, links.ts), CROSS_ANCHOR from another; 0 otherwise. */
const OWN_ANCHOR = 1;
const CROSS_ANCHOR = 2;
const CODE_ANCHOR = Uint8Array.from({ length: CODE_MASK + 1 }, (_, code) => {
  const ref = unpackRef(code);
  if (ref.kind !== 'meta' || ref.type !== ANCHOR_META) return 0;
  return ref.weight === 0 ? OWN_ANCHOR : CROSS_ANCHOR;
});

/**
 * A card's score with its static weight (0–255): a share of it, so that the
 * link graph counts as much beside rare words as beside common ones (IDF
 * makes the scale of scores vary by query); plus one, so that a query whose
 * terms score nothing (`site:` alone) still ranks by it. Rises with the
 * score, so a bound stays a bound.
 */
export function withStatic(score: number, weight: number): number {
  return (score + 1) * staticFactor(weight);
}

/** What withStatic multiplies by for a static weight. */
export function staticFactor(weight: number): number {
  return 1 + (STATIC_SHARE * weight) / 255;
}

/** BM25's inverse document frequency of a word in `df` of `cards` cards (Lucene's, always positive). */
export function idf(df: number, cards: number): number {
  const d = Math.min(df, cards);
  return Math.log((cards - d + 0.5) / (d + 0.5) + 1);
}

/**
 * BM25's length normalisation k1·(1 − b + b·length ÷ average) of each
 * CardInfo length code, the average over the cards of `lengths` (every
 * card's code) that have a body.
 */
export function lengthNorms(lengths: Uint8Array): Float64Array {
  let sum = 0;
  let bodies = 0;
  for (let i = 0; i < lengths.length; i++) {
    sum += codeLength(lengths[i]!);
    if (lengths[i] !== 0) bodies += 1;
  }
  const average = bodies === 0 ? 1 : sum / bodies;
  return Float64Array.from({ length: 256 }, (_, code) => BM25_K1 * (1 - BM25_B + (BM25_B * codeLength(code)) / average));
}

/**
 * What occurrenceScore and a phrase's bound read of a card's refs, in two
 * numbers (refInputs) that merge across a word's forms (mergeBodies,
 * mergeMetas) as the refs of the forms together would:
 *
 * - the body: its term frequency in tenths (CODE_TF × 10, an integer:
 *   WORD_WEIGHTS added up; at most MAX_TF10, far past saturation), the
 *   title's length class if the word is in it (from TITLE_SHIFT: TITLE_BIT
 *   and the class, titleOf), how many word occurrences have a position
 *   (from COUNT_SHIFT; MANY_COUNT and up stand for any number, as a phrase
 *   bound must), and the heaviest word type's weight among them (from
 *   WORD_SHIFT);
 * - the metas: the best meta weight, the second best, the best anchor
 *   text's (INPUT_BITS each), whether the card's own site has an anchor
 *   text with the word (OWN_BIT), and how many other sites do (from
 *   CROSS_SHIFT, at most MAX_CROSS: the anchor part saturates long before).
 */
const INPUT_BITS = 6;
const INPUT_MASK = (1 << INPUT_BITS) - 1;
const ANCHOR_SHIFT = 2 * INPUT_BITS;
const OWN_BIT = 1 << (3 * INPUT_BITS);
const CROSS_SHIFT = 3 * INPUT_BITS + 1;
const MAX_CROSS = (1 << (32 - CROSS_SHIFT)) - 1;
const TITLE_SHIFT = 16;
const MAX_TF10 = (1 << TITLE_SHIFT) - 1;
const TITLE_BIT = 4;
const COUNT_SHIFT = 19;
const WORD_SHIFT = 27;
const MANY_COUNT = (1 << (WORD_SHIFT - COUNT_SHIFT)) - 1;
if (CODE_META.some((weight) => weight > INPUT_MASK)) throw new Error(`a meta weight above ${INPUT_MASK} does not fit the score inputs`);
if (WORD_WEIGHTS.some((weight) => weight >= 1 << (32 - WORD_SHIFT))) throw new Error('a word weight does not fit the score inputs');
/** By packed code: a word occurrence's weight (CODE_TF × 10), 0 for a meta. */
const CODE_TF10 = Uint8Array.from(CODE_TF, (tf) => Math.round(tf * WORD_WEIGHTS[0]));

/** By packed code: TITLE_BIT | the title weight for a title occurrence, 0 otherwise. */
const CODE_TITLE = Uint8Array.from({ length: CODE_MASK + 1 }, (_, code) => {
  const ref = unpackRef(code);
  return ref.kind === 'meta' && ref.type === TITLE_META ? TITLE_BIT | ref.weight : 0;
});

const body = (tf10: number, title: number, count: number, word: number): number =>
  (Math.min(tf10, MAX_TF10) | (title << TITLE_SHIFT) | (Math.min(count, MANY_COUNT) << COUNT_SHIFT) | (word << WORD_SHIFT)) >>> 0;

/** The title weight (its length class, titleClass) of a card whose title has the word, from its body inputs; −1 when the title does not. */
export function titleOf(body: number): number {
  const title = (body >>> TITLE_SHIFT) & 7;
  return title === 0 ? -1 : title & 3;
}

/** The score inputs of refs[from..to) into bodies[i] and metas[i]. */
export function refInputs(refs: Int32Array, from: number, to: number, bodies: Uint32Array, metas: Uint32Array, i: number): void {
  let tf = 0;
  let title = 0;
  let count = 0;
  let word = 0;
  let best = 0;
  let second = 0;
  let own = 0;
  let cross = 0;
  let anchor = 0;
  for (let j = from; j < to; j++) {
    const packed = refs[j]!;
    const code = packed & CODE_MASK;
    const tf10 = CODE_TF10[code]!;
    if (tf10 !== 0) {
      tf += tf10;
      if (packed >> PACKED_CODE_BITS < WORD_EDGE) {
        count += 1;
        if (tf10 > word) word = tf10;
      }
      continue;
    }
    const weight = CODE_META[code]!;
    const kind = CODE_ANCHOR[code]!;
    if (CODE_TITLE[code]! > title) title = CODE_TITLE[code]!;
    if (kind !== 0) {
      if (kind === OWN_ANCHOR) own = OWN_BIT;
      else cross += 1;
      if (weight > anchor) anchor = weight;
    } else if (weight > best) [best, second] = [weight, best];
    else if (weight > second) second = weight;
  }
  bodies[i] = body(tf, title, count, word);
  metas[i] = (best | (second << INPUT_BITS) | (anchor << ANCHOR_SHIFT) | own | (Math.min(cross, MAX_CROSS) << CROSS_SHIFT)) >>> 0;
}

/**
 * Score inputs of refs of 1 or 2 bytes (ChainDecoder#shortKey: most chains
 * on the scale corpus, one occurrence), remembered per byte pattern once
 * decoded, since they depend on those bytes alone: a word's walk then
 * decodes only the longer chains. Per thread, 0.6 MB.
 */
const shortKnown = new Uint8Array(SHORT_REF_KEYS);
const shortBodies = new Uint32Array(SHORT_REF_KEYS);
const shortMetas = new Uint32Array(SHORT_REF_KEYS);
let chainRefs = new Int32Array(256);

/** refInputs of the refs `decoder` holds from byte `start` to `stop` (ChainDecoder#walk) into bodies[i] and metas[i]. */
export function chainInputs(decoder: ChainDecoder, start: number, stop: number, bodies: Uint32Array, metas: Uint32Array, i: number): void {
  const key = decoder.shortKey(start, stop);
  if (key >= 0 && shortKnown[key] === 1) {
    bodies[i] = shortBodies[key]!;
    metas[i] = shortMetas[key]!;
    return;
  }
  // A ref takes a byte at least.
  if (chainRefs.length < stop - start) chainRefs = new Int32Array(Math.max(stop - start, 2 * chainRefs.length));
  refInputs(chainRefs, 0, decoder.refsInto(start, stop, chainRefs, 0), bodies, metas, i);
  if (key >= 0) {
    shortKnown[key] = 1;
    shortBodies[key] = bodies[i]!;
    shortMetas[key] = metas[i]!;
  }
}

/** The body's score inputs of two forms' refs in one card as those of their refs together. */
export function mergeBodies(a: number, b: number): number {
  const title = Math.max((a >>> TITLE_SHIFT) & 7, (b >>> TITLE_SHIFT) & 7);
  return body((a & MAX_TF10) + (b & MAX_TF10), title, ((a >>> COUNT_SHIFT) & MANY_COUNT) + ((b >>> COUNT_SHIFT) & MANY_COUNT), Math.max(a >>> WORD_SHIFT, b >>> WORD_SHIFT));
}

/** The metas' score inputs of two forms' refs in one card as those of their refs together. */
export function mergeMetas(a: number, b: number): number {
  const a1 = a & INPUT_MASK;
  const a2 = (a >>> INPUT_BITS) & INPUT_MASK;
  const b1 = b & INPUT_MASK;
  const b2 = (b >>> INPUT_BITS) & INPUT_MASK;
  const best = Math.max(a1, b1);
  const second = a1 >= b1 ? Math.max(a2, b1) : Math.max(b2, a1);
  const anchor = Math.max((a >>> ANCHOR_SHIFT) & INPUT_MASK, (b >>> ANCHOR_SHIFT) & INPUT_MASK);
  const cross = Math.min(MAX_CROSS, (a >>> CROSS_SHIFT) + (b >>> CROSS_SHIFT));
  return (best | (second << INPUT_BITS) | (anchor << ANCHOR_SHIFT) | ((a | b) & OWN_BIT) | (cross << CROSS_SHIFT)) >>> 0;
}

/**
 * What bounds a word's part in a phrase within one card, from its score
 * inputs: how many of its word occurrences have a position (a phrase
 * matches no more often than that; 0xffff: any number), the heaviest word
 * type's weight among them (CODE_WEIGHT) and its heaviest meta (CODE_META,
 * 0 without metas), packed as count << 16 | word weight << 8 | meta weight
 * (phraseWordBound).
 */
export function phraseShape(body: number, metas: number): number {
  const counted = (body >>> COUNT_SHIFT) & MANY_COUNT;
  const count = counted === MANY_COUNT ? 0xffff : counted;
  const meta = Math.max(metas & INPUT_MASK, (metas >>> ANCHOR_SHIFT) & INPUT_MASK);
  return ((count << 16) | ((body >>> WORD_SHIFT) << 8) | meta) >>> 0;
}

/**
 * A word's score from its score inputs in one card (refInputs): `idf`
 * × fieldScore of the body's term frequency, with the card's length `norm`,
 * and of the metas' weight: the best meta occurrence, the second best ÷
 * SECOND_DIVISOR, and the anchor texts. Anchor texts are a field of their
 * own rather than competing with the card's own metas: the best anchor's
 * weight, saturating with their number as BM25's tf does (k1 + 1 times
 * the best at most), since many sites calling a card by the word say more
 * than one. The indexer attaches a text once per site, but a site that
 * cross-links densely (every mention of a function a link to it) gives a
 * card many texts with the word: all the card's own site's count as one,
 * so such a site's cards do not outrank another's for their links alone.
 * Never below phraseWordScore of any one of its meta occurrences and of
 * the term frequency of any of its word occurrences (phrases rely on it):
 * fieldScore rises with both.
 */
export function inputScore(body: number, metas: number, norm: number, idf: number, parts?: OccurrenceParts): number {
  const anchors = (metas & OWN_BIT ? 1 : 0) + (metas >>> CROSS_SHIFT);
  const anchorScore = anchors === 0 ? 0 : (((metas >>> ANCHOR_SHIFT) & INPUT_MASK) * anchors * (BM25_K1 + 1)) / (anchors + BM25_K1);
  const metaScore = (metas & INPUT_MASK) + ((metas >>> INPUT_BITS) & INPUT_MASK) / SECOND_DIVISOR;
  const tf = (body & MAX_TF10) / WORD_WEIGHTS[0];
  const bm25f = fieldScore(tf, metaScore + anchorScore, norm);
  if (parts !== undefined) Object.assign(parts, { tf, bm25f, metas: metaScore, anchors: anchorScore });
  return idf * bm25f;
}

const ONE_BODY = new Uint32Array(1);
const ONE_META = new Uint32Array(1);

/** A word's score from its occurrences in one card, refs[from..to): inputScore of their inputs. */
export function occurrenceScore(refs: Int32Array, from: number, to: number, norm: number, idf: number, parts?: OccurrenceParts): number {
  refInputs(refs, from, to, ONE_BODY, ONE_META, 0);
  return inputScore(ONE_BODY[0]!, ONE_META[0]!, norm, idf, parts);
}

/** The parts of occurrenceScore before the IDF (explain.ts): the body's term frequency, the metas' weight (best + second ÷ SECOND_DIVISOR), the anchor texts', and fieldScore of them. */
export interface OccurrenceParts {
  tf: number;
  bm25f: number;
  metas: number;
  anchors: number;
}

/**
 * BM25F's saturated term frequency of a word, ÷ its IDF: `tf` the body's
 * (occurrences by word type), normalised by the card's length norm `norm`
 * (k1 · (1 − b + b · length ÷ average)), plus the metas' weight `metas`
 * × META_TF, then SCORE_WEIGHT · x · (k1 + 1) ÷ (x + k1). Rises with `tf`
 * and `metas`, stays below SCORE_CEILING.
 */
export function fieldScore(tf: number, metas: number, norm: number): number {
  const x = (tf * BM25_K1) / norm + META_TF * metas;
  return x === 0 ? 0 : (SCORE_WEIGHT * x * (BM25_K1 + 1)) / (x + BM25_K1);
}

/**
 * What a phrase adds for one of its words: × the word's idf, fieldScore of
 * its term frequency in the phrase's occurrences in the body (`tf`,
 * CODE_TF) and of its best meta occurrence in the phrase (`meta`,
 * CODE_META). At most occurrenceScore of the word in the card, which the
 * phrase's bound counts.
 */
export function phraseWordScore(meta: number, tf: number, norm: number, idf: number): number {
  return idf * fieldScore(tf, meta, norm);
}

/**
 * At least what a word of `shape` (phraseShape) adds to a phrase in a card
 * where the phrase matches at most `matches` times in the body, and in the
 * metas only if `metas` (every word has one): phraseWordScore of its
 * heaviest meta and of `matches` occurrences of its heaviest word type,
 * never more than its `score` in the card, as PhraseMatch's score caps it.
 * The term frequency is raised by a hair so that rounding in the sum it
 * stands for cannot put the score above it.
 */
export function phraseWordBound(shape: number, matches: number, metas: boolean, norm: number, idf: number, score: number): number {
  const tf = ((matches * ((shape >>> 8) & 0xff)) / WORD_WEIGHTS[0]) * (1 + 1e-9);
  return Math.min(score, phraseWordScore(metas ? shape & 0xff : 0, tf, norm, idf));
}

/**
 * The first index i in [from, to) with list[i] ≥ target, or `to`, in an
 * ascending list: galloping from `from`, then a binary search, so a walk
 * through ascending targets costs the log of each step, not of the whole list.
 */
export function seek(list: Uint32Array | Int32Array, from: number, to: number, target: number): number {
  if (from >= to || list[from]! >= target) return from;
  let low = from;
  let high = from + 1;
  let step = 1;
  while (high < to && list[high]! < target) {
    low = high;
    step <<= 1;
    high = low + step;
  }
  if (high > to) high = to;
  // list[low] < target; the answer is in (low, high].
  while (low + 1 < high) {
    const mid = (low + high) >>> 1;
    if (list[mid]! < target) low = mid;
    else high = mid;
  }
  return high;
}

/** The first index in [from, to) of packed refs (ascending) whose line is ≥ `line`, or `to`. */
export function lineAt(refs: Int32Array, from: number, to: number, line: number): number {
  return seek(refs, from, to, line << PACKED_CODE_BITS);
}

/**
 * The smallest distance between the lines of packed refs `a[aFrom..aTo)`
 * and `b[bFrom..bTo)` (each ascending); refs behind the edge have no
 * position and do not count. Infinity when either has none. Lists of like
 * length are merged; otherwise each line of the shorter is looked up in the
 * longer, so a rare word next to a frequent one costs the rare word's
 * occurrences.
 */
export function minGap(a: Int32Array, aFrom: number, aTo: number, b: Int32Array, bFrom: number, bTo: number): number {
  if (aTo - aFrom > bTo - bFrom) return minGap(b, bFrom, bTo, a, aFrom, aTo);
  if ((aTo - aFrom) * LOOKUP_RATIO < bTo - bFrom) return gapByLookup(a, aFrom, aTo, b, bFrom, bTo);
  let best = Infinity;
  let i = aFrom;
  let j = bFrom;
  while (i < aTo && j < bTo && best > 0) {
    const x = a[i]! >> PACKED_CODE_BITS;
    const y = b[j]! >> PACKED_CODE_BITS;
    if (x === WORD_EDGE) i++;
    else if (y === WORD_EDGE) j++;
    else {
      const d = x - y;
      if (d < best && -d < best) best = d < 0 ? -d : d;
      if (d < 0) i++;
      else j++;
    }
  }
  return best;
}

/** Above this ratio of lengths minGap looks lines up rather than merging. */
const LOOKUP_RATIO = 8;

function gapByLookup(a: Int32Array, aFrom: number, aTo: number, b: Int32Array, bFrom: number, bTo: number): number {
  let best = Infinity;
  let j = bFrom;
  for (let i = aFrom; i < aTo && best > 0; i++) {
    const x = a[i]! >> PACKED_CODE_BITS;
    if (x === WORD_EDGE) continue;
    j = lineAt(b, j, bTo, x);
    // The nearest lines of b: the first at or after x, and the last before it (edge refs skipped).
    let after = j;
    while (after < bTo && b[after]! >> PACKED_CODE_BITS === WORD_EDGE) after++;
    if (after < bTo) best = Math.min(best, (b[after]! >> PACKED_CODE_BITS) - x);
    let before = j - 1;
    while (before >= bFrom && b[before]! >> PACKED_CODE_BITS === WORD_EDGE) before--;
    if (before >= bFrom) best = Math.min(best, x - (b[before]! >> PACKED_CODE_BITS));
  }
  return best;
}

/** The proximity bonus for two terms `gap` positions apart. */
export function proximity(gap: number): number {
  return gap >= PROXIMITY_SPAN ? 0 : (PROXIMITY_BONUS * (PROXIMITY_SPAN - gap)) / (PROXIMITY_SPAN - 1);
}

export interface Scored {
  cardId: number;
  score: number;
}

/** The best `k` of the cards pushed, through a min-heap of k in typed arrays (nothing allocated per card). */
export class TopK {
  private readonly cards: Uint32Array;
  private readonly scores: Float64Array;
  private size = 0;

  constructor(private readonly k: number) {
    this.cards = new Uint32Array(k);
    this.scores = new Float64Array(k);
  }

  /** Whether slot `a` ranks below slot `b` (the heap keeps the worst on top). */
  private worse(a: number, b: number): boolean {
    const { scores, cards } = this;
    return scores[a]! < scores[b]! || (scores[a] === scores[b] && cards[a]! > cards[b]!);
  }

  private swap(a: number, b: number): void {
    const { scores, cards } = this;
    const card = cards[a]!;
    const score = scores[a]!;
    cards[a] = cards[b]!;
    scores[a] = scores[b]!;
    cards[b] = card;
    scores[b] = score;
  }

  push(cardId: number, score: number): void {
    const { k, cards, scores } = this;
    if (this.size < k) {
      let i = this.size++;
      cards[i] = cardId;
      scores[i] = score;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.worse(i, parent)) break;
        this.swap(i, parent);
        i = parent;
      }
      return;
    }
    if (k === 0 || score < scores[0]! || (score === scores[0] && cardId > cards[0]!)) return;
    cards[0] = cardId;
    scores[0] = score;
    this.sink(0);
  }

  /** The score a card must reach to enter: the worst kept once k are, −Infinity before. */
  floor(): number {
    return this.size < this.k ? -Infinity : this.scores[0]!;
  }

  /**
   * The cards kept, best first: higher score, then lower card id. Taken off
   * the heap worst first (a sort with a comparator cost more than the
   * whole heap did), which leaves the heap empty.
   */
  best(): Scored[] {
    const { cards, scores } = this;
    const out = new Array<Scored>(this.size);
    while (this.size > 0) {
      out[this.size - 1] = { cardId: cards[0]!, score: scores[0]! };
      this.size -= 1;
      this.swap(0, this.size);
      this.sink(0);
    }
    return out;
  }

  /** Moves slot i down until neither child ranks below it. */
  private sink(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < this.size && this.worse(l, worst)) worst = l;
      if (r < this.size && this.worse(r, worst)) worst = r;
      if (worst === i) return;
      this.swap(i, worst);
      i = worst;
    }
  }
}

/**
 * Site collapsing: ranked results (best first) into pages of `pageSize`
 * where one site has at most SITE_MAX results while other sites have
 * results close enough behind: a site's next result waits for a later page
 * only when the best result left of another site (under SITE_MAX on the
 * page) scores at least COLLAPSE_RATIO of it. A site far ahead of the rest
 * keeps its results on top, and an index of one site still shows full pages.
 */
export function collapse<T>(ranked: readonly T[], site: (item: T) => number, score: (item: T) => number, pageSize: number): T[] {
  const order: T[] = [];
  let left = [...ranked];
  while (left.length > 0) {
    const onPage = new Map<number, number>();
    const page: T[] = [];
    const later: T[] = [];
    // The best result after `from` of a site under the cap: the first, as they are ranked.
    const rival = (from: number): T | undefined => {
      for (let j = from; j < left.length; j++) if ((onPage.get(site(left[j]!)) ?? 0) < SITE_MAX) return left[j];
      return undefined;
    };
    for (let i = 0; i < left.length; i++) {
      const item = left[i]!;
      const n = onPage.get(site(item)) ?? 0;
      const other = n < SITE_MAX ? undefined : rival(i + 1);
      if (page.length < pageSize && (n < SITE_MAX || (other !== undefined && score(other) < COLLAPSE_RATIO * score(item)))) {
        page.push(item);
        onPage.set(site(item), n + 1);
      } else later.push(item);
    }
    while (page.length < pageSize && later.length > 0) page.push(later.shift()!);
    order.push(...page);
    left = later;
  }
  return order;
}

/** Runs this short are sorted by insertion: a subarray per card to sort would cost more than the sorting. */
const INSERTION_SORT = 48;

/** Sorts keys[from..to) in place: a card's keys from a few lists, each run already sorted. */
export function sortKeys(keys: Int32Array, from: number, to: number): void {
  if (to - from > INSERTION_SORT) {
    keys.subarray(from, to).sort();
    return;
  }
  for (let i = from + 1; i < to; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= from && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
}
