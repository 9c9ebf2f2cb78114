/**
 * Plan files (common/gather/plan-file.ts): what is written reads back the same, and
 * every kind of damage or malformed line refuses the whole plan with
 * SHERLOCK_CORRUPT_PLAN naming the file and the byte offset of the fault.
 */

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import test from 'node:test';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { isSherlockError } from '../../../common/errors.js';
import { PLAN_MAGIC, encodePlan, inboxDir, listPlans, readPlan, writePlan, writePlanInBackground, type PlanEntry } from '../../../common/gather/plan-file.js';
import { canonicalUrl } from '../../../common/url.js';
import { scratchDir } from '../../helpers/paths.js';

/** A plan file made of these lines, with a correct trailer unless one is given. */
function rawPlan(lines: readonly (string | Buffer)[], trailer?: (body: Buffer, count: number) => string): Buffer {
  const body = Buffer.concat(lines.map((l) => Buffer.concat([typeof l === 'string' ? Buffer.from(l, 'utf8') : l, Buffer.from('\n')])));
  const count = lines.length - 1;
  const end = trailer?.(body, count) ?? `end ${count} ${crc32(body).toString(16).padStart(8, '0')}\n`;
  return Buffer.concat([body, Buffer.from(end, 'latin1')]);
}

/** Byte offset of line `index` (0 = the magic line) of a plan. */
function lineOffset(data: Buffer, index: number): number {
  let offset = 0;
  for (let i = 0; i < index; i++) offset = data.indexOf(0x0a, offset) + 1;
  return offset;
}

function refuses(file: string, offset: number, message?: RegExp): void {
  assert.throws(
    () => readPlan(file),
    (err: unknown) => {
      assert.ok(isSherlockError(err, 'SHERLOCK_CORRUPT_PLAN'), `expected SHERLOCK_CORRUPT_PLAN, got ${String(err)}`);
      assert.equal(err.place.file, file);
      assert.equal(err.place.offset, offset, err.message);
      if (message !== undefined) assert.match(err.message, message);
      return true;
    },
  );
}

function planFile(dir: string, name: string, data: Buffer): string {
  const file = join(dir, name);
  writeFileSync(file, data);
  return file;
}

const SAMPLE: PlanEntry[] = [
  { url: 'http://a.example/', priority: 0 },
  { url: 'https://b.example:8443/x?y=1', priority: 4294967295, ifModifiedSince: 'Tue, 15 Nov 1994 08:12:31 GMT' },
  { url: 'http://a.example/%C3%A9t%C3%A9', priority: 1500000000, ifNoneMatch: 'W/"abc=def"', ifModifiedSince: 'x' },
];

const hostArb = fc.constantFrom('a.example', 'b.example', 'xn--bcher-kva.example', '127.0.0.1', '[::1]');
const segmentArb = fc.string({ unit: fc.constantFrom('a', 'b', 'Z', '0', '-', '.', '_', '~', '%', 'é', ' ', '?', '='), maxLength: 8 });
const urlArb = fc
  .tuple(fc.constantFrom('http', 'https'), hostArb, fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }), fc.array(segmentArb, { maxLength: 4 }))
  .map(([scheme, host, port, segments]) => canonicalUrl(`${scheme}://${host}${port === undefined ? '' : `:${port}`}/${segments.join('/')}`));
const hintArb = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).filter((s) => !/[\t\n\r]/.test(s));
const entryArb: fc.Arbitrary<PlanEntry> = fc.record(
  { url: urlArb, priority: fc.integer({ min: 0, max: 0xffffffff }), ifModifiedSince: hintArb, ifNoneMatch: hintArb },
  { requiredKeys: ['url', 'priority'] },
).map((e) => ({ ...e })); // plain objects: fast-check's records have a null prototype

test('a plan reads back exactly the entries written, hints included (property)', (t) => {
  const dir = scratchDir(t);
  const file = join(dir, 'p.plan');
  fc.assert(
    fc.property(fc.array(entryArb, { maxLength: 20 }), (entries) => {
      writeFileSync(file, encodePlan(entries));
      assert.deepEqual(readPlan(file), entries);
    }),
    { numRuns: 200 },
  );
});

test('writePlan puts a whole plan into the inbox and leaves no temporary file', (t) => {
  const state = scratchDir(t);
  const path = writePlan(state, SAMPLE);
  assert.equal(dirname(path), inboxDir(state));
  assert.ok(path.endsWith('.plan'));
  assert.deepEqual(readdirSync(inboxDir(state)), [basename(path)]);
  assert.deepEqual(readPlan(path), SAMPLE);
  assert.deepEqual(readFileSync(path), encodePlan(SAMPLE));
});

