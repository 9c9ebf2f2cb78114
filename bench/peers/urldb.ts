/**
 * URL-database peer: the obvious baseline a shepherd must beat, a plain SQLite
 * table keyed by URL (better-sqlite3, WAL, synchronous=NORMAL), given the same
 * workload as sherlock (bench/urldb-workload.ts): the synthetic URLs inserted
 * a batch per transaction, then a plan and a merge of 100,000 URLs.
 *
 *   node dist/bench/peers/urldb-worker.js DB URLS SITES   → {"added":N,"inject":{"wallMs":…,"cpuMs":…},…}
 */

import { join } from 'node:path';
import { sizeOf } from './engines.js';
import { installed, packageVersion } from './versions.js';
import { runUrlDbWorker } from '../urldb-run.js';
import type { Availability, BenchContext, UrlDbEntry, UrlDbResult, UrlDbScale } from '../parts.js';

export const sqliteUrlTable: UrlDbEntry = {
  name: `SQLite table, url PRIMARY KEY (better-sqlite3 ${packageVersion('better-sqlite3') ?? '?'})`,
  how:
    'URL database baseline: `CREATE TABLE urls(url TEXT PRIMARY KEY, state INTEGER, depth INTEGER, next_fetch INTEGER)` in WAL mode ' +
    'with synchronous=NORMAL; the synthetic URLs inserted (INSERT OR IGNORE) 100,000 per transaction; plan: the first 100,000 rows with ' +
    'state 0 (no order: no index but the URL\'s), each then updated by url; merge: state and next_fetch of each updated by url, one ' +
    'transaction. Size: database and WAL files.',
  async available(): Promise<Availability> {
    return installed('better-sqlite3', 'npm install');
  },
  async load(ctx: BenchContext, dir: string, scale: UrlDbScale): Promise<UrlDbResult> {
    const db = join(dir, 'urls.sqlite');
    return runUrlDbWorker('url table', join(ctx.distDir, 'peers', 'urldb-worker.js'), db, scale, () => sizeOf(db) + sizeOf(db + '-wal'));
  },
};
