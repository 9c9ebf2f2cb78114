/**
 * `sherlock run --state DIR [--listen HOST:PORT] [--stop-timeout 30s]`: the
 * whole appliance on one machine without systemd units: the four daemons
 * (`gatherer run`, `shepherd run`, `indexer run`, `searcher run`) as child
 * processes of this one, each given the same --config, --set and --state,
 * kept running by common/service/supervisor.ts (back-off restarts, their
 * stderr prefixed with their names, their notifications gathered).
 *
 * - A child exiting 78 (bad config) stops everything: exit 78.
 * - SIGHUP: the config is checked here, then SIGHUP goes to every child.
 * - SIGTERM or SIGINT (Ctrl-C): the children stop; exit 0, or 1 when one
 *   had to be killed after the stop timeout.
 * - It is a notify daemon itself (cli/daemon.ts): READY=1 once every child
 *   said READY=1.
 */

import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { SherlockError } from '../common/errors.js';
import { Supervisor } from '../common/service/supervisor.js';
import { parseDuration } from '../common/units.js';
import { STATE_HELP, action, runtimeDir, stateDir } from './command.js';
import { daemon } from './daemon.js';
import { loadSettings, type GlobalOptions } from './settings.js';

const DAEMONS = ['gatherer', 'shepherd', 'indexer', 'searcher'] as const;

const CLI = fileURLToPath(new URL('./sherlock.js', import.meta.url));

interface RunOptions {
  state?: string;
  listen?: string;
  stopTimeout: string;
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run the four daemons (gatherer, shepherd, indexer, searcher) supervised, for one machine; Ctrl-C stops them all')
    .option('--state <dir>', STATE_HELP)
    .option('--listen <host:port>', "the searcher's address (default: searcher.listen)")
    .option('--stop-timeout <duration>', 'how long daemons may take to stop before SIGKILL', '30s')
    .action(action((opts: RunOptions, cmd: Command) => run(opts, cmd.optsWithGlobals<GlobalOptions>())));
}

function run(opts: RunOptions, globals: GlobalOptions): Promise<number> {
  const state = stateDir(opts);
  const stopTimeoutMs = parseDuration(opts.stopTimeout);
  if (stopTimeoutMs === undefined) throw new SherlockError('SHERLOCK_USAGE', `--stop-timeout: a duration like "30s" expected, not ${JSON.stringify(opts.stopTimeout)}`);
  // Checked once here, so a bad config stops everything before any child starts.
  loadSettings(globals);
  const shared = [...process.execArgv, CLI, ...(globals.config === undefined ? [] : ['--config', globals.config]), ...(globals.set ?? []).flatMap((set) => ['--set', set])];
  const children = DAEMONS.map((name) => ({
    name,
    args: [...shared, name, 'run', '--state', state, ...(name === 'searcher' && opts.listen !== undefined ? ['--listen', opts.listen] : [])],
  }));
  const supervisor = new Supervisor({ children, stopTimeoutMs, socketDir: runtimeDir() ?? tmpdir(), logFields: { state } });
  return supervisor.run(
    daemon({
      stop: (signal, count) => supervisor.stop(signal, count),
      reload: () => {
        loadSettings(globals); // throws on a bad config: the children keep theirs
        supervisor.reload();
      },
    }),
  );
}
