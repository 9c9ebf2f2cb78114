/**
 * The searcher's GET /metrics, on its own port: valid exposition text
 * (strict reader) whose counters follow the searches answered, with the
 * WebSocket connections, the index loaded and the process figures; behind
 * the bearer token when one is set.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import { startCli } from '../helpers/cli.js';
import { scratchDir } from '../helpers/paths.js';
import { parseExposition, sampleValue } from '../helpers/prometheus-text.js';
import { Client, fixedEngine, listening, startServer } from './net.js';

async function scrape(base: string): Promise<ReturnType<typeof parseExposition>> {
  const response = await fetch(`${base}/metrics`);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(await response.text());
}

test('searcher run serves /metrics: searches by answer, their latency, connections, process figures', async (t) => {
  const running = startCli(t, ['searcher', 'run', '--state', scratchDir(t), '--listen', '127.0.0.1:0']);
  const base = `http://${await listening(running)}`;

  const before = await scrape(base);
  assert.equal(sampleValue(before, 'sherlock_searcher_queries_total', { status: 'NO_INDEX' }), undefined);
  assert.equal(sampleValue(before, 'sherlock_searcher_ws_connections'), 0);
  assert.equal(sampleValue(before, 'sherlock_searcher_index_documents'), 0);
  assert.equal(sampleValue(before, 'sherlock_build_info', { version: '0.1.0', node: process.version }), 1);
  assert.ok(sampleValue(before, 'process_resident_memory_bytes')! > 0);

  const client = await Client.open(t, `${base.replace('http', 'ws')}/`);
  await client.next();
  assert.equal((await client.search('a', 'debian')).code, 'NO_INDEX');
  assert.equal((await client.search('b', '"open')).code, 'BAD_QUERY');
  assert.equal((await fetch(`${base}/search?q=linux`)).status, 503);

  const after = await scrape(base);
  assert.equal(sampleValue(after, 'sherlock_searcher_queries_total', { status: 'NO_INDEX' }), 2);
  assert.equal(sampleValue(after, 'sherlock_searcher_queries_total', { status: 'BAD_QUERY' }), 1);
  assert.equal(sampleValue(after, 'sherlock_searcher_query_duration_seconds_count'), 3);
  assert.equal(sampleValue(after, 'sherlock_searcher_ws_connections'), 1);
  assert.equal(sampleValue(after, 'sherlock_searcher_rate_limited_total'), 0);
  running.child.kill('SIGTERM');
  assert.equal(await running.exited, 0, running.stderr);
});

test('with a token set, /metrics asks for it', async (t) => {
  const { http } = await startServer(t, fixedEngine({ version: 'v1' }), {}, 'sesame');
  assert.equal((await fetch(`${http}/metrics`)).status, 401);
  assert.equal((await fetch(`${http}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
  const ok = await fetch(`${http}/metrics`, { headers: { authorization: 'Bearer sesame' } });
  assert.equal(ok.status, 200);
  assert.equal(sampleValue(parseExposition(await ok.text()), 'sherlock_searcher_ws_connections'), 0);
});
