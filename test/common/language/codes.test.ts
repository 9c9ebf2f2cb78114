import assert from 'node:assert/strict';
import test from 'node:test';
import { LANGUAGE_COUNT, isLanguage, languageCode, languageOf, languageOfTag } from '../../../common/language/codes.js';

test('the stored numbers are a format: und is 0 and known codes keep their numbers', () => {
  assert.equal(languageCode('und'), 0);
  assert.equal(languageOf(0), 'und');
  // Spot checks pin the table: a code inserted anywhere would move these.
  assert.equal(languageCode('aa'), 1);
  assert.equal(languageCode('cs'), 28);
  assert.equal(languageCode('de'), 33);
  assert.equal(languageCode('en'), 38);
  assert.equal(languageCode('ja'), 75);
  assert.equal(languageCode('zh'), 183);
  assert.equal(languageCode('zu'), 184);
  assert.equal(LANGUAGE_COUNT, 185);
});

test('every number round-trips and fits in one byte', () => {
  for (let n = 0; n < LANGUAGE_COUNT; n++) {
    const lang = languageOf(n);
    assert.equal(languageCode(lang), n, lang);
    assert.ok(n === 0 || /^[a-z]{2}$/.test(lang), lang);
  }
  assert.ok(LANGUAGE_COUNT <= 256);
});

test('unknown codes and numbers read as und', () => {
  for (const bad of ['', 'xx', 'EN', 'eng', 'en-US', 'und']) assert.equal(languageCode(bad), 0, bad);
  for (const bad of [-1, 185, 255, 1.5, NaN]) assert.equal(languageOf(bad), 'und', String(bad));
  assert.equal(isLanguage('und'), false);
  assert.equal(isLanguage('fi'), true);
});

test('declared tags are cut to their primary subtag and checked against the list', () => {
  const cases: [string | undefined, string | undefined][] = [
    ['en-US', 'en'], ['cs_CZ', 'cs'], [' DE ', 'de'], ['zh-Hant-TW', 'zh'], ['fr, en', 'fr'], ['pt-BR', 'pt'],
    ['iw', 'he'], ['in', 'id'],
    [undefined, undefined], ['', undefined], ['und', undefined], ['mul', undefined], ['x-default', undefined],
    ['eng', undefined], ['e', undefined], ['qq', undefined], ['12', undefined], ['en\u0000', undefined], ['<script>', undefined],
  ];
  for (const [tag, lang] of cases) assert.equal(languageOfTag(tag), lang, String(tag));
});
