/**
 * HostRanking, the status snapshot's host lists picked during one walk: the
 * same lists as sorting a row of every host (the way they were made before
 * the walk had to stay cheap at 10,000 hosts), ties in walk order.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { TOP_HOSTS } from '../../common/gather/status.js';
import { HostRanking, type HostRow } from '../../gatherer/live-status.js';

const NOW = 1_800_000_000_000;

/** The lists as a full sort makes them (Array.prototype.sort is stable). */
function sorted(rows: readonly HostRow[]): { busiest: HostRow[]; delayed: HostRow[] } {
  return {
    busiest: [...rows].sort((a, b) => b.queued - a.queued).slice(0, TOP_HOSTS),
    delayed: rows
      .filter((h) => h.nextAt > NOW)
      .sort((a, b) => b.nextAt - a.nextAt)
      .slice(0, TOP_HOSTS),
  };
}

test('the ranking lists what sorting every host lists, ties in walk order', () => {
  const row = fc.record({ queued: fc.integer({ min: 1, max: 6 }), nextAt: fc.integer({ min: NOW - 3, max: NOW + 3 }), errors: fc.nat(3) });
  fc.assert(
    fc.property(fc.array(row, { maxLength: 40 }), (drawn) => {
      const rows: HostRow[] = drawn.map((r, i) => ({ host: `http://h${i}.test`, ...r }));
      const ranking = new HostRanking(NOW);
      for (const r of rows) ranking.offer(r.queued, r.nextAt, () => r);
      assert.deepEqual({ busiest: ranking.busiest, delayed: ranking.delayed }, sorted(rows));
    }),
    { numRuns: 500 },
  );
});

test('a row is made only for a host that enters a list', () => {
  const ranking = new HostRanking(NOW);
  let made = 0;
  // Falling queue lengths, all due now: after the first TOP_HOSTS, none beats the last one listed.
  for (let i = 0; i < 1000; i++) {
    ranking.offer(1000 - i, NOW, () => {
      made += 1;
      return { host: `http://h${i}.test`, queued: 1000 - i, errors: 0, nextAt: NOW };
    });
  }
  assert.equal(made, TOP_HOSTS);
  assert.deepEqual(ranking.delayed, []);
  assert.deepEqual(
    ranking.busiest.map((h) => h.queued),
    Array.from({ length: TOP_HOSTS }, (_, i) => 1000 - i),
  );
});
