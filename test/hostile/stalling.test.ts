/**
 * Hostile servers that try to hold up the gatherer as a whole rather than
 * one fetch (issue 26): a robots.txt made to be costly to match, which once
 * stalled the main thread for every host, and a Retry-After for the far
 * future, which once shut its host's queue for good and broke the status
 * snapshot's readers. Real gatherers and loopback servers; the hosts are on
 * 127.0.0.150–159.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { readGatherStatus } from '../../common/gather/status.js';
import { writePlan } from '../../common/gather/plan-file.js';
import { gathererConfig, type GathererConfig } from '../../gatherer/config.js';
import { Gatherer } from '../../gatherer/gatherer.js';
import { MAX_ROBOTS_SIZE } from '../../gatherer/robots.js';
import { runCli } from '../helpers/cli.js';
import { storedObjects } from '../helpers/gather-state.js';
import { startFixture, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

const page = (title: string): RouteHandler => (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<title>${title}</title><p>words`);

/** As many `Disallow: /*a*a…(100 ×)…*b<i>` lines as fit under the robots.txt cap (512 KiB). */
function wildcardFlood(): string {
  const lines = ['User-agent: *'];
  let bytes = lines[0]!.length + 1;
  for (let i = 0; ; i++) {
    const line = `Disallow: /${'*a'.repeat(100)}*b${i}`;
    if (bytes + line.length + 1 > MAX_ROBOTS_SIZE) return lines.join('\n') + '\n';
    lines.push(line);
    bytes += line.length + 1;
  }
}

/**
 * Runs a gatherer over `state` until idle or `deadlineMs`, whichever is first;
 * returns how long it ran and whether the deadline stopped it.
 */
async function crawl(state: string, config: GathererConfig, deadlineMs: number): Promise<{ elapsed: number; timedOut: boolean }> {
  const began = Date.now();
  const g = await Gatherer.open(state, config);
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    g.stop('abort');
  }, deadlineMs);
  try {
    await g.run({ untilIdle: true });
  } finally {
    clearTimeout(deadline);
  }
  return { elapsed: Date.now() - began, timedOut };
}

/** When the last of `paths` on each fixture was requested, ms after `since`; undefined if one was never requested. */
function lastRequest(fixtures: readonly Fixture[], paths: readonly string[], since: number): number | undefined {
  let last = 0;
  for (const f of fixtures) {
    for (const path of paths) {
      const at = f.requests.filter((r) => r.path === path && r.at >= since).map((r) => r.at);
      if (at.length === 0) return undefined;
      last = Math.max(last, Math.min(...at) - since);
    }
  }
  return last;
}

