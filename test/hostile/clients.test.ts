/**
 * Hostile clients of the searcher: a real index (crawled and built with the
 * CLI), the real server in this process with a token, and attackers on their
 * own loopback source addresses (per-IP limits are per address) — oversized
 * frames and frame headers, invalid JSON and UTF-8, floods, 2,000
 * connections, expensive queries, path traversal, foreign Origins, missing
 * and wrong tokens. Each attack must be refused with its documented code
 * (docs/api.md) while a well-behaved client on its own connection keeps
 * asking and must have every query answered; its latency is reported (as a
 * figure, not asserted).
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { setLogSink } from '../../common/log.js';
import { searcherConfig } from '../../searcher/config.js';
import { MAX_REFUSALS } from '../../searcher/connection.js';
import { IndexEngine } from '../../searcher/index-engine.js';
import { MAX_PAYLOAD } from '../../searcher/protocol.js';
import { MAX_TERMS } from '../../searcher/query.js';
import { SearchServer } from '../../searcher/server.js';
import { MiB, peakRssGrowth } from '../helpers/memory.js';
import { buildCli, crawlSite } from '../indexer/site.js';
import { clientFrame, closeCode, rawExchange, upgradeRequest, upgradedSocket, type Target } from '../helpers/raw-client.js';
import { Client } from '../searcher/net.js';

const TOKEN = 'hostile-clients-token';
const MAX_CONNECTIONS = 1000;
/** A word of the bulk pages (test/indexer/site.ts), so the good client's query has hits. */
const GOOD_QUERY = 'w10x0';

let state: string;
let server: SearchServer;
let port: number;
let good: Client;
let goodSeq = 0;
/** The good client's latencies, alone (before the attacks) and during them. */
const baseline: number[] = [];
const latencies: number[] = [];
let attacker = 10;
let previousSink: Parameters<typeof setLogSink>[0] | undefined;
/** The good client's pace: well inside message_rate (20 a second). */
const GOOD_PAUSE_MS = 100;

/** A loopback source address of its own for each attacker, so per-IP limits do not mix them up with the good client. */
const nextAttackerIp = (): string => `127.0.2.${attacker++}`;

before(async () => {
  previousSink = setLogSink(() => undefined); // the attacks are logged line by line; the assertions say what matters
  state = mkdtempSync(join(tmpdir(), 'sherlock-hostile-clients-'));
  await crawlSite(state, { address: '127.0.0.160', bulk: 30 });
  await buildCli(state);
  const engine = await IndexEngine.start({ state, pollMs: 0 });
  const config = searcherConfig.parse({ listen: '127.0.0.1:0', max_connections: MAX_CONNECTIONS });
  server = await SearchServer.listen({ config, engine, token: TOKEN });
  port = Number(server.address.split(':').pop());
  good = await open(undefined, '127.0.0.1');
  good.send({ type: 'hello', token: TOKEN });
  assert.equal((await good.next()).type, 'welcome');
  for (let i = 0; i < 20; i++) await goodQuery(baseline);
});

after(async () => {
  good?.ws.terminate();
  await server?.close();
  if (previousSink !== undefined) setLogSink(previousSink);
  const figures = (list: number[]): string => {
    const sorted = [...list].sort((a, b) => a - b);
    const at = (q: number): string => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(1);
    return `${sorted.length} queries, median ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${at(1)} ms`;
  };
  console.log(`good client alone: ${figures(baseline)}; during the attacks: ${figures(latencies)}`);
  if (process.env['SHERLOCK_KEEP_TMP'] === undefined && state !== undefined) rmSync(state, { recursive: true, force: true });
});

async function open(t: TestContext | undefined, localAddress: string, headers: Record<string, string> = {}): Promise<Client> {
  // before() has no test context; the good client opened there is closed in after().
  const client = await Client.open((t ?? { after: () => undefined }) as TestContext, `ws://127.0.0.1:${port}/`, { localAddress, headers });
  t?.after(() => client.ws.terminate());
  return client;
}

