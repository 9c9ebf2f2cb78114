/**
 * The bare search loop (bare-search-run.ts) as a row of a scale run's
 * searching table: matching alone, in plain TypeScript over positions
 * decoded beforehand, on the index sherlock built in the same run. It bounds
 * what any searcher written in TypeScript reaches on the query set while it
 * counts every match and verifies every phrase over word positions, as
 * sherlock's searcher does (issue 31: the in-process p99 against Lucene's).
 */

import { join } from 'node:path';
import { check, run } from '../measure.js';
import type { BenchContext, SearchResult } from '../parts.js';
import { stateDir } from '../sherlock.js';

/** A scale run's searches take minutes at a million documents; past this the row fails. */
const TIMEOUT_MS = 1_800_000;

export const bareSearch = {
  name: 'bare search loop, matching only (a floor)',
  how:
    'bare search loop (bench/peers/bare-search-run.ts): each query\'s words in their exact forms only, their cards and positions (text and metas) decoded from ' +
    "sherlock's WordIndex into plain arrays beforehand (not timed); timed: the terms' cards intersected smallest first by galloping, a phrase's " +
    'candidates kept where its words stand in a row; no scores, top 10, facets or cards, duplicates not counted; the same passes and warm-up, each query\'s one after the other. ' +
    'It bounds what a TypeScript searcher that counts every match and verifies every phrase over positions reaches on this machine.',
  async search(ctx: BenchContext): Promise<SearchResult> {
    const r = check(
      'bare search loop',
      await run(process.execPath, [join(ctx.distDir, 'peers', 'bare-search-run.js'), stateDir(ctx), ctx.queryFile, String(ctx.opts.passes), String(ctx.opts.warmup)], {
        timeoutMs: TIMEOUT_MS,
      }),
    );
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as { latenciesMs: number[]; zeroHits: number };
    return { latenciesMs: out.latenciesMs, zeroHits: out.zeroHits, peakRss: r.peakRss };
  },
};
