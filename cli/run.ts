/**
 * `sherlock run --state DIR [--listen HOST:PORT] [--stop-timeout 30s]`: the
 * whole appliance on one machine without systemd units: the four daemons
 * (`gatherer run`, `shepherd run`, `indexer run`, `searcher run`) as child
 * processes of this one, each given the same --config, --set and --state.
 *
 * - Their stderr comes out of ours line by line, the daemon's name put
 *   after the syslog priority (`<6>[indexer] indexer: …`), so journald
 *   still reads the priority.
 * - A child that exits is started again after a back-off: 1 s, doubling to
 *   at most 60 s, back to 1 s once a child stayed up 60 s. A child exiting 78
 *   (bad config) is not: the config will not get better, so everything
 *   stops and `sherlock run` exits 78.
 * - SIGHUP: the config is checked here, then SIGHUP goes to every child.
 * - SIGTERM or SIGINT (Ctrl-C): SIGTERM to every child, SIGKILL to those
 *   still running after the stop timeout; exit 0. A second signal is passed
 *   on too (the children then stop at once). Children run in their own
 *   process group, so a Ctrl-C at a terminal reaches only this process,
 *   which passes it on once. Each holds an IPC channel to this process
 *   (unused but for its closing): should this process die, even by
 *   SIGKILL, they stop as on SIGTERM (cli/daemon.ts).
 * - It is a notify daemon itself (cli/daemon.ts). Each child gets its own
 *   notification socket here (common/service/sd-notify.ts): READY=1 is sent once
 *   every child said READY=1, and STATUS= gathers the children's status
 *   lines. Without unix-dgram, READY=1 follows the spawns.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { EXIT, SherlockError } from '../common/errors.js';
import { logger } from '../common/log.js';
import { receiveNotifications } from '../common/service/sd-notify.js';
import { parseDuration } from '../common/units.js';
import { STATE_HELP, action, runtimeDir, stateDir } from './command.js';
import { daemon, type Daemon } from './daemon.js';
import { loadSettings, type GlobalOptions } from './settings.js';

const log = logger('run');

const DAEMONS = ['gatherer', 'shepherd', 'indexer', 'searcher'] as const;
type DaemonName = (typeof DAEMONS)[number];

/** Restart back-off: the first delay, the longest, and how long a child must stay up to be forgiven its failures. */
const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 60_000;
const STABLE_MS = 60_000;

const CLI = fileURLToPath(new URL('./sherlock.js', import.meta.url));

interface Child {
  name: DaemonName;
  process?: ChildProcess;
  startedAt: number;
  failures: number;
  restart?: NodeJS.Timeout;
  ready: boolean;
  status: string;
  notifyPath?: string;
}

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
    .action(action((opts: RunOptions, cmd: Command) => new Supervisor(opts, cmd.optsWithGlobals<GlobalOptions>()).run()));
}

