/**
 * Loopback HTTP(S) servers for gatherer tests: a route table of handlers on
 * one 127.0.0.x address (any of 127.0.0.0/8 works on Linux, so each test can
 * play a different host or IP) and an ephemeral port, recording every request.
 *
 * Routes are matched on the path without the query; a path with no route gets
 * the `*` route if there is one, else 404. A handler owns the response: it may answer, stall (never end), stream
 * lazily, or break the connection (`req.socket.resetAndDestroy()`). close()
 * destroys every open connection, stalled ones included, then waits for the
 * server to shut.
 */

import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { TestContext } from 'node:test';
import type { SecureContextOptions, TlsOptions } from 'node:tls';

/** Any return value is ignored; a returned promise that rejects destroys the connection. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

export interface RecordedRequest {
  /** Arrival time, Date.now() milliseconds. */
  at: number;
  method: string;
  /** Path and query as sent in the request line. */
  path: string;
  /** Header fields in received order, original case. */
  headers: [string, string][];
}

export interface FixtureOptions {
  /** Loopback address to bind; default 127.0.0.1. */
  address?: string;
  routes: Record<string, RouteHandler>;
  /** Serve HTTPS with this key and certificate (and any other TLS server option). */
  tls?: SecureContextOptions & TlsOptions;
}

export interface Fixture {
  address: string;
  port: number;
  /** `http://address:port` or `https://address:port`. */
  origin: string;
  requests: RecordedRequest[];
  /** The recorded header's value (first of that name, any case), for assertions. */
  header(request: RecordedRequest, name: string): string | undefined;
  close(): Promise<void>;
}

function pairs(raw: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

export async function startFixture(options: FixtureOptions): Promise<Fixture> {
  const address = options.address ?? '127.0.0.1';
  const requests: RecordedRequest[] = [];
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const path = req.url ?? '/';
    requests.push({ at: Date.now(), method: req.method ?? '', path, headers: pairs(req.rawHeaders) });
    const route = options.routes[path.split('?')[0]!] ?? options.routes['*'];
    if (route === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('no route\n');
      return;
    }
    // A throwing handler is a broken test: fail the request loudly rather than hang.
    Promise.resolve()
      .then(() => route(req, res))
      .catch((err: unknown) => {
        console.error(`fixture route ${path} failed:`, err);
        req.socket.destroy();
      });
  };
  const server: Server = options.tls === undefined ? createHttpServer(listener) : createHttpsServer(options.tls, listener);
  server.listen(0, address);
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  const scheme = options.tls === undefined ? 'http' : 'https';
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    address,
    port,
    origin: `${scheme}://${host}:${port}`,
    requests,
    header(request, name) {
      const wanted = name.toLowerCase();
      return request.headers.find(([n]) => n.toLowerCase() === wanted)?.[1];
    },
    async close() {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

/** One fixture per address, each serving its own `routes()`, closed when the test ends. */
export async function startFixtures(t: TestContext, addresses: readonly string[], routes: () => Record<string, RouteHandler>): Promise<Fixture[]> {
  const out: Fixture[] = [];
  for (const address of addresses) {
    const fixture = await startFixture({ address, routes: routes() });
    t.after(() => fixture.close());
    out.push(fixture);
  }
  return out;
}

/** A port on `address` that nothing listens on (bound once, then released). */
export async function closedPort(address = '127.0.0.1'): Promise<number> {
  const server = createHttpServer();
  server.listen(0, address);
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * Routes of a site whose pages /p0 … /p(pages-1) each link to the next, with
 * a robots.txt allowing everything; `before(i)` runs before page i is
 * answered (to slow it down or hold it until the test is ready).
 */
export function chainSite(pages: number, before: (i: number) => Promise<unknown> = async () => undefined): Record<string, RouteHandler> {
  const routes: Record<string, RouteHandler> = { '/robots.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nAllow: /\n') };
  for (let i = 0; i < pages; i++) {
    routes[`/p${i}`] = async (_req, res) => {
      await before(i);
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<title>page ${i}</title>${i + 1 < pages ? `<a href="/p${i + 1}">next</a>` : ''}`);
    };
  }
  return routes;
}
