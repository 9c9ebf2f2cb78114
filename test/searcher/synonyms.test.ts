/**
 * The synonyms file (searcher/synonyms.ts): Solr's lines parsed, every broken
 * line refused with file:line, and a query's words, phrases and runs of words
 * given their synonyms. Ranking with them, on crawled pages, is in
 * word-forms.test.ts.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { parseQuery, type QueryNode } from '../../searcher/query.js';
import { MAX_SYNONYMS, Synonyms, SynonymsError } from '../../searcher/synonyms.js';

const terms = (synonyms: Synonyms, term: string): string[] => synonyms.of(term.split(' ').map((w) => ({ exact: w, plain: w }))).map((t) => t.map((w) => w.plain).join(' '));

test('groups go every way, => one way, lines add up; accents, case and comments do not count', () => {
  const s = Synonyms.parse('# a comment\n\ncouch, Sofa, settee\r\nsettee => divan\n  # indented comment\nCafé => coffee shop, espresso bar\n', 'syn.txt');
  assert.deepEqual(terms(s, 'couch'), ['sofa', 'settee']);
  assert.deepEqual(terms(s, 'settee'), ['couch', 'sofa', 'divan']);
  assert.deepEqual(terms(s, 'divan'), []);
  assert.deepEqual(terms(s, 'cafe'), ['coffee shop', 'espresso bar']);
  assert.deepEqual(terms(s, 'coffee shop'), []);
  assert.equal(s.size, 4);
});

test('a backslash keeps a comma or an arrow inside a term', () => {
  const s = Synonyms.parse('a\\,b, c\nx \\=> y, z\n', 'syn.txt');
  // "a,b" cuts into the words a and b: a term of two words.
  assert.deepEqual(terms(s, 'a b'), ['c']);
  assert.deepEqual(terms(s, 'z'), ['x y']);
});

test('each broken line is refused with file:line and what is wrong', () => {
  const cases: Array<[string, RegExp]> = [
    ['ok, fine\na => b => c\n', /^syn\.txt:2: a line has at most one "=>"/],
    ['a,, b\n', /^syn\.txt:1: an empty term/],
    ['a, b,\n', /^syn\.txt:1: an empty term/],
    ['=> b\n', /^syn\.txt:1: an empty term/],
    ['lonely\n', /^syn\.txt:1: one term alone says nothing/],
    ['a, !!!\n', /^syn\.txt:1: "!!!" has no letters or digits/],
    ['a, one two three four five six seven eight nine\n', /^syn\.txt:1: .* has 9 words, more than 8/],
    [`a, ${'b'.repeat(5000)}\n`, /^syn\.txt:1: the line has 5003 characters/],
  ];
  for (const [text, message] of cases) {
    assert.throws(
      () => Synonyms.parse(text, 'syn.txt'),
      (err: unknown) => err instanceof SynonymsError && err.code === 'SHERLOCK_BAD_CONFIG' && message.test(err.message),
      text.slice(0, 40),
    );
  }
});

test('a missing file is a SynonymsError naming it; the shipped example parses', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sherlock-syn-'));
  try {
    assert.throws(() => Synonyms.load(join(dir, 'none.txt')), /none\.txt: cannot read it/);
    const file = join(dir, 'syn.txt');
    writeFileSync(file, 'a, b\n');
    assert.deepEqual(terms(Synonyms.load(file), 'a'), ['b']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const shipped = new URL('../../../etc/synonyms.txt', import.meta.url);
  assert.ok(Synonyms.parse(readFileSync(shipped, 'utf8'), 'etc/synonyms.txt').size > 0);
});

/** The query as a compact string: words with their synonyms in [], synonym nodes marked ~. */
function show(node: QueryNode): string {
  switch (node.kind) {
    case 'word':
      return `${node.synonym ? '~' : ''}${node.word.plain}${node.synonyms ? `[${node.synonyms.map((w) => w.plain).join(',')}]` : ''}`;
    case 'phrase':
      return `${node.synonym ? '~' : ''}"${node.words.map((w) => w.plain).join(' ')}"`;
    case 'and':
      return `(${node.children.map(show).join(' ')})`;
    case 'or':
      return `(${node.children.map(show).join(' | ')})`;
    case 'not':
      return `-${show(node.child)}`;
    case 'near':
      return `${show(node.left)} NEAR ${show(node.right)}`;
    default:
      return node.kind;
  }
}

test('a query gets one-word synonyms in its words, several-word ones beside words, phrases and runs', () => {
  const s = Synonyms.parse('usa, united states\ncouch, sofa\nnyc => new york city\n', 'syn.txt');
  const apply = (q: string) => show(s.apply(parseQuery(q)));
  assert.equal(apply('couch'), 'couch[sofa]');
  assert.equal(apply('usa history'), '((usa | ~"united states") history)');
  assert.equal(apply('united states history'), '(((united states) | ~usa) history)');
  assert.equal(apply('"united states"'), '("united states" | ~usa)');
  assert.equal(apply('big couch -sofa'), '(big couch[sofa] -sofa[couch])');
  assert.equal(apply('couch NEAR usa'), 'couch[sofa] NEAR usa');
  assert.equal(apply('=couch cou*'), '(couch cou)');
  assert.equal(apply('nyc'), '(nyc | ~"new york city")');
  assert.equal(apply('title:couch'), 'couch[sofa]');
  assert.equal(show(Synonyms.NONE.apply(parseQuery('couch'))), 'couch');
});

test('a term brings at most MAX_SYNONYMS synonyms', () => {
  const many = Array.from({ length: MAX_SYNONYMS + 10 }, (_, i) => `w${String.fromCharCode(97 + (i % 26))}${i}`);
  const s = Synonyms.parse(`base => ${many.join(', ')}\n`, 'syn.txt');
  assert.equal(terms(s, 'base').length, MAX_SYNONYMS);
});
