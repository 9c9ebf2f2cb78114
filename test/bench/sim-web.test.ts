import assert from 'node:assert/strict';
import test from 'node:test';
import {
  answerDelayMs,
  fateOf,
  hostsFile,
  LATENCY_CLAMP_MS,
  listeningAddresses,
  localLinks,
  MAX_PAGES,
  MIN_PAGES,
  pageIndex,
  pageLinks,
  pagePath,
  seeds,
  simAddress,
  simWeb,
} from '../../bench/sim-web.js';
import type { SimBehaviour } from '../../bench/sim-web.js';
import { median } from '../../bench/stats.js';

const spec = { hosts: 10_000, addresses: 300, port: 8480 };
const web = simWeb(spec);

test('the same spec gives the same web', () => {
  assert.deepEqual(simWeb(spec).hosts, web.hosts);
});

test('every address is on 127.16.0.0/12 with a last octet of 1–254, and there are as many as asked', () => {
  const used = new Set(web.hosts.map((h) => h.address));
  assert.equal(used.size, spec.addresses);
  for (const a of used) assert.match(a, /^127\.(1[6-9]|2\d|3[01])\.\d{1,3}\.([1-9]\d?|1\d\d|2[0-4]\d|25[0-4])$/);
  assert.equal(simAddress(253), '127.16.0.254');
  assert.equal(simAddress(254), '127.16.1.1');
  assert.equal(simAddress(254 * 256), '127.17.0.1');
  assert.throws(() => simAddress(254 * 256 * 16));
});

test('most addresses hold one host; the shared ones hold the rest evenly', () => {
  const counts = new Map<string, number>();
  for (const h of web.hosts) counts.set(h.address, (counts.get(h.address) ?? 0) + 1);
  const shared = [...counts.values()].filter((n) => n > 1);
  assert.equal(shared.length, Math.ceil(spec.addresses / 20));
  assert.equal([...counts.values()].filter((n) => n === 1).length, spec.addresses - shared.length);
  assert.ok(Math.max(...shared) - Math.min(...shared) <= 1);
});

test('behaviours come in the intended shares; refused hosts are alone on an address without a listener', () => {
  const big = simWeb({ hosts: 10_000, addresses: 5_000, port: 8480 });
  const share = (b: SimBehaviour): number => big.hosts.filter((h) => h.behaviour === b).length / big.hosts.length;
  assert.ok(share('normal') > 0.82 && share('normal') < 0.88, `normal ${share('normal')}`);
  assert.ok(share('slow') > 0.04 && share('slow') < 0.06);
  assert.ok(share('flaky') > 0.03 && share('flaky') < 0.05);
  assert.ok(share('robots-503') > 0.01 && share('robots-503') < 0.03);
  assert.ok(share('silent') + share('refused') > 0.03 && share('silent') + share('refused') < 0.05);
  assert.ok(share('refused') > 0.005);
  const listening = new Set(listeningAddresses(big));
  for (const h of big.hosts) {
    const alone = big.hosts.filter((o) => o.address === h.address).length === 1;
    if (h.behaviour === 'refused') {
      assert.ok(alone, `${h.name} refused on a shared address`);
      assert.ok(!listening.has(h.address));
    } else assert.ok(listening.has(h.address));
  }
  assert.ok(big.hosts.filter((h) => !h.robots).length > 300, 'some hosts have no robots.txt');
});

test('latency: normal hosts within the clamp around a median of 60–100 ms; slow ones 5–10× slower', () => {
  const normal = web.hosts.filter((h) => h.behaviour === 'normal').map((h) => h.latencyMs);
  assert.ok(Math.min(...normal) >= LATENCY_CLAMP_MS[0] && Math.max(...normal) <= LATENCY_CLAMP_MS[1]);
  assert.ok(median(normal) >= 60 && median(normal) <= 100, `median ${median(normal)}`);
  assert.ok(normal.filter((ms) => ms >= 300).length > 50, 'a long tail');
  const slow = web.hosts.filter((h) => h.behaviour === 'slow').map((h) => h.latencyMs);
  assert.ok(Math.min(...slow) >= 5 * LATENCY_CLAMP_MS[0]);
  const h = web.hosts[0]!;
  const d = answerDelayMs(h, '/doc/1.html');
  assert.ok(d >= 0.75 * h.latencyMs && d <= 1.25 * h.latencyMs);
  assert.equal(answerDelayMs(h, '/doc/1.html'), d);
});

