/**
 * A title's meta weight by its length in words (indexer/chew-worker.ts
 * titleWeight), section numbers left out.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { titleWeight } from '../../indexer/chew-worker.js';

test('a title weighs more the fewer words it has, and section numbers are not words of it', () => {
  assert.equal(titleWeight('Koláče'), 3);
  assert.equal(titleWeight('pg_checksums'), 3);
  assert.equal(titleWeight('Data Checksums'), 3);
  // Before, the numbers made "30.2. Data Checksums" four positions: below pg_checksums for "checksums".
  assert.equal(titleWeight('30.2. Data Checksums'), 3);
  assert.equal(titleWeight('20.11. Client Connection Defaults'), 2);
  assert.equal(titleWeight('Chapter 28. Monitoring Database Activity'), 2);
  assert.equal(titleWeight('How to make the best plum dumplings of the whole village'), 0);
  assert.equal(titleWeight('2024'), 3);
});
