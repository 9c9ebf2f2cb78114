/**
 * The JSON API (searcher/http-api.ts) on a real index, through real HTTP
 * and WebSocket clients: GET and POST /api/search answer the same JSON text
 * the socket sends for the same search (its id aside), every error code
 * gets its documented status and headers, CORS follows allowed_origins, a
 * client that goes away aborts its search, and curl works as the docs say.
 */

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test, { after, before } from 'node:test';
import WebSocket from 'ws';
import { type Engine } from '../../searcher/engine.js';
import { PoolEngine } from '../../searcher/pool-engine.js';
import { MAX_PAYLOAD } from '../../searcher/protocol.js';
import { until } from '../helpers/cli.js';
import { scratchDir } from '../helpers/paths.js';
import { buildCli, crawlSite } from '../indexer/site.js';
import { fixedEngine, startServer } from './net.js';

const CACHES = { chains: 1 << 20, cards: 1 << 24 };
const LISTEN = { listen: '127.0.4.1:0' };
const FOREIGN = 'http://127.0.4.100:8000';
const ALLOWED = 'http://127.0.4.101:8000';

let state: string;
let origin: string;

before(async () => {
  state = mkdtempSync(join(tmpdir(), 'sherlock-http-api-'));
  origin = await crawlSite(state, { address: '127.0.4.2' });
  await buildCli(state);
});

after(() => {
  if (process.env['SHERLOCK_KEEP_TMP'] === undefined) rmSync(state, { recursive: true, force: true });
});

async function pool(t: test.TestContext, dir = state): Promise<PoolEngine> {
  const engine = await PoolEngine.start({ state: dir, threads: 1, caches: CACHES, pollMs: 0 });
  t.after(() => engine.close());
  return engine;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: Record<string, unknown>;
}