test('writePlanInBackground writes the same whole plan, after the ones before it, and refuses bad entries before creating anything', async (t) => {
  const state = scratchDir(t);
  const first = writePlan(state, SAMPLE.slice(0, 1));
  const path = await writePlanInBackground(state, SAMPLE);
  assert.deepEqual(readdirSync(inboxDir(state)).sort(), [basename(first), basename(path)].sort());
  assert.deepEqual(listPlans(state), [first, path]);
  assert.deepEqual(readFileSync(path), encodePlan(SAMPLE));
  await assert.rejects(writePlanInBackground(state, [{ url: 'http://a.example/', priority: -1 }]), RangeError);
  assert.deepEqual(listPlans(state), [first, path]);
});

test('writePlan of an empty plan reads back as no entries', (t) => {
  const state = scratchDir(t);
  assert.deepEqual(readPlan(writePlan(state, [])), []);
});

test('writePlan refuses bad priorities and hints before creating anything', (t) => {
  const state = scratchDir(t);
  for (const bad of [
    { url: 'http://a.example/', priority: -1 },
    { url: 'http://a.example/', priority: 2 ** 32 },
    { url: 'http://a.example/', priority: 1.5 },
    { url: 'http://a.example/', priority: 1, ifNoneMatch: 'a\tb' },
    { url: 'http://a.example/', priority: 1, ifModifiedSince: 'a\nb' },
    { url: 'http://a.example/', priority: 1, ifModifiedSince: 'a\rb' },
    { url: 'http://a.example/', priority: 1, ifNoneMatch: '' },
  ]) {
    assert.throws(() => writePlan(state, [bad]), RangeError, JSON.stringify(bad));
  }
  assert.deepEqual(listPlans(state), []);
});

test('listPlans gives plans oldest first and ignores temporary, refused and journal files', (t) => {
  const state = scratchDir(t);
  assert.deepEqual(listPlans(state), [], 'no inbox yet: no plans');
  const written = Array.from({ length: 12 }, (_, i) => writePlan(state, [{ url: `http://a.example/${i}`, priority: i }]));
  const inbox = inboxDir(state);
  writeFileSync(join(inbox, '000000000000000-1-000000.tmp'), 'x');
  writeFileSync(join(inbox, '000000000000000-1-000000.plan.bad'), 'x');
  writeFileSync(join(inbox, 'importing'), '{}');
  mkdirSync(join(inbox, 'sub'));
  assert.deepEqual(listPlans(state), written);
  // Oldest first: the i-th plan holds URL i.
  assert.deepEqual(
    listPlans(state).map((p) => readPlan(p)[0]!.priority),
    written.map((_, i) => i),
  );
});

test('a plan without its trailer is refused at the offset of its last line', (t) => {
  const dir = scratchDir(t);
  const whole = encodePlan(SAMPLE);
  const cut = whole.subarray(0, whole.lastIndexOf(0x0a, whole.length - 2) + 1);
  refuses(planFile(dir, 'cut.plan', cut), lineOffset(cut, SAMPLE.length), /trailer/);
  const magicOnly = Buffer.from(`${PLAN_MAGIC}\n`);
  refuses(planFile(dir, 'magic.plan', magicOnly), 0, /trailer/);
  refuses(planFile(dir, 'empty.plan', Buffer.alloc(0)), 0, /line feed/);
});

test('every plan cut short is refused, never read as a shorter plan', (t) => {
  const dir = scratchDir(t);
  const whole = encodePlan(SAMPLE);
  const file = join(dir, 'cut.plan');
  for (let length = 0; length < whole.length; length++) {
    const cut = whole.subarray(0, length);
    writeFileSync(file, cut);
    const offset = length === 0 || cut[length - 1] !== 0x0a ? length : cut.lastIndexOf(0x0a, length - 2) + 1;
    refuses(file, offset);
  }
});

