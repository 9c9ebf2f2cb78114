/**
 * The SQLite FTS5 peer, run as its own process so its peak memory is its own:
 *
 *   node dist/bench/peers/fts5-worker.js build TEXT.tsv DB
 *   node dist/bench/peers/fts5-worker.js search DB QUERIES.tsv PASSES WARMUP
 *
 * build: one FTS5 table (url UNINDEXED, title, body; the default unicode61
 * tokenizer, no stemming), all rows in one transaction with journal and sync
 * off, then FTS5's 'optimize' (merges the index into one b-tree, as Lucene's
 * forceMerge(1)). Prints {"docs":N}.
 *
 * search: the same queries PASSES times after WARMUP untimed passes; each
 * query asks for the 10 best rows by bm25 (`ORDER BY rank`). Words are ANDed,
 * a phrase is an FTS5 phrase. Prints {"latenciesMs":[…],"zeroHits":N,"top":[[URL…]…]},
 * top: each query's hit URLs, best first, from the first (untimed) pass.
 */

import { existsSync, readFileSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { readTextFile } from '../extract.js';
import { parseQueryFile } from '../queries.js';
import { fts5Match } from './syntax.js';

function build(textFile: string, dbFile: string): void {
  for (const f of [dbFile, dbFile + '-wal', dbFile + '-shm', dbFile + '-journal']) if (existsSync(f)) rmSync(f);
  const db = new Database(dbFile);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.exec('CREATE VIRTUAL TABLE docs USING fts5(url UNINDEXED, title, body)');
  const insert = db.prepare('INSERT INTO docs(rowid, url, title, body) VALUES (?, ?, ?, ?)');
  let docs = 0;
  db.transaction(() => {
    for (const d of readTextFile(textFile)) {
      insert.run(d.id + 1, d.url, d.title, d.text);
      docs++;
    }
  })();
  db.exec("INSERT INTO docs(docs) VALUES ('optimize')");
  db.close();
  process.stdout.write(JSON.stringify({ docs }) + '\n');
}

function search(dbFile: string, queryFile: string, passes: number, warmup: number): void {
  const queries = parseQueryFile(readFileSync(queryFile, 'utf8'));
  const db = new Database(dbFile, { readonly: true });
  const stmt = db.prepare('SELECT rowid, url, title FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 10');
  const exprs = queries.map(fts5Match);
  let zeroHits = 0;
  const top: string[][] = [];
  for (const e of exprs) {
    // first warm-up pass, untimed
    const rows = stmt.all(e) as Array<{ url: string }>;
    top.push(rows.map((r) => r.url));
    if (rows.length === 0) zeroHits++;
  }
  for (let w = 1; w < warmup; w++) for (const e of exprs) stmt.all(e);
  const latenciesMs: number[] = [];
  for (let p = 0; p < passes; p++) {
    for (const e of exprs) {
      const t = performance.now();
      stmt.all(e);
      latenciesMs.push(performance.now() - t);
    }
  }
  db.close();
  process.stdout.write(JSON.stringify({ latenciesMs, zeroHits, top }) + '\n');
}

const [mode, a, b, c, d] = process.argv.slice(2);
if (mode === 'build' && a !== undefined && b !== undefined) build(a, b);
else if (mode === 'search' && a !== undefined && b !== undefined) search(a, b, Number(c ?? '3'), Number(d ?? '1'));
else {
  process.stderr.write('usage: fts5-worker build TEXT DB | search DB QUERIES PASSES WARMUP\n');
  process.exit(2);
}