/** One HTTP request with node:http (nothing added to the headers asked for). */
function call(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          // Not JSON: the test looks at the text.
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return call(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

/** The raw text of the socket's answer to one search. */
async function socketAnswer(wsUrl: string, fields: Record<string, unknown>): Promise<string> {
  const ws = new WebSocket(wsUrl, 'sherlock.v1');
  try {
    const texts: string[] = [];
    const answered = new Promise<void>((resolve, reject) => {
      ws.on('message', (data) => {
        texts.push(String(data));
        if (texts.length === 2) resolve();
      });
      ws.on('error', reject);
    });
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send(JSON.stringify({ type: 'search', id: 'same', ...fields }));
    await answered;
    return texts[1]!;
  } finally {
    ws.terminate();
  }
}

/** The text with its id dropped and its took_ms fixed, which differ between two answers to one search. */
function comparable(text: string): string {
  return text.replace(/"id":"same",/, '').replace(/"took_ms":[0-9.e-]+/, '"took_ms":0');
}

/** GET parameters for search fields, list filters repeated. */
function params(fields: Record<string, unknown>): string {
  const out = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) {
    if (key === 'filters') {
      for (const [name, list] of Object.entries(value as Record<string, unknown>)) for (const v of [list].flat()) out.append(name, String(v));
    } else for (const v of [value].flat()) out.append(key, String(v));
  }
  return out.toString();
}

const SEARCHES: Record<string, unknown>[] = [
  { q: 'detective' },
  { q: 'gazette', limit: 2 },
  { q: 'gazette', offset: 1, limit: 2 },
  { q: 'twins OR hermitage', sort: 'date' },
  { q: 'tokyo', filters: { lang: ['ja', 'en'] } },
  { q: 'baker street', filters: { site: ['127.0.4.2'], type: ['html'] }, explain: true },
  { q: 'orchard', filters: { age: 30 } },
  { q: 'nosuchwordanywhere' },
];

test('GET and POST /api/search answer the JSON text the socket sends for the same search', async (t) => {
  const { ws, http } = await startServer(t, await pool(t), { ...LISTEN, ip_search_rate: 0, message_rate: 0 });
  let found = 0;
  for (const fields of SEARCHES) {
    const socket = comparable(await socketAnswer(ws, fields));
    const got = await call(`${http}/api/search?${params(fields)}`);
    assert.equal(got.status, 200, got.text);
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(comparable(got.text), socket, JSON.stringify(fields));
    const posted = await post(`${http}/api/search`, fields);
    assert.equal(posted.status, 200, posted.text);
    assert.equal(comparable(posted.text), socket, JSON.stringify(fields));
    // The socket's message itself, type and id and all, gets the socket's answer, id and all.
    const message = await post(`${http}/api/search`, { type: 'search', id: 'same', ...fields });
    assert.equal(message.status, 200, message.text);
    assert.equal(message.json['id'], 'same');
    assert.equal(comparable(message.text), socket, JSON.stringify(fields));
    found += (got.json['hits'] as unknown[]).length;
    assert.equal(got.json['type'], 'result');
    assert.equal('id' in got.json, false);
  }
  assert.ok(found >= 5, `the searches found ${found} hits`);
  const detective = await call(`${http}/api/search?q=detective`);
  assert.deepEqual((detective.json['hits'] as Array<{ url: string }>).map((h) => h.url), [`${origin}/`]);
  const explained = await call(`${http}/api/search?q=detective&explain=true`);
  assert.equal(typeof (explained.json['hits'] as Array<{ explain: unknown }>)[0]!.explain, 'object');
});

test('bad fields, queries, methods, bodies and routes get their status and the socket words', async (t) => {
  const { server, http } = await startServer(t, await pool(t), { ...LISTEN, ip_search_rate: 0 });
  const api = `${http}/api/search`;
  const limit = await call(`${api}?q=x&limit=500`);
  assert.equal(limit.status, 400);
  assert.deepEqual(limit.json, { type: 'error', code: 'BAD_MESSAGE', message: 'limit must be a whole number from 1 to 100', field: 'limit' });
  assert.equal((await call(`${api}?q=x&offset=ten`)).json['field'], 'offset');
  assert.equal((await call(`${api}?q=x&site=a%20b`)).json['field'], 'filters.site[0]');
  assert.equal((await call(`${api}?q=x&explain=maybe`)).json['message'], 'explain must be true or false');
  const unknown = await call(`${api}?q=x&page=2`);
  assert.deepEqual([unknown.status, unknown.json['field']], [400, 'page']);
  assert.deepEqual([(await call(`${api}?q=x&q=y`)).json['field'], (await call(api)).json['field']], ['q', 'q']);
  const badId = await post(api, { q: 'x', id: 'a b' });
  assert.deepEqual([badId.status, badId.json['field']], [400, 'id']);
  const otherType = await post(api, { type: 'suggest', q: 'x' });
  assert.deepEqual([otherType.status, otherType.json['message'], otherType.json['field']], [400, 'type must be "search" here (or left out)', 'type']);
  // A refusal of a message with an id names it, as the socket's does.
  const withId = await post(api, { type: 'search', id: 'mine', q: 'x', limit: 0 });
  assert.deepEqual([withId.status, withId.json['id'], withId.json['field']], [400, 'mine', 'limit']);
  const badQuery = await post(api, { id: 'mine', q: '"x' });
  assert.deepEqual([badQuery.status, badQuery.json['id'], badQuery.json['code']], [400, 'mine', 'BAD_QUERY']);
  const badJson = await post(api, '{"q": }');
  assert.equal(badJson.status, 400);
  assert.equal(badJson.json['message'], 'the body is not valid JSON: at character 6, expected a value (an object, array, string, number, true, false or null)');
  assert.equal((await post(api, '["q"]')).json['message'], 'the body must be a JSON object');
  assert.equal((await post(api, '{"q":"x"} {')).json['message'], 'the body is not valid JSON: at character 10, expected the end of the body');
  assert.equal((await post(`${api}?q=x`, { q: 'x' })).status, 400);

  const query = await call(`${api}?q=${encodeURIComponent('"open')}`);
  assert.equal(query.status, 400);
  assert.deepEqual([query.json['code'], query.json['reason'], query.json['position']], ['BAD_QUERY', 'syntax', 0]);

  const put = await call(api, { method: 'PUT' });
  assert.deepEqual([put.status, put.headers['allow']], [405, 'GET, POST, OPTIONS']);
  const plain = await call(api, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"q":"x"}' });
  assert.deepEqual([plain.status, plain.json['code']], [415, 'BAD_MESSAGE']);
  const big = await post(api, { q: 'x'.repeat(MAX_PAYLOAD) });
  assert.deepEqual([big.status, big.json['message']], [413, `the body must be at most ${MAX_PAYLOAD} bytes`]);
  const chunked = await call(api, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, body: `{"q":"${'y'.repeat(MAX_PAYLOAD)}"}` });
  assert.equal(chunked.status, 413);
  const route = await call(`${http}/api/nothing`);
  assert.deepEqual([route.status, route.json['message']], [404, 'no route /api/nothing; there are /api/search, /api/suggest']);
  // A client that goes away in the middle of its body.
  const partial = request(api, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '100' } });
  partial.on('error', () => undefined);
  partial.write('{"q": "det');
  await new Promise((resolve) => setTimeout(resolve, 100));
  partial.destroy();
  await new Promise((resolve) => setTimeout(resolve, 100));
  // The searcher still answers after all that, and none of it was its own failure.
  assert.equal((await call(`${api}?q=detective`)).status, 200);
  assert.equal(server.refused.routeErrors, 0);
});

