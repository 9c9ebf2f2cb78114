import assert from 'node:assert/strict';
import test from 'node:test';
import { ahead, formatRatio, formatValue, NOT_BUILT, ratio, renderTable } from '../../bench/report.js';
import type { Table } from '../../bench/report.js';
import { median, medianOfRuns, percentile, topOverlap } from '../../bench/stats.js';

test('the ratio is sherlock divided by the peer, and absent without both figures', () => {
  assert.equal(ratio(300, 100), 3);
  assert.equal(ratio(0.5, 2), 0.25);
  assert.equal(ratio(undefined, 2), undefined);
  assert.equal(ratio(2, undefined), undefined);
  assert.equal(ratio(2, 0), undefined);
  assert.equal(ratio(Number.NaN, 1), undefined);
  assert.equal(ahead(2, 'higher'), true);
  assert.equal(ahead(2, 'lower'), false);
  assert.equal(ahead(0.5, 'lower'), true);
});

test('ratios and values are formatted for people', () => {
  assert.equal(formatRatio(undefined), '—');
  assert.equal(formatRatio(1.234), '1.23×');
  assert.equal(formatRatio(12.34), '12.3×');
  assert.equal(formatRatio(1234), '1234×');
  assert.equal(formatValue(1234567, 'int'), '1,234,567');
  assert.equal(formatValue(0.1234, 'ms'), '0.123');
  assert.equal(formatValue(12.345, 'ms'), '12.35');
  assert.equal(formatValue(5 * 1048576, 'mib'), '5.0');
  assert.equal(formatValue(Number.NaN, 'int'), '—');
});

test('median and nearest-rank percentile', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 2, 3]), 2.5);
  assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99), 10);
  assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50), 5);
  assert.equal(percentile([7], 99), 7);
  assert.throws(() => median([]), RangeError);
  assert.throws(() => percentile([1], 0), RangeError);
  assert.deepEqual(medianOfRuns([{ a: 1, b: 5 }, { a: 3, b: undefined }, { a: 2, b: 4 }]), { a: 2 });
});

test('top-k overlap: shared hits over k, or over the shorter list; queries without hits left out', () => {
  const ten = (p: string) => Array.from({ length: 10 }, (_, i) => `${p}${i}`);
  // 5 of 10 shared; 2 hits both found among 3; one side without hits: not counted.
  const a = [[...ten('x').slice(0, 5), ...ten('a').slice(5)], ['u', 'v'], []];
  const b = [ten('x'), ['v', 'w', 'u'], ['z']];
  assert.deepEqual(topOverlap(a, b), { overlap: (0.5 + 1) / 2, queries: 2 });
  // Only the first k count, in either list.
  assert.deepEqual(topOverlap([['a', 'b', 'c']], [['c', 'b', 'a']], 2), { overlap: 0.5, queries: 1 });
  assert.ok(Number.isNaN(topOverlap([[]], [[]]).overlap));
  assert.throws(() => topOverlap([[]], []), RangeError);
});

function table(sherlock: Table['sherlock']): Table {
  return {
    id: 'x',
    title: 'Searching',
    subtitle: 'sub',
    columns: [
      { key: 'median', label: 'median ms', format: 'ms' },
      { key: 'p99', label: 'p99 ms', format: 'ms' },
    ],
    ratios: [{ key: 'median', label: 'median', better: 'lower' }],
    peers: [
      { name: 'FTS5', status: 'ok', values: { median: 0.2, p99: 1 } },
      { name: 'Lucene', status: 'failed', message: 'javac failed' },
    ],
    sherlock,
    notes: ['a note'],
  };
}

test('a part that does not exist says "not built yet", never a figure', () => {
  const md = renderTable(table({ name: 'sherlock', status: 'not-built' }));
  assert.match(md, /\| \*\*sherlock\*\* \| not built yet \|/);
  assert.match(md, /\| FTS5 \| 0\.200 \| 1\.00 \| not built yet \|/);
  assert.match(md, /\| Lucene \| failed: javac failed \|/);
  assert.match(md, /sherlock ÷ peer, median \(lower is better\)/);
  assert.ok(md.includes('- a note'));
  assert.equal(NOT_BUILT, 'not built yet');
});

test('with both figures the ratio column holds sherlock ÷ peer', () => {
  const md = renderTable(table({ name: 'sherlock', status: 'ok', values: { median: 0.1, p99: 0.5 } }));
  assert.match(md, /\| FTS5 \| 0\.200 \| 1\.00 \| 0\.50× \|/);
  assert.match(md, /\| Lucene \| failed: javac failed \|  \| — \|/);
  assert.match(md, /\| \*\*sherlock\*\* \| 0\.100 \| 0\.500 \|  \|/);
});
