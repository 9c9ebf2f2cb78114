/**
 * A small loopback site for the daemon tests: pages `/<prefix>0` …
 * `/<prefix>N-1`, each linking to the next, with a title and a word of its
 * own (`<prefix>word<i>`) to search for; robots.txt allows everything.
 * `delayMs` holds each page's answer back (a fetch stays in flight).
 */

import type { RouteHandler } from './http-fixtures.js';

export function linkedPages(prefix: string, count: number, options: { delayMs?: number } = {}): Record<string, RouteHandler> {
  const routes: Record<string, RouteHandler> = {
    '/robots.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nAllow: /\n'),
  };
  for (let i = 0; i < count; i++) {
    routes[`/${prefix}${i}`] = (_req, res) => {
      const next = i + 1 < count ? `<a href="/${prefix}${i + 1}">next</a>` : '';
      const answer = () => res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<title>${prefix} page ${i}</title><p>${prefix}word${i} ${next}</p>`);
      if (options.delayMs === undefined) answer();
      else setTimeout(answer, options.delayMs);
    };
  }
  return routes;
}

/** The --set options every crawl of a loopback site needs. */
export const LOOPBACK_CRAWL = ['--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s'];
