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
 * Bounds: at most MAX_WORDS words and MAX_TITLES titles, the best by rank
 * (of equal ranks, the word first in Lexicon order, the title whose first
 * card comes first), whatever the memory budget: the output is the same
 * under any budget. Memory is bounded instead: the Lexicon's records walked,
 * not the Lexicon opened; per word and per card a few typed-array slots (a
 * plain form's best rank and shown variant; a title's rank and first
 * card), and the rest in external sorts (common/external-sort.ts)
 * within the stage's share, spilled under `work`: the titles' candidates
 * sorted by key (then card order) and grouped, the groups kept in a second
 * sort until the best are known, the kept words sorted by key. Lines are
 * byte strings: the key's UTF-8, NUL (below every byte of a key, which holds
 * letters, digits, marks and spaces), fixed-width hex fields, then the text.
 */

import { mkdirSync, rmSync } from 'node:fs';
import { CARD_FLAG } from '../common/index/cardinfo.js';
import { CardsReader } from '../common/index/cards.js';
import { ExternalSorter } from '../common/external-sort.js';
import { readIndexFile } from '../common/index/file.js';
import { LEXICON_FORMAT, lexiconRecords, wordClass } from '../common/index/lexicon.js';
import { MAX_KEY_BYTES, wordRank, writeSuggestions, type SuggestionEntry } from '../common/index/suggestions.js';
import { plainForm, words } from '../common/words.js';
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
 * The sorts hold at most `memory` bytes of lines (two at a time, half
 * each) and spill under `work`, a directory made and removed here.
 */
export function buildSuggestions(files: { lexicon: string; cards: string; out: string; work: string }, facts: Pick<CardFacts, 'flags' | 'weights'>, cardCounts: Uint32Array, memory: number): SuggestionCounts {
  mkdirSync(files.work, { recursive: true });
  const sorter = (): ExternalSorter => new ExternalSorter({ memoryBudget: Math.max(1, Math.floor(memory / 2)), tmpDir: files.work });
  try {
    // Titles first: the Lexicon is opened once they are grouped, and let go before the file is written.
    const titles = groupedTitles(files.cards, facts, sorter);
    const wordSort = wordLines(files.lexicon, cardCounts, sorter());
    return writeSuggestions(files.out, wordEntries(wordSort), titleEntries(titles));
  } finally {
    rmSync(files.work, { recursive: true, force: true });
  }
}

/** A string's UTF-8 as a byte string (one character per byte), what the sorts order; and back. */
const bytes = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');
const text = (byteString: string): string => Buffer.from(byteString, 'latin1').toString('utf8');
const hex = (value: number, width: number): string => value.toString(16).padStart(width, '0');

/**
 * Which of `ranks` are the best `max` by rank: those above the max-th
 * highest rank, and of those equal to it the first by `tie`, the order a
 * stable sort by rank keeps; `tie` gives whole numbers below 2^32 (an
 * index, a card's place). Typed arrays only: a million candidates.
 */
export function bestByRank(ranks: Uint32Array, tie: (n: number) => number, max: number): (n: number) => boolean {
  if (ranks.length <= max) return () => true;
  const sorted = ranks.slice().sort();
  const floor = sorted[ranks.length - max]!;
  let above = 0;
  for (let i = sorted.length - 1; i >= 0 && sorted[i]! > floor; i--) above++;
  const ties = new Uint32Array(sorted.length - above - sorted.indexOf(floor));
  let t = 0;
  for (let n = 0; n < ranks.length; n++) if (ranks[n] === floor) ties[t++] = tie(n);
  ties.sort();
  const last = ties[max - above - 1]!;
  return (n) => ranks[n]! > floor || (ranks[n] === floor && tie(n) <= last);
}

/**
 * The kept words in a sort, as lines `key NUL rank(8 hex) text`: one walk
 * over the Lexicon's records (not the Lexicon opened: its lookup tables are
 * not needed) gives each plain form's run (accent variants are adjacent in
 * lexicon order) its best rank and where the variant shown is in the body.
 */
