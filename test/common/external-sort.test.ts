import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import test from 'node:test';
import fc from 'fast-check';
import { ExternalSorter } from '../../common/external-sort.js';
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
