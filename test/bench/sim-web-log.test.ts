import assert from 'node:assert/strict';
import test from 'node:test';
import { analyseSimLog, formatLine, GAP_TOLERANCE_MS, parseLog, STARVATION_FACTOR } from '../../bench/sim-web-log.js';
import type { SimLogLine } from '../../bench/sim-web-log.js';
import type { SimHost, SimWeb } from '../../bench/sim-web.js';

function host(index: number, address: string, over: Partial<SimHost> = {}): SimHost {
  return { index, name: `h${index}.sim.test`, address, pages: 50, latencyMs: 0, behaviour: 'normal', robots: true, ...over };
}

function webOf(hosts: SimHost[]): SimWeb {
  const addresses = [...new Set(hosts.map((h) => h.address))];
  return { spec: { hosts: hosts.length, addresses: addresses.length, port: 8480 }, hosts, addresses, byName: new Map(hosts.map((h) => [h.name, h])) };
}

const X = '127.16.0.1';
const Y = '127.16.0.2';

function line(t: number, h: SimHost, p: string, over: Partial<SimLogLine> = {}): SimLogLine {
  return { t, a: h.address, h: h.name, p, s: 200, d: 0, f: 1, ...over };
}

const options = (start: number, end: number) => ({ minDelayMs: 1000, toleranceMs: GAP_TOLERANCE_MS, start, end, starvationFactor: STARVATION_FACTOR });

test('log lines round-trip through the text format; a line cut short is skipped', () => {
  const l: SimLogLine = { t: 1795973921490.253, a: X, h: 'h1.sim.test', p: '/doc/3.html', s: 503, d: 12.5, f: 1 };
  const text = formatLine(l) + formatLine({ ...l, s: 0 }) + '1795973921490.253\t127.16';
  assert.deepEqual(parseLog(text), [l, { ...l, s: 0 }]);
});

test('an overlap is a request arriving before the previous one to its address ended; a gap under min_delay less the tolerance is a violation', () => {
  const a = host(0, X);
  const b = host(1, X);
  const lines = [
    line(0, a, '/robots.txt', { d: 100 }),
    line(1100, b, '/', { d: 100 }), // 1,000 ms after: fine, another host on the same address
    line(1700, a, '/', { d: 100 }), // 500 ms after: a gap violation
    line(1750, b, '/doc/1.html', { d: 50, f: 2 }), // before 1,800: an overlap
    line(2796, a, '/doc/1.html', { d: 10 }), // 996 ms after: within the tolerance
  ];
  const r = analyseSimLog(webOf([a, b]), lines, options(0, 3000));
  assert.equal(r.overlaps, 1);
  assert.equal(r.gapViolations, 1);
  assert.equal(r.minGapMs, -50);
  assert.equal(r.maxInflight, 2);
  assert.equal(r.requests, 5);
  assert.equal(r.pages, 4);
});

test('after a request to a silent host the gap is not judged (the server sees the crawler give up late), an overlap still is', () => {
  const quiet = host(0, X, { behaviour: 'silent' });
  const b = host(1, X);
  const lines = [
    line(0, quiet, '/robots.txt', { s: 0, d: 10_005 }), // closed by the crawler's time-out; the server notices 5 ms late
    line(11_000, b, '/robots.txt', { d: 10 }), // 995 ms after the close the server saw
    line(11_500, quiet, '/robots.txt', { s: 0, d: 10_000 }), // 490 ms after b's answer: a violation
    line(12_000, b, '/', { d: 10 }), // before the silent request ended: an overlap
  ];
  const r = analyseSimLog(webOf([quiet, b]), lines, options(0, 30_000));
  assert.equal(r.gapViolations, 1);
  assert.equal(r.overlaps, 1);
  assert.equal(r.minGapMs, 490);
});

test('the politeness bound sums 1 ÷ (min_delay + mean duration) over the addresses with a live host', () => {
  const a = host(0, X);
  const b = host(1, Y, { behaviour: 'robots-503' });
  const lines = [line(0, a, '/robots.txt', { d: 50 }), line(1100, a, '/', { d: 150 }), line(0, b, '/robots.txt', { d: 10 }), line(1100, b, '/', { s: 503, d: 10 })];
  const r = analyseSimLog(webOf([a, b]), lines, options(0, 10_000));
  assert.ok(Math.abs(r.boundPerS - 1000 / 1100) < 1e-9, String(r.boundPerS));
  assert.equal(r.pages, 1);
  assert.equal(r.pagesPerS, 0.1);
  assert.equal(r.requestsPerS, 0.4);
});

