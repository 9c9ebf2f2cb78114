/**
 * Sends the query set to sherlock's JSON API (GET /api/search,
 * searcher/http-api.ts) with undici's keep-alive Pool, timed as
 * sherlock-ws-client.ts times the WebSocket, so the two rows differ by the
 * door alone:
 *
 * - one connection, one query at a time (latency with nothing else running);
 * - CLIENTS × DEPTH connections, each with one query in flight (HTTP/1.1
 *   without pipelining: the same number of searches in flight as the
 *   socket's CLIENTS sockets with DEPTH each), all of them sending the query
 *   set PASSES times between them.
 *
 *   node dist/bench/sherlock-http-client.js BASE QUERIES.tsv PASSES WARMUP CLIENTS DEPTH
 *
 * BASE is http://HOST:PORT. Prints {"latenciesMs":[…],"errors":N,"concurrent":{"clients":N,"depth":N,"seconds":S,"latenciesMs":[…]}};
 * WARMUP untimed passes first, one at a time.
 */

import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { parseQueryFile } from './queries.js';

const [base, queryFile, passesArg, warmupArg, clientsArg, depthArg] = process.argv.slice(2);
if (base === undefined || queryFile === undefined) {
  process.stderr.write('usage: sherlock-http-client BASE QUERIES PASSES WARMUP CLIENTS DEPTH\n');
  process.exit(2);
}
const queries = parseQueryFile(readFileSync(queryFile, 'utf8'));
const passes = Number(passesArg ?? '3');
const warmup = Number(warmupArg ?? '1');
const clients = Number(clientsArg ?? '8');
const depth = Number(depthArg ?? '2');

let errors = 0;

/** One search, as the socket client asks it (top 10); counts an answer that is not a result. */
async function ask(pool: Pool, q: string): Promise<void> {
  const res = await pool.request({ method: 'GET', path: `/api/search?q=${encodeURIComponent(q)}&limit=10`, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const answer = JSON.parse(await res.body.text()) as { type?: string };
  if (res.statusCode !== 200 || answer.type !== 'result') errors++;
}

const one = new Pool(base, { connections: 1 });
for (let w = 0; w < warmup; w++) for (const q of queries) await ask(one, q.q);
const latenciesMs: number[] = [];
for (let p = 0; p < passes; p++) {
  for (const q of queries) {
    const t = performance.now();
    await ask(one, q.q);
    latenciesMs.push(performance.now() - t);
  }
}
await one.close();

const lanes = clients * depth;
const many = new Pool(base, { connections: lanes });
const total = passes * queries.length;
const concurrentMs: number[] = [];
let sent = 0;
const lane = async (): Promise<void> => {
  while (sent < total) {
    const q = queries[sent++ % queries.length]!.q;
    const t = performance.now();
    await ask(many, q);
    concurrentMs.push(performance.now() - t);
  }
};
const began = performance.now();
await Promise.all(Array.from({ length: lanes }, lane));
const seconds = (performance.now() - began) / 1000;
await many.close();
process.stdout.write(JSON.stringify({ latenciesMs, errors, concurrent: { clients, depth, seconds, latenciesMs: concurrentMs } }) + '\n', () => process.exit(0));
