/**
 * The strict exposition-format reader the /metrics tests rely on: it reads
 * well-formed text (escapes, histograms, NaN and infinities, timestamps) and
 * refuses each kind of malformed input it promises to refuse.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExpositionError, parseExposition, sampleValue } from './prometheus-text.js';

const GOOD = `# HELP a_total Things, with a \\\\ and a \\n in the help.
# TYPE a_total counter
a_total{kind="x\\"y\\\\z\\nw"} 3
a_total{kind="plain"} 1.5e3 1700000000000
# TYPE g gauge
g NaN
# a comment
g{side="low"} -Inf
# TYPE h histogram
h_bucket{le="0.1"} 1
h_bucket{le="1"} 2
h_bucket{le="+Inf"} 3
h_sum 4.5
h_count 3
`;

test('reads well-formed text: escapes, timestamps, NaN, infinities, histograms', () => {
  const families = parseExposition(GOOD);
  assert.deepEqual([...families.keys()], ['a_total', 'g', 'h']);
  assert.equal(families.get('a_total')!.help, 'Things, with a \\\\ and a \\n in the help.');
  assert.equal(sampleValue(families, 'a_total', { kind: 'x"y\\z\nw' }), 3);
  assert.equal(sampleValue(families, 'a_total', { kind: 'plain' }), 1500);
  assert.ok(Number.isNaN(sampleValue(families, 'g')));
  assert.equal(sampleValue(families, 'g', { side: 'low' }), -Infinity);
  assert.equal(sampleValue(families, 'h_bucket', { le: '+Inf' }), 3);
  assert.equal(families.get('h')!.samples.length, 5);
});

const BAD: [string, string][] = [
  ['bad metric name', '# TYPE 1x counter\n1x 1\n'],
  ['bad metric name in a sample', '# TYPE a gauge\na-b 1\n'],
  ['sample before TYPE, then TYPE', 'a 1\n# TYPE a gauge\n'],
  ['unknown type', '# TYPE a meter\na 1\n'],
  ['second TYPE', '# TYPE a gauge\n# TYPE a gauge\na 1\n'],
  ['second HELP', '# HELP a x\n# HELP a y\n# TYPE a gauge\na 1\n'],
  ['family split', '# TYPE a gauge\na{x="1"} 1\n# TYPE b gauge\nb 1\na{x="2"} 2\n'],
  ['unquoted label value', '# TYPE a gauge\na{x=1} 1\n'],
  ['bad escape', '# TYPE a gauge\na{x="\\t"} 1\n'],
  ['label twice', '# TYPE a gauge\na{x="1",x="2"} 1\n'],
  ['trailing comma', '# TYPE a gauge\na{x="1",} 1\n'],
  ['reserved label', '# TYPE a gauge\na{__name__="b"} 1\n'],
  ['unterminated label value', '# TYPE a gauge\na{x="1} 1\n'],
  ['bad value', '# TYPE a gauge\na one\n'],
  ['junk after the value', '# TYPE a gauge\na 1 2 3\n'],
  ['negative counter', '# TYPE a_total counter\na_total -1\n'],
  ['duplicate series', '# TYPE a gauge\na{x="1"} 1\na{x="1"} 2\n'],
  ['duplicate series, labels reordered', '# TYPE a gauge\na{x="1",y="2"} 1\na{y="2",x="1"} 2\n'],
  ['no newline at the end', '# TYPE a gauge\na 1'],
  ['histogram without +Inf', '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n'],
  ['histogram counts fall', '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="2"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n'],
  ['histogram bounds out of order', '# TYPE h histogram\nh_bucket{le="2"} 1\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'],
  ['histogram +Inf differs from _count', '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n'],
  ['histogram without _sum', '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_count 2\n'],
  ['histogram bucket without le', '# TYPE h histogram\nh_bucket 2\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n'],
];

for (const [what, text] of BAD) {
  test(`refuses: ${what}`, () => {
    assert.throws(() => parseExposition(text), ExpositionError);
  });
}
