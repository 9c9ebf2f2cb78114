/**
 * The shepherd and takedowns (shepherd/shepherd.ts, urldb.ts due): a real
 * `sherlock crawl` of a loopback site never requests a URL, a prefix or a
 * site taken down (the server's request log says so), keeps the links to
 * them, and fetches them once the takedowns are lifted.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { runCli } from '../helpers/cli.js';
import { startFixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

const CRAWL_SETS = ['gatherer.allow_private_addresses=true', 'gatherer.min_delay=0s', 'shepherd.scope=any'].flatMap((s) => ['--set', s]);

const html = (body: string): RouteHandler => (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<html><body>${body}</body></html>`);

test('a crawl never requests what is taken down, keeps the links, and fetches them once the takedowns are lifted', async (t) => {
  const state = scratchDir(t);
  const other = await startFixture({ address: '127.0.0.213', routes: { '/': html('other site'), '/robots.txt': (_req, res) => res.writeHead(404).end() } });
  t.after(() => other.close());
  const site = await startFixture({
    address: '127.0.0.212',
    routes: {
      '/robots.txt': (_req, res) => res.writeHead(404).end(),
      '/': html(`<a href="/public">public</a> <a href="/secret/a">a</a> <a href="/secret/b">b</a> <a href="/gone">gone</a> <a href="${other.origin}/">other</a>`),
      '/public': html('<a href="/secret/c">c</a>'),
      '/secret/a': html('a'),
      '/secret/b': html('b'),
      '/secret/c': html('c'),
      '/gone': html('gone'),
    },
  });
  t.after(() => site.close());
  const takedown = async (...args: string[]) => assert.equal((await runCli(['takedown', ...args, '--state', state])).status, 0);
  await takedown('add', `${site.origin}/secret/`, '--prefix', '--reason', 'private');
  await takedown('add', `${site.origin}/gone`, '--reason', 'complaint');
  await takedown('add', '127.0.0.213', '--site', '--reason', 'spam');

  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${site.origin}/\n`);
  const crawl = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', ...CRAWL_SETS]);
  assert.equal(crawl.status, 0, crawl.stderr);
  const paths = site.requests.map((r) => r.path).sort();
  assert.deepEqual(paths, ['/', '/public', '/robots.txt']);
  assert.equal(other.requests.length, 0);
  // The links are recorded, never planned: their rows wait as new.
  const dump = await runCli(['shepherd', 'dump', '--json', '--only', 'new', '--state', state]);
  const waiting = dump.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { url: string }).url).sort();
  assert.deepEqual(waiting, [`${other.origin}/`, `${site.origin}/gone`, `${site.origin}/secret/a`, `${site.origin}/secret/b`, `${site.origin}/secret/c`].sort());

  await takedown('remove', `${site.origin}/secret/`, '--prefix');
  await takedown('remove', '127.0.0.213', '--site');
  const again = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', ...CRAWL_SETS]);
  assert.equal(again.status, 0, again.stderr);
  assert.deepEqual(site.requests.map((r) => r.path).filter((p) => p.startsWith('/secret/') || p === '/gone').sort(), ['/secret/a', '/secret/b', '/secret/c']);
  assert.deepEqual(other.requests.map((r) => r.path).sort(), ['/', '/robots.txt']);
});
