/**
 * `sherlock run` on a state seeded with a loopback site: the four daemons
 * crawl, index and answer a search over the searcher's WebSocket; READY=1
 * reaches the service manager once every daemon is ready; a daemon killed
 * with SIGKILL is started again; SIGINT stops every daemon and exits 0.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client, type Message } from '../searcher/net.js';
import { daemonPids, gone, runCli, startCli, until } from '../helpers/cli.js';
import { startFixture } from '../helpers/http-fixtures.js';
import { LOOPBACK_CRAWL, linkedPages } from '../helpers/linked-site.js';
import { notifySocket } from '../helpers/notify-socket.js';
import { scratchDir } from '../helpers/paths.js';

test('sherlock run crawls, indexes and serves a loopback site, restarts a killed daemon, and stops them all on SIGINT', async (t) => {
  const site = await startFixture({ address: '127.0.0.63', routes: linkedPages('runpage', 5) });
  t.after(() => site.close());
  const state = scratchDir(t);
  writeFileSync(join(state, 'seeds'), `${site.origin}/runpage0\n`);
  const injected = await runCli(['inject', '--state', state, join(state, 'seeds')]);
  assert.equal(injected.status, 0, injected.stderr);
  const notify = notifySocket(t);
  const fast = ['shepherd.cycle_interval=100ms', 'indexer.poll_interval=100ms', 'indexer.rebuild_documents=1', 'indexer.workers=1'].flatMap((set) => ['--set', set]);
  const run = startCli(t, ['run', '--state', state, '--listen', '127.0.0.1:0', ...LOOPBACK_CRAWL, ...fast], { env: { NOTIFY_SOCKET: notify.path } });
  t.after(() => {
    for (const daemon of ['gatherer', 'shepherd', 'indexer', 'searcher']) for (const pid of daemonPids(run, daemon)) if (!gone(pid)) process.kill(pid, 'SIGKILL');
  });

  await until('READY=1 from sherlock run', () => notify.messages.some((m) => m.startsWith('READY=1')), 30_000);
  assert.match(notify.messages.find((m) => m.startsWith('READY=1'))!, /STATUS=gatherer: .*; shepherd: .*; indexer: .*; searcher: listening/);
  const address = /\[searcher\] searcher: searcher listening address=(\S+)/.exec(run.stderr)?.[1];
  assert.ok(address !== undefined, run.stderr);

  const client = await Client.open(t, `ws://${address}/`);
  let answer: Message | undefined;
  for (let n = 0; answer?.type !== 'result' || (answer['total'] as { value: number }).value === 0; n++) {
    assert.ok(n < 600, `no hit for the last page: ${JSON.stringify(answer)}\n${run.stderr}`);
    if (n > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    answer = await client.search(`q${n}`, 'runpageword4');
  }
  assert.equal((answer['hits'] as { url: string }[])[0]!.url, `${site.origin}/runpage4`);

  const [gatherer] = daemonPids(run, 'gatherer');
  process.kill(gatherer!, 'SIGKILL');
  await until('the gatherer started again', () => daemonPids(run, 'gatherer').length === 2, 30_000);
  assert.match(run.stderr, /daemon exited; restarting daemon=gatherer exit="signal SIGKILL"/);
  await until('the new gatherer ready', () => run.stderr.includes('[gatherer] gatherer: gatherer running') && run.stderr.lastIndexOf('gatherer running') > run.stderr.lastIndexOf('daemon started daemon=gatherer'), 30_000);

  run.child.kill('SIGINT');
  assert.equal(await run.exited, 0, run.stderr);
  for (const daemon of ['gatherer', 'shepherd', 'indexer', 'searcher']) {
    const started = daemonPids(run, daemon);
    assert.ok(started.length > 0, daemon);
    assert.ok(gone(started.at(-1)!), `${daemon} still running`);
    assert.match(run.stderr, new RegExp(`\\[${daemon}\\] `));
  }
  assert.match(run.stderr, /stopped/);
});

test('sherlock run killed with SIGKILL: its daemons notice and stop on their own', async (t) => {
  const state = scratchDir(t);
  const notify = notifySocket(t);
  // Killed, it cannot remove its notification directory: that goes in the test's scratch directory.
  const run = startCli(t, ['run', '--state', state, '--listen', '127.0.0.1:0'], { env: { NOTIFY_SOCKET: notify.path, TMPDIR: scratchDir(t) } });
  const daemons = ['gatherer', 'shepherd', 'indexer', 'searcher'];
  t.after(() => {
    for (const daemon of daemons) for (const pid of daemonPids(run, daemon)) if (!gone(pid)) process.kill(pid, 'SIGKILL');
  });
  await until('READY=1 from sherlock run', () => notify.messages.some((m) => m.startsWith('READY=1')), 30_000);
  run.child.kill('SIGKILL');
  await run.exited;
  for (const daemon of daemons) {
    const [pid] = daemonPids(run, daemon);
    await until(`${daemon} gone`, () => gone(pid!), 30_000);
  }
});
