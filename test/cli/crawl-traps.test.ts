/**
 * Crawler traps, end to end through `sherlock crawl --until-idle`: each site
 * below offers endless URLs, and the crawl must stop by itself within the
 * budgets of [shepherd]:
 *  - a calendar, /cal?d=N linking to d=N+1 and d=N−1 forever: bounded by
 *    max_depth (one hop a day), and on a second host with a deep max_depth by
 *    max_urls_per_site;
 *  - session IDs: every link carries a fresh `;jsessionid=` and `?sid=`, which
 *    normalising strips, so each real page is fetched once; and an ASP.NET
 *    style `/(S(id))/` path segment, which nothing strips, capped by the site
 *    budget.
 */

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { startFixture, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

const html = (res: ServerResponse, body: string) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(body);

const calendar: RouteHandler = (req: IncomingMessage, res: ServerResponse) => {
  const day = Number(new URL(req.url!, 'http://x').searchParams.get('d') ?? 0);
  html(res, `<title>day ${day}</title><a href="/cal?d=${day + 1}">next</a> <a href="/cal?d=${day - 1}">previous</a>`);
};

const session = () => randomBytes(8).toString('hex');
const PAGES = 8;

/** Eight real pages; every link carries a new session ID, in the path parameters and in the query. */
function sessionSite(): Record<string, RouteHandler> {
  const routes: Record<string, RouteHandler> = {};
  for (let i = 0; i < PAGES; i++) {
    routes[`/page${i}`] = (_req, res) =>
      html(res, [...Array(PAGES).keys()].map((j) => `<a href="/page${j};jsessionid=${session()}?sid=${session()}&lang=en">${j}</a>`).join(' '));
  }
  return routes;
}

/** ASP.NET cookieless sessions: the ID is a path segment of every link. */
const aspSite: RouteHandler = (_req, res) => html(res, `<a href="/(S(${session()}))/home">home</a> <a href="/(S(${session()}))/news">news</a>`);

async function crawl(t: TestContext, seeds: string[], sets: string[]): Promise<{ summary: { fetched: number } }> {
  const state = scratchDir(t);
  const file = join(state, 'seeds.txt');
  writeFileSync(file, seeds.join('\n') + '\n');
  const run = await runCli(['crawl', '--state', state, '--seeds', file, '--until-idle', '--json', '--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s', ...sets.flatMap((s) => ['--set', s])]);
  assert.equal(run.status, 0, run.stderr);
  return { summary: JSON.parse(run.stdout) as { fetched: number } };
}

async function host(t: TestContext, address: string, routes: Record<string, RouteHandler>): Promise<Fixture> {
  const fixture = await startFixture({ address, routes });
  t.after(() => fixture.close());
  return fixture;
}

const pageRequests = (f: Fixture) => f.requests.filter((r) => r.path !== '/robots.txt');

test('a calendar trap stops at max_depth, and at max_urls_per_site when the depth allows more', async (t) => {
  const shallow = await host(t, '127.0.0.70', { '/cal': calendar });
  await crawl(t, [`${shallow.origin}/cal?d=0`], ['shepherd.max_depth=10']);
  const days = pageRequests(shallow).map((r) => Number(new URL(r.path, 'http://x').searchParams.get('d')));
  // From d=0, ten hops reach d=−10 … d=10: 21 days, each once.
  assert.deepEqual(
    [...days].sort((a, b) => a - b),
    [...Array(21).keys()].map((i) => i - 10),
  );

  const deep = await host(t, '127.0.0.71', { '/cal': calendar });
  await crawl(t, [`${deep.origin}/cal?d=0`], ['shepherd.max_depth=1000', 'shepherd.max_urls_per_site=40']);
  const fetched = pageRequests(deep);
  assert.equal(fetched.length, 40, 'the site budget caps the URLs known, so the URLs fetched');
  assert.equal(new Set(fetched.map((r) => r.path)).size, 40);
});

test('session IDs: stripped ones collapse to the real pages, path-segment ones are capped by the site budget', async (t) => {
  const stripped = await host(t, '127.0.0.72', sessionSite());
  const asp = await host(t, '127.0.0.73', { '*': aspSite });
  const { summary } = await crawl(t, [`${stripped.origin}/page0`, `${asp.origin}/`], ['shepherd.max_urls_per_site=25', 'shepherd.max_depth=1000']);
  const paths = pageRequests(stripped).map((r) => r.path);
  assert.deepEqual(
    [...paths].sort(),
    ['/page0', ...[...Array(PAGES).keys()].map((i) => `/page${i}?lang=en`)].sort(),
    'the seed and each page its links name, once each, without session parameters',
  );
  // Every /(S(id))/… URL is new; 25 per site are remembered (the seed among them), and each fetched once.
  const aspPaths = pageRequests(asp).map((r) => r.path);
  assert.equal(aspPaths.length, 25);
  assert.equal(new Set(aspPaths).size, 25);
  assert.equal(summary.fetched, PAGES + 1 + 25);
});
