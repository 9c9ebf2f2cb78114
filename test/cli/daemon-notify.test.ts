/**
 * The daemons under a service manager: each daemon command, started with
 * $NOTIFY_SOCKET pointing at a datagram socket of this test (a real AF_UNIX
 * socket, as systemd's), sends READY=1 once it serves, WATCHDOG=1 at half
 * $WATCHDOG_USEC, RELOADING=1 with MONOTONIC_USEC and then READY=1 on
 * SIGHUP, and STOPPING=1 on SIGTERM, in that order; then exits 0.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startCli, until } from '../helpers/cli.js';
import { notifySocket } from '../helpers/notify-socket.js';
import { scratchDir } from '../helpers/paths.js';

for (const command of [
  ['shepherd', 'run'],
  ['gatherer', 'run'],
  ['indexer', 'run'],
  ['searcher', 'run', '--listen', '127.0.0.1:0'],
  // The supervisor of the four: READY=1 once each of them said READY=1 to it.
  ['run', '--listen', '127.0.0.1:0'],
]) {
  test(`${command.join(' ')}: READY, WATCHDOG, RELOADING then READY on SIGHUP, STOPPING on SIGTERM`, async (t) => {
    const state = scratchDir(t);
    const notify = notifySocket(t);
    const daemon = startCli(t, [...command, '--state', state], { env: { NOTIFY_SOCKET: notify.path, WATCHDOG_USEC: '200000' } });
    const seen = (field: string) => notify.messages.findIndex((m) => m.split('\n').includes(field));
    await until('READY=1', () => seen('READY=1') >= 0);
    await until('a watchdog ping', () => seen('WATCHDOG=1') > seen('READY=1'));
    daemon.child.kill('SIGHUP');
    await until('RELOADING=1', () => seen('RELOADING=1') >= 0);
    const reloading = notify.messages[seen('RELOADING=1')]!;
    assert.match(reloading, /^RELOADING=1\nMONOTONIC_USEC=\d+$/);
    await until('READY=1 after the reload', () => notify.messages.slice(seen('RELOADING=1')).some((m) => m.startsWith('READY=1')));
    daemon.child.kill('SIGTERM');
    assert.equal(await daemon.exited, 0, daemon.stderr);
    assert.ok(seen('STOPPING=1') > seen('RELOADING=1'), notify.messages.join(' | '));
    assert.match(notify.messages[seen('READY=1')]!, /^READY=1\nSTATUS=./);
  });
}
