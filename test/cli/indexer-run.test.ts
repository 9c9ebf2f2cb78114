/**
 * `sherlock indexer run` beside crawls of a loopback site: it publishes a
 * first version once buckets exist, and a new one, holding the new pages,
 * after a second crawl stored more; SIGTERM ends it with status 0 and
 * `current` naming a whole version. Its /metrics count the builds.
 */

import assert from 'node:assert/strict';
import { readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { verifyIndexDir } from '../../common/index/manifest.js';
import { runCli, startCli, until } from '../helpers/cli.js';
import { startFixture } from '../helpers/http-fixtures.js';
import { LOOPBACK_CRAWL, linkedPages } from '../helpers/linked-site.js';
import { scratchDir } from '../helpers/paths.js';
import { parseExposition, sampleValue } from '../helpers/prometheus-text.js';

function current(state: string): string | undefined {
  try {
    return readlinkSync(join(state, 'index', 'current'));
  } catch {
    return undefined;
  }
}

test('indexer run publishes a version after a crawl, and a new one holding the pages a later crawl added', async (t) => {
  const site = await startFixture({ address: '127.0.0.60', routes: { ...linkedPages('alpha', 4), ...linkedPages('beta', 6) } });
  t.after(() => site.close());
  const state = scratchDir(t);
  const crawl = async (prefix: string) => {
    const seeds = join(state, `${prefix}.seeds`);
    writeFileSync(seeds, `${site.origin}/${prefix}0\n`);
    const run = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', ...LOOPBACK_CRAWL]);
    assert.equal(run.status, 0, run.stderr);
  };
  await crawl('alpha');
  const indexer = startCli(t, ['indexer', 'run', '--state', state, ...['indexer.poll_interval=100ms', 'indexer.rebuild_documents=1', 'indexer.workers=1', 'indexer.admin_listen=127.0.0.1:0'].flatMap((s) => ['--set', s])]);
  await until('a first index version', () => current(state) !== undefined, 60_000);
  const first = current(state)!;
  const cards = (version: string) => verifyIndexDir(join(state, 'index', version)).counts['cards'];
  assert.equal(cards(first), 4);
  const metricsUrl = /metrics listening .*address=(\S+)/.exec(indexer.stderr)![1]!;
  const scrape = async () => parseExposition(await (await fetch(metricsUrl)).text());
  // The version is published a moment before the daemon hears of it.
  let families = await scrape();
  for (let tries = 0; sampleValue(families, 'sherlock_indexer_builds_total', { result: 'ok' }) !== 1 && tries < 300; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    families = await scrape();
  }
  assert.equal(sampleValue(families, 'sherlock_indexer_builds_total', { result: 'ok' }), 1);
  assert.equal(sampleValue(families, 'sherlock_index_documents'), 4);

  await crawl('beta');
  // Builds may run while the crawl stores: the last one holds every page.
  await until('a version holding both crawls', () => current(state) !== first && cards(current(state)!) === 10, 60_000);
  const second = current(state)!;
  indexer.child.kill('SIGTERM');
  assert.equal(await indexer.exited, 0, indexer.stderr);
  assert.equal(current(state), second);
  assert.match(indexer.stderr, /index version published/);
});