function wordLines(file: string, cardCounts: Uint32Array, sorter: ExternalSorter): ExternalSorter {
  const whole = readIndexFile(file, LEXICON_FORMAT);
  const count = whole.fields[0]!;
  if (cardCounts.length !== count) throw new RangeError(`card counts of ${cardCounts.length} words for a Lexicon of ${count}`);
  const runRank = new Uint32Array(count);
  const runShown = new Uint32Array(count);
  let runs = 0;
  let runPlain: string | undefined;
  for (const { n, id, chainSize, frequency, word, wordAt, key } of lexiconRecords(whole)) {
    if (chainSize === 0 || wordClass(id) !== 'normal') continue;
    // The exact form can be longer than the plain one (𝐛𝐨𝐥𝐝 letters are four bytes each, their plain forms one).
    if (DIGITS.test(key.plain) || Buffer.byteLength(key.plain) > MAX_KEY_BYTES || Buffer.byteLength(word) > MAX_KEY_BYTES) continue;
    const rank = wordRank(cardCounts[n]!, frequency);
    if (key.plain !== runPlain) {
      runPlain = key.plain;
      runRank[runs] = rank;
      runShown[runs++] = wordAt;
    } else if (rank > runRank[runs - 1]!) {
      runRank[runs - 1] = rank;
      runShown[runs - 1] = wordAt;
    }
  }
  const kept = bestByRank(runRank.subarray(0, runs), (n) => n, MAX_WORDS);
  const { body } = whole;
  for (let n = 0; n < runs; n++) {
    if (!kept(n)) continue;
    const at = runShown[n]!;
    const word = body.toString('utf8', at + 1, at + 1 + body[at]!);
    sorter.add(`${bytes(plainForm(word))}\0${hex(runRank[n]!, 8)}${bytes(word)}`);
  }
  return sorter;
}

function* wordEntries(sorter: ExternalSorter): Generator<SuggestionEntry> {
  for (const line of sorter.sorted()) {
    const nul = line.indexOf('\0');
    yield { key: text(line.slice(0, nul)), rank: parseInt(line.slice(nul + 1, nul + 9), 16), text: text(line.slice(nul + 9)) };
  }
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

/**
 * The titles' records in key order, in a sort as lines `key NUL rank(8 hex)
 * card(8 hex) text`, and which to keep. The candidates are sorted as
 * `key NUL position(8 hex) weight(2 hex) card(8 hex) text`, position the
 * card's in the Cards file: a key's cards come in file order, so a record
 * gets the first card's text and the heaviest card (the first of equals).
 */
function groupedTitles(cardsFile: string, facts: Pick<CardFacts, 'flags' | 'weights'>, sorter: () => ExternalSorter): { sort: ExternalSorter; kept: (n: number) => boolean } {
  const candidates = sorter();
  const cards = CardsReader.open(cardsFile);
  try {
    let position = 0;
    for (const { card } of cards) {
      const at = position++;
      if (card.title === undefined || card.type.startsWith('image/')) continue;
      if ((facts.flags[card.cardId]! & (CARD_FLAG.dup | CARD_FLAG.empty)) !== 0) continue;
      const forms = titleForms(card.title);
      if (forms === undefined) continue;
      candidates.add(`${bytes(forms.key)}\0${hex(at, 8)}${hex(facts.weights[card.cardId]!, 2)}${hex(card.cardId, 8)}${bytes(forms.text)}`);
    }
  } finally {
    cards.close();
  }
  // A record per key: at most a record per card.
  const ranks = new Uint32Array(facts.flags.length);
  const firstCard = new Uint32Array(facts.flags.length);
  const groups = sorter();
  let records = 0;
  let key: string | undefined;
  let weight = 0;
  let shared = 0;
  let heaviest = 0;
  let shown = '';
  const close = (): void => {
    if (key === undefined) return;
    const rank = titleRank(weight, shared);
    ranks[records++] = rank;
    groups.add(`${key}\0${hex(rank, 8)}${hex(heaviest, 8)}${shown}`);
  };
  for (const line of candidates.sorted()) {
    const nul = line.indexOf('\0');
    const lineKey = line.slice(0, nul);
    const lineWeight = parseInt(line.slice(nul + 9, nul + 11), 16);
    if (lineKey !== key) {
      close();
      key = lineKey;
      firstCard[records] = parseInt(line.slice(nul + 1, nul + 9), 16);
      weight = lineWeight;
      shared = 0;
      heaviest = parseInt(line.slice(nul + 11, nul + 19), 16);
      shown = line.slice(nul + 19);
    } else if (lineWeight > weight) {
      weight = lineWeight;
      heaviest = parseInt(line.slice(nul + 11, nul + 19), 16);
    }
    shared += 1;
  }
  close();
  return { sort: groups, kept: bestByRank(ranks.subarray(0, records), (n) => firstCard[n]!, MAX_TITLES) };
}

function* titleEntries(titles: { sort: ExternalSorter; kept: (n: number) => boolean }): Generator<SuggestionEntry> {
  let n = 0;
  for (const line of titles.sort.sorted()) {
    if (!titles.kept(n++)) continue;
    const nul = line.indexOf('\0');
    yield { key: text(line.slice(0, nul)), rank: parseInt(line.slice(nul + 1, nul + 9), 16), card: parseInt(line.slice(nul + 9, nul + 17), 16), text: text(line.slice(nul + 17)) };
  }
}

function titleRank(weight: number, shared: number): number {
  return weight * (MAX_SHARED + 1) + Math.min(shared, MAX_SHARED);
}
