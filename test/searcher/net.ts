/**
 * What the searcher's network tests share: `fixedEngine`, a stand-in for the
 * query evaluator (which does not exist yet) that returns fixed hits or
 * holds each search until its signal aborts, so the tests exercise the
 * network layer alone; a server on 127.0.0.1 with a port of its own; and a
 * WebSocket client (the ws package's) that queues what it receives.
 */

import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import WebSocket from 'ws';
import { searcherConfig } from '../../searcher/config.js';
import type { Engine, SearchHit, SearchRequest, SearchResult } from '../../searcher/engine.js';
import { SearchServer } from '../../searcher/server.js';
import { until, type Running } from '../helpers/cli.js';

export interface FixedEngine extends Engine {
  /** Every request the server made, in order. */
  readonly calls: SearchRequest[];
  /** How many searches saw their signal abort. */
  aborted: number;
}

/**
 * An engine answering every search with `hits` (total = hits.length), or,
 * with `hold`, never answering until the signal aborts, as a long search would.
 */
export function fixedEngine(options: { hits?: SearchHit[]; version?: string; hold?: boolean } = {}): FixedEngine {
  const hits = options.hits ?? [];
  const engine: FixedEngine = {
    calls: [],
    aborted: 0,
    version: options.version ?? 'fixed-1',
    status: () => ({ index: engine.version ?? null, documents: hits.length }),
    // The titles of its hits that start with what is typed.
    suggest: ({ q, limit }) =>
      Promise.resolve({
        q,
        suggestions: hits
          .filter((h) => h.title.toLowerCase().startsWith(q.toLowerCase()))
          .slice(0, limit)
          .map((h) => ({ text: h.title.toLowerCase(), kind: 'title' as const })),
      }),
    search(request, signal) {
      engine.calls.push(request);
      if (options.hold === true) {
        return new Promise<SearchResult>((_, reject) => {
          signal.addEventListener('abort', () => {
            engine.aborted++;
            reject(signal.reason);
          });
        });
      }
      return Promise.resolve({
        total: { value: hits.length, relation: 'eq' },
        hits: hits.slice(request.offset, request.offset + request.limit),
        facets: { site: [{ value: 'example.org', count: hits.length }], type: [{ value: 'text/html', count: hits.length }], lang: [{ value: 'en', count: hits.length }] },
      });
    },
  };
  return engine;
}

export function hit(n: number, fields: Partial<SearchHit> = {}): SearchHit {
  return {
    url: `https://example.org/page/${n}`,
    title: `Page ${n}`,
    snippet: `the <mark>word</mark> on page ${n}`,
    score: 100 - n,
    site: 'example.org',
    type: 'text/html',
    size: 1234 * n,
    lang: 'en',
    date: '2026-01-02T03:04:05.000Z',
    ...fields,
  };
}

export interface Started {
  server: SearchServer;
  ws: string;
  http: string;
}

/** A server on a free port of 127.0.0.1 with [searcher] `overrides` (as written in TOML), closed when the test ends. */
export async function startServer(t: TestContext, engine: Engine, overrides: Record<string, unknown> = {}, token?: string): Promise<Started> {
  const config = searcherConfig.parse({ listen: '127.0.0.1:0', ...overrides });
  const server = await SearchServer.listen({ config, engine, token });
  t.after(() => server.close());
  return { server, ws: `ws://${server.address}/`, http: `http://${server.address}` };
}

export type Message = Record<string, unknown> & { type: string; id?: string };

export class Client {
  readonly received: Message[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: Array<() => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.received.push(JSON.parse(String(data)) as Message);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: String(reason) })));
    // Failures show as the close code the tests check.
    ws.on('error', () => undefined);
  }

  /** Opens a socket offering sherlock.v1; rejects with the HTTP status when the upgrade is refused. */
  static async open(t: TestContext, url: string, options: WebSocket.ClientOptions & { protocol?: string } = {}): Promise<Client> {
    const ws = new WebSocket(url, options.protocol ?? 'sherlock.v1', options);
    t.after(() => ws.terminate());
    // Listening before the socket opens: the welcome may come in the same packet as the handshake.
    const client = new Client(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });
    return client;
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The first message received (and not taken yet) that matches, waiting up to `ms`. */
  async next(match: (m: Message) => boolean = () => true, ms = 5000): Promise<Message> {
    const deadline = Date.now() + ms;
    for (;;) {
      const at = this.received.findIndex(match);
      if (at >= 0) return this.received.splice(at, 1)[0]!;
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`no matching message in ${ms} ms; received ${JSON.stringify(this.received).slice(0, 500)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The answer (result, suggestions or error) to the search or suggest `id`. */
  answer(id: string, ms?: number): Promise<Message> {
    return this.next((m) => m.id === id && (m.type === 'result' || m.type === 'suggestions' || m.type === 'error'), ms);
  }

  /** Sends a search and waits for its answer. */
  async search(id: string, q: string, extra: Record<string, unknown> = {}): Promise<Message> {
    this.send({ type: 'search', id, q, ...extra });
    return this.answer(id);
  }

  /** Sends a suggest and waits for its answer. */
  async suggest(id: string, q: string, extra: Record<string, unknown> = {}): Promise<Message> {
    this.send({ type: 'suggest', id, q, ...extra });
    return this.answer(id);
  }
}

/** The HOST:PORT a `sherlock searcher run` logged once it listens. */
export async function listening(running: Running): Promise<string> {
  await until('the searcher to listen', () => /listening address=/.test(running.stderr));
  return /listening address=(\S+)/.exec(running.stderr)![1]!;
}

/** A result's total and the URLs of its hits. */
export interface ResultPage {
  total: number;
  urls: string[];
}

/** `m` as a ResultPage; fails the test when it is not a result. */
export function resultPage(m: Message): ResultPage {
  assert.equal(m.type, 'result', JSON.stringify(m));
  return { total: (m['total'] as { value: number }).value, urls: (m['hits'] as Array<{ url: string }>).map((h) => h.url) };
}
