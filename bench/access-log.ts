/**
 * Reading the site server's access log back: what one crawl did, judged from
 * the server's side. The harness runs one crawler at a time and notes the
 * log's size before and after, so the lines of a run are a byte range.
 *
 * Politeness is checked against the same layout the server used: a request for
 * a path its host's robots.txt disallows is a violation (robots.txt itself
 * excepted); on a host with a Crawl-delay, two requests arriving closer than
 * the delay are a breach (2% tolerance for timer jitter); the largest number
 * of requests in flight at once on one address is reported as is.
 */

import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { decodePath, isDisallowed } from './site.js';
import type { SiteLayout } from './site.js';
import type { LogLine } from './site-server.js';

export interface CrawlStats {
  requests: number;
  /** Distinct HTML pages answered 200. */
  pages: number;
  /** Body bytes of all responses. */
  bytes: number;
  robotsViolations: number;
  crawlDelayBreaches: number;
  maxInflightPerIp: number;
  /** Hosts on which some other request arrived before robots.txt was asked for (polite crawlers ask first). */
  robotsLate: number;
  statuses: Record<string, number>;
  /** Arrival span, first to last request, ms. */
  spanMs: number;
}

export function logSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** The log lines between two byte offsets. */
export function readLogRange(file: string, from: number, to: number): LogLine[] {
  if (to <= from) return [];
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(to - from);
    readSync(fd, buf, 0, buf.length, from);
    return buf
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as LogLine);
  } finally {
    closeSync(fd);
  }
}

const TOLERANCE = 0.98;

export function analyse(layout: SiteLayout, lines: readonly LogLine[]): CrawlStats {
  const hosts = new Map(layout.hosts.map((h) => [h.address, h]));
  const pages = new Set<string>();
  const statuses: Record<string, number> = {};
  const lastArrival = new Map<string, number>();
  const robotsAsked = new Set<string>();
  const lateHosts = new Set<string>();
  let bytes = 0;
  let robotsViolations = 0;
  let crawlDelayBreaches = 0;
  let maxInflight = 0;
  let first = Infinity;
  let last = -Infinity;
  const sorted = [...lines].sort((a, b) => a.t - b.t);
  for (const l of sorted) {
    first = Math.min(first, l.t);
    last = Math.max(last, l.t);
    bytes += l.b;
    statuses[String(l.s)] = (statuses[String(l.s)] ?? 0) + 1;
    maxInflight = Math.max(maxInflight, l.f);
    const host = hosts.get(l.a);
    if (host === undefined) continue; // the hub
    const path = decodePath(l.p.split('?')[0]!);
    if (path === '/robots.txt') robotsAsked.add(l.a);
    else {
      if (!robotsAsked.has(l.a)) lateHosts.add(l.a);
      if (isDisallowed(host, path)) robotsViolations++;
    }
    if (host.crawlDelay !== undefined) {
      const prev = lastArrival.get(l.a);
      if (prev !== undefined && l.t - prev < host.crawlDelay * 1000 * TOLERANCE) crawlDelayBreaches++;
    }
    lastArrival.set(l.a, l.t);
    if (l.s === 200 && l.m === 'GET' && (path.endsWith('.html') || path.endsWith('/'))) pages.add(l.a + path);
  }
  return {
    requests: lines.length,
    pages: pages.size,
    bytes,
    robotsViolations,
    crawlDelayBreaches,
    maxInflightPerIp: maxInflight,
    robotsLate: lateHosts.size,
    statuses,
    spanMs: lines.length === 0 ? 0 : last - first,
  };
}
