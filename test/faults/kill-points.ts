/**
 * Kill points for the fault tests: a seeded random (printed, so a failing run
 * can be replayed with SHERLOCK_FAULT_SEED), counts scaled by SHERLOCK_STRESS
 * (`npm run stress`), and one CLI command started and killed with SIGKILL
 * after a chosen moment.
 */

import type { TestContext } from 'node:test';
import { random } from '../helpers/bucket-payload.js';
import { startCli, type Running } from '../helpers/cli.js';
import { scratchDir } from '../helpers/paths.js';

/** Multiplier of every kill count: 1 in CI, SHERLOCK_STRESS (default 5 when set but not a number) under `npm run stress`. */
export const STRESS = ((): number => {
  const value = process.env['SHERLOCK_STRESS'];
  if (value === undefined || value === '' || value === '0') return 1;
  const n = Number(value);
  return Number.isInteger(n) && n > 1 ? n : 5;
})();

/** The run's random: from SHERLOCK_FAULT_SEED when set, else a fresh seed; the seed is printed either way. */
export function seededRandom(t: TestContext): { seed: number; next: () => number; below: (n: number) => number } {
  const given = process.env['SHERLOCK_FAULT_SEED'];
  const seed = given === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(given);
  const line = `${t.name}: seed ${seed} (replay with SHERLOCK_FAULT_SEED=${seed}), stress ×${STRESS}`;
  t.diagnostic(line);
  console.log(line);
  const next = random(seed);
  return { seed, next, below: (n) => Math.floor(next() * n) };
}

export interface Killed {
  /** Whether the kill landed on a running process (false: it had exited by itself first). */
  killed: boolean;
  status: number | null;
  run: Running;
}

/**
 * Starts `sherlock ARGS…`, waits until `ready()` (or the process ends), then
 * `delay` ms, and kills it with SIGKILL unless it already exited. Its
 * TMPDIR is the test's: a killed export cannot remove its sort runs.
 */
export async function killAfter(t: TestContext, args: readonly string[], delay: number, ready: (run: Running) => boolean = () => true): Promise<Killed> {
  const run = startCli(t, args, { env: { TMPDIR: scratchDir(t, 'sherlock-killed-') } });
  const deadline = Date.now() + 60_000;
  while (!ready(run) && run.child.exitCode === null && Date.now() < deadline) await sleep(5);
  await sleep(delay);
  const killed = run.child.exitCode === null && run.child.signalCode === null;
  if (killed) run.child.kill('SIGKILL');
  const status = await run.exited;
  return { killed, status, run };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
