/**
 * Random bytes at every listener the appliance opens, from real daemons:
 * `searcher run` (HTTP pages, the search API, the WebSocket upgrade and
 * frames after it), the admin listener of `gatherer run` (`/metrics`) and
 * that gatherer's control socket. Request lines, headers and bodies are
 * drawn from pieces that broke or nearly broke parsers before (targets `new
 * URL` cannot read, lying lengths, folded and colon-less headers, bad
 * chunking, binary), frames from every opcode, length, mask and reserved bit.
 *
 * For a bounded time (FUZZ_MS × SHERLOCK_FUZZ_SCALE, several clients at
 * once from addresses of their own), then: no process has exited, and each
 * listener still answers a correct request — a search over a new
 * WebSocket, /metrics, the control socket's `status`. SHERLOCK_FUZZ_SEED
 * replays a run; the seed is printed with the counts.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type NetConnectOpts, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { mulberry32 as random } from '../../bench/queries.js';
import { askControl, controlSocketPath } from '../../common/gather/control.js';
import { startCli, until, type Running } from '../helpers/cli.js';
import { clientFrame, upgradeRequest, type Target } from '../helpers/raw-client.js';
import { buildCli, crawlSite } from '../indexer/site.js';
import { Client } from '../searcher/net.js';

const SCALE = Number(process.env['SHERLOCK_FUZZ_SCALE'] ?? 1);
const SEED = Number(process.env['SHERLOCK_FUZZ_SEED'] ?? Date.now() % 2 ** 31);
/** How long each listener is fuzzed, at scale 1. */
const FUZZ_MS = 6000;
/** Clients sending at once per listener. */
const CLIENTS = 6;
/** How long a client waits for an answer before it moves on. */
const WAIT_MS = 250;

let state: string;
let searcher: Running;
let gatherer: Running;
let searcherTarget: Target;
let admin: Target;

before(async () => {
  state = mkdtempSync(join(tmpdir(), 'sherlock-fuzz-listeners-'));
  await crawlSite(state, { address: '127.0.0.162', bulk: 5 });
  await buildCli(state);
  searcher = startCli(undefined, ['searcher', 'run', '--state', state, '--listen', '127.0.0.1:0']);
  gatherer = startCli(undefined, ['gatherer', 'run', '--state', state, '--set', 'gatherer.admin_listen=127.0.0.1:0']);
  await until('the searcher to listen', () => /listening address=/.test(searcher.stderr), 60_000);
  await until('the admin listener and the control socket', () => /gatherer running/.test(gatherer.stderr), 60_000);
  searcherTarget = { host: '127.0.0.1', port: Number(/listening address=\S+:(\d+)/.exec(searcher.stderr)![1]) };
  const adminUrl = new URL(/metrics listening .*address=(\S+)/.exec(gatherer.stderr)![1]!);
  admin = { host: adminUrl.hostname, port: Number(adminUrl.port) };
});

after(async () => {
  for (const running of [searcher, gatherer]) {
    if (running === undefined || running.child.exitCode !== null) continue;
    running.child.kill('SIGTERM');
    await running.exited;
  }
  if (process.env['SHERLOCK_KEEP_TMP'] === undefined && state !== undefined) rmSync(state, { recursive: true, force: true });
});

