/**
 * The sample sites as generated: the same origins give the same bytes; the
 * sizes are what the demo promises; every link between the sample's pages
 * leads somewhere, but for the red link kept as the one designed 404; the
 * robots.txt rule, the redirect and the duplicates are there; and the
 * server answers with what was generated, percent-encoded paths included.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import { generateSites, startSampleSites } from '../../demo/server.js';
import type { Origins, Site } from '../../demo/site.js';

const ORIGINS: Origins = { wiki: 'http://127.0.0.2:1001', recipes: 'http://127.0.0.3:1002', docs: 'http://127.0.0.4:1003', news: 'http://127.0.0.5:1004' };

function byOrigin(sites: Site[]): Map<string, Site> {
  return new Map(sites.map((s) => [ORIGINS[s.key], s]));
}

test('the same origins give the same pages, byte for byte; a few hundred pages in a few hundred KB', () => {
  const a = generateSites(ORIGINS);
  const b = generateSites(ORIGINS);
  assert.deepEqual(a, b);
  const pages = a.flatMap((s) => [...s.pages.values()].filter((p) => p.status === 200));
  assert.ok(pages.length >= 300 && pages.length <= 500, `${pages.length} pages`);
  const bytes = pages.reduce((sum, p) => sum + Buffer.byteLength(p.body), 0);
  assert.ok(bytes < 2_000_000, `${bytes} bytes`);
});

test('every link between the sample pages resolves, but the one designed 404', () => {
  const sites = byOrigin(generateSites(ORIGINS));
  const missing = new Set<string>();
  for (const [origin, site] of sites) {
    for (const [path, page] of site.pages) {
      for (const [, href] of page.body.matchAll(/href="([^"]+)"/g)) {
        const url = new URL(href!.replace(/&amp;/g, '&'), `${origin}${path}`);
        const target = sites.get(url.origin);
        if (target === undefined) assert.fail(`${origin}${path} links outside the sample: ${href}`);
        if (!target.pages.has(url.pathname + url.search)) missing.add(url.pathname + url.search);
      }
    }
  }
  assert.deepEqual([...missing], ['/wiki/Ghost_Station']);
});

test('robots.txt keeps /private/ out, an old title redirects, and some pages are exact duplicates', () => {
  const [wiki, recipes] = generateSites(ORIGINS);
  assert.match(wiki!.pages.get('/robots.txt')!.body, /^Disallow: \/private\/$/m);
  assert.ok(wiki!.pages.has('/private/council-minutes'));
  assert.deepEqual([wiki!.pages.get('/wiki/Townhall')!.status, wiki!.pages.get('/wiki/Townhall')!.headers['location']], [301, '/wiki/Town_Hall']);
  assert.equal(wiki!.pages.get('/wiki/Stone_Bridge?printable=yes')!.body, wiki!.pages.get('/wiki/Stone_Bridge')!.body);
  assert.equal(recipes!.pages.get('/print/creme-brulee')!.body, recipes!.pages.get('/recipes/creme-brulee')!.body);
});

test('the server answers with the generated pages on four loopback hosts, however a path is encoded', async (t) => {
  const served = await startSampleSites();
  t.after(() => served.close());
  assert.deepEqual(served.sites.map((s) => new URL(s.origin).hostname), ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5']);
  const wiki = served.sites[0]!.origin;
  const lipova = await fetch(`${wiki}/wiki/Lipov%C3%A1`);
  assert.equal(lipova.status, 200);
  assert.match(await lipova.text(), /Lipová je malé město/);
  assert.ok(Number.isFinite(Date.parse(lipova.headers.get('last-modified') ?? '')));
  assert.equal((await fetch(`${wiki}/wiki/Townhall`, { redirect: 'manual' })).status, 301);
  assert.equal((await fetch(`${wiki}/wiki/Ghost_Station`)).status, 404);
  assert.deepEqual(served.seeds, served.sites.map((s) => `${s.origin}/`));
});
