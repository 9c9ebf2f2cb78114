/**
 * Redirect chains (merge.ts resolveRedirects) followed to their end, loops
 * and dead ends leading nowhere; and the signature search (signatures.ts)
 * finding every pair within the threshold, whatever band holds the agreement.
 */

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { CARD_FLAG } from '../../common/index/cardinfo.js';
import { LinksWriter } from '../../common/index/fingerprints.js';
import { fingerprint } from '../../common/url.js';
import { CardFinder } from '../../indexer/cards.js';
import { NOWHERE, resolveRedirects } from '../../indexer/merge.js';
import { nearDuplicates, signaturesWriter } from '../../indexer/signatures.js';
import { scratchDir } from '../helpers/paths.js';

const url = (n: number) => `http://example.org/p${n}`;

test('redirect chains end at the first card with text; loops and empty ends lead nowhere', (t) => {
  const dir = scratchDir(t);
  // 0 → 1 → 2 (text); 3 → 4 → 3 (loop); 5 → 6 (empty, no redirect); 7 → a URL we have no card for; 8 text.
  const redirects: [number, string][] = [[0, url(1)], [1, url(2)], [3, url(4)], [4, url(3)], [5, url(6)], [7, url(99)]];
  const flags = Uint8Array.from([1, 1, 0, 1, 1, 1, 1, 1, 0], (empty) => (empty === 1 ? CARD_FLAG.empty : 0));
  const links = new LinksWriter(join(dir, 'Links'));
  for (const [source, target] of redirects) links.add({ source, target: fingerprint(target), type: 'Y' });
  links.add({ source: 8, target: fingerprint(url(0)), type: 'R' });
  links.finish();
  const finder = new CardFinder(Buffer.concat(Array.from({ length: 9 }, (_, i) => fingerprint(url(i)))));
  const final = resolveRedirects(join(dir, 'Links'), finder, flags);
  assert.deepEqual([...final], [2, 2, NOWHERE, NOWHERE, NOWHERE, NOWHERE, NOWHERE, NOWHERE, NOWHERE]);
});

test('the banded search finds every pair of signatures with at least threshold equal min-hashes', (t) => {
  const dir = scratchDir(t);
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 8 }), fc.array(fc.integer({ min: 0, max: 31 }), { maxLength: 12 }), (seed, differ) => {
      const file = join(dir, 'Signatures');
      const hashes = 32;
      const base = Uint32Array.from({ length: hashes }, (_, i) => (i + 1) * 2654435761 + seed);
      const other = Uint32Array.from(base);
      for (const i of differ) other[i] = other[i]! ^ 0x5555;
      const writer = signaturesWriter(file);
      [base, other].forEach((signature, card) => {
        const record = Buffer.alloc(4 * (hashes + 1));
        record.writeUInt32LE(card, 0);
        signature.forEach((h, i) => record.writeUInt32LE(h >>> 0, 4 + 4 * i));
        writer.write(record, 1);
      });
      writer.finish([hashes]);
      const pairs: string[] = [];
      nearDuplicates(file, 24, () => true, (a, b) => pairs.push(`${a}-${b}`));
      const same = base.reduce((n, h, i) => n + (h === other[i] ? 1 : 0), 0);
      assert.equal(pairs.length > 0, same >= 24, `${same} equal`);
    }),
  );
});
