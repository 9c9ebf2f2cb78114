/**
 * The status view (/status) in a real browser (Chromium): opened on a
 * searcher while `sherlock crawl` fetches a slow loopback site into the same
 * state directory, it shows the gatherer fetching and its fetch counter
 * rising, live over the WebSocket. The fourth page is held until the test
 * has read the counter once, so "rising" does not depend on timing.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { launchBrowser, screenshot } from '../helpers/browser.js';
import { startCli } from '../helpers/cli.js';
import { chainSite, startFixture } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';
import { listening } from './net.js';

const PAGES = 12;
/** Each page answers this late, so the crawl lasts seconds. */
const DELAY_MS = 150;

/** Polls `ok` (which reads the page) every 50 ms; fails naming `what` after 30 s. */
async function eventually(what: string, ok: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await ok())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('the status view shows the fetch counter rising during a crawl', { timeout: 180_000 }, async (t) => {
  const state = scratchDir(t);
  let release!: () => void;
  const firstRead = new Promise<void>((resolve) => (release = resolve));
  t.after(() => release()); // a failed assertion must not leave the page held
  const site = await startFixture({
    routes: chainSite(PAGES, async (i) => {
      await new Promise((resolve) => setTimeout(resolve, DELAY_MS));
      if (i === 3) await firstRead;
    }),
  });
  t.after(() => site.close());

  const searcher = startCli(t, ['searcher', 'run', '--state', state, '--listen', '127.0.0.1:0']);
  const base = `http://${await listening(searcher)}`;

  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${site.origin}/p0\n`);
  const crawl = startCli(t, ['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s']);

  const browser = await launchBrowser(t);
  if (browser === undefined) return;
  const page = await browser.newPage();
  await page.goto(`${base}/status`);
  const counter = page.locator('#fetch-count');
  const count = async () => Number((await counter.textContent())!.replace(/,/g, ''));
  await eventually('a first fetch counted', async () => (await count()) > 0);
  const first = await count();
  assert.equal(await page.locator('#gatherer-state').textContent(), 'fetching');
  release();
  await eventually('the counter to rise', async () => (await count()) > first);
  const later = await count();
  assert.ok(later > first, `${later} > ${first}`);
  assert.notEqual(await page.locator('#arc').textContent(), '–');
  assert.equal(await page.locator('#result-cache').textContent(), 'no lookups yet, 0 B of 64.0 MiB');
  await screenshot(t, page, 'sherlock-status-view');

  assert.equal(await crawl.exited, 0, crawl.stderr);
  // The last snapshot says the gatherer stopped, with every page counted.
  await eventually('the view to say stopped', async () => (await page.locator('#gatherer-state').textContent()) === 'stopped');
  assert.equal(await count(), PAGES);
  searcher.child.kill('SIGTERM');
  assert.equal(await searcher.exited, 0, searcher.stderr);
});
