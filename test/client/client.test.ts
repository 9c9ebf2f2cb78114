/**
 * The typed client against a real searcher on a real index (searcher.ts):
 * answers equal to the raw socket's, errors as SherlockError, cancel by
 * signal and by supersede, the limits kept (no TOO_MANY_REQUESTS where a
 * naive client meets it, a retry after retry_after_ms), the token and its
 * refusal, reconnection after the searcher restarts, the status topic, and
 * the package's `sherlock/client` entry.
 */

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { promisify } from 'node:util';
import { WebSocket } from 'undici';
import { SherlockClient, SherlockError, type StatusData } from '../../client/sherlock-client.js';
import { repoRoot } from '../helpers/paths.js';
import { Client, listening, type Message } from '../searcher/net.js';
import { startCli } from '../helpers/cli.js';
import { scratchDir } from '../helpers/paths.js';
import { HOST, clientOf, figures, serve, useIndex } from './searcher.js';

useIndex();

const execFileAsync = promisify(execFile);

/** Resolves once the client is welcomed. */
function welcomed(client: SherlockClient): Promise<void> {
  if (client.state === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const off = client.on('welcome', () => {
      off();
      resolve();
    });
  });
}

async function rejection(promise: Promise<unknown>): Promise<SherlockError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof SherlockError, String(err));
    return err;
  }
  assert.fail('the promise resolved');
}

const withoutIdAndTime = ({ id: _id, took_ms: _took, ...rest }: Record<string, unknown>) => rest;

test('a search resolves with what the raw socket answers; errors reject as SherlockError with their fields', async (t) => {
  const server = await serve(t, { result_cache: 0 });
  const client = clientOf(t, server);
  const fields = { q: 'detective', limit: 5, filters: { type: ['html'] } };
  const result = await client.search(fields);
  const raw = await Client.open(t, `ws://${server.address}/`);
  const answer: Message = await raw.search('r1', fields.q, { limit: 5, filters: fields.filters });
  assert.equal(result.type, 'result');
  assert.ok(result.hits.length > 0, 'the index has the word');
  assert.deepEqual(withoutIdAndTime({ ...result }), withoutIdAndTime(answer));

  const bad = await rejection(client.search({ q: '"open' }));
  assert.deepEqual([bad.code, bad.reason, bad.position], ['BAD_QUERY', 'syntax', 0]);
  const field = await rejection(client.search({ q: 'x', limit: 101 }));
  assert.deepEqual([field.code, field.field], ['BAD_MESSAGE', 'limit']);
  assert.equal(client.welcome?.protocol, 'sherlock.v1');
});

test('the package exports the client as sherlock/client (self-reference through exports)', async () => {
  const specifier: string = 'sherlock/client';
  const exported = (await import(specifier)) as { SherlockClient: unknown };
  assert.equal(exported.SherlockClient, SherlockClient);
});

test('cancel: an aborted signal and a superseded search reject CANCELLED, the searcher sees the cancel, only the latest resolves', async (t) => {
  const server = await serve(t, { max_in_flight: 2 });
  const client = clientOf(t, server);
  await welcomed(client);

  const controller = new AbortController();
  const aborted = rejection(client.search({ q: 'detective' }, { signal: controller.signal }));
  controller.abort();
  assert.equal((await aborted).code, 'CANCELLED');

  // The aborted one holds a slot until the searcher answers its cancel; the first takes the other and is
  // cancelled on the wire; the second waits for a slot and is dropped here.
  const first = rejection(client.search({ q: 'detective' }, { supersede: 'box' }));
  const second = rejection(client.search({ q: 'gazette' }, { supersede: 'box' }));
  const third = client.search({ q: 'twins' }, { supersede: 'box' });
  const result = await third;
  assert.ok(result.hits.some((h) => h.url.endsWith('/twin-a') || h.url.endsWith('/twin-b')), JSON.stringify(result.hits.map((h) => h.url)));
  assert.equal((await first).code, 'CANCELLED');
  assert.equal((await second).code, 'CANCELLED');

  const seen = await figures(t, server);
  assert.equal(seen.searches, 3, JSON.stringify(seen) + ' the aborted one, the first and the third reached the searcher; the second never left');
  assert.equal(seen.answers['CANCELLED'], 2, JSON.stringify(seen.answers));
  assert.equal(seen.rate_limited, 0);
});

test('limits: with max_in_flight 1, ten searches at once all resolve and the searcher refuses none', async (t) => {
  const server = await serve(t, { max_in_flight: 1 });
  const client = clientOf(t, server);
  const words = ['detective', 'gazette', 'twins', 'hermitage', 'orchard', 'tokyo', 'dessert', 'baker', 'famous', 'street'];
  const results = await Promise.all(words.map((q) => client.search({ q })));
  assert.equal(results.length, 10);
  assert.ok(results.every((r) => r.type === 'result'));
  const seen = await figures(t, server);
  assert.equal(seen.rate_limited, 0);
  assert.equal(seen.searches, 10);
});

