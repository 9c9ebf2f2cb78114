/**
 * The SSRF guard: with allow_private_addresses false the gatherer connects to
 * no loopback, private, link-local or reserved address, however the URL
 * spells it (names whose DNS answer points inside, hex and integer IPv4,
 * IPv4-mapped IPv6), nor where a robots.txt redirect or a page's redirect
 * leads. One loopback address is let in through allow_networks to play the
 * public site; the "inside" servers record every request, and must see none.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { writePlan } from '../../common/gather/plan-file.js';
import { canonicalUrl } from '../../common/url.js';
import { gathererConfig } from '../../gatherer/config.js';
import { Gatherer } from '../../gatherer/gatherer.js';
import { runCli } from '../helpers/cli.js';
import { storedObjects } from '../helpers/gather-state.js';
import { startFixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

const page = (body: string): RouteHandler => (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(body);

test('private, loopback and link-local targets are refused 2102 without a connection, however spelt, and after a robots.txt redirect', async (t) => {
  const state = scratchDir(t);
  const inside = await startFixture({ address: '127.0.0.141', routes: { '*': page('<title>inside</title>') } });
  const port = inside.port;
  const outside = await startFixture({
    address: '127.0.0.140',
    routes: {
      '/robots.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nAllow: /\n'),
      '/go': (_req, res) => res.writeHead(302, { Location: `${inside.origin}/secret` }).end(),
      '/fine': page('<title>public page</title>'),
    },
  });
  // A second public host whose robots.txt redirects inside (RFC 9309 asks to follow robots redirects).
  const sneaky = await startFixture({
    address: '127.0.0.142',
    routes: {
      '/robots.txt': (_req, res) => res.writeHead(301, { Location: `${inside.origin}/robots.txt` }).end(),
      '/page': page('<title>never fetched</title>'),
    },
  });
  t.after(() => Promise.all([inside.close(), outside.close(), sneaky.close()]));

  // Plans hold canonical URLs: 0x7f.0.0.1 and 2130706433 become 127.0.0.1, ::ffff:127.0.0.141 becomes ::ffff:7f00:8d.
  const refused = [
    `${inside.origin}/direct`,
    `http://localhost:${port}/name-resolving-to-loopback`,
    `http://0x7f.0.0.1:${port}/hex`,
    `http://2130706433:${port}/integer`,
    `http://[::1]:${port}/ipv6-loopback`,
    `http://[::ffff:127.0.0.141]:${port}/ipv4-mapped`,
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://172.16.0.1/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[fe80::1]/',
    'http://[fd00::1]/',
  ].map((url) => canonicalUrl(url));
  writePlan(state, [...refused, `${outside.origin}/go`, `${outside.origin}/fine`, `${sneaky.origin}/page`].map((url) => ({ url, priority: 1 })));
  const config = gathererConfig.parse({ allow_networks: ['127.0.0.140', '127.0.0.142/32'], min_delay: '0s', sync_interval: '200ms', max_retries: 0 });
  const g = await Gatherer.open(state, config);
  await g.run({ untilIdle: true });

  assert.deepEqual(inside.requests, [], 'a request reached the inside server');
  const objects = storedObjects(state);
  const pages = objects.filter((o) => !o.robots);
  const refusedStored = pages.filter((o) => o.code === 2102);
  assert.equal(refusedStored.length, refused.length, `refused: ${JSON.stringify(pages.map((o) => [o.url, o.code]))}`);
  for (const o of refusedStored) assert.match(o.bucket.header.string('!')!, /private or reserved/);
  assert.equal(pages.find((o) => o.url === `${outside.origin}/fine`)?.code, 0, 'the allowed network is fetched');
  const go = pages.find((o) => o.url === `${outside.origin}/go`)!;
  assert.equal(go.code, 1, 'a redirect is recorded, not followed');
  assert.equal(go.bucket.body.string('Y'), `${inside.origin}/secret`);
  // The robots.txt redirect inside is refused: recorded 2102, and the host fetches nothing while its robots.txt is unreachable.
  // Its bucket is stored under the URL last asked for, the redirect's target.
  const robots = objects.filter((o) => o.robots).map((o) => [o.url, o.code]);
  assert.deepEqual(robots.filter(([url]) => url === `${inside.origin}/robots.txt`), [[`${inside.origin}/robots.txt`, 2102]], JSON.stringify(robots));
  assert.deepEqual(sneaky.requests.map((r) => r.path), ['/robots.txt']);
});

test('a crawl follows links and redirects from an allowed network but never into a private one', async (t) => {
  const state = scratchDir(t);
  const inside = await startFixture({ address: '127.0.0.144', routes: { '*': page('<title>inside</title>') } });
  const outside = await startFixture({
    address: '127.0.0.143',
    routes: {
      '/': page(`<title>home</title><a href="/moved">moved</a> <a href="/next">next</a> <a href="${inside.origin}/admin">admin</a> <a href="http://localhost:${inside.port}/x">local</a>`),
      '/moved': (_req, res) => res.writeHead(301, { Location: `${inside.origin}/moved-inside` }).end(),
      '/next': page('<title>next</title>'),
    },
  });
  t.after(() => Promise.all([inside.close(), outside.close()]));
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${outside.origin}/\n`);
  const sets = ['gatherer.allow_networks=127.0.0.143', 'gatherer.min_delay=0s', 'gatherer.max_retries=0', 'shepherd.scope=any'];
  const run = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--json', ...sets.flatMap((s) => ['--set', s])]);
  assert.equal(run.status, 0, run.stderr);
  const summary = JSON.parse(run.stdout) as { fetched: number; outcomes: Record<string, number> };
  assert.deepEqual(inside.requests, [], 'the crawl reached the inside server');
  assert.deepEqual(outside.requests.map((r) => r.path).sort(), ['/', '/moved', '/next', '/robots.txt']);
  const codes = new Map(storedObjects(state).filter((o) => !o.robots).map((o) => [o.url, o.code]));
  for (const url of [`${inside.origin}/admin`, `${inside.origin}/moved-inside`, `http://localhost:${inside.port}/x`]) {
    assert.equal(codes.get(url), 2102, `${url}: ${codes.get(url)}; all: ${JSON.stringify([...codes])}`);
  }
  assert.equal(summary.outcomes['permanent'], 3, JSON.stringify(summary));
});

test('allow_networks takes addresses and networks, IPv4 and IPv6, and refuses anything else naming the entry', () => {
  assert.deepEqual(gathererConfig.parse({ allow_networks: ['10.1.2.0/24', '192.168.7.7', 'fd00::/8'] }).allow_networks, ['10.1.2.0/24', '192.168.7.7', 'fd00::/8']);
  for (const bad of ['intranet', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/8/8', '10.0.0.0/']) {
    const result = gathererConfig.safeParse({ allow_networks: [bad] });
    assert.equal(result.success, false, bad);
    assert.deepEqual(result.error!.issues[0]!.path, ['allow_networks', 0]);
  }
});
