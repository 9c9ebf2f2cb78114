/**
 * `sherlock gatherer run|add|status --state DIR`: the gatherer daemon, handing
 * it URLs (a plan file in its inbox), and what its queues hold.
 *
 * run: SIGTERM (or SIGINT) stops taking work and lets fetches in flight end
 * and be stored, for at most gatherer.fetch_timeout; a second signal aborts
 * them (their URLs stay queued). SIGHUP reloads the config file. It serves
 * the control socket (`sherlock crawl pause|resume`, common/gather/control.ts).
 */

import type { Command } from 'commander';
import { SherlockError } from '../common/errors.js';
import { logger } from '../common/log.js';
import { writePlan, type PlanEntry } from '../common/gather/plan-file.js';
import { GatherQueue } from '../common/gather/queue-file.js';
import { queueKeyText } from '../common/gather/host-file.js';
import { canonicalUrl } from '../common/url.js';
import type { Registry } from '../common/service/metrics.js';
import { controlGatherer } from '../gatherer/control.js';
import { Gatherer } from '../gatherer/gatherer.js';
import { readFileSync } from 'node:fs';
import { STATE_HELP, action, print, printJson, runtimeDir, stateDir } from './command.js';
import { daemon } from './daemon.js';
import { adminListener, daemonRegistry } from './metrics.js';
import { loadSettings, type GlobalOptions, type Settings } from './settings.js';

const log = logger('gatherer');

export function registerGatherer(program: Command): void {
  const gatherer = program.command('gatherer').description('the fetch daemon: queues, robots.txt, politeness, ARC and buckets');

  gatherer
    .command('run')
    .description('fetch what the queues hold until stopped (SIGTERM drains, SIGHUP reloads config)')
    .option('--state <dir>', STATE_HELP)
    .option('--until-idle', 'return once nothing is in flight or due soon')
    .option('--max-pages <n>', 'stop after fetching this many pages')
    .action(
      action(async (opts: { state?: string; untilIdle?: boolean; maxPages?: string }, cmd: Command) => {
        const globals = cmd.optsWithGlobals<GlobalOptions>();
        const state = stateDir(opts);
        const maxPages = opts.maxPages === undefined ? undefined : count(opts.maxPages, '--max-pages');
        const settings = loadSettings(globals);
        const config = settings.config.gatherer;
        const registry = daemonRegistry();
        const metrics = await adminListener(registry, config.admin_listen, 'gatherer.admin_listen');
        try {
          await runGatherer(state, settings, registry, globals, opts.untilIdle === true, maxPages);
        } finally {
          await metrics?.close();
        }
      }),
    );

  gatherer
    .command('add')
    .description('queue URLs for fetching: writes a plan into the inbox, which a running gatherer picks up')
    .option('--state <dir>', STATE_HELP)
    .option('--file <file>', 'read URLs from a file, one per line (# comments)')
    .option('--priority <n>', 'priority, lower is sooner', '1000000000')
    .argument('[url...]', 'URLs')
    .action(
      action((urls: string[], opts: { state?: string; file?: string; priority: string }) => {
        const state = stateDir(opts);
        const priority = count(opts.priority, '--priority');
        const lines = [...urls];
        if (opts.file !== undefined) lines.push(...readFileSync(opts.file, 'utf8').split('\n'));
        const entries: PlanEntry[] = [];
        for (const [i, raw] of lines.entries()) {
          const text = raw.trim();
          if (text === '' || text.startsWith('#')) continue;
          try {
            entries.push({ url: canonicalUrl(text), priority });
          } catch (err) {
            const where = opts.file !== undefined && i >= urls.length ? `${opts.file}:${i - urls.length + 1}: ` : '';
            throw new SherlockError('SHERLOCK_USAGE', `${where}${err instanceof Error ? err.message : String(err)}`);
          }
        }
        if (entries.length === 0) throw new SherlockError('SHERLOCK_USAGE', 'no URLs given');
        const path = writePlan(state, entries);
        print(`${entries.length} URL(s) in ${path}`);
      }),
    );

  gatherer
    .command('status')
    .description('hosts and their queues (needs the gatherer stopped: it holds the queue lock)')
    .option('--state <dir>', STATE_HELP)
    .option('--json', 'one JSON document per host')
    .action(
      action((opts: { state?: string; json?: boolean }) => {
        const queue = GatherQueue.open(stateDir(opts));
        try {
          for (const host of queue.hosts()) {
            const row = {
              host: `${host.scheme}://${host.name}:${host.port}`,
              queued: host.queued,
              pushed: host.pushed,
              address: queueKeyText(host.queueKey),
              errors: host.errorCount,
              backoffUntil: host.backoffUntil === 0 ? null : new Date(host.backoffUntil * 1000).toISOString(),
              robotsOid: host.robotsOid,
            };
            const ok = opts.json === true ? printJson(row) : print(`${row.host} queued ${row.queued} address ${row.address} errors ${row.errors}${row.backoffUntil === null ? '' : ` until ${row.backoffUntil}`}`);
            if (!ok) break;
          }
        } finally {
          queue.close();
        }
      }),
    );
}

async function runGatherer(state: string, settings: Settings, registry: Registry, globals: GlobalOptions, untilIdle: boolean, maxPages: number | undefined): Promise<void> {
  const g = await Gatherer.open(state, settings.config.gatherer, registry, settings.rules);
  const control = await controlGatherer(g, runtimeDir()).catch(async (err: unknown) => {
    g.stop('abort');
    await g.run(); // closes its files
    throw err;
  });
  const d = daemon({
    stop(signal, count) {
      log.notice(count === 1 ? 'stopping: finishing fetches in flight' : 'stopping now: aborting fetches in flight', { signal });
      g.stop(count === 1 ? 'drain' : 'abort');
    },
    reload() {
      const next = loadSettings(globals);
      g.reload(next.config.gatherer, next.rules);
    },
  });
  try {
    log.notice('gatherer running', { state });
    const running = g.run({ ...(untilIdle ? { untilIdle: true } : {}), ...(maxPages === undefined ? {} : { maxPages }) });
    d.ready(g.status().paused ? 'paused' : 'fetching');
    await running;
    const status = g.status();
    log.notice('gatherer stopped', { fetches: status.fetches, stored: status.stored, queued: status.queued });
  } finally {
    await control.close();
    d.close();
  }
}

function count(text: string, what: string): number {
  if (!/^\d{1,10}$/.test(text) || Number(text) > 0xffffffff) throw new SherlockError('SHERLOCK_USAGE', `${what}: a whole number expected, not ${JSON.stringify(text)}`);
  return Number(text);
}
