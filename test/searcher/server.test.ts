/**
 * The searcher's network layer end to end: a real server on 127.0.0.1 and
 * real WebSocket clients (the ws package's). The engine is `fixedEngine`
 * (net.ts), a stand-in for the evaluator that does not exist yet, so these
 * tests say what the protocol, the limits and the pages do, not what a
 * search finds.
 */

import assert from 'node:assert/strict';
import { request } from 'node:http';
import test from 'node:test';
import { INVALID_BURST, MAX_REFUSALS } from '../../searcher/connection.js';
import { searcherConfig } from '../../searcher/config.js';
import { setLogSink } from '../../common/log.js';
import { noIndexEngine } from '../../searcher/engine.js';
import { MAX_PAYLOAD } from '../../searcher/protocol.js';
import { Synonyms } from '../../searcher/synonyms.js';
import { until } from '../helpers/cli.js';
import { Client, fixedEngine, hit, startServer, type Message } from './net.js';

const hits = Array.from({ length: 25 }, (_, i) => hit(i + 1));

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

test('a search is answered with the hits, totals and facets the engine gave, under its id', async (t) => {
  const engine = fixedEngine({ hits, version: 'v7' });
  const { ws } = await startServer(t, engine);
  const client = await Client.open(t, ws);
  const welcome = await client.next();
  assert.equal(welcome.type, 'welcome');
  assert.equal(welcome['protocol'], 'sherlock.v1');
  assert.equal(welcome['index'], 'v7');
  const result = await client.search('q1', 'debian manual', { offset: 20, limit: 3, filters: { site: ['www.example.org'], type: ['html'] } });
  assert.equal(result.type, 'result');
  assert.equal(typeof result['took_ms'], 'number');
  assert.deepEqual(result['total'], { value: 25, relation: 'eq' });
  assert.deepEqual(result['hits'], hits.slice(20, 23));
  assert.deepEqual(result['facets'], { site: [{ value: 'example.org', count: 25 }], type: [{ value: 'text/html', count: 25 }], lang: [{ value: 'en', count: 25 }] });
  const call = engine.calls[0]!;
  assert.equal(call.query.kind, 'and');
  assert.deepEqual({ offset: call.offset, limit: call.limit, filters: call.filters }, {
    offset: 20,
    limit: 3,
    filters: { site: ['example.org'], type: ['text/html', 'application/xhtml+xml'] },
  });
  client.send({ type: 'ping', id: 'p1' });
  assert.deepEqual(await client.next(), { type: 'pong', id: 'p1' });
});

test('invalid messages are answered BAD_MESSAGE naming the field, and the socket stays open', async (t) => {
  const { ws } = await startServer(t, fixedEngine({ hits }));
  const client = await Client.open(t, ws);
  await client.next((m) => m.type === 'welcome');
  const cases: Array<[unknown, string | undefined, string | undefined]> = [
    ['{not json', undefined, undefined],
    [{ type: 'search', id: 'a', q: 'x', limit: 101 }, 'limit', 'a'],
    [{ type: 'search', id: 'b', q: 'x', offset: 1001 }, 'offset', 'b'],
    [{ type: 'search', id: 'c', q: 'x'.repeat(1025) }, 'q', 'c'],
    [{ type: 'search', id: 'x'.repeat(65), q: 'x' }, 'id', undefined],
    [{ type: 'search', id: 'd', q: 'x', filters: { site: ['a b'] } }, 'filters.site[0]', 'd'],
    [{ type: 'search', id: 'e', q: 'x', colour: 'red' }, 'colour', 'e'],
    [{ type: 'launch', id: 'f' }, 'type', 'f'],
  ];
  for (const [message, field, id] of cases) {
    client.send(message);
    const error = await client.next();
    assert.equal(error.type, 'error');
    assert.equal(error['code'], 'BAD_MESSAGE', JSON.stringify(error));
    assert.equal(error['field'], field);
    assert.equal(error.id, id);
  }
  assert.equal((await client.search('ok', 'x')).type, 'result');
});

test('a query that does not parse is answered BAD_QUERY with the parser code and position', async (t) => {
  const { ws } = await startServer(t, fixedEngine({ hits }));
  const client = await Client.open(t, ws);
  const error = await client.search('q', 'debian "manual');
  assert.deepEqual(
    { code: error['code'], reason: error['reason'], position: error['position'] },
    { code: 'BAD_QUERY', reason: 'syntax', position: 7 },
  );
  assert.equal((await client.search('q2', '')).reason, 'empty');
});

