/**
 * The systemd notification protocol (sd_notify(3)) for the daemons' units
 * (Type=notify, WatchdogSec; etc/systemd/): one datagram of newline-separated
 * `KEY=value` lines to the AF_UNIX socket named by $NOTIFY_SOCKET.
 *
 * Transport. Node cannot send AF_UNIX datagrams itself, so (research memo
 * operators-and-ecosystem §2.1):
 *   1. the `unix-dgram` package (an optional dependency, a small native addon
 *      without system headers), for a socket path;
 *   2. else `systemd-notify` spawned with the fields as arguments, which
 *      also covers abstract sockets (`@name`, which unix-dgram cannot
 *      address). Its messages come from a child process, so the units say
 *      NotifyAccess=all;
 *   3. no $NOTIFY_SOCKET (not under systemd, or a test): nothing is sent.
 * A failed send is logged once and never stops the daemon: notifications
 * are a courtesy to the service manager, not part of the work.
 *
 * What the daemons send: READY=1 once they really serve (databases open,
 * sockets bound); STATUS= a short progress line; WATCHDOG=1 every half
 * $WATCHDOG_USEC while their own liveness check passes (a stuck event loop
 * sends nothing, and systemd restarts the unit); RELOADING=1 with
 * MONOTONIC_USEC on SIGHUP, then READY=1 again; STOPPING=1 on SIGTERM.
 *
 * The manager's side, receiveNotifications(): a socket at a path collecting
 * the fields of each datagram, for `sherlock run`, which supervises the
 * daemons itself (one socket per child: unix-dgram does not tell senders apart).
 */

import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { logger } from '../log.js';

const log = logger('sd-notify');

interface DgramSocket {
  send(buf: Buffer, offset: number, length: number, path: string, callback: (err?: Error) => void): void;
  bind(path: string): void;
  on(event: 'error', listener: (err: Error) => void): void;
  on(event: 'message', listener: (data: Buffer) => void): void;
  close(): void;
}
interface DgramModule {
  createSocket(type: 'unix_dgram'): DgramSocket;
}

/** The unix-dgram module, or undefined when it is not installed or did not build. */
function loadDgram(): DgramModule | undefined {
  try {
    return createRequire(import.meta.url)('unix-dgram') as DgramModule;
  } catch {
    return undefined;
  }
}

export class Notifier {
  /** undefined: not tried yet; null: unix-dgram unavailable, systemd-notify is used. */
  private socket: DgramSocket | null | undefined;
  private warned = false;
  private watchdog: NodeJS.Timeout | undefined;

  /**
   * A notifier for `env`'s $NOTIFY_SOCKET (process.env by default); `spawn`
   * uses systemd-notify even where unix-dgram would do.
   */
  constructor(
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly transport: 'auto' | 'spawn' = 'auto',
  ) {}

  /** Whether a service manager listens (a notification would go somewhere). */
  get active(): boolean {
    return (this.env['NOTIFY_SOCKET'] ?? '') !== '';
  }

  /** Sends fields as one datagram: `notify({ READY: 1, STATUS: 'serving' })`. */
  notify(fields: Record<string, string | number>): void {
    const target = this.env['NOTIFY_SOCKET'];
    if (target === undefined || target === '') return;
    // A value cannot hold a newline: it would start another field.
    const lines = Object.entries(fields).map(([key, value]) => `${key}=${String(value).replace(/\n/g, ' ')}`);
    if (this.socket === undefined) this.socket = this.transport === 'spawn' ? null : this.openSocket();
    const dgram = target.startsWith('/') ? this.socket : null;
    if (dgram !== null) {
      const data = Buffer.from(lines.join('\n'));
      dgram.send(data, 0, data.length, target, (err) => {
        if (err !== undefined) this.failed(err);
      });
      return;
    }
    const child = spawn('systemd-notify', lines, { stdio: 'ignore', env: { ...process.env, NOTIFY_SOCKET: target } });
    child.on('error', (err) => this.failed(err));
    child.on('exit', (code) => {
      if (code !== 0 && code !== null) this.failed(new Error(`systemd-notify exited with ${code}`));
    });
  }

  ready(status?: string): void {
    this.notify({ READY: 1, ...(status === undefined ? {} : { STATUS: status }) });
  }

  status(text: string): void {
    this.notify({ STATUS: text });
  }

  /** RELOADING=1 with the monotonic clock (systemd ≥ 253 wants it); call ready() when the reload is done. */
  reloading(): void {
    // process.hrtime is CLOCK_MONOTONIC on Linux, the clock systemd compares with.
    this.notify({ RELOADING: 1, MONOTONIC_USEC: (process.hrtime.bigint() / 1000n).toString() });
  }

  stopping(): void {
    this.stopWatchdog();
    this.notify({ STOPPING: 1 });
  }

  /**
   * Sends WATCHDOG=1 every half $WATCHDOG_USEC while `alive()` holds; nothing
   * when systemd set no watchdog (or set it for another process).
   */
  startWatchdog(alive: () => boolean): void {
    const usec = Number(this.env['WATCHDOG_USEC'] ?? '');
    const pid = this.env['WATCHDOG_PID'];
    if (!this.active || !(usec > 0) || (pid !== undefined && pid !== '' && Number(pid) !== process.pid)) return;
    this.stopWatchdog();
    this.watchdog = setInterval(() => {
      if (alive()) this.notify({ WATCHDOG: 1 });
    }, Math.max(1, Math.floor(usec / 2000)));
    this.watchdog.unref();
  }

  private stopWatchdog(): void {
    if (this.watchdog !== undefined) clearInterval(this.watchdog);
    this.watchdog = undefined;
  }

  /** Stops the watchdog and closes the socket. */
  close(): void {
    this.stopWatchdog();
    this.socket?.close();
    this.socket = undefined;
  }

  private openSocket(): DgramSocket | null {
    const dgram = loadDgram();
    if (dgram === undefined) return null;
    const socket = dgram.createSocket('unix_dgram');
    socket.on('error', (err) => this.failed(err));
    return socket;
  }

  private failed(err: Error): void {
    if (this.warned) return;
    this.warned = true;
    log.warning('cannot notify the service manager; carrying on without', { socket: this.env['NOTIFY_SOCKET'], problem: err.message });
  }
}

/**
 * Binds a datagram socket at `path` (a service manager's $NOTIFY_SOCKET) and
 * hands over the fields of each datagram; undefined when unix-dgram is
 * unavailable (the caller then does without).
 */
export function receiveNotifications(path: string, onFields: (fields: Map<string, string>) => void): { close(): void } | undefined {
  const dgram = loadDgram();
  if (dgram === undefined) return undefined;
  const socket = dgram.createSocket('unix_dgram');
  socket.on('error', (err) => log.warning('notification socket failed', { file: path, problem: err.message }));
  socket.on('message', (data) => {
    const fields = new Map<string, string>();
    for (const line of data.toString('utf8').split('\n')) {
      const eq = line.indexOf('=');
      if (eq > 0) fields.set(line.slice(0, eq), line.slice(eq + 1));
    }
    onFields(fields);
  });
  socket.bind(path);
  return { close: () => socket.close() };
}