/** One query of the good client; it must be answered with a result that found something. */
async function goodQuery(into = latencies): Promise<void> {
  const id = `good-${goodSeq++}`;
  const began = performance.now();
  const answer = await good.search(id, GOOD_QUERY);
  into.push(performance.now() - began);
  assert.equal(answer.type, 'result', `the good client was not served: ${JSON.stringify(answer)}`);
  assert.ok((answer['total'] as { value: number }).value > 0);
}

/** Runs the attack while the good client keeps asking; every one of its queries must be answered. */
async function whileServed<T>(attack: () => Promise<T>): Promise<T> {
  let done = false;
  const asking = (async () => {
    let asked = 0;
    while (!done || asked < 3) {
      await goodQuery();
      asked++;
      await new Promise((resolve) => setTimeout(resolve, GOOD_PAUSE_MS));
    }
  })();
  try {
    return await attack();
  } finally {
    done = true;
    await asking;
  }
}

const target = (): Target => ({ host: '127.0.0.1', port });
const raw = (text: string | Buffer, localAddress: string, ms?: number): Promise<string> => rawExchange(target(), text, localAddress, ms);
const upgrade = (extra = ''): string => upgradeRequest(target(), extra);
const upgraded = (localAddress: string) => upgradedSocket(target(), localAddress);

test('frames: oversized frames, a frame header claiming 1 GiB, invalid UTF-8 and binary frames are closed with 1009, 1007 and 4400', async () => {
  await whileServed(async () => {
    const big = await upgraded(nextAttackerIp());
    big.socket.write(clientFrame(1, Buffer.alloc(MAX_PAYLOAD + 1, 0x61)));
    assert.equal(closeCode(await big.closed), 1009);

    const claims = await upgraded(nextAttackerIp());
    claims.socket.write(clientFrame(1, Buffer.from('{"type":'), 1024 * MiB)); // the header alone must be enough to refuse it
    assert.equal(closeCode(await claims.closed), 1009);

    const utf8 = await upgraded(nextAttackerIp());
    utf8.socket.write(clientFrame(1, Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d])));
    assert.equal(closeCode(await utf8.closed), 1007);

    const binary = await upgraded(nextAttackerIp());
    binary.socket.write(clientFrame(2, Buffer.from(`{"type":"hello","token":"${TOKEN}"}`)));
    assert.equal(closeCode(await binary.closed), 4400);
  });
});

test('messages: invalid JSON is BAD_MESSAGE until a flood of it closes with 4400; a message flood is TOO_MANY_REQUESTS, then 4429', async (t) => {
  await whileServed(async () => {
    const junk = await open(t, nextAttackerIp());
    junk.send({ type: 'hello', token: TOKEN });
    await junk.next((m) => m.type === 'welcome');
    for (const text of ['{', '[]', '"hello"', 'null', '{"type":"search","id":1,"q":"x"}', '{"type":"search","id":"a","q":"x","__proto__":{"limit":1000}}']) {
      junk.send(text);
      const answer = await junk.next();
      assert.equal(answer['code'], 'BAD_MESSAGE', `${text}: ${JSON.stringify(answer)}`);
    }
    for (let i = 0; i < 100; i++) junk.send('not json at all');
    assert.equal((await junk.closed).code, 4400);

    const flood = await open(t, nextAttackerIp());
    flood.send({ type: 'hello', token: TOKEN });
    await flood.next((m) => m.type === 'welcome');
    for (let i = 0; i < 5000; i++) flood.send({ type: 'search', id: `f${i}`, q: GOOD_QUERY });
    assert.equal((await flood.closed).code, 4429);
    const refused = flood.received.filter((m) => m['code'] === 'TOO_MANY_REQUESTS');
    assert.ok(refused.length >= MAX_REFUSALS, `closed after ${refused.length} refusals`);
    t.diagnostic(`message flood: ${flood.received.filter((m) => m.type === 'result').length} searches answered, ${refused.length} refused before the 4429 close`);
  });
});

