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
import { logger } from '../common/log.js';
import type { ShepherdConfig } from '../shepherd/config.js';
import { Shepherd, type CycleReport } from '../shepherd/shepherd.js';
import { STATE_HELP, action, stateDir } from './command.js';
import { loadSettings, type GlobalOptions } from './settings.js';

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
        let config = loadSettings(globals).config.shepherd;
        let s = Shepherd.open(state, config);
        let stopping = false;
        let wake: (() => void) | undefined;
        let reload: ShepherdConfig | undefined;
        const onStop = (signal: string) => {
          stopping = true;
          log.notice('stopping after the step in progress', { signal });
          wake?.();
        };
        const onHup = () => {
          try {
            reload = loadSettings(globals).config.shepherd;
            log.notice('config reloaded; in effect from the next cycle');
          } catch (err) {
            log.err('config not reloaded; keeping the old one', { problem: err instanceof Error ? err.message : String(err) });
          }
        };
        process.on('SIGTERM', onStop).on('SIGINT', onStop).on('SIGHUP', onHup);
        try {
          log.notice('shepherd running', { state });
          for (;;) {
            if (reload !== undefined) {
              // The URL database takes its budgets and schedule at open.
              s.close();
              config = reload;
              reload = undefined;
              s = Shepherd.open(state, config);
            }
            const report = s.cycle(Math.floor(Date.now() / 1000), { limit: config.plan_batch, perSite: config.plan_per_site, plan: !s.plansWaiting() });
            logCycle(report);
            if (opts.once === true || stopping) break;
            await new Promise<void>((resolve) => {
              wake = resolve;
              setTimeout(resolve, config.cycle_interval);
            });
            wake = undefined;
            if (stopping) break;
          }
        } finally {
          process.off('SIGTERM', onStop).off('SIGINT', onStop).off('SIGHUP', onHup);
          s.close();
        }
        log.notice('shepherd stopped');
      }),
    );
}

function logCycle(report: CycleReport): void {
  const injected = report.injected.added + report.injected.known;
  if (injected === 0 && report.merged === 0 && report.planned === 0) return;
  log.info('cycle', {
    injected: report.injected.added,
    merged: report.merged,
    fetched: report.fetched,
    new_urls: report.newUrls,
    planned: report.planned,
  });
}
