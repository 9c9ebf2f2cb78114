/**
 * Takes the writer lock of a bucket file and holds it: run as
 * `node bucket-lock-child.js LOCKFILE HOLD_MS`. Prints `won` or `locked` on
 * stdout, then exits after HOLD_MS (0: hold until killed).
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { isSherlockError } from '../../common/errors.js';
import { acquireLock } from '../../common/lock.js';

const [path, holdText] = process.argv.slice(2);
if (path === undefined || holdText === undefined) {
  process.stderr.write('usage: bucket-lock-child LOCKFILE HOLD_MS\n');
  process.exit(2);
}
try {
  const lock = acquireLock(path);
  process.stdout.write('won\n');
  await sleep(Number(holdText) || 60_000);
  lock.release();
} catch (err) {
  if (!isSherlockError(err, 'SHERLOCK_LOCKED')) throw err;
  process.stdout.write('locked\n');
}
