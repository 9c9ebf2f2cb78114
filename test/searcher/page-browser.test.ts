/**
 * The search page in a real browser (Chromium through playwright-core)
 * against `sherlock demo`'s searcher and its real index: typing shows result
 * cards with <mark>ed words as you type, the address bar follows the search,
 * a site chip filters, the pager pages, back and forward restore what was
 * shown, odd input is shown escaped, a malformed query points at its fault,
 * and with JavaScript off GET /search renders the same cards on the server.
 * Screenshots are saved for a person to look at (their paths are printed as
 * test diagnostics).
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser, screenshotPath } from '../helpers/browser.js';
import { startDemo } from '../helpers/demo.js';

/** What the page shows: the status line and each card's link. */
async function shown(page: Page): Promise<{ status: string; links: string[] }> {
  return {
    status: (await page.locator('#status').textContent()) ?? '',
    links: await page.locator('.hit-title a').evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? '')),
  };
}

/** The page's document as the functions run in the browser use it (this build has no DOM types). */
interface Node {
  value: string;
  href: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
}
declare const document: {
  title: string;
  activeElement: { id: string } | null;
  getElementById(id: string): Node | null;
  querySelector(selector: string): Node | null;
  querySelectorAll(selector: string): ArrayLike<Node>;
};

/** Waits until `ok(arg)`, run in the page, is true (a function, not a string: the page's CSP forbids eval). */
async function until(page: Page, ok: (arg: string) => boolean, arg = ''): Promise<void> {
  await page.waitForFunction(ok, arg, { timeout: 20_000 });
}

/** Waits until the page shows an answer to the query now in the box (not a stale one). */
async function answered(page: Page, q: string): Promise<void> {
  await until(
    page,
    // show() sets the title once the answer for the box's query is drawn.
    (q) => document.getElementById('q')?.value === q && document.title === `${q} – sherlock` && document.getElementById('results-region')?.getAttribute('aria-busy') !== 'true',
    q,
  );
}

test('the search page: instant results with highlights, the query in the address, chips, pages, back and forward, escaping, and without JavaScript', async (t) => {
  const browser = await launchBrowser(t);
  if (browser === undefined) return;
  const demo = await startDemo(t);
  const news = demo.sites.get('Lindenau Gazette')!;
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });

  await page.goto(`${demo.http}/`);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'q', 'the box has focus');
  await page.screenshot({ path: screenshotPath('sherlock-page-front'), fullPage: true });

  // Typing, key by key, as a person does: the cards come without pressing Enter.
  await page.locator('#q').pressSequentially('stone bridge', { delay: 40 });
  await answered(page, 'stone bridge');
  await page.locator('.hit').first().waitFor();
  // Suggestions hang over the results while the box has the focus (suggest-browser.test.ts); leaving the box closes them.
  await page.locator('#q').blur();
  assert.equal(await page.locator('#suggestions').isHidden(), true);
  const typed = await shown(page);
  assert.match(typed.status, /^\d+ results? \(/);
  assert.match((await page.locator('.hit-title').first().textContent()) ?? '', /Stone Bridge/);
  assert.ok((await page.locator('.hit-snippet mark').count()) > 0, 'snippets have <mark>ed words');
  assert.equal(new URL(page.url()).searchParams.get('q'), 'stone bridge', page.url());
  const shot = screenshotPath('sherlock-page-results');
  await page.screenshot({ path: shot, fullPage: true });
  t.diagnostic(`screenshot: ${shot}`);
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: screenshotPath('sherlock-page-results-dark'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'light' });

  // A site chip filters to that site, and the address says so.
  await page.locator('#facets a.chip', { hasText: new URL(news).hostname }).click();
  await page.waitForURL((url) => url.searchParams.get('site') === new URL(news).hostname);
  await until(page, (origin) => Array.from(document.querySelectorAll('.hit-title a')).every((a) => a.href.startsWith(origin)), news);
  const filtered = await shown(page);
  assert.ok(filtered.links.length > 0 && filtered.links.every((l) => l.startsWith(news)), filtered.links.join(' '));
  assert.notEqual(filtered.status, typed.status);
  assert.equal(await page.locator('#facets a.chip.on').count(), 1);

  // Back: the unfiltered answer again; forward: the filtered one.
  await page.goBack();
  await page.waitForURL((url) => !url.searchParams.has('site'));
  await until(page, (n) => document.querySelectorAll('.hit').length === Number(n) && document.querySelector('.chip.on') === null, String(typed.links.length));
  assert.deepEqual((await shown(page)).links, typed.links);
  await page.goForward();
  await page.waitForURL((url) => url.searchParams.has('site'));
  await until(page, () => document.querySelector('.chip.on') !== null);
  assert.deepEqual((await shown(page)).links, filtered.links);

  // A broad query has pages: Next shows results 11–20, back shows 1–10.
  await page.goto(`${demo.http}/`);
  await page.locator('#q').fill('lindenau');
  await answered(page, 'lindenau');
  await page.locator('#pager a[rel="next"]').waitFor();
  const first = await shown(page);
  await page.locator('#pager a[rel="next"]').click();
  await page.waitForURL((url) => url.searchParams.get('page') === '2');
  await until(page, (start) => document.getElementById('results')?.getAttribute('start') === start, '11');
  const second = await shown(page);
  assert.equal(second.links.length, 10);
  assert.ok(second.links.every((l) => !first.links.includes(l)), 'page 2 shows other cards');
  assert.match(second.status, /^Page 2 of /);
  await page.goBack();
  await until(page, (start) => document.getElementById('results')?.getAttribute('start') === start, '1');
  assert.deepEqual((await shown(page)).links, first.links);

  // What the user typed is shown as text, never as markup.
  await page.locator('#q').fill('<b>zzqx</b>');
  await answered(page, '<b>zzqx</b>');
  assert.match((await page.locator('#status').textContent()) ?? '', /^No results for “<b>zzqx<\/b>”/);
  assert.equal(await page.locator('#status b').count(), 0);
  await page.screenshot({ path: screenshotPath('sherlock-page-empty'), fullPage: true });

  // A malformed query says what is wrong and where.
  await page.locator('#q').fill('"stone bridge');
  await answered(page, '"stone bridge');
  await page.locator('#query-error').waitFor();
  assert.match((await page.locator('#status').textContent()) ?? '', /quot|phrase|"/i);
  await page.screenshot({ path: screenshotPath('sherlock-page-error'), fullPage: true });

  // Without JavaScript the server renders the same cards.
  const plain = await browser.newContext({ javaScriptEnabled: false });
  const noJs = await plain.newPage();
  await noJs.goto(`${demo.http}/search?q=kolace`);
  assert.match((await noJs.locator('.hit-title a').first().getAttribute('href')) ?? '', /\/recipes\/kolace$/);
  assert.ok((await noJs.locator('.hit-snippet mark').count()) > 0);
  assert.match((await noJs.locator('#status').textContent()) ?? '', /results? \(/);
  await noJs.locator('#q').fill('svickova');
  await noJs.locator('#search-form button[type="submit"]').click();
  await noJs.waitForURL((url) => url.searchParams.get('q') === 'svickova');
  assert.match((await noJs.locator('.hit-title').first().textContent()) ?? '', /Svíčková na smetaně/);
  const noJsShot = screenshotPath('sherlock-page-nojs');
  await noJs.screenshot({ path: noJsShot, fullPage: true });
  t.diagnostic(`screenshot without JavaScript: ${noJsShot}`);
  await plain.close();
});
