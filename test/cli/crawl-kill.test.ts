/**
 * `sherlock crawl` killed with SIGKILL at random moments and run again, four
 * times, then to the end, must leave the same URL database as one
 * uninterrupted crawl of the same site: the same URLs, each in the same
 * state, at the same depth, with the same HTTP status, checksum and redirect
 * target. Pages may be fetched twice across a kill (a fetch in flight is
 * lost with the process); none may be missed.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { readUrls } from '../../shepherd/status.js';
import { runCli, startCli } from '../helpers/cli.js';
import { startFixture, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

const PAGES = 150;

/** A binary tree of pages with a 404 and a redirect hanging off it, and links back to the root. */
function site(): Record<string, RouteHandler> {
  const routes: Record<string, RouteHandler> = {
    '/robots.txt': (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nDisallow: /private\n'),
    '/moved': (_req, res) => res.writeHead(301, { Location: '/p1' }).end(),
  };
  for (let i = 0; i < PAGES; i++) {
    routes[`/p${i}`] = (_req, res) => {
      const children = [2 * i + 1, 2 * i + 2].filter((j) => j < PAGES).map((j) => `<a href="/p${j}">${j}</a>`);
      const extra = i % 10 === 0 ? `<a href="/missing${i}">x</a> <a href="/moved">m</a> <a href="/private/${i}">p</a>` : '';
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<title>${i}</title>${children.join(' ')} <a href="/p0">home</a> ${extra}`);
    };
  }
  return routes;
}

const SETS = ['gatherer.allow_private_addresses=true', 'gatherer.min_delay=0s'].flatMap((s) => ['--set', s]);

function args(state: string, seeds: string): string[] {
  return ['crawl', '--state', state, '--seeds', seeds, '--until-idle', ...SETS];
}

/** The URL database as the comparison sees it: what a crawl decided, not when. */
function table(state: string): string[] {
  return [...readUrls(state)].map((r) => [r.url.replace(/^http:\/\/[^/]+/, ''), r.state, r.depth, r.status, r.checksum, r.redirect?.replace(/^http:\/\/[^/]+/, '')].join(' '));
}

async function hosts(t: TestContext): Promise<Fixture[]> {
  const out: Fixture[] = [];
  for (const address of ['127.0.0.80', '127.0.0.81']) {
    const fixture = await startFixture({ address, routes: site() });
    t.after(() => fixture.close());
    out.push(fixture);
  }
  return out;
}

function seedsFile(dir: string, fixtures: readonly Fixture[]): string {
  const file = join(dir, 'seeds.txt');
  writeFileSync(file, fixtures.map((f) => `${f.origin}/p0\n`).join(''));
  return file;
}

test('a crawl killed at random moments and run again converges to the database of an uninterrupted crawl', async (t) => {
  const reference = scratchDir(t);
  const whole = await runCli(args(reference, seedsFile(reference, await hosts(t))));
  assert.equal(whole.status, 0, whole.stderr);
  const expected = table(reference);
  assert.equal(expected.filter((row) => / ok /.test(row)).length, 2 * PAGES, 'the reference crawl fetched every page');

  const state = scratchDir(t);
  const fixtures = await hosts(t);
  const seeds = seedsFile(state, fixtures);
  const pages = () => fixtures.reduce((n, f) => n + f.requests.filter((r) => r.path.startsWith('/p')).length, 0);
  // Kill after 1, 10%, 35% and 60% of the pages (at least one more page each time), at a random moment in between.
  for (const share of [0, 0.1, 0.35, 0.6]) {
    const target = Math.max(pages() + 1, Math.floor(2 * PAGES * share));
    const crawl = startCli(t, args(state, seeds));
    const deadline = Date.now() + 30_000;
    while (pages() < target && crawl.child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 40)));
    crawl.child.kill('SIGKILL');
    await crawl.exited;
  }
  assert.ok(pages() < 2 * PAGES + 10, 'the kills came before the end');
  const last = await runCli(args(state, seeds));
  assert.equal(last.status, 0, last.stderr);
  assert.deepEqual(table(state), expected);
  for (const f of fixtures) {
    const fetched = new Set(f.requests.map((r) => r.path).filter((p) => p.startsWith('/p')));
    assert.equal(fetched.size, PAGES, `${f.origin}: every page fetched`);
  }
});