test('a search id in flight cannot be used again until it is answered', async (t) => {
  const { ws } = await startServer(t, fixedEngine({ hold: true }));
  const client = await Client.open(t, ws);
  client.send({ type: 'search', id: 'same', q: 'x' });
  client.send({ type: 'search', id: 'same', q: 'y' });
  const error = await client.next((m) => m.type === 'error');
  assert.deepEqual([error['code'], error['field'], error.id], ['BAD_MESSAGE', 'id', 'same']);
});

test('a binary frame closes the socket with 4400', async (t) => {
  const { ws } = await startServer(t, fixedEngine());
  const client = await Client.open(t, ws);
  client.ws.send(Buffer.from('{"type":"ping"}'));
  assert.equal((await client.closed).code, 4400);
});

test('a frame over 64 KiB closes the socket with 1009', async (t) => {
  const { ws } = await startServer(t, fixedEngine());
  const client = await Client.open(t, ws);
  client.send({ type: 'search', id: 'big', q: 'x'.repeat(MAX_PAYLOAD) });
  assert.equal((await client.closed).code, 1009);
});

test('a flood of invalid messages closes the socket with 4400', async (t) => {
  const { ws } = await startServer(t, fixedEngine());
  const client = await Client.open(t, ws);
  for (let i = 0; i <= INVALID_BURST + 5; i++) client.send('nonsense');
  assert.equal((await client.closed).code, 4400);
  assert.equal(client.received.filter((m) => m['code'] === 'BAD_MESSAGE').length, INVALID_BURST + 1);
});

test('with a token configured: no hello or a wrong token closes with 4401, the right one is welcome', async (t) => {
  const { ws, http, server } = await startServer(t, fixedEngine({ hits }), {}, 's3cret');
  const silent = await Client.open(t, ws);
  silent.send({ type: 'search', id: 'a', q: 'x' });
  assert.equal((await silent.closed).code, 4401);
  assert.equal(silent.received[0]?.['code'], 'UNAUTHORIZED');
  assert.equal(silent.received.some((m) => m.type === 'welcome' || m.type === 'result'), false);

  const wrong = await Client.open(t, ws);
  wrong.send({ type: 'hello', token: 's3cret!' });
  assert.equal((await wrong.closed).code, 4401);

  const right = await Client.open(t, ws);
  right.send({ type: 'hello', token: 's3cret' });
  assert.equal((await right.next()).type, 'welcome');
  assert.equal((await right.search('a', 'x')).type, 'result');

  assert.equal((await get(`${http}/search?q=x`)).status, 401);
  assert.equal((await get(`${http}/search?q=x`, { authorization: 'Bearer s3cret' })).status, 200);

  // A reload swaps the token for the next hello.
  server.reload(searcherConfig.parse({ listen: '127.0.0.1:0' }), 'n3w', Synonyms.NONE);
  const renewed = await Client.open(t, ws);
  renewed.send({ type: 'hello', token: 'n3w' });
  assert.equal((await renewed.next()).type, 'welcome');
});

test('the upgrade is refused for a foreign Origin, a missing subprotocol, or another path', async (t) => {
  const { ws } = await startServer(t, fixedEngine(), { allowed_origins: ['https://portal.example.org'] });
  const port = new URL(ws).port;
  await assert.rejects(Client.open(t, ws, { origin: 'https://evil.example' }), /HTTP 403/);
  await assert.rejects(Client.open(t, ws, { origin: `http://127.0.0.1:${Number(port) + 1}` }), /HTTP 403/);
  await assert.rejects(Client.open(t, ws, { protocol: 'graphql-ws' }), /HTTP 400/);
  await assert.rejects(Client.open(t, `${ws}api`), /HTTP 404/);
  for (const origin of [`http://127.0.0.1:${port}`, 'https://portal.example.org', undefined]) {
    const client = await Client.open(t, ws, origin === undefined ? {} : { origin });
    assert.equal(client.ws.protocol, 'sherlock.v1');
  }
});

test('connections over the per-IP cap are refused with 503', async (t) => {
  const { ws } = await startServer(t, fixedEngine(), { max_connections_per_ip: 2 });
  await Client.open(t, ws);
  await Client.open(t, ws);
  await assert.rejects(Client.open(t, ws), /HTTP 503/);
});

