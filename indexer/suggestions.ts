/**
 * The suggest stage: the Suggestions file (common/index/suggestions.ts)
 * from the Lexicon just written, the Cards' titles and the cards' weights
 * and flags (docs/indexer.md "Build", docs/search.md "Suggestions").
 *
 * Words: the Lexicon's normal words with chains, one record per plain form,
 * ranked by the cards holding the word (counted by the WordIndex stage),
 * then by its frequency byte (common/index/suggestions.ts wordRank); accent
 * variants take their best rank and show as that variant (cards holding
 * two variants are not known, so the best, not their sum); words of digits
 * only are left out. Titles: each card's title that is
 * not a duplicate's, an empty card's or an image's, cut into words as the
 * chewer cuts text (common/words.ts), at most MAX_TITLE_BYTES of key and
 * not digits only; cards of one title make one record, ranked by the
 * heaviest card's static weight and then by how many share it.
 *
 * Bounds: at most MAX_WORDS words and MAX_TITLES titles, the best by rank;
 * while titles are gathered, past twice MAX_TITLES the lower half is
 * dropped, so the stage holds some hundred megabytes at most.
 */

import { CARD_FLAG } from '../common/index/cardinfo.js';
import { CardsReader } from '../common/index/cards.js';
import { Lexicon, wordClass } from '../common/index/lexicon.js';
import { MAX_KEY_BYTES, wordRank, writeSuggestions, type SuggestionEntry } from '../common/index/suggestions.js';
import { words } from '../common/words.js';
import type { CardFacts } from './cards.js';

export const MAX_WORDS = 1 << 20;
export const MAX_TITLES = 1 << 20;
/** Keys of titles longer than this are left out: a sentence, not what one types. */
export const MAX_TITLE_BYTES = 120;
const MAX_SHARED = 0xffff;
const DIGITS = /^[\p{N}\s]+$/u;

export interface SuggestionCounts {
  words: number;
  titles: number;
}

/**
 * Writes `out` from the Lexicon and Cards files of the version being built;
 * `cardCounts[i]`: the cards holding the Lexicon's word i (wordindex.ts).
 */
export function buildSuggestions(files: { lexicon: string; cards: string; out: string }, facts: Pick<CardFacts, 'flags' | 'weights'>, cardCounts: Uint32Array): SuggestionCounts {
  const wordList = suggestedWords(Lexicon.open(files.lexicon), cardCounts);
  const titleList = suggestedTitles(files.cards, facts);
  writeSuggestions(files.out, wordList, titleList);
  return { words: wordList.length, titles: titleList.length };
}

/** The best `max` by rank, then in key order (the file's). */
function bestInKeyOrder(entries: SuggestionEntry[], max: number): SuggestionEntry[] {
  const kept = entries.length <= max ? entries : entries.sort((a, b) => b.rank - a.rank).slice(0, max);
  const keyed = kept.map((entry) => ({ entry, bytes: Buffer.from(entry.key, 'utf8') }));
  keyed.sort((a, b) => Buffer.compare(a.bytes, b.bytes));
  return keyed.map(({ entry }) => entry);
}

function suggestedWords(lexicon: Lexicon, cardCounts: Uint32Array): SuggestionEntry[] {
  if (cardCounts.length !== lexicon.count) throw new RangeError(`card counts of ${cardCounts.length} words for a Lexicon of ${lexicon.count}`);
  const out: SuggestionEntry[] = [];
  // Accent variants are adjacent in lexicon order: one record a run.
  let run: SuggestionEntry | undefined;
  for (let i = 0; i < lexicon.count; i++) {
    if (lexicon.chainSize(i) === 0 || wordClass(lexicon.entry(i).id) !== 'normal') continue;
    const plain = lexicon.plain(i);
    // The exact form can be longer than the plain one (𝐛𝐨𝐥𝐝 letters are four bytes each, their plain forms one).
    if (DIGITS.test(plain) || Buffer.byteLength(plain) > MAX_KEY_BYTES || Buffer.byteLength(lexicon.word(i)) > MAX_KEY_BYTES) continue;
    const rank = wordRank(cardCounts[i]!, lexicon.frequencies[i]!);
    if (run === undefined || run.key !== plain) {
      run = { key: plain, text: lexicon.word(i), rank };
      out.push(run);
    } else if (rank > run.rank) {
      run.rank = rank;
      run.text = lexicon.word(i);
    }
  }
  return bestInKeyOrder(out, MAX_WORDS);
}

/** What may stay between two words of a title's text: punctuation inside a term, which the query language reads as a phrase of its words ("3.11.2", "tcp/ip"), never its syntax. */
const KEPT_BETWEEN = /^[^\s"():*=]{1,3}$/u;

/**
 * A title as a key (plain forms joined by a space) and a text (exact forms,
 * punctuation inside a term kept, other gaps one space; overlapping or
 * adjacent CJK words joined back: "東京ノート", not "東京 京ノ ノー ート"),
 * or undefined when it suggests nothing.
 */
export function titleForms(title: string): { key: string; text: string } | undefined {
  const plain: string[] = [];
  let text = '';
  let end = -1;
  for (const word of words(title)) {
    plain.push(word.plain);
    if (word.start <= end) text += word.exact.slice(end - word.start);
    else if (end < 0) text = word.exact;
    else text += (KEPT_BETWEEN.test(title.slice(end, word.start)) ? title.slice(end, word.start) : ' ') + word.exact;
    end = word.end;
  }
  const key = plain.join(' ');
  // The text is bounded too: accents, 𝐛𝐨𝐥𝐝 letters and kept punctuation make it longer than its key.
  if (key === '' || DIGITS.test(key) || Buffer.byteLength(key) > MAX_TITLE_BYTES || Buffer.byteLength(text) > MAX_KEY_BYTES) return undefined;
  return { key, text };
}

function suggestedTitles(cardsFile: string, facts: Pick<CardFacts, 'flags' | 'weights'>): SuggestionEntry[] {
  const byKey = new Map<string, { entry: SuggestionEntry; weight: number; shared: number }>();
  const cards = CardsReader.open(cardsFile);
  try {
    for (const { card } of cards) {
      if (card.title === undefined || card.type.startsWith('image/')) continue;
      if ((facts.flags[card.cardId]! & (CARD_FLAG.dup | CARD_FLAG.empty)) !== 0) continue;
      const forms = titleForms(card.title);
      if (forms === undefined) continue;
      const weight = facts.weights[card.cardId]!;
      const known = byKey.get(forms.key);
      if (known === undefined) {
        byKey.set(forms.key, { entry: { ...forms, rank: 0, card: card.cardId }, weight, shared: 1 });
        if (byKey.size > 2 * MAX_TITLES) dropLowerHalf(byKey);
        continue;
      }
      known.shared += 1;
      if (weight > known.weight) {
        known.weight = weight;
        known.entry.card = card.cardId;
      }
    }
  } finally {
    cards.close();
  }
  const out = [...byKey.values()].map(({ entry, weight, shared }) => ({ ...entry, rank: titleRank(weight, shared) }));
  return bestInKeyOrder(out, MAX_TITLES);
}

function titleRank(weight: number, shared: number): number {
  return weight * (MAX_SHARED + 1) + Math.min(shared, MAX_SHARED);
}

function dropLowerHalf(byKey: Map<string, { weight: number; shared: number }>): void {
  const ranks = [...byKey.values()].map(({ weight, shared }) => titleRank(weight, shared)).sort((a, b) => b - a);
  const floor = ranks[MAX_TITLES]!;
  for (const [key, { weight, shared }] of byKey) if (titleRank(weight, shared) <= floor) byKey.delete(key);
}
