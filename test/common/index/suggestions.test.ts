/**
 * The Suggestions file (common/index/suggestions.ts): lists read back as
 * written, prefix ranges and the best k of a range by rank against a
 * brute-force reference on random vocabularies (accents, CJK, astral
 * characters), the writer's order enforced, damage refused naming the file.
 */

import assert from 'node:assert/strict';
import { join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import { SUGGESTIONS_FORMAT, Suggestions, compareKeys, writeSuggestions, type SuggestionEntry } from '../../../common/index/suggestions.js';
import { plainForm } from '../../../common/words.js';
import { assertDamageRefused } from '../../helpers/index-files.js';
import { scratchDir } from '../../helpers/paths.js';

/** Entries of distinct keys in file order. */
function inOrder(entries: SuggestionEntry[]): SuggestionEntry[] {
  const byKey = new Map(entries.map((e) => [e.key, e]));
  return [...byKey.values()].sort((a, b) => compareKeys(a.key, b.key));
}

/** The reference: every key of the prefix, best rank first, ties in key order. */
function bruteTop(entries: SuggestionEntry[], prefix: string, k: number, accept: (e: SuggestionEntry) => boolean = () => true): string[] {
  const p = Buffer.from(prefix, 'utf8');
  return entries
    .map((e, n) => ({ e, n }))
    .filter(({ e }) => Buffer.from(e.key, 'utf8').subarray(0, p.length).equals(p) && accept(e))
    .sort((a, b) => b.e.rank - a.e.rank || a.n - b.n)
    .slice(0, k)
    .map(({ e }) => e.key);
}

const letters = fc.constantFrom('a', 'b', 'c', 'é', 'ü', 'ß', 'ж', '東', '京', '😀', 'z');
const key = fc.array(letters, { minLength: 1, maxLength: 6 }).map((chars) => chars.join(''));
const entry = fc.record({ key, rank: fc.nat({ max: 50 }), card: fc.nat({ max: 1000 }) }).map((e) => ({ ...e, text: `${e.key}!` }));

test('ranges and the best k of a prefix agree with a brute-force reference on random vocabularies', (t) => {
  const dir = scratchDir(t);
  let run = 0;
  fc.assert(
    fc.property(fc.array(entry, { maxLength: 300 }), fc.array(entry, { maxLength: 60 }), fc.array(letters, { maxLength: 3 }), fc.integer({ min: 1, max: 20 }), (w, ti, prefixChars, k) => {
      const words = inOrder(w);
      const titles = inOrder(ti);
      const file = join(dir, `S${run++}`);
      writeSuggestions(file, words, titles);
      const read = Suggestions.open(file);
      const prefix = prefixChars.join('');
      for (const [list, entries] of [
        [read.words, words],
        [read.titles, titles],
      ] as const) {
        assert.equal(list.count, entries.length);
        const [from, to] = list.range(prefix);
        const inRange = entries.filter((e) => Buffer.from(e.key).subarray(0, Buffer.byteLength(prefix)).equals(Buffer.from(prefix)));
        assert.equal(to - from, inRange.length);
        assert.deepEqual(
          list.top(from, to, k, () => true, Infinity).map((n) => list.key(n)),
          bruteTop(entries, prefix, k),
        );
        const even = (e: SuggestionEntry) => e.rank % 2 === 0;
        assert.deepEqual(
          list.top(from, to, k, (n) => list.ranks[n]! % 2 === 0, Infinity).map((n) => list.key(n)),
          bruteTop(entries, prefix, k, even),
        );
      }
      titles.forEach((e, n) => {
        assert.equal(read.titles.card(n), e.card);
        assert.equal(read.titles.text(n), e.text);
      });
    }),
    { numRuns: 150 },
  );
});

test('accent-free keys: "bru" finds "brûlée" by its plain form, the text keeps the accents', (t) => {
  const file = join(scratchDir(t), 'Suggestions');
  const words = inOrder(['brûlée', 'brown', 'brut', 'crème'].map((text, i) => ({ key: plainForm(text), text, rank: 10 * i })));
  writeSuggestions(file, words, []);
  const { words: list } = Suggestions.open(file);
  const [from, to] = list.range('bru');
  assert.deepEqual(
    list.top(from, to, 5).map((n) => list.text(n)),
    ['brut', 'brûlée'],
  );
  // The text equal to the key is not stored twice.
  const [c] = list.range('creme');
  assert.equal(list.text(c), 'crème');
  assert.equal(list.key(c), 'creme');
});

test('the best k look at no more records than told: a range filtered empty stops', (t) => {
  const file = join(scratchDir(t), 'Suggestions');
  const words = inOrder(Array.from({ length: 1000 }, (_, i) => ({ key: `w${String(i).padStart(4, '0')}`, text: `w${i}`, rank: i })));
  writeSuggestions(file, words, []);
  const { words: list } = Suggestions.open(file);
  let asked = 0;
  assert.deepEqual(
    list.top(0, list.count, 8, () => (asked++, false), 40),
    [],
  );
  assert.equal(asked, 40);
  assert.deepEqual(
    list.top(0, list.count, 3).map((n) => list.ranks[n]),
    [999, 998, 997],
  );
});

test('the writer refuses keys out of order, empty or too long, and a title without a card', (t) => {
  const file = join(scratchDir(t), 'Suggestions');
  assert.throws(() => writeSuggestions(file, [{ key: 'b', text: 'b', rank: 1 }, { key: 'a', text: 'a', rank: 1 }], []), /"a" is out of order/);
  assert.throws(() => writeSuggestions(file, [{ key: 'a', text: 'a', rank: 1 }, { key: 'a', text: 'a', rank: 2 }], []), /out of order/);
  assert.throws(() => writeSuggestions(file, [{ key: '', text: '', rank: 1 }], []), /1–255 bytes/);
  assert.throws(() => writeSuggestions(file, [{ key: 'x'.repeat(256), text: 'x', rank: 1 }], []), /1–255 bytes/);
  assert.throws(() => writeSuggestions(file, [], [{ key: 'a', text: 'a', rank: 1 }]), /card id/);
});

test('a damaged Suggestions file is refused naming the file', (t) => {
  const dir = scratchDir(t);
  const file = join(dir, 'Suggestions');
  writeSuggestions(file, inOrder([{ key: 'cafe', text: 'café', rank: 7 }, { key: 'tokyo', text: 'tokyo', rank: 3 }]), [{ key: 'creme brulee', text: 'crème brûlée', rank: 9, card: 4 }]);
  assertDamageRefused(file, join(dir, 'damaged'), SUGGESTIONS_FORMAT, (f) => Suggestions.open(f));
  // A title naming a card the version does not have: refused at load, naming the record.
  assert.equal(Suggestions.open(file, 5).titles.card(0), 4);
  assert.throws(() => Suggestions.open(file, 4), /record 0: card 4 is not among the version's 4 cards/);
});
