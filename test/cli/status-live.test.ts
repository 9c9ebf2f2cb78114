/**
 * `sherlock status` and the gatherer's status snapshot after a crawl: the
 * snapshot is marked stopped, counts every fetch, sorts errors by outcome and
 * names the ARC file written last; the text output says so.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { startFixture } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

test('after a crawl, sherlock status shows the gatherer stopped with its fetches, errors by class and ARC file', async (t) => {
  const state = scratchDir(t);
  const site = await startFixture({
    routes: {
      '/robots.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nDisallow: /private\n'),
      '/': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<a href="/a">a</a> <a href="/gone">gone</a> <a href="/private/x">x</a>'),
      '/a': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<title>a</title>'),
      '/gone': (_req, res) => res.writeHead(404, { 'Content-Type': 'text/html' }).end('no'),
    },
  });
  t.after(() => site.close());
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${site.origin}/\n`);
  const crawl = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s']);
  assert.equal(crawl.status, 0, crawl.stderr);

  const json = await runCli(['status', '--state', state, '--json']);
  assert.equal(json.status, 0, json.stderr);
  const fetching = (JSON.parse(json.stdout) as { fetching: Record<string, unknown> & { arc: { file: string; bytes: number } } }).fetching;
  assert.equal(fetching['running'], false);
  assert.equal(fetching['live'], false);
  assert.equal(fetching['fetches'], 3);
  assert.deepEqual(fetching['outcomes'], { ok: 2, http_4xx: 1, robots_denied: 1 });
  assert.deepEqual(fetching['errors'], { http_4xx: 1, robots_denied: 1 });
  assert.deepEqual(fetching['busiest_hosts'], []);
  assert.match(fetching.arc.file, /^sherlock-.*\.arc\.gz$/);
  assert.ok(fetching.arc.bytes > 0);

  const text = await runCli(['status', '--state', state]);
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /^fetching  not now; last snapshot .*: 3 fetched/m);
  assert.match(text.stdout, /^errors    http_4xx 1, robots_denied 1$/m);
  assert.match(text.stdout, new RegExp(`^ARC       ${fetching.arc.file} `, 'm'));
});
