/**
 * Pausing and resuming the gathering of a loopback site: `sherlock crawl
 * pause` stops new requests (the server sees none while paused) and
 * `resume` lets the crawl complete; a pause holds across a kill -9 and
 * restart of `gatherer run` (the flag in the state directory), with the
 * control socket in $RUNTIME_DIRECTORY; `sherlock crawl` without a
 * subcommand still needs --seeds.
 */

import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, startCli, until } from '../helpers/cli.js';
import { startFixture, type Fixture } from '../helpers/http-fixtures.js';
import { LOOPBACK_CRAWL, linkedPages } from '../helpers/linked-site.js';
import { scratchDir } from '../helpers/paths.js';

/** A chain of pages (shepherd.max_depth allows 16 hops), each answered slowly enough to pause in between. */
const PAGES = 15;

const pageRequests = (site: Fixture) => site.requests.filter((r) => r.path.startsWith('/page')).length;

async function control(state: string, command: string): Promise<{ paused: boolean; running: boolean; gatherer?: { inFlight: number } }> {
  const run = await runCli(['crawl', command, '--state', state, '--json']);
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as { paused: boolean; running: boolean; gatherer?: { inFlight: number } };
}

/** Pauses, waits until no fetch is in flight, and checks the server then sees nothing new for a second. */
async function pauseAndWatch(state: string, site: Fixture): Promise<void> {
  const paused = await control(state, 'pause');
  assert.deepEqual([paused.paused, paused.running], [true, true]);
  for (let tries = 0; ; tries++) {
    const status = await control(state, 'status');
    assert.ok(status.running && tries < 100, `the gatherer stopped, or fetches stay in flight: ${JSON.stringify(status)}`);
    if (status.gatherer?.inFlight === 0) break;
  }
  await quietFor(site);
}

async function quietFor(site: Fixture): Promise<void> {
  const seen = pageRequests(site);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.equal(pageRequests(site), seen, 'a request while paused');
}

test('crawl pause stops new requests until crawl resume, and the crawl then completes', async (t) => {
  const site = await startFixture({ address: '127.0.0.61', routes: linkedPages('page', PAGES, { delayMs: 300 }) });
  t.after(() => site.close());
  const state = scratchDir(t);
  const seeds = join(state, 'seeds');
  writeFileSync(seeds, `${site.origin}/page0\n`);
  const crawl = startCli(t, ['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--json', ...LOOPBACK_CRAWL]);
  await until('the crawl under way', () => pageRequests(site) >= 3);
  await pauseAndWatch(state, site);
  const status = await runCli(['status', '--state', state]);
  assert.match(status.stdout, /^gatherer .*, paused since \d{4}-/m);
  assert.ok(pageRequests(site) < PAGES);

  const resumed = await control(state, 'resume');
  assert.deepEqual([resumed.paused, resumed.running], [false, true]);
  assert.equal(await crawl.exited, 0, crawl.stderr);
  assert.equal(new Set(site.requests.map((r) => r.path).filter((p) => p.startsWith("/page"))).size, PAGES, crawl.stderr + crawl.stdout);
  assert.equal((JSON.parse(crawl.stdout) as { outcomes: Record<string, number> }).outcomes['ok'], PAGES);
});

test('a pause holds across kill -9 and a restart of gatherer run; the socket lives in RUNTIME_DIRECTORY', async (t) => {
  const site = await startFixture({ address: '127.0.0.62', routes: linkedPages('page', PAGES, { delayMs: 300 }) });
  t.after(() => site.close());
  const state = scratchDir(t);
  const runtime = join(scratchDir(t, 'sherlock-run-'), 'sherlock');
  mkdirSync(runtime);
  const urls = Array.from({ length: PAGES }, (_, i) => `${site.origin}/page${i}`);
  const added = await runCli(['gatherer', 'add', '--state', state, ...urls]);
  assert.equal(added.status, 0, added.stderr);
  const gatherer = () => startCli(t, ['gatherer', 'run', '--state', state, ...LOOPBACK_CRAWL], { env: { RUNTIME_DIRECTORY: runtime } });

  const first = gatherer();
  await until('the gatherer under way', () => pageRequests(site) >= 3);
  assert.ok(lstatSync(join(state, 'gather', 'control.sock')).isSymbolicLink());
  assert.ok(lstatSync(join(runtime, 'gatherer.sock')).isSocket());
  await pauseAndWatch(state, site);
  first.child.kill('SIGKILL');
  await first.exited;

  const second = gatherer();
  await until('the restarted gatherer paused', () => second.stderr.includes('paused since an earlier'));
  const status = await control(state, 'status');
  assert.deepEqual([status.paused, status.running], [true, true]);
  await quietFor(site);

  await control(state, 'resume');
  await until('every page fetched', () => new Set(site.requests.map((r) => r.path)).size >= PAGES + 1);
  second.child.kill('SIGTERM');
  assert.equal(await second.exited, 0, second.stderr);
  const stopped = await control(state, 'status');
  assert.deepEqual([stopped.paused, stopped.running], [false, false]);
});

test('crawl without a subcommand still needs --seeds; pause with no gatherer running is kept for the next one', async (t) => {
  const state = scratchDir(t);
  const bare = await runCli(['crawl', '--state', state]);
  assert.equal(bare.status, 2);
  assert.match(bare.stderr, /--seeds/);
  const paused = await runCli(['crawl', 'pause', '--state', state]);
  assert.equal(paused.status, 0, paused.stderr);
  assert.match(paused.stdout, /^paused since .*; no gatherer running \(it will start paused\)$/m);
});
