/**
 * The admin listener of a daemon without an HTTP port of its own (gatherer,
 * shepherd, indexer): `GET /metrics` on a loopback address, the registry in
 * the text format (common/service/metrics.ts); every other path is 404. Each part's
 * config holds its address as `admin_listen` ("" turns it off, the default:
 * two daemons on one machine must not fight over a port nobody chose).
 *
 * Only loopback addresses are accepted: the figures are for the operator's
 * Prometheus (or a proxy in front of it), not for the network. The listener
 * has the guards of every HTTP listener of ours (http-listener.ts) with caps
 * sized for a few scrapers.
 */

import { once } from 'node:events';
import { z } from 'zod';
import { ioError } from '../errors.js';
import { createListener, type SocketLimits } from './http-listener.js';
import { boundAddress, splitListen } from './listen.js';
import { logger } from '../log.js';
import { CONTENT_TYPE, type Registry } from './metrics.js';

/** The `admin_listen` key: "" (off) or a loopback HOST:PORT; port 0 takes a free one. */
export function adminListen() {
  return z
    .string()
    .regex(/^$|^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|localhost):\d{1,5}$/, 'expected "" (off) or a loopback HOST:PORT such as "127.0.0.1:9431"')
    .default('');
}

const ADMIN_LIMITS: SocketLimits = { maxSockets: 64, maxSocketsPerIp: 32, headerTimeoutMs: 10_000 };

export interface MetricsListener {
  /** HOST:PORT actually bound. */
  readonly address: string;
  close(): Promise<void>;
}

/** Serves `registry` on `listen` (HOST:PORT) until close(). */
export async function serveMetrics(registry: Registry, listen: string): Promise<MetricsListener> {
  const { server } = createListener(
    (req, res, target) => {
      if (target.pathname !== '/metrics') res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('only /metrics here\n');
      else if (req.method !== 'GET' && req.method !== 'HEAD') res.writeHead(405, { allow: 'GET, HEAD' }).end();
      else res.writeHead(200, { 'content-type': CONTENT_TYPE, 'cache-control': 'no-store' }).end(registry.expose());
    },
    () => ADMIN_LIMITS,
    logger('admin'),
  );
  const { host, port } = splitListen(listen);
  server.listen(port, host);
  try {
    await Promise.race([once(server, 'listening'), once(server, 'error').then(([err]) => Promise.reject(err as Error))]);
  } catch (err) {
    throw ioError(err, listen, 'listening for /metrics');
  }
  return {
    address: boundAddress(server),
    async close() {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}