test('limits: under a small message_rate the client paces its messages where a naive client is refused', async (t) => {
  const server = await serve(t, { message_rate: 5, message_burst: 3 });
  const client = clientOf(t, server);
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => client.search({ q: i % 2 === 0 ? 'detective' : 'gazette' })));
  assert.ok(results.every((r) => r.type === 'result'));
  assert.ok(performance.now() - started > 800, 'paced, not sent at once');
  assert.equal((await figures(t, server)).rate_limited, 0);

  const naive = await Client.open(t, `ws://${server.address}/`);
  for (let i = 0; i < 8; i++) naive.send({ type: 'search', id: `n${i}`, q: 'detective' });
  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => naive.answer(`n${i}`)));
  assert.ok(answers.some((a) => a['code'] === 'TOO_MANY_REQUESTS'), 'the same searcher refuses a client that does not pace');
});

test('limits: TOO_MANY_REQUESTS with retry_after_ms (the address bucket used by another connection) is retried after it', async (t) => {
  const server = await serve(t, { ip_search_rate: 2, ip_search_burst: 2 });
  const other = await Client.open(t, `ws://${server.address}/`);
  assert.equal((await other.search('o1', 'detective')).type, 'result');
  assert.equal((await other.search('o2', 'detective')).type, 'result');
  const client = clientOf(t, server);
  const result = await client.search({ q: 'gazette' });
  assert.equal(result.type, 'result');
  assert.ok((await figures(t, server)).rate_limited >= 1, 'the first try was refused');
});

test('token: the right one is welcomed; a wrong one rejects UNAUTHORIZED without a reconnection loop; setToken fixes it', async (t) => {
  const server = await serve(t, {}, 'sesame');
  const good = clientOf(t, server, { token: 'sesame' });
  assert.equal((await good.search({ q: 'detective' })).type, 'result');

  const client = clientOf(t, server, { token: 'wrong', reconnect: { minMs: 20, maxMs: 50 } });
  let opens = 0;
  client.on('open', () => opens++);
  const unauthorized = new Promise<string>((resolve) => client.on('unauthorized', ({ message }) => resolve(message)));
  const refused = await rejection(client.search({ q: 'detective' }));
  assert.equal(refused.code, 'UNAUTHORIZED');
  assert.match(await unauthorized, /token/);
  assert.equal((await rejection(client.search({ q: 'detective' }))).code, 'UNAUTHORIZED', 'refused at once while unauthorized');
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(opens, 1, 'no reconnection after 4401');
  assert.equal(client.state, 'unauthorized');

  client.setToken('sesame');
  assert.equal((await client.search({ q: 'detective' })).type, 'result');
  assert.equal(opens, 2);
});

test('reconnect: a search out when the searcher stops and one issued while it is down resolve once it is back on the same port; the status subscription resumes', async (t) => {
  const first = await serve(t);
  const address = first.address;
  const port = Number(address.split(':').pop());
  const client = clientOf(t, first, { reconnect: { minMs: 50, maxMs: 200 } });
  const events: StatusData[] = [];
  client.subscribeStatus((data) => events.push(data));
  assert.equal((await client.search({ q: 'detective' })).type, 'result');
  await until(() => events.length > 0);

  const closed = new Promise<number>((resolve) => client.on('close', ({ code }) => resolve(code)));
  // Sent on the open socket as the searcher goes away: it reaches a closing connection and is never answered there.
  assert.equal(client.state, 'ready');
  const outAtClose = client.search({ q: 'hermitage' });
  await first.close();
  assert.equal(await closed, 1001);
  const before = events.length;
  const waiting = client.search({ q: 'gazette' });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(client.state === 'ready', false);

  const second = await serve(t, {}, undefined, port);
  assert.equal(second.address, address);
  assert.ok((await outAtClose).hits.some((h) => h.url.endsWith('/lonely')), 'the search out when the searcher went away was sent again');
  const result = await waiting;
  assert.equal(result.type, 'result');
  assert.ok(result.hits.length > 0);
  await until(() => events.length > before);
  assert.ok(Number(events.at(-1)!['uptime_s']) < Number(events[before - 1]!['uptime_s']) + 1, 'the events are the new searcher’s');
});

test('a request waiting longer than unavailableAfterMs for a connection rejects UNAVAILABLE; close() rejects what is pending CANCELLED', async (t) => {
  const server = await serve(t);
  const client = clientOf(t, server, { reconnect: { minMs: 50, maxMs: 100 }, unavailableAfterMs: 300 });
  await welcomed(client);
  await server.close();
  const lost = await rejection(client.search({ q: 'detective' }));
  assert.equal(lost.code, 'UNAVAILABLE');
  const pending = client.search({ q: 'detective' });
  client.close();
  assert.equal((await rejection(pending)).code, 'CANCELLED');
  assert.equal(client.state, 'closed');
});

