/**
 * Site rules in the gatherer against real servers on 127.0.0.221–223: a
 * rule's delay as the servers' arrival times show it (slower, and faster
 * than min_delay, never faster than Crawl-delay), its robots_disallow paths
 * never requested, and rules taken on reload.
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
