/**
 * HOST:PORT addresses of our listeners (the searcher's port, the admin
 * listeners): splitting a configured one (IPv6 hosts in brackets) and
 * writing the one actually bound (port 0 takes a free port).
 */

import type { Server } from 'node:net';

export function splitListen(listen: string): { host: string; port: number } {
  const colon = listen.lastIndexOf(':');
  return { host: listen.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(listen.slice(colon + 1)) };
}

/** HOST:PORT a listening server is bound to. */
export function boundAddress(server: Server): string {
  const bound = server.address();
  if (bound === null || typeof bound === 'string') return String(bound);
  return bound.family === 'IPv6' ? `[${bound.address}]:${bound.port}` : `${bound.address}:${bound.port}`;
}