class Supervisor {
  private readonly state: string;
  private readonly stopTimeout: number;
  private readonly children: Child[] = DAEMONS.map((name) => ({ name, startedAt: 0, failures: 0, ready: false, status: '' }));
  private readonly sockets: { close(): void }[] = [];
  private readonly notifyDir: string;
  private stopping = false;
  private exitStatus: number = EXIT.ok;
  private d: Daemon | undefined;
  private allStopped: () => void = () => undefined;
  private killTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly opts: RunOptions,
    private readonly globals: GlobalOptions,
  ) {
    this.state = stateDir(opts);
    const timeout = parseDuration(opts.stopTimeout);
    if (timeout === undefined) throw new SherlockError('SHERLOCK_USAGE', `--stop-timeout: a duration like "30s" expected, not ${JSON.stringify(opts.stopTimeout)}`);
    this.stopTimeout = timeout;
    // Checked once here, so a bad config stops everything before any child starts.
    loadSettings(globals);
    this.notifyDir = mkdtempSync(join(runtimeDir() ?? tmpdir(), 'sherlock-run-'));
  }

  async run(): Promise<number> {
    const stopped = new Promise<void>((resolve) => (this.allStopped = resolve));
    this.d = daemon({
      stop: (signal, count) => this.stop(signal, count),
      reload: () => {
        loadSettings(this.globals); // throws on a bad config: the children keep theirs
        for (const child of this.children) child.process?.kill('SIGHUP');
      },
    });
    try {
      for (const child of this.children) {
        const path = join(this.notifyDir, `${child.name}.notify`);
        const socket = receiveNotifications(path, (fields) => this.notified(child, fields));
        if (socket !== undefined) {
          this.sockets.push(socket);
          child.notifyPath = path;
        }
        this.start(child);
      }
      log.notice('running', { daemons: DAEMONS.join(' '), state: this.state });
      if (this.sockets.length === 0) this.d.ready('daemons started');
      await stopped;
    } finally {
      clearTimeout(this.killTimer);
      for (const socket of this.sockets) socket.close();
      rmSync(this.notifyDir, { recursive: true, force: true });
      this.d.close();
    }
    log.notice('stopped');
    return this.exitStatus;
  }

  private start(child: Child): void {
    child.restart = undefined;
    child.ready = false;
    const args = [
      ...process.execArgv,
      CLI,
      ...(this.globals.config === undefined ? [] : ['--config', this.globals.config]),
      ...(this.globals.set ?? []).flatMap((set) => ['--set', set]),
      child.name,
      'run',
      '--state',
      this.state,
      ...(child.name === 'searcher' && this.opts.listen !== undefined ? ['--listen', this.opts.listen] : []),
    ];
    const env = { ...process.env };
    // The children answer to us, not to systemd: their own socket, no watchdog of theirs.
    for (const name of ['NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WATCHDOG_PID']) delete env[name];
    if (child.notifyPath !== undefined) env['NOTIFY_SOCKET'] = child.notifyPath;
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'pipe', 'ipc'], env, detached: true });
    child.process = proc;
    child.startedAt = Date.now();
    createInterface({ input: proc.stderr! }).on('line', (line) => process.stderr.write(prefixed(child.name, line)));
    proc.on('error', (err) => log.err('cannot start a daemon', { daemon: child.name, problem: err.message }));
    proc.on('exit', (code, signal) => this.exited(child, proc, code, signal));
    log.notice('daemon started', { daemon: child.name, pid: proc.pid });
  }

  private exited(child: Child, proc: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (child.process !== proc) return;
    child.process = undefined;
    child.ready = false;
    const how = signal === null ? `status ${code}` : `signal ${signal}`;
    if (this.stopping) {
      log.info('daemon stopped', { daemon: child.name, exit: how });
      if (this.children.every((c) => c.process === undefined)) this.allStopped();
      return;
    }
    if (code === EXIT.config) {
      log.err('daemon refused its config; stopping everything', { daemon: child.name });
      this.exitStatus = EXIT.config;
      this.stop('config', 1);
      return;
    }
    if (Date.now() - child.startedAt >= STABLE_MS) child.failures = 0;
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** child.failures);
    child.failures += 1;
    log.warning('daemon exited; restarting', { daemon: child.name, exit: how, in_ms: delay });
    child.restart = setTimeout(() => this.start(child), delay);
  }

  private stop(signal: string, count: number): void {
    log.notice(count === 1 ? 'stopping the daemons' : 'stopping the daemons now', { signal });
    this.stopping = true;
    for (const child of this.children) {
      clearTimeout(child.restart);
      child.process?.kill('SIGTERM');
    }
    if (this.children.every((c) => c.process === undefined)) this.allStopped();
    this.killTimer ??= setTimeout(() => {
      for (const child of this.children) {
        if (child.process === undefined) continue;
        log.err('daemon did not stop in time; killing it', { daemon: child.name, pid: child.process.pid });
        child.process.kill('SIGKILL');
        this.exitStatus = EXIT.failure;
      }
    }, this.stopTimeout);
  }

  private notified(child: Child, fields: Map<string, string>): void {
    const status = fields.get('STATUS');
    if (status !== undefined) child.status = status;
    if (fields.get('READY') === '1' && !child.ready) {
      child.ready = true;
      if (this.children.every((c) => c.ready)) this.d?.ready(this.statusLine());
      return;
    }
    if (status !== undefined) this.d?.status(this.statusLine());
  }

  private statusLine(): string {
    return this.children.map((c) => `${c.name}: ${c.process === undefined ? 'restarting' : c.status || 'starting'}`).join('; ');
  }
}

/** The daemon's name after the line's syslog priority, if any. */
function prefixed(name: string, line: string): string {
  const priority = /^<\d>/.exec(line)?.[0] ?? '';
  return `${priority}[${name}] ${line.slice(priority.length)}\n`;
}
