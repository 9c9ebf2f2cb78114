/**
 * What every subcommand shares: turning a thrown error into one stderr line and
 * an exit status, and writing to stdout for people or, with --json, for scripts.
 *
 * stdout may go away under us (`sherlock arc ls BIG | head`): writes then
 * report false so the command can stop early, and the command ends quietly.
 * Any other write failure (a full disk under `> file`) fails the command.
 */

import { once } from 'node:events';
import { SherlockError, exitStatus, ioError, isSherlockError } from '../common/errors.js';

/** Wraps a command body: its return value (or 0) becomes the exit status. */
export function action<A extends unknown[]>(body: (...args: A) => Promise<number | void> | number | void) {
  return async (...args: A): Promise<void> => {
    try {
      const status = (await body(...args)) ?? 0;
      stdout.check();
      process.exitCode = status;
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

class Stdout {
  private failure: NodeJS.ErrnoException | undefined;

  constructor() {
    // Without a listener a failed write would crash the process.
    process.stdout.on('error', (err: NodeJS.ErrnoException) => {
      this.failure ??= err;
    });
  }

  /** File streams report failure at once through `errored`, pipes by `destroyed`. */
  get gone(): boolean {
    this.failure ??= (process.stdout.errored as NodeJS.ErrnoException | null) ?? undefined;
    return this.failure !== undefined || process.stdout.destroyed;
  }

  line(text: string): boolean {
    if (this.gone) return false;
    process.stdout.write(text + '\n');
    return !this.gone;
  }

  async bytes(parts: readonly Buffer[]): Promise<boolean> {
    for (const part of parts) {
      if (this.gone) return false;
      // once() rejects when 'error' comes instead of 'drain'.
      if (!process.stdout.write(part) && !this.gone) await once(process.stdout, 'drain').catch(() => undefined);
    }
    return !this.gone;
  }

  check(): void {
    if (this.gone && this.failure !== undefined && this.failure.code !== 'EPIPE') throw ioError(this.failure, 'stdout', 'write');
  }
}

const stdout = new Stdout();

/** One line for people; false once stdout is gone and the command should stop. */
export function print(line: string): boolean {
  return stdout.line(line);
}

/** One JSON document per line, what `--json` prints; false once stdout is gone. */
export function printJson(value: unknown): boolean {
  return stdout.line(JSON.stringify(value));
}

/** Raw bytes, waiting while the pipe is full; false once stdout is gone. */
export function printBytes(parts: readonly Buffer[]): Promise<boolean> {
  return stdout.bytes(parts);
}

/** Help text of every --state option. */
export const STATE_HELP = 'state directory (default: $STATE_DIRECTORY)';

/** The state directory: --state, else systemd's STATE_DIRECTORY (its first entry when it lists several). */
export function stateDir(opts: { state?: string }): string {
  const dir = opts.state ?? process.env['STATE_DIRECTORY']?.split(':')[0];
  if (dir === undefined || dir === '') {
    throw new SherlockError('SHERLOCK_USAGE', 'no state directory: give --state DIR or set STATE_DIRECTORY');
  }
  return dir;
}

/** systemd's RUNTIME_DIRECTORY (its first entry), where daemons put their sockets; undefined when unset. */
export function runtimeDir(): string | undefined {
  const dir = process.env['RUNTIME_DIRECTORY']?.split(':')[0];
  return dir === '' ? undefined : dir;
}