test('a flood is answered TOO_MANY_REQUESTS with retry_after_ms, then closed with 4429', async (t) => {
  const { ws } = await startServer(t, fixedEngine(), { message_rate: 1, message_burst: 5 });
  const client = await Client.open(t, ws);
  for (let i = 0; i < 5 + MAX_REFUSALS + 1; i++) client.send({ type: 'ping', id: `p${i}` });
  assert.equal((await client.closed).code, 4429);
  assert.equal(client.received.filter((m) => m.type === 'pong').length, 5);
  const refused = client.received.filter((m) => m['code'] === 'TOO_MANY_REQUESTS');
  assert.equal(refused.length, MAX_REFUSALS + 1);
  assert.ok(refused.every((m) => typeof m['retry_after_ms'] === 'number' && m['retry_after_ms'] > 0 && m['retry_after_ms'] <= 1000));
  assert.equal(refused[0]!.id, 'p5');
});

test('searches from one IP share one bucket across connections', async (t) => {
  const { ws } = await startServer(t, fixedEngine(), { ip_search_rate: 0.01, ip_search_burst: 3 });
  const a = await Client.open(t, ws);
  const b = await Client.open(t, ws);
  assert.equal((await a.search('1', 'x')).type, 'result');
  assert.equal((await a.search('2', 'x')).type, 'result');
  assert.equal((await b.search('3', 'x')).type, 'result');
  const refused = await b.search('4', 'x');
  assert.equal(refused['code'], 'TOO_MANY_REQUESTS');
  assert.ok((refused['retry_after_ms'] as number) > 1000);
});

test('suggests take the message bucket only: not a search slot, not the IP search bucket', async (t) => {
  const engine = fixedEngine({ hits: [hit(1, { title: 'Debian release notes' })], hold: true });
  const { ws } = await startServer(t, engine, { max_in_flight: 1, ip_search_rate: 0.01, ip_search_burst: 1, message_rate: 0.01, message_burst: 6 });
  const client = await Client.open(t, ws);
  // The one search slot and the IP's one search token taken by a search held in flight.
  client.send({ type: 'search', id: 'held', q: 'x' });
  for (let i = 0; i < 3; i++) {
    const answer = await client.suggest(`s${i}`, 'debian rel');
    assert.deepEqual([answer.type, answer['suggestions']], ['suggestions', [{ text: 'debian release notes', kind: 'title' }]]);
    assert.equal(typeof answer['took_ms'], 'number');
  }
  assert.equal((await client.search('q2', 'x'))['code'], 'TOO_MANY_REQUESTS');
  // An id in use by a search in flight is refused, as for a search.
  const taken = await client.suggest('held', 'deb');
  assert.deepEqual([taken['code'], taken['field']], ['BAD_MESSAGE', 'id']);
  // The seventh message: the connection's bucket is empty.
  assert.equal((await client.suggest('s3', 'deb'))['code'], 'TOO_MANY_REQUESTS');
});

test('searches in flight are capped per connection; cancel aborts the engine call and frees the slot', async (t) => {
  const engine = fixedEngine({ hold: true });
  const { ws } = await startServer(t, engine, { max_in_flight: 2 });
  const client = await Client.open(t, ws);
  client.send({ type: 'search', id: 'a', q: 'x' });
  client.send({ type: 'search', id: 'b', q: 'x' });
  const third = await client.search('c', 'x');
  assert.equal(third['code'], 'TOO_MANY_REQUESTS');
  assert.equal(third['retry_after_ms'], undefined);
  client.send({ type: 'cancel', id: 'a' });
  assert.equal((await client.answer('a'))['code'], 'CANCELLED');
  assert.equal(engine.aborted, 1);
  client.send({ type: 'search', id: 'd', q: 'x' });
  client.send({ type: 'cancel', id: 'unknown' });
  client.send({ type: 'ping', id: 'after' });
  await client.next((m) => m.type === 'pong');
  assert.equal(engine.calls.length, 3);
  assert.equal(client.received.some((m) => m.id === 'd' || m.id === 'unknown'), false);
});

