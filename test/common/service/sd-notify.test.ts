/**
 * The notification transports of common/service/sd-notify.ts, received on a real
 * AF_UNIX datagram socket: unix-dgram and the systemd-notify fallback
 * deliver the same fields; values cannot smuggle in a field; without
 * $NOTIFY_SOCKET nothing is sent; the watchdog pings only while alive.
 * (The daemons' use of it: test/cli/daemon-notify.test.ts.)
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Notifier } from '../../../common/service/sd-notify.js';
import { until } from '../../helpers/cli.js';
import { notifySocket } from '../../helpers/notify-socket.js';

for (const transport of ['auto', 'spawn'] as const) {
  test(`${transport === 'auto' ? 'unix-dgram' : 'systemd-notify'} delivers the fields as one datagram; a newline in a value stays in it`, async (t) => {
    const socket = notifySocket(t);
    const notifier = new Notifier({ NOTIFY_SOCKET: socket.path }, transport);
    t.after(() => notifier.close());
    notifier.ready('serving\nWATCHDOG=1');
    await until('the datagram', () => socket.messages.some((m) => m.startsWith('READY=1')));
    assert.equal(socket.messages.find((m) => m.startsWith('READY=1')), 'READY=1\nSTATUS=serving WATCHDOG=1');
  });
}

test('no NOTIFY_SOCKET: inactive, and nothing is sent', () => {
  const notifier = new Notifier({});
  assert.equal(notifier.active, false);
  notifier.ready('x');
  notifier.startWatchdog(() => true);
  notifier.close();
});

test('the watchdog pings at half WATCHDOG_USEC, only while alive, and not for another PID', async (t) => {
  const socket = notifySocket(t);
  let alive = false;
  const notifier = new Notifier({ NOTIFY_SOCKET: socket.path, WATCHDOG_USEC: '100000' });
  t.after(() => notifier.close());
  notifier.startWatchdog(() => alive);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(socket.messages.length, 0, 'no ping while not alive');
  alive = true;
  await until('pings', () => socket.messages.filter((m) => m === 'WATCHDOG=1').length >= 3);
  notifier.stopping();
  await until('STOPPING=1', () => socket.messages.includes('STOPPING=1'));
  const pings = socket.messages.length;
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(socket.messages.length, pings, 'no ping after STOPPING');

  const other = notifySocket(t);
  const elsewhere = new Notifier({ NOTIFY_SOCKET: other.path, WATCHDOG_USEC: '100000', WATCHDOG_PID: String(process.pid + 1) });
  t.after(() => elsewhere.close());
  elsewhere.startWatchdog(() => true);
  await new Promise((r) => setTimeout(r, 250));
  assert.deepEqual(other.messages, []);
});
