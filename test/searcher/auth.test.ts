/**
 * Who may talk to the searcher (searcher/auth.ts): the token file, the
 * constant-time comparison, the Authorization header, and the Origin check
 * against cross-site WebSocket hijacking.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { isSherlockError } from '../../common/errors.js';
import { bearerToken, originAllowed, readToken, tokenMatches } from '../../searcher/auth.js';
import { searcherConfig } from '../../searcher/config.js';
import { scratchDir } from '../helpers/paths.js';

test('the token file: trimmed; no file configured is no token; empty or missing is bad config', (t) => {
  const dir = scratchDir(t);
  const file = join(dir, 'token');
  writeFileSync(file, '  s3cret-token\n');
  assert.equal(readToken(file), 's3cret-token');
  assert.equal(readToken(''), undefined);
  writeFileSync(file, '\n');
  assert.throws(() => readToken(file), (err: unknown) => isSherlockError(err, 'SHERLOCK_BAD_CONFIG') && err.place.key === 'searcher.token_file' && /is empty/.test(err.message));
  assert.throws(() => readToken(join(dir, 'missing')), (err: unknown) => isSherlockError(err, 'SHERLOCK_BAD_CONFIG') && /ENOENT/.test(err.message));
});

test('tokens compare equal only when equal, whatever their lengths', () => {
  assert.equal(tokenMatches('abc', 'abc'), true);
  assert.equal(tokenMatches('abc', 'abd'), false);
  assert.equal(tokenMatches('abc', 'abcd'), false);
  assert.equal(tokenMatches('abc', ''), false);
});

test('bearer tokens from the Authorization header', () => {
  assert.equal(bearerToken('Bearer abc.def'), 'abc.def');
  assert.equal(bearerToken('bearer  xyz'), 'xyz');
  assert.equal(bearerToken('Basic dXNlcjpwYXNz'), undefined);
  assert.equal(bearerToken('Bearer a b'), undefined);
  assert.equal(bearerToken(undefined), undefined);
});

test('origins: none (not a browser), our own host, or one configured', () => {
  assert.equal(originAllowed(undefined, 'search.example.org', []), true);
  assert.equal(originAllowed('http://search.example.org', 'search.example.org', []), true);
  assert.equal(originAllowed('http://search.example.org', 'search.example.org:80', []), true);
  assert.equal(originAllowed('https://search.example.org', 'search.example.org:443', []), true);
  assert.equal(originAllowed('http://127.0.0.1:8080', '127.0.0.1:8080', []), true);
  assert.equal(originAllowed('http://127.0.0.1:8081', '127.0.0.1:8080', []), false);
  assert.equal(originAllowed('https://evil.example', 'search.example.org', []), false);
  assert.equal(originAllowed('https://search.example.org.evil.example', 'search.example.org', []), false);
  assert.equal(originAllowed('null', 'search.example.org', []), false);
  assert.equal(originAllowed('http://search.example.org', undefined, []), false);
  assert.equal(originAllowed('https://portal.example.org', 'search.example.org', ['https://portal.example.org']), true);
  assert.equal(originAllowed('http://portal.example.org', 'search.example.org', ['https://portal.example.org']), false);
});

test('configured origins are normalised as browsers send them; paths are refused', () => {
  const parse = (origins: string[]) => searcherConfig.safeParse({ allowed_origins: origins });
  const ok = parse(['https://Portal.Example.org', 'http://intranet:8080/']);
  assert.deepEqual(ok.success && ok.data.allowed_origins, ['https://portal.example.org', 'http://intranet:8080']);
  for (const bad of ['portal.example.org', 'https://portal.example.org/search', 'ftp://portal.example.org', 'https://user@portal.example.org']) {
    assert.equal(parse([bad]).success, false, bad);
  }
});
