/**
 * `index = false` of a site rule, end to end: a real crawl of a loopback site,
 * an index build without the rule (every page found), then one with it (the
 * ruled pages are still stored, no longer indexed).
 */

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { storedObjects } from '../helpers/gather-state.js';
import { startFixture } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

const PATHS = ['/', '/pub/a', '/drafts/b', '/drafts/c'];

test('pages a site rule says index = false of are stored but left out of the next index version', async (t) => {
  const server = await startFixture({
    address: '127.0.0.228',
    routes: {
      '*': (req: IncomingMessage, res: ServerResponse) =>
        res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<title>page ${req.url}</title><p>quetzal lagoon ${PATHS.map((p) => `<a href="${p}">${p}</a>`).join(' ')}`),
    },
  });
  t.after(() => server.close());
  const dir = scratchDir(t);
  const config = join(dir, 'sherlock.toml');
  writeFileSync(config, '[gatherer]\nallow_private_addresses = true\nmin_delay = "0s"\n');
  const state = join(dir, 'state');
  const seeds = join(dir, 'seeds.txt');
  writeFileSync(seeds, `${server.origin}/\n`);
  const crawl = await runCli(['--config', config, 'crawl', '--state', state, '--seeds', seeds, '--until-idle', '--json']);
  assert.equal(crawl.status, 0, crawl.stderr);

  const found = async (): Promise<string[]> => {
    const build = await runCli(['--config', config, 'index', 'build', '--state', state, '--json']);
    assert.equal(build.status, 0, build.stderr);
    const search = await runCli(['--config', config, 'search', '--state', state, '--json', 'quetzal']);
    assert.equal(search.status, 0, search.stderr);
    return [...search.stdout.matchAll(/"url":"([^"]+)"/g)].map((m) => new URL(m[1]!).pathname).sort();
  };
  assert.deepEqual(await found(), [...PATHS].sort());

  mkdirSync(join(dir, 'sites.d'));
  writeFileSync(join(dir, 'sites.d', 'drafts.toml'), `[[site]]\nprefix = "${server.origin}/drafts/"\nindex = false\n`);
  assert.deepEqual(await found(), ['/', '/pub/a']);
  const stored = storedObjects(state).filter((o) => !o.robots).map((o) => new URL(o.url).pathname);
  assert.deepEqual([...new Set(stored)].sort(), [...PATHS].sort(), 'the drafts are still stored');
});

test('a site rule weight raises or lowers its pages among equally good matches', async (t) => {
  const paths = ['/', '/x', '/y', '/z'];
  const server = await startFixture({
    address: '127.0.0.230',
    routes: {
      // Texts of the same length with axolotl once each, otherwise their own words: no near-duplicates.
      '*': (req: IncomingMessage, res: ServerResponse) => {
        const own = Array.from({ length: 30 }, (_, i) => `w${i}${req.url!.replace(/\W/g, 'q')}`).join(' ');
        res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<title>page</title><p>axolotl ${own} ${paths.map((p) => `<a href="${p}">link</a>`).join(' ')}`);
      },
    },
  });
  t.after(() => server.close());
  const dir = scratchDir(t);
  const config = join(dir, 'sherlock.toml');
  writeFileSync(config, '[gatherer]\nallow_private_addresses = true\nmin_delay = "0s"\n');
  mkdirSync(join(dir, 'sites.d'));
  const state = join(dir, 'state');
  const seeds = join(dir, 'seeds.txt');
  writeFileSync(seeds, `${server.origin}/\n`);
  const crawl = await runCli(['--config', config, 'crawl', '--state', state, '--seeds', seeds, '--until-idle', '--json']);
  assert.equal(crawl.status, 0, crawl.stderr);

  const ranked = async (rules: string): Promise<string[]> => {
    writeFileSync(join(dir, 'sites.d', 'weights.toml'), rules);
    const build = await runCli(['--config', config, 'index', 'build', '--state', state, '--json']);
    assert.equal(build.status, 0, build.stderr);
    const search = await runCli(['--config', config, 'search', '--state', state, '--json', 'axolotl']);
    assert.equal(search.status, 0, search.stderr);
    return [...search.stdout.matchAll(/"url":"([^"]+)"/g)].map((m) => new URL(m[1]!).pathname);
  };
  const up = await ranked('[[site]]\nregex = "/y$"\nweight = 1\n');
  assert.equal(up.length, 4);
  assert.equal(up[0], '/y', up.join(' '));
  const down = await ranked('[[site]]\nregex = "/y$"\nweight = -1\n\n[[site]]\nregex = "/z$"\nweight = 0.5\n');
  assert.equal(down[0], '/z', down.join(' '));
  assert.equal(down.at(-1), '/y', down.join(' '));
});
