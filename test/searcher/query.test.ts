/**
 * The query language (searcher/query.ts): every construct parses to the tree
 * the evaluator expects, every malformed query is refused with its code and
 * the position of the fault, the bounds hold, and no input makes the parser
 * throw anything but a QueryError.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { MAX_DEPTH, MAX_QUERY_LENGTH, MAX_TERMS, QueryError, parseQuery, type QueryErrorCode, type QueryNode } from '../../searcher/query.js';

/** A compact spelling of a tree, to compare whole parses at a glance. */
function show(node: QueryNode): string {
  const field = (n: { field?: string }) => (n.field === undefined ? '' : `${n.field}:`);
  switch (node.kind) {
    case 'word':
      return `${field(node)}${node.word.plain}${node.word.exact === node.word.plain ? '' : `/${node.word.exact}`}${node.prefix ? '*' : ''}`;
    case 'phrase':
      return `${field(node)}"${node.words.map((w) => w.plain).join(' ')}"`;
    case 'near':
      return `(${show(node.left)} NEAR/${node.distance} ${show(node.right)})`;
    case 'site':
      return `site:${node.host}`;
    case 'type':
      return `type:${node.types.join('|')}`;
    case 'lang':
      return `lang:${node.languages.join('|')}`;
    case 'date':
      return `date:${new Date(node.from * 1000).toISOString().slice(0, 10)}..${node.to === 2 ** 32 ? '' : new Date(node.to * 1000).toISOString().slice(0, 10)}`;
    case 'and':
      return `AND(${node.children.map(show).join(' ')})`;
    case 'or':
      return `OR(${node.children.map(show).join(' ')})`;
    case 'not':
      return `-${show(node.child)}`;
  }
}

const parsed = (q: string) => show(parseQuery(q));

function refused(q: string, code: QueryErrorCode, position: number): void {
  assert.throws(
    () => parseQuery(q),
    (err: unknown) => {
      assert.ok(err instanceof QueryError, `${q}: ${String(err)}`);
      assert.equal(err.code, code, `${q}: ${err.message}`);
      assert.equal(err.position, position, `${q}: ${err.message}`);
      return true;
    },
  );
}

test('words, implicit AND, OR binding looser, groups and exclusion', () => {
  assert.equal(parsed('search'), 'search');
  assert.equal(parsed('web  search engine'), 'AND(web search engine)');
  assert.equal(parsed('a b OR c d'), 'OR(AND(a b) AND(c d))');
  assert.equal(parsed('(a OR b) c'), 'AND(OR(a b) c)');
  assert.equal(parsed('linux -windows'), 'AND(linux -windows)');
  assert.equal(parsed('linux -(windows OR mac)'), 'AND(linux -OR(windows mac))');
  assert.equal(parsed('x or y'), 'AND(x or y)', 'lower-case or is a word');
});

test('case and accents: matching form without accents, the typed accents kept', () => {
  assert.equal(parsed('Café'), 'cafe/café');
  assert.equal(parsed('CAFE'), 'cafe');
  assert.equal(parsed('Straße'), 'strasse/straße');
});

test('phrases, and terms that cut into several words become phrases', () => {
  assert.equal(parsed('"hello big world"'), '"hello big world"');
  assert.equal(parsed('"one"'), 'one');
  assert.equal(parsed('e-mail node.js'), 'AND("e mail" "node js")');
  assert.equal(parsed('東京都'), '"東京 京都"');
  assert.equal(parsed('-"exact phrase" word'), 'AND(-"exact phrase" word)');
});

test('NEAR with and without a distance, chained; prefixes; fields and filters', () => {
  assert.equal(parsed('apache NEAR/3 hadoop'), '(apache NEAR/3 hadoop)');
  assert.equal(parsed('a NEAR b'), '(a NEAR/10 b)');
  assert.equal(parsed('a NEAR/2 "b c" NEAR/5 d'), 'AND((a NEAR/2 "b c") ("b c" NEAR/5 d))');
  assert.equal(parsed('postg*'), 'postg*');
  assert.equal(parsed('title:manual title:"user guide" url:faq'), 'AND(title:manual title:"user guide" url:faq)');
  assert.equal(parsed('title:install*'), 'title:install*');
  assert.equal(parsed('site:www.Example.org backup'), 'AND(site:example.org backup)');
  assert.equal(parsed('type:pdf OR type:text/plain'), 'OR(type:application/pdf type:text/plain)');
  assert.equal(parsed('type:csv'), 'type:text/csv');
  assert.equal(parsed('type:feed'), 'type:application/rss+xml|application/atom+xml|application/rdf+xml');
  assert.equal(parsed('site:example.org'), 'site:example.org', 'a filter alone lists what it takes');
  assert.equal(parsed('unknown:field'), '"unknown field"', 'an unknown field is text');
});

test('malformed queries: code and position of the fault', () => {
  refused('', 'empty', 0);
  refused('   ', 'empty', 0);
  refused('say "hello', 'syntax', 4);
  refused('(a OR b', 'syntax', 0);
  refused('a b)', 'syntax', 3);
  refused('a OR', 'syntax', 2);
  refused('OR a', 'syntax', 0);
  refused('a OR OR b', 'syntax', 2);
  refused('()', 'syntax', 0);
  refused('a NEAR/0 b', 'syntax', 2);
  refused('a NEAR/101 b', 'syntax', 2);
  refused('a NEAR/x b', 'syntax', 2);
  refused('a NEAR (b c)', 'syntax', 2);
  refused('a NEAR -b', 'syntax', 2);
  refused('ab*', 'syntax', 0);
  refused('*', 'syntax', 0);
  refused('e-ma*', 'syntax', 4);
  refused('"" x', 'syntax', 0);
  refused('-- x', 'syntax', 1);
  refused('!!!', 'syntax', 0);
  refused('title: x', 'syntax', 6);
  refused('site:a/b', 'bad_filter', 0);
  refused('type:weird', 'bad_filter', 0);
  refused('-a -b', 'only_excluded', 0);
  refused('a OR -b', 'only_excluded', 0);
});

test('bounds: length, words, nesting', () => {
  refused('a'.repeat(MAX_QUERY_LENGTH + 1), 'too_long', MAX_QUERY_LENGTH);
  parseQuery(Array.from({ length: MAX_TERMS }, (_, i) => `w${i}`).join(' '));
  refused(Array.from({ length: MAX_TERMS + 1 }, (_, i) => `w${i}`).join(' '), 'too_many_terms', MAX_TERMS * 4 - 10);
  parseQuery('('.repeat(MAX_DEPTH) + 'a' + ')'.repeat(MAX_DEPTH));
  refused('('.repeat(MAX_DEPTH + 1) + 'a' + ')'.repeat(MAX_DEPTH + 1), 'too_deep', MAX_DEPTH);
});

test('any input: a tree or a QueryError with a position inside the query, never anything else', () => {
  const pieces = fc.constantFrom('a', 'b', 'café', ' ', '"', '(', ')', '-', '*', 'OR', 'NEAR', 'NEAR/2', 'site:', 'title:', 'type:', ':', '東京', 'x.y');
  fc.assert(
    fc.property(fc.oneof(fc.array(pieces, { maxLength: 20 }).map((p) => p.join('')), fc.string({ maxLength: 60 })), (q) => {
      try {
        parseQuery(q);
      } catch (err) {
        assert.ok(err instanceof QueryError, String(err));
        assert.ok(err.position >= 0 && err.position <= q.length, `${q}: position ${err.position}`);
      }
    }),
    { numRuns: 2000 },
  );
});
