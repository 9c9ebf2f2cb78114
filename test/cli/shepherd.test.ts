/**
 * `sherlock inject` and `sherlock shepherd run` as operators use them: seeds
 * from a file or standard input with bad lines counted, not fatal; an inject
 * while the daemon holds the database goes through its inbox; the shepherd
 * and gatherer daemons, as two processes, crawl a site to the end between
 * them, and `sherlock status` reads their state while they run; SIGTERM
 * stops the shepherd cleanly.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { UrlDb } from '../../shepherd/urldb.js';
import { listSeedFiles } from '../../shepherd/seed-inbox.js';
import { runCli, startCli, until } from '../helpers/cli.js';
import { startFixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

function urlStats(state: string): ReturnType<UrlDb['stats']> {
  const db = UrlDb.open(state);
  try {
    return db.stats();
  } finally {
    db.close();
  }
}

test('inject: URLs from a file and from stdin, comments skipped, bad lines counted by reason, known URLs known', async (t) => {
  const state = scratchDir(t);
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, ['# seeds', 'http://a.example/', '  http://b.example/x  ', '', 'ftp://c.example/', 'http://A.example/', `http://d.example/${'x'.repeat(2000)}`, 'http://e.example/\r'].join('\n'));
  const first = await runCli(['inject', '--state', state, '--json', seeds]);
  assert.equal(first.status, 0, first.stderr);
  assert.deepEqual(JSON.parse(first.stdout), { added: 3, known: 1, refused: 0, rejected: { scheme: 1, length: 1 }, refetched: 0 });

  const again = await runCli(['inject', '--state', state, '-'], { input: 'http://b.example/x\nhttp://f.example/\n' });
  assert.equal(again.status, 0, again.stderr);
  assert.equal(again.stdout.trim(), "1 added, 1 known, 0 over a site's budget, 0 refused");
  assert.deepEqual(listSeedFiles(state), [], 'the inbox is empty once injected');
  const stats = urlStats(state);
  assert.equal(stats.urls.new, 4);
  assert.equal(stats.sites, 4);

  const missing = await runCli(['inject', '--state', state, join(state, 'nope.txt')]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /nope\.txt/);
});

test('inject: a seed file of several batches (the next one prepared in a worker thread) counts every line and puts every host in scope', async (t) => {
  const state = scratchDir(t);
  const seeds = join(state, 'seeds.txt');
  const lines: string[] = [];
  for (let i = 0; i < 120_000; i++) {
    if (i % 1000 === 7) lines.push(`ftp://h${i % 600}.example/p${i}`);
    else lines.push(`http://h${i % 600}.example/p${i % 108_000}`);
  }
  writeFileSync(seeds, lines.join('\n') + '\n');
  const run = await runCli(['inject', '--state', state, '--json', seeds]);
  assert.equal(run.status, 0, run.stderr);
  const known = lines.filter((line, i) => i >= 108_000 && !line.startsWith('ftp:') && !lines[i - 108_000]!.startsWith('ftp:')).length;
  assert.deepEqual(JSON.parse(run.stdout), { added: 120_000 - 120 - known, known, refused: 0, rejected: { scheme: 120 }, refetched: 0 });
  const db = UrlDb.open(state);
  try {
    assert.equal(db.stats().total, 120_000 - 120 - known);
    const hosts = JSON.parse(String(db.getMeta('seed_hosts'))) as string[];
    assert.equal(hosts.length, 600);
    assert.ok(hosts.includes('h599.example'), hosts.slice(0, 3).join(' '));
  } finally {
    db.close();
  }
});

test('shepherd run: an inject while it runs goes through the inbox; SIGTERM stops it with exit 0', async (t) => {
  const state = scratchDir(t);
  const daemon = startCli(t, ['--set', 'shepherd.cycle_interval=100ms', '--set', 'log.level=info', 'shepherd', 'run', '--state', state]);
  await until('the shepherd to start', () => daemon.stderr.includes('shepherd running'));
  const inject = await runCli(['inject', '--state', state, '--json', '-'], { input: 'http://a.example/\nhttp://b.example/\n' });
  assert.equal(inject.status, 0, inject.stderr);
  assert.match(JSON.parse(inject.stdout).pending as string, /shepherd\/inbox\/.*\.urls$/);
  await until('the daemon to take the inbox', () => listSeedFiles(state).length === 0 && /cycle.*injected=2/.test(daemon.stderr));
  daemon.child.kill('SIGTERM');
  assert.equal(await daemon.exited, 0, daemon.stderr);
  assert.match(daemon.stderr, /shepherd stopped/);
  // Planned into the gatherer's inbox: queued now.
  assert.equal(urlStats(state).urls.queued, 2);
});

test('shepherd run: the footprint map of a big database is built before the daemon says it is running, once', async (t) => {
  const state = scratchDir(t);
  const db = UrlDb.open(state);
  const urls = Array.from({ length: 100_000 }, (_, i) => ({ url: `http://s${i % 100}.example/p${i}` }));
  assert.equal(db.inject(urls, 1_700_000_000).added, urls.length);
  db.close();
  const daemon = startCli(t, ['--set', 'shepherd.cycle_interval=100ms', '--set', 'log.level=info', 'shepherd', 'run', '--state', state]);
  // The first cycle plans (and marks queued, a lookup a URL); the next ones wait for the gatherer.
  await until('a cycle that plans', () => /cycle .*planned=20000/.test(daemon.stderr), 60_000);
  daemon.child.kill('SIGTERM');
  assert.equal(await daemon.exited, 0, daemon.stderr);
  const built = daemon.stderr.indexOf('footprint map built urls=100000');
  assert.ok(built >= 0 && built < daemon.stderr.indexOf('shepherd running'), daemon.stderr);
  assert.equal(daemon.stderr.split('footprint map built').length, 2, 'built once, not again by a cycle');
});

test('shepherd run and gatherer run, two daemons, crawl a site to the end between them', async (t) => {
  const state = scratchDir(t);
  const routes: Record<string, RouteHandler> = {
    '/robots.txt': (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nDisallow: /private\n'),
  };
  const PAGES = 30;
  for (let i = 0; i < PAGES; i++) {
    routes[`/p${i}`] = (_req, res) =>
      res
        .writeHead(200, { 'Content-Type': 'text/html' })
        .end(`<a href="/p${(2 * i + 1) % PAGES}">a</a> <a href="/p${(2 * i + 2) % PAGES}">b</a> <a href="/private/${i}">no</a>`);
  }
  const site = await startFixture({ address: '127.0.0.60', routes });
  t.after(() => site.close());
  const sets = ['--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s', '--set', 'shepherd.cycle_interval=100ms'];
  const inject = await runCli(['inject', '--state', state, '-'], { input: `${site.origin}/p0\n` });
  assert.equal(inject.status, 0, inject.stderr);
  const shepherd = startCli(t, [...sets, 'shepherd', 'run', '--state', state]);
  const gatherer = startCli(t, [...sets, 'gatherer', 'run', '--state', state]);
  const pages = () => site.requests.filter((r) => r.path.startsWith('/p'));
  await until('every page to be fetched', () => pages().length === PAGES, 60_000);
  const live = await runCli(['status', '--state', state, '--json']);
  assert.equal(live.status, 0, live.stderr);
  const running = JSON.parse(live.stdout) as { shepherd: { runningPid: number; total: number }; gatherer: { runningPid: number; hosts: number } };
  assert.equal(running.shepherd.runningPid, shepherd.child.pid);
  assert.equal(running.gatherer.runningPid, gatherer.child.pid);
  assert.equal(running.gatherer.hosts, 1);
  assert.ok(running.shepherd.total >= PAGES);
  for (const daemon of [gatherer, shepherd]) {
    daemon.child.kill('SIGTERM');
    assert.equal(await daemon.exited, 0, daemon.stderr);
  }
  // What the gatherer stored after the shepherd's last cycle is merged by one more.
  const once = await runCli([...sets, 'shepherd', 'run', '--once', '--state', state]);
  assert.equal(once.status, 0, once.stderr);
  assert.equal(new Set(pages().map((r) => r.path)).size, PAGES, 'a page fetched twice');
  assert.ok(!site.requests.some((r) => r.path.startsWith('/private')));
  const stats = urlStats(state);
  assert.equal(stats.urls.ok, PAGES);
  assert.equal(stats.total, 2 * PAGES, 'every page and every /private link known');
  // A /private link is refused by the gatherer (robots.txt) once planned; the last ones may not be yet.
  assert.equal(stats.urls.disallowed + stats.urls.queued + stats.urls.new, PAGES);
  const after = await runCli(['status', '--state', state]);
  assert.equal(after.status, 0, after.stderr);
  assert.match(after.stdout, /^shepherd {2}not running; last cycle .* merged /m);
  assert.match(after.stdout, new RegExp(`^URLs {6}${2 * PAGES} on 1 sites: .*ok ${PAGES}`, 'm'));
  assert.match(after.stdout, /^gatherer {2}not running; 1 hosts/m);
});
