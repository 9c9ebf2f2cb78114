import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import { ExternalSorter, mergedLines, writeSlice } from '../../common/external-sort.js';
import { scratchDir, testdata } from '../helpers/paths.js';

/** Byte order, as `LC_ALL=C sort` compares. */
const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1'));

test('any lines come out in byte order, in memory or through spilled runs', () => {
  const line = fc.uint8Array({ maxLength: 30 }).map((bytes) => Buffer.from(bytes.filter((b) => b !== 0x0a)).toString('latin1'));
  fc.assert(
    fc.property(fc.array(line, { maxLength: 300 }), fc.integer({ min: 1, max: 4000 }), (lines, budget) => {
      const sorter = new ExternalSorter({ memoryBudget: budget });
      for (const l of lines) sorter.add(l);
      assert.deepEqual([...sorter.sorted()], [...lines].sort(byteOrder));
    }),
    { numRuns: 60 },
  );
});

test('OpenWayback’s 2,144 real CDX lines, shuffled, sort back to the file’s own byte order with a tiny budget', (t) => {
  const lines = readFileSync(testdata('arc', 'openwayback', 'test-cdx.txt'), 'latin1').split('\n').filter((l) => l !== '');
  const shuffled = [...lines].sort((a, b) => (a.length * 7919 + a.charCodeAt(20)) % 97 - (b.length * 7919 + b.charCodeAt(20)) % 97);
  const tmpDir = scratchDir(t);
  const sorter = new ExternalSorter({ memoryBudget: 32 * 1024, tmpDir });
  for (const l of shuffled) sorter.add(Buffer.from(l, 'latin1'));
  assert.ok(sorter.spilled > 10, `spilled ${sorter.spilled} runs`);
  assert.deepEqual([...sorter.sorted()], lines);
  assert.deepEqual(readdirSync(tmpDir), [], 'run files removed');
});

test('abandoning the sorted lines midway removes the run files too', (t) => {
  const tmpDir = scratchDir(t);
  const sorter = new ExternalSorter({ memoryBudget: 100, tmpDir });
  for (let i = 0; i < 100; i++) sorter.add(`line ${100 - i}`);
  for (const first of sorter.sorted()) {
    assert.equal(first, 'line 1');
    break;
  }
  assert.deepEqual(readdirSync(tmpDir), []);
  assert.ok(!existsSync(`${tmpDir}/run-00000`));
});

test('a line holding LF is refused', () => {
  assert.throws(() => new ExternalSorter().add('a\nb'), RangeError);
});

test('slices of the merge, written apart in any order, lay the whole merge end to end byte for byte', (t) => {
  const dir = scratchDir(t);
  // Few distinct bytes, so that equal lines and long shared prefixes straddle the split keys.
  const line = fc.array(fc.constantFrom('a', 'b', '\xe9', ' '), { maxLength: 12 }).map((chars) => chars.join(''));
  let round = 0;
  fc.assert(
    fc.property(fc.array(line, { maxLength: 400 }), fc.integer({ min: 1, max: 3000 }), fc.integer({ min: 1, max: 9 }), (lines, budget, count) => {
      const sorter = new ExternalSorter({ memoryBudget: budget, tmpDir: dir });
      try {
        for (const l of lines) sorter.add(l);
        const slices = sorter.slices(count);
        assert.ok(slices.length <= count);
        const out = join(dir, `out-${round++}`);
        writeFileSync(out, 'head');
        for (const slice of [...slices].reverse()) writeSlice(slice, out, 4);
        const expected = lines.length === 0 ? '' : [...lines].sort(byteOrder).join('\n') + '\n';
        assert.equal(readFileSync(out, 'latin1'), 'head' + expected);
        let at = 0;
        for (const slice of slices) {
          assert.equal(slice.at, at, 'slices follow each other');
          at += slice.size;
        }
      } finally {
        sorter.discard();
      }
    }),
    { numRuns: 80 },
  );
});

test('slices cut by a group key keep each group whole, and their lines merged apart are the whole merge in order', (t) => {
  const dir = scratchDir(t);
  // Keys of few bytes (one a prefix of another), NUL, then anything: the group is the key.
  const key = fc.array(fc.constantFrom('a', 'b', '\xe9'), { minLength: 1, maxLength: 4 }).map((chars) => chars.join(''));
  const line = fc.tuple(key, fc.array(fc.constantFrom('x', 'y', '\0'), { maxLength: 6 })).map(([k, rest]) => `${k}\0${rest.join('')}`);
  const group = (l: string) => l.slice(0, l.indexOf('\0'));
  fc.assert(
    fc.property(fc.array(line, { maxLength: 400 }), fc.integer({ min: 1, max: 2000 }), fc.integer({ min: 1, max: 12 }), (lines, budget, count) => {
      const sorter = new ExternalSorter({ memoryBudget: budget, tmpDir: dir });
      try {
        for (const l of lines) sorter.add(l);
        const slices = [...sorter.eachSlice(count, group)].map((slice) => [...mergedLines(slice.runs)]);
        assert.deepEqual(slices.flat(), [...lines].sort(byteOrder));
        const groups = slices.map((slice) => new Set(slice.map(group)));
        for (const [i, a] of groups.entries()) for (const b of groups.slice(i + 1)) for (const g of a) assert.ok(!b.has(g), `group ${JSON.stringify(g)} in two slices`);
      } finally {
        sorter.discard();
      }
    }),
    { numRuns: 80 },
  );
});

test('slices of a large merge are of about equal size', (t) => {
  const sorter = new ExternalSorter({ memoryBudget: 64 * 1024, tmpDir: scratchDir(t) });
  try {
    for (let i = 0; i < 20_000; i++) sorter.add(`key-${(i * 7919) % 20_000} some payload ${i}`);
    assert.ok(sorter.spilled > 5);
    const slices = sorter.slices(8);
    assert.equal(slices.length, 8);
    const total = slices.reduce((sum, slice) => sum + slice.size, 0);
    for (const slice of slices) assert.ok(slice.size > total / 16 && slice.size < total / 4, `slice of ${slice.size} bytes of ${total}`);
  } finally {
    sorter.discard();
  }
});
