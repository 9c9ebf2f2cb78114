/**
 * The floor of answering the query set over WebSocket in Node.js: a `ws`
 * server with the searcher's socket options (subprotocol sherlock.v1, no
 * compression, the same frame bound) that answers each `search` with the
 * answer sherlock's searcher gave to the same query text, recorded by the
 * bench client (sherlock-ws-client.ts RECORD), its id spliced in as the
 * searcher splices its own (connection.ts). It does no searching at all, so
 * the bench client against it measures what the transport, the JSON of the
 * request and the client cost on this machine, with answers of the same
 * sizes: the throughput no searcher here can pass.
 *
 *   node dist/bench/peers/bare-ws-server.js ANSWERS.jsonl PORT
 *
 * Listens on 127.0.0.1:PORT; GET /healthz answers 200 once the answers are read.
 */

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';
import { MAX_PAYLOAD, SUBPROTOCOL } from '../../searcher/protocol.js';

const [file, portArg] = process.argv.slice(2);
if (file === undefined || portArg === undefined) {
  process.stderr.write('usage: bare-ws-server ANSWERS.jsonl PORT\n');
  process.exit(2);
}

/** Each query's answer without its id, as the JSON text after the opening brace. */
const answers = new Map<string, string>();
for (const [n, line] of readFileSync(file, 'utf8').split('\n').entries()) {
  if (line === '') continue;
  const { q, answer } = JSON.parse(line) as { q: string; answer: string };
  const { id, ...rest } = JSON.parse(answer) as { id?: string };
  if (id === undefined) throw new Error(`${file}:${n + 1}: the recorded answer has no id`);
  answers.set(q, JSON.stringify(rest).slice(1));
}

const http = createServer((req, res) => {
  res.writeHead(req.url === '/healthz' ? 200 : 404).end();
});
const wss = new WebSocketServer({ server: http, maxPayload: MAX_PAYLOAD, perMessageDeflate: false, clientTracking: false, handleProtocols: () => SUBPROTOCOL });
wss.on('connection', (ws) => {
  ws.on('message', (data) => {
    const msg = JSON.parse(String(data)) as { id: string; q: string };
    const answer = answers.get(msg.q) ?? '"type":"error","code":"NOT_RECORDED"}';
    ws.send(`{"id":${JSON.stringify(msg.id)},${answer}`);
  });
});
http.listen(Number(portArg), '127.0.0.1');
