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
 * Scope: the seeds' hosts (kept in the database, meta `seed_hosts`) and the
 * [shepherd] rules and the site rules' accept and reject patterns (scope.ts)
 * judge every link before it is added. Seeds come
 * through the inbox (seed-inbox.ts): `sherlock inject` and `sherlock crawl`
 * put a file there, and whoever holds the database takes it.
 *
 * Takedowns (common/takedowns.ts): the file is looked at (a stat) before
 * each plan and read again when it changed; a URL it hides is never
 * planned. Its row stays, links to it are still recorded (so a takedown
 * lifted brings it back as it was), and it is passed over at each plan.
 */

import { BucketReader, bucketFilePath } from '../common/bucket/file.js';
import { isSherlockError, type SherlockError } from '../common/errors.js';
import { CARD_FLAG } from '../common/index/cardinfo.js';
import { FEEDBACK_NAME, readFeedback, type FeedbackRecord } from '../common/index/feedback.js';
import { currentVersion, indexDirectory } from '../common/index/layout.js';
import { logger } from '../common/log.js';
import { TakedownFile, takedownFilePath } from '../common/takedowns.js';
import { listPlans, writePlan, writePlanInBackground, type PlanEntry } from '../common/gather/plan-file.js';
import { SiteRules } from '../common/site-rules.js';
import { footprint } from '../common/url.js';
import type { ShepherdConfig } from './config.js';
import { readReports, type FetchResult } from './results.js';
import { Scope, seedHost, type RejectReason } from './scope.js';
import { listSeedFiles, removeSeedFile, seedBatches } from './seed-inbox.js';
import { UrlDb, type DueUrl, type Feedback, type InjectBatch, type InjectCounts, type InjectEntry } from './urldb.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const log = logger('shepherd');

/** Reports merged per transaction. */
const MERGE_BATCH = 2000;
/** The shepherd's keys in the database's meta table. */
export const META = {
  /** The oid the next merge reads from. */
  checkpoint: 'bucket_checkpoint',
  /** JSON: the hosts the seeds put in scope. */
  seedHosts: 'seed_hosts',
  /** JSON: the last cycle's report and time. */
  lastCycle: 'last_cycle',
  /** JSON: the index version whose Feedback is being applied, how many of its records are, and whether all are. */
  feedback: 'index_feedback',
} as const;

/** Feedback records applied per cycle, one transaction: a big index's Feedback is spread over cycles. */
const FEEDBACK_BATCH = 50_000;

interface FeedbackProgress {
  version: string;
  applied: number;
  done: boolean;
}

/** The Feedback file being applied, open across cycles. */
interface FeedbackReading {
  version: string;
  records: Iterator<FeedbackRecord>;
  applied: number;
  /** Records applied before a restart, still to be read past. */
  skip: number;
}

export interface CycleReport {
  /** Seed URLs taken from the inbox: added, already known, over a site's budget, refused by scope.ts (by reason); URLs made due by refetch requests. */
  injected: InjectReport;
  merged: number;
  fetched: number;
  newUrls: number;
  refusedLinks: number;
  planned: number;
  /** Feedback records of the current index version applied (weights, duplicates). */
  feedback: number;
  /** Outcome codes of the fetches merged, by class: ok, redirect, not_modified, temporary, permanent. */
  outcomes: Record<string, number>;
}

export interface InjectReport extends InjectCounts {
  rejected: Partial<Record<RejectReason, number>>;
  /** URLs made due by refetch requests. */
  refetched: number;
}

export interface PlanOptions {
  /** URLs per plan file. */
  limit: number;
  /** At most this many URLs of one site per plan. */
  perSite: number;
}

/** Seeds injected per transaction. */
const INJECT_BATCH = 50_000;

export class Shepherd {
  private scope: Scope;
  private feedbackReading: FeedbackReading | undefined;
  /** The version whose Feedback is applied whole: nothing to read until `current` changes. */
  private feedbackApplied: string | undefined;
  private readonly seedHosts: Set<string>;
  private readonly takedownFile: TakedownFile;

  private constructor(
    readonly state: string,
    private config: ShepherdConfig,
    private rules: SiteRules,
    readonly db: UrlDb,
  ) {
    this.takedownFile = new TakedownFile(takedownFilePath(state));
    const stored = db.getMeta(META.seedHosts);
    this.seedHosts = new Set(typeof stored === 'string' ? (JSON.parse(stored) as string[]) : []);
    this.scope = new Scope(config, this.seedHosts, rules);
  }