test('the token: 401 with WWW-Authenticate without it or with a wrong one, served with it', async (t) => {
  const { http } = await startServer(t, await pool(t), LISTEN, 'sesame');
  const api = `${http}/api/search?q=detective`;
  for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: 'Basic c2VzYW1l' }] as Record<string, string>[]) {
    const refused = await call(api, { headers });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers['www-authenticate'], 'Bearer');
    assert.equal(refused.json['code'], 'UNAUTHORIZED');
  }
  assert.equal((await call(api, { headers: { authorization: 'Bearer sesame' } })).status, 200);
  assert.equal((await post(`${http}/api/search`, { q: 'detective' }, { authorization: 'Bearer sesame' })).status, 200);
  // A preflight carries no token; it is answered all the same.
  assert.equal((await call(api, { method: 'OPTIONS' })).status, 204);
});

test('the per-IP search bucket: 429 with Retry-After and retry_after_ms; counted for the api door', async (t) => {
  const { server, http } = await startServer(t, await pool(t), { ...LISTEN, ip_search_rate: 0.5, ip_search_burst: 1 });
  assert.equal((await call(`${http}/api/search?q=detective`)).status, 200);
  const refused = await post(`${http}/api/search`, { q: 'detective' });
  assert.equal(refused.status, 429);
  assert.equal(refused.json['code'], 'TOO_MANY_REQUESTS');
  const wait = refused.json['retry_after_ms'] as number;
  assert.ok(wait > 1000 && wait <= 2000, String(wait));
  assert.equal(refused.headers['retry-after'], '2');
  const status = server.status();
  assert.deepEqual(status['searches_by_door'], { websocket: 0, page: 0, api: 1 });
  assert.equal(status['rate_limited'], 1);
  const metrics = await call(`${http}/metrics`);
  assert.match(metrics.text, /^sherlock_searcher_searches_total\{door="api"\} 1$/m);
});

test('TIMEOUT is 504, NO_INDEX 503, INTERNAL 500; a client that goes away aborts its search', async (t) => {
  const held = fixedEngine({ hold: true });
  const timed = await startServer(t, held, { ...LISTEN, query_timeout: '30ms' });
  const timeout = await call(`${timed.http}/api/search?q=detective`);
  assert.deepEqual([timeout.status, timeout.json['code'], timeout.json['message']], [504, 'TIMEOUT', 'the search took longer than 30 ms']);

  const empty = await startServer(t, await pool(t, scratchDir(t)), LISTEN);
  const noIndex = await post(`${empty.http}/api/search`, { q: 'detective' });
  assert.deepEqual([noIndex.status, noIndex.json['code']], [503, 'NO_INDEX']);

  const broken: Engine = { version: 'v1', status: () => ({}), search: () => Promise.reject(new Error('a bug')), suggest: () => Promise.reject(new Error('a bug')) };
  const failing = await startServer(t, broken, LISTEN);
  const internal = await call(`${failing.http}/api/search?q=detective`);
  assert.deepEqual([internal.status, internal.json['code']], [500, 'INTERNAL']);

  const waiting = fixedEngine({ hold: true });
  const { server, http } = await startServer(t, waiting, LISTEN);
  const req = request(`${http}/api/search?q=detective`);
  req.on('error', () => undefined);
  req.end();
  await until('the search to start', () => waiting.calls.length === 1);
  req.destroy();
  await until('the search to be aborted', () => waiting.aborted === 1);
  await until('the answer to be counted', () => (server.status()['answers'] as Record<string, number>)['CANCELLED'] === 1);
});

