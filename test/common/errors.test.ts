import assert from 'node:assert/strict';
import test from 'node:test';
import { exitStatus, ioError, isSherlockError, SherlockError } from '../../common/errors.js';

test('describe() puts the place before the message', () => {
  const err = new SherlockError('SHERLOCK_CORRUPT_ARC', 'bad length "abc"', { file: 'x.arc', offset: 262 });
  assert.equal(err.describe(), 'x.arc: offset 262: bad length "abc"');
  assert.equal(new SherlockError('SHERLOCK_BAD_URL', 'not http', { url: 'ftp://a/' }).describe(), 'ftp://a/: not http');
});

test('exit statuses follow sysexits: 78 for config, 2 for usage, 1 otherwise', () => {
  assert.equal(exitStatus(new SherlockError('SHERLOCK_BAD_CONFIG', 'x')), 78);
  assert.equal(exitStatus(new SherlockError('SHERLOCK_USAGE', 'x')), 2);
  assert.equal(exitStatus(new SherlockError('SHERLOCK_IO', 'x')), 1);
  assert.equal(exitStatus(new Error('plain')), 1);
});

test('ioError keeps the errno code, the file and the cause', () => {
  const cause = Object.assign(new Error('no space'), { code: 'ENOSPC' });
  const err = ioError(cause, '/state/x', 'write');
  assert.ok(isSherlockError(err, 'SHERLOCK_IO'));
  assert.equal(err.describe(), '/state/x: write failed: ENOSPC');
  assert.equal(err.cause, cause);
});
