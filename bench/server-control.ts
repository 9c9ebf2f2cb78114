/**
 * Starting and stopping the harness's servers: child processes (`site-server.js`,
 * `sim-web-server.js`) that listen on loopback only, report ready on stdout,
 * and are stopped by pid (SIGTERM, then SIGKILL). Their stdin is a pipe from the
 * harness, so if the harness dies a server sees end-of-file and exits too.
 */

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { trackChild, untrackChild } from './measure.js';
import type { SiteLayout } from './site.js';

export interface RunningServer {
  readonly pid: number;
  readonly logFile: string;
  readonly layout: SiteLayout;
  stop(): Promise<void>;
}

/** True when `port` can be bound on every address of the site (and the hub). */
export async function portFree(port: number, addresses: readonly string[]): Promise<boolean> {
  for (const address of addresses) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, address, () => s.close(() => resolve(true)));
    });
    if (!ok) return false;
  }
  return true;
}

export async function startServer(layout: SiteLayout, workDir: string, distDir: string, maxSeconds: number): Promise<RunningServer> {
  const layoutFile = join(workDir, 'layout.json');
  const logFile = join(workDir, 'access.log');
  writeFileSync(layoutFile, JSON.stringify(layout, null, 2) + '\n');
  writeFileSync(logFile, '');
  const child = await spawnServer(join(distDir, 'site-server.js'), ['--layout', layoutFile, '--log', logFile, '--max-seconds', String(maxSeconds)], 'site server');
  return { pid: child.pid, logFile, layout, stop: child.stop };
}

/** A server child process (the site server, the simulated web's): its pid, everything it printed on stdout, and its stop. */
export interface ServerProcess {
  readonly pid: number;
  /** stdout so far: the ready line, and what the server prints when it stops. */
  stdout(): string;
  /** SIGTERM, then SIGKILL after 5 s; resolves once it has exited. */
  stop(): Promise<void>;
}

/** Spawns `node script args`, resolves when it prints a line with `"ready":true` (within 60 s). */
export async function spawnServer(script: string, args: readonly string[], what: string): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  if (child.pid === undefined) throw new Error(`${what} did not start`);
  const pid = child.pid;
  trackChild(pid);
  let exited = false;
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const gone = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      untrackChild(pid);
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} not ready within 60 s`)), 60_000);
    const look = (): void => {
      if (!out.includes('"ready":true')) return;
      clearTimeout(timer);
      child.stdout?.off('data', look);
      resolve();
    };
    child.stdout?.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code} before it was ready`));
    });
  });
  return {
    pid,
    stdout: () => out,
    stop: async () => {
      if (exited) return;
      child.stdin?.end();
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        return;
      }
      const timer = setTimeout(() => {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }, 5000);
      await gone;
      clearTimeout(timer);
    },
  };
}
