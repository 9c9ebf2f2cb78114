/**
 * Site rules in the gatherer against real servers on 127.0.0.221–224 and
 * 127.0.0.206–209: a rule's delay as the servers' arrival times show it
 * (slower, and faster than min_delay, never faster than Crawl-delay), its
 * connections as the servers' overlapping slow responses show them (up to
 * the rule's, never above, none without a rule or under Crawl-delay; robots.txt
 * once per expiry and alone), its
 * robots_disallow paths never requested, and rules taken on reload.
 */

import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { test } from 'node:test';
import { writePlan } from '../../common/gather/plan-file.js';
import { SiteRules } from '../../common/site-rules.js';
import { gathererConfig, type GathererConfig } from '../../gatherer/config.js';
import { Gatherer } from '../../gatherer/gatherer.js';
import { storedObjects } from '../helpers/gather-state.js';
import { startFixture, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

function config(overrides: Record<string, unknown> = {}): GathererConfig {
  return gathererConfig.parse({ allow_private_addresses: true, sync_interval: '200ms', ...overrides });
}

const page: RouteHandler = (req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<title>${req.url}</title><p>text`);

async function site(t: test.TestContext, address: string, robots?: string): Promise<Fixture> {
  const routes: Record<string, RouteHandler> = { '*': page };
  if (robots !== undefined) routes['/robots.txt'] = (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end(robots);
  const fixture = await startFixture({ address, routes });
  t.after(() => fixture.close());
  return fixture;
}

function gaps(fixture: Fixture): number[] {
  const at = fixture.requests.map((r) => r.at);
  return at.slice(1).map((time, i) => time - at[i]!);
}

test('a rule delay slows one host, lets another go faster than min_delay, and never beats Crawl-delay', async (t) => {
  const state = scratchDir(t);
  const slow = await site(t, '127.0.0.221');
  const fast = await site(t, '127.0.0.222');
  const polite = await site(t, '127.0.0.223', 'User-agent: *\nCrawl-delay: 1\n');
  const rules = SiteRules.fromTexts([
    { file: 'rules.toml', text: '[[site]]\nhost = "127.0.0.221"\ndelay = "600ms"\n\n[[site]]\nregex = "^http://127\\\\.0\\\\.0\\\\.22[23]:"\ndelay = "0s"\n' },
  ]);
  const pages = (f: Fixture, n: number) => [...Array(n).keys()].map((i) => ({ url: `${f.origin}/p/${i}`, priority: i }));
  writePlan(state, [...pages(slow, 3), ...pages(fast, 4), ...pages(polite, 2)]);
  const g = await Gatherer.open(state, config({ min_delay: '250ms' }), undefined, rules);
  await g.run({ untilIdle: true });

  assert.equal(slow.requests.length, 4);
  for (const gap of gaps(slow)) assert.ok(gap >= 600, `127.0.0.221: ${gap} ms between requests, the rule says 600`);
  assert.equal(fast.requests.length, 5);
  const span = fast.requests.at(-1)!.at - fast.requests[0]!.at;
  assert.ok(span < 500, `127.0.0.222: five requests took ${span} ms; min_delay alone would need 1000`);
  assert.equal(polite.requests.length, 3);
  for (const gap of gaps(polite)) assert.ok(gap >= 1000, `127.0.0.223: ${gap} ms between requests, Crawl-delay says 1000`);
});

/** A server answering every page after `ms` (or `ms(path)`), counting the requests it has at once; robots.txt at once. */
async function slowSite(t: test.TestContext, address: string, ms: number | ((path: string) => number), robots?: string): Promise<Fixture & { most: () => number }> {
  let now = 0;
  let most = 0;
  const slow: RouteHandler = async (req, res) => {
    most = Math.max(most, ++now);
    await new Promise((resolve) => setTimeout(resolve, typeof ms === 'number' ? ms : ms(req.url ?? '')));
    now -= 1;
    page(req, res);
  };
  const routes: Record<string, RouteHandler> = { '*': slow };
  if (robots !== undefined) routes['/robots.txt'] = (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end(robots);
  const fixture = await startFixture({ address, routes });
  t.after(() => fixture.close());
  return Object.assign(fixture, { most: () => most });
}

const slowPages = (f: Fixture, n: number) => [...Array(n).keys()].map((i) => ({ url: `${f.origin}/p/${i}`, priority: i }));

test('a rule connections = 3 lets three requests at once reach its address and never four; no rule, connections = 1 and Crawl-delay keep one', async (t) => {
  const state = scratchDir(t);
  const wide = await slowSite(t, '127.0.0.206', 300);
  const plain = await slowSite(t, '127.0.0.207', 300);
  const one = await slowSite(t, '127.0.0.208', 300);
  const paced = await slowSite(t, '127.0.0.209', 100, 'User-agent: *\nCrawl-delay: 0.2\n');
  const rules = SiteRules.fromTexts([
    {
      file: 'rules.toml',
      text: '[[site]]\nhost = "127.0.0.206"\nconnections = 3\ndelay = "0s"\n\n[[site]]\nhost = "127.0.0.208"\nconnections = 1\n\n[[site]]\nhost = "127.0.0.209"\nconnections = 3\n',
    },
  ]);
  writePlan(state, [...slowPages(wide, 9), ...slowPages(plain, 4), ...slowPages(one, 4), ...slowPages(paced, 4)]);
  const g = await Gatherer.open(state, config({ min_delay: '0s' }), undefined, rules);
  const started = Date.now();
  await g.run({ untilIdle: true });

  assert.equal(wide.requests.length, 10);
  assert.equal(wide.most(), 3, '127.0.0.206: the rule allows three at once');
  const pages = wide.requests.filter((r) => r.path !== '/robots.txt');
  const span = pages.at(-1)!.at - pages[0]!.at;
  assert.ok(span < 1500, `127.0.0.206: nine 300 ms pages began over ${span} ms; one at a time needs 2400`);
  for (const server of [plain, one, paced]) {
    assert.equal(server.requests.length, 5, server.origin);
    assert.equal(server.most(), 1, `${server.origin}: never two requests at once`);
  }
  for (const gap of gaps(paced)) assert.ok(gap >= 200, `127.0.0.209: ${gap} ms between requests, Crawl-delay says 200`);
  assert.ok(Date.now() - started < 10_000);
});

/** A server whose robots.txt and pages both answer after `ms`, recording when each request was being answered. */
async function timedSite(t: test.TestContext, address: string, ms: number): Promise<Fixture & { spans: { path: string; from: number; to: number }[] }> {
  const spans: { path: string; from: number; to: number }[] = [];
  const slow =
    (answer: RouteHandler): RouteHandler =>
    async (req, res) => {
      const from = Date.now();
      await new Promise((resolve) => setTimeout(resolve, ms));
      spans.push({ path: req.url ?? '', from, to: Date.now() });
      answer(req, res);
    };
  const robots: RouteHandler = (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nDisallow: /never\n');
  const fixture = await startFixture({ address, routes: { '/robots.txt': slow(robots), '*': slow(page) } });
  t.after(() => fixture.close());
  return Object.assign(fixture, { spans });
}

/** Each robots.txt request against the page requests: none being answered while it is. */
function assertRobotsAlone(spans: { path: string; from: number; to: number }[], origin: string): void {
  for (const robots of spans.filter((s) => s.path === '/robots.txt')) {
    for (const other of spans.filter((s) => s !== robots)) {
      assert.ok(other.to <= robots.from || other.from >= robots.to, `${origin}: ${other.path} (${other.from}–${other.to}) overlaps robots.txt (${robots.from}–${robots.to})`);
    }
  }
}

test('a host with connections = 4 on a fresh crawl requests robots.txt once, alone, before its pages', async (t) => {
  const state = scratchDir(t);
  const server = await timedSite(t, '127.0.0.208', 300);
  const rules = SiteRules.fromTexts([{ file: 'wide.toml', text: '[[site]]\nhost = "127.0.0.208"\nconnections = 4\ndelay = "0s"\n' }]);
  writePlan(state, slowPages(server, 8));
  const g = await Gatherer.open(state, config({ min_delay: '0s' }), undefined, rules);
  await g.run({ untilIdle: true });

  const paths = server.requests.map((r) => r.path);
  assert.equal(paths.filter((p) => p === '/robots.txt').length, 1, `one robots.txt request: ${paths.join(' ')}`);
  assert.equal(paths[0], '/robots.txt', 'robots.txt before any page');
  assert.equal(paths.length, 9);
  assertRobotsAlone(server.spans, server.origin);
  const most = Math.max(...server.spans.map((a) => server.spans.filter((b) => b.from < a.to && b.to > a.from).length));
  assert.equal(most, 4, 'the pages then go four at once');
});

test('a robots.txt expiring while four requests of the host are out is requested once per expiry, alone', async (t) => {
  const state = scratchDir(t);
  const server = await timedSite(t, '127.0.0.209', 250);
  const rules = SiteRules.fromTexts([{ file: 'wide.toml', text: '[[site]]\nhost = "127.0.0.209"\nconnections = 4\ndelay = "0s"\n' }]);
  writePlan(state, slowPages(server, 24));
  const g = await Gatherer.open(state, config({ min_delay: '0s', robots_expire: '1s' }), undefined, rules);
  const started = Date.now();
  await g.run({ untilIdle: true });
  const took = Date.now() - started;

  const robots = server.spans.filter((s) => s.path === '/robots.txt');
  assert.equal(server.spans.length - robots.length, 24);
  assert.ok(robots.length >= 2, 'robots.txt expired during the crawl');
  // Each fetch reads it for a second from its end: no more fetches than whole seconds the crawl took, plus the first.
  assert.ok(robots.length <= Math.ceil(took / 1000) + 1, `${robots.length} robots.txt requests in ${took} ms`);
  for (const [i, fetch] of robots.entries()) if (i > 0) assert.ok(fetch.from - robots[i - 1]!.to >= 900, `robots.txt asked again ${fetch.from - robots[i - 1]!.to} ms after it was read`);
  assertRobotsAlone(server.spans, server.origin);
});

test('requests of one host that end out of order are stored in queue order', async (t) => {
  const state = scratchDir(t);
  const server = await slowSite(t, '127.0.0.207', (path) => (path === '/p/0' ? 700 : path === '/p/1' ? 400 : 50));
  const rules = SiteRules.fromTexts([{ file: 'wide.toml', text: '[[site]]\nhost = "127.0.0.207"\nconnections = 3\ndelay = "0s"\n' }]);
  writePlan(state, slowPages(server, 6));
  const g = await Gatherer.open(state, config({ min_delay: '0s' }), undefined, rules);
  await g.run({ untilIdle: true });
  assert.equal(server.most(), 3);
  const stored = storedObjects(state).filter((o) => o.url.includes('/p/'));
  assert.deepEqual(stored.map((o) => o.url).sort(), slowPages(server, 6).map((p) => p.url).sort());
  assert.ok(stored.every((o) => o.code === 0 && o.arc !== undefined), 'every page stored as fetched, none with an error');
  assert.equal(g.status().queued, 0, 'every entry marked done');
});

test('reload during a run changes connections for the next requests', async (t) => {
  const state = scratchDir(t);
  const server = await slowSite(t, '127.0.0.206', 200);
  const wide = SiteRules.fromTexts([{ file: 'wide.toml', text: '[[site]]\ndomain = "127.0.0.206"\nconnections = 4\n' }]);
  writePlan(state, slowPages(server, 12));
  const g = await Gatherer.open(state, config({ min_delay: '0s' }));
  const run = g.run({ untilIdle: true });
  while (server.requests.length < 4) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(server.most(), 1, 'no rule yet: one at a time');
  g.reload(config({ min_delay: '0s' }), wide);
  await run;
  assert.equal(server.requests.length, 13);
  assert.equal(server.most(), 4, 'after the reload: four at once');
});

test('robots_disallow paths are never requested and are stored as robots-denied naming the rule; reload brings new rules', async (t) => {
  const state = scratchDir(t);
  const server = await site(t, '127.0.0.224', 'User-agent: *\nDisallow: /secret\n');
  const rules = SiteRules.fromTexts([{ file: 'strict.toml', text: '\n[[site]]\ndomain = "127.0.0.224"\nrobots_disallow = ["/drafts/", "/tmp"]\n' }]);
  writePlan(state, ['/a', '/drafts/x', '/tmpfile', '/secret/y', '/b'].map((path) => ({ url: `${server.origin}${path}`, priority: 1 })));
  const g = await Gatherer.open(state, config({ min_delay: '0s' }), undefined, rules);
  await g.run({ untilIdle: true });

  assert.deepEqual(server.requests.map((r) => r.path), ['/robots.txt', '/a', '/b']);
  const stored = new Map(storedObjects(state).map((o) => [o.url, o]));
  for (const path of ['/drafts/x', '/tmpfile']) {
    const o = stored.get(`${server.origin}${path}`)!;
    assert.equal(o.code, 2304, path);
    assert.equal(o.arc, undefined, `${path}: nothing fetched, nothing archived`);
    assert.match(o.bucket.header.string('!') ?? '', /site rule strict\.toml:2 \(robots_disallow \/(drafts\/|tmp)\)/);
  }
  assert.equal(stored.get(`${server.origin}/secret/y`)?.code, 2304, 'robots.txt itself still holds');

  // The same gatherer state reopened without rules, then given them by reload().
  const reopened = await Gatherer.open(state, config({ min_delay: '0s' }));
  reopened.reload(config({ min_delay: '0s' }), SiteRules.fromTexts([{ file: 'later.toml', text: '[[site]]\nhost = "127.0.0.224"\nrobots_disallow = ["/c"]\n' }]));
  writePlan(state, ['/c', '/d'].map((path) => ({ url: `${server.origin}${path}`, priority: 1 })));
  await reopened.run({ untilIdle: true });
  assert.deepEqual(server.requests.map((r) => r.path).slice(3), ['/d']);
});
