/**
 * The gatherer and takedowns (gatherer/gatherer.ts "Takedowns"): URLs already
 * in its queues when `sherlock takedown add` returns are not requested. A real
 * `sherlock crawl` of two slow loopback sites (each request held a while, so
 * most of their URLs wait queued) is taken down by prefix, URL and site while
 * it runs; the servers' request logs show no request for them after the add
 * returned but the one each host may have had under way at that moment (its
 * check made just before), the shepherd holds them as new again, and once
 * the takedowns are removed a later crawl fetches them. A damaged takedown
 * file never stops the gatherer: its intact lines apply. A URL fetched before
 * and taken down later keeps its copy for the indexer once it is lifted.
 */

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { writePlan } from '../../common/gather/plan-file.js';
import { bucketFilePath } from '../../common/bucket/file.js';
import { TakedownSet, takedownFilePath, takedownLine, type TakedownChange } from '../../common/takedowns.js';
import { scan } from '../../indexer/scan.js';
import { gathererConfig } from '../../gatherer/config.js';
import { CODE } from '../../gatherer/outcome.js';
import { Gatherer } from '../../gatherer/gatherer.js';
import { runCli, startCli, until } from '../helpers/cli.js';
import { storedObjects } from '../helpers/gather-state.js';
import { startFixture, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

const CRAWL_SETS = ['gatherer.allow_private_addresses=true', 'gatherer.min_delay=0s', 'shepherd.scope=any'].flatMap((s) => ['--set', s]);
const PAGES = 20;
const numbered = (prefix: string): string[] => Array.from({ length: PAGES }, (_, i) => `${prefix}${i}`);

test('URLs queued in the gatherer are not requested once a takedown of them is added, and are fetched after it is removed', async (t) => {
  const state = scratchDir(t);
  // Held while the first crawl runs, so URLs wait in the gatherer's queues; answered at once afterwards.
  let holdMs = 300;
  const page: RouteHandler = async (_req, res) => {
    await sleep(holdMs);
    res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html><body>page</body></html>');
  };
  const links = (paths: string[]): RouteHandler => (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<html><body>${paths.map((p) => `<a href="${p}">${p}</a>`).join(' ')}</body></html>`);
  const noRobots: RouteHandler = (_req, res) => res.writeHead(404).end();
  const routesOf = (paths: string[]): Record<string, RouteHandler> => Object.fromEntries(paths.map((p) => [p, page]));
  const a = await startFixture({ address: '127.0.0.216', routes: { '/robots.txt': noRobots, '/': links([...numbered('/p/'), ...numbered('/q/')]), ...routesOf([...numbered('/p/'), ...numbered('/q/')]) } });
  t.after(() => a.close());
  const b = await startFixture({ address: '127.0.0.217', routes: { '/robots.txt': noRobots, '/': links(numbered('/b/')), ...routesOf(numbered('/b/')) } });
  t.after(() => b.close());
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${a.origin}/\n${b.origin}/\n`);
  const requested = (f: Fixture, prefix: string) => f.requests.filter((r) => r.path.startsWith(prefix));
  const takedown = async (...args: string[]): Promise<number> => {
    const run = await runCli(['takedown', ...args, '--state', state]);
    assert.equal(run.status, 0, run.stderr);
    return Date.now();
  };

  const crawl = startCli(t, ['crawl', '--state', state, '--seeds', seeds, '--until-idle', ...CRAWL_SETS]);
  await until('the crawl under way on both sites', () => requested(a, '/p/').length + requested(a, '/q/').length >= 2 && requested(b, '/b/').length >= 2, 60_000);
  const prefixAt = await takedown('add', `${a.origin}/p/`, '--prefix', '--reason', 'court order');
  // A URL not requested yet: it waits queued (or is the one request under way).
  const target = numbered('/q/').find((p) => !a.requests.some((r) => r.path === p));
  assert.ok(target !== undefined, 'every /q/ page was fetched before the takedown: the server does not hold requests long enough');
  const urlAt = await takedown('add', `${a.origin}${target}`, '--reason', 'complaint');
  const siteAt = await takedown('add', '127.0.0.217', '--site', '--reason', 'spam');
  assert.equal(await crawl.exited, 0, crawl.stderr);

  const after = (f: Fixture, at: number, hidden: (path: string) => boolean) => f.requests.filter((r) => r.at > at && hidden(r.path)).map((r) => r.path);
  // One request per host may have been under way as each add returned: checked just before it, arriving just after.
  assert.ok(after(a, prefixAt, (p) => p.startsWith('/p/')).length <= 1, `/p/ requested after its takedown: ${after(a, prefixAt, (p) => p.startsWith('/p/')).join(' ')}`);
  assert.ok(after(a, urlAt, (p) => p.startsWith('/p/') || p === target).length <= 1, `taken-down pages of ${a.origin} requested after the second add`);
  assert.ok(after(b, siteAt, () => true).length <= 1, `${b.origin} requested after its takedown: ${after(b, siteAt, () => true).join(' ')}`);
  const unrequested = (f: Fixture, paths: string[]) => paths.filter((p) => !f.requests.some((r) => r.path === p));
  const waitingP = unrequested(a, numbered('/p/'));
  const waitingB = unrequested(b, numbered('/b/'));
  assert.ok(waitingP.length >= PAGES / 2 && waitingB.length >= PAGES / 2, `too few pages were left queued: /p/ ${waitingP.length}, /b/ ${waitingB.length}`);
  // The gatherer settled them without a request; the shepherd reads that as not fetched: new again.
  const dump = await runCli(['shepherd', 'dump', '--json', '--only', 'new', '--state', state]);
  assert.equal(dump.status, 0, dump.stderr);
  const asNew = new Set(dump.stdout.trim().split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { url: string }).url));
  for (const p of waitingP) assert.ok(asNew.has(`${a.origin}${p}`), `${p} not new after its takedown`);
  for (const p of waitingB) assert.ok(asNew.has(`${b.origin}${p}`), `${p} not new after its takedown`);

  holdMs = 0;
  await takedown('remove', `${a.origin}/p/`, '--prefix');
  await takedown('remove', `${a.origin}${target}`);
  await takedown('remove', '127.0.0.217', '--site');
  const again = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', ...CRAWL_SETS]);
  assert.equal(again.status, 0, again.stderr);
  assert.deepEqual(unrequested(a, [...numbered('/p/'), target]), []);
  assert.deepEqual(unrequested(b, numbered('/b/')), []);
});

