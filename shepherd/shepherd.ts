/**
 * The shepherd's cycle (DESIGN §5, sherlock-original §3): inject seeds, merge
 * what the gatherer stored (results and links, from the bucket file after a
 * checkpoint), plan what is due into the gatherer's inbox. `sherlock shepherd
 * run` repeats the cycle; `sherlock crawl` runs it beside a gatherer.
 *
 * Restartable at every step:
 *   merge  each batch of reports is applied and the bucket checkpoint moved
 *          in one database transaction: after a crash the batch is read
 *          again, and results older than what a row holds are ignored
 *          (urldb.ts recordResult), so a batch applied twice changes nothing;
 *   plan   the plan file is written (fsync, rename) before its URLs are
 *          marked queued. A crash between the two leaves them `new`, so they
 *          are planned again: the gatherer may fetch them twice, never zero
 *          times. URLs queued whose result never comes back (a gatherer
 *          state lost) are due again after shepherd.requeue_after.
 *
 * Scope: the seeds (kept in the database, meta `seeds`) and the [shepherd]
 * rules (scope.ts) judge every link before it is added.
 */

import { BucketReader, bucketFilePath } from '../common/bucket-file.js';
import { isSherlockError, type SherlockError } from '../common/errors.js';
import { logger } from '../common/log.js';
import { listPlans, writePlan } from '../common/plan-file.js';
import { footprint } from '../common/url.js';
import type { ShepherdConfig } from './config.js';
import { readReports, type FetchResult } from './results.js';
import { Scope } from './scope.js';
import { UrlDb, type InjectCounts } from './urldb.js';
import { existsSync } from 'node:fs';

const log = logger('shepherd');

/** Reports merged per transaction. */
const MERGE_BATCH = 2000;
const CHECKPOINT = 'bucket_checkpoint';
const SEEDS = 'seeds';

export interface CycleReport {
  merged: number;
  fetched: number;
  newUrls: number;
  refusedLinks: number;
  planned: number;
  /** Outcome codes of the fetches merged, by class: ok, redirect, not_modified, temporary, permanent. */
  outcomes: Record<string, number>;
}

export interface PlanOptions {
  /** URLs per plan file. */
  limit: number;
  /** At most this many URLs of one site per plan. */
  perSite: number;
}

export class Shepherd {
  private scope: Scope;

  private constructor(
    readonly state: string,
    private config: ShepherdConfig,
    readonly db: UrlDb,
  ) {
    this.scope = new Scope(config, this.seeds());
  }

  static open(state: string, config: ShepherdConfig): Shepherd {
    return new Shepherd(state, config, UrlDb.open(state, config));
  }

  close(): void {
    this.db.close();
  }

  /** Adds seed URLs (depth 0); they also define the scope. */
  inject(urls: readonly string[], now: number): InjectCounts & { outOfScope: number } {
    const seeds = new Set(this.seeds());
    const accepted: string[] = [];
    let outOfScope = 0;
    const candidate = new Scope(this.config, [...seeds, ...urls.flatMap((u) => this.normalised(u))]);
    for (const url of urls) {
      const verdict = candidate.judge(url, { seed: true });
      if (verdict.ok) accepted.push(verdict.url);
      else outOfScope += 1;
    }
    for (const url of accepted) seeds.add(url);
    let counts: InjectCounts = { added: 0, known: 0, refused: 0 };
    this.db.transaction(() => {
      counts = this.db.inject(
        accepted.map((url) => ({ url, depth: 0 })),
        now,
      );
      this.db.setMeta(SEEDS, JSON.stringify([...seeds]));
    });
    this.scope = new Scope(this.config, [...seeds]);
    return { ...counts, outOfScope };
  }

  /** Merges every report stored since the checkpoint, in batches of one transaction each. */
  merge(now: number, report: CycleReport = emptyReport()): CycleReport {
    const file = bucketFilePath(this.state);
    if (!existsSync(file)) return report;
    const reader = BucketReader.open(file);
    try {
      for (;;) {
        const from = Number(this.db.getMeta(CHECKPOINT) ?? 1);
        const onBad = (oid: number, err: SherlockError) => log.warning('bucket skipped', { oid, problem: err.message });
        const onDamage = (d: { offset: number; message: string }) => log.warning('damaged stretch of the bucket file skipped', { offset: d.offset, problem: d.message });
        const { reports, next } = readReports(reader, { from, limit: MERGE_BATCH, onBad, onDamage });
        if (reports.length === 0) {
          if (next !== from) this.db.transaction(() => this.db.setMeta(CHECKPOINT, next));
          return report;
        }
        this.db.transaction(() => {
          for (const r of reports) {
            report.merged += 1;
            if (r.kind === 'fetch') this.mergeFetch(r.result, now, report);
          }
          this.db.setMeta(CHECKPOINT, next);
        });
      }
    } finally {
      reader.close();
    }
  }

  private mergeFetch(result: FetchResult, now: number, report: CycleReport): void {
    report.fetched += 1;
    const cls = classOf(result.code);
    report.outcomes[cls] = (report.outcomes[cls] ?? 0) + 1;
    let state;
    try {
      state = this.db.recordResult(result, now);
    } catch (err) {
      if (!isSherlockError(err, 'SHERLOCK_BAD_URL')) throw err;
      log.warning('result for a URL with no canonical form skipped', { url: result.url.slice(0, 200) });
      return;
    }
    if (state === undefined || result.links.length === 0) return;
    const row = this.db.get(result.url);
    if (row === undefined) return;
    const links: string[] = [];
    for (const link of result.links) {
      const verdict = this.scope.judge(link, { url: row.url, depth: row.depth });
      if (verdict.ok) links.push(verdict.url);
      else report.refusedLinks += 1;
    }
    if (links.length === 0) return;
    const counts = this.db.addLinks(footprint(row.url), links, row.depth, now);
    report.newUrls += counts.added;
    report.refusedLinks += counts.refused;
  }

  /** Writes the URLs due now into a plan in the gatherer's inbox, then marks them queued. */
  plan(now: number, options: PlanOptions, report: CycleReport = emptyReport()): CycleReport {
    const due = this.db.due(now, options.limit, options.perSite);
    if (due.length === 0) return report;
    writePlan(
      this.state,
      due.map((d) => ({
        url: d.url,
        priority: d.priority,
        ...(d.ifModifiedSince === undefined ? {} : { ifModifiedSince: d.ifModifiedSince }),
        ...(d.ifNoneMatch === undefined ? {} : { ifNoneMatch: d.ifNoneMatch }),
      })),
    );
    this.db.markQueued(
      due.map((d) => d.footprint),
      now,
    );
    report.planned += due.length;
    return report;
  }

  /** Whether plans written are still waiting in the inbox. */
  plansWaiting(): boolean {
    return listPlans(this.state).length > 0;
  }

  private seeds(): string[] {
    const text = this.db.getMeta(SEEDS);
    return typeof text === 'string' ? (JSON.parse(text) as string[]) : [];
  }

  private normalised(url: string): string[] {
    try {
      return [this.scope.normalise(url)];
    } catch {
      return [];
    }
  }
}

export function emptyReport(): CycleReport {
  return { merged: 0, fetched: 0, newUrls: 0, refusedLinks: 0, planned: 0, outcomes: {} };
}

/** The class of a gatherer code, for summaries. */
export function classOf(code: number): string {
  if (code === 0) return 'ok';
  if (code === 1) return 'redirect';
  if (code === 3) return 'not_modified';
  if (code >= 1000 && code < 2000) return 'temporary';
  return code === 2304 ? 'robots_denied' : 'permanent';
}
