/**
 * The URL database's schema (`<state>/shepherd/urls.sqlite`): the DDL as an
 * ordered list of migrations, the runner that applies them on open, and the
 * few queries whose speed depends on an index, kept beside that index (a test
 * checks SQLite's plan for them). urldb.ts owns the meaning of the columns;
 * this file owns their shape.
 *
 * Self-description (STYLE 3), in the 100-byte SQLite header:
 *   offset 68  application_id = 0x5348524c ("SHRL"): a sherlock URL database
 *   offset 60  user_version   = the schema version, the number of migrations
 *              applied; 0 only for a new, empty file
 *
 * Migrations: MIGRATIONS[i] takes the schema from version i to i + 1. Each is
 * applied in its own transaction together with the new user_version, so a
 * crash during an upgrade leaves the file at the previous version, whole, and
 * the next open applies the step again. A step is never edited once released;
 * a change is a new step appended to the list. Opening a file whose version is
 * newer than the code is refused (an older sherlock must not write rows whose
 * meaning it does not know), as is a file that is not ours.
 */

import type Database from 'better-sqlite3';
import { SherlockError } from '../common/errors.js';

export const APPLICATION_ID = 0x5348524c;

export interface Migration {
  /** What the step does, for the log. */
  summary: string;
  sql: string;
}

/**
 * Version 1. Times are Unix seconds, intervals seconds. Tables are STRICT, so a
 * value of the wrong type is refused rather than stored.
 *
 * sites — one row per site (scheme://host[:port], as urlParts().site):
 *   id         INTEGER  PRIMARY KEY, referenced by urls.site_id
 *   site       TEXT     UNIQUE, "https://example.com:8443"
 *   footprint  BLOB 8   siteFootprint(): the first 8 bytes of every footprint of the site
 *   urls       INTEGER  rows in urls of this site (kept by urldb.ts, checked against max_urls)
 *   max_urls   INTEGER  budget; NULL: shepherd.max_urls_per_site
 *   max_depth  INTEGER  budget; NULL: shepherd.max_depth
 *   delay_ms   INTEGER  politeness override for the planner; NULL: gatherer.min_delay
 *   created    INTEGER  when the first URL of the site was seen
 *
 * urls — one row per URL, in the order first seen (the rowid, `id`, only
 * grows). A batch of new URLs is appended at the end of the table. Version 1
 * found rows by footprint through the unique index urls_footprint, the one
 * structure that took random inserts; version 2 drops it, and UrlDb finds
 * rows through its footprint map in memory (footprint-map.ts; figures for
 * each layout in docs/decisions.md, "Shepherd"):
 *   id             INTEGER  PRIMARY KEY: rowid, first-seen order (rows are never deleted)
 *   footprint      BLOB 16  unique (UrlDb checks before it inserts): site half (8) + path-and-query half (8)
 *   url            TEXT     canonical URL
 *   site_id        INTEGER  → sites.id
 *   state          INTEGER  UrlState (urldb.ts): 0 new … 8 disallowed
 *   depth          INTEGER  hops from a seed (seeds 0)
 *   first_seen     INTEGER  when first injected or linked
 *   last_fetch     INTEGER  time of the last fetch result; NULL never fetched
 *   next_fetch     INTEGER  when due again; NULL: not scheduled (new, gone, …)
 *   interval       INTEGER  adaptive refetch interval; NULL before the first success
 *   retries        INTEGER  temporary errors in a row
 *   status         INTEGER  HTTP status of the last result; NULL none (DNS, connect, …)
 *   error          INTEGER  gatherer code of the last result when an error; NULL otherwise
 *   checksum       BLOB 16  MD5 of the body of the copy we have
 *   oid            INTEGER  bucket oid of the copy we have
 *   last_modified  INTEGER  Last-Modified of that copy, Unix seconds
 *   etag           TEXT     ETag of that copy, as sent
 *   weight         REAL     static weight from the indexer (higher = more important); 0 unknown
 *   redirect       TEXT     canonical redirect target when state is redirect
 *
 * meta — key/value: checkpoints (the bucket oid merged up to), written in the
 * same transaction as the rows they cover.
 *
 * Indexes, both partial, so each holds only the rows
 * the planner looks for (and the rowid, which is how the planner reads on):
 *   urls_new      (weight DESC, depth, id) WHERE state = 0
 *     The new-URL band in plan order, read front to back and left as soon as
 *     the batch is full: planning never sorts and never touches rows it does
 *     not take or skip. id is first-seen order, so new rows go to the end of
 *     their (weight, depth) group: a handful of insertion points, not random
 *     pages of a 10-million-row index; and an entry is ~12 bytes.
 *   urls_refresh  (next_fetch, weight, depth) WHERE next_fetch IS NOT NULL
 *     Scheduled rows by due time; `next_fetch <= now` is a range at its
 *     front, and weight and depth are there so the planner can rank the due
 *     rows without visiting the table. Rows not scheduled (new, gone,
 *     disallowed) are not in it.
 * An index on (state, next_fetch) over every row would hold 10 million
 * entries of which the planner wants the few due; and state alone cannot say
 * "due", since an ok row is due only once next_fetch has passed.
 */
