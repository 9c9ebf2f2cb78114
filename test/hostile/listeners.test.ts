/**
 * Attacks on the listeners of real daemons (`sherlock searcher run` and
 * `gatherer run` with an admin listener, children of this test on loopback)
 * that once took them down or let a client hold what it should not:
 * a request-target `new URL` cannot read (it killed the process), idle TCP
 * connections up to the descriptor limit, DNS rebinding (a foreign Host with
 * its own Origin), pongs nobody asked for, clients that never read their
 * answers, and the bytes queued to all of them together. Each test fails on
 * the code before its fix (issue 26).
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { startCli, until, type Running } from '../helpers/cli.js';
import { parseExposition, sampleValue } from '../helpers/prometheus-text.js';
import { clientFrame, rawExchange, upgradeRequest, upgradedSocket, type Target } from '../helpers/raw-client.js';
import { buildCli, crawlSite } from '../indexer/site.js';
import { Client } from '../searcher/net.js';

/** A word of the bulk pages (test/indexer/site.ts): every bulk page has it, so its answers are long. */
const COMMON_WORD = 'w10x0';

let state: string;

before(async () => {
  state = mkdtempSync(join(tmpdir(), 'sherlock-hostile-listeners-'));
  await crawlSite(state, { address: '127.0.0.161', bulk: 30 });
  await buildCli(state);
});

after(() => {
  if (process.env['SHERLOCK_KEEP_TMP'] === undefined && state !== undefined) rmSync(state, { recursive: true, force: true });
});

const alive = (running: Running): boolean => running.child.exitCode === null && running.child.signalCode === null;

/** `searcher run` on the shared state with `settings` (searcher.KEY=VALUE), once it listens. */
async function searcher(t: TestContext, settings: string[] = [], wrapper?: string[]): Promise<{ running: Running; target: Target; address: string }> {
  const args = ['searcher', 'run', '--state', state, '--listen', '127.0.0.1:0', ...settings.flatMap((s) => ['--set', `searcher.${s}`])];
  const running = startCli(t, args, wrapper === undefined ? {} : { wrapper });
  await until('the searcher to listen', () => {
    if (!alive(running)) assert.fail(`the searcher exited: ${running.stderr}`);
    return /listening address=/.test(running.stderr);
  }, 60_000);
  const address = /listening address=(\S+)/.exec(running.stderr)![1]!;
  const port = Number(address.split(':').pop());
  return { running, target: { host: '127.0.0.1', port }, address };
}

/** The searcher's open WebSocket connections, from its /metrics. */
async function wsConnections(address: string): Promise<number> {
  const text = await (await fetch(`http://${address}/metrics`)).text();
  return sampleValue(parseExposition(text), 'sherlock_searcher_ws_connections') ?? -1;
}

/** One real search over a new WebSocket from 127.0.0.1; the answer's type. */
async function searchOnce(t: TestContext, address: string): Promise<string> {
  const client = await Client.open(t, `ws://${address}/`);
  assert.equal((await client.next()).type, 'welcome');
  const answer = await client.search('good', COMMON_WORD);
  client.ws.close();
  return answer.type;
}

