/**
 * Starting and stopping the site server from the harness: a child process
 * (`site-server.js`) that listens on loopback only, reports ready on stdout,
 * and is stopped by pid (SIGTERM, then SIGKILL). Its stdin is a pipe from the
 * harness, so if the harness dies the server sees end-of-file and exits too.
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
  const child: ChildProcess = spawn(
    process.execPath,
    [join(distDir, 'site-server.js'), '--layout', layoutFile, '--log', logFile, '--max-seconds', String(maxSeconds)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  if (child.pid === undefined) throw new Error('site server did not start');
  const pid = child.pid;
  trackChild(pid);
  let exited = false;
  child.once('exit', () => {
    exited = true;
    untrackChild(pid);
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('site server not ready within 30 s')), 30_000);
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('"ready":true')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`site server exited with ${code} before it was ready`));
    });
  });
  return {
    pid,
    logFile,
    layout,
    stop: async () => {
      if (exited) return;
      child.stdin?.end();
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        return;
      }
      const deadline = Date.now() + 5000;
      while (!exited && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      if (!exited) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    },
  };
}
