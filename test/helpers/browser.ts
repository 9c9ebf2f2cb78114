/**
 * A real browser for page tests: Debian's Chromium driven by playwright-core
 * (its own browser download is never used), headless, with the flags that
 * keep it off the network (no background requests, updates, sync or QUIC)
 * and a fresh profile directory; closed and removed when the test ends.
 * Screenshots go under $SHERLOCK_SCREENSHOTS (default: the OS temp dir).
 */

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A browser context with a profile of its own; closed when the test ends. */
export async function launchBrowser(t: TestContext): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), 'sherlock-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: FLAGS });
  t.after(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  return context;
}

/** Saves a full-page screenshot as NAME.png and names the file in the test's output. */
export async function screenshot(t: TestContext, page: Page, name: string): Promise<string> {
  const dir = process.env['SHERLOCK_SCREENSHOTS'] ?? tmpdir();
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  t.diagnostic(`screenshot: ${path}`);
  return path;
}
