/**
 * The anchor refs of the link stage (indexer/anchor-refs.ts): whatever the
 * memory, and so however many runs are spilled, the refs come back card by
 * card in the order they were added.
 */

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { AnchorRefs } from '../../indexer/anchor-refs.js';
import { END } from '../../indexer/runs.js';
import { scratchDir } from '../helpers/paths.js';

/** Every ref of `refs` read back through AnchorRefs with `memory` bytes, card by card, and the runs it spilled. */
function regrouped(dir: string, cards: number, refs: [number, number, number][], memory: number): { out: [number, number, number][]; spilled: number } {
  const anchors = new AnchorRefs(dir, cards, memory);
  try {
    for (const [card, word, position] of refs) anchors.add(card, word, position);
    anchors.finish();
    const out: [number, number, number][] = [];
    for (let card = anchors.nextCard(); card !== END; card = anchors.nextCard()) anchors.take(card, (word, position) => out.push([card, word, position]));
    return { out, spilled: anchors.spilled };
  } finally {
    anchors.remove();
  }
}

test('anchor refs come back by card, in the order added, the same whether they stay in memory or spill many runs', (t) => {
  const root = scratchDir(t);
  let runs = 0;
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 49 }), fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 0, max: 2047 })), { maxLength: 3000 }), (refs) => {
      const dir = join(root, `anchors-${runs++}`);
      // The smallest chunk holds 1,024 refs: 3,000 refs spill up to two runs.
      const small = regrouped(dir, 50, refs, 1);
      const large = regrouped(dir, 50, refs, 1 << 20);
      const expected = refs.map((ref, i) => ({ ref, i })).sort((a, b) => a.ref[0] - b.ref[0] || a.i - b.i).map(({ ref }) => ref);
      assert.deepEqual(small.out, expected);
      assert.deepEqual(large.out, expected);
      assert.equal(small.spilled, Math.floor(refs.length / 1024) - (refs.length % 1024 === 0 && refs.length > 0 ? 1 : 0));
      assert.equal(large.spilled, 0);
      assert.equal(existsSync(dir), false, 'the runs are removed');
    }),
    { numRuns: 40 },
  );
});
