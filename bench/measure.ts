/**
 * Running and measuring child processes: wall time from spawn to exit, peak
 * resident memory (GNU time's maximum RSS, i.e. the kernel's VmHWM of the
 * measured command), processor time (GNU time's user + system seconds of the
 * command and the children it waited for), and a hard time limit. Every child runs in its own
 * process group so a time-out or a harness crash ends it and its children by
 * id; `killAllChildren` is wired to the harness's exit.
 */

import { spawn } from 'node:child_process';
import type { SpawnOptions } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

export const GNU_TIME = '/usr/bin/time';

const live = new Set<number>();

/** Kills the process group of every child still running (harness exit or crash). */
export function killAllChildren(): void {
  for (const pid of live) {
    try {
      process.kill(-pid, 'SIGKILL'); // a process group we made (detached child)
    } catch {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  live.clear();
}

export function trackChild(pid: number): void {
  live.add(pid);
}
export function untrackChild(pid: number): void {
  live.delete(pid);
}

export interface RunResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  wallMs: number;
  /** Peak RSS in bytes of the measured command (undefined when GNU time was not used or failed). */
  peakRss: number | undefined;
  /** User + system processor time in ms of the measured command (undefined when GNU time was not used or failed). */
  cpuMs: number | undefined;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Measure peak RSS through GNU time (default true). */
  measureRss?: boolean;
  /** Keep at most this many characters of stdout/stderr (the tail). */
  keepOutput?: number;
  input?: string;
  /** Told the pid spawned (GNU time's when it measures, the command's otherwise), e.g. to watch the command while it runs. */
  onSpawn?: (pid: number) => void;
}

/** Runs `cmd args` to completion (or the time limit) and measures it. */
export function run(cmd: string, args: readonly string[], opts: RunOptions): Promise<RunResult> {
  const measureRss = opts.measureRss !== false && existsSync(GNU_TIME);
  const keep = opts.keepOutput ?? 200_000;
  const dir = measureRss ? mkdtempSync(join(tmpdir(), 'sherlock-bench-time-')) : undefined;
  const timeFile = dir === undefined ? undefined : join(dir, 'time');
  const argv = timeFile === undefined ? [cmd, ...args] : [GNU_TIME, '-f', '%M %U %S', '-o', timeFile, cmd, ...args];
  const spawnOpts: SpawnOptions = {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    detached: true,
  };
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(argv[0]!, argv.slice(1), spawnOpts);
    if (child.pid === undefined) {
      child.once('error', reject);
      return;
    }
    const pid = child.pid;
    trackChild(pid);
    opts.onSpawn?.(pid);
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      stdout = (stdout + d).slice(-keep);
    });
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-keep);
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }, opts.timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      untrackChild(pid);
      reject(err);
    });
    child.once('close', (status, signal) => {
      clearTimeout(timer);
      untrackChild(pid);
      const wallMs = performance.now() - start;
      let peakRss: number | undefined;
      let cpuMs: number | undefined;
      if (timeFile !== undefined) {
        try {
          const text = readFileSync(timeFile, 'utf8').trim().split('\n');
          const [kb, user, system] = text[text.length - 1]!.split(' ').map(Number);
          if (kb !== undefined && Number.isFinite(kb) && kb > 0) peakRss = kb * 1024;
          if (user !== undefined && system !== undefined && Number.isFinite(user + system)) cpuMs = (user + system) * 1000;
        } catch {
          // GNU time wrote nothing (killed)
        }
      }
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      resolve({ status, signal, wallMs, peakRss, cpuMs, stdout, stderr, timedOut });
    });
  });
}

/** Throws with the tail of stderr when a run did not exit 0. */
export function check(what: string, r: RunResult): RunResult {
  if (r.timedOut) throw new Error(`${what}: timed out after ${(r.wallMs / 1000).toFixed(0)} s`);
  if (r.status !== 0) {
    const tail = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(-8).join('\n');
    throw new Error(`${what}: exit ${r.status ?? r.signal}\n${tail}`);
  }
  return r;
}
