/**
 * Where a refused JSON body stops being JSON (searcher/json-body.ts): the
 * offset and what was expected there, for each kind of fault, and never a
 * stack overflow on deep nesting.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import { jsonSyntaxError } from '../../searcher/json-body.js';

test('a syntax error is placed at the character where the text stops being JSON', () => {
  const cases: Array<[string, number, RegExp]> = [
    ['', 0, /^a value/],
    ['{"q": }', 6, /^a value/],
    ['{q: 1}', 1, /^a property name/],
    ['{"q" 1}', 5, /^":"/],
    ['{"q": 1 "limit": 2}', 8, /^"," or "}"/],
    ['[1, 2,]', 6, /^a value/],
    ['{"q": "a\u0001b"}', 8, /^no control character/],
    ['{"q": "a\\xb"}', 9, /^an escape/],
    ['{"q": "\\u12g4"}', 8, /^an escape/],
    ['{"q": "open', 11, /^a closing quote/],
    ['{"q": 01}', 7, /^"," or "}"/],
    ['{"q": tru}', 6, /^a value/],
    ['{"q": 1} x', 9, /^the end of the body/],
  ];
  for (const [text, offset, expected] of cases) {
    assert.throws(() => JSON.parse(text));
    const found = jsonSyntaxError(text);
    assert.equal(found.offset, offset, text);
    assert.match(found.expected, expected, text);
  }
});

test('deep nesting is refused where it passes the bound, without recursing further', () => {
  const text = '['.repeat(100_000);
  assert.throws(() => JSON.parse(text));
  const found = jsonSyntaxError(text);
  assert.equal(found.offset, 513);
  assert.match(found.expected, /no deeper nesting than 512/);
});
