/**
 * The URL-table peer's process (see urldb.ts): the workload of
 * bench/urldb-workload.ts against a plain SQLite table keyed by URL, one JSON
 * line on stdout, the same shape as sherlock's worker (bench/urldb-worker.ts):
 *
 *   node dist/bench/peers/urldb-worker.js DB COUNT SITES
 *
 *   inject  INSERT OR IGNORE of each URL, a batch per transaction
 *   plan    the first PLAN_SIZE rows with state 0 (no order: the table has no
 *           index but the URL's), then an UPDATE of each by URL
 *   merge   an UPDATE of state and next_fetch by URL per result
 */

import { existsSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { INJECT_BATCH, PLAN_SIZE, START, fetchCode, noTime, syntheticUrlBatches, timed } from '../urldb-workload.js';

const [dbFile, countArg, sitesArg] = process.argv.slice(2);
const count = Number(countArg);
const sites = Number(sitesArg);
if (dbFile === undefined || !(count > 0) || !(sites > 0)) {
  process.stderr.write('usage: urldb-worker DB COUNT SITES\n');
  process.exit(2);
}
for (const f of [dbFile, dbFile + '-wal', dbFile + '-shm']) if (existsSync(f)) rmSync(f);
const db = new Database(dbFile);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE urls(url TEXT PRIMARY KEY, state INTEGER NOT NULL, depth INTEGER NOT NULL, next_fetch INTEGER NOT NULL)');
const insert = db.prepare<[string, number, number]>('INSERT OR IGNORE INTO urls(url, state, depth, next_fetch) VALUES (?, 0, ?, ?)');
const firstNew = db.prepare<[number], string>('SELECT url FROM urls WHERE state = 0 LIMIT ?').pluck();
const setState = db.prepare<[number, number, string]>('UPDATE urls SET state = ?, next_fetch = ? WHERE url = ?');

const inject = noTime();
const plan = noTime();
const merge = noTime();
let now = START;
let added = 0;
let depth = 0;
for (const batch of syntheticUrlBatches({ count, sites }, INJECT_BATCH)) {
  added += timed(inject, () =>
    db.transaction(() => {
      let n = 0;
      for (const url of batch) n += insert.run(url, 1 + (depth++ % 4), now).changes;
      return n;
    })(),
  );
  now += 60;
}
const due = timed(plan, () => {
  const urls = firstNew.all(PLAN_SIZE);
  db.transaction(() => {
    for (const url of urls) setState.run(1, now, url);
  })();
  return urls;
});
timed(merge, () =>
  db.transaction(() => {
    due.forEach((url, i) => setState.run(fetchCode(i) === 0 ? 2 : 5, now + 86_400, url));
  })(),
);
db.close();
process.stdout.write(JSON.stringify({ urls: count, added, planned: due.length, inject, plan, merge }) + '\n');
