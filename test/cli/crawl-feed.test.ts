/**
 * News feeds end to end through `sherlock crawl` and `sherlock index build`
 * (issue 30): a page names its RSS feed with <link rel=alternate>; the feed
 * is fetched, the entries it links (and no page links) are crawled, and the
 * feed's own words are found by a search, its entries' titles as anchor text
 * of the pages they name.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { currentVersion, indexDirectory } from '../../common/index/layout.js';
import { searchVersion } from '../../searcher/index-engine.js';
import { IndexVersion } from '../../searcher/index-version.js';
import { parseQuery } from '../../searcher/query.js';
import { readUrls } from '../../shepherd/status.js';
import { runCli } from '../helpers/cli.js';
import { startFixture } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';
import { buildCli } from '../indexer/site.js';

test('a feed named by a page is crawled, the entries it links are fetched, and its text is searchable', async (t) => {
  const state = scratchDir(t);
  const answer = (type: string, body: string) => (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'Content-Type': type }).end(body);
  const site = await startFixture({
    address: '127.0.0.92',
    routes: {
      '/': answer('text/html', '<html><head><title>Harbour</title><link rel="alternate" type="application/rss+xml" href="/feed.xml"></head><body>Welcome to the harbour.</body></html>'),
      '/feed.xml': (req, res) =>
        answer(
          'application/rss+xml; charset=utf-8',
          `<?xml version="1.0"?><rss version="2.0"><channel><title>Harbour news</title>
<item><title>Ferry timetable changes</title><link>http://${req.headers.host}/news/ferry</link><description>The winter schedule of the albatross ferry starts on Monday.</description></item>
</channel></rss>`,
        )(req, res),
      '/news/ferry': answer('text/html', '<html><head><title>Winter ferries</title></head><body>Departures every hour.</body></html>'),
    },
  });
  t.after(() => site.close());
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${site.origin}/\n`);
  const run = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s']);
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(site.requests.map((r) => r.path).sort(), ['/', '/feed.xml', '/news/ferry', '/robots.txt']);
  const rows = new Map([...readUrls(state)].map((r) => [new URL(r.url).pathname, r]));
  assert.equal(rows.get('/news/ferry')?.depth, 2, 'one hop from the feed');

  await buildCli(state);
  const name = currentVersion(indexDirectory(state))!;
  const version = IndexVersion.open(join(indexDirectory(state), name), name);
  try {
    const search = async (q: string) => (await searchVersion(version, { query: parseQuery(q), offset: 0, limit: 10, filters: {}, sort: 'relevance' }, new AbortController().signal)).hits.map((h) => new URL(h.url).pathname);
    assert.deepEqual(await search('albatross'), ['/feed.xml'], 'the entry text is the feed’s');
    // The entry's title is anchor text of the page it links.
    assert.ok((await search('timetable')).includes('/news/ferry'), JSON.stringify(await search('timetable')));
  } finally {
    version.retire();
  }
});
