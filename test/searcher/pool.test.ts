/**
 * The pool of search threads (pool-engine.ts) on a real index: a crawled
 * site with bulk pages of thousands of words, so that an AND of prefixes is
 * a long search. Checked through real WebSockets: the threads answer what
 * the in-process engine answers (the result's JSON text, byte for byte), a
 * long search on one thread does not hold up a client whose short searches
 * go to the other, and a cancelled search is answered CANCELLED.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { after, before } from 'node:test';
import { IndexEngine } from '../../searcher/index-engine.js';
import { PoolEngine } from '../../searcher/pool-engine.js';
import { parseQuery } from '../../searcher/query.js';
import { startCli, until } from '../helpers/cli.js';
import { buildCli, crawlSite } from '../indexer/site.js';
import { Client, listening, startServer } from './net.js';

/** Eight prefixes of 64 words each over pages of 6,000 words: a long search (the chain cache is kept too small to help). */
const LONG = 'w10* w11* w12* w13* w14* w15* w16* w17*';
const SHORT = ['w10x0', 'w2ax1', 'detective', '"baker street"', 'w3bx2 w3cx0'];
const CACHES = { chains: 1 << 20, cards: 1 << 24 };

let state: string;

before(async () => {
  state = mkdtempSync(join(tmpdir(), 'sherlock-pool-'));
  await crawlSite(state, { address: '127.0.0.86', bulk: 100 });
  await buildCli(state);
});

after(() => {
  if (process.env['SHERLOCK_KEEP_TMP'] === undefined) rmSync(state, { recursive: true, force: true });
});

test('the threads answer as the in-process engine does, as JSON text', async (t) => {
  const pool = await PoolEngine.start({ state, threads: 2, caches: CACHES, pollMs: 0 });
  t.after(() => pool.close());
  const local = await IndexEngine.start({ state, pollMs: 0, caches: CACHES });
  t.after(() => local.close());
  assert.equal(pool.version, local.version);
  assert.equal(pool.status()['threads'], 2);
  for (const q of [...SHORT, LONG]) {
    for (const [offset, limit] of [[0, 10], [3, 5]] as const) {
      const request = { query: parseQuery(q), offset, limit, filters: { type: ['text/html'] } };
      const signal = new AbortController().signal;
      const [threaded, inProcess] = await Promise.all([pool.search(request, signal), local.search(request, signal)]);
      assert.equal(threaded.json, JSON.stringify(inProcess), q);
    }
  }
});

test('a long search on one thread does not hold up short searches from another client', async (t) => {
  const pool = await PoolEngine.start({ state, threads: 2, caches: CACHES, pollMs: 0 });
  t.after(() => pool.close());
  const { ws } = await startServer(t, pool, { message_rate: 0, ip_search_rate: 0 });
  const slow = await Client.open(t, ws);
  const quick = await Client.open(t, ws);
  await Promise.all([slow.next(), quick.next()]);
  const order: string[] = [];
  slow.send({ type: 'search', id: 'long', q: LONG, limit: 100 });
  const long = slow.answer('long', 60_000).then((m) => {
    order.push('long');
    return m;
  });
  for (const [i, q] of SHORT.entries()) {
    const m = await quick.search(`s${i}`, q);
    assert.equal(m.type, 'result', JSON.stringify(m));
    order.push(`s${i}`);
  }
  const answer = await long;
  assert.equal(answer.type, 'result', JSON.stringify(answer).slice(0, 300));
  // Every short search was answered while the long one ran.
  assert.deepEqual(order, [...SHORT.map((_, i) => `s${i}`), 'long']);
});

test('a search cancelled while its thread works is answered CANCELLED, and the thread serves the next', async (t) => {
  const pool = await PoolEngine.start({ state, threads: 1, caches: CACHES, pollMs: 0 });
  t.after(() => pool.close());
  const { ws } = await startServer(t, pool, { message_rate: 0, ip_search_rate: 0 });
  const client = await Client.open(t, ws);
  await client.next();
  client.send({ type: 'search', id: 'long', q: LONG, limit: 100 });
  client.send({ type: 'cancel', id: 'long' });
  const cancelled = await client.answer('long');
  assert.equal(cancelled['code'], 'CANCELLED');
  const next = await client.search('after', 'detective');
  assert.equal(next.type, 'result');
  assert.ok((next['hits'] as unknown[]).length > 0);
});

test('searcher run with 2 threads logs a version loaded once; SIGHUP resizes every thread\'s caches', async (t) => {
  const config = join(state, 'pool-hup.toml');
  writeFileSync(config, '[searcher]\nsearch_threads = 2\nchain_cache = "8MiB"\ncard_cache = "16MiB"\nstatus_interval = "100ms"\n');
  const running = startCli(t, ['--config', config, 'searcher', 'run', '--state', state, '--listen', '127.0.0.1:0']);
  const address = await listening(running);
  assert.equal(running.stderr.match(/index version loaded/g)?.length, 1, running.stderr);
  const caches = async (): Promise<[unknown, unknown]> => {
    const client = await Client.open(t, `ws://${address}/`);
    client.send({ type: 'subscribe', id: 'st', topic: 'status' });
    const engine = ((await client.next((m) => m.type === 'event'))['data'] as Record<string, Record<string, unknown>>)['engine']!;
    client.ws.close();
    return [engine['chain_cache'], engine['card_cache']];
  };
  assert.deepEqual(await caches(), [8 << 20, 16 << 20]);
  writeFileSync(config, '[searcher]\nsearch_threads = 2\nchain_cache = "2MiB"\ncard_cache = "4MiB"\nstatus_interval = "100ms"\n');
  running.child.kill('SIGHUP');
  await until('the reload', () => /config reloaded/.test(running.stderr));
  // Each thread answers the check SIGHUP asks after the resize before it; the status then shows the new shares.
  let now = await caches();
  for (let tries = 0; tries < 100 && now[0] !== 2 << 20; tries++) {
    await new Promise((r) => setTimeout(r, 100));
    now = await caches();
  }
  assert.deepEqual(now, [2 << 20, 4 << 20]);
  const client = await Client.open(t, `ws://${address}/`);
  assert.equal((await client.search('q', 'detective')).type, 'result');
  assert.equal(running.stderr.match(/index version loaded/g)?.length, 1);
});
