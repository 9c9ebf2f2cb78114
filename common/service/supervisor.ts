/**
 * Long-running child processes kept running, for `sherlock run` (cli/run.ts
 * gives it the four daemons' command lines): a service manager in small, for
 * one machine without systemd units.
 *
 * - Each child is `process.execPath` with its own arguments. Its stdout is
 *   ours; its stderr comes out of ours line by line, the child's name put
 *   after the syslog priority (`<6>[indexer] indexer: …`), so journald still
 *   reads the priority.
 * - A child that exits is started again after a back-off: 1 s, doubling to
 *   at most 60 s, back to 1 s once a child stayed up 60 s. A child exiting 78
 *   (bad config) is not: the config will not get better, so everything stops
 *   and the supervisor's status is 78.
 * - stop() (on SIGTERM or SIGINT): SIGTERM to every child, SIGKILL to those
 *   still running after the stop timeout (status 1, else 0). A second stop()
 *   passes the signal on again (the children then stop at once). reload() (on
 *   SIGHUP): SIGHUP to every child. Children run in their own process group,
 *   so a Ctrl-C at a terminal reaches only the supervisor, which passes it
 *   on once. Each holds an IPC channel to this process (unused but for its
 *   closing): should this process die, even by SIGKILL, they stop as on
 *   SIGTERM (cli/daemon.ts).
 * - Notifications: each child gets its own socket (sd-notify.ts) in a fresh
 *   directory, removed at the end; NOTIFY_SOCKET and the watchdog variables
 *   of our own service manager are not passed on. READY=1 goes to our
 *   service once every child said READY=1, and STATUS= gathers the
 *   children's status lines. Without unix-dgram, READY=1 follows the spawns.
 *
 * Its log lines are `run:` ones (`daemon started daemon=NAME pid=N`, …).
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { EXIT } from '../errors.js';
import { logger, type LogFields } from '../log.js';
import { receiveNotifications } from './sd-notify.js';

const log = logger('run');

/** Restart back-off: the first delay, the longest, and how long a child must stay up to be forgiven its failures. */
const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 60_000;
const STABLE_MS = 60_000;

export interface SupervisorOptions {
  /** In the order they start: a name, and the arguments of `process.execPath` that run it. */
  children: readonly { name: string; args: readonly string[] }[];
  /** How long children may take to stop before SIGKILL. */
  stopTimeoutMs: number;
  /** Where the directory of the children's notification sockets is made. */
  socketDir: string;
  /** Added to the `running` log line. */
  logFields?: LogFields;
}

/** The supervisor's own side towards its service manager (cli/daemon.ts's Daemon). */
export interface SupervisedService {
  ready(status: string): void;
  status(text: string): void;
  close(): void;
}

interface Child {
  name: string;
  args: readonly string[];
  process?: ChildProcess;
  startedAt: number;
  failures: number;
  restart?: NodeJS.Timeout;
  ready: boolean;
  status: string;
  notifyPath?: string;
}

export class Supervisor {
  private readonly children: Child[];
  private readonly sockets: { close(): void }[] = [];
  private readonly notifyDir: string;
  private stopping = false;
  private exitStatus: number = EXIT.ok;
  private service: SupervisedService | undefined;
  private allStopped: () => void = () => undefined;
  private killTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: SupervisorOptions) {
    this.children = opts.children.map(({ name, args }) => ({ name, args, startedAt: 0, failures: 0, ready: false, status: '' }));
    this.notifyDir = mkdtempSync(join(opts.socketDir, 'sherlock-run-'));
  }

  /** Starts the children and resolves with the exit status once stop() has stopped them all; closes `service` at the end. */
  async run(service: SupervisedService): Promise<number> {
    const stopped = new Promise<void>((resolve) => (this.allStopped = resolve));
    this.service = service;
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
      log.notice('running', { daemons: this.children.map((c) => c.name).join(' '), ...this.opts.logFields });
      if (this.sockets.length === 0) service.ready('daemons started');
      await stopped;
    } finally {
      clearTimeout(this.killTimer);
      for (const socket of this.sockets) socket.close();
      rmSync(this.notifyDir, { recursive: true, force: true });
      service.close();
    }
    log.notice('stopped');
    return this.exitStatus;
  }

  /** SIGHUP to every running child. */
  reload(): void {
    for (const child of this.children) child.process?.kill('SIGHUP');
  }

  /** SIGTERM to every child (again on a second call, count 2), no more restarts; SIGKILL after the stop timeout. */
  stop(signal: string, count: number): void {
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
    }, this.opts.stopTimeoutMs);
  }

  private start(child: Child): void {
    child.restart = undefined;
    child.ready = false;
    const env = { ...process.env };
    // The children answer to us, not to systemd: their own socket, no watchdog of theirs.
    for (const name of ['NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WATCHDOG_PID']) delete env[name];
    if (child.notifyPath !== undefined) env['NOTIFY_SOCKET'] = child.notifyPath;
    const proc = spawn(process.execPath, child.args, { stdio: ['ignore', 'inherit', 'pipe', 'ipc'], env, detached: true });
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

  private notified(child: Child, fields: Map<string, string>): void {
    const status = fields.get('STATUS');
    if (status !== undefined) child.status = status;
    if (fields.get('READY') === '1' && !child.ready) {
      child.ready = true;
      if (this.children.every((c) => c.ready)) this.service?.ready(this.statusLine());
      return;
    }
    if (status !== undefined) this.service?.status(this.statusLine());
  }

  private statusLine(): string {
    return this.children.map((c) => `${c.name}: ${c.process === undefined ? 'restarting' : c.status || 'starting'}`).join('; ');
  }
}

/** The child's name after the line's syslog priority, if any. */
function prefixed(name: string, line: string): string {
  const priority = /^<\d>/.exec(line)?.[0] ?? '';
  return `${priority}[${name}] ${line.slice(priority.length)}\n`;
}
