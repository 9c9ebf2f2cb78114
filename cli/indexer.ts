/**
 * `sherlock indexer run --state DIR`: the indexer daemon. It builds and
 * publishes a new index version whenever enough was stored since the
 * current one, or it is old enough (indexer/rebuild.ts; keys
 * indexer.rebuild_documents, rebuild_interval, poll_interval); the searcher
 * swaps to each new version on its own.
 *
 * SIGTERM (or SIGINT) abandons a build in progress before its next stage and
 * exits; a second signal ends its thread at once. Either way `current` names
 * a whole version. SIGHUP reloads the config file, for the next build.
 */

import type { Command } from 'commander';
import { logger } from '../common/log.js';
import { IndexerMetrics } from '../indexer/metrics.js';
import { Rebuilder } from '../indexer/rebuild.js';
import { STATE_HELP, action, stateDir } from './command.js';
import { daemon } from './daemon.js';
import { adminListener, daemonRegistry } from './metrics.js';
import { loadSettings, type GlobalOptions } from './settings.js';

const log = logger('indexer');

export function registerIndexer(program: Command): void {
  const indexer = program.command('indexer').description('the index daemon: builds a new index version as buckets arrive');

  indexer
    .command('run')
    .description('build index versions when due until stopped (SIGTERM stops, SIGHUP reloads config)')
    .option('--state <dir>', STATE_HELP)
    .action(
      action(async (opts: { state?: string }, cmd: Command) => {
        const globals = cmd.optsWithGlobals<GlobalOptions>();
        const state = stateDir(opts);
        const { config, rules } = loadSettings(globals);
        const registry = daemonRegistry();
        const metrics = new IndexerMetrics(registry);
        const listener = await adminListener(registry, config.indexer.admin_listen, 'indexer.admin_listen');
        let d: ReturnType<typeof daemon> | undefined;
        const rebuilder = new Rebuilder({
          state,
          config: config.indexer,
          rules,
          logLevel: config.log.level,
          onStatus: (text) => d?.status(text),
          onBuilt: (report) => {
            metrics.built(report);
            log.notice('index version published', { version: report.version, cards: report.cards, seconds: report.seconds.toFixed(1) });
          },
          onFailed: (seconds) => metrics.failed(seconds),
        });
        d = daemon({
          stop(signal, count) {
            log.notice(count === 1 ? 'stopping: abandoning any build in progress' : 'stopping now', { signal });
            rebuilder.stop(count === 1 ? 'abandon' : 'now');
          },
          reload() {
            const next = loadSettings(globals);
            rebuilder.reload(next.config.indexer, next.rules);
          },
        });
        try {
          log.notice('indexer running', { state });
          const running = rebuilder.run();
          d.ready('watching the buckets');
          await running;
        } finally {
          d.close();
          await listener?.close();
        }
        log.notice('indexer stopped');
      }),
    );
}
