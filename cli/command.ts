/**
 * What every subcommand shares: turning a thrown error into one stderr line and
 * an exit status, and printing for people or, with --json, for scripts.
 */

import { exitStatus, isSherlockError } from '../common/errors.js';

/** Wraps a command body: its return value (or 0) becomes the exit status. */
export function action<A extends unknown[]>(body: (...args: A) => Promise<number | void> | number | void) {
  return async (...args: A): Promise<void> => {
    try {
      process.exitCode = (await body(...args)) ?? 0;
    } catch (err) {
      process.stderr.write(`sherlock: ${describe(err)}\n`);
      process.exitCode = exitStatus(err);
    }
  };
}

export function describe(err: unknown): string {
  if (isSherlockError(err)) return err.describe();
  if (err instanceof Error) return err.stack ?? err.message;
  return String(err);
}

/** One JSON document per line: what `--json` prints. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}

export function print(line: string): void {
  process.stdout.write(line + '\n');
}