test('an engine failure is answered INTERNAL without details, and logged with them', async (t) => {
  const lines: string[] = [];
  const previous = setLogSink((line) => lines.push(line));
  t.after(() => setLogSink(previous));
  const { ws } = await startServer(t, { ...fixedEngine(), search: () => Promise.reject(new Error('chain file vanished')) });
  const client = await Client.open(t, ws);
  const answer = await client.search('boom', 'x');
  assert.equal(answer['code'], 'INTERNAL');
  assert.doesNotMatch(String(answer['message']), /vanished/);
  assert.ok(lines.some((line) => line.startsWith('<3>searcher: search failed') && line.includes('chain file vanished')), lines.join('\n'));
});

test('a search running past query_timeout is aborted and answered TIMEOUT', async (t) => {
  const engine = fixedEngine({ hold: true });
  const { ws } = await startServer(t, engine, { query_timeout: '50ms' });
  const client = await Client.open(t, ws);
  const answer = await client.search('slow', 'x');
  assert.equal(answer['code'], 'TIMEOUT');
  assert.equal(engine.aborted, 1);
});

test('closing the socket aborts its searches; shutting down answers them UNAVAILABLE and closes with 1001', async (t) => {
  const engine = fixedEngine({ hold: true });
  const { ws, server } = await startServer(t, engine);
  const leaving = await Client.open(t, ws);
  leaving.send({ type: 'search', id: 'a', q: 'x' });
  await until('the engine call', () => engine.calls.length === 1);
  leaving.ws.close();
  await until('the engine call', () => engine.aborted === 1);

  const staying = await Client.open(t, ws);
  staying.send({ type: 'search', id: 'b', q: 'x' });
  await until('the engine call', () => engine.calls.length === 2);
  await server.close();
  assert.equal((await staying.answer('b'))['code'], 'UNAVAILABLE');
  assert.equal((await staying.closed).code, 1001);
  assert.equal(engine.aborted, 2);
});

test('a client that sends but does not read stalls itself, not the server or other clients', async (t) => {
  // 100 hits of 1 KiB each: a result is ~100 KiB; the kernel's buffers take a few MiB before the server's queue grows.
  const big = Array.from({ length: 100 }, (_, i) => hit(i, { snippet: 'x'.repeat(1024) }));
  const engine = fixedEngine({ hits: big });
  const highWater = 64 * 1024;
  const { ws, server } = await startServer(t, engine, { send_high_water: '64KiB', message_rate: 0, ip_search_rate: 0 });
  const slow = await Client.open(t, ws);
  const other = await Client.open(t, ws);
  slow.ws.pause();
  let peak = 0;
  const sample = setInterval(() => (peak = Math.max(peak, server.status()['buffered_bytes'] as number)), 5);
  t.after(() => clearInterval(sample));
  const sent = 300; // ~30 MiB of answers if the server kept reading
  for (let i = 0; i < sent; i++) {
    slow.send({ type: 'search', id: `s${i}`, q: 'x', limit: 100 });
    await new Promise((r) => setTimeout(r, 1));
  }
  await new Promise((r) => setTimeout(r, 200));
  const answered = engine.calls.length;
  assert.ok(answered < sent, `the server stopped reading the slow client (${answered} of ${sent} searched)`);
  const started = performance.now();
  assert.equal((await other.search('fast', 'x', { limit: 1 })).type, 'result');
  assert.ok(performance.now() - started < 1000, 'another client is answered at once');
  // The queue stays within the high-water mark plus the answers of the searches in flight (4 by default) and one more.
  assert.ok(peak <= highWater + 5 * 110 * 1024, `server queue peaked at ${peak} bytes`);
  // Reading again, it gets every answer the server made; the searches it piled up meanwhile
  // arrive at once, far past max_in_flight, and are refused until it is closed as a flood.
  slow.ws.resume();
  assert.equal((await slow.closed).code, 4429);
  assert.ok(slow.received.filter((m) => m.type === 'result').length >= answered);
  assert.ok(slow.received.some((m) => m['code'] === 'TOO_MANY_REQUESTS'));
});

