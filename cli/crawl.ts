/**
 * `sherlock crawl --state DIR --seeds FILE [--max-pages N] [--until-idle]`:
 * the shepherd and the gatherer in one process (DESIGN §2). The gatherer runs
 * on its own; every CYCLE_MS the shepherd merges what it stored and plans
 * what is due. With --until-idle the crawl ends once the shepherd has nothing
 * due and the gatherer nothing in flight or due soon; --max-pages ends it
 * after that many fetches. SIGTERM/SIGINT end it as --until-idle would, at
 * once. Either way the gatherer drains, a last merge runs, and a summary is
 * printed (stdout; --json for scripts). Run again, it continues where it
 * stopped: both parts keep their state in DIR. Its gatherer serves the
 * control socket as the daemon's does (`sherlock crawl pause|resume|status`,
 * cli/crawl-control.ts).
 */

import type { Command } from 'commander';
import { SherlockError } from '../common/errors.js';
import { logger } from '../common/log.js';
import type { MetricsListener } from '../common/service/metrics-listener.js';
import type { SiteRules } from '../common/site-rules.js';
import { Gatherer } from '../gatherer/gatherer.js';
import { spoolSeeds } from '../shepherd/seed-inbox.js';
import { ShepherdMetrics } from '../shepherd/metrics.js';
import { Shepherd, emptyReport, type CycleReport } from '../shepherd/shepherd.js';
import type { ControlServer } from '../common/gather/control.js';
import { controlGatherer } from '../gatherer/control.js';
import { STATE_HELP, action, print, printJson, runtimeDir, stateDir } from './command.js';
import { registerCrawlControl } from './crawl-control.js';
import { describeInject, seedInput } from './inject.js';
import { adminListener, daemonRegistry } from './metrics.js';
import { loadSettings, type GlobalOptions, type SherlockConfig } from './settings.js';

const log = logger('crawl');

/** How often the shepherd merges and plans. */
const CYCLE_MS = 100;

interface CrawlOptions {
  state?: string;
  seeds?: string;
  maxPages?: string;
  untilIdle?: boolean;
  json?: boolean;
}

export function registerCrawl(program: Command): void {
  const crawlCommand = program
    .command('crawl')
    .description('shepherd and gatherer in one process: crawl from the seeds; or pause and resume the gathering')
    .option('--state <dir>', STATE_HELP)
    // Not requiredOption: commander would then ask for it before `crawl pause` too.
    .option('--seeds <file>', 'seed URLs, one per line (# comments); - for standard input (required)')
    .option('--max-pages <n>', 'stop after this many fetches')
    .option('--until-idle', 'stop once nothing is due')
    .option('--json', 'print the summary as one JSON object')
    .action(action((opts: CrawlOptions, cmd: Command) => crawl(opts, cmd.optsWithGlobals<GlobalOptions>())));
  registerCrawlControl(crawlCommand);
}

async function crawl(opts: CrawlOptions, globals: GlobalOptions): Promise<number> {
  if (opts.seeds === undefined) throw new SherlockError('SHERLOCK_USAGE', "required option '--seeds <file>' not specified (or a subcommand: pause, resume, status)");
  const state = stateDir(opts);
  const maxPages = opts.maxPages === undefined ? undefined : Number(opts.maxPages);
  if (maxPages !== undefined && !(Number.isSafeInteger(maxPages) && maxPages > 0)) {
    throw new SherlockError('SHERLOCK_USAGE', `--max-pages: a positive whole number expected, not ${JSON.stringify(opts.maxPages)}`);
  }
  const { config, rules } = loadSettings(globals);
  await spoolSeeds(state, seedInput(opts.seeds), opts.seeds);
  let stopRequested = false;
  const onSignal = (): void => {
    stopRequested = true;
  };
  process.on('SIGTERM', onSignal).on('SIGINT', onSignal);
  let summary: CrawlSummary;
  try {
    summary = await runCrawl(state, config, { rules, untilIdle: opts.untilIdle === true, ...(maxPages === undefined ? {} : { maxPages }), stopped: () => stopRequested });
  } finally {
    process.off('SIGTERM', onSignal).off('SIGINT', onSignal);
  }
  if (opts.json === true) printJson(summary);
  else print(describeCrawl(summary));
  return 0;
}

export interface CrawlSummary {
  seconds: number;
  fetched: number;
  newUrls: number;
  refusedLinks: number;
  outcomes: Record<string, number>;
  /** Names the gatherer looked up through the system resolver (not pinned by hosts_file, not cached). */
  dnsLookups: number;
}

