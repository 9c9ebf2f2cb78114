/**
 * The simulated web's access log and what one crawl of it shows: politeness
 * per address, the politeness bound, starvation of hosts, pages. Pure
 * functions: the server writes lines with `formatLine`, the harness parses
 * them and calls `analyseSimLog`; the unit test feeds hand-made logs.
 *
 * Line format (tab-separated, one request a line, written when the request
 * ends: answered, reset, or closed by the client):
 *   t  arrival, ms since the epoch (3 decimals)   a  address
 *   h  Host header's name (lower case, no port)   p  path
 *   s  status (0: no answer — reset by the server or closed by the client)
 *   d  duration from arrival to the end, ms      f  requests in flight on the address at arrival, this one included
 *
 * Definitions (docs/benchmarks.md, "Crawl scale"):
 * - Per address, requests sorted by arrival: an overlap is one arriving before
 *   the previous one ended (t + d); a gap violation one arriving less than
 *   min_delay − tolerance after it ended. robots.txt counts like any request.
 *   The tolerance covers the server's clock points (arrival, end) against the
 *   crawler's (send, receipt). After a request to a silent host the gap is not
 *   judged (an overlap still is): the server never answers, the crawler gives
 *   up at its time-out, and the server sees the close some milliseconds
 *   later, so the gap it measures is short by that much.
 * - Politeness bound, requests/s: Σ over the addresses with a live host
 *   (normal, slow or flaky) that were asked anything in the window of
 *   1 ÷ (min_delay + the mean duration of their requests there), each for
 *   the share of the window before its last live host was finished (served
 *   every page it has): an address with nothing left gives no more.
 * - Starvation: a live host (normal, slow or flaky) waits between its
 *   requests (from the window's start to its first, and from its last to the
 *   window's end while it has pages left; the whole window if it was asked
 *   nothing), a wait
 *   after an error answer (5xx, reset) excepted, as the crawler then backs
 *   off. Its fair period is the larger of: the live hosts on its address not
 *   yet finished × (min_delay + the address's mean duration) — the address's
 *   turns shared out — and all live hosts not yet finished ÷ the crawl's
 *   requests/s — the crawler's throughput shared out. A host is starved when
 *   a wait exceeds 3× its fair period. A host is finished once it served
 *   every page it has (its last request), else it never is.
 */

import { pageIndex } from './sim-web.js';
import type { SimHost, SimWeb } from './sim-web.js';

export interface SimLogLine {
  t: number;
  a: string;
  h: string;
  p: string;
  s: number;
  d: number;
  f: number;
}

export function formatLine(l: SimLogLine): string {
  return `${l.t.toFixed(3)}\t${l.a}\t${l.h}\t${l.p}\t${l.s}\t${l.d.toFixed(3)}\t${l.f}\n`;
}

/** The lines of a log; a line cut short (the server killed mid-write) is skipped. */
export function parseLog(text: string): SimLogLine[] {
  const out: SimLogLine[] = [];
  for (const line of text.split('\n')) {
    const f = line.split('\t');
    if (f.length !== 7) continue;
    out.push({ t: Number(f[0]), a: f[1]!, h: f[2]!, p: f[3]!, s: Number(f[4]), d: Number(f[5]), f: Number(f[6]) });
  }
  return out;
}

export interface AnalyseOptions {
  minDelayMs: number;
  /** Gap tolerance, ms (GAP_TOLERANCE_MS). */
  toleranceMs: number;
  /** The window, ms since the epoch: pages/s and the bound are over it. */
  start: number;
  end: number;
  /** Share of the fair period a wait may reach (3). */
  starvationFactor: number;
}

export const GAP_TOLERANCE_MS = 5;
export const STARVATION_FACTOR = 3;

export interface SimWebReport {
  /** Requests and distinct pages answered 200 in the window. */
  requests: number;
  pages: number;
  /** Distinct pages answered 200 over the whole log (the drain after the window too). */
  allPages: number;
  windowS: number;
  pagesPerS: number;
  requestsPerS: number;
  /** requests/s the politeness allows (see above). */
  boundPerS: number;
  /** Over the whole log (the drain after the window too). */
  overlaps: number;
  gapViolations: number;
  /** The shortest gap between two requests to one address, ms. */
  minGapMs: number;
  maxInflight: number;
  /** Requests into /private/ on a host whose robots.txt disallows it. */
  robotsViolations: number;
  /** Requests other than robots.txt to a host whose robots.txt answers 503. */
  robots503Violations: number;
  /** Live hosts (normal, slow, flaky), checked for starvation; those asked nothing in the window; those starved, and the worst wait ÷ fair period. */
  liveHosts: number;
  unasked: number;
  starved: number;
  worstStarvation: number;
  statuses: Record<string, number>;
}

const LIVE = new Set(['normal', 'slow', 'flaky']);

/** Counts in a sorted list greater than x. */
function countAbove(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return sorted.length - lo;
}

function groupBy<K>(lines: readonly SimLogLine[], key: (l: SimLogLine) => K): Map<K, SimLogLine[]> {
  const out = new Map<K, SimLogLine[]>();
  for (const l of lines) {
    const list = out.get(key(l));
    if (list === undefined) out.set(key(l), [l]);
    else list.push(l);
  }
  return out;
}

const isError = (l: SimLogLine): boolean => l.s === 0 || l.s >= 500;

