/**
 * A build's memory stays within `indexer.memory_budget` whatever the text:
 * pages of random words (hashes, base64, logs, machine-made pages) have as
 * many distinct words as the text has words, so the chewing workers'
 * spelling tables and the vocabulary grow with the text, not with the
 * language. The real CLI builds such a state as a child process; its peak
 * resident set (the build report's maxRss, getrusage of the whole process,
 * workers included) must stay within the shares of the budget plus the
 * fixed allowance docs/indexer.md "Memory" gives (Node's own baseline and
 * each worker's), and the index must still find the words. With 64 MiB the vocabulary alone
 * (1.8 million words, some 110 MiB held in memory) passes the whole budget,
 * so it must be spilled in segments (indexer/segments.ts).
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { BASELINE_BYTES, PER_WORKER_BYTES, sharedBudget } from '../../indexer/build.js';
import { MiB } from '../helpers/memory.js';
import { scratchDir } from '../helpers/paths.js';
import { pageUrl, pageWords, writeRandomWordsState } from '../helpers/random-words.js';

test('a build of random words (a vocabulary larger than the budget) spills it, keeps its peak RSS within the budget and finds the words', async (t) => {
  const state = scratchDir(t);
  const pages = 450;
  const words = 4000;
  writeRandomWordsState(state, { pages, words, seed: 7 });
  const budget = 64 * MiB;
  const workers = 2;
  const build = await runCli(['index', 'build', '--state', state, '--json', '--set', `indexer.memory_budget=${budget / MiB}MiB`, '--set', `indexer.workers=${workers}`], { env: { CONFIGURATION_DIRECTORY: '/nonexistent' } });
  assert.equal(build.status, 0, build.stderr);
  const report = JSON.parse(build.stdout) as { cards: number; words: number; maxRss: number; vocabularySegments: number };
  assert.equal(report.cards, pages);
  assert.ok(report.words > 0.95 * pages * words, `${report.words} distinct words: nearly every word is new`);
  assert.ok(report.vocabularySegments >= 4, `the vocabulary went to disk in ${report.vocabularySegments} segments`);
  const bound = sharedBudget(budget, workers) + BASELINE_BYTES + workers * PER_WORKER_BYTES;
  assert.ok(report.maxRss <= bound, `peak RSS ${Math.round(report.maxRss / MiB)} MiB, bound ${bound / MiB} MiB (budget ${budget / MiB} MiB)`);
  for (const page of [0, 224, 449]) {
    const word = pageWords(7, page, words)[1234]!;
    const found = await runCli(['search', '--state', state, '--json', word], { env: { CONFIGURATION_DIRECTORY: '/nonexistent' } });
    assert.equal(found.status, 0, found.stderr);
    assert.ok(found.stdout.includes(pageUrl(page)), `${word} finds ${pageUrl(page)}: ${found.stdout.slice(0, 300)}`);
  }
});

test('the shares divide the budget less Node\'s and each worker\'s allowance, and at least half of it', () => {
  assert.equal(sharedBudget(1024 * MiB, 2), (1024 - 96 - 2 * 120) * MiB);
  assert.equal(sharedBudget(4096 * MiB, 8), (4096 - 96 - 8 * 120) * MiB);
  assert.equal(sharedBudget(512 * MiB, 2), 256 * MiB, 'a budget under twice the allowance keeps half for the shares');
  assert.equal(sharedBudget(64 * MiB, 1), 32 * MiB);
});