test('a request-target that is not a URL is answered 400 by the searcher (page and upgrade) and by an admin listener, which refuses upgrades; both go on serving', { timeout: 120_000 }, async (t) => {
  const { running, target, address } = await searcher(t);
  const gatherer = startCli(t, ['gatherer', 'run', '--state', state, '--set', 'gatherer.admin_listen=127.0.0.1:0']);
  await until('the admin listener', () => /metrics listening .*address=/.test(gatherer.stderr), 60_000);
  const admin = new URL(/metrics listening .*address=(\S+)/.exec(gatherer.stderr)![1]!);
  const adminTarget = { host: admin.hostname, port: Number(admin.port) };
  for (const line of ['GET //[ HTTP/1.1', 'GET http://[::1 HTTP/1.1', 'GET http://[ HTTP/1.1', 'HEAD //[::1]:x/ HTTP/1.1']) {
    for (const [name, at] of [['searcher', target], ['admin', adminTarget]] as const) {
      const answer = await rawExchange(at, `${line}\r\nHost: x\r\nConnection: close\r\n\r\n`, '127.0.0.1');
      assert.match(answer, /^HTTP\/1\.1 400 /, `${name}, ${line}: ${answer.split('\r\n')[0]}`);
    }
    const upgrade = upgradeRequest(target).replace('GET / HTTP/1.1', line);
    assert.match(await rawExchange(target, upgrade, '127.0.0.1'), /^HTTP\/1\.1 400 /, `upgrade, ${line}`);
  }
  // The admin listener takes no upgrades: refused, not left open without a timer.
  assert.match(await rawExchange(adminTarget, upgradeRequest(adminTarget), '127.0.0.1', 2000), /^HTTP\/1\.1 400 /);
  assert.ok(alive(running), running.stderr);
  assert.ok(alive(gatherer), gatherer.stderr);
  assert.equal((await fetch(`http://${address}/healthz`)).status, 200);
  assert.equal((await fetch(admin)).status, 200);
  assert.equal(await searchOnce(t, address), 'result');
});

/** Opens `count` TCP connections from `localAddress` that send nothing; resolves once each is connected or refused. */
async function idleSockets(t: TestContext, target: Target, localAddress: string, count: number): Promise<Socket[]> {
  const sockets = await Promise.all(
    Array.from({ length: count }, () => {
      const socket = connect({ ...target, localAddress });
      socket.on('error', () => socket.destroy());
      return new Promise<Socket>((resolve) => {
        socket.once('connect', () => resolve(socket));
        socket.once('close', () => resolve(socket));
      });
    }),
  );
  t.after(() => sockets.forEach((s) => s.destroy()));
  return sockets;
}

test('idle TCP connections cannot use up the descriptors: past the cap the oldest silent ones are closed, past the per-address cap new ones; /healthz and searches go on', { timeout: 120_000 }, async (t) => {
  // 256 descriptors leave 128 sockets ("auto"); 400 idle connections from 8 addresses are far past that.
  const { running, target, address } = await searcher(t, [], ['prlimit', '--nofile=256:256']);
  const idle: Socket[] = [];
  for (let i = 1; i <= 8; i++) idle.push(...(await idleSockets(t, target, `127.0.3.${i}`, 50)));
  assert.equal((await fetch(`http://${address}/healthz`, { signal: AbortSignal.timeout(5000) })).status, 200);
  assert.equal(await searchOnce(t, address), 'result');
  await until('the evicted sockets to close', () => idle.filter((s) => s.destroyed || s.readableEnded).length >= 400 - 128, 10_000).catch(() => undefined);
  const open = idle.filter((s) => !s.destroyed && !s.readableEnded);
  assert.ok(open.length <= 128, `${open.length} idle connections still open`);

  // One address alone: at most max_sockets_per_ip stay open.
  const one = await idleSockets(t, target, '127.0.3.100', 200);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const kept = one.filter((s) => !s.destroyed && !s.readableEnded).length;
  assert.ok(kept <= 128, `${kept} connections kept from one address`);
  assert.equal((await fetch(`http://${address}/healthz`, { signal: AbortSignal.timeout(5000) })).status, 200);
  assert.ok(alive(running), running.stderr);
});

test('a connection that sends no request head within header_timeout is closed', { timeout: 60_000 }, async (t) => {
  const { target } = await searcher(t, ['header_timeout=500ms']);
  const [silent] = await idleSockets(t, target, '127.0.3.200', 1);
  const started = Date.now();
  await new Promise<void>((resolve) => silent!.once('close', () => resolve()).resume());
  assert.ok(Date.now() - started < 5000, 'closed well before Node’s own header timeout');
});