test('close() from a listener of close or reconnecting ends the reconnecting there', async (t) => {
  const server = await serve(t);
  const address = server.address;
  await server.close();
  for (const event of ['close', 'reconnecting'] as const) {
    let sockets = 0;
    // undici's WebSocket, counting the sockets the client opens.
    const Counted = class extends WebSocket {
      constructor(url: string, protocol: string) {
        super(url, protocol);
        sockets++;
      }
    };
    const client = new SherlockClient(`ws://${address}/`, { WebSocket: Counted, reconnect: { minMs: 5, maxMs: 10 } });
    client.on(event, () => client.close());
    await until(() => client.state === 'closed');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual([event, sockets, client.state], [event, 1, 'closed']);
  }
});

test('a searcher that stops answering (SIGSTOP) is left after its query timeout and more; the search goes again once it answers', async (t) => {
  const running = startCli(t, ['searcher', 'run', '--state', scratchDir(t), '--listen', `${HOST}:0`, '--set', 'searcher.query_timeout=200ms']);
  const address = await listening(running);
  const client = new SherlockClient(`ws://${address}/`, { WebSocket, reconnect: { minMs: 50, maxMs: 200 }, unavailableAfterMs: 60_000 });
  t.after(() => client.close());
  const closes: string[] = [];
  client.on('close', ({ reason }) => closes.push(reason));
  await welcomed(client);
  // Stopped, the process keeps its sockets open and says nothing: a half-open connection as far as the client can tell.
  running.child.kill('SIGSTOP');
  t.after(() => running.child.kill('SIGCONT'));
  const pending = client.search({ q: 'detective' });
  await until(() => closes.includes('no word from the searcher in 5200 ms with requests out'), 15_000);
  running.child.kill('SIGCONT');
  assert.equal((await rejection(pending)).code, 'NO_INDEX');
});

test('the silence timer starts with the first request out after a quiet spell: a searcher pausing briefly then is not left', async (t) => {
  const running = startCli(t, ['searcher', 'run', '--state', scratchDir(t), '--listen', `${HOST}:0`, '--set', 'searcher.query_timeout=200ms']);
  const client = new SherlockClient(`ws://${await listening(running)}/`, { WebSocket, reconnect: { minMs: 50, maxMs: 200 } });
  t.after(() => client.close());
  const closes: string[] = [];
  client.on('close', ({ reason }) => closes.push(reason));
  await welcomed(client);
  assert.equal((await rejection(client.search({ q: 'detective' }))).code, 'NO_INDEX');
  // Just before a timer armed by that answer would fire (200 ms + 5 s), a search meets a searcher paused for 400 ms.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  running.child.kill('SIGSTOP');
  t.after(() => running.child.kill('SIGCONT'));
  const pending = client.search({ q: 'detective' });
  await new Promise((resolve) => setTimeout(resolve, 400));
  running.child.kill('SIGCONT');
  assert.equal((await rejection(pending)).code, 'NO_INDEX');
  assert.deepEqual(closes, [], 'the connection was kept');
});

async function until(ok: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) assert.fail('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('the platform WebSocket: node --experimental-websocket needs no option; without one the client says what to do', async (t) => {
  const server = await serve(t);
  const script = `const { SherlockClient } = await import('sherlock/client');
const client = new SherlockClient(process.argv[1]);
const result = await client.search({ q: 'detective' });
console.log(JSON.stringify(result.hits.map((h) => h.url)));
client.close();`;
  const child = await execFileAsync(process.execPath, ['--experimental-websocket', '--no-warnings', '--input-type=module', '-e', script, `ws://${server.address}/`], { cwd: repoRoot });
  const expected = (await clientOf(t, server).search({ q: 'detective' })).hits.map((h) => h.url);
  assert.deepEqual(JSON.parse(child.stdout), expected);
  if ((globalThis as { WebSocket?: unknown }).WebSocket === undefined) {
    assert.throws(() => new SherlockClient(`ws://${server.address}/`), /--experimental-websocket/);
  }
});

test('the declarations the package ships resolve for a program importing sherlock/client', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sherlock-client-types-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(repoRoot, join(dir, 'node_modules', 'sherlock'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
  writeFileSync(
    join(dir, 'use.ts'),
    `import { SherlockClient, SherlockError, type ResultMessage } from 'sherlock/client';
const client = new SherlockClient('ws://127.0.0.1:1/', { token: 't', reconnect: { minMs: 1 } });
export const answer: Promise<ResultMessage> = client.search({ q: 'x', filters: { site: ['example.org'] } });
export const code: 'CANCELLED' | string = new SherlockError({ code: 'CANCELLED', message: '' }).code;
// @ts-expect-error a search has a q
client.search({ limit: 1 });
// @ts-expect-error no such error code
new SherlockError({ code: 'OOPS', message: '' });
`,
  );
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  const run = await execFileAsync(process.execPath, [tsc, '--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', 'use.ts'], { cwd: dir }).catch((err: { stdout: string }) => err);
  assert.equal(run.stdout, '', 'tsc found no error');
});
