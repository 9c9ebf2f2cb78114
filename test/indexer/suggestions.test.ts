/**
 * A title as the suggest stage keeps it (indexer/suggestions.ts titleForms):
 * the key its words' plain forms, the text a query that reads as the
 * title (punctuation inside a term kept, syntax never), CJK joined back,
 * and the titles that suggest nothing.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import { titleForms } from '../../indexer/suggestions.js';
import { parseQuery } from '../../searcher/query.js';

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