export function analyseSimLog(web: SimWeb, lines: readonly SimLogLine[], o: AnalyseOptions): SimWebReport {
  const sorted = [...lines].sort((x, y) => x.t - y.t);
  const inWindow = sorted.filter((l) => l.t >= o.start && l.t <= o.end);
  const windowS = (o.end - o.start) / 1000;
  const statuses: Record<string, number> = {};
  let robotsViolations = 0;
  let robots503Violations = 0;
  for (const l of sorted) {
    statuses[String(l.s)] = (statuses[String(l.s)] ?? 0) + 1;
    const host = web.byName.get(l.h);
    if (host === undefined || l.p === '/robots.txt') continue;
    if (host.robots && l.p.startsWith('/private/')) robotsViolations++;
    if (host.behaviour === 'robots-503') robots503Violations++;
  }

  // Politeness per address over the whole log.
  let overlaps = 0;
  let gapViolations = 0;
  let minGapMs = Infinity;
  let maxInflight = 0;
  for (const list of groupBy(sorted, (l) => l.a).values()) {
    for (let i = 0; i < list.length; i++) {
      maxInflight = Math.max(maxInflight, list[i]!.f);
      if (i === 0) continue;
      const previous = list[i - 1]!;
      const gap = list[i]!.t - (previous.t + previous.d);
      if (gap < 0) overlaps++;
      if (web.byName.get(previous.h)?.behaviour === 'silent') continue;
      minGapMs = Math.min(minGapMs, gap);
      if (gap >= 0 && gap < o.minDelayMs - o.toleranceMs) gapViolations++;
    }
  }

  // Pages and the bound over the window.
  const pageKeys = new Set<string>();
  const pagesOfHost = new Map<string, Set<number>>();
  for (const l of sorted) {
    const host = web.byName.get(l.h);
    const k = host === undefined ? undefined : pageIndex(host, l.p);
    if (l.s !== 200 || k === undefined) continue;
    if (l.t >= o.start && l.t <= o.end) pageKeys.add(`${l.h} ${k}`);
    const set = pagesOfHost.get(l.h) ?? new Set<number>();
    set.add(k);
    pagesOfHost.set(l.h, set);
  }
  const lastOf = new Map<string, number>();
  for (const l of sorted) lastOf.set(l.h, l.t);
  const finished = (h: SimHost): number => ((pagesOfHost.get(h.name)?.size ?? 0) >= h.pages ? lastOf.get(h.name)! : Infinity);
  // An address counts in the bound until its last live host is finished: then it has nothing left to give.
  const doneAt = new Map<string, number>();
  for (const h of web.hosts) if (LIVE.has(h.behaviour)) doneAt.set(h.address, Math.max(doneAt.get(h.address) ?? -Infinity, finished(h)));
  const byAddress = groupBy(inWindow, (l) => l.a);
  const meanMs = new Map<string, number>();
  let boundPerS = 0;
  for (const [address, list] of byAddress) {
    const mean = list.reduce((sum, l) => sum + l.d, 0) / list.length;
    meanMs.set(address, mean);
    const done = doneAt.get(address);
    if (done === undefined) continue;
    const share = (Math.min(o.end, done) - o.start) / (o.end - o.start);
    if (share > 0) boundPerS += (share * 1000) / (o.minDelayMs + mean);
  }

  // Starvation.
  const byHost = groupBy(inWindow, (l) => l.h);
  const liveByAddress = new Map<string, number[]>();
  const allLive: number[] = [];
  for (const h of web.hosts) {
    if (!LIVE.has(h.behaviour)) continue;
    const f = finished(h);
    allLive.push(f);
    const list = liveByAddress.get(h.address) ?? [];
    list.push(f);
    liveByAddress.set(h.address, list);
  }
  allLive.sort((x, y) => x - y);
  for (const list of liveByAddress.values()) list.sort((x, y) => x - y);
  const perRequestMs = inWindow.length === 0 ? Infinity : (o.end - o.start) / inWindow.length;
  let liveHosts = 0;
  let starved = 0;
  let worstStarvation = 0;
  let unasked = 0;
  for (const h of web.hosts) {
    if (!LIVE.has(h.behaviour)) continue;
    liveHosts++;
    const list = byHost.get(h.name) ?? [];
    const turn = o.minDelayMs + (meanMs.get(h.address) ?? 0);
    const waits: Array<[number, number]> = [];
    if (list.length === 0) {
      unasked++;
      if (finished(h) === Infinity) waits.push([o.start, o.end]);
    } else {
      waits.push([o.start, list[0]!.t]);
      for (let i = 1; i < list.length; i++) if (!isError(list[i - 1]!)) waits.push([list[i - 1]!.t, list[i]!.t]);
      const last = list[list.length - 1]!;
      if (finished(h) === Infinity && !isError(last)) waits.push([last.t, o.end]);
    }
    let worst = 0;
    for (const [from, to] of waits) {
      const fair = Math.max(countAbove(liveByAddress.get(h.address)!, from) * turn, countAbove(allLive, from) * perRequestMs);
      worst = Math.max(worst, (to - from) / fair);
    }
    if (worst > o.starvationFactor) starved++;
    worstStarvation = Math.max(worstStarvation, worst);
  }

  return {
    requests: inWindow.length,
    pages: pageKeys.size,
    allPages: [...pagesOfHost.values()].reduce((sum, set) => sum + set.size, 0),
    windowS,
    pagesPerS: pageKeys.size / windowS,
    requestsPerS: inWindow.length / windowS,
    boundPerS,
    overlaps,
    gapViolations,
    minGapMs: Number.isFinite(minGapMs) ? minGapMs : Number.NaN,
    maxInflight,
    robotsViolations,
    robots503Violations,
    liveHosts,
    unasked,
    starved,
    worstStarvation,
    statuses,
  };
}