  static open(state: string, config: ShepherdConfig, rules = SiteRules.none): Shepherd {
    return new Shepherd(state, config, rules, UrlDb.open(state, config, rules));
  }

  /** A reloaded [shepherd] config and site rules: scope, budgets and schedule from the next call on; the URL database stays open (UrlDb.configure). */
  configure(config: ShepherdConfig, rules = this.rules): void {
    this.config = config;
    this.rules = rules;
    this.scope = new Scope(config, this.seedHosts, rules);
    this.db.configure(config, rules);
  }

  close(): void {
    this.finishFeedback(undefined);
    this.db.close();
  }

  /** Adds seed URLs (depth 0) in one transaction; their hosts join the scope. */
  inject(urls: readonly string[], now: number, report: InjectReport = emptyInject()): InjectReport {
    this.injectSeeds([urls], now, report);
    return report;
  }

  /**
   * Adds batches of seed URLs, a transaction each (UrlDb.injectAll: a worker
   * thread prepares the next batch while this one is inserted). A batch's
   * hosts join the seed hosts, and the scope, in its transaction.
   */
  private injectSeeds(batches: Iterable<readonly string[]>, now: number, report: InjectReport): void {
    let hosts = this.seedHosts;
    const judged = function* (this: Shepherd): Generator<InjectBatch & { hosts: Set<string> }> {
      for (const urls of batches) {
        const entries: InjectEntry[] = [];
        const grown = new Set(hosts);
        for (const url of urls) {
          const verdict = this.scope.judge(url, { seed: true });
          if (!verdict.ok) {
            report.rejected[verdict.reason] = (report.rejected[verdict.reason] ?? 0) + 1;
            continue;
          }
          entries.push({ url: verdict.url, depth: 0 });
          grown.add(seedHost(verdict.url));
        }
        hosts = grown;
        yield { entries, now, hosts: grown };
      }
    };
    this.db.injectAll(judged.call(this), (counts, batch) => {
      report.added += counts.added;
      report.known += counts.known;
      report.refused += counts.refused;
      if (batch.hosts.size === this.seedHosts.size) return;
      this.db.setMeta(META.seedHosts, JSON.stringify([...batch.hosts]));
      // Ahead of the commit by a moment: should it fail, the seed file stays in the inbox and brings the hosts again.
      for (const host of batch.hosts) this.seedHosts.add(host);
      this.scope = new Scope(this.config, this.seedHosts, this.rules);
    });
  }

  /** Injects every seed file waiting in the inbox (seed-inbox.ts), removing each once it is committed. */
  takeInbox(now: number, report: InjectReport = emptyInject()): InjectReport {
    for (const { path, kind } of listSeedFiles(this.state)) {
      if (kind === 'seeds') this.injectSeeds(seedBatches(path, INJECT_BATCH), now, report);
      else for (const lines of seedBatches(path, INJECT_BATCH)) report.refetched += this.refetch(lines, now);
      removeSeedFile(path);
      log.info(kind === 'seeds' ? 'seed file injected' : 'refetch request applied', { file: path });
    }
    return report;
  }

  /**
   * Makes every fetched URL of the sites named (origins such as
   * `http://example.org:8080`; `*` for all) due now, so the next plans
   * refetch them, conditionally where validators are known. Returns how many.
   */
  refetch(sites: readonly string[], now: number): number {
    if (sites.includes('*')) return this.db.refetchNow(undefined, now);
    const known = sites.filter((site) => this.db.getSite(site) !== undefined);
    for (const site of sites) if (!known.includes(site)) log.warning('refetch: no such site in the URL database', { site });
    return known.length === 0 ? 0 : this.db.refetchNow(known, now);
  }

  /** One whole cycle: the inbox, then merge, then (unless `plan` is false) plan; the report of the last that did anything is kept in meta (shepherd/status.ts). */
  cycle(now: number, options: PlanOptions & { plan?: boolean }): CycleReport {
    const report = this.gatherIn(now);
    if (options.plan !== false) this.plan(now, options, report);
    return this.keepReport(now, report);
  }

