/**
 * URL-database peer: the obvious baseline a shepherd must beat, a plain SQLite
 * table keyed by URL (better-sqlite3, WAL, synchronous=NORMAL), loaded with
 * every distinct link of the corpus in transactions of 1,000 (as a crawler
 * merges the links of fetched pages), then every URL looked up once.
 *
 *   node dist/bench/peers/urldb-worker.js LINKS_FILE DB   → {"urls":N,"insertMs":…,"lookupMs":…}
 */

import { createRequire } from 'node:module';
import { join } from 'node:path';
import { check, run } from '../measure.js';
import { sizeOf } from './engines.js';
import type { Availability, BenchContext, UrlDbEntry, UrlDbResult } from '../parts.js';

function version(): string | undefined {
  try {
    return (createRequire(import.meta.url)('better-sqlite3/package.json') as { version: string }).version;
  } catch {
    return undefined;
  }
}

export const sqliteUrlTable: UrlDbEntry = {
  name: `SQLite table, url PRIMARY KEY (better-sqlite3 ${version() ?? '?'})`,
  how:
    'URL database baseline: `CREATE TABLE urls(url TEXT PRIMARY KEY, state INTEGER, depth INTEGER, next_fetch INTEGER)` in WAL mode ' +
    'with synchronous=NORMAL; every distinct <a href> URL of the corpus inserted (INSERT OR IGNORE) in transactions of 1,000, then each ' +
    'looked up once by url. Size: database and WAL files.',
  async available(): Promise<Availability> {
    return version() === undefined ? { status: 'unavailable', reason: 'better-sqlite3 not installed (npm install)' } : true;
  },
  async load(ctx: BenchContext, dir: string): Promise<UrlDbResult> {
    const db = join(dir, 'urls.sqlite');
    const r = check(
      'url table',
      await run(process.execPath, [join(ctx.distDir, 'peers', 'urldb-worker.js'), ctx.corpus.linksFile, db], { timeoutMs: 1_800_000 }),
    );
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { urls: number; insertMs: number; lookupMs: number };
    return { ...out, sizeBytes: sizeOf(db) + sizeOf(db + '-wal'), peakRss: r.peakRss };
  },
};
