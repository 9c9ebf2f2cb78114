/**
 * common/gather/status.ts: the snapshot reads back as written, replaced whole;
 * a damaged or foreign file is an error naming it, and the writer writes none
 * its reader would refuse; times far off stay readable; a snapshot is live
 * only while it says running and is fresh.
 */

import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { GATHER_STATUS_FORMAT, STALE_MS, gatherStatusPath, isLive, readGatherStatus, statusTime, writeGatherStatus, type GatherStatusSnapshot } from '../../../common/gather/status.js';
import { isSherlockError } from '../../../common/errors.js';
import { scratchDir } from '../../helpers/paths.js';

function snapshot(fields: Partial<GatherStatusSnapshot> = {}): GatherStatusSnapshot {
  const now = new Date().toISOString();
  return {
    format: GATHER_STATUS_FORMAT,
    pid: 1234,
    running: true,
    time: now,
    started: now,
    fetches: 10,
    bytes: 2048,
    stored: 11,
    robots_fetches: 1,
    retries: 0,
    rate: 2.5,
    in_flight: 1,
    queued: 7,
    hosts: 2,
    outcomes: { ok: 9, http_4xx: 1 },
    errors: { http_4xx: 1 },
    busiest_hosts: [{ host: 'http://a.example', queued: 5 }],
    delayed_hosts: [{ host: 'http://b.example', queued: 2, until: now, errors: 3 }],
    arc: { file: 'sherlock-1.arc.gz', bytes: 4096 },
    ...fields,
  };
}

test('a snapshot reads back as written, and a rewrite replaces it whole (no temporary file left)', (t) => {
  const state = scratchDir(t);
  mkdirSync(join(state, 'gather'));
  assert.equal(readGatherStatus(state), undefined);
  const first = snapshot();
  writeGatherStatus(state, first);
  assert.deepEqual(readGatherStatus(state), first);
  writeGatherStatus(state, snapshot({ fetches: 11, running: false, arc: null }));
  const read = readGatherStatus(state)!;
  assert.equal(read.fetches, 11);
  assert.equal(read.arc, null);
  assert.deepEqual(readdirSync(join(state, 'gather')), ['status.json']);
});

test('a damaged or foreign snapshot is SHERLOCK_CORRUPT_STATUS naming the file and the field', (t) => {
  const state = scratchDir(t);
  mkdirSync(join(state, 'gather'));
  const path = gatherStatusPath(state);
  const cases: [string, RegExp][] = [
    ['{"format":', /not JSON/],
    [JSON.stringify({ ...snapshot(), fetches: -1 }), /fetches/],
    [JSON.stringify({ ...snapshot(), format: 'other/1' }), /format/],
    [JSON.stringify({ ...snapshot(), extra: 1 }), /snapshot|extra/],
    [JSON.stringify({ ...snapshot(), busiest_hosts: Array.from({ length: 6 }, () => ({ host: 'x', queued: 1 })) }), /busiest_hosts/],
  ];
  for (const [text, message] of cases) {
    writeFileSync(path, text);
    assert.throws(
      () => readGatherStatus(state),
      (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_STATUS') && err.place.file === path && message.test(err.message),
      text,
    );
  }
});

test('statusTime keeps any time in the years 1970–9999, so a host delayed until the year 33715 reads back', (t) => {
  const state = scratchDir(t);
  mkdirSync(join(state, 'gather'));
  const cases: [number, string][] = [
    [Date.UTC(2024, 0, 15, 12), '2024-01-15T12:00:00.000Z'],
    [999_999_999_999_000 + Date.UTC(2024, 0, 1), '9999-12-31T23:59:59.999Z'], // Retry-After: 999999999999, uncapped
    [8.64e15 + 1, '9999-12-31T23:59:59.999Z'], // past what Date holds: toISOString() would throw
    [Infinity, '9999-12-31T23:59:59.999Z'],
    [-1, '1970-01-01T00:00:00.000Z'],
    [NaN, '1970-01-01T00:00:00.000Z'],
  ];
  for (const [ms, text] of cases) {
    assert.equal(statusTime(ms), text, String(ms));
    writeGatherStatus(state, snapshot({ delayed_hosts: [{ host: 'http://far.example', queued: 1, until: statusTime(ms), errors: 1 }] }));
    assert.equal(readGatherStatus(state)!.delayed_hosts[0]!.until, text);
  }
});

test('the writer refuses a snapshot its reader would refuse, SHERLOCK_CORRUPT_STATUS naming the field, and keeps the last good one', (t) => {
  const state = scratchDir(t);
  mkdirSync(join(state, 'gather'));
  const good = snapshot();
  writeGatherStatus(state, good);
  const far = snapshot({ delayed_hosts: [{ host: 'http://far.example', queued: 1, until: new Date(1e15).toISOString(), errors: 1 }] });
  assert.match(far.delayed_hosts[0]!.until, /^\+033658-/);
  assert.throws(
    () => writeGatherStatus(state, far),
    (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_STATUS') && err.place.file === gatherStatusPath(state) && /delayed_hosts\.0\.until/.test(err.message),
  );
  assert.deepEqual(JSON.parse(readFileSync(gatherStatusPath(state), 'utf8')), good);
  assert.deepEqual(readdirSync(join(state, 'gather')), ['status.json']);
});

test('live only while running and fresh', () => {
  const now = Date.now();
  assert.equal(isLive(snapshot({ time: new Date(now - 1000).toISOString() }), now), true);
  assert.equal(isLive(snapshot({ time: new Date(now - STALE_MS - 1).toISOString() }), now), false);
  assert.equal(isLive(snapshot({ running: false }), now), false);
});
