/**
 * What every daemon command (`gatherer run`, `shepherd run`, …) does the same
 * way under systemd: signals and the notification protocol
 * (common/service/sd-notify.ts). SIGTERM and SIGINT ask the daemon to stop (a second
 * one, to stop at once) and send STOPPING=1; SIGHUP sends RELOADING=1, lets
 * the daemon re-read its config and sends READY=1 again; the watchdog pings
 * while the daemon says it is alive. A daemon started by `sherlock run` also
 * stops when its supervisor is gone. At start it logs which deflate path is
 * in use (common/deflate/libdeflate.ts: the libdeflate binding or node:zlib).
 */

import { deflatePathFields } from '../common/deflate/libdeflate.js';
import { logger } from '../common/log.js';
import { Notifier } from '../common/service/sd-notify.js';

const log = logger('daemon');

export interface DaemonHooks {
  /** Stop: the first signal (count 1) drains, a second one may abort. */
  stop(signal: string, count: number): void;
  /** Re-read the config and apply it; throw to keep the old one. */
  reload(): void;
  /** The daemon's own liveness check, asked before each watchdog ping. */
  alive?(): boolean;
}

export interface Daemon {
  /** READY=1 (and a STATUS line): call once the daemon really serves. */
  ready(status: string): void;
  status(text: string): void;
  /** Removes the signal handlers and closes the notifier; call when the daemon has stopped. */
  close(): void;
}

export function daemon(hooks: DaemonHooks): Daemon {
  log.notice('deflate', deflatePathFields());
  const notifier = new Notifier();
  let stops = 0;
  const onStop = (signal: string): void => {
    stops += 1;
    notifier.stopping();
    hooks.stop(signal, stops);
  };
  const onHup = (): void => {
    notifier.reloading();
    try {
      hooks.reload();
      log.notice('config reloaded');
    } catch (err) {
      log.err('config not reloaded; keeping the old one', { problem: err instanceof Error ? err.message : String(err) });
    }
    notifier.ready();
  };
  process.on('SIGTERM', onStop).on('SIGINT', onStop).on('SIGHUP', onHup);
  // Under `sherlock run` the supervisor holds an IPC channel to us: it closes
  // when the supervisor dies, even by SIGKILL, and we stop as on SIGTERM.
  const onOrphaned = (): void => onStop('supervisor gone');
  if (process.channel !== undefined) {
    process.channel.unref();
    process.once('disconnect', onOrphaned);
  }
  return {
    ready(status) {
      notifier.ready(status);
      notifier.startWatchdog(hooks.alive ?? (() => true));
    },
    status(text) {
      notifier.status(text);
    },
    close() {
      process.off('SIGTERM', onStop).off('SIGINT', onStop).off('SIGHUP', onHup).off('disconnect', onOrphaned);
      notifier.close();
    },
  };
}
