/**
 * Queue entry rests (gatherer/queue-entry.ts): path and query, then TAB
 * separated hints; what is encoded decodes the same, and hints the decoder
 * does not know are skipped.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { decodeQueued, encodeQueued, type QueuedUrl } from '../../gatherer/queue-entry.js';

const restArb = fc.string({ unit: fc.constantFrom('/', 'a', 'B', '0', '%', '2', 'F', '?', '=', '&', '-', '.', '~', 'é'), maxLength: 40 }).map((s) => `/${s}`);
const hintArb = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).filter((s) => !/[\t\n\r]/.test(s));
const queuedArb: fc.Arbitrary<QueuedUrl> = fc.record(
  {
    rest: restArb,
    retries: fc.nat({ max: 1000 }),
    ifModifiedSince: hintArb,
    ifNoneMatch: hintArb,
    // 0 means "no time" on the way back (w=0 decodes as no notBefore); real times are far above it.
    notBefore: fc.integer({ min: 1, max: 2 ** 40 }),
    retryOf: fc.nat({ max: 0xffffffff }),
  },
  { requiredKeys: ['rest', 'retries'] },
).map((q) => ({ ...q })); // plain objects: fast-check's records have a null prototype

test('an entry decodes to what was encoded (property)', () => {
  fc.assert(
    fc.property(queuedArb, (q) => {
      assert.deepEqual(decodeQueued(encodeQueued(q)), q);
    }),
    { numRuns: 500 },
  );
});

test('an entry with no hints is its rest alone, with no TAB', () => {
  assert.equal(encodeQueued({ rest: '/a?b=c', retries: 0 }), '/a?b=c');
  assert.deepEqual(decodeQueued('/a?b=c'), { rest: '/a?b=c', retries: 0 });
  assert.deepEqual(decodeQueued('/'), { rest: '/', retries: 0 });
});

test('the rest never holds a TAB: hints follow it, one per TAB-separated field', () => {
  const text = encodeQueued({ rest: '/p?q', retries: 2, ifModifiedSince: 'Tue, 15 Nov 1994 08:12:31 GMT', ifNoneMatch: '"x y"', notBefore: 1_700_000_000, retryOf: 0 });
  const [rest, ...hints] = text.split('\t');
  assert.equal(rest, '/p?q');
  assert.deepEqual(hints, ['m=Tue, 15 Nov 1994 08:12:31 GMT', 'e="x y"', 'r=2', 'w=1700000000', 'o=0']);
  fc.assert(
    fc.property(queuedArb, (q) => {
      assert.equal(encodeQueued(q).split('\t')[0], q.rest);
    }),
  );
});

test('hint values may hold "=" and spaces', () => {
  assert.deepEqual(decodeQueued('/\te=W/"a=b c"\tm=a=b'), { rest: '/', retries: 0, ifNoneMatch: 'W/"a=b c"', ifModifiedSince: 'a=b' });
});

test('unknown or malformed hints are ignored', () => {
  assert.deepEqual(decodeQueued('/x\tz=1\tq\t\tmm=2\t=3\tM=date'), { rest: '/x', retries: 0 });
  assert.deepEqual(decodeQueued('/x\tfuture=hint\tr=3\tnew=1'), { rest: '/x', retries: 3 });
  const junk = decodeQueued('/x\tr=abc\tw=soon\to=-1\to=1.5');
  assert.equal(junk.rest, '/x');
  assert.equal(junk.retries, 0);
  assert.equal(junk.notBefore, undefined);
  assert.equal(junk.retryOf, undefined);
});