class Draw {
  constructor(readonly next: () => number) {}
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(list: readonly T[]): T {
    return list[this.int(list.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  bytes(n: number): Buffer {
    return Buffer.from(Array.from({ length: n }, () => this.int(256)));
  }
  /** Mostly printable text, sometimes controls, NULs, high bytes and UTF-8. */
  text(max: number): string {
    const alphabet = ['a', 'Z', '0', '/', '%', '?', '&', '=', '[', ']', ':', '@', '.', '..', ' ', '\t', '\0', '\r', '\n', '\x7f', 'é', '東', '\u{1f600}', '\ufffd', '"', "'", '<', '\\', '*', '#'];
    return Array.from({ length: this.int(max) }, () => this.pick(alphabet)).join('');
  }
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE', 'PRI', 'get', 'G ET', '', 'X'.repeat(300)];
const TARGETS = ['/', '/healthz', '/metrics', '/status', '/search?q=w1x0', '/search?q=%22open', '/page.js', '//[', 'http://[::1', 'http://[', '*', '%', '/%zz', '//', 'http://127.0.0.1/../x', 'https://evil.example/', '/?q=' + 'a'.repeat(9000), '/\0', '/search?q=a&q=b&page=-1&site=%00'];
const VERSIONS = ['HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1x', '', 'HTTP/9', 'http/1.1'];
/** Headers a parser accepts; BAD_HEADERS are mixed in now and then, since any of them ends the request at 400. */
const HOSTS = ['Host: 127.0.0.1', 'Host: 127.0.0.1', 'Host: localhost', 'Host: evil.example', 'Host: [::1', 'Host:'];
const HEADERS = [
  'Upgrade: websocket',
  'Connection: Upgrade',
  'Connection: keep-alive',
  'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
  'Sec-WebSocket-Version: 13',
  'Sec-WebSocket-Protocol: sherlock.v1',
  'Origin: http://evil.example',
  'Origin: null',
  'Authorization: Bearer x',
  'Content-Length: 5',
  'Transfer-Encoding: chunked',
  'Expect: 100-continue',
  'If-None-Match: *',
];
const BAD_HEADERS = ['Content-Length: -1', 'Content-Length: 99999999999999999999', 'Content-Length: 1, 2', 'Transfer-Encoding: gzip, chunked', 'no colon here', ' folded: continuation', 'X-Long: ' + 'x'.repeat(20_000)];

function httpRequest(d: Draw): Buffer {
  const method = d.chance(0.7) ? d.pick(['GET', 'HEAD']) : d.pick(METHODS);
  const version = d.chance(0.7) ? 'HTTP/1.1' : d.pick(VERSIONS);
  const line = d.chance(0.9) ? `${method} ${d.chance(0.8) ? d.pick(TARGETS) : d.text(40)} ${version}` : d.text(60);
  const header = (): string => (d.chance(0.8) ? d.pick(HEADERS) : d.chance(0.5) ? d.pick(BAD_HEADERS) : `${d.text(12)}: ${d.text(30)}`);
  const headers = [...(d.chance(0.9) ? [d.pick(HOSTS)] : []), ...Array.from({ length: d.int(5) }, header)];
  const body = d.chance(0.3) ? (d.chance(0.5) ? d.bytes(d.int(200)) : Buffer.from(`${d.pick(['5', 'zz', '-1', 'ffffffffff', '0'])}\r\n${d.text(10)}\r\n`)) : Buffer.alloc(0);
  const head = Buffer.from(`${line}\r\n${headers.join('\r\n')}${d.chance(0.9) ? '\r\n\r\n' : '\r\n'}`, 'utf8');
  return Buffer.concat([head, body]);
}

const MESSAGES = [
  '{"type":"hello"}',
  '{"type":"search","id":"a","q":"w1x0"}',
  '{"type":"search","id":"a","q":"\\"open","limit":1e308}',
  '{"type":"subscribe","id":"s","topic":"status"}',
  '{"type":"cancel","id":"a"}',
  '{"type":"ping"}',
  '{"__proto__":{"type":"search"}}',
  '[]',
  'null',
  '{"type":"search","id":"' + 'i'.repeat(500) + '","q":"x"}',
];

/** Frames after a well-formed upgrade: every opcode, fin and reserved bits, masked or not, lengths that lie. */
function frames(d: Draw): Buffer {
  const out: Buffer[] = [Buffer.from(upgradeRequest(searcherTarget))];
  for (let i = d.int(6); i >= 0; i--) {
    const payload = d.chance(0.5) ? Buffer.from(d.pick(MESSAGES)) : d.chance(0.5) ? Buffer.from(d.text(200)) : d.bytes(d.int(300));
    const opcode = d.chance(0.6) ? d.pick([1, 2, 8, 9, 10, 0]) : d.int(16);
    let frame = clientFrame(opcode, payload, d.chance(0.9) ? payload.length : d.int(70_000), d.chance(0.85));
    if (d.chance(0.1)) frame[0]! |= 0x70; // reserved bits
    if (d.chance(0.1)) frame = Buffer.concat([Buffer.from([frame[0]!, frame[1]! & 0x7f]), payload]); // unmasked
    if (d.chance(0.1)) frame = frame.subarray(0, d.int(frame.length));
    out.push(frame);
  }
  return Buffer.concat(out);
}

function controlLines(d: Draw): Buffer {
  const lines = Array.from({ length: d.int(5) + 1 }, () => (d.chance(0.5) ? d.pick(['status', 'pause', 'resume', 'STATUS', 'status ', '', 'stop', 'x'.repeat(300)]) : d.text(80)));
  return d.chance(0.2) ? d.bytes(d.int(600)) : Buffer.from(lines.join(d.pick(['\n', '\r\n', '\0'])) + (d.chance(0.8) ? '\n' : ''));
}

/** Sends `bytes` on a new connection, reads for WAIT_MS or until the peer closes, then closes; counts what came back. */
function exchange(options: NetConnectOpts, bytes: Buffer, tally: Map<string, number>): Promise<void> {
  return new Promise((resolve) => {
    const socket: Socket = connect(options);
    let first = '';
    let settled = false;
    const done = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const what = /^HTTP\/1\.1 (\d{3})/.exec(first)?.[1] ?? (first === '' ? 'nothing' : 'other');
      tally.set(what, (tally.get(what) ?? 0) + 1);
      resolve();
    };
    const timer = setTimeout(done, WAIT_MS);
    socket.on('error', done);
    socket.on('close', done);
    socket.once('data', (chunk: Buffer) => (first = chunk.toString('latin1', 0, 16)));
    socket.on('connect', () => socket.write(bytes));
  });
}

/** Runs CLIENTS loops of `one`, each with a generator of its own, for FUZZ_MS × SCALE. */
async function fuzz(name: string, seed: number, one: (d: Draw, client: number) => Promise<void>): Promise<void> {
  const deadline = Date.now() + FUZZ_MS * SCALE;
  let sent = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      const d = new Draw(random(seed + client));
      while (Date.now() < deadline) {
        await one(d, client);
        sent++;
      }
    }),
  );
  console.log(`${name}: ${sent} exchanges, seed ${seed}`);
}