export interface CrawlRun {
  /** The site rules the shepherd and the gatherer follow; none when absent. */
  rules?: SiteRules;
  untilIdle: boolean;
  maxPages?: number;
  /** Asked every cycle: true ends the crawl as --until-idle would, at once. */
  stopped: () => boolean;
}

/** One crawl of the seeds already spooled into DIR's inbox (`sherlock crawl`, `sherlock demo`). */
export async function runCrawl(state: string, config: SherlockConfig, run: CrawlRun): Promise<CrawlSummary> {
  const started = Date.now();
  const registry = daemonRegistry();
  const metrics = new ShepherdMetrics(registry, state);
  const shepherd = Shepherd.open(state, config.shepherd, run.rules);
  const plan = { limit: config.shepherd.plan_batch, perSite: config.shepherd.plan_per_site };
  let gatherer: Gatherer | undefined;
  const total: CycleReport = emptyReport();
  let running: Promise<void> | undefined;
  let control: ControlServer | undefined;
  let listener: MetricsListener | undefined;
  // A gatherer that stops on a failure of its own (a full disk) ends the crawl with its error.
  const gathering: { failed: boolean; error?: unknown } = { failed: false };
  let dnsLookups = 0;
  try {
    const injected = shepherd.takeInbox(seconds());
    log.notice('seeds injected', { summary: describeInject(injected) });
    gatherer = await Gatherer.open(state, config.gatherer, registry, run.rules);
    control = await controlGatherer(gatherer, runtimeDir());
    listener = await adminListener(registry, config.gatherer.admin_listen, 'gatherer.admin_listen');
    running = gatherer.run().catch((error: unknown) => {
      gathering.failed = true;
      gathering.error = error;
    });
    const tty = process.stderr.isTTY;
    let wasIdle = false;
    for (;;) {
      if (gathering.failed) throw gathering.error;
      const round = await shepherd.cycleInBackground(seconds(), plan);
      add(total, round);
      metrics.cycle(round);
      if (round.planned > 0) gatherer.plansWritten();
      if (tty) process.stderr.write(`\r${progress(total, started)}\x1b[K`);
      if (run.stopped()) break;
      if (run.maxPages !== undefined && total.fetched >= run.maxPages) break;
      // Idle in two rounds running: the gatherer may have stored its last page
      // after this round merged, and the next round merges it (and may plan more).
      const idle = round.planned === 0 && round.merged === 0 && gatherer.isIdle() && !shepherd.plansWaiting();
      if (run.untilIdle && idle && wasIdle) break;
      wasIdle = idle;
      await new Promise((resolve) => setTimeout(resolve, CYCLE_MS));
    }
    dnsLookups = gatherer.status().dnsLookups;
    gatherer.stop('drain');
    await running;
    if (gathering.failed) throw gathering.error;
    shepherd.merge(seconds(), total);
    if (tty) process.stderr.write('\n');
  } finally {
    // After a failure of ours, the gatherer still closes its files cleanly.
    gatherer?.stop('abort');
    // Not yet running (the control socket or the listener failed): run() only closes its files.
    if (running === undefined) await gatherer?.run();
    await running;
    await control?.close();
    shepherd.close();
    await listener?.close();
  }
  return { seconds: (Date.now() - started) / 1000, fetched: total.fetched, newUrls: total.newUrls, refusedLinks: total.refusedLinks, outcomes: total.outcomes, dnsLookups };
}

/** The summary line for people. */
export function describeCrawl(summary: CrawlSummary): string {
  return `crawled ${summary.fetched} pages in ${summary.seconds.toFixed(1)} s: ${Object.entries(summary.outcomes).map(([k, v]) => `${k} ${v}`).join(', ') || 'nothing'}; ${summary.newUrls} new URLs`;
}

function seconds(): number {
  return Math.floor(Date.now() / 1000);
}

function add(total: CycleReport, round: CycleReport): void {
  total.merged += round.merged;
  total.fetched += round.fetched;
  total.newUrls += round.newUrls;
  total.refusedLinks += round.refusedLinks;
  total.planned += round.planned;
  total.feedback += round.feedback;
  for (const [k, v] of Object.entries(round.outcomes)) total.outcomes[k] = (total.outcomes[k] ?? 0) + v;
}

function progress(total: CycleReport, started: number): string {
  const s = (Date.now() - started) / 1000;
  return `${total.fetched} fetched, ${total.planned} planned, ${total.newUrls} new URLs, ${(total.fetched / Math.max(s, 0.001)).toFixed(0)} pages/s`;
}