test('authentication and origin: no hello, a wrong token or a search before hello close with 4401; a foreign Origin is refused 403 before any socket', async (t) => {
  await whileServed(async () => {
    const wrong = await open(t, nextAttackerIp());
    wrong.send({ type: 'hello', token: `${TOKEN}x` });
    assert.equal((await wrong.closed).code, 4401);
    assert.equal(wrong.received.some((m) => m.type === 'welcome'), false);

    const early = await open(t, nextAttackerIp());
    early.send({ type: 'search', id: 's', q: GOOD_QUERY });
    assert.equal((await early.closed).code, 4401);
    assert.equal(early.received.some((m) => m.type === 'result'), false);

    const empty = await open(t, nextAttackerIp());
    empty.send({ type: 'hello' });
    assert.equal((await empty.closed).code, 4401);

    const ip = nextAttackerIp();
    for (const origin of ['https://evil.example', 'null', `http://127.0.0.1:${port}.evil.example`, `http://127.0.0.1:${port + 1}`]) {
      const answer = await raw(upgrade(`Origin: ${origin}\r\n`), ip);
      assert.match(answer, /^HTTP\/1\.1 403 /, `${origin}: ${answer.split('\r\n')[0]}`);
    }
    const own = await raw(upgrade(`Origin: http://127.0.0.1:${port}\r\n`), ip, 500);
    assert.match(own, /^HTTP\/1\.1 101 /, 'our own origin is let in');

    // /search over HTTP wants the token as a bearer token.
    const anonymous = await raw(`GET /search?q=${GOOD_QUERY} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`, ip);
    assert.match(anonymous, /^HTTP\/1\.1 401 /);
    const bearer = await raw(`GET /search?q=${GOOD_QUERY} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n\r\n`, ip);
    assert.match(bearer, /^HTTP\/1\.1 200 /);
  });
});

test('expensive queries are answered within the work bound or refused BAD_QUERY with the bound they break', async (t) => {
  const prefixes = Array.from({ length: MAX_TERMS }, (_, i) => `w1${i.toString(36)}*`);
  const wordsOf = (n: number): string[] => Array.from({ length: n }, (_, i) => `w${(36 + i).toString(36)}x0`);
  const answered = [
    prefixes.join(' '),
    prefixes.join(' OR '),
    wordsOf(MAX_TERMS).join(' OR '),
    `"${wordsOf(MAX_TERMS).join(' ')}"`,
    wordsOf(MAX_TERMS).join(' NEAR/100 '),
    `${'('.repeat(8)}w1* OR w2* OR w3*${')'.repeat(8)}`.replace(/w(\d)\*/g, 'w1$1*'),
    `${GOOD_QUERY} ${Array.from({ length: MAX_TERMS - 1 }, (_, i) => `-w2${i.toString(36)}*`).join(' ')}`,
  ];
  const refused: Array<[string, string]> = [
    [wordsOf(MAX_TERMS + 1).join(' OR '), 'too_many_terms'],
    [`${'('.repeat(9)}${GOOD_QUERY}${')'.repeat(9)}`, 'too_deep'],
    [`${'('.repeat(400)}${GOOD_QUERY}${')'.repeat(400)}`, 'too_deep'],
    ['-w10x0 -w11x0', 'only_excluded'],
    ['"unclosed phrase', 'syntax'],
  ];
  const client = await open(t, nextAttackerIp());
  client.send({ type: 'hello', token: TOKEN });
  await client.next((m) => m.type === 'welcome');
  const took: number[] = [];
  await whileServed(async () => {
    let n = 0;
    for (const q of answered) {
      const id = `e${n++}`;
      client.send({ type: 'search', id, q });
      const answer = await client.answer(id, 30_000); // query_timeout (10 s) answers TIMEOUT at the latest
      assert.ok(answer.type === 'result' || answer['code'] === 'TIMEOUT', `${q.slice(0, 60)}…: ${JSON.stringify(answer).slice(0, 300)}`);
      if (answer.type === 'result') took.push(answer['took_ms'] as number);
    }
    for (const [q, reason] of refused) {
      const answer = await client.search(`e${n++}`, q);
      assert.deepEqual([answer['code'], answer['reason']], ['BAD_QUERY', reason], q.slice(0, 60));
    }
    const long = await client.search('long', 'w'.repeat(MAX_PAYLOAD / 2));
    assert.deepEqual([long['code'], long['field']], ['BAD_MESSAGE', 'q']);
  });
  t.diagnostic(`expensive queries: ${took.length} answered, took_ms max ${Math.max(...took)}`);
});