const V1 = `
CREATE TABLE sites (
  id         INTEGER PRIMARY KEY,
  site       TEXT    NOT NULL UNIQUE,
  footprint  BLOB    NOT NULL CHECK (length(footprint) = 8),
  urls       INTEGER NOT NULL DEFAULT 0,
  max_urls   INTEGER,
  max_depth  INTEGER,
  delay_ms   INTEGER,
  created    INTEGER NOT NULL
) STRICT;
CREATE INDEX sites_footprint ON sites (footprint);

CREATE TABLE urls (
  id             INTEGER PRIMARY KEY,
  footprint      BLOB    NOT NULL CHECK (length(footprint) = 16),
  url            TEXT    NOT NULL,
  site_id        INTEGER NOT NULL REFERENCES sites (id),
  state          INTEGER NOT NULL CHECK (state BETWEEN 0 AND 8),
  depth          INTEGER NOT NULL,
  first_seen     INTEGER NOT NULL,
  last_fetch     INTEGER,
  next_fetch     INTEGER,
  interval       INTEGER,
  retries        INTEGER NOT NULL DEFAULT 0,
  status         INTEGER,
  error          INTEGER,
  checksum       BLOB,
  oid            INTEGER,
  last_modified  INTEGER,
  etag           TEXT,
  weight         REAL    NOT NULL DEFAULT 0,
  redirect       TEXT
) STRICT;
CREATE UNIQUE INDEX urls_footprint ON urls (footprint);
CREATE INDEX urls_new ON urls (weight DESC, depth, id) WHERE state = 0;
CREATE INDEX urls_refresh ON urls (next_fetch, weight, depth) WHERE next_fetch IS NOT NULL;

CREATE TABLE meta (
  key    TEXT NOT NULL PRIMARY KEY,
  value  ANY
) STRICT;
`;

/**
 * Version 2: rows are found by footprint through UrlDb's footprint map
 * (footprint-map.ts), built in memory from the table, not through
 * urls_footprint, whose random inserts were most of the cost of a new URL
 * at 10 million rows. Footprints stay unique because the one writer checks
 * the map before every insert.
 */
const V2 = `DROP INDEX urls_footprint;`;

export const MIGRATIONS: readonly Migration[] = [
  { summary: 'sites, urls and meta tables; planner indexes', sql: V1 },
  { summary: 'URLs found by footprint in memory: urls_footprint dropped', sql: V2 },
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** New URLs in plan order (covered by urls_new: no table access, no sort). */
export const DUE_NEW_SQL = `SELECT id, weight, depth FROM urls WHERE state = 0 ORDER BY weight DESC, depth, id`;

/** Scheduled URLs due at ?, most overdue first (covered by urls_refresh). */
export const DUE_REFRESH_SQL = `SELECT id, next_fetch, weight, depth FROM urls WHERE next_fetch <= ? ORDER BY next_fetch`;

function refuse(file: string, message: string): SherlockError {
  // No code says "a file from a newer or foreign program"; SHERLOCK_IO with the
  // reason is the nearest (see the module comment of urldb.ts).
  return new SherlockError('SHERLOCK_IO', message, { file });
}

/**
 * Brings the open database at `file` up to SCHEMA_VERSION, one transaction per
 * step; returns the version it found. Throws SHERLOCK_IO for a file that is not
 * a sherlock URL database or is newer than this code.
 */
export function migrate(db: Database.Database, file: string): number {
  const found = db.pragma('user_version', { simple: true }) as number;
  const appId = db.pragma('application_id', { simple: true }) as number;
  if (found === 0) {
    const objects = db.prepare(`SELECT count(*) FROM sqlite_schema`).pluck().get() as number;
    if (objects > 0 || appId !== 0) throw refuse(file, 'not a sherlock URL database (user_version 0 but the file holds tables)');
  } else if (appId !== APPLICATION_ID) {
    throw refuse(file, `not a sherlock URL database (application_id 0x${appId.toString(16)})`);
  }
  if (found > SCHEMA_VERSION) {
    throw refuse(file, `URL database schema version ${found} is newer than this sherlock knows (${SCHEMA_VERSION}); run a newer sherlock or restore a database it wrote`);
  }
  for (let version = found; version < SCHEMA_VERSION; version++) {
    const step = MIGRATIONS[version]!;
    db.transaction(() => {
      db.exec(step.sql);
      if (version === 0) db.pragma(`application_id = ${APPLICATION_ID}`);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
  return found;
}
