/**
 * The Czech light stemmer (common/language/czech-stem.ts): the cases of a
 * noun or an adjective meet in one stem, the alternating consonants at the
 * end of a stem fold, and short words are left alone.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import { czechStem } from '../../../common/language/czech-stem.js';
import { stemOf } from '../../../common/language/stem.js';

const same = (words: string[]) => {
  const stems = new Set(words.map(czechStem));
  assert.equal(stems.size, 1, `${words.join(', ')} → ${[...stems].join(', ')}`);
  return [...stems][0];
};

test('the cases of a noun meet in one stem, the last consonant folded', () => {
  assert.equal(same(['koláč', 'koláče', 'koláčů', 'koláčem', 'koláči']), 'kolák');
  assert.equal(same(['nástroj', 'nástroje', 'nástrojů', 'nástrojem']), 'nástroj');
  assert.equal(same(['režim', 'režimy', 'režimech']), 'režim');
  assert.equal(same(['mřížka', 'mřížku', 'mřížky']), 'mřížk');
  // The mobile e goes whether or not a case has it ("domeček", "domečku"): "palet" too.
  assert.equal(same(['paleta', 'palety', 'paletou']), 'palt');
});

test('the cases of an adjective meet too, its -ov- taken as a possessive', () => {
  assert.equal(same(['celoobrazovkový', 'celoobrazovkového', 'celoobrazovkovém', 'celoobrazovkové']), 'celoobrazovk');
});

test('short words keep their endings; a word is never cut to nothing', () => {
  assert.equal(czechStem('ano'), 'ano');
  assert.equal(czechStem('dům'), 'dom');
  assert.equal(czechStem('a'), 'a');
});

test('stemOf stems the exact form and keeps the stem plain; a query typed without accents meets it when stemmed as typed', () => {
  assert.equal(stemOf('koláčů', 'cs'), 'kolak');
  assert.equal(stemOf('kolacu', 'cs'), 'kolak');
  assert.equal(stemOf('bridges', 'en'), 'bridg');
  assert.equal(stemOf('v2', 'cs'), 'v2');
});