test('path traversal on the HTTP side finds nothing outside the page assets', async () => {
  const ip = nextAttackerIp();
  await whileServed(async () => {
    for (const path of [
      '/../../../../etc/passwd',
      '/..%2f..%2f..%2fetc%2fpasswd',
      '/%2e%2e/%2e%2e/package.json',
      '/page.css/../../package.json',
      '/page.css/..%2f..%2fpackage.json',
      '//etc/passwd',
      '/render.js%00.css',
      '/..\\..\\package.json',
      '/%252e%252e/package.json',
      'http://127.0.0.1/../package.json',
    ]) {
      const answer = await raw(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`, ip);
      const status = answer.split('\r\n')[0]!;
      assert.match(status, /^HTTP\/1\.1 (404|400) /, `${path}: ${status}`);
      assert.doesNotMatch(answer, /root:|"name": "sherlock"|better-sqlite3/, `${path} leaked a file`);
    }
  });
});

test('2,000 connection attempts from 40 addresses: at most max_connections are taken, the rest refused 503, memory bounded', async (t) => {
  const sockets: Socket[] = [];
  t.after(() => sockets.forEach((s) => s.destroy()));
  const statuses = new Map<string, number>();
  const { growth } = await peakRssGrowth(() =>
    whileServed(async () => {
      const attempts: Promise<void>[] = [];
      for (let i = 0; i < 2000; i++) {
        const localAddress = `127.0.3.${10 + (i % 40)}`;
        attempts.push(
          new Promise<void>((resolve) => {
            const socket = connect({ host: '127.0.0.1', port, localAddress });
            sockets.push(socket);
            let seen = false;
            const note = (status: string): void => {
              if (seen) return;
              seen = true;
              statuses.set(status, (statuses.get(status) ?? 0) + 1);
              resolve();
            };
            socket.on('data', (chunk: Buffer) => note(chunk.toString('latin1').split(' ')[1] ?? '?'));
            // The code says which side gave up (a reset by the server, a connect that failed), should one ever show.
            socket.on('error', (err: NodeJS.ErrnoException) => note(`error ${err.code ?? err.message}`));
            socket.on('close', () => note('closed'));
            socket.write(upgrade());
          }),
        );
      }
      await Promise.all(attempts);
    }),
  );
  const summary = Object.fromEntries(statuses);
  t.diagnostic(`2,000 connection attempts: ${JSON.stringify(summary)}; peak RSS growth ${(growth / MiB).toFixed(0)} MiB`);
  assert.equal((statuses.get('101') ?? 0) + (statuses.get('503') ?? 0), 2000, JSON.stringify(summary));
  assert.ok((statuses.get('101') ?? 0) <= MAX_CONNECTIONS - 1, `more than max_connections were taken: ${JSON.stringify(summary)}`);
  assert.ok((statuses.get('503') ?? 0) >= 2000 - MAX_CONNECTIONS, JSON.stringify(summary));
  assert.ok(growth < 300 * MiB, `peak RSS grew by ${(growth / MiB).toFixed(0)} MiB`);
  // Unauthenticated sockets are cut after the hello timeout; closing ours frees the slots at once.
  for (const s of sockets) s.destroy();
  await goodQuery();
});

test('the good client was served all along', () => {
  assert.ok(latencies.length >= 15, `only ${latencies.length} good queries`);
});
