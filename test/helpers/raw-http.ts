/**
 * A loopback TCP server that speaks just enough HTTP/1.1 to play a broken or
 * hostile web server: it reads each request's head and hands the socket to
 * the route of its path, which writes whatever bytes it likes (an endless
 * header, a Content-Length that lies, a trickle). `/robots.txt` is answered
 * 404 unless a route says otherwise, so the gatherer gets to the pages.
 * Routes must stop writing once the socket is destroyed; close() destroys
 * every socket still open.
 */

import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';

export type RawRoute = (socket: Socket) => void;

export interface RawServer {
  origin: string;
  /** Paths asked, in order. */
  paths: string[];
  close(): Promise<void>;
}

const NOT_FOUND = 'HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nno\n';

export async function startRawServer(address: string, routes: Record<string, RawRoute>): Promise<RawServer> {
  const paths: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let head = '';
    const onData = (chunk: Buffer): void => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const path = head.split(' ')[1] ?? '/';
      head = head.slice(end + 4);
      paths.push(path);
      const route = routes[path];
      if (route !== undefined) {
        socket.off('data', onData);
        route(socket);
      } else {
        socket.write(NOT_FOUND);
      }
    };
    socket.on('data', onData);
  });
  server.listen(0, address);
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  return {
    origin: `http://${address}:${port}`,
    paths,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** Writes `next()` whenever the socket drains, until it returns undefined or the socket is gone. */
export function pump(socket: Socket, next: () => string | Buffer | undefined, everyMs = 0): void {
  const step = (): void => {
    if (socket.destroyed) return;
    const piece = next();
    if (piece === undefined) {
      socket.end();
      return;
    }
    const more = socket.write(piece);
    if (everyMs > 0) setTimeout(step, everyMs);
    else if (more) setImmediate(step);
    else socket.once('drain', step);
  };
  step();
}