test('every host has 50–200 pages, all reachable from its entry page', () => {
  for (const h of web.hosts) {
    assert.ok(h.pages >= MIN_PAGES && h.pages <= MAX_PAGES, `${h.name}: ${h.pages} pages`);
    const seen = new Set([0]);
    const todo = [0];
    while (todo.length > 0) {
      for (const k of localLinks(h, todo.pop()!)) {
        assert.ok(k >= 0 && k < h.pages);
        if (!seen.has(k)) {
          seen.add(k);
          todo.push(k);
        }
      }
    }
    assert.equal(seen.size, h.pages, `${h.name}: ${seen.size} of ${h.pages} pages reachable`);
  }
});

test('page paths round-trip; links name local pages, /private/ and pages of other hosts', () => {
  const h = web.hosts[7]!;
  for (let k = 0; k < h.pages; k++) assert.equal(pageIndex(h, pagePath(k)), k);
  assert.equal(pageIndex(h, `/doc/${h.pages}.html`), undefined);
  assert.equal(pageIndex(h, '/doc/0.html'), undefined);
  assert.equal(pageIndex(h, '/doc/01.html'), undefined);
  const all = web.hosts.slice(0, 200).flatMap((host) => Array.from({ length: host.pages }, (_, k) => pageLinks(web, host, k)).flat());
  assert.ok(all.some((href) => href.startsWith('/private/')));
  const outside = all.filter((href) => href.startsWith('http://'));
  assert.ok(outside.length > 100);
  for (const href of outside) {
    const u = new URL(href);
    const other = web.byName.get(u.hostname);
    assert.ok(other !== undefined, href);
    assert.equal(u.port, String(spec.port));
    assert.notEqual(pageIndex(other, u.pathname), undefined, href);
  }
});

test('fates: robots.txt by behaviour, flaky rolls, silent hosts never answer', () => {
  const of = (b: SimBehaviour, robots = true) => ({ ...web.hosts[0]!, behaviour: b, robots });
  assert.equal(fateOf(of('normal'), '/robots.txt', 0), 'robots');
  assert.equal(fateOf(of('normal', false), '/robots.txt', 0), 'no-robots');
  assert.equal(fateOf(of('robots-503'), '/robots.txt', 0.9), 'robots-503');
  assert.equal(fateOf(of('robots-503'), '/', 0.9), 'page');
  assert.equal(fateOf(of('silent'), '/robots.txt', 0.9), 'silent');
  assert.equal(fateOf(of('flaky'), '/robots.txt', 0), 'robots');
  assert.equal(fateOf(of('flaky'), '/', 0.01), 'error-503');
  assert.equal(fateOf(of('flaky'), '/', 0.1), 'error-500');
  assert.equal(fateOf(of('flaky'), '/', 0.14), 'reset');
  assert.equal(fateOf(of('flaky'), '/', 0.5), 'page');
  assert.equal(fateOf(of('normal'), '/private/3.html', 0), 'private');
  assert.equal(fateOf(of('normal'), '/nothing', 0), 'not-found');
});

test('the hosts file names every host once, and every seed is a host\'s entry page', () => {
  const lines = hostsFile(web).trim().split('\n');
  assert.equal(lines.length, spec.hosts);
  assert.equal(lines[0], `${web.hosts[0]!.address} ${web.hosts[0]!.name}`);
  const seedLines = seeds(web).trim().split('\n');
  assert.equal(seedLines.length, spec.hosts);
  assert.equal(seedLines[42], 'http://h00042.sim.test:8480/');
  for (const h of web.hosts) assert.match(h.name, /^h\d{5}\.sim\.test$/);
});