test('a damaged takedown file does not stop the gatherer: its intact lines apply, the rest is fetched', async (t) => {
  const state = scratchDir(t);
  const page: RouteHandler = (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html><body>page</body></html>');
  const site = await startFixture({ address: '127.0.0.218', routes: { '/robots.txt': (_req, res) => res.writeHead(404).end(), '*': page } });
  t.after(() => site.close());
  const change = (kind: TakedownChange['kind'], target: string): string => takedownLine({ op: 'add', kind, target, reason: 'test', time: new Date().toISOString() });
  mkdirSync(state, { recursive: true });
  // An intact line, a damaged one (a byte flipped), another intact one, and a tail cut by a crash.
  const flipped = change('url', `${site.origin}/c`).replace('"url"', '"urk"');
  writeFileSync(takedownFilePath(state), `${change('url', `${site.origin}/a`)}${flipped}${change('prefix', `${site.origin}/b/`)}${change('url', `${site.origin}/d`).slice(0, 30)}`);
  writePlan(state, ['/a', '/b/1', '/b/2', '/c', '/d'].map((p, priority) => ({ url: `${site.origin}${p}`, priority })));
  const gatherer = await Gatherer.open(state, gathererConfig.parse({ allow_private_addresses: true, min_delay: '0s', sync_interval: '200ms' }));
  await gatherer.run({ untilIdle: true });
  assert.deepEqual(site.requests.map((r) => r.path).sort(), ['/c', '/d', '/robots.txt']);
  const codes = new Map(storedObjects(state).filter((o) => !o.robots).map((o) => [o.url.slice(site.origin.length), o.code]));
  assert.deepEqual(Object.fromEntries(codes), { '/a': CODE.takenDown, '/b/1': CODE.takenDown, '/b/2': CODE.takenDown, '/c': 0, '/d': 0 });
  assert.equal(gatherer.status().outcomes['taken_down'], 3);
});

test('a page fetched before its takedown keeps its copy: the indexer scan takes 2308 as nothing new', async (t) => {
  const state = scratchDir(t);
  const site = await startFixture({ address: '127.0.0.219', routes: { '/robots.txt': (_req, res) => res.writeHead(404).end(), '/page': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<p>copy</p>') } });
  t.after(() => site.close());
  const url = `${site.origin}/page`;
  const cfg = gathererConfig.parse({ allow_private_addresses: true, min_delay: '0s', sync_interval: '200ms' });
  const gatherOnce = async () => {
    writePlan(state, [{ url, priority: 0 }]);
    await (await Gatherer.open(state, cfg)).run({ untilIdle: true });
  };
  await gatherOnce();
  writeFileSync(takedownFilePath(state), takedownLine({ op: 'add', kind: 'url', target: url, reason: 'test', time: new Date().toISOString() }));
  await gatherOnce();
  assert.deepEqual(site.requests.map((r) => r.path), ['/robots.txt', '/page']);
  const pages = storedObjects(state).filter((o) => !o.robots);
  assert.deepEqual(pages.map((o) => o.code), [0, CODE.takenDown]);
  // The takedown lifted: the newest bucket says nothing new, so the copy fetched before is the card.
  const attributes = scan(bucketFilePath(state), join(state, 'attributes'), TakedownSet.EMPTY);
  assert.deepEqual([...attributes.oids], [pages[0]!.oid]);
});
