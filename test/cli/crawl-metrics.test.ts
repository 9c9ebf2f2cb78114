/**
 * /metrics of a crawl (gatherer and shepherd in one process) on its admin
 * listener: scraped before the first page is answered and again once five
 * pages are stored, the text parses strictly and the fetch counters, bytes,
 * latency histogram and shepherd cycles have moved. The first page is held
 * until the first scrape, so the order does not depend on timing.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startCli, until } from '../helpers/cli.js';
import { chainSite, startFixture } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';
import { parseExposition, sampleValue } from '../helpers/prometheus-text.js';

const PAGES = 8;

async function scrape(url: string): Promise<ReturnType<typeof parseExposition>> {
  const response = await fetch(url);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(await response.text());
}

test('crawl serves /metrics on gatherer.admin_listen and its fetch counters move', { timeout: 120_000 }, async (t) => {
  const state = scratchDir(t);
  let release!: () => void;
  const firstScraped = new Promise<void>((resolve) => (release = resolve));
  t.after(() => release()); // a failed assertion must not leave the page held
  const site = await startFixture({ routes: chainSite(PAGES, (i) => (i === 0 ? firstScraped : Promise.resolve())) });
  t.after(() => site.close());
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${site.origin}/p0\n`);
  const sets = ['gatherer.allow_private_addresses=true', 'gatherer.min_delay=0s', 'gatherer.admin_listen=127.0.0.1:0'].flatMap((s) => ['--set', s]);
  const crawl = startCli(t, ['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--json', ...sets]);
  await until('the metrics listener', () => /metrics listening .*address=(\S+)/.test(crawl.stderr));
  const url = /metrics listening .*address=(\S+)/.exec(crawl.stderr)![1]!;

  const first = await scrape(url);
  assert.equal(sampleValue(first, 'sherlock_gatherer_fetches_total', { result: 'ok' }), undefined);
  assert.equal(sampleValue(first, 'sherlock_gatherer_fetched_bytes_total'), 0);
  assert.ok(sampleValue(first, 'process_cpu_seconds_total')! > 0);
  release();
  // /p5 is asked for once /p4 was stored and merged: p0 to p4 are counted.
  await until('the sixth page', () => site.requests.some((r) => r.path === '/p5'));
  const second = await scrape(url);
  assert.ok(sampleValue(second, 'sherlock_gatherer_fetches_total', { result: 'ok' })! >= 5);
  assert.ok(sampleValue(second, 'sherlock_gatherer_fetched_bytes_total')! > 0);
  assert.ok(sampleValue(second, 'sherlock_gatherer_fetch_duration_seconds_count')! >= 5);
  assert.equal(sampleValue(second, 'sherlock_gatherer_robots_fetches_total', { result: 'ok' }), 1);
  assert.equal(sampleValue(second, 'sherlock_gatherer_hosts'), 1);
  assert.ok(sampleValue(second, 'sherlock_shepherd_cycles_total')! > (sampleValue(first, 'sherlock_shepherd_cycles_total') ?? 0));
  assert.ok(sampleValue(second, 'sherlock_shepherd_merged_total')! >= 5);
  assert.notEqual(sampleValue(second, 'sherlock_shepherd_urls', { state: 'ok' }), undefined);

  assert.equal(await crawl.exited, 0, crawl.stderr);
  assert.equal((JSON.parse(crawl.stdout) as { outcomes: Record<string, number> }).outcomes['ok'], PAGES);
  await assert.rejects(fetch(url), 'the listener closes with the crawl');
});