  /** cycle() with planning, the plan file's fsyncs waited for off the thread (`sherlock crawl`, whose thread drives the gatherer too). */
  async cycleInBackground(now: number, options: PlanOptions): Promise<CycleReport> {
    const report = this.gatherIn(now);
    const due = this.db.due(now, options.limit, options.perSite, this.takedownFile.inForce());
    if (due.length > 0) {
      await writePlanInBackground(this.state, planEntries(due));
      this.markPlanned(due, now, report);
    }
    return this.keepReport(now, report);
  }

  /** The inbox, merge and feedback steps of a cycle. */
  private gatherIn(now: number): CycleReport {
    const report = emptyReport();
    this.takeInbox(now, report.injected);
    this.merge(now, report);
    this.applyFeedback(report);
    return report;
  }

  private keepReport(now: number, report: CycleReport): CycleReport {
    // Only a cycle that did something is kept: `crawl` cycles ten times a second.
    const injected = report.injected.added + report.injected.known + report.injected.refetched;
    if (injected + report.merged + report.feedback + report.planned > 0) this.db.setMeta(META.lastCycle, JSON.stringify({ time: now, ...report }));
    return report;
  }

  /** Merges every report stored since the checkpoint, in batches of one transaction each. */
  merge(now: number, report: CycleReport = emptyReport()): CycleReport {
    const file = bucketFilePath(this.state);
    if (!existsSync(file)) return report;
    const reader = BucketReader.open(file);
    try {
      for (;;) {
        const from = Number(this.db.getMeta(META.checkpoint) ?? 1);
        const onBad = (oid: number, err: SherlockError) => log.warning('bucket skipped', { oid, problem: err.message });
        const onDamage = (d: { offset: number; message: string }) => log.warning('damaged stretch of the bucket file skipped', { offset: d.offset, problem: d.message });
        const { reports, next } = readReports(reader, { from, limit: MERGE_BATCH, onBad, onDamage });
        if (reports.length === 0) {
          if (next !== from) this.db.transaction(() => this.db.setMeta(META.checkpoint, next));
          return report;
        }
        this.db.transaction(() => {
          for (const r of reports) {
            report.merged += 1;
            if (r.kind === 'fetch') this.mergeFetch(r.result, now, report);
            else this.mergeSitemaps(r.result.sitemaps, now, report);
          }
          this.db.setMeta(META.checkpoint, next);
        });
      }
    } finally {
      reader.close();
    }
  }

  /**
   * Applies the Feedback of the index version `current` names
   * (common/index/feedback.ts): static weights steer planning, duplicates
   * wait max_refetch from their last fetch. FEEDBACK_BATCH records per call, read on from
   * where the last call stopped (the reader stays open between cycles); the
   * progress in meta moves in the same transaction as the records, and
   * applying a record twice changes nothing, so a crash anywhere is harmless.
   */
  applyFeedback(report: CycleReport = emptyReport()): CycleReport {
    const indexDir = indexDirectory(this.state);
    const version = currentVersion(indexDir);
    if (version === undefined || version === this.feedbackApplied) return report;
    const reading = this.feedbackReading?.version === version ? this.feedbackReading : this.startFeedback(indexDir, version);
    if (reading === undefined) return report;
    const batch: Feedback[] = [];
    let done = false;
    try {
      while (batch.length < FEEDBACK_BATCH) {
        const next = reading.records.next();
        if (next.done === true) {
          done = true;
          break;
        }
        const record = next.value;
        if (reading.skip > 0) {
          reading.skip -= 1;
          continue;
        }
        batch.push({ footprint: record.footprint, weight: record.weight, duplicate: (record.flags & CARD_FLAG.dup) !== 0 });
      }
    } catch (err) {
      // A damaged version: the next version brings its own Feedback.
      log.warning('index feedback not applied', { version, problem: err instanceof Error ? err.message : String(err) });
      batch.length = 0;
      done = true;
    }
    reading.applied += batch.length;
    this.db.transaction(() => {
      this.db.feedback(batch);
      this.db.setMeta(META.feedback, JSON.stringify({ version, applied: reading.applied, done } satisfies FeedbackProgress));
    });
    report.feedback += batch.length;
    if (done) {
      this.finishFeedback(version);
      log.info('index feedback applied', { version, records: reading.applied });
    }
    return report;
  }

