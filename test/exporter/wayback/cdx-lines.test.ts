import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { ArcReader } from '../../../common/archive/arc-read.js';
import { isSherlockError } from '../../../common/errors.js';
import { ExternalSorter } from '../../../common/external-sort.js';
import { compressMember } from '../../../common/archive/gzip-member.js';
import { cdxLines, cdxLinesOfPart } from '../../../exporter/wayback/cdx-lines.js';
import { scratchDir } from '../../helpers/paths.js';

const record = (url: string, content: Buffer): Buffer =>
  Buffer.concat([Buffer.from(`${url} 10.0.0.1 20240301000000 text/html ${content.length}\n`, 'latin1'), content, Buffer.from('\n')]);

const page = (i: number): Buffer => Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><head><title>${i}</title></head><body>${'x'.repeat(i % 700)}</body></html>`);

/**
 * An .arc.gz of `count` records; every tenth holds, stored (gzip level 0,
 * so byte for byte), an archived .arc.gz member: a boundary candidate that is
 * not a record boundary. Returns the file and the offsets of its records.
 */
function writeArc(path: string, count: number): number[] {
  const members: Buffer[] = [];
  const offsets: number[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const inner = compressMember(record(`http://inner${i}.example/archived.html`, page(i)), 1);
    const content = i % 10 === 5 ? Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: application/gzip\r\n\r\n'), inner]) : page(i);
    const member = compressMember(record(`http://site${i % 7}.example.com/page-${i}.html`, content), i % 10 === 5 ? 0 : 1);
    members.push(member);
    offsets.push(at);
    at += member.length;
  }
  writeFileSync(path, Buffer.concat(members));
  return offsets;
}

async function partedLines(files: string[], partSize: number): Promise<string[]> {
  const sorter = new ExternalSorter({ memoryBudget: 1 << 20 });
  try {
    await cdxLines(files, { format: 'cdx', lenient: false, notModified: false, sortMemory: 1 << 20, partSize }, sorter, (problem) => assert.fail(problem.message));
    return [...sorter.sorted()];
  } finally {
    sorter.discard();
  }
}

function wholeLines(files: string[]): string[] {
  const lines: string[] = [];
  for (const path of files) cdxLinesOfPart({ path, from: 0, seek: false }, { format: 'cdx', lenient: false, notModified: false }, (line) => lines.push(line), assert.fail);
  return lines.sort();
}

test('files cut into parts give the lines of reading them whole, also where a cut lands on an archived member', async (t) => {
  const dir = scratchDir(t);
  const files = [join(dir, 'a.arc.gz'), join(dir, 'b.arc.gz')];
  const offsets = writeArc(files[0]!, 400);
  writeArc(files[1]!, 150);
  // The candidates the cuts see include members inside records.
  const reader = ArcReader.open(files[0]!);
  const real = new Set(offsets);
  const falseStarts = offsets.filter((o, i) => i % 10 === 5).map((o) => reader.recordStartAfter(o + 1)).filter((o) => !real.has(o));
  // Cuts as the plan makes them (every part size bytes, rounded): at 1500 bytes some land where the next candidate is a false one.
  const size = reader.size;
  const count = Math.round(size / 1500);
  const cutsOnFalse = Array.from({ length: count - 1 }, (_, i) => reader.recordStartAfter(Math.round(((i + 1) * size) / count))).filter((o) => !real.has(o) && o < size);
  reader.close();
  assert.ok(falseStarts.length > 0, 'archived members are boundary candidates');
  assert.ok(cutsOnFalse.length > 0, 'some parts start at a false candidate');
  const whole = wholeLines(files);
  assert.equal(whole.length, 550);
  // Cut every few KB, including exactly at false candidates (a part size that puts a cut right before one).
  for (const partSize of [1500, 4096, 20_000, 1 << 20]) assert.deepEqual(await partedLines(files, partSize), whole, `part size ${partSize}`);
  if (availableParallelism() < 2) t.diagnostic('one core: parts were read inline');
});

test('a damaged member in a cut file fails with the first damage in file order, as reading it whole does', async (t) => {
  const dir = scratchDir(t);
  const path = join(dir, 'damaged.arc.gz');
  const offsets = writeArc(path, 300);
  const bytes = readFileSync(path);
  // Break the deflate data of two members, one early and one late.
  for (const i of [40, 250]) bytes[offsets[i]! + 20] ^= 0xff;
  writeFileSync(path, bytes);
  const expected = (() => {
    try {
      wholeLines([path]);
    } catch (err) {
      return err;
    }
    return undefined;
  })();
  assert.ok(isSherlockError(expected) && expected.place.offset === offsets[40], String(expected));
  await assert.rejects(partedLines([path], 3000), (err: unknown) => isSherlockError(err, expected.code) && err.place.offset === offsets[40] && err.place.file === path);
});

test('given an output file, the workers merge the sorted lines into it after what it holds', async (t) => {
  const dir = scratchDir(t);
  const files = [join(dir, 'a.arc.gz'), join(dir, 'b.arc.gz')];
  writeArc(files[0]!, 400);
  writeArc(files[1]!, 150);
  const whole = wholeLines(files);
  // Small budgets: each worker spills several runs per part, merged in slices.
  for (const [partSize, sortMemory] of [
    [4096, 16 * 1024],
    [1 << 20, 1 << 20],
  ] as const) {
    const out = join(dir, `index-${partSize}.cdx`);
    writeFileSync(out, 'legend\n');
    const sorter = new ExternalSorter({ memoryBudget: sortMemory, tmpDir: dir });
    try {
      await cdxLines(files, { format: 'cdx', lenient: false, notModified: false, sortMemory, partSize, output: { path: out, position: 7 } }, sorter, (problem) => assert.fail(problem.message));
      assert.deepEqual([...sorter.sorted()], [], 'nothing left to merge');
    } finally {
      sorter.discard();
    }
    assert.equal(readFileSync(out, 'latin1'), 'legend\n' + whole.join('\n') + '\n', `part size ${partSize}`);
  }
});
