/**
 * The embeddable widget (searcher/page/widget.js) in Chromium: a page on
 * another origin (a second loopback server) embeds it with one script tag;
 * typing a query and pressing Enter shows results from the searcher's real
 * index in an overlay, the arrows walk them, Escape closes it and gives the
 * focus back; the host page's styles do not reach into it; suggestions
 * come as the user types, what /api/suggest gives, walked with the arrows
 * and chosen with Enter. A page on an origin the searcher does not allow
 * gets no results nor suggestions, and says so.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import type { Page } from 'playwright-core';
import { PoolEngine } from '../../searcher/pool-engine.js';
import { launchBrowser, screenshot } from '../helpers/browser.js';
import { startFixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { buildCli, crawlSite } from '../indexer/site.js';
import { startServer } from './net.js';

/** The page that embeds the widget: its own styles would make every paragraph and link red if they leaked in. */
function hostPage(searcher: () => string): Record<string, RouteHandler> {
  return {
    '/': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html><head><title>Host page</title><style>p, a, li { color: rgb(255, 0, 0) !important; font-size: 40px; }</style></head>
<body><h1>A site of its own</h1><p>Its own paragraph.</p>
<script src="${searcher()}/widget.js" data-name="Baker St" data-site="127.0.4.6" defer></script>
<p id="after">After the box.</p></body></html>`);
    },
  };
}

/** Waits until `ok()` holds, naming what was awaited if it never does. */
async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  const since = Date.now();
  while (!(await ok())) {
    assert.ok(Date.now() - since < 20_000, `waited 20 s for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The focused element inside the widget's shadow root: its tag and text. */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const doc = globalThis as unknown as { document: { querySelector(s: string): { shadowRoot: { activeElement: { tagName: string; textContent: string; id: string } | null } } } };
    const active = doc.document.querySelector('.sherlock-widget').shadowRoot.activeElement;
    return active === null ? '' : `${active.tagName.toLowerCase()}${active.id === '' ? '' : '#' + active.id}:${active.tagName === 'A' ? active.textContent : ''}`;
  });
}