test('subscribers get status events until they unsubscribe; a client that misses pings is cut off', async (t) => {
  const { ws } = await startServer(t, fixedEngine({ hits }), { status_interval: '100ms', heartbeat_interval: '100ms' });
  const client = await Client.open(t, ws);
  client.send({ type: 'subscribe', id: 'st', topic: 'status' });
  const first = await client.next((m) => m.type === 'event');
  assert.deepEqual([first.id, first['topic']], ['st', 'status']);
  const data = first['data'] as Record<string, unknown>;
  assert.equal(data['connections'], 1);
  assert.equal(data['index'], 'fixed-1');
  assert.deepEqual(data['engine'], { index: 'fixed-1', documents: 25 });
  await client.next((m: Message) => m.type === 'event');
  client.send({ type: 'unsubscribe', id: 'st' });
  client.send({ type: 'ping', id: 'sync' });
  await client.next((m) => m.type === 'pong');
  client.received.length = 0;
  await new Promise((r) => setTimeout(r, 350));
  assert.deepEqual(client.received, []);

  const deaf = await Client.open(t, ws, { autoPong: false });
  assert.equal((await deaf.closed).code, 1006);
});

test('GET /healthz: 200 with the index version, 503 without an index', async (t) => {
  const ready = await startServer(t, fixedEngine({ version: 'v42' }));
  const ok = await get(`${ready.http}/healthz`);
  assert.deepEqual([ok.status, ok.body], [200, 'ok v42\n']);
  const empty = await startServer(t, noIndexEngine());
  const none = await get(`${empty.http}/healthz`);
  assert.deepEqual([none.status, none.body], [503, 'no index\n']);
});

test('GET /search renders escaped results: an XSS attempt in q and in a hit title comes out as text', async (t) => {
  const evil = [hit(1, { title: '<script>alert("title")</script>', snippet: '<img src=x onerror=alert(1)> <mark>word</mark>' }), ...hits.slice(1)];
  const { http } = await startServer(t, fixedEngine({ hits: evil }));
  const q = '"a" <script>alert(1)</script>';
  const page = await get(`${http}/search?q=${encodeURIComponent(q)}&page=2`);
  assert.equal(page.status, 200);
  assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
  assert.doesNotMatch(page.body, /<script>alert|<img/);
  assert.match(page.body, /value="&#34;a&#34; &#60;script&#62;alert\(1\)&#60;\/script&#62;"/);
  assert.match(page.body, /<p id="status" role="status" aria-live="polite">Page 2 of 25 results \([\d.]+ ms\)<\/p>/);
  assert.match(page.body, /<ol id="results" start="11">/);
  assert.equal((page.body.match(/<li class="hit">/g) ?? []).length, 10);

  const first = await get(`${http}/search?q=word`);
  assert.match(first.body, /&#60;script&#62;alert\(&#34;title&#34;\)&#60;\/script&#62;/);
  assert.match(first.body, /&#60;img src=x onerror=alert\(1\)&#62; <mark>word<\/mark>/);

  const bad = await get(`${http}/search?q=${encodeURIComponent('a "b')}`);
  assert.equal(bad.status, 400);
  assert.match(bad.body, /A quotation mark is not closed/);
  assert.equal((await get(`${http}/search?q=x&site=${encodeURIComponent('a/b')}`)).status, 400);
});

test('the search page and its assets', async (t) => {
  const { http } = await startServer(t, noIndexEngine());
  const front = await get(`${http}/`);
  assert.equal(front.status, 200);
  assert.match(front.body, /<input id="q" name="q" type="search"/);
  assert.match(front.body, /<script type="module" src="\/page.js"><\/script>/);
  for (const [path, type] of [['/page.js', 'text/javascript'], ['/page.css', 'text/css'], ['/render.js', 'text/javascript'], ['/client.js', 'text/javascript']] as const) {
    const asset = await get(`${http}${path}`);
    assert.equal(asset.status, 200, path);
    assert.match(String(asset.headers['content-type']), new RegExp(type));
    assert.equal((await get(`${http}${path}`, { 'if-none-match': String(asset.headers['etag']) })).status, 304);
  }
  assert.doesNotMatch((await get(`${http}/render.js`)).body, /^import /m, 'the renderer loads in a browser without other modules');
  const client = (await get(`${http}/client.js`)).body;
  assert.match(client, /export class SherlockClient/);
  assert.doesNotMatch(client, /^import /m, 'the typed client loads in a browser without other modules');
  const none = await get(`${http}/search?q=x`);
  assert.equal(none.status, 503);
  assert.match(none.body, /There is no index to search yet/);
  assert.equal((await get(`${http}/nothing`)).status, 404);
});
