/**
 * The search page on the typed client, in a real browser (Chromium) against
 * a real searcher that wants a token: the page asks for the token when the
 * searcher refuses it (4401) and searches with it once given; typing key by
 * key under a small message rate meets no TOO_MANY_REQUESTS (the client
 * paces); and after the searcher restarts on the same port the page's
 * searches are answered again, without a reload. The status view, on the
 * same client and the token kept for the tab, shows the searcher live.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser, screenshot } from '../helpers/browser.js';
import { figures, serve, useIndex } from './searcher.js';

useIndex();

const TOKEN = 'open-sesame';

/** Waits until the page has drawn the answer to `q` (the page titles itself with the query it shows). */
async function answered(page: Page, q: string, timeout = 20_000): Promise<void> {
  await page.waitForFunction((q) => (globalThis as unknown as { document: { title: string } }).document.title === `${q} – sherlock`, q, { timeout });
}

test('the page asks for a refused token, paces typing under the limits, and searches again after the searcher restarts', async (t) => {
  const browser = await launchBrowser(t);
  if (browser === undefined) return;
  // Seven keys 170 ms apart are seven searches in 1.2 s, past 2 + 2 × 1.2 messages.
  const limits = { message_rate: 2, message_burst: 2 };
  const first = await serve(t, limits, TOKEN);
  const address = first.address;
  const port = Number(address.split(':').pop());
  const page = await browser.newPage();

  await page.goto(`http://${address}/?q=detective`);
  await page.locator('#token-form').waitFor({ state: 'visible' });
  await page.locator('#token').fill(TOKEN);
  await page.locator('#token-form button').click();
  await answered(page, 'detective');
  await page.locator('.hit-title a', { hasText: 'Sherlock Holmes Home' }).waitFor();
  assert.equal(await page.locator('#token-form').isHidden(), true);
  await screenshot(t, page, 'sherlock-client-page-token');

  // A search for each key (slower than the debounce), more a second than message_rate allows.
  await page.locator('#q').fill('');
  await page.locator('#q').pressSequentially('gazette', { delay: 170 });
  await answered(page, 'gazette');
  await page.locator('.hit-title a', { hasText: 'Popular' }).waitFor();
  assert.equal(new URL(page.url()).searchParams.get('q'), 'gazette');
  const seen = await figures(t, first, { token: TOKEN });
  assert.equal(seen.rate_limited, 0, JSON.stringify(seen));
  // The token's search, and of the typing's at least the first and the last: those waiting for a token superseded here.
  assert.ok(seen.searches >= 3, `searched: ${seen.searches}`);

  await first.close();
  await serve(t, limits, TOKEN, port);
  await page.locator('#q').fill('twins');
  await answered(page, 'twins');
  assert.equal(await page.locator('.hit-title a', { hasText: 'Popular' }).count(), 0, 'the answer to twins, not the gazette');
  assert.equal(await page.locator('#token-form').isHidden(), true, 'the token was kept');
  await screenshot(t, page, 'sherlock-client-page-restarted');

  // The same tab: the token the search page keeps is the status view's too.
  await page.goto(`http://${address}/status`);
  await page.locator('#connection', { hasText: 'Live' }).waitFor();
  await page.locator('#index-docs', { hasText: /^[1-9]/ }).waitFor();
});