test('an address counts in the bound only until its last live host has served every page', () => {
  const small = host(0, X, { pages: 2 });
  const big = host(1, Y);
  const lines = [line(0, small, '/robots.txt'), line(1000, small, '/'), line(2000, small, '/doc/1.html'), line(0, big, '/')];
  const r = analyseSimLog(webOf([small, big]), lines, options(0, 10_000));
  assert.ok(Math.abs(r.boundPerS - 1.2) < 1e-9, String(r.boundPerS));
});

test('pages and requests count in the window only; politeness is judged over the whole log', () => {
  const a = host(0, X);
  const lines = [line(0, a, '/'), line(1000, a, '/doc/1.html'), line(2000, a, '/doc/2.html'), line(2500, a, '/doc/3.html')];
  const r = analyseSimLog(webOf([a]), lines, options(500, 2000));
  assert.equal(r.requests, 2);
  assert.equal(r.pages, 2);
  assert.equal(r.allPages, 4);
  assert.equal(r.gapViolations, 1);
});

test('robots.txt violations: /private/ on a host whose robots.txt disallows it, anything but robots.txt on a robots-503 host', () => {
  const a = host(0, X);
  const open = host(1, Y, { robots: false });
  const shut = host(2, '127.16.0.3', { behaviour: 'robots-503' });
  const lines = [line(0, a, '/private/1.html'), line(0, open, '/private/1.html'), line(0, shut, '/robots.txt', { s: 503 }), line(2000, shut, '/')];
  const r = analyseSimLog(webOf([a, open, shut]), lines, options(0, 3000));
  assert.equal(r.robotsViolations, 1);
  assert.equal(r.robots503Violations, 1);
});

test('a live host waiting over 3× its fair period is starved; a wait after an error answer is not counted', () => {
  const a = host(0, X);
  const b = host(1, X);
  const lines: SimLogLine[] = [];
  for (let t = 0; t < 20_000; t += 2200) lines.push(line(t, a, t === 0 ? '/' : `/doc/${t / 2200}.html`));
  lines.push(line(1100, b, '/'));
  // 11 requests in 20 s: the crawler's share for 2 unfinished hosts is 2 × 1,818 ms, above the address's 2 × 1,000 ms.
  const r = analyseSimLog(webOf([a, b]), lines, options(0, 20_000));
  assert.equal(r.liveHosts, 2);
  assert.equal(r.starved, 1);
  assert.ok(Math.abs(r.worstStarvation - 18_900 / ((2 * 20_000) / 11)) < 1e-9, String(r.worstStarvation));

  const afterError = lines.map((l) => (l.h === b.name ? { ...l, p: '/doc/1.html', s: 503 } : l));
  afterError.push(line(1000, b, '/', { d: 0 }));
  const backedOff = analyseSimLog(webOf([a, b]), afterError.sort((x, y) => x.t - y.t), options(0, 20_000));
  assert.equal(backedOff.starved, 0);
});

test('a host that served all its pages is finished: it no longer counts against the others\' fair share, nor waits itself', () => {
  const a = host(0, X, { pages: 2 });
  const b = host(1, X, { pages: 2 });
  const lines = [line(0, a, '/'), line(1000, b, '/'), line(2000, a, '/doc/1.html'), line(3000, b, '/doc/1.html')];
  const r = analyseSimLog(webOf([a, b]), lines, options(0, 60_000));
  assert.equal(r.starved, 0);
  assert.equal(r.allPages, 4);
});

test('a live host asked nothing in the window waits the whole window', () => {
  const a = host(0, X);
  const b = host(1, Y);
  const lines: SimLogLine[] = [];
  for (let t = 0; t < 20_000; t += 1000) lines.push(line(t, a, t === 0 ? '/' : `/doc/${t / 1000}.html`));
  // 20 requests in 20 s for 2 hosts: fair period 2 s on the crawler's side, 1 s on b's address; b waited 20 s.
  const r = analyseSimLog(webOf([a, b]), lines, options(0, 20_000));
  assert.equal(r.unasked, 1);
  assert.equal(r.starved, 1);
  assert.equal(r.worstStarvation, 10);
  const shut = analyseSimLog(webOf([a, { ...b, behaviour: 'silent' }]), lines, options(0, 20_000));
  assert.equal(shut.liveHosts, 1);
  assert.equal(shut.starved, 0);
});
