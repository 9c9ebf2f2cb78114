import assert from 'node:assert/strict';
import test from 'node:test';
import { judgmentsFromIndex, parseDocBookIndex, parseSphinxIndex, withoutQualifiers } from '../../bench/relevance/back-of-book.js';
import { linkTexts, otherFormOnly } from '../../bench/relevance/czech.js';
import { effectiveness, formatJudgments, pageOf, parseJudgments, queryWords } from '../../bench/relevance/judgments.js';

const SPHINX = `<h1>Index</h1><table style="width: 100%" class="indextable"><tr><td><ul>
  <li><a href="library/imp.html#imp.cache_from_source">cache_from_source() (in module imp)</a>
    <ul><li><a href="library/importlib.html#importlib.util.cache_from_source">(in module importlib.util)</a></li></ul></li>
  <li>C<ul><li><a href="library/stdtypes.html#index-11">language</a>, <a href="reference/datamodel.html#index-13">[1]</a></li></ul></li>
  <li><a href="library/ctypes.html#ctypes.c_int">c_int (class in ctypes)</a></li>
</ul></td></tr></table>`;

const DOCBOOK = `<div class="index"><dl>
  <dt id="a">aggregate function, <a class="indexterm" href="tutorial-agg.html">Aggregate Functions</a></dt>
  <dd><dl><dt>built-in, <a class="indexterm" href="functions-aggregate.html">Aggregate Functions</a></dt></dl></dd>
  <dt id="b">auto-increment (see <a href="#ientry-id7822">serial</a>)</dt>
  <dt id="c">$libdir, <a class="indexterm" href="xfunc-c.html#XFUNC-C-DYNLOAD">Dynamic Loading</a></dt>
</dl></div>`;

const pages = (known: string[]) => (href: string) => {
  const path = '/' + href.split('#')[0]!;
  return href.startsWith('#') || !known.includes(path) ? undefined : `pkg:${path}`;
};

test('a Sphinx index gives each term its pages; a sub-entry that is only a qualifier adds its pages to the term', () => {
  const entries = parseSphinxIndex(SPHINX);
  assert.deepEqual(entries[0], { terms: ['cache_from_source() (in module imp)', '(in module importlib.util)'], hrefs: ['library/importlib.html#importlib.util.cache_from_source'] });
  const judged = judgmentsFromIndex(entries, pages(['/library/imp.html', '/library/importlib.html', '/library/stdtypes.html', '/reference/datamodel.html', '/library/ctypes.html']));
  assert.deepEqual(judged, [
    { query: 'c language', relevant: ['pkg:/library/stdtypes.html', 'pkg:/reference/datamodel.html'] },
    { query: 'c_int', relevant: ['pkg:/library/ctypes.html'] },
    { query: 'cache_from_source', relevant: ['pkg:/library/imp.html', 'pkg:/library/importlib.html'] },
  ]);
});

test('a DocBook index: the term is the text outside links, a sub-entry follows its parent, "see" entries judge nothing', () => {
  const judged = judgmentsFromIndex(parseDocBookIndex(DOCBOOK), pages(['/tutorial-agg.html', '/functions-aggregate.html', '/xfunc-c.html']));
  assert.deepEqual(judged, [
    { query: 'aggregate function', relevant: ['pkg:/tutorial-agg.html'] },
    { query: 'aggregate function built-in', relevant: ['pkg:/functions-aggregate.html'] },
    { query: 'libdir', relevant: ['pkg:/xfunc-c.html'] },
  ]);
});

test('pages outside the collection, and terms pointing at too many pages, are dropped', () => {
  const many = { terms: ['module'], hrefs: ['a.html', 'b.html', 'c.html', 'd.html', 'e.html', 'f.html'] };
  const none = { terms: ['genindex'], hrefs: ['genindex-A.html'] };
  assert.deepEqual(judgmentsFromIndex([many, none], pages(['/a.html', '/b.html', '/c.html', '/d.html', '/e.html', '/f.html'])), []);
});

test('query words: qualifiers and operators go, identifiers stay whole, case is folded', () => {
  assert.equal(withoutQualifiers('f() (in module (x) os)'), 'f   ');
  assert.deepEqual(queryWords('os.path.join() -c "Správou" $libdir/plugins title:x _ in'), ['os.path.join', 'c', 'správou', 'libdir', 'plugins', 'title', 'x', 'in']);
});

test('judgment files round-trip and refuse a line without a page', () => {
  const j = [{ query: 'vacuum full', relevant: ['postgresql-doc-15:/sql-vacuum.html', 'postgresql-doc-15:/routine-vacuuming.html'] }];
  assert.deepEqual(parseJudgments(formatJudgments(j, ['header'])), j);
  assert.throws(() => parseJudgments('lonely query\n'), /bad line/);
});

test('MRR@10 and success@10 count the first relevant page in the top 10 only', () => {
  const judged = [
    { query: 'a', relevant: ['p:/a'] },
    { query: 'b', relevant: ['p:/b', 'p:/c'] },
    { query: 'c', relevant: ['p:/z'] },
    { query: 'd', relevant: ['p:/d'] },
  ];
  const eleventh = [...Array.from({ length: 10 }, (_, i) => `p:/x${i}`), 'p:/d'];
  const e = effectiveness(judged, [['p:/a'], ['p:/x', 'p:/c', 'p:/b'], [], eleventh]);
  assert.deepEqual(e.ranks, [1, 2, 0, 0]);
  assert.equal(e.mrr, (1 + 0.5) / 4);
  assert.equal(e.success, 0.5);
});

test("a hit's page is its host's package and decoded path, whatever the port", () => {
  const layout = { port: 8480, hosts: [{ name: 'h', address: '127.0.0.5', pkg: 'aptitude-doc-cs', root: '/r', owns: [], entry: '/index.html', disallow: [], behaviour: 'normal' as const }] };
  assert.equal(pageOf(layout, 'http://127.0.0.5:9999/a%20b.html'), 'aptitude-doc-cs:/a b.html');
  assert.equal(pageOf(layout, 'http://127.0.0.9:8480/x.html'), undefined);
});

test('Czech: another inflected form is a word whose first letters the target has only in other words', () => {
  const target = new Set(['správa', 'balíků', 'program']);
  assert.equal(otherFormOnly(['správou', 'balíků'], target), true);
  assert.equal(otherFormOnly(['správa', 'balíků'], target), false);
  assert.equal(otherFormOnly(['nastavení'], new Set(['nastavit'])), true);
  assert.equal(otherFormOnly(['pes'], new Set(['psa'])), false);
  const links = linkTexts('<a accesskey="n" href="next.html">Další</a> viz <a href="ch01.html#x">správou  <b>balíků</b></a>');
  assert.deepEqual(links, [{ href: 'ch01.html#x', text: 'správou balíků' }]);
});
