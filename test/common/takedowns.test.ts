/**
 * The takedown file (common/takedowns.ts): lines written and read back, a
 * torn tail after a writer killed mid-line, a damaged line in the middle,
 * and the set matching thousands of entries by kind.
 */

import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readFileSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { crc32 } from 'node:zlib';
import { isSherlockError } from '../../common/errors.js';
import { setLogSink } from '../../common/log.js';
import { TakedownFile, TakedownSet, appendTakedown, readTakedowns, readTakedownsStrict, takedownFilePath, takedownLine, takedownTarget, type TakedownChange } from '../../common/takedowns.js';
import { scratchDir } from '../helpers/paths.js';

const TIME = '2026-11-29T23:00:00.000Z';

/** Log lines written while `body` runs. */
async function logged<T>(body: () => T | Promise<T>): Promise<{ value: T; lines: string[] }> {
  const lines: string[] = [];
  const before = setLogSink((line) => lines.push(line));
  try {
    return { value: await body(), lines };
  } finally {
    setLogSink(before);
  }
}

test('changes appended are read back in order and fold into the takedowns in force', async (t) => {
  const file = takedownFilePath(scratchDir(t));
  const changes: TakedownChange[] = [
    { op: 'add', kind: 'url', target: 'http://a.example/x', reason: 'court order «7»', time: TIME },
    { op: 'add', kind: 'site', target: 'b.example', reason: 'spam', time: TIME },
    { op: 'add', kind: 'prefix', target: 'http://c.example/private/', reason: 'privacy', time: TIME },
    { op: 'remove', kind: 'site', target: 'b.example', time: TIME },
  ];
  for (const change of changes) await appendTakedown(file, change);
  assert.deepEqual(readTakedownsStrict(file), changes);
  const set = TakedownSet.of(changes);
  assert.deepEqual(
    set.entries.map((e) => [e.kind, e.target]),
    [
      ['url', 'http://a.example/x'],
      ['prefix', 'http://c.example/private/'],
    ],
  );
  assert.equal(set.hides('http://b.example/'), false);
  assert.equal(readFileSync(file, 'utf8').split('\n').length, 5);
});

test('a torn tail is named by file and offset, ignored, and cut before the next append; earlier lines stay', async (t) => {
  const file = takedownFilePath(scratchDir(t));
  await appendTakedown(file, { op: 'add', kind: 'url', target: 'http://a.example/1', reason: 'r', time: TIME });
  const whole = readFileSync(file).length;
  // A writer killed mid-line: half of a second line, no LF.
  appendFileSync(file, takedownLine({ op: 'add', kind: 'url', target: 'http://a.example/2', reason: 'r', time: TIME }).slice(0, 30));
  const read = await logged(() => new TakedownFile(file).current());
  assert.deepEqual(read.value.entries.map((e) => e.target), ['http://a.example/1']);
  assert.ok(read.lines.some((l) => l.startsWith('<4>') && l.includes(`file=${file}`) && l.includes(`offset=${whole}`)), read.lines.join('\n'));
  await logged(() => appendTakedown(file, { op: 'add', kind: 'url', target: 'http://a.example/3', reason: 'r', time: TIME }));
  const after = readTakedowns(file);
  assert.deepEqual([after.damage, after.tornAt], [[], undefined]);
  assert.deepEqual(after.changes.map((c) => c.target), ['http://a.example/1', 'http://a.example/3']);
});

