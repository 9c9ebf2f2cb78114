/**
 * Sends the query set to sherlock's searcher over one WebSocket (subprotocol
 * sherlock.v1, DESIGN §7), one query at a time, and times each from send to
 * the `result` (or `error`) carrying the same id. Runs under
 * `node --experimental-websocket` (Node 20's built-in client is behind that flag).
 *
 *   node --experimental-websocket dist/bench/sherlock-ws-client.js URL QUERIES.tsv PASSES WARMUP
 *
 * Prints {"latenciesMs":[…],"zeroHits":N,"errors":N,"top":[[URL…]…]}; WARMUP untimed
 * passes first; `top`: each query's hit URLs in the first of them.
 */

import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseQueryFile } from './queries.js';

interface Socket {
  onopen: (() => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onclose: (() => void) | null;
  send(data: string): void;
  close(): void;
}
type SocketCtor = new (url: string, protocols: string | string[]) => Socket;

const [url, queryFile, passesArg, warmupArg] = process.argv.slice(2);
if (url === undefined || queryFile === undefined) {
  process.stderr.write('usage: sherlock-ws-client URL QUERIES PASSES WARMUP\n');
  process.exit(2);
}
const Ctor = (globalThis as { WebSocket?: SocketCtor }).WebSocket;
if (Ctor === undefined) {
  process.stderr.write('no WebSocket client: run with node --experimental-websocket\n');
  process.exit(1);
}
const queries = parseQueryFile(readFileSync(queryFile, 'utf8'));
const passes = Number(passesArg ?? '3');
const warmup = Number(warmupArg ?? '1');
const ws = new Ctor(url, 'sherlock.v1');
interface Answer {
  type?: string;
  hits?: Array<{ url?: string }>;
}
const pending = new Map<string, (msg: Answer) => void>();
ws.onmessage = (ev) => {
  const msg = JSON.parse(String(ev.data)) as Answer & { id?: string };
  if (msg.id !== undefined) {
    const done = pending.get(msg.id);
    pending.delete(msg.id);
    done?.(msg);
  }
};
await new Promise<void>((resolve, reject) => {
  ws.onopen = () => resolve();
  ws.onerror = (e) => reject(new Error(`WebSocket error: ${String(e)}`));
});
let next = 0;
const ask = (q: string): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const id = `q${next++}`;
    const timer = setTimeout(() => reject(new Error(`no answer to ${id} in 30 s`)), 30_000);
    pending.set(id, (msg) => {
      clearTimeout(timer);
      resolve(msg);
    });
    ws.send(JSON.stringify({ type: 'search', id, q, limit: 10 }));
  });
let zeroHits = 0;
let errors = 0;
const top: string[][] = [];
for (const q of queries) {
  const msg = await ask(q.q);
  top.push((msg.hits ?? []).map((hit) => String(hit.url)));
  if (msg.type !== 'result') errors++;
  else if ((msg.hits ?? []).length === 0) zeroHits++;
}
for (let w = 1; w < warmup; w++) for (const q of queries) await ask(q.q);
const latenciesMs: number[] = [];
for (let p = 0; p < passes; p++) {
  for (const q of queries) {
    const t = performance.now();
    const msg = await ask(q.q);
    latenciesMs.push(performance.now() - t);
    if (msg.type !== 'result') errors++;
  }
}
ws.close();
process.stdout.write(JSON.stringify({ latenciesMs, zeroHits, errors, top }) + '\n');
process.exit(0);
