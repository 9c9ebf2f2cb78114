/**
 * The shepherd's metrics: URLs by state and sites (counted on a read-only
 * connection, at most every URL_COUNT_MS, since counting 10 million rows
 * takes a while and blocks the loop), cycles, what they merged, planned and
 * found, and the size of the plans.
 */

import { logger } from '../common/log.js';
import type { Counter, Histogram, Registry } from '../common/service/metrics.js';
import type { CycleReport } from './shepherd.js';
import { readShepherdStatus } from './status.js';
import { URL_STATES, type UrlDbStats } from './urldb.js';

const log = logger('shepherd');

/** The URL counts are this old at most. */
const URL_COUNT_MS = 30_000;

/** URLs per plan file. */
const PLAN_SIZES = [1, 10, 100, 1000, 10_000, 100_000] as const;

export class ShepherdMetrics {
  private readonly cycles: Counter;
  private readonly merged: Counter;
  private readonly newUrls: Counter;
  private readonly planned: Counter;
  private readonly planSize: Histogram;

  constructor(registry: Registry, state: string) {
    let counted: UrlDbStats | undefined;
    let countedAt = 0;
    registry.onCollect(() => {
      if (Date.now() - countedAt < URL_COUNT_MS) return;
      countedAt = Date.now();
      try {
        counted = readShepherdStatus(state);
      } catch (err) {
        // A scrape must not fail (nor take the daemon down) over one count; the last one stays.
        log.warning('URLs not counted for /metrics', { problem: err instanceof Error ? err.message : String(err) });
      }
    });
    registry.gauge({
      name: 'sherlock_shepherd_urls',
      help: `URLs in the URL database by state (counted at most every ${URL_COUNT_MS / 1000} s).`,
      labels: { state: URL_STATES },
      read: () => (counted === undefined ? [] : URL_STATES.map((s) => [{ state: s }, counted!.urls[s]])),
    });
    registry.gauge({ name: 'sherlock_shepherd_sites', help: 'Sites in the URL database.', read: () => counted?.sites ?? 0 });
    this.cycles = registry.counter({ name: 'sherlock_shepherd_cycles_total', help: 'Cycles run (take seeds, merge, plan).' });
    this.merged = registry.counter({ name: 'sherlock_shepherd_merged_total', help: 'Stored objects merged into the URL database.' });
    this.newUrls = registry.counter({ name: 'sherlock_shepherd_new_urls_total', help: 'URLs found by merged links and added.' });
    this.planned = registry.counter({ name: 'sherlock_shepherd_planned_total', help: 'URLs planned for the gatherer.' });
    this.planSize = registry.histogram({ name: 'sherlock_shepherd_plan_size_urls', help: 'URLs per plan handed to the gatherer.', buckets: PLAN_SIZES });
  }

  cycle(report: CycleReport): void {
    this.cycles.inc();
    this.merged.inc(undefined, report.merged);
    this.newUrls.inc(undefined, report.newUrls);
    this.planned.inc(undefined, report.planned);
    if (report.planned > 0) this.planSize.observe(report.planned);
  }
}
