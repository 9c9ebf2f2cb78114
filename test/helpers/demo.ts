/**
 * `sherlock demo` started from a test, through the real CLI: the sample
 * sites, the crawl, the index and the searcher in one child process. Resolves
 * once the demo prints the address to open; killed when the test ends, and
 * its temporary state removed.
 */

import { rmSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { startCli, until, type Running } from './cli.js';

export interface Demo {
  running: Running;
  /** The searcher: http://127.0.0.1:PORT */
  http: string;
  /** The sample sites' origins by name ("Lindenau Wiki" → http://127.0.0.2:PORT). */
  sites: Map<string, string>;
  /** The demo's state directory, as it printed it. */
  state: string;
}

/** The crawl and the build take seconds alone, far longer on a busy machine. */
const START_MS = 180_000;

export async function startDemo(t: TestContext, args: readonly string[] = []): Promise<Demo> {
  const running = startCli(t, ['demo', '--listen', '127.0.0.1:0', ...args]);
  await until('the demo to print its address', () => /^open http:\/\/\S+\/$/m.test(running.stdout) || running.child.exitCode !== null, START_MS);
  const open = /^open (http:\/\/\S+)\/$/m.exec(running.stdout);
  if (open === null) throw new Error(`the demo ended before serving: ${running.stderr}`);
  const sites = new Map([...running.stdout.matchAll(/^sample site (http:\/\/\S+)\/ {2}(.+) \(\d+ pages\)$/gm)].map((m) => [m[2]!, m[1]!]));
  const state = /^state (\S+)/m.exec(running.stdout)![1]!;
  // A demo killed at the end of the test cannot remove its temporary state itself.
  t.after(() => {
    if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill('SIGKILL');
    if (process.env['SHERLOCK_KEEP_TMP'] === undefined) rmSync(state, { recursive: true, force: true });
  });
  return { running, http: open[1]!, sites, state };
}
