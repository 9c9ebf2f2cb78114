/**
 * `sherlock searcher run` through the real CLI: without an index (the
 * evaluator does not exist yet) it says so honestly, /healthz 503 and every
 * search NO_INDEX; SIGTERM stops it cleanly; SIGHUP reloads its config.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import test from 'node:test';
import { runCli, startCli, until } from '../helpers/cli.js';
import { scratchDir } from '../helpers/paths.js';
import { Client, listening } from './net.js';
import { buildCli, crawlSite } from '../indexer/site.js';

test('searcher run without an index: /healthz 503, searches NO_INDEX, SIGTERM stops it with status 0', async (t) => {
  const state = scratchDir(t);
  const running = startCli(t, ['searcher', 'run', '--state', state, '--listen', '127.0.0.1:0']);
  const address = await listening(running);
  const health = await fetch(`http://${address}/healthz`);
  assert.equal(health.status, 503);
  assert.equal(await health.text(), 'no index\n');

  const client = await Client.open(t, `ws://${address}/`);
  assert.equal((await client.next()).index, null);
  const answer = await client.search('q1', 'debian');
  assert.deepEqual([answer.type, answer['code']], ['error', 'NO_INDEX']);
  assert.equal((await client.search('q2', '"open')).code, 'BAD_QUERY');

  running.child.kill('SIGTERM');
  assert.equal((await client.closed).code, 1001);
  assert.equal(await running.exited, 0, running.stderr);
  assert.match(running.stderr, /searcher stopped/);
});

test('SIGHUP reloads the config: a token configured since applies to the next connection', async (t) => {
  const dir = scratchDir(t);
  const config = join(dir, 'sherlock.toml');
  const tokenFile = join(dir, 'token');
  writeFileSync(config, '[searcher]\n');
  writeFileSync(tokenFile, 'hup-token\n');
  const running = startCli(t, ['--config', config, 'searcher', 'run', '--state', dir, '--listen', '127.0.0.1:0']);
  const address = await listening(running);
  writeFileSync(config, `[searcher]\ntoken_file = ${JSON.stringify(tokenFile)}\n`);
  running.child.kill('SIGHUP');
  await until('the reload', () => /config reloaded/.test(running.stderr));
  const client = await Client.open(t, `ws://${address}/`);
  client.send({ type: 'search', id: 'a', q: 'x' });
  assert.equal((await client.closed).code, 4401);
  const hello = await Client.open(t, `ws://${address}/`);
  hello.send({ type: 'hello', token: 'hup-token' });
  assert.equal((await hello.next()).type, 'welcome');
});

test('SIGHUP reloads the synonyms; a broken line keeps the list in use and the log names file:line', async (t) => {
  const state = scratchDir(t);
  const origin = await crawlSite(state, { address: '127.0.0.148' });
  await buildCli(state);
  const config = join(state, 'sherlock.toml');
  const synonyms = join(state, 'synonyms.txt');
  writeFileSync(config, `[searcher]\nsynonyms_file = ${JSON.stringify(synonyms)}\n`);
  writeFileSync(synonyms, 'sleuth, detective\n');
  const running = startCli(t, ['--config', config, 'searcher', 'run', '--state', state, '--listen', '127.0.0.1:0']);
  const client = await Client.open(t, `ws://${await listening(running)}/`);
  await client.next();
  const urls = async (q: string) => ((await client.search(q, q))['hits'] as Array<{ url: string }> | undefined)?.map((hit) => hit.url) ?? [];
  assert.deepEqual(await urls('sleuth'), [`${origin}/`]);

  writeFileSync(synonyms, 'sleuth, detective\ngumshoe => => detective\n');
  running.child.kill('SIGHUP');
  await until('the refused reload', () => /config not reloaded/.test(running.stderr));
  assert.match(running.stderr, /synonyms\.txt:2: a line has at most one \\"=>\\"/);
  assert.deepEqual(await urls('sleuth'), [`${origin}/`]);

  writeFileSync(synonyms, 'gumshoe => detective\n');
  running.child.kill('SIGHUP');
  await until('the reload', () => /config reloaded/.test(running.stderr));
  assert.deepEqual(await urls('gumshoe'), [`${origin}/`]);
  assert.deepEqual(await urls('sleuth'), []);
});

test('searcher run refuses a bad --listen (2) and a missing state directory (2)', async (t) => {
  const state = scratchDir(t);
  const bad = await runCli(['searcher', 'run', '--state', state, '--listen', 'everywhere']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--listen: expected HOST:PORT/);
  const missing = await runCli(['searcher', 'run', '--state', join(state, 'nope'), '--listen', '127.0.0.1:0']);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /--state: no directory/);
});

test('searcher run on an address in use exits with an error instead of waiting on its search threads', { timeout: 60_000 }, async (t) => {
  const state = scratchDir(t);
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.after(() => taken.close());
  const { port } = taken.address() as AddressInfo;
  const run = await runCli(['searcher', 'run', '--state', state, '--listen', `127.0.0.1:${port}`]);
  assert.notEqual(run.status, 0);
  assert.match(run.stderr, /EADDRINUSE|in use/);
});
