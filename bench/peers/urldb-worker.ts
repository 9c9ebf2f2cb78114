/**
 * The URL-table peer's process (see urldb.ts):
 *   node dist/bench/peers/urldb-worker.js LINKS_FILE DB
 */

import { existsSync, readFileSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';

const [linksFile, dbFile] = process.argv.slice(2);
if (linksFile === undefined || dbFile === undefined) {
  process.stderr.write('usage: urldb-worker LINKS_FILE DB\n');
  process.exit(2);
}
const urls = readFileSync(linksFile, 'utf8')
  .split('\n')
  .filter((l) => l !== '');
for (const f of [dbFile, dbFile + '-wal', dbFile + '-shm']) if (existsSync(f)) rmSync(f);
const db = new Database(dbFile);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE urls(url TEXT PRIMARY KEY, state INTEGER NOT NULL, depth INTEGER NOT NULL, next_fetch INTEGER NOT NULL)');
const insert = db.prepare('INSERT OR IGNORE INTO urls(url, state, depth, next_fetch) VALUES (?, 0, ?, ?)');
const batch = db.transaction((list: readonly string[], base: number) => {
  list.forEach((u, i) => insert.run(u, (base + i) % 7, base + i));
});
const t0 = performance.now();
for (let i = 0; i < urls.length; i += 1000) batch(urls.slice(i, i + 1000), i);
const insertMs = performance.now() - t0;
const lookup = db.prepare('SELECT state, depth, next_fetch FROM urls WHERE url = ?');
const t1 = performance.now();
let found = 0;
for (const u of urls) if (lookup.get(u) !== undefined) found++;
const lookupMs = performance.now() - t1;
db.close();
if (found !== urls.length) {
  process.stderr.write(`urldb: ${urls.length - found} URLs not found again\n`);
  process.exit(1);
}
process.stdout.write(JSON.stringify({ urls: urls.length, insertMs, lookupMs }) + '\n');
