/**
 * Cutting text into words (common/words.ts), the one rule the indexer and the
 * query parser share: separators, numbers, CJK pairs, exact and plain forms,
 * the garbage limit; and as properties, that positions count up, offsets
 * point at the word, and the plain form is stable.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { MAX_WORD_CHARS, exactForm, hasAccents, plainForm, words } from '../../common/words.js';

const cut = (text: string) => [...words(text)].map((w) => [w.exact, w.plain, w.kind, w.position]);

test('Latin text: separators split, case folds, accents are kept in exact and dropped in plain', () => {
  assert.deepEqual(cut('Hello, Wörld! e-mail node.js'), [
    ['hello', 'hello', 'word', 0],
    ['wörld', 'world', 'word', 1],
    ['e', 'e', 'word', 2],
    ['mail', 'mail', 'word', 3],
    ['node', 'node', 'word', 4],
    ['js', 'js', 'word', 5],
  ]);
  assert.deepEqual(cut('Straße ÆON Øre Łódź'), [
    ['straße', 'strasse', 'word', 0],
    ['æon', 'aeon', 'word', 1],
    ['øre', 'ore', 'word', 2],
    ['łódź', 'lodz', 'word', 3],
  ]);
  assert.deepEqual(cut('ﬁle ＷＥＢ café CAFÉ'), [
    ['ﬁle', 'file', 'word', 0],
    ['ｗｅｂ', 'web', 'word', 1],
    ['café', 'cafe', 'word', 2],
    ['café', 'cafe', 'word', 3],
  ]);
  // Decomposed input has the same forms as composed input.
  assert.deepEqual(cut('cafe\u0301'), [['café', 'cafe', 'word', 0]]);
});

test('numbers are words of their own kind; digits and letters together are a word', () => {
  assert.deepEqual(cut('3.14 x86 2024'), [
    ['3', '3', 'number', 0],
    ['14', '14', 'number', 1],
    ['x86', 'x86', 'word', 2],
    ['2024', '2024', 'number', 3],
  ]);
});

test('CJK runs become overlapping pairs, a lone character a word; Latin beside them is cut as usual', () => {
  assert.deepEqual(cut('東京都'), [
    ['東京', '東京', 'cjk', 0],
    ['京都', '京都', 'cjk', 1],
  ]);
  assert.deepEqual(cut('iPhone用 の'), [
    ['iphone', 'iphone', 'word', 0],
    ['用', '用', 'cjk', 1],
    ['の', 'の', 'cjk', 2],
  ]);
  // Hangul has spaces between words: cut like Latin.
  assert.deepEqual(cut('한국어 검색'), [
    ['한국어', '한국어', 'word', 0],
    ['검색', '검색', 'word', 1],
  ]);
});

test('a word longer than MAX_WORD_CHARS is skipped but keeps its position', () => {
  const long = 'a'.repeat(MAX_WORD_CHARS + 1);
  assert.deepEqual(cut(`before ${long} after ${'b'.repeat(MAX_WORD_CHARS)}`), [
    ['before', 'before', 'word', 0],
    ['after', 'after', 'word', 2],
    ['b'.repeat(MAX_WORD_CHARS), 'b'.repeat(MAX_WORD_CHARS), 'word', 3],
  ]);
});

test('hasAccents tells accented words from plain ones', () => {
  const [accented, plain] = [...words('résumé resume')];
  assert.equal(hasAccents(accented!), true);
  assert.equal(hasAccents(plain!), false);
});

test('properties: positions count up, offsets point at the word, forms are stable', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), (text) => {
      let last = -1;
      for (const w of words(text)) {
        assert.ok(w.position > last || (w.kind === 'cjk' && w.position === last + 1));
        last = w.position;
        assert.equal(exactForm(text.slice(w.start, w.end)), w.exact);
        assert.equal(plainForm(w.plain), w.plain);
        assert.equal(plainForm(w.exact), w.plain);
        assert.ok(w.plain.length > 0);
      }
    }),
    { numRuns: 500 },
  );
});
