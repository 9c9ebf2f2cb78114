/**
 * `sherlock crawl` end to end on a generated site of three loopback hosts
 * (3,000 pages): every page reachable from the seeds is fetched exactly once,
 * robots.txt is obeyed, links to other hosts stay out of scope, and the crawl
 * stops by itself.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { startFixture, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { cliPath, scratchDir } from '../helpers/paths.js';

const PAGES = 1000;

/** Page i links to 2i+1 and 2i+2 (a binary tree), to a disallowed page, and to the next host's page i. */
function site(next: () => string): Record<string, RouteHandler> {
  const routes: Record<string, RouteHandler> = {
    '/robots.txt': (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nDisallow: /private\n'),
  };
  for (let i = 0; i < PAGES; i++) {
    routes[`/p${i}`] = (_req, res) => {
      const links = [2 * i + 1, 2 * i + 2].filter((j) => j < PAGES).map((j) => `<a href="/p${j}">page ${j}</a>`);
      res
        .writeHead(200, { 'Content-Type': 'text/html' })
        .end(`<title>page ${i}</title>${links.join(' ')} <a href="/private/x">secret</a> <a href="${next()}/p${i}">elsewhere</a> <a href="/p${i}#top">self</a>`);
    };
  }
  routes['/private/x'] = (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('secret');
  return routes;
}

test('sherlock crawl finds every reachable page exactly once, obeys robots.txt and scope, and stops by itself', async (t) => {
  const state = scratchDir(t);
  const fixtures: Fixture[] = [];
  const outside = await startFixture({ address: '127.0.0.53', routes: {} });
  t.after(() => outside.close());
  for (const address of ['127.0.0.50', '127.0.0.51', '127.0.0.52']) {
    const fixture = await startFixture({ address, routes: site(() => outside.origin) });
    t.after(() => fixture.close());
    fixtures.push(fixture);
  }
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `# one seed per host\n${fixtures.map((f) => `${f.origin}/p0`).join('\n')}\n`);
  const child = spawn(
    process.execPath,
    [cliPath, 'crawl', '--state', state, '--seeds', seeds, '--until-idle', '--json', '--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0, stderr);

  for (const f of fixtures) {
    const paths = f.requests.map((r) => r.path);
    const pages = paths.filter((p) => p.startsWith('/p'));
    assert.equal(pages.length, PAGES, `${f.address}: ${pages.length} page requests`);
    assert.equal(new Set(pages).size, PAGES, `${f.address}: a page fetched twice`);
    assert.ok(!paths.some((p) => p.startsWith('/private')), `${f.address}: a disallowed path was requested`);
  }
  assert.equal(outside.requests.length, 0, 'a host outside the seeds was crawled');
  const summary = JSON.parse(stdout) as { fetched: number; outcomes: Record<string, number> };
  assert.equal(summary.outcomes['ok'], 3 * PAGES);
  assert.equal(summary.outcomes['robots_denied'], 3);
});
