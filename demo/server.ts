/**
 * Serves the four sample sites, each on its own loopback address (127.0.0.2
 * to 127.0.0.5, any free port) so that they are four hosts to the crawler:
 * site:, the site facet and per-host politeness all tell them apart. The
 * pages are generated once the ports are known (they link to each other by
 * origin) and then served from memory; any other path is a 404.
 *
 * Every response carries a Last-Modified date (the page's own, or one of
 * 2024–2025 derived from its path), so the result cards show real dates.
 * Paths are compared percent-decoded, so "/wiki/Lipová" is found however a
 * client spells its "ó".
 */

import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { docs } from './docs.js';
import { news } from './news.js';
import { recipes } from './recipes.js';
import { Rng, SITE_KEYS, type Origins, type Page, type Site, type SiteKey } from './site.js';
import { wiki } from './wiki.js';

const ADDRESSES: Record<SiteKey, string> = { wiki: '127.0.0.2', recipes: '127.0.0.3', docs: '127.0.0.4', news: '127.0.0.5' };

export interface ServedSite {
  key: SiteKey;
  name: string;
  /** http://ADDRESS:PORT */
  origin: string;
  /** Paths served with status 200. */
  pages: number;
}

export interface SampleSites {
  sites: ServedSite[];
  /** Every site's home page: the crawl's seeds. */
  seeds: string[];
  close(): Promise<void>;
}

function decoded(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

const NOT_FOUND: Page = {
  status: 404,
  headers: { 'content-type': 'text/html; charset=utf-8' },
  body: '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Not found</title></head><body><h1>Not found</h1><p>There is no page here.</p></body></html>\n',
};

export async function startSampleSites(): Promise<SampleSites> {
  const routes = new Map<SiteKey, Map<string, Page>>();
  const servers = new Map<SiteKey, Server>();
  try {
    for (const key of SITE_KEYS) {
      const server = createServer((req: IncomingMessage, res: ServerResponse) => {
        const path = decoded(req.url ?? '/');
        const page = routes.get(key)?.get(path) ?? NOT_FOUND;
        const body = Buffer.from(page.body);
        res.writeHead(page.status, { 'last-modified': lastModified(path), ...page.headers, 'content-length': body.length });
        res.end(req.method === 'HEAD' ? undefined : body);
      });
      servers.set(key, server);
      server.listen(0, ADDRESSES[key]);
      await once(server, 'listening');
    }
  } catch (err) {
    await closeAll(servers.values());
    throw err;
  }
  const origins = Object.fromEntries(SITE_KEYS.map((key) => [key, `http://${ADDRESSES[key]}:${(servers.get(key)!.address() as { port: number }).port}`])) as Origins;
  const sites = generateSites(origins);
  for (const site of sites) routes.set(site.key, new Map([...site.pages].map(([path, page]) => [decoded(path), page])));
  return {
    sites: sites.map((site) => ({ key: site.key, name: site.name, origin: origins[site.key], pages: [...site.pages.values()].filter((p) => p.status === 200).length })),
    seeds: SITE_KEYS.map((key) => `${origins[key]}/`),
    close: () => closeAll(servers.values()),
  };
}

/** The four sites as they are served from `origins`. */
export function generateSites(origins: Origins): Site[] {
  return [wiki(origins), recipes(origins), docs(origins), news(origins)];
}

/** A page without a date of its own was last changed on a day of 2024–2025 its path picks. */
function lastModified(path: string): string {
  const rng = new Rng(`modified ${path}`);
  return new Date(Date.UTC(2024, 0, 1 + rng.int(0, 729), rng.int(6, 21), rng.int(0, 59))).toUTCString();
}

async function closeAll(servers: Iterable<Server>): Promise<void> {
  await Promise.all(
    [...servers].map(async (server) => {
      if (!server.listening) return;
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    }),
  );
}