test('the widget on an allowed origin searches, walks results with the keyboard, closes with Escape; a foreign origin is told no', async (t) => {
  const browser = await launchBrowser(t);
  if (browser === undefined) return;
  const state = mkdtempSync(join(tmpdir(), 'sherlock-widget-'));
  t.after(() => rmSync(state, { recursive: true, force: true }));
  // A page whose title and text hold markup as text: the widget must show it as text.
  const odd = '<html><head><title>&lt;b&gt;Odd&lt;/b&gt; gazette</title></head><body><p>A &lt;script&gt;gazette&lt;/script&gt; &lt;img src=x&gt; page.</p></body></html>';
  const origin = await crawlSite(state, { address: '127.0.4.6', extra: { '/odd': odd } });
  await buildCli(state);
  const engine = await PoolEngine.start({ state, threads: 1, caches: { chains: 1 << 20, cards: 1 << 24 }, pollMs: 0 });
  t.after(() => engine.close());

  let searcherUrl = '';
  const allowed = await startFixture({ address: '127.0.4.100', routes: hostPage(() => searcherUrl) });
  t.after(() => allowed.close());
  const foreign = await startFixture({ address: '127.0.4.101', routes: hostPage(() => searcherUrl) });
  t.after(() => foreign.close());
  const { http } = await startServer(t, engine, { listen: '127.0.4.7:0', allowed_origins: [allowed.origin] });
  searcherUrl = http;

  const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
  await page.goto(`${allowed.origin}/`);
  const box = page.locator('.sherlock-widget input[type=search]');
  await box.click();
  await box.pressSequentially('gazette', { delay: 20 });
  await page.keyboard.press('Enter');
  const links = page.locator('.sherlock-widget a.hit');
  await links.first().waitFor({ timeout: 20_000 });
  const hrefs = await links.evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  assert.ok(hrefs.length >= 2, JSON.stringify(hrefs));
  assert.ok(hrefs.every((href) => href?.startsWith(`${origin}/`)), JSON.stringify(hrefs));
  assert.match((await page.locator('.sherlock-widget .status').textContent()) ?? '', /^\d+ results?$/);
  assert.ok((await page.locator('.sherlock-widget .snippet mark').count()) > 0, 'snippets keep their <mark>s');
  assert.ok((await links.allTextContents()).includes('<b>Odd</b> gazette'), 'markup in a title is text');
  assert.match((await page.locator('.sherlock-widget .overlay').textContent()) ?? '', /<script>gazette<\/script> <img src=x>/);
  assert.equal(await page.locator('.sherlock-widget .overlay :is(b, script, img)').count(), 0, 'no element from the index');
  // The host page's red and 40px stop at the shadow root.
  const snippetStyle = await page.locator('.sherlock-widget .snippet').first().evaluate((p) => {
    const s = (globalThis as unknown as { getComputedStyle(e: unknown): { color: string; fontSize: string } }).getComputedStyle(p);
    return [s.color, s.fontSize];
  });
  assert.notEqual(snippetStyle[0], 'rgb(255, 0, 0)');
  assert.equal(snippetStyle[1], '13px');
  await screenshot(t, page, 'sherlock-widget-results');

  const titles = await links.allTextContents();
  await page.keyboard.press('ArrowDown');
  assert.equal(await focused(page), `a:${titles[0]}`);
  await page.keyboard.press('ArrowDown');
  assert.equal(await focused(page), `a:${titles[1]}`);
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowUp');
  assert.equal(await focused(page), 'input#sherlock-q:');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('.sherlock-widget .overlay').isHidden(), true);
  assert.equal(await focused(page), 'input#sherlock-q:');

  // Suggestions as the user types: what /api/suggest gives, walked with the arrows, one chosen with Enter.
  const completions = async (q: string) => ((await (await fetch(`${http}/api/suggest?q=${q}&limit=6`)).json()) as { suggestions: { text: string }[] }).suggestions.map((s) => s.text);
  const typed = 'sh';
  const wanted = await completions(typed);
  assert.ok(wanted.length > 1, JSON.stringify(wanted));
  await box.fill('');
  await box.pressSequentially(typed, { delay: 20 });
  const options = page.locator('.sherlock-widget .suggestion');
  await until(`the suggestions for "${typed}"`, async () => JSON.stringify(await options.allTextContents()) === JSON.stringify(wanted));
  assert.equal(await box.getAttribute('aria-expanded'), 'true');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.deepEqual(await options.evaluateAll((lis) => lis.map((li) => li.getAttribute('aria-selected'))), wanted.map((_, i) => String(i === 1)));
  assert.equal(await box.inputValue(), wanted[1]);
  assert.equal(await box.getAttribute('aria-activedescendant'), await options.nth(1).getAttribute('id'));
  await screenshot(t, page, 'sherlock-widget-suggestions');
  await page.keyboard.press('Enter');
  await until(`the results for "${wanted[1]}"`, async () => (await page.locator('.sherlock-widget .overlay').isVisible()) && /^\d+ results?$/.test((await page.locator('.sherlock-widget .status').textContent()) ?? ''));
  assert.equal(await box.getAttribute('aria-expanded'), 'false');
  assert.equal(await box.inputValue(), wanted[1]);

  const other = await browser.newPage();
  await other.goto(`${foreign.origin}/`);
  await other.locator('.sherlock-widget input[type=search]').fill('gazette');
  await other.keyboard.press('Enter');
  const status = other.locator('.sherlock-widget .status.error');
  await status.waitFor({ timeout: 20_000 });
  assert.match((await status.textContent()) ?? '', new RegExp(`does not answer searches from this site \\(${foreign.origin.replace(/\./g, '\\.')} is not among its allowed origins\\)`));
  assert.equal(await other.locator('.sherlock-widget a.hit').count(), 0);
  assert.equal(await other.locator('.sherlock-widget .suggestion').count(), 0, 'no suggestions either');
  await screenshot(t, other, 'sherlock-widget-refused');
});
