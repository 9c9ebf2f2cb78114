/**
 * A service manager's notification socket for tests: a real AF_UNIX datagram
 * socket (through unix-dgram, which sherlock itself sends with) at a fresh
 * path, collecting what arrives, one string per datagram.
 */

import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { scratchDir } from './paths.js';

interface DgramSocket {
  bind(path: string): void;
  on(event: 'message', listener: (data: Buffer) => void): void;
  close(): void;
}
const dgram = createRequire(import.meta.url)('unix-dgram') as { createSocket(type: 'unix_dgram'): DgramSocket };

export function notifySocket(t: TestContext): { path: string; messages: string[] } {
  const path = join(scratchDir(t, 'sherlock-notify-'), 'notify');
  const messages: string[] = [];
  const socket = dgram.createSocket('unix_dgram');
  socket.on('message', (data) => messages.push(data.toString()));
  socket.bind(path);
  t.after(() => socket.close());
  return { path, messages };
}
