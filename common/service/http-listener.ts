/**
 * What every HTTP listener of ours (the searcher's port, the daemons' admin
 * listeners) does before its routes see a request, so that no request and no
 * crowd of idle connections can take it down:
 *
 * - The request-target is parsed here once. One that WHATWG URL cannot read
 *   (`GET //[`, `GET http://[::1`) is answered 400; a route never meets it.
 * - A route that throws is answered 500 and logged; the process goes on.
 * - Connections are counted from the TCP accept, before any byte is read:
 *   at most `maxSockets` in all and `maxSocketsPerIp` from one address (a
 *   WebSocket counts as the connection it was upgraded from). A connection
 *   past the per-address cap is closed at once. At the total cap the oldest
 *   connection that has not yet sent a whole request head is closed to make
 *   room (a client that sends nothing is the cheapest attack and the first to
 *   go); when every connection has, the new one is closed.
 * - A connection that has not sent a whole request head `headerTimeoutMs`
 *   after it was accepted is closed; Node's own header and keep-alive timers
 *   cover the requests after the first.
 *
 * The caps must stay below the process's descriptor limit, or accept() fails
 * for everybody: `socketLimit()` says what is left of it.
 */

import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log.js';

export interface SocketLimits {
  /** Connections open at once, all addresses together. */
  maxSockets: number;
  /** Connections open at once from one address. */
  maxSocketsPerIp: number;
  /** How long a new connection has to send its first request head. */
  headerTimeoutMs: number;
}

/** A route: the request with its target already parsed (against http://HOST, HOST the listener's). */
export type Route = (req: IncomingMessage, res: ServerResponse, target: URL) => void | Promise<void>;

/** What a listener has refused so far, for its metrics and tests. */
export interface ListenerCounts {
  /** Connections open now. */
  open: number;
  /** Closed on accept: their address had maxSocketsPerIp open. */
  perIpRefused: number;
  /** Closed to make room, or refused, at maxSockets. */
  evicted: number;
  /** Closed for not sending a request head in time. */
  headerTimeouts: number;
  /** Requests whose target could not be parsed (answered 400). */
  badTargets: number;
  /** Routes that threw (answered 500). */
  routeErrors: number;
}

/** Descriptors kept for files, worker threads and pipes when the socket cap follows the descriptor limit. */
const RESERVED_DESCRIPTORS = 128;
/** The socket cap when the descriptor limit cannot be read (not Linux). */
const FALLBACK_SOCKETS = 1024 - RESERVED_DESCRIPTORS;

/** Sockets this process can hold besides its files: the soft RLIMIT_NOFILE less a reserve. */
export function socketLimit(): number {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'latin1'));
    if (line?.[1] === undefined) return FALLBACK_SOCKETS;
    if (line[1] === 'unlimited') return 1_000_000;
    return Math.max(16, Number(line[1]) - RESERVED_DESCRIPTORS);
  } catch {
    return FALLBACK_SOCKETS;
  }
}

/** The request-target as a URL, or undefined when it is not one (the caller answers 400). */
export function requestTarget(req: IncomingMessage): URL | undefined {
  try {
    return new URL(req.url ?? '/', 'http://listener');
  } catch {
    return undefined;
  }
}

interface Tracked {
  ip: string;
  /** A whole request head (or an upgrade) has arrived. */
  spoke: boolean;
  timer: NodeJS.Timeout | undefined;
}

/**
 * An HTTP server with the guards above, serving `route`. `limits` is read at
 * every accept, so a reload that changes it applies to the next connection.
 */
export function createListener(route: Route, limits: () => SocketLimits, log: Logger): { server: Server; counts: ListenerCounts } {
  const counts: ListenerCounts = { open: 0, perIpRefused: 0, evicted: 0, headerTimeouts: 0, badTargets: 0, routeErrors: 0 };
  const tracked = new Map<Socket, Tracked>();
  const perIp = new Map<string, number>();

  const spoke = (socket: Socket): void => {
    const entry = tracked.get(socket);
    if (entry === undefined || entry.spoke) return;
    entry.spoke = true;
    clearTimeout(entry.timer);
  };

  const headersTimeout = limits().headerTimeoutMs;
  const server = createServer({ connectionsCheckingInterval: 1000, headersTimeout, requestTimeout: Math.max(headersTimeout, 60_000) }, (req, res) => {
    spoke(req.socket);
    const target = requestTarget(req);
    if (target === undefined) {
      counts.badTargets++;
      res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }).end('the request-target is not a URL\n');
      return;
    }
    const failed = (err: unknown): void => {
      counts.routeErrors++;
      log.err('request failed', { path: target.pathname, problem: err instanceof Error ? err.message : String(err) });
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('internal error\n');
      else res.destroy();
    };
    try {
      const done = route(req, res, target);
      if (done !== undefined) done.catch(failed);
    } catch (err) {
      failed(err);
    }
  });
  // Node hands an upgrade's socket to whoever listens here and forgets it; a
  // listener without an upgrade handler of its own refuses it, or the socket
  // would stay open with no timer left on it.
  server.on('upgrade', (req: IncomingMessage, socket: Socket) => {
    spoke(req.socket);
    if (server.listenerCount('upgrade') === 1) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });

  /** Stops counting a socket (at once when we close it, so the room is there for the next accept). */
  const release = (socket: Socket): void => {
    const entry = tracked.get(socket);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    tracked.delete(socket);
    const left = (perIp.get(entry.ip) ?? 1) - 1;
    if (left === 0) perIp.delete(entry.ip);
    else perIp.set(entry.ip, left);
    counts.open = tracked.size;
  };

  server.on('connection', (socket: Socket) => {
    const { maxSockets, maxSocketsPerIp, headerTimeoutMs } = limits();
    const ip = socket.remoteAddress ?? '';
    socket.on('error', () => socket.destroy());
    if ((perIp.get(ip) ?? 0) >= maxSocketsPerIp) {
      counts.perIpRefused++;
      socket.destroy();
      return;
    }
    if (tracked.size >= maxSockets) {
      counts.evicted++;
      const idle = oldestSilent(tracked);
      if (idle === undefined) {
        socket.destroy();
        return;
      }
      release(idle);
      idle.destroy();
    }
    const entry: Tracked = { ip, spoke: false, timer: undefined };
    entry.timer = setTimeout(() => {
      counts.headerTimeouts++;
      release(socket);
      socket.destroy();
    }, headerTimeoutMs);
    tracked.set(socket, entry);
    perIp.set(ip, (perIp.get(ip) ?? 0) + 1);
    counts.open = tracked.size;
    socket.once('close', () => release(socket));
  });
  return { server, counts };
}

/** The connection accepted first of those that have not sent a request head yet (a Map keeps insertion order). */
function oldestSilent(tracked: Map<Socket, Tracked>): Socket | undefined {
  for (const [socket, entry] of tracked) if (!entry.spoke) return socket;
  return undefined;
}