test('DNS rebinding: a foreign Host is refused 421 for pages, searches and the upgrade, whatever its Origin; IP addresses, localhost and server_names are served', { timeout: 60_000 }, async (t) => {
  const { target } = await searcher(t, ['server_names=search.example.org']);
  const { port } = target;
  const ask = (host: string, path: string): Promise<string> => rawExchange(target, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`, '127.0.0.1');
  for (const path of ['/', '/healthz', `/search?q=${COMMON_WORD}`, '/metrics', '/status']) {
    assert.match(await ask(`evil.example:${port}`, path), /^HTTP\/1\.1 421 /, path);
    assert.match(await ask(`127.0.0.1.evil.example:${port}`, path), /^HTTP\/1\.1 421 /, path);
  }
  const rebound = upgradeRequest(target, `Origin: http://evil.example:${port}\r\n`).replace(/Host: [^\r]*/, `Host: evil.example:${port}`);
  assert.match(await rawExchange(target, rebound, '127.0.0.1'), /^HTTP\/1\.1 421 /);
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST.:${port}`, `[::1]:${port}`, `search.example.org:${port}`, 'Search.Example.Org']) {
    assert.match(await ask(host, '/healthz'), /^HTTP\/1\.1 200 /, host);
  }
  const own = upgradeRequest(target, `Origin: http://localhost:${port}\r\n`).replace(/Host: [^\r]*/, `Host: localhost:${port}`);
  assert.match(await rawExchange(target, own, '127.0.0.1', 500), /^HTTP\/1\.1 101 /);
});

test('pongs nobody asked for do not keep a client that never reads alive', { timeout: 60_000 }, async (t) => {
  const { target, address } = await searcher(t, ['heartbeat_interval=300ms']);
  const { socket } = await upgradedSocket(target, '127.0.3.201');
  t.after(() => socket.destroy());
  socket.pause(); // never reads: cannot echo the server's ping payload
  socket.on('error', () => undefined);
  const pongs = setInterval(() => socket.writable && socket.write(clientFrame(0xa, Buffer.from('still here'))), 100);
  t.after(() => clearInterval(pongs));
  await new Promise((resolve) => setTimeout(resolve, 2000));
  assert.equal(await wsConnections(address), 0, 'the client was cut off within a few heartbeats');
});

/**
 * A client that never reads an answer and keeps asking: 200 searches every
 * 300 ms (answered before the next batch, so within max_in_flight) until the
 * server stops reading it and its own writes back up.
 */
async function nonReader(t: TestContext, target: Target, localAddress: string): Promise<void> {
  const { socket } = await upgradedSocket(target, localAddress);
  socket.pause();
  socket.on('error', () => undefined);
  let n = 0;
  const flood = setInterval(() => {
    if (socket.destroyed || socket.writableLength > 1024 * 1024) return;
    for (let i = 0; i < 200; i++) socket.write(clientFrame(1, Buffer.from(JSON.stringify({ type: 'search', id: `s${n++}`, q: COMMON_WORD, limit: 100 }))));
  }, 300);
  t.after(() => {
    clearInterval(flood);
    socket.destroy();
  });
}

const floodSettings = ['message_rate=0', 'ip_search_rate=0', 'max_in_flight=1000', 'heartbeat_interval=1m'];

test('a client that keeps more than send_high_water unread is cut off after send_timeout, even with the heartbeat far away', { timeout: 120_000 }, async (t) => {
  const { running, target, address } = await searcher(t, [...floodSettings, 'send_high_water=64KiB', 'send_timeout=1s']);
  await nonReader(t, target, '127.0.3.202');
  const deadline = Date.now() + 30_000;
  while ((await wsConnections(address)) !== 0) {
    assert.ok(Date.now() < deadline, `the non-reading client is still connected after 30 s\n${running.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.equal(await searchOnce(t, address), 'result');
});

test('the bytes queued to all clients stay under max_buffered: the clients holding the most are cut off first, a reading client is served', { timeout: 120_000 }, async (t) => {
  const { running, target, address } = await searcher(t, [...floodSettings, 'send_timeout=10m', 'max_buffered=1MiB']);
  const good = await Client.open(t, `ws://${address}/`);
  assert.equal((await good.next()).type, 'welcome');
  await nonReader(t, target, '127.0.3.203');
  await until('a client cut off for the send buffers', () => /send buffers of all clients are full/.test(running.stderr), 60_000);
  assert.equal((await good.search('after', COMMON_WORD)).type, 'result');
  assert.equal(await wsConnections(address), 1, 'only the reading client is left');
});
