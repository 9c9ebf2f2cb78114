/**
 * Where tests find things: the repository root (tests run from dist/), the
 * shared folder beside the checkout (testdata, spec), and scratch directories.
 */

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('repository root not found above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
  return dir;
}

export const repoRoot = findRoot();
export const sharedDir = resolve(process.env['SHERLOCK_SHARED'] ?? join(repoRoot, '..', 'shared'));
export const testdata = (...parts: string[]): string => join(sharedDir, 'testdata', ...parts);
export const cliPath = join(repoRoot, 'dist', 'cli', 'sherlock.js');

/** A fresh directory removed when the test ends (kept when SHERLOCK_KEEP_TMP is set). */
export function scratchDir(t: TestContext, label = 'sherlock-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), label));
  t.after(() => {
    if (process.env['SHERLOCK_KEEP_TMP'] === undefined) rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}
