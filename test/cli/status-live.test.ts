/**
 * `sherlock status` and the gatherer's status snapshot after a crawl: the
 * snapshot is marked stopped, counts every fetch, sorts errors by outcome and
 * names the ARC file written last; the text output says so. A damaged
 * snapshot is reported, field and file, beside the rest of the status.
 */

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
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

test('a damaged status snapshot (a time in the year 33715) is reported with its field and file; sherlock status prints the rest and exits 0', async (t) => {
  const state = scratchDir(t);
  mkdirSync(join(state, 'gather'));
  const now = new Date().toISOString();
  const counts = { fetches: 1, bytes: 10, stored: 1, robots_fetches: 1, retries: 1, rate: 0, in_flight: 0, queued: 1, hosts: 1, outcomes: { http_5xx: 1 }, errors: { http_5xx: 1 } };
  // What a gatherer wrote before issue 26 for a 503 with Retry-After: 999999999999.
  const delayed = { host: 'http://busy.example', queued: 1, until: '+033715-01-01T00:00:00.000Z', errors: 1 };
  const snapshot = { format: 'sherlock-gather-status/1', pid: 4242, running: true, time: now, started: now, ...counts, busiest_hosts: [], delayed_hosts: [delayed], arc: null };
  writeFileSync(join(state, 'gather', 'status.json'), JSON.stringify(snapshot));

  const json = await runCli(['status', '--state', state, '--json']);
  assert.equal(json.status, 0, json.stderr);
  const status = JSON.parse(json.stdout) as { fetching?: unknown; fetchingProblem?: string; arcFiles: number };
  assert.equal(status.fetching, undefined);
  assert.match(status.fetchingProblem!, /gather\/status\.json: delayed_hosts\.0\.until: /);
  assert.equal(status.arcFiles, 0);

  const text = await runCli(['status', '--state', state]);
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /^fetching  status snapshot unreadable: .*gather\/status\.json: delayed_hosts\.0\.until: /m);
  assert.match(text.stdout, /^archive   0 ARC files/m);
});