test('a damaged line in the middle is SHERLOCK_CORRUPT_TAKEDOWNS naming file and line; the daemons log it and fold the rest', async (t) => {
  const file = takedownFilePath(scratchDir(t));
  for (const n of [1, 2, 3]) await appendTakedown(file, { op: 'add', kind: 'url', target: `http://a.example/${n}`, reason: 'r', time: TIME });
  const bytes = readFileSync(file);
  const second = bytes.indexOf('\n') + 1;
  // One flipped byte in the second line's target.
  bytes[bytes.indexOf('a.example/2', second)] = 'b'.charCodeAt(0);
  writeFileSync(file, bytes);
  assert.throws(
    () => readTakedownsStrict(file),
    (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_TAKEDOWNS') && err.place.file === file && err.place.offset === second && /^line 2: CRC-32 mismatch/.test(err.message),
  );
  const read = await logged(() => new TakedownFile(file).current());
  assert.deepEqual(read.value.entries.map((e) => e.target), ['http://a.example/1', 'http://a.example/3']);
  assert.ok(read.lines.some((l) => l.startsWith('<3>') && l.includes('line=2')), read.lines.join('\n'));
});

test('a file that cannot be read keeps the set read before and is logged once per problem, then once when readable again', async (t) => {
  const dir = scratchDir(t);
  const file = takedownFilePath(dir);
  await appendTakedown(file, { op: 'add', kind: 'url', target: 'http://a.example/x', reason: 'r', time: TIME });
  const follower = new TakedownFile(file);
  assert.equal(follower.inForce().size, 1);
  // A directory where the file was: stat works, reading fails, at every look.
  rmSync(file);
  mkdirSync(file);
  const failing = await logged(() => Array.from({ length: 20 }, () => [follower.inForce().size, follower.poll()]));
  assert.ok(failing.value.every(([size, polled]) => size === 1 && polled === undefined), JSON.stringify(failing.value));
  assert.equal(failing.lines.filter((line) => line.includes('cannot read the takedown file')).length, 1, failing.lines.join('\n'));
  rmdirSync(file);
  await appendTakedown(file, { op: 'add', kind: 'site', target: 'b.example', reason: 'r', time: TIME });
  const back = await logged(() => [follower.inForce().size, follower.inForce().size]);
  assert.deepEqual(back.value, [1, 1]);
  assert.ok(follower.inForce().hidesAny('http://www.b.example/'));
  assert.equal(back.lines.filter((line) => line.includes('readable again')).length, 1, back.lines.join('\n'));
});

test('lines that decode but break the format are damage, each named', (t) => {
  const file = join(scratchDir(t), 'takedowns');
  const good = takedownLine({ op: 'add', kind: 'url', target: 'http://a.example/', reason: 'r', time: TIME });
  // A line with a right CRC around any JSON.
  const json = (value: unknown): string => {
    const text = JSON.stringify(value);
    return `${crc32(Buffer.from(text, 'utf8')).toString(16).padStart(8, '0')} ${text}\n`;
  };
  writeFileSync(file, [json({ op: 'drop', kind: 'url', target: 'http://a.example/', time: TIME }), json({ op: 'add', kind: 'url', target: 'HTTP://A.example', time: TIME }), 'garbage\n', good].join(''));
  const read = readTakedowns(file);
  assert.deepEqual(
    read.damage.map((d) => [d.line, d.problem]),
    [
      [1, 'op is "drop"'],
      [2, 'target "HTTP://A.example" is not in canonical form'],
      [3, 'not CRC SPACE JSON'],
    ],
  );
  assert.equal(read.changes.length, 1);
});

test('targets are put in canonical form; a bad one is SHERLOCK_BAD_URL', () => {
  assert.equal(takedownTarget('url', 'HTTP://Example.ORG:80/a%7eb'), 'http://example.org/a~b');
  assert.equal(takedownTarget('prefix', 'https://example.org'), 'https://example.org/');
  assert.equal(takedownTarget('site', 'Example.ORG'), 'example.org');
  for (const [kind, bad] of [
    ['url', 'ftp://example.org/'],
    ['site', 'http://example.org/'],
    ['site', 'example.org:8080'],
  ] as const) {
    assert.throws(() => takedownTarget(kind, bad), (err: unknown) => isSherlockError(err, 'SHERLOCK_BAD_URL'), `${kind} ${bad}`);
  }
});

test('thousands of takedowns of each kind match exactly what they name', () => {
  const changes: TakedownChange[] = [];
  for (let i = 0; i < 3000; i++) {
    changes.push({ op: 'add', kind: 'url', target: `http://u${i}.example/page`, reason: '', time: TIME });
    changes.push({ op: 'add', kind: 'site', target: `s${i}.example`, reason: '', time: TIME });
    changes.push({ op: 'add', kind: 'prefix', target: `http://p.example/d${i}/`, reason: '', time: TIME });
  }
  // A prefix covering others, and one covered.
  changes.push({ op: 'add', kind: 'prefix', target: 'http://q.example/a', reason: '', time: TIME });
  changes.push({ op: 'add', kind: 'prefix', target: 'http://q.example/ab/c', reason: '', time: TIME });
  const set = TakedownSet.of(changes);
  const cases: Array<[string, boolean]> = [
    ['http://u17.example/page', true],
    ['http://u17.example/page2', false],
    ['https://u17.example/page', false],
    ['http://s17.example/', true],
    ['https://www.s17.example:8443/x', true],
    ['http://deep.sub.s2999.example/y?z', true],
    ['http://xs17.example/', false],
    ['http://s17.example.org/', false],
    ['http://p.example/d17/', true],
    ['http://p.example/d17/x/y', true],
    ['http://p.example/d17', false],
    ['http://p.example/d1/x', true],
    ['http://p.example/d3000/', false],
    ['http://q.example/ab/d', true],
    ['http://q.example/b', false],
  ];
  const started = performance.now();
  for (let round = 0; round < 1000; round++) for (const [url, hidden] of cases) assert.equal(set.hides(url), hidden, url);
  // 15 000 lookups among 9000 takedowns: well under a second, a lookup no scan of the list.
  assert.ok(performance.now() - started < 1000);
});
