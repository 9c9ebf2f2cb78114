import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import test from 'node:test';
import { isSherlockError } from '../../common/errors.js';
import { acquireLock } from '../../common/lock.js';
import { repoRoot, scratchDir } from '../helpers/paths.js';

const lockChild = join(repoRoot, 'dist', 'test', 'helpers', 'bucket-lock-child.js');

function holdInChild(path: string, holdMs: number): ChildProcess {
  return spawn(process.execPath, [lockChild, path, String(holdMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
}

async function firstLine(child: ChildProcess): Promise<string> {
  let out = '';
  for await (const chunk of child.stdout!) {
    out += String(chunk);
    if (out.includes('\n')) break;
  }
  return out.split('\n')[0]!;
}

const isLocked = (err: unknown) => isSherlockError(err, 'SHERLOCK_LOCKED');

test('a second acquirer is refused while the holder lives, and succeeds after release', (t) => {
  const path = join(scratchDir(t), 'buckets.lock');
  const lock = acquireLock(path);
  assert.match(readFileSync(path, 'utf8'), new RegExp(`^${process.pid}( \\d+)?\\n$`));
  assert.throws(() => acquireLock(path), (err: unknown) => isLocked(err) && /live process \d+/.test((err as Error).message));
  lock.release();
  assert.equal(existsSync(path), false);
  lock.release(); // idempotent
  acquireLock(path).release();
});

test('a lock held by another live process is refused; once that process is killed it is taken over', async (t) => {
  const path = join(scratchDir(t), 'buckets.lock');
  const child = holdInChild(path, 0);
  t.after(() => child.kill('SIGKILL'));
  assert.equal(await firstLine(child), 'won');
  assert.throws(() => acquireLock(path), isLocked);
  child.kill('SIGKILL');
  await once(child, 'exit');
  const lock = acquireLock(path);
  assert.match(readFileSync(path, 'utf8'), new RegExp(`^${process.pid}`));
  lock.release();
});

test('a lock naming a dead process, garbage or nothing is stale and taken over', async (t) => {
  const dir = scratchDir(t);
  const dead = spawn(process.execPath, ['-e', '0']);
  await once(dead, 'exit');
  for (const [name, content] of [
    ['dead', `${dead.pid}\n`],
    ['garbage', 'not a pid\n'],
    ['empty', ''],
  ] as const) {
    const path = join(dir, `${name}.lock`);
    writeFileSync(path, content);
    const lock = acquireLock(path);
    assert.match(readFileSync(path, 'utf8'), new RegExp(`^${process.pid}`), name);
    lock.release();
  }
});

test('a reused pid with another start time is stale', { skip: !existsSync('/proc/self/stat') }, (t) => {
  const path = join(scratchDir(t), 'buckets.lock');
  writeFileSync(path, `${process.pid} 1\n`);
  acquireLock(path).release();
});

test('release leaves a lock that is no longer ours alone', (t) => {
  const path = join(scratchDir(t), 'buckets.lock');
  const lock = acquireLock(path);
  writeFileSync(path, '1 1\n');
  lock.release();
  assert.equal(readFileSync(path, 'utf8'), '1 1\n');
});

test('of many processes racing for a stale lock exactly one wins', async (t) => {
  const path = join(scratchDir(t), 'buckets.lock');
  const dead = spawn(process.execPath, ['-e', '0']);
  await once(dead, 'exit');
  writeFileSync(path, `${dead.pid}\n`);
  const children = Array.from({ length: 8 }, () => holdInChild(path, 0));
  t.after(() => children.forEach((child) => child.kill('SIGKILL')));
  const outcomes = await Promise.all(children.map(firstLine));
  assert.equal(outcomes.filter((line) => line === 'won').length, 1, outcomes.join(' '));
  assert.equal(outcomes.filter((line) => line === 'locked').length, 7, outcomes.join(' '));
});