function assertAlive(): void {
  for (const [name, running] of [['searcher', searcher], ['gatherer', gatherer]] as const) {
    assert.equal(running.child.exitCode, null, `${name} exited: ${running.stderr.slice(-2000)}`);
  }
}

test(`random request lines, headers and bodies at the searcher's port and at an admin listener leave both serving (seed ${SEED})`, { timeout: 120_000 + FUZZ_MS * SCALE * 3 }, async (t) => {
  const tally = new Map<string, number>();
  await fuzz('searcher http', SEED, (d, client) => exchange({ ...searcherTarget, localAddress: `127.0.4.${client + 1}` }, httpRequest(d), tally));
  await fuzz('admin http', SEED + 100, (d, client) => exchange({ ...admin, localAddress: `127.0.4.${client + 1}` }, httpRequest(d), tally));
  console.log(`answers: ${JSON.stringify(Object.fromEntries(tally))}`);
  assertAlive();
  assert.equal((await fetch(`http://${admin.host}:${admin.port}/metrics`)).status, 200);
  const client = await Client.open(t, `ws://127.0.0.1:${searcherTarget.port}/`);
  assert.equal((await client.next()).type, 'welcome');
  assert.equal((await client.search('after', 'w1x0')).type, 'result');
});

test(`random WebSocket frames after the upgrade leave the searcher answering (seed ${SEED})`, { timeout: 120_000 + FUZZ_MS * SCALE * 3 }, async (t) => {
  const tally = new Map<string, number>();
  await fuzz('searcher ws', SEED + 200, (d, client) => exchange({ ...searcherTarget, localAddress: `127.0.4.${client + 20}` }, frames(d), tally));
  assertAlive();
  const client = await Client.open(t, `ws://127.0.0.1:${searcherTarget.port}/`);
  assert.equal((await client.next()).type, 'welcome');
  assert.equal((await client.search('after', 'w1x0')).type, 'result');
});

test(`random lines and bytes at the gatherer's control socket leave it answering status (seed ${SEED})`, { timeout: 120_000 + FUZZ_MS * SCALE * 3 }, async () => {
  const tally = new Map<string, number>();
  const path = controlSocketPath(state);
  await fuzz('control socket', SEED + 300, (d) => exchange({ path }, controlLines(d), tally));
  assertAlive();
  const answer = await askControl(state, 'resume');
  assert.equal(answer?.ok, true, JSON.stringify(answer));
  assert.equal((await askControl(state, 'status'))?.ok, true);
});