  /** Opens the version's Feedback past the records meta says are applied; undefined when all are. */
  private startFeedback(indexDir: string, version: string): FeedbackReading | undefined {
    this.finishFeedback(undefined);
    const stored = this.db.getMeta(META.feedback);
    const progress = typeof stored === 'string' ? (JSON.parse(stored) as FeedbackProgress) : undefined;
    if (progress?.version === version && progress.done) {
      this.feedbackApplied = version;
      return undefined;
    }
    const applied = progress?.version === version ? progress.applied : 0;
    this.feedbackReading = { version, records: readFeedback(join(indexDir, version, FEEDBACK_NAME)), applied, skip: applied };
    return this.feedbackReading;
  }

  /** Closes the Feedback being read; `version` (if any) is applied whole. */
  private finishFeedback(version: string | undefined): void {
    this.feedbackReading?.records.return?.();
    this.feedbackReading = undefined;
    this.feedbackApplied = version;
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

  /**
   * Sitemaps named in a robots.txt become seeds when their host is in scope
   * (scope.ts: a sitemap cannot widen the crawl); the URLs they list come
   * back as their links. A robots.txt fetched again names them again, which
   * changes nothing.
   */
  private mergeSitemaps(sitemaps: readonly string[], now: number, report: CycleReport): void {
    const urls: string[] = [];
    for (const url of sitemaps) {
      const verdict = this.scope.inScope(url) ? this.scope.judge(url, { seed: true }) : undefined;
      if (verdict?.ok === true) urls.push(verdict.url);
      else report.refusedLinks += 1;
    }
    if (urls.length === 0) return;
    const counts = this.db.inject(
      urls.map((url) => ({ url, depth: 0 })),
      now,
    );
    report.newUrls += counts.added;
    report.refusedLinks += counts.refused;
  }

  /** Writes the URLs due now into a plan in the gatherer's inbox, then marks them queued. */
  plan(now: number, options: PlanOptions, report: CycleReport = emptyReport()): CycleReport {
    const due = this.db.due(now, options.limit, options.perSite, this.takedownFile.inForce());
    if (due.length > 0) {
      writePlan(this.state, planEntries(due));
      this.markPlanned(due, now, report);
    }
    return report;
  }

  /** Their plan file is written (module comment, "plan"): the URLs are queued. */
  private markPlanned(due: readonly DueUrl[], now: number, report: CycleReport): void {
    this.db.markQueued(
      due.map((d) => d.footprint),
      now,
    );
    report.planned += due.length;
  }

  /** Whether plans written are still waiting in the inbox. */
  plansWaiting(): boolean {
    return listPlans(this.state).length > 0;
  }
}

/**
 * Takes the inbox at once when no shepherd holds the URL database (the
 * report), else leaves it to the running one (undefined). Seeds are judged
 * with the site rules as the running shepherd would judge them.
 */
export function takeInboxIfFree(state: string, config: ShepherdConfig, rules = SiteRules.none): InjectReport | undefined {
  let shepherd: Shepherd;
  try {
    shepherd = Shepherd.open(state, config, rules);
  } catch (err) {
    if (isSherlockError(err, 'SHERLOCK_LOCKED')) return undefined;
    throw err;
  }
  try {
    return shepherd.takeInbox(Math.floor(Date.now() / 1000));
  } finally {
    shepherd.close();
  }
}

export function emptyReport(): CycleReport {
  return { injected: emptyInject(), merged: 0, fetched: 0, newUrls: 0, refusedLinks: 0, planned: 0, feedback: 0, outcomes: {} };
}

export function emptyInject(): InjectReport {
  return { added: 0, known: 0, refused: 0, rejected: {}, refetched: 0 };
}

function planEntries(due: readonly DueUrl[]): PlanEntry[] {
  return due.map((d) => ({
    url: d.url,
    priority: d.priority,
    ...(d.ifModifiedSince === undefined ? {} : { ifModifiedSince: d.ifModifiedSince }),
    ...(d.ifNoneMatch === undefined ? {} : { ifNoneMatch: d.ifNoneMatch }),
  }));
}

/** The class of a gatherer code, for summaries. */
export function classOf(code: number): string {
  if (code === 0) return 'ok';
  if (code === 1) return 'redirect';
  if (code === 3) return 'not_modified';
  if (code >= 1000 && code < 2000) return 'temporary';
  return code === 2304 ? 'robots_denied' : code === 2308 ? 'taken_down' : 'permanent';
}
