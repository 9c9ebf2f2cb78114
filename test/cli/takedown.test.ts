/**
 * `sherlock takedown add|remove|list` through the real CLI: one log line
 * and one file line per change, the list in force, exit statuses 2 for
 * usage and bad targets, 1 for a remove of nothing and a damaged file;
 * several commands at once each get their line in.
 */

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import test from 'node:test';
import { takedownFilePath } from '../../common/takedowns.js';
import { runCli } from '../helpers/cli.js';
import { scratchDir } from '../helpers/paths.js';

test('takedown add, remove and list: a log line and a file line per change, the list in force', async (t) => {
  const state = scratchDir(t);
  const add = await runCli(['takedown', 'add', 'HTTP://Example.org/a', '--reason', 'court order 12', '--state', state]);
  assert.equal(add.status, 0, add.stderr);
  assert.deepEqual(add.stderr.trim().split('\n'), ['<5>takedown: takedown added kind=url target=http://example.org/a reason="court order 12"']);
  assert.equal((await runCli(['takedown', 'add', 'spam.example', '--site', '--reason', 'spam', '--state', state])).status, 0);
  assert.equal((await runCli(['takedown', 'add', 'https://example.org/private/', '--prefix', '--reason', 'privacy', '--state', state])).status, 0);
  const remove = await runCli(['takedown', 'remove', 'spam.example', '--site', '--state', state]);
  assert.equal(remove.status, 0, remove.stderr);
  assert.match(remove.stderr, /^<5>takedown: takedown removed kind=site target=spam\.example\n$/);
  assert.equal(readFileSync(takedownFilePath(state), 'utf8').trimEnd().split('\n').length, 4);

  const list = await runCli(['takedown', 'list', '--json', '--state', state]);
  assert.equal(list.status, 0, list.stderr);
  const listed = list.stdout.trim().split('\n').map((line) => JSON.parse(line) as { kind: string; target: string; reason: string });
  assert.deepEqual(
    listed.map((e) => [e.kind, e.target, e.reason]),
    [
      ['url', 'http://example.org/a', 'court order 12'],
      ['prefix', 'https://example.org/private/', 'privacy'],
    ],
  );
  const plain = await runCli(['takedown', 'list', '--state', state]);
  assert.match(plain.stdout, /^url\thttp:\/\/example\.org\/a\t\S+\tcourt order 12\nprefix\t/);
});

test('takedown usage errors exit 2, a remove of what is not in force 1, a damaged file makes list exit 1 naming file and line', async (t) => {
  const state = scratchDir(t);
  const noReason = await runCli(['takedown', 'add', 'http://example.org/', '--state', state]);
  assert.equal(noReason.status, 2);
  assert.match(noReason.stderr, /--reason/);
  const badUrl = await runCli(['takedown', 'add', 'ftp://example.org/', '--reason', 'x', '--state', state]);
  assert.equal(badUrl.status, 2);
  assert.match(badUrl.stderr, /not a URL: "ftp:\/\/example\.org\/": not an http or https URL/);
  const badSite = await runCli(['takedown', 'add', 'http://example.org/', '--site', '--reason', 'x', '--state', state]);
  assert.equal(badSite.status, 2);
  assert.match(badSite.stderr, /not a site: .*a site is a host name/);
  assert.equal((await runCli(['takedown', 'add', 'http://example.org/', '--site', '--prefix', '--reason', 'x', '--state', state])).status, 2);
  const none = await runCli(['takedown', 'remove', 'http://example.org/', '--state', state]);
  assert.equal(none.status, 1);
  assert.match(none.stderr, /no url takedown of http:\/\/example\.org\/ in force/);

  const file = takedownFilePath(state);
  assert.equal((await runCli(['takedown', 'add', 'http://example.org/1', '--reason', 'x', '--state', state])).status, 0);
  assert.equal((await runCli(['takedown', 'add', 'http://example.org/2', '--reason', 'x', '--state', state])).status, 0);
  writeFileSync(file, readFileSync(file, 'utf8').replace('example.org/1', 'example.org/9'));
  const list = await runCli(['takedown', 'list', '--state', state]);
  assert.equal(list.status, 1);
  assert.match(list.stderr, new RegExp(`${file}: offset 0: line 1: CRC-32 mismatch`));
  // Takedowns are urgent: an add still goes in, the damage logged at err.
  const add = await runCli(['takedown', 'add', 'http://example.org/3', '--reason', 'x', '--state', state]);
  assert.equal(add.status, 0, add.stderr);
  assert.match(add.stderr, /^<3>takedown: damaged takedown line ignored .*line=1/m);
});

test('takedown commands run at once each get their line in, whole', async (t) => {
  const state = scratchDir(t);
  const runs = await Promise.all(Array.from({ length: 6 }, (_, i) => runCli(['takedown', 'add', `http://example.org/${i}`, '--reason', `r${i}`, '--state', state])));
  for (const run of runs) assert.equal(run.status, 0, run.stderr);
  const list = await runCli(['takedown', 'list', '--json', '--state', state]);
  assert.equal(list.status, 0, list.stderr);
  const targets = list.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { target: string }).target).sort();
  assert.deepEqual(targets, Array.from({ length: 6 }, (_, i) => `http://example.org/${i}`));
});
