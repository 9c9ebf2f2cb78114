/**
 * The search page's suggestions (searcher/page/suggest-box.js through the
 * typed client) in Chromium, against a searcher on a real index: typing
 * shows what the `suggest` message gives, as an ARIA combobox; the arrows
 * walk the options (the box shows the one reached), Escape gives back what
 * was typed, Alt+Down opens the list again, Enter and a click search the
 * option chosen (the address bar follows); with the list closed the arrows
 * walk the results as before.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import type { Page } from 'playwright-core';
import { PoolEngine } from '../../searcher/pool-engine.js';
import { launchBrowser, screenshot } from '../helpers/browser.js';
import { buildCli, crawlSite } from '../indexer/site.js';
import { startServer } from './net.js';

/** The page's document as the functions run in the browser use it (this build has no DOM types). */
declare const document: { title: string; activeElement: { id: string; className: string; textContent: string | null } | null };

async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  const since = Date.now();
  while (!(await ok())) {
    assert.ok(Date.now() - since < 20_000, `waited 20 s for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until the page shows the results of `q` (show() sets the title once they are drawn). */
function answered(page: Page, q: string): Promise<void> {
  return until(`the results of "${q}"`, async () => (await page.title()) === `${q} – sherlock` && (await page.locator('#results-region').getAttribute('aria-busy')) !== 'true');
}

test('the page suggests as you type: an ARIA combobox walked with the keys, chosen with Enter or a click', async (t) => {
  const browser = await launchBrowser(t);
  if (browser === undefined) return;
  const state = mkdtempSync(join(tmpdir(), 'sherlock-suggest-page-'));
  t.after(() => rmSync(state, { recursive: true, force: true }));
  await crawlSite(state, { address: '127.0.4.40' });
  await buildCli(state);
  const engine = await PoolEngine.start({ state, threads: 1, caches: { chains: 1 << 20, cards: 1 << 24 }, pollMs: 0 });
  t.after(() => engine.close());
  const { http } = await startServer(t, engine, { listen: '127.0.4.41:0' });
  const completions = async (q: string) => ((await (await fetch(`${http}/api/suggest?q=${encodeURIComponent(q)}&limit=8`)).json()) as { suggestions: { text: string }[] }).suggestions.map((s) => s.text);

  const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
  await page.goto(`${http}/`);
  const box = page.locator('#q');
  const options = page.locator('#suggestions [role=option]');
  assert.deepEqual([await box.getAttribute('role'), await box.getAttribute('aria-controls'), await box.getAttribute('aria-expanded')], ['combobox', 'suggestions', 'false']);

  const typed = 'sh';
  const wanted = await completions(typed);
  assert.ok(wanted.length > 1, JSON.stringify(wanted));
  await box.pressSequentially(typed, { delay: 30 });
  await until(`the suggestions for "${typed}"`, async () => JSON.stringify(await options.allTextContents()) === JSON.stringify(wanted));
  assert.equal(await box.getAttribute('aria-expanded'), 'true');
  await answered(page, typed);

  // Down twice, up once: the first option, shown in the box; Escape gives back what was typed.
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowUp');
  assert.deepEqual(await options.evaluateAll((lis) => lis.map((li) => li.getAttribute('aria-selected'))), wanted.map((_, i) => String(i === 0)));
  assert.equal(await box.inputValue(), wanted[0]);
  assert.equal(await box.getAttribute('aria-activedescendant'), await options.first().getAttribute('id'));
  await screenshot(t, page, 'sherlock-page-suggestions');
  await page.keyboard.press('Escape');
  assert.equal(await box.inputValue(), typed);
  assert.equal(await box.getAttribute('aria-expanded'), 'false');
  assert.equal(await box.getAttribute('aria-activedescendant'), null);
  assert.equal(new URL(page.url()).searchParams.get('q'), typed, 'Escape searched nothing');

  // Alt+Down opens the list again; Down then Enter searches the option reached.
  await page.keyboard.press('Alt+ArrowDown');
  assert.equal(await box.getAttribute('aria-expanded'), 'true');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await answered(page, wanted[1]!);
  assert.equal(new URL(page.url()).searchParams.get('q'), wanted[1]);
  assert.equal(await box.getAttribute('aria-expanded'), 'false');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'q', 'the focus stays in the box');

  // With the list closed the arrows walk the results, as before.
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.evaluate(() => document.activeElement?.className ?? ''), '');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), await page.locator('.hit-title a').first().textContent());

  // A click chooses too.
  await box.fill('');
  await box.pressSequentially('cre', { delay: 30 });
  const creme = await completions('cre');
  assert.ok(creme.length > 0, JSON.stringify(creme));
  await until('the suggestions for "cre"', async () => JSON.stringify(await options.allTextContents()) === JSON.stringify(creme));
  await options.last().click();
  await answered(page, creme.at(-1)!);
  assert.equal(await box.inputValue(), creme.at(-1));
});
