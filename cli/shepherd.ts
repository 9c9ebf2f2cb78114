/**
 * `sherlock shepherd run --state DIR [--once]`: the shepherd daemon. Every
 * shepherd.cycle_interval it takes the seed inbox, merges what the gatherer
 * stored and plans what is due into the gatherer's inbox (shepherd/shepherd.ts);
 * --once runs one cycle and exits (cron, scripts, tests). It plans nothing
 * while its last plan still waits in the gatherer's inbox, so a stopped
 * gatherer does not pile plans up.
 *
 * SIGTERM (or SIGINT) stops it after the cycle in progress; a SIGKILL
 * meanwhile loses nothing either (every step is one transaction or one plan
 * file). SIGHUP reloads the config file, taking effect at the next cycle.
 */

import type { Command } from 'commander';
import { SherlockError } from '../common/errors.js';
import { logger } from '../common/log.js';
import { canonicalUrl, urlParts } from '../common/url.js';
import { writeRefetch } from '../shepherd/seed-inbox.js';
import { ShepherdMetrics } from '../shepherd/metrics.js';
import { Shepherd, takeInboxIfFree, type CycleReport } from '../shepherd/shepherd.js';
import { checkUrlDb, readUrls } from '../shepherd/status.js';
import { URL_STATES, urlDbPath } from '../shepherd/urldb.js';
import { STATE_HELP, action, print, printJson, stateDir } from './command.js';
import { daemon } from './daemon.js';
import { adminListener, daemonRegistry } from './metrics.js';
import { loadSettings, type GlobalOptions, type Settings } from './settings.js';

const log = logger('shepherd');

export function registerShepherd(program: Command): void {
  const shepherd = program.command('shepherd').description('the URL database: merge results, plan fetches, refetch');

  shepherd
    .command('run')
    .description('merge and plan every shepherd.cycle_interval until stopped (SIGTERM stops, SIGHUP reloads config)')
    .option('--state <dir>', STATE_HELP)
    .option('--once', 'run one cycle and exit')
    .action(
      action(async (opts: { state?: string; once?: boolean }, cmd: Command) => {
        const globals = cmd.optsWithGlobals<GlobalOptions>();
        const state = stateDir(opts);
        const settings = loadSettings(globals);
        let config = settings.config.shepherd;
        const registry = daemonRegistry();
        const metrics = new ShepherdMetrics(registry, state);
        const listener = await adminListener(registry, config.admin_listen, 'shepherd.admin_listen');
        let s: Shepherd;
        try {
          s = Shepherd.open(state, config, settings.rules);
        } catch (err) {
          await listener?.close();
          throw err;
        }
        let stopping = false;
        let wake: (() => void) | undefined;
        let reload: Settings | undefined;
        const d = daemon({
          stop(signal) {
            stopping = true;
            log.notice('stopping after the cycle in progress', { signal });
            wake?.();
          },
          reload() {
            reload = loadSettings(globals);
          },
        });
        try {
          log.notice('shepherd running', { state });
          d.ready('cycling');
          for (;;) {
            if (reload !== undefined) {
              config = reload.config.shepherd;
              s.configure(config, reload.rules);
              reload = undefined;
            }
            const report = s.cycle(Math.floor(Date.now() / 1000), { limit: config.plan_batch, perSite: config.plan_per_site, plan: !s.plansWaiting() });
            logCycle(report);
            metrics.cycle(report);
            if (opts.once === true || stopping) break;
            await new Promise<void>((resolve) => {
              wake = resolve;
              setTimeout(resolve, config.cycle_interval);
            });
            wake = undefined;
            if (stopping) break;
          }
        } finally {
          d.close();
          s.close();
          await listener?.close();
        }
        log.notice('shepherd stopped');
      }),
    );

  shepherd
    .command('refetch')
    .description('make the fetched URLs of sites due now: the next cycles refetch them, conditionally where they can')
    .option('--state <dir>', STATE_HELP)
    .option('--all', 'every site')
    .option('--site <url...>', 'sites by URL (scheme, host and port count: http://example.org/ is one site)')
    .action(
      action((opts: { state?: string; all?: boolean; site?: string[] }, cmd: Command) => {
        if ((opts.all === true) === (opts.site !== undefined)) throw new SherlockError('SHERLOCK_USAGE', 'give either --all or --site URL…');
        const state = stateDir(opts);
        const sites = opts.all === true ? ['*'] : opts.site!.map(origin);
        const path = writeRefetch(state, sites);
        const { config, rules } = loadSettings(cmd.optsWithGlobals<GlobalOptions>());
        const report = takeInboxIfFree(state, config.shepherd, rules);
        print(report === undefined ? `a running shepherd holds the URL database; it applies ${path} at its next cycle` : `${report.refetched} URLs due now`);
      }),
    );

  shepherd
    .command('verify')
    .description("SQLite's integrity check of the URL database, each problem with the damaged page's offset, then footprints held by two rows; exit 1 on any")
    .option('--state <dir>', STATE_HELP)
    .action(
      action((opts: { state?: string }) => {
        const problems = checkUrlDb(stateDir(opts));
        for (const problem of problems) print(problem.describe());
        print(`${urlDbPath(stateDir(opts))}: ${problems.length === 0 ? 'ok' : `${problems.length} problems`}`);
        return problems.length === 0 ? 0 : 1;
      }),
    );

  shepherd
    .command('dump')
    .description('every URL: state, depth, HTTP status, last and next fetch (readable while the shepherd runs)')
    .option('--state <dir>', STATE_HELP)
    .option('--only <states>', 'only these URL states, comma-separated (new,queued,ok,…)')
    .option('--json', 'one JSON object per URL')
    .action(action(listUrls));
}

/** The site of a URL as the URL database keys it: scheme, host and port. */
function origin(url: string): string {
  try {
    return urlParts(canonicalUrl(url)).site;
  } catch (err) {
    throw new SherlockError('SHERLOCK_USAGE', `--site: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function listUrls(opts: { state?: string; json?: boolean; only?: string }): void {
  const only = opts.only?.split(',');
  const unknown = only?.find((name) => !(URL_STATES as readonly string[]).includes(name));
  if (unknown !== undefined) throw new SherlockError('SHERLOCK_USAGE', `--only: no URL state ${JSON.stringify(unknown)}; states: ${URL_STATES.join(', ')}`);
  const time = (t: number | null) => (t === null ? '-' : new Date(t * 1000).toISOString().replace('.000', ''));
  for (const row of readUrls(stateDir(opts))) {
    if (only !== undefined && !only.includes(row.state)) continue;
    const ok =
      opts.json === true
        ? printJson(row)
        : print([row.state, row.depth, row.status ?? '-', time(row.lastFetch), time(row.nextFetch), row.url, ...(row.redirect === null ? [] : [`-> ${row.redirect}`])].join(' '));
    if (!ok) break;
  }
}

function logCycle(report: CycleReport): void {
  const injected = report.injected.added + report.injected.known;
  if (injected === 0 && report.merged === 0 && report.feedback === 0 && report.planned === 0) return;
  log.info('cycle', {
    injected: report.injected.added,
    merged: report.merged,
    fetched: report.fetched,
    new_urls: report.newUrls,
    planned: report.planned,
    feedback: report.feedback,
  });
}
