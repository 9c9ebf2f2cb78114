/**
 * Hostile sites that offer endless URLs, crawled end to end by `sherlock
 * crawl --until-idle` beside a well-behaved site: a redirect loop, an endless
 * redirect chain, a relative-link loop (/a/a/a/…), and endless facet
 * combinations. The crawl must end by itself within the [shepherd] budgets,
 * the good site must be crawled in full, and the crawling process's peak
 * memory stays bounded (its maxRSS, printed at exit by a preloaded module).
 * test/cli/crawl-traps.test.ts has the calendar and session-ID traps.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { storedObjects } from '../helpers/gather-state.js';
import { startFixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { MiB } from '../helpers/memory.js';
import { scratchDir } from '../helpers/paths.js';

const html = (res: ServerResponse, body: string) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(body);
const MAX_DEPTH = 8;

/** Preloaded into the child: its peak resident set at exit, in KiB, on stderr. */
const REPORT_RSS = `data:text/javascript,process.on('exit',()=>process.stderr.write('maxrss_kib='+process.resourceUsage().maxRSS+'\\n'))`;

test('redirect loops, endless redirects, relative-link loops and facet explosions end within the shepherd budgets while a good site is crawled in full', async (t) => {
  const state = scratchDir(t);
  const trap = await startFixture({
    address: '127.0.0.150',
    routes: {
      '/': (_req, res) => html(res, '<a href="/loop/a">loop</a> <a href="/chain/0">chain</a> <a href="/dir/">dir</a> <a href="/facet?f0=1">facets</a>'),
      '/loop/a': (_req, res) => res.writeHead(302, { Location: '/loop/b' }).end(),
      '/loop/b': (_req, res) => res.writeHead(302, { Location: '/loop/a' }).end(),
      '/facet': (req, res) => {
        const query = new URL(req.url!, 'http://x').search.slice(1);
        const n = query.split('&').length;
        html(res, `<a href="/facet?${query}&f${n}=1">narrow</a> <a href="/facet?${query}&g${n}=2">other</a>`);
      },
      '*': ((req, res) => {
        const path = req.url!;
        const chain = /^\/chain\/(\d+)$/.exec(path);
        if (chain !== null) return res.writeHead(301, { Location: `/chain/${Number(chain[1]) + 1}` }).end();
        if (path.startsWith('/dir/')) return html(res, '<a href="dir/">deeper</a>'); // /dir/ → /dir/dir/ → …
        return res.writeHead(404).end();
      }) satisfies RouteHandler,
    },
  });
  const goodPages = 12;
  const good = await startFixture({
    address: '127.0.0.151',
    routes: Object.fromEntries(
      [...Array(goodPages).keys()].map((i) => [`/p${i}`, ((_req, res) => html(res, `<title>good ${i}</title>${[...Array(goodPages).keys()].map((j) => `<a href="/p${j}">${j}</a>`).join(' ')}`)) satisfies RouteHandler]),
    ),
  });
  t.after(() => Promise.all([trap.close(), good.close()]));
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${trap.origin}/\n${good.origin}/p0\n`);
  const sets = ['gatherer.allow_private_addresses=true', 'gatherer.min_delay=0s', `shepherd.max_depth=${MAX_DEPTH}`, 'shepherd.max_query_params=6'];
  const run = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--json', ...sets.flatMap((s) => ['--set', s])], {
    env: { NODE_OPTIONS: `--import=${REPORT_RSS}` },
  });
  assert.equal(run.status, 0, run.stderr);
  const maxRss = Number(/maxrss_kib=(\d+)/.exec(run.stderr)![1]) * 1024;
  const summary = JSON.parse(run.stdout) as { seconds: number; fetched: number };
  t.diagnostic(`trap crawl: ${summary.fetched} fetches in ${summary.seconds} s, ${trap.requests.length} requests to the trap host; crawler peak RSS ${(maxRss / MiB).toFixed(0)} MiB`);

  const paths = trap.requests.map((r) => r.path);
  const count = (pattern: RegExp): number => paths.filter((p) => pattern.test(p)).length;
  t.diagnostic(`trap requests: loop ${count(/^\/loop\//)}, chain ${count(/^\/chain\//)}, dir ${count(/^\/dir\//)}, facet ${count(/^\/facet/)}`);
  assert.equal(count(/^\/loop\/a$/), 1, 'the redirect loop is fetched once per URL');
  assert.equal(count(/^\/loop\/b$/), 1, 'the redirect loop is fetched once per URL');
  assert.ok(count(/^\/chain\//) <= MAX_DEPTH, `the endless redirect chain went ${count(/^\/chain\//)} hops`);
  assert.ok(count(/^\/dir\//) <= 4, `the relative-link loop went ${count(/^\/dir\//)} levels: ${paths.filter((p) => p.startsWith('/dir/')).join(' ')}`);
  assert.ok(!paths.some((p) => /^\/dir\/(dir\/){3}/.test(p)), 'a path repeating a segment more than max_path_repeats was fetched');
  assert.ok(!paths.some((p) => p.split('&').length > 6), 'a URL with more than max_query_params parameters was fetched');
  assert.equal(new Set(paths).size, paths.length, 'a trap URL was fetched twice');

  const goodStored = storedObjects(state).filter((o) => !o.robots && o.url.startsWith(good.origin));
  assert.equal(goodStored.filter((o) => o.code === 0).length, goodPages, 'the good site was not crawled in full');
  assert.ok(maxRss < 600 * MiB, `the crawler's peak RSS was ${(maxRss / MiB).toFixed(0)} MiB`);
});
