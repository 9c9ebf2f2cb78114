/**
 * A title as the suggest stage keeps it (indexer/suggestions.ts titleForms):
 * the key its words' plain forms, the text a query that reads as the
 * title (punctuation inside a term kept, syntax never), CJK joined back,
 * and the titles that suggest nothing. Words ranked by the cards holding
 * them, not by occurrences, on an index built from a real crawl: a word
 * said once in each of three cards before one said twenty times in each
 * of two, a word of one card only when nothing else starts so; and every
 * word's count of cards as WordIndex has them, whether the vocabulary and
 * the runs stayed in memory or were spilled (a card's joined chains once).
 * The best of a list by rank as the stage picks them without a sort of
 * objects: what a stable sort by rank keeps, ties in the tie order.
 */

import assert from 'node:assert/strict';
import { join } from 'node:path';
import test from 'node:test';
import { WordIndexReader } from '../../common/index/chains.js';
import { Lexicon, wordClass } from '../../common/index/lexicon.js';
import { rankCards, Suggestions, wordRank } from '../../common/index/suggestions.js';
import { bestByRank, titleForms } from '../../indexer/suggestions.js';
import { completions } from '../../searcher/completions.js';
import { parseQuery } from '../../searcher/query.js';
import { scratchDir } from '../helpers/paths.js';
import { buildCli, crawlSite } from './site.js';

test('a title as a key of plain forms and a text that parses as the words of the title', () => {
  const cases: Array<[string, string, string]> = [
    ['Python 3.11.2 Documentation', 'python 3 11 2 documentation', 'python 3.11.2 documentation'],
    ['Crème Brûlée', 'creme brulee', 'crème brûlée'],
    ['TCP/IP (networking) — a "guide"', 'tcp ip networking a guide', 'tcp/ip networking a guide'],
    ['C++: a guide', 'c a guide', 'c a guide'],
    ['title:trick *star* =x', 'title trick star x', 'title trick star x'],
    ['東京ノート', '東京 京ノ ー ト', '東京ノート'],
    ['Built-in Exceptions', 'built in exceptions', 'built-in exceptions'],
  ];
  for (const [title, key, text] of cases) {
    assert.deepEqual(titleForms(title), { key, text }, title);
    assert.doesNotThrow(() => parseQuery(text), title);
  }
});

test('titles that suggest nothing: empty, punctuation, digits only, over 120 bytes of key', () => {
  for (const title of ['', '  — | ', '2024', '1.2.3', 'word '.repeat(25)]) assert.equal(titleForms(title), undefined, JSON.stringify(title));
  assert.ok(titleForms('word '.repeat(24)) !== undefined);
  // A text past the file's 255 bytes while its key is short (bold letters are four bytes, their plain forms one): left out, not a failed build.
  assert.equal(titleForms('\u{1d41b}\u{1d41e}\u{1d42c}\u{1d42d} '.repeat(16)), undefined);
  assert.deepEqual(titleForms('\u{1d41b}\u{1d41e}\u{1d42c}\u{1d42d} '.repeat(12))?.key, 'best '.repeat(12).trim());
});

test('the best by rank are those a stable sort by rank keeps, ties in the tie order, with typed arrays', () => {
  let seed = 12345;
  const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  for (const [count, max, distinct] of [[50, 10, 3], [1000, 333, 7], [1000, 1000, 5], [1000, 999, 1], [200, 1, 2], [300, 150, 1000]] as const) {
    const ranks = Uint32Array.from({ length: count }, () => next() % distinct);
    // The tie order: a permutation, as a title's first card is.
    const order = Array.from({ length: count }, (_, n) => n).sort(() => (next() & 1 ? 1 : -1));
    const tie = (n: number): number => order[n]!;
    const byTie = Array.from({ length: count }, (_, n) => n).sort((a, b) => tie(a) - tie(b));
    const expected = new Set(byTie.sort((a, b) => ranks[b]! - ranks[a]!).slice(0, max));
    const kept = bestByRank(ranks, tie, max);
    const got = new Set(Array.from({ length: count }, (_, n) => n).filter(kept));
    assert.deepEqual(got, expected, `${count} ranks of ${distinct} values, the best ${max}`);
  }
});

/** A page of its own words (so no two are duplicates) and `words`. */
function page(name: string, words: string): string {
  const own = Array.from({ length: 30 }, (_, k) => `${name}own${k}`).join(' ');
  return `<html><head><title>Page ${name}</title></head><body><p>${own}</p><p>${words}</p></body></html>`;
}

const EXTRA: Record<string, string> = {
  '/mono': page('mono', 'quillmono '.repeat(60)),
  '/duo-a': page('duoa', 'quillduo '.repeat(20)),
  '/duo-b': page('duob', 'quillduo '.repeat(20)),
  '/trio-a': page('trioa', 'quilltrio'),
  '/trio-b': page('triob', 'quilltrio'),
  '/trio-c': page('trioc', 'quilltrio'),
};

/** Per plain form, the best wordRank of its normal words with chains, the cards counted from WordIndex chain by chain. */
function bruteForceRanks(dir: string): Map<string, number> {
  const lexicon = Lexicon.open(join(dir, 'Lexicon'));
  const wordIndex = WordIndexReader.open(join(dir, 'WordIndex'));
  const best = new Map<string, number>();
  try {
    for (let i = 0; i < lexicon.count; i++) {
      const entry = lexicon.entry(i);
      if (entry.chainSize === 0 || wordClass(entry.id) !== 'normal') continue;
      const cards = new Set(wordIndex.chains(entry.id, entry.refPos).map((chain) => chain.cardId));
      const plain = lexicon.plain(i);
      best.set(plain, Math.max(wordRank(cards.size, entry.frequency), best.get(plain) ?? 0));
    }
  } finally {
    wordIndex.close();
  }
  return best;
}

test('words ranked by the cards holding them, counted as WordIndex has them in memory and spilled', async (t) => {
  const state = scratchDir(t);
  await crawlSite(state, { address: '127.0.5.41', bulk: 3, extra: EXTRA });
  const small = await buildCli(state, ['indexer.memory_budget=64KiB', 'indexer.workers=1']);
  assert.ok(small.report.spilled >= 2 && small.report.vocabularySegments >= 2, JSON.stringify(small.report));
  const large = await buildCli(state, ['indexer.memory_budget=1GiB']);
  assert.equal(large.report.vocabularySegments, 0);
  for (const { dir } of [small.report, large.report]) {
    const suggestions = Suggestions.open(join(dir, 'Suggestions'));
    const { words } = suggestions;
    const expected = bruteForceRanks(dir);
    let many = 0;
    for (let n = 0; n < words.count; n++) {
      assert.equal(words.ranks[n], expected.get(words.key(n)), `${dir}: ${words.key(n)}`);
      if (rankCards(words.ranks[n]!) > 1) many += 1;
    }
    assert.ok(words.count > 1000 && many > 100, `${words.count} words, ${many} in more than one card`);

    const [from] = words.range('quill');
    assert.deepEqual([0, 1, 2].map((k) => [words.key(from + k), rankCards(words.ranks[from + k]!)]), [['quillduo', 2], ['quillmono', 1], ['quilltrio', 3]]);
    const typed = (q: string): string[] => completions(suggestions, { q, limit: 5 }, () => false).filter((c) => c.kind === 'word').map((c) => c.text);
    // Occurrences would put quillmono (60) and quillduo (40) first; cards put quilltrio (3) first, quillmono (1 card) only alone.
    assert.deepEqual(typed('quill'), ['quilltrio', 'quillduo']);
    assert.deepEqual(typed('quillm'), ['quillmono']);
  }
});
