/**
 * Writer locks: at most one live process writes a given file.
 *
 * The lock is a small file (conventionally `<file>.lock`) holding one line,
 * `PID START`, where START is the process's start time from /proc/PID/stat
 * (field 22; absent where /proc is not mounted). It appears atomically: the line
 * is written to a private temporary file which is then hard-linked to the lock's
 * name, and link(2) fails if the name exists. So a reader of the lock never sees
 * it empty or half written.
 *
 * A lock whose process is gone is stale and is taken over. "Gone" means
 * kill(PID, 0) fails with ESRCH, the process is a zombie, or the PID now belongs
 * to a process with another start time (PIDs are reused, notably after a reboot,
 * and a stale lock must not keep the writer from starting). Take-overs are serialised by a second lock,
 * `<lock>.takeover`, created the same way, under which the stale lock is checked
 * again before it is removed; so two processes finding the same stale lock cannot
 * both win. The one race left needs a process to die within the few system calls
 * it holds `.takeover` and two others to race for it afterwards.
 *
 * Crash: kill -9 leaves the lock file behind; the next acquirer takes it over.
 * Locks are advisory: only code that calls acquireLock is kept out.
 */

import { closeSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { SherlockError, ioError } from './errors.js';

export interface Lock {
  readonly path: string;
  /** Removes the lock file if it is still ours; idempotent. */
  release(): void;
}

interface Holder {
  pid: number;
  start: string | undefined;
}

/** Takes the lock at `path` or throws SHERLOCK_LOCKED naming the live holder. */
export function acquireLock(path: string): Lock {
  const content = `${process.pid} ${procStat(process.pid)?.start ?? ''}`.trimEnd() + '\n';
  // Each round either takes the lock, throws, or removes a stale lock; a few
  // rounds cover locks that come and go while we look.
  for (let round = 0; round < 10; round++) {
    if (tryCreate(path, content)) return ownedLock(path, content);
    const text = readLock(path);
    if (text === undefined) continue; // released meanwhile
    const holder = parseHolder(text);
    if (holder !== undefined && isAlive(holder)) {
      throw new SherlockError('SHERLOCK_LOCKED', `held by live process ${holder.pid}`, { file: path });
    }
    removeStale(path, text, content);
  }
  throw new SherlockError('SHERLOCK_LOCKED', 'lock keeps changing hands', { file: path });
}

/** The PID of the live process holding the lock at `path`, or undefined when none does (no lock, or a stale one). */
export function lockHolder(path: string): number | undefined {
  const text = readLock(path);
  const holder = text === undefined ? undefined : parseHolder(text);
  return holder !== undefined && isAlive(holder) ? holder.pid : undefined;
}

function ownedLock(path: string, content: string): Lock {
  let held = true;
  return {
    path,
    release() {
      if (!held) return;
      held = false;
      if (readLock(path) === content) unlinkQuietly(path);
    },
  };
}

/** Creates `path` holding `content`, atomically; false if it exists. */
function tryCreate(path: string, content: string): boolean {
  const temp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    const fd = openSync(temp, 'wx');
    try {
      writeSync(fd, content);
    } finally {
      closeSync(fd);
    }
    linkSync(temp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw ioError(err, path, 'creating lock');
  } finally {
    unlinkQuietly(temp);
  }
}

/** Under `<path>.takeover`, removes the lock if it still reads `stale`. */
function removeStale(path: string, stale: string, content: string): void {
  const guard = `${path}.takeover`;
  if (!tryCreate(guard, content)) {
    const text = readLock(guard);
    const holder = text === undefined ? undefined : parseHolder(text);
    if (holder !== undefined && isAlive(holder)) {
      throw new SherlockError('SHERLOCK_LOCKED', `process ${holder.pid} is taking over a stale lock`, { file: path });
    }
    if (text !== undefined && readLock(guard) === text) unlinkQuietly(guard);
    return;
  }
  try {
    if (readLock(path) === stale) unlinkQuietly(path);
  } finally {
    unlinkQuietly(guard);
  }
}

function readLock(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw ioError(err, path, 'reading lock');
  }
}

/** `PID [START]`; undefined for anything else (a lock we cannot read is stale). */
function parseHolder(text: string): Holder | undefined {
  const match = /^(\d+)(?: (\d+))?\n$/.exec(text);
  if (match === null) return undefined;
  const pid = Number(match[1]);
  return pid > 0 && Number.isSafeInteger(pid) ? { pid, start: match[2] } : undefined;
}

function isAlive(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = procStat(holder.pid);
  if (stat === undefined) return true;
  // A zombie has exited and writes nothing more; another start time is another process.
  return stat.state !== 'Z' && (holder.start === undefined || holder.start === stat.start);
}

/** State (field 3) and start time in clock ticks since boot (field 22) of /proc/PID/stat. */
function procStat(pid: number): { state: string; start: string } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [state, start] = [fields[0], fields[19]];
  return state !== undefined && start !== undefined && /^\d+$/.test(start) ? { state, start } : undefined;
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw ioError(err, path, 'removing lock');
  }
}