test('a 512 KiB robots.txt of /*a*a…*b rules and 300 URLs of 1,000 characters: a healthy 4-host site beside it is fetched about as fast as alone, and those URLs are refused as too costly (2304)', async (t) => {
  const PAGES = 25;
  const paths = Array.from({ length: PAGES }, (_, i) => `/page/${i}`);
  const healthy = await Promise.all(
    ['127.0.0.151', '127.0.0.152', '127.0.0.153', '127.0.0.154'].map((address) => startFixture({ address, routes: Object.fromEntries(paths.map((p) => [p, page(p)])) })),
  );
  const flood = wildcardFlood();
  const hostile = await startFixture({
    address: '127.0.0.150',
    routes: { '/robots.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end(flood), '*': page('long') },
  });
  t.after(() => Promise.all([hostile.close(), ...healthy.map((f) => f.close())]));
  const healthyUrls = healthy.flatMap((f) => paths.map((p) => `${f.origin}${p}`));
  const longUrls = Array.from({ length: 300 }, (_, i) => `${hostile.origin}/${'a'.repeat(1000)}/${i}`);
  const config = gathererConfig.parse({ allow_private_addresses: true, min_delay: '0s', sync_interval: '200ms', parse_workers: 1 });

  // The healthy site alone, for comparison.
  const aloneState = scratchDir(t);
  writePlan(aloneState, healthyUrls.map((url) => ({ url, priority: 1 })));
  const aloneBegan = Date.now();
  const alone = await crawl(aloneState, config, 60_000);
  assert.equal(alone.timedOut, false, 'the healthy site alone did not finish');
  const aloneMs = lastRequest(healthy, paths, aloneBegan)!;

  // Both: the costly URLs planned first.
  const state = scratchDir(t);
  writePlan(state, [...longUrls, ...healthyUrls].map((url) => ({ url, priority: 1 })));
  const began = Date.now();
  const both = await crawl(state, config, 90_000);
  const bothMs = lastRequest(healthy, paths, began);
  t.diagnostic(`healthy site: ${aloneMs} ms alone, ${bothMs ?? 'not done'} ms beside the costly robots.txt; the whole run ${both.elapsed} ms`);

  assert.notEqual(bothMs, undefined, `healthy pages were still unfetched after ${both.elapsed} ms`);
  assert.ok(bothMs! < 4 * aloneMs + 10_000, `the healthy site took ${bothMs} ms beside the costly robots.txt, ${aloneMs} ms alone`);
  assert.equal(both.timedOut, false, 'the run did not end by itself');
  const stored = storedObjects(state).filter((o) => !o.robots);
  for (const url of healthyUrls) assert.equal(stored.find((o) => o.url === url)?.code, 0, `${url} not fetched`);
  for (const url of longUrls) {
    const o = stored.find((s) => s.url === url);
    assert.equal(o?.code, 2304, `${url.slice(0, 40)}…: ${o?.code}`);
    assert.match(o!.bucket.header.string('!')!, /too costly to match/);
  }
  assert.equal(hostile.requests.filter((r) => r.path !== '/robots.txt').length, 0, 'a refused URL was requested');
});

/** Polls until `done()` or `ms` have passed; true when done. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) return false;
    await sleep(50);
  }
  return true;
}

test('a 503 with Retry-After: 999999999999 (or an HTTP-date in the year 9999) waits max_retry_after, not until the year 33715: a URL added later for its host is fetched, and the status snapshot and sherlock status stay readable', async (t) => {
  const CAP_MS = 3000;
  /** 503 with `retryAfter` the first time, the page after. */
  const busy = (retryAfter: string): RouteHandler => {
    let asked = 0;
    return (req, res) => {
      asked += 1;
      if (asked === 1) res.writeHead(503, { 'Content-Type': 'text/plain', 'Retry-After': retryAfter }).end('down for maintenance');
      else page('back')(req, res);
    };
  };
  const hosts = await Promise.all([
    startFixture({ address: '127.0.0.156', routes: { '/busy': busy('999999999999'), '/later': page('later') } }),
    startFixture({ address: '127.0.0.157', routes: { '/busy': busy('Fri, 31 Dec 9999 23:59:59 GMT'), '/later': page('later') } }),
  ]);
  t.after(() => Promise.all(hosts.map((h) => h.close())));
  const state = scratchDir(t);
  const config = gathererConfig.parse({ allow_private_addresses: true, min_delay: '0s', sync_interval: '200ms', retry_delay: '0s', max_retry_after: `${CAP_MS}ms` });
  writePlan(state, hosts.map((h) => ({ url: `${h.origin}/busy`, priority: 1 })));
  const g = await Gatherer.open(state, config);
  const running = g.run();
  try {
    const asked = (h: Fixture, path: string, times: number) => h.requests.filter((r) => r.path === path).length >= times;
    assert.ok(await until(() => hosts.every((h) => asked(h, '/busy', 1)), 10_000), 'the busy pages were not asked for');
    const refused = Date.now();
    // The snapshot (rewritten every second) names the hosts as delayed, their retries at the head of their
    // queues, until a time its readers take.
    assert.ok(await until(() => (readGatherStatus(state)?.delayed_hosts.length ?? 0) === hosts.length, 5000), 'the hosts were not listed as delayed');
    // The 503s were handled before the snapshot listing them was read; under load that can be well after
    // the fixture answered, so the bound counts from now (the retry time is rounded up to a second).
    const listed = Date.now();
    for (const row of readGatherStatus(state)!.delayed_hosts) {
      assert.ok(Date.parse(row.until) <= listed + CAP_MS + 1000, `${row.host} delayed until ${row.until}, listed at ${new Date(listed).toISOString()}`);
    }
    const status = await runCli(['status', '--state', state, '--json']);
    assert.equal(status.status, 0, status.stderr);
    assert.equal((JSON.parse(status.stdout) as { fetching: { delayed_hosts: unknown[] } }).fetching.delayed_hosts.length, hosts.length);

    // A URL for the same hosts, queued behind the retries.
    writePlan(state, hosts.map((h) => ({ url: `${h.origin}/later`, priority: 1 })));
    g.plansWritten();
    const fetched = await until(() => hosts.every((h) => asked(h, '/busy', 2) && asked(h, '/later', 1)), CAP_MS + 10_000);
    assert.ok(fetched, `after ${Date.now() - refused} ms: ${hosts.map((h) => h.requests.map((r) => r.path).join(' ')).join('; ')}`);
    for (const h of hosts) {
      const retried = h.requests.filter((r) => r.path === '/busy')[1]!.at - refused;
      assert.ok(retried >= CAP_MS - 1000, `${h.origin}: retried after ${retried} ms, before max_retry_after`);
    }
  } finally {
    g.stop('drain');
    await running;
  }
  const stored = storedObjects(state).filter((o) => !o.robots);
  for (const h of hosts) {
    assert.deepEqual(stored.filter((o) => o.url === `${h.origin}/busy`).map((o) => o.code), [1503, 0], `${h.origin}/busy`);
    assert.deepEqual(stored.filter((o) => o.url === `${h.origin}/later`).map((o) => o.code), [0], `${h.origin}/later`);
  }
});

test('a retry queued far off under a larger max_retry_after is due at once when the gatherer opens with a smaller one', async (t) => {
  let asked = 0;
  const host = await startFixture({
    address: '127.0.0.158',
    routes: {
      '/busy': (req, res) => {
        asked += 1;
        if (asked === 1) res.writeHead(503, { 'Content-Type': 'text/plain', 'Retry-After': '999999999999' }).end('down');
        else page('back')(req, res);
      },
    },
  });
  t.after(() => host.close());
  const state = scratchDir(t);
  const base = { allow_private_addresses: true, min_delay: '0s', sync_interval: '200ms', retry_delay: '0s' };
  writePlan(state, [{ url: `${host.origin}/busy`, priority: 1 }]);
  const first = await Gatherer.open(state, gathererConfig.parse({ ...base, max_retry_after: '1000d' }));
  const running = first.run();
  const queued = await until(() => (readGatherStatus(state)?.delayed_hosts.length ?? 0) === 1, 10_000);
  first.stop('drain');
  await running;
  assert.ok(queued, 'the retry was not queued');
  assert.equal(asked, 1);

  const began = Date.now();
  const second = await Gatherer.open(state, gathererConfig.parse({ ...base, max_retry_after: '2s' }));
  await second.run({ untilIdle: true });
  assert.equal(asked, 2, 'the retry was not fetched');
  assert.ok(Date.now() - began < 5000, `the retry waited ${Date.now() - began} ms`);
  assert.deepEqual(storedObjects(state).filter((o) => !o.robots).map((o) => o.code), [1503, 0]);
});
