/**
 * Controlling a running gatherer: pause and resume (DESIGN: operators pause
 * a crawl without losing the frontier). Two halves, both here because the
 * CLI writes and the gatherer reads them:
 *
 * The pause flag, `state/gather/paused`: present means paused. One line,
 * `paused <ISO time>\n`, for people. Written (atomically, fsynced) and
 * removed only by `sherlock crawl pause|resume`; read by the gatherer when it
 * starts and by `sherlock status`. So a pause survives restarts and kill -9.
 *
 * The control socket: a unix stream socket the running gatherer listens on,
 * `$RUNTIME_DIRECTORY/gatherer.sock` (systemd's RuntimeDirectory=) with a
 * symlink to it at `state/gather/control.sock`, or the socket itself at that
 * path when there is no runtime directory; clients always connect to the
 * path in the state directory, so they need not know the daemon's
 * environment. A line protocol, UTF-8, one request per line, one answer per
 * request, a JSON object on one line:
 *
 *   pause    →  {"ok":true,"paused":true}      (in-flight fetches finish, no new ones start)
 *   resume   →  {"ok":true,"paused":false}
 *   status   →  {"ok":true,"paused":…, …}      (the gatherer's counters)
 *   other    →  {"ok":false,"error":"…"}
 *
 * At most MAX_CONNECTIONS are served at once, each closed after IDLE_MS of
 * silence or a line over MAX_LINE bytes.
 *
 * A socket left by a killed gatherer is removed by the next one (which holds
 * the queue lock, so it is the only gatherer of the state); a client finding
 * no socket or nobody listening is told the gatherer is not running.
 */

import { existsSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { ioError, SherlockError } from '../errors.js';
import { createFile, syncDirectory } from '../files.js';

export const CONTROL_COMMANDS = ['pause', 'resume', 'status'] as const;
export type ControlCommand = (typeof CONTROL_COMMANDS)[number];
export type ControlAnswer = { ok: true; paused: boolean; [field: string]: unknown } | { ok: false; error: string };

/** Longest request line accepted; anything longer closes the connection. */
const MAX_LINE = 256;
/** Connections served at once (the CLI opens one per command); more are closed on accept. */
const MAX_CONNECTIONS = 16;
/** A connection silent this long is closed, so idle ones cannot hold the slots. */
const IDLE_MS = 10_000;

export function pauseFlagPath(state: string): string {
  return join(state, 'gather', 'paused');
}

/** Where clients connect: the socket, or a symlink to it, in the state directory. */
export function controlSocketPath(state: string): string {
  return join(state, 'gather', 'control.sock');
}

/** When the flag was set (ISO time), or undefined when not paused. */
export function readPauseFlag(state: string): string | undefined {
  const file = pauseFlagPath(state);
  try {
    return /^paused (\S+)/.exec(readFileSync(file, 'latin1'))?.[1] ?? 'unknown time';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw ioError(err, file, 'reading');
  }
}

/** Sets or clears the flag durably. */
export function writePauseFlag(state: string, paused: boolean, now = new Date()): void {
  const file = pauseFlagPath(state);
  if (paused) {
    createFile(file, Buffer.from(`paused ${now.toISOString()}\n`));
  } else if (existsSync(file)) {
    rmSync(file, { force: true });
    syncDirectory(join(state, 'gather'));
  }
}

export interface ControlServer {
  /** The socket's own path (in the runtime directory or the state directory). */
  readonly path: string;
  close(): Promise<void>;
}

/**
 * Listens for control requests; `answer` is called for each known command.
 * `runtimeDir` (RUNTIME_DIRECTORY) holds the socket when given.
 */
export async function serveControl(state: string, runtimeDir: string | undefined, answer: (command: ControlCommand) => ControlAnswer): Promise<ControlServer> {
  const link = controlSocketPath(state);
  const path = runtimeDir === undefined || runtimeDir === '' ? link : join(runtimeDir, 'gatherer.sock');
  for (const stale of new Set([path, link])) rmSync(stale, { force: true });
  const server = createServer((socket) => serveConnection(socket, answer));
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(ioError(err, path, 'listening on')));
    server.listen(path, resolve);
  });
  try {
    if (path !== link) symlinkSync(path, link);
  } catch (err) {
    await closeServer(server);
    throw ioError(err, link, 'linking');
  }
  return {
    path,
    async close() {
      await closeServer(server);
      for (const name of new Set([link, path])) rmSync(name, { force: true });
    },
  };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

function serveConnection(socket: Socket, answer: (command: ControlCommand) => ControlAnswer): void {
  let pending = '';
  socket.setEncoding('utf8');
  socket.setTimeout(IDLE_MS, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: string) => {
    pending += chunk;
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
      const line = pending.slice(0, end).trim();
      pending = pending.slice(end + 1);
      const reply: ControlAnswer = (CONTROL_COMMANDS as readonly string[]).includes(line)
        ? answer(line as ControlCommand)
        : { ok: false, error: `unknown command ${JSON.stringify(line.slice(0, 40))}; commands: ${CONTROL_COMMANDS.join(', ')}` };
      socket.write(JSON.stringify(reply) + '\n');
    }
    if (pending.length > MAX_LINE) socket.destroy();
  });
}

/**
 * Sends one command to the gatherer of `state`; its answer, or undefined
 * when no gatherer listens (no socket, or a stale one).
 */
export function askControl(state: string, command: ControlCommand, timeoutMs = 10_000): Promise<ControlAnswer | undefined> {
  const path = controlSocketPath(state);
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new SherlockError('SHERLOCK_IO', `no answer to ${command} within ${timeoutMs} ms`, { file: path }));
    }, timeoutMs);
    const settle = (): void => clearTimeout(timer);
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${command}\n`));
    socket.on('data', (chunk: string) => {
      received += chunk;
      const end = received.indexOf('\n');
      if (end < 0) return;
      settle();
      socket.end();
      try {
        resolve(JSON.parse(received.slice(0, end)) as ControlAnswer);
      } catch {
        reject(new SherlockError('SHERLOCK_IO', `the gatherer's answer is not JSON: ${JSON.stringify(received.slice(0, 80))}`, { file: path }));
      }
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      settle();
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') resolve(undefined);
      else reject(ioError(err, path, 'connecting to'));
    });
    socket.on('close', () => {
      settle();
      resolve(undefined);
    });
  });
}
