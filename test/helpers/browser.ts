/**
 * A real browser for page tests: Debian's Chromium (/usr/bin/chromium, which
 * .ci/run installs) driven by playwright-core, never a downloaded browser.
 * The flags keep it headless and off the network it would otherwise call
 * home to; playwright gives each launch a fresh profile directory. The
 * browser closes when the test ends. Screenshots go to $SHERLOCK_SCREENSHOTS
 * (default: the OS temporary directory).
 */

import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Chromium, or undefined (the test skipped) where it is not installed. */
export async function launchBrowser(t: TestContext): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (.ci/run installs it)`);
    return undefined;
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  t.after(() => browser.close());
  return browser;
}

/** Where a screenshot called `name` goes; the directory is made if needed. */
export function screenshotPath(name: string): string {
  const dir = process.env['SHERLOCK_SCREENSHOTS'] ?? tmpdir();
  mkdirSync(dir, { recursive: true });
  return join(dir, `${name}.png`);
}

/** Saves a full-page screenshot as NAME.png and names the file in the test's output. */
export async function screenshot(t: TestContext, page: Page, name: string): Promise<string> {
  const path = screenshotPath(name);
  await page.screenshot({ path, fullPage: true });
  t.diagnostic(`screenshot: ${path}`);
  return path;
}
