/**
 * Sitemaps named in robots.txt, end to end through `sherlock crawl`: the
 * sitemap is fetched, the pages it lists (and nothing links to) are
 * crawled, and neither a sitemap on another host nor a listed URL outside
 * the scope widens the crawl.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { readUrls } from '../../shepherd/status.js';
import { runCli } from '../helpers/cli.js';
import { startFixture } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

test('the pages of a sitemap named in robots.txt are crawled; other hosts are not', async (t) => {
  const state = scratchDir(t);
  const other = await startFixture({ address: '127.0.0.91', routes: {} });
  t.after(() => other.close());
  const html = (body: string) => (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(body);
  const site = await startFixture({
    address: '127.0.0.90',
    routes: {
      '/robots.txt': (_req, res) =>
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end(`User-agent: *\nDisallow: /private\nSitemap: /sitemap.xml\nSitemap: ${other.origin}/sitemap.xml\n`),
      '/sitemap.xml': (_req, res) =>
        res
          .writeHead(200, { 'Content-Type': 'application/xml' })
          .end(
            `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
              ['/hidden1', '/hidden2', '/private/p', `${other.origin}/elsewhere`].map((p) => `<url><loc>${p.startsWith('/') ? `http://127.0.0.90:${site.port}${p}` : p}</loc></url>`).join('') +
              `</urlset>`,
          ),
      '/': html('<title>home</title>no links here'),
      '/hidden1': html('<title>one</title>'),
      '/hidden2': html('<title>two</title>'),
    },
  });
  t.after(() => site.close());
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${site.origin}/\n`);
  const run = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s']);
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(site.requests.map((r) => r.path).sort(), ['/', '/hidden1', '/hidden2', '/robots.txt', '/sitemap.xml']);
  assert.deepEqual(other.requests, [], 'nothing fetched from another host');
  const rows = new Map([...readUrls(state)].map((r) => [new URL(r.url).pathname, r]));
  assert.equal(rows.get('/sitemap.xml')?.state, 'ok');
  assert.equal(rows.get('/sitemap.xml')?.depth, 0, 'a sitemap is a seed');
  assert.equal(rows.get('/hidden1')?.depth, 1);
  assert.equal(rows.get('/private/p')?.state, 'disallowed');
});
