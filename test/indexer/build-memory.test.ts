/**
 * Peak memory of the postings sort is bounded by `indexer.memory_budget`:
 * a build with a tiny budget spills many sorted runs and merges them, and
 * must write exactly the bytes of a build that sorts everything in memory,
 * whatever the number of worker threads. Its vocabulary, past its share of
 * the budget, is spilled in segments (indexer/segments.ts) and merged: the
 * word lists, the Lexicon and WordIndex are the same bytes; only Postings and
 * AnchoredPostings, which name words by their temporary numbers then, differ.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { MANIFEST_NAME, verifyIndexDir } from '../../common/index/manifest.js';
import { scratchDir } from '../helpers/paths.js';
import { buildCli, crawlSite } from './site.js';

test('a build with a tiny memory budget spills runs and writes the same bytes as one that sorts in memory', async (t) => {
  const state = scratchDir(t);
  await crawlSite(state, { address: '127.0.0.73', bulk: 10 });
  const small = await buildCli(state, ['indexer.memory_budget=64KiB', 'indexer.workers=1'], ['--keep-work']);
  const large = await buildCli(state, ['indexer.memory_budget=1GiB', 'indexer.workers=2'], ['--keep-work']);
  assert.ok(small.report.spilled >= 4, `the tiny budget spilled ${small.report.spilled} runs`);
  assert.equal(large.report.spilled, 0, 'the large budget sorted in memory');
  assert.ok(small.report.vocabularySegments >= 2, `the tiny budget spilled the vocabulary in ${small.report.vocabularySegments} segments`);
  assert.equal(large.report.vocabularySegments, 0, 'the large budget held the vocabulary');
  const files = verifyIndexDir(small.report.dir).files.map((f) => f.name);
  assert.deepEqual(verifyIndexDir(large.report.dir).files.map((f) => f.name), files);
  const temporary = new Set([MANIFEST_NAME, 'Postings', 'AnchoredPostings']);
  for (const name of files.filter((n) => !temporary.has(n))) {
    assert.ok(readFileSync(join(small.report.dir, name)).equals(readFileSync(join(large.report.dir, name))), `${name} is the same`);
  }
});