test('CORS: an allowed origin gets the headers, a foreign one is refused 403 without them, preflights alike', async (t) => {
  const { server, http } = await startServer(t, await pool(t), { ...LISTEN, allowed_origins: [ALLOWED], ip_search_rate: 0 });
  const api = `${http}/api/search`;
  const allowed = await call(`${api}?q=detective`, { headers: { origin: ALLOWED } });
  assert.equal(allowed.status, 200);
  assert.equal(allowed.headers['access-control-allow-origin'], ALLOWED);
  assert.equal(allowed.headers['vary'], 'Origin');
  assert.equal((await post(api, { q: 'detective' }, { origin: ALLOWED })).headers['access-control-allow-origin'], ALLOWED);
  const own = await call(`${api}?q=detective`, { headers: { origin: http } });
  assert.equal(own.status, 200);
  const none = await call(`${api}?q=detective`);
  assert.deepEqual([none.status, none.headers['access-control-allow-origin'], none.headers['vary']], [200, undefined, 'Origin']);

  const before = server.status()['searches'];
  const foreignGet = await call(`${api}?q=detective`, { headers: { origin: FOREIGN } });
  const foreignPost = await call(api, { method: 'POST', headers: { origin: FOREIGN, 'content-type': 'text/plain' }, body: '{"q":"detective"}' });
  // What a browser sends for another site's <img src=…/api/search?q=…>: no Origin, but Sec-Fetch-Site says where from.
  const image = await call(`${api}?q=detective`, { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' } });
  for (const refused of [foreignGet, foreignPost, image]) {
    assert.equal(refused.status, 403);
    assert.equal(refused.headers['access-control-allow-origin'], undefined);
    assert.equal(refused.json['code'], 'UNAUTHORIZED');
  }
  assert.equal(server.status()['searches'], before, 'no search ran for a foreign origin');
  // A link to the API followed from another site is a navigation, answered; so is the searcher's own page's request.
  const followed = await call(`${api}?q=detective`, { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' } });
  const framed = await call(`${api}?q=detective`, { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' } });
  assert.equal(framed.status, 403, 'another site framing the API is refused');
  const ownFetch = await call(`${api}?q=detective`, { headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', origin: http } });
  assert.deepEqual([followed.status, ownFetch.status], [200, 200]);

  const preflight = await call(api, { method: 'OPTIONS', headers: { origin: ALLOWED, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers['access-control-allow-origin'], ALLOWED);
  assert.equal(preflight.headers['access-control-allow-methods'], 'GET, POST');
  assert.equal(preflight.headers['access-control-allow-headers'], 'authorization, content-type');
  assert.equal(preflight.headers['access-control-max-age'], '600');
  const foreignPreflight = await call(api, { method: 'OPTIONS', headers: { origin: FOREIGN, 'access-control-request-method': 'POST' } });
  assert.deepEqual([foreignPreflight.status, foreignPreflight.headers['access-control-allow-origin']], [403, undefined]);
});

test('curl against a running searcher: GET, POST with a token, an error and its status', async (t) => {
  const { http } = await startServer(t, await pool(t), LISTEN, 'sesame');
  const curl = async (...args: string[]) => (await promisify(execFile)('curl', ['-s', '-w', '\\n%{http_code}', ...args])).stdout.split('\n');
  const [got, gotStatus] = await curl('-H', 'Authorization: Bearer sesame', `${http}/api/search?q=detective&limit=3`);
  assert.equal(gotStatus, '200');
  assert.deepEqual((JSON.parse(got!).hits as Array<{ url: string }>).map((h) => h.url), [`${origin}/`]);
  const [posted, postedStatus] = await curl('-H', 'Authorization: Bearer sesame', '-H', 'Content-Type: application/json', '-d', '{"q":"gazette","filters":{"type":["html"]}}', `${http}/api/search`);
  assert.equal(postedStatus, '200');
  assert.equal(JSON.parse(posted!).type, 'result');
  const [refused, refusedStatus] = await curl(`${http}/api/search?q=detective`);
  assert.equal(refusedStatus, '401');
  assert.equal(JSON.parse(refused!).code, 'UNAUTHORIZED');
});
