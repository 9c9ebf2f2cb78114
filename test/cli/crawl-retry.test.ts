/**
 * `sherlock crawl --until-idle` and the gatherer's own retries: a retry is
 * due retry_delay after the failure, rounded up to a whole second, and the
 * crawl waits for it however short retry_delay is (issue 26, item 8: with
 * retry_delay under a second the crawl ended with the retry still queued).
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { startFixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

/** 503 the first FAILURES times, the page after. */
const FAILURES = 3;

function flaky(): RouteHandler {
  let asked = 0;
  return (_req, res) => {
    asked += 1;
    if (asked <= FAILURES) res.writeHead(503, { 'Content-Type': 'text/plain' }).end('busy');
    else res.writeHead(200, { 'Content-Type': 'text/html' }).end('<title>back</title>');
  };
}

for (const retryDelay of ['0s', '300ms']) {
  // Each retry is a fresh chance to end too early (most of them did): three in a row, on hosts
  // that do not back off for them (error_backoff_after 10).
  test(`with gatherer.retry_delay = ${retryDelay}, crawl --until-idle fetches each retry of a 503 before it ends`, async (t) => {
    const state = scratchDir(t);
    const hosts = await Promise.all(['127.0.0.60', '127.0.0.61'].map((address) => startFixture({ address, routes: { '/flaky': flaky() } })));
    t.after(() => Promise.all(hosts.map((h) => h.close())));
    const seeds = join(state, 'seeds.txt');
    writeFileSync(seeds, hosts.map((h) => `${h.origin}/flaky\n`).join(''));
    const sets = ['gatherer.allow_private_addresses=true', 'gatherer.min_delay=0s', `gatherer.retry_delay=${retryDelay}`, `gatherer.max_retries=${FAILURES}`, 'gatherer.error_backoff_after=10'];
    const crawl = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--json', ...sets.flatMap((s) => ['--set', s])]);
    assert.equal(crawl.status, 0, crawl.stderr);
    for (const h of hosts) assert.equal(h.requests.filter((r) => r.path === '/flaky').length, FAILURES + 1, `${h.origin}: a retry was not fetched`);
    const summary = JSON.parse(crawl.stdout) as { outcomes: Record<string, number> };
    assert.deepEqual(summary.outcomes, { temporary: FAILURES * hosts.length, ok: hosts.length });
  });
}
