/**
 * The site the indexer tests crawl: a handful of pages on one loopback host
 * covering what the chewer must tell apart (a title, headings, emphasis,
 * small print, alt text, accents, CJK, a redirect, a noindex page), what
 * the merge and link stages must find (two identical pages, a long page and
 * a copy with one paragraph changed, two pages alike only in their large
 * menu, a redirect linked with the anchor text
 * "zebra", a page linked from many pages and one linked once), plus
 * `bulk` pages of generated words for tests that need many postings. The
 * crawl is a real `sherlock crawl` through the CLI, as test/cli/crawl.test.ts
 * does; `buildCli` runs `sherlock index build` the same way.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, type Run } from '../helpers/cli.js';
import { startFixture, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';

export const PAGES: Record<string, string> = {
  '/': `<html><head><title>Sherlock Holmes Home</title></head><body>
    <h1>Welcome detective</h1>
    <p>The <em>famous</em> consulting detective lives at Baker Street.</p>
    <p><small>fine print</small> <img src="/pipe.png" alt="curved pipe"></p>
    <p>Read <a href="/accents">about desserts</a>, <a href="/cjk">Tokyo notes</a>, <a href="/moved">zebra</a>
    and <a href="/hidden">hidden things</a>.</p>
    <p>More: <a href="/twin-a">twin one</a>, <a href="/twin-b">twin two</a>, <a href="/long">long</a>, <a href="/long-edit">long edited</a>,
    <a href="/popular">popular</a>, <a href="/lonely">lonely</a>, <a href="/menu-a">apples</a>, <a href="/menu-b">pears</a>.</p></body></html>`,
  '/accents': `<html><head><title>Crème brûlée</title><meta name="description" content="Dessert française"></head><body>
    <h2>Café résumé</h2><p>Crème brûlée à la française, Straße and naïve cafe resume.</p></body></html>`,
  '/cjk': `<html><head><title>東京ノート</title></head><body><p>東京都に住んでいます。 Tokyo tower.</p></body></html>`,
  '/hidden': `<html><head><title>Hidden</title><meta name="robots" content="noindex"></head><body><p>secretword appears only here</p></body></html>`,
  '/twin-a': twinPage(),
  '/twin-b': twinPage(),
  '/long': longPage(-1),
  '/long-edit': longPage(7),
  '/popular': `<html><head><title>Popular</title></head><body><p>Everybody links to this gazette.</p></body></html>`,
  '/lonely': `<html><head><title>Lonely</title></head><body><p>Only the home page knows this hermitage.</p></body></html>`,
  '/menu-a': menuPage('apple'),
  '/menu-b': menuPage('pear'),
};

/** A site's large menu (the same on both pages, most of their words) around forty words of the page's own. */
function menuPage(fruit: string): string {
  const menu = Array.from({ length: 200 }, (_, i) => `<li><a href="#s${i}">orchard section ${i}</a></li>`).join('');
  const own = Array.from({ length: 40 }, (_, k) => `${fruit}${k}`).join(' ');
  return `<html><head><title>Orchard</title></head><body><ul>${menu}</ul><p>${own}</p></body></html>`;
}

function twinPage(): string {
  return `<html><head><title>Twin</title></head><body><p>Identical twins share every word here.</p><p><a href="/popular">see the gazette</a></p></body></html>`;
}

/** Twenty paragraphs of forty words; paragraph `changed` (if any) has other words. */
function longPage(changed: number): string {
  const paragraphs = Array.from({ length: 20 }, (_, p) => {
    const words = Array.from({ length: 40 }, (_, k) => (p === changed ? `edit${p}v${k}` : `para${p}v${k}`));
    return `<p>${words.join(' ')}</p>`;
  });
  return `<html><head><title>Long</title></head><body>${paragraphs.join('')}<p><a href="/popular">the gazette</a></p></body></html>`;
}

const BULK_WORDS = 2500;

/** Page i of the bulk pages: a few thousand generated words, many distinct per page. */
function bulkPage(i: number): string {
  const words: string[] = [];
  for (let k = 0; k < 6000; k++) words.push(`w${((k * 7919 + i * 104729) % BULK_WORDS).toString(36)}x${k % 3}`);
  return `<html><head><title>Bulk ${i}</title></head><body><p>${words.join(' ')}</p></body></html>`;
}

/** The site's routes: `pages` (default PAGES) as HTML and `extra` pages, linked from the home page with `bulk` generated pages; robots.txt, a redirect. */
export function siteRoutes(bulk = 0, pages: Record<string, string> = PAGES, extra: Record<string, string> = {}): Record<string, RouteHandler> {
  const html = (body: string): RouteHandler => (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(body);
  const links = [...Array.from({ length: bulk }, (_, i) => `<a href="/bulk${i}">bulk ${i}</a>`), ...Object.keys(extra).map((path) => `<a href="${path}">more</a>`)].join(' ');
  const out: Record<string, RouteHandler> = {
    '/robots.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nAllow: /\n'),
    '/moved': (_req, res) => res.writeHead(301, { Location: '/accents' }).end(),
  };
  for (const [path, body] of Object.entries(pages)) out[path] = html(path === '/' ? body.replace('</body>', `${links}</body>`) : body);
  for (let i = 0; i < bulk; i++) out[`/bulk${i}`] = html(bulkPage(i));
  for (const [path, body] of Object.entries(extra)) out[path] = html(body);
  return out;
}

const CRAWL_SETS = ['gatherer.allow_private_addresses=true', 'gatherer.min_delay=0s'].flatMap((s) => ['--set', s]);

/** Serves the site (with `extra` pages by path, linked from the home page) on `address`, crawls it into `state` with the CLI and stops serving; returns the site's origin. */
export async function crawlSite(state: string, options: { address: string; bulk?: number; extra?: Record<string, string> }): Promise<string> {
  const fixture: Fixture = await startFixture({ address: options.address, routes: siteRoutes(options.bulk ?? 0, PAGES, options.extra ?? {}) });
  try {
    await crawlOrigin(state, fixture.origin);
  } finally {
    await fixture.close();
  }
  return fixture.origin;
}

/** Crawls the site served at `origin` into `state` with the CLI, from its home page until idle. */
export async function crawlOrigin(state: string, origin: string): Promise<void> {
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${origin}/\n`);
  const crawl = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', ...CRAWL_SETS]);
  assert.equal(crawl.status, 0, crawl.stderr);
}

/** `sherlock index build --state STATE --json` with `--set` values; asserts success and returns the summary. */
export async function buildCli(state: string, sets: readonly string[] = [], extra: readonly string[] = []): Promise<{ run: Run; report: { version: string; cards: number; words: number; runs: number; spilled: number; vocabularySegments: number; dir: string } }> {
  const run = await runCli(['index', 'build', '--state', state, '--json', ...extra, ...sets.flatMap((s) => ['--set', s])]);
  assert.equal(run.status, 0, run.stderr);
  return { run, report: JSON.parse(run.stdout) };
}
