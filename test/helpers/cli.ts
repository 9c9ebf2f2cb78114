/**
 * Running the built `sherlock` CLI from a test. Always asynchronously: the
 * fixture servers live in the test's process and must keep answering while
 * the command runs. The environment is cut down to PATH and what the test
 * gives, so an operator's config or STATE_DIRECTORY never leaks in.
 */

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { TestContext } from 'node:test';
import { cliPath } from './paths.js';

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  child: ChildProcess;
  /** Everything printed so far. */
  readonly stdout: string;
  readonly stderr: string;
  /** The exit status (null when killed by a signal), once the streams are closed. */
  exited: Promise<number | null>;
}

/** Starts `sherlock ARGS…` (under `wrapper`, a command such as prlimit that execs the rest, when given); killed when the test ends if still running. */
export function startCli(t: TestContext | undefined, args: readonly string[], options: { input?: string; env?: NodeJS.ProcessEnv; wrapper?: readonly string[] } = {}): Running {
  const command = [...(options.wrapper ?? []), process.execPath, cliPath, ...args];
  const child = spawn(command[0]!, command.slice(1), {
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'], CONFIGURATION_DIRECTORY: '/nonexistent', ...options.env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  if (options.input !== undefined) child.stdin!.end(options.input);
  const exited = once(child, 'close').then(([status]) => status as number | null);
  t?.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
  };
}

/** Runs `sherlock ARGS…` to its end. */
export async function runCli(args: readonly string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  const running = startCli(undefined, args, options);
  const status = await running.exited;
  return { status, stdout: running.stdout, stderr: running.stderr };
}

/** Polls `ok` every 10 ms; fails the test naming `what` after `ms`. */
export async function until(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The pids `sherlock run` logged for `daemon`, in start order. */
export function daemonPids(run: Running, daemon: string): number[] {
  return [...run.stderr.matchAll(new RegExp(`daemon started daemon=${daemon} pid=(\\d+)`, 'g'))].map((m) => Number(m[1]));
}

/** Whether no process `pid` exists any more. */
export function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
