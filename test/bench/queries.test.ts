import assert from 'node:assert/strict';
import test from 'node:test';
import { formatQueryFile, generateQueries, mulberry32, parseQueryFile, QUERY_KINDS, seedFor, tokens } from '../../bench/queries.js';
import { fts5Match } from '../../bench/peers/syntax.js';

const DOCS = Array.from({ length: 60 }, (_, i) =>
  [
    'PostgreSQL stores tables in heap files.',
    `Each table has rows; vacuum reclaims space number${String.fromCharCode(97 + (i % 26))}.`,
    i % 3 === 0 ? 'The write ahead log protects commits.' : 'Indexes speed up lookups of rows.',
    i % 7 === 0 ? 'Rarely mentioned: tablespace quirks.' : '',
    `foo.bar (see x${i}) [brackets]`,
  ].join(' '),
);

test('words are 3–20 ASCII letters, lower-cased; anything else breaks adjacency', () => {
  assert.deepEqual(tokens('The (write) ahead log, protects foo.bar x1 ab'), ['the', 'write', null, 'ahead', 'log', null, 'protects', null, null, null]);
  assert.deepEqual(tokens('naïve café résumé'), [null, null, null]);
});

test('the same text and seed give the same query set', () => {
  const a = generateQueries(() => DOCS, { seed: seedFor('small') });
  const b = generateQueries(() => DOCS, { seed: seedFor('small') });
  assert.deepEqual(a, b);
  assert.ok(a.length > 20);
  const c = generateQueries(() => DOCS, { seed: seedFor('medium') });
  assert.notDeepEqual(a, c);
});

test('every kind is drawn, queries are distinct, phrases and AND sets come from the text', () => {
  const qs = generateQueries(() => DOCS, { seed: 7 });
  const kinds = new Set(qs.map((q) => q.kind));
  for (const k of QUERY_KINDS) assert.ok(kinds.has(k), `kind ${k} missing`);
  assert.equal(new Set(qs.map((q) => q.q)).size, qs.length);
  const texts = DOCS.map((d) => tokens(d).map((t) => t ?? '|').join(' '));
  for (const q of qs) {
    if (q.phrase) {
      assert.ok(texts.some((t) => (' ' + t + ' ').includes(' ' + q.words.join(' ') + ' ')), `phrase ${q.q} not in any text`);
      assert.match(q.q, /^"[a-z]+( [a-z]+)+"$/);
    } else if (q.kind === 'and2' || q.kind === 'and3') {
      assert.equal(q.words.length, q.kind === 'and2' ? 2 : 3);
      assert.ok(texts.some((t) => q.words.every((w) => t.split(' ').includes(w))), `AND ${q.q} in no single text`);
    }
  }
  // Kinds come out grouped in the listed order.
  const order = qs.map((q) => QUERY_KINDS.indexOf(q.kind));
  assert.deepEqual(order, [...order].sort((x, y) => x - y));
});

test('the query file round-trips', () => {
  const qs = generateQueries(() => DOCS, { seed: 3 });
  const text = formatQueryFile(qs, ['header line']);
  assert.ok(text.startsWith('# header line\n'));
  assert.deepEqual(parseQueryFile(text), qs);
  assert.throws(() => parseQueryFile('bogus\tx\n'), /unknown kind/);
});

test('the PRNG is deterministic and in [0, 1)', () => {
  const r1 = mulberry32(42);
  const r2 = mulberry32(42);
  for (let i = 0; i < 1000; i++) {
    const v = r1();
    assert.equal(v, r2());
    assert.ok(v >= 0 && v < 1);
  }
});

test('queries are said to FTS5 as quoted terms ANDed, or one phrase', () => {
  assert.equal(fts5Match({ kind: 'and2', q: 'vacuum table', words: ['vacuum', 'table'], phrase: false }), '"vacuum" AND "table"');
  assert.equal(fts5Match({ kind: 'phrase2', q: '"foreign key"', words: ['foreign', 'key'], phrase: true }), '"foreign key"');
  assert.equal(fts5Match({ kind: 'common', q: 'not', words: ['not'], phrase: false }), '"not"');
});
