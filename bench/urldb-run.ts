/**
 * Running a URL-database worker (sherlock's, bench/urldb-worker.ts, or the
 * peer's, bench/peers/urldb-worker.ts) on the synthetic set of
 * urldb-workload.ts and reading its one JSON line; the harness side of both
 * UrlDbEntry implementations. Scale: 10 million URLs on 100,000 sites, or a
 * tenth of both with --quick (the small set) so CI stays short.
 */

import { check, run } from './measure.js';
import type { BenchContext, UrlDbResult, UrlDbScale, UrlDbTiming } from './parts.js';

export function urlDbScale(ctx: BenchContext): UrlDbScale {
  return ctx.opts.set === 'small' ? { urls: 1_000_000, sites: 10_000 } : { urls: 10_000_000, sites: 100_000 };
}

/** Runs `node SCRIPT TARGET URLS SITES` under GNU time; the worker's figures, its peak RSS, and the size `sizeOf` finds. */
export async function runUrlDbWorker(what: string, script: string, target: string, scale: UrlDbScale, sizeOf: () => number): Promise<UrlDbResult> {
  const r = check(what, await run(process.execPath, [script, target, String(scale.urls), String(scale.sites)], { timeoutMs: 1_800_000 }));
  const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { added: number; inject: UrlDbTiming; plan: UrlDbTiming; merge: UrlDbTiming; planned: number };
  if (out.added !== scale.urls) throw new Error(`${what}: added ${out.added} of ${scale.urls} URLs`);
  return { ...out, urls: scale.urls, sizeBytes: sizeOf(), peakRss: r.peakRss };
}
