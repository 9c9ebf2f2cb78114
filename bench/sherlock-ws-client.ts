/**
 * Sends the query set to sherlock's searcher over WebSocket (subprotocol
 * sherlock.v1, DESIGN §7) and times each query from send to the `result` (or
 * `error`) carrying the same id, in two ways:
 *
 * - one socket, one query at a time (latency with nothing else running);
 * - CLIENTS sockets, each keeping DEPTH queries in flight, all of them sending
 *   the query set PASSES times between them: the queries answered a second
 *   under that load, and each query's latency under it.
 *
 * Runs under `node --experimental-websocket` (Node 20's built-in client is behind that flag).
 *
 *   node --experimental-websocket dist/bench/sherlock-ws-client.js URL QUERIES.tsv PASSES WARMUP CLIENTS DEPTH [RECORD]
 *
 * Prints {"latenciesMs":[…],"zeroHits":N,"errors":N,"refused":[{"q":…,"code":…}…],"top":[[URL…]…],"concurrent":{"clients":N,"depth":N,"seconds":S,"latenciesMs":[…]}};
 * WARMUP untimed passes first (one at a time); `top`: each query's hit URLs in the first of them,
 * `refused`: the queries answered with an error there, and its code.
 * RECORD: a file to write each query's answer text from that first pass to,
 * a line {"q":…,"answer":…} each (what peers/bare-ws-server.ts answers with).
 */

import { readFileSync, writeFileSync } from 'node:fs';
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
type Answer = { type?: string; code?: string; hits?: Array<{ url?: string }>; text: string };

const [url, queryFile, passesArg, warmupArg, clientsArg, depthArg, recordFile] = process.argv.slice(2);
if (url === undefined || queryFile === undefined) {
  process.stderr.write('usage: sherlock-ws-client URL QUERIES PASSES WARMUP CLIENTS DEPTH [RECORD]\n');
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
const clients = Number(clientsArg ?? '8');
const depth = Number(depthArg ?? '2');

/** One socket with its own ids; ask() resolves with the answer to the query sent. */
class Client {
  private readonly pending = new Map<string, (msg: Answer) => void>();
  private next = 0;

  private constructor(private readonly ws: Socket) {
    ws.onmessage = (ev) => {
      const text = String(ev.data);
      const msg = JSON.parse(text) as Answer & { id?: string };
      if (msg.id === undefined) return;
      msg.text = text;
      const done = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      done?.(msg);
    };
  }

  static open(): Promise<Client> {
    const ws = new Ctor!(url!, 'sherlock.v1');
    return new Promise((resolve, reject) => {
      ws.onopen = () => resolve(new Client(ws));
      ws.onerror = (e) => reject(new Error(`WebSocket error: ${String(e)}`));
    });
  }

  ask(q: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const id = `q${this.next++}`;
      const timer = setTimeout(() => reject(new Error(`no answer to ${id} in 30 s`)), 30_000);
      this.pending.set(id, (msg) => {
        clearTimeout(timer);
        resolve(msg);
      });
      this.ws.send(JSON.stringify({ type: 'search', id, q, limit: 10 }));
    });
  }

  close(): void {
    this.ws.close();
  }
}

let zeroHits = 0;
let errors = 0;
const top: string[][] = [];
const refused: Array<{ q: string; code: string | undefined }> = [];
const answers: string[] = [];
const one = await Client.open();
for (const q of queries) {
  const msg = await one.ask(q.q);
  top.push((msg.hits ?? []).map((hit) => String(hit.url)));
  if (recordFile !== undefined) answers.push(JSON.stringify({ q: q.q, answer: msg.text }) + '\n');
  if (msg.type !== 'result') {
    errors++;
    refused.push({ q: q.q, code: msg.code });
  } else if ((msg.hits ?? []).length === 0) zeroHits++;
}
if (recordFile !== undefined) writeFileSync(recordFile, answers.join(''));
for (let w = 1; w < warmup; w++) for (const q of queries) await one.ask(q.q);
const latenciesMs: number[] = [];
for (let p = 0; p < passes; p++) {
  for (const q of queries) {
    const t = performance.now();
    const msg = await one.ask(q.q);
    latenciesMs.push(performance.now() - t);
    if (msg.type !== 'result') errors++;
  }
}
one.close();

// Under load: every socket's DEPTH lanes take the next query of the shared sequence until it is used up.
const sockets = await Promise.all(Array.from({ length: clients }, () => Client.open()));
const total = passes * queries.length;
const concurrentMs: number[] = [];
let sent = 0;
const lane = async (client: Client): Promise<void> => {
  while (sent < total) {
    const q = queries[sent++ % queries.length]!.q;
    const t = performance.now();
    const msg = await client.ask(q);
    concurrentMs.push(performance.now() - t);
    if (msg.type !== 'result') errors++;
  }
};
const began = performance.now();
await Promise.all(sockets.flatMap((client) => Array.from({ length: depth }, () => lane(client))));
const seconds = (performance.now() - began) / 1000;
for (const client of sockets) client.close();
// Exit once the line is written: on a pipe, exiting at once would cut it at 64 KiB.
process.stdout.write(JSON.stringify({ latenciesMs, zeroHits, errors, refused, top, concurrent: { clients, depth, seconds, latenciesMs: concurrentMs } }) + '\n', () => process.exit(0));