test('a flipped byte anywhere before the trailer fails the CRC at the trailer offset', (t) => {
  const dir = scratchDir(t);
  const whole = encodePlan(SAMPLE);
  const trailerAt = whole.lastIndexOf(0x0a, whole.length - 2) + 1;
  const file = join(dir, 'flip.plan');
  for (let at = 0; at < trailerAt; at++) {
    const damaged = Buffer.from(whole);
    damaged[at]! ^= 0x01;
    writeFileSync(file, damaged);
    if (damaged[at] === 0x0a || whole[at] === 0x0a) {
      // A new or lost line feed moves line boundaries; still refused.
      assert.throws(() => readPlan(file), (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_PLAN'));
      continue;
    }
    refuses(file, trailerAt, /CRC-32/);
  }
  const badCrc = Buffer.from(whole);
  badCrc[whole.length - 2] = badCrc[whole.length - 2] === 0x30 ? 0x31 : 0x30;
  refuses(planFile(dir, 'crc.plan', badCrc), trailerAt, /CRC-32/);
});

test('a trailer whose count disagrees with the lines is refused at the trailer offset', (t) => {
  const dir = scratchDir(t);
  const lines = [PLAN_MAGIC, '1\thttp://a.example/', '2\thttp://a.example/b'];
  for (const count of [0, 1, 3, 100]) {
    const data = rawPlan(lines, (body) => `end ${count} ${crc32(body).toString(16).padStart(8, '0')}\n`);
    refuses(planFile(dir, `count${count}.plan`, data), lineOffset(data, 3), /counts/);
  }
});

test('a wrong first line is refused at offset 0', (t) => {
  const dir = scratchDir(t);
  for (const magic of ['sherlock-plan 2', 'sherlock-plan', '', 'SHERLOCK-PLAN 1', '1\thttp://a.example/']) {
    refuses(planFile(dir, 'magic.plan', rawPlan([magic, '1\thttp://a.example/'])), 0, /first line/);
  }
});

test('a file holding only a trailer (no first line) is not a plan', (t) => {
  const dir = scratchDir(t);
  refuses(planFile(dir, 'bare.plan', Buffer.from(`end 0 ${crc32(Buffer.alloc(0)).toString(16).padStart(8, '0')}\n`)), 0, /first line/);
});

/** One bad line between two good ones, refused at that line's offset. */
function refusesLine(dir: string, line: string | Buffer, message: RegExp): void {
  const data = rawPlan([PLAN_MAGIC, '1\thttp://a.example/', line, '2\thttp://a.example/z']);
  refuses(planFile(dir, 'line.plan', data), lineOffset(data, 2), message);
}

test('a URL that is not canonical is refused at its line', (t) => {
  const dir = scratchDir(t);
  for (const url of ['http://A.example/', 'http://a.example', 'http://a.example:80/', 'https://a.example:443/', 'http://a.example/%7e', 'http://a.example/a b', 'http://a.example/./x', 'http://a.example/#f']) {
    refusesLine(dir, `1\t${url}`, /not canonical/);
  }
  for (const url of ['not a url', 'ftp://a.example/', 'http://', '/relative']) refusesLine(dir, `1\t${url}`, /bad URL/);
  refusesLine(dir, '1', /no URL/);
  refusesLine(dir, '1\t', /no URL/);
});

test('a bad priority is refused at its line', (t) => {
  const dir = scratchDir(t);
  for (const priority of ['', '-1', '4294967296', '99999999999', '1.5', '0x10', ' 1', '1 ', 'one', '+1']) {
    refusesLine(dir, `${priority}\thttp://a.example/`, /bad priority/);
  }
  // The largest u32 and leading zeros are fine.
  const dirOk = scratchDir(t);
  const data = rawPlan([PLAN_MAGIC, '4294967295\thttp://a.example/', '007\thttp://a.example/']);
  assert.deepEqual(readPlan(planFile(dirOk, 'ok.plan', data)), [
    { url: 'http://a.example/', priority: 4294967295 },
    { url: 'http://a.example/', priority: 7 },
  ]);
});

test('an unknown or malformed hint is refused at its line', (t) => {
  const dir = scratchDir(t);
  for (const hint of ['x=1', 'M=date', 'etag=x', 'r=1']) refusesLine(dir, `1\thttp://a.example/\t${hint}`, /unknown hint/);
  for (const hint of ['', 'm', '=x', 'm=', 'e=']) refusesLine(dir, `1\thttp://a.example/\t${hint}`, /bad hint/);
});

test('a plan that is not UTF-8 is refused at the offset of the line holding the bad byte', (t) => {
  const dir = scratchDir(t);
  const data = rawPlan([PLAN_MAGIC, '1\thttp://a.example/', Buffer.from('1\thttp://a.example/x\te=\xff\xfe', 'latin1')]);
  refuses(planFile(dir, 'latin1.plan', data), lineOffset(data, 2), /UTF-8/);
  const magic = rawPlan([Buffer.from('sherlock-plan 1\xff', 'latin1'), '1\thttp://a.example/']);
  refuses(planFile(dir, 'magic.plan', magic), 0);
});
