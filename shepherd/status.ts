/**
 * What the URL database says, read while a shepherd may be writing it
 * (`sherlock status`): a read-only SQLite connection, which WAL lets run
 * beside the one writer without the writer's lock, and sees the last commit.
 * Counting scans the whole table, a second or two at ten million URLs.
 * readUrls lists every row (`sherlock shepherd dump`, Nutch's readdb -dump);
 * UrlSnapshot the rows the Nutch export needs, in URL order, from one commit.
 * checkUrlDb runs SQLite's integrity check (`sherlock shepherd verify`): the
 * shepherd itself meets damage only in the pages a cycle reads, and then
 * stops with SQLite's error naming the file; this finds it anywhere.
 */

import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { ioError, SherlockError } from '../common/errors.js';
import { lockHolder } from '../common/lock.js';
import { META, type CycleReport } from './shepherd.js';
import { countUrls, URL_STATES, urlDbPath, type ResultRow, type UrlDbStats, type UrlState } from './urldb.js';

export interface ShepherdStatus extends UrlDbStats {
  /** PID of the process holding the URL database (shepherd or crawl), if any. */
  runningPid?: number;
  /** The oid the next merge starts from. */
  checkpoint: number;
  lastCycle?: CycleReport & { time: number };
}

/** One URL as `sherlock shepherd dump` prints it. */
export interface UrlListing {
  url: string;
  state: UrlState;
  depth: number;
  /** Unix seconds; null when never fetched, or (next) never again. */
  lastFetch: number | null;
  nextFetch: number | null;
  status: number | null;
  /** MD5 of the body, hex. */
  checksum: string | null;
  redirect: string | null;
}

function openReadOnly(file: string): Database.Database {
  try {
    return new Database(file, { readonly: true, fileMustExist: true, timeout: 5000 });
  } catch (err) {
    throw ioError(err, file, 'opening the URL database');
  }
}

/** Every URL of the database, in URL order (SHERLOCK_IO when there is no database). */
export function* readUrls(state: string): Generator<UrlListing> {
  const file = urlDbPath(state);
  const db = openReadOnly(file);
  try {
    const rows = db
      .prepare<[], { url: string; state: number; depth: number; last_fetch: number | null; next_fetch: number | null; status: number | null; checksum: Buffer | null; redirect: string | null }>(
        `SELECT url, state, depth, last_fetch, next_fetch, status, checksum, redirect FROM urls ORDER BY url`,
      )
      .iterate();
    for (const row of rows) {
      yield {
        url: row.url,
        state: URL_STATES[row.state]!, // the table's CHECK keeps it in range
        depth: row.depth,
        lastFetch: row.last_fetch,
        nextFetch: row.next_fetch,
        status: row.status,
        checksum: row.checksum === null ? null : row.checksum.toString('hex'),
        redirect: row.redirect,
      };
    }
  } catch (err) {
    throw ioError(err, file, 'reading the URL database');
  } finally {
    db.close();
  }
}

/** Every column of a URL row but its ids (schema.ts). */
export interface UrlRowColumns extends ResultRow {
  url: string;
  depth: number;
  first_seen: number;
  weight: number;
}

/** A row whose copy we hold, or whose last fetch failed without one, as the Nutch export's segment needs it. */
export interface DocumentRow {
  url: string;
  /** null: no copy, the failed fetch only. */
  oid: number | null;
  interval: number | null;
  weight: number;
  lastFetch: number | null;
  status: number | null;
  error: number | null;
}

/** A redirect's row: where it points, and the HTTP status that said so. */
export interface RedirectRow {
  target: string;
  url: string;
  status: number | null;
}

/** The rows documents() gives, as SQL and as a test of a row of rows(). */
const DOCUMENT = 'oid IS NOT NULL OR (error IS NOT NULL AND last_fetch IS NOT NULL)';
export function isDocument(row: UrlRowColumns): boolean {
  return row.oid !== null || (row.error !== null && row.last_fetch !== null);
}

/**
 * The URL database as the Nutch export reads it (SHERLOCK_IO when there is
 * none): one read transaction, so that the rows whose copy we hold
 * (documents()) and then every row (rows()) come from the same commit,
 * however long the export takes beside a shepherd writing (and redirects(),
 * for the targets' representative URLs). Each streams in URL order (the
 * redirects in their targets'): SQLite's BINARY collation compares the UTF-8 bytes, then the
 * lengths, which is Hadoop's Text order, what MapFiles need; SQLite sorts in
 * bounded memory, spilling to temporary files (about a second of CPU a
 * million rows more than table order; 0.3 s for the tenth with a copy).
 */
export class UrlSnapshot {
  /** The reads begun: ended by close() (returning a finished one does nothing), as SQLite will not close a connection with a statement stepping. */
  private readonly reads: Generator[] = [];

  private constructor(
    private readonly file: string,
    private readonly db: Database.Database,
  ) {}

  static open(state: string): UrlSnapshot {
    const file = urlDbPath(state);
    const db = openReadOnly(file);
    try {
      db.exec('BEGIN');
    } catch (err) {
      db.close();
      throw ioError(err, file, 'reading the URL database');
    }
    return new UrlSnapshot(file, db);
  }

  /** The rows whose copy we hold, and those whose last fetch failed (a 404, robots.txt, …) without one, in URL order: the rows isDocument() says. */
  documents(): Generator<DocumentRow> {
    type Raw = [string, number | null, number | null, number, number | null, number | null, number | null];
    return this.read(
      `SELECT url, oid, interval, weight, last_fetch, status, error FROM urls WHERE ${DOCUMENT} ORDER BY url`,
      (r: Raw) => ({ url: r[0], oid: r[1], interval: r[2], weight: r[3], lastFetch: r[4], status: r[5], error: r[6] }),
    );
  }

  /** The rows in state redirect that name their target, in target order (then URL order), for the targets' `_repr_`. */
  redirects(): Generator<RedirectRow> {
    type Raw = [string, string, number | null];
    return this.read(
      `SELECT redirect, url, status FROM urls WHERE state = ${URL_STATES.indexOf('redirect')} AND redirect IS NOT NULL ORDER BY redirect, url`,
      (r: Raw) => ({ target: r[0], url: r[1], status: r[2] }),
    );
  }

  rows(): Generator<UrlRowColumns> {
    // The columns named, not *: SQLite's sorter carries less, and no footprint Buffer is made a row (1.3 s of CPU a million rows).
    const columns = 'url, state, depth, first_seen, last_fetch, next_fetch, interval, retries, status, error, checksum, oid, last_modified, etag, weight, redirect';
    type Raw = [string, number, number, number, number | null, number | null, number | null, number, number | null, number | null, Buffer | null, number | null, number | null, string | null, number, string | null];
    return this.read(`SELECT ${columns} FROM urls ORDER BY url`, (r: Raw) => ({
      url: r[0],
      state: r[1],
      depth: r[2],
      first_seen: r[3],
      last_fetch: r[4],
      next_fetch: r[5],
      interval: r[6],
      retries: r[7],
      status: r[8],
      error: r[9],
      checksum: r[10],
      oid: r[11],
      last_modified: r[12],
      etag: r[13],
      weight: r[14],
      redirect: r[15],
    }));
  }

  close(): void {
    for (const read of this.reads) read.return(undefined);
    this.db.close();
  }

  /** Rows as arrays, made into objects by `make`: better-sqlite3 sets an object's properties one by one (1.4 s of CPU a million rows more). */
  private read<Raw extends unknown[], Row>(sql: string, make: (raw: Raw) => Row): Generator<Row> {
    const read = this.stream(sql, make);
    this.reads.push(read);
    return read;
  }

  private *stream<Raw extends unknown[], Row>(sql: string, make: (raw: Raw) => Row): Generator<Row> {
    try {
      for (const raw of this.db.prepare<[], Raw>(sql).raw(true).iterate() as IterableIterator<Raw>) yield make(raw);
    } catch (err) {
      throw ioError(err, this.file, 'reading the URL database');
    }
  }
}

/** The status, or undefined when the state has no URL database yet. */
export function readShepherdStatus(state: string): ShepherdStatus | undefined {
  const file = urlDbPath(state);
  if (!existsSync(file)) return undefined;
  const db = openReadOnly(file);
  try {
    const meta = db.prepare<[string], string | number>(`SELECT value FROM meta WHERE key = ?`).pluck();
    const cycle = meta.get(META.lastCycle);
    const status: ShepherdStatus = {
      ...countUrls(db),
      checkpoint: Number(meta.get(META.checkpoint) ?? 1),
    };
    if (typeof cycle === 'string') status.lastCycle = JSON.parse(cycle) as CycleReport & { time: number };
    const pid = lockHolder(`${file}.lock`);
    if (pid !== undefined) status.runningPid = pid;
    return status;
  } catch (err) {
    throw ioError(err, file, 'reading the URL database');
  } finally {
    db.close();
  }
}

/**
 * `PRAGMA integrity_check`, read-only: one SHERLOCK_CORRUPT_URLDB per problem
 * SQLite lists, placed at the file offset of the page it names. When the
 * check itself stops at a page too damaged to read, each table is checked on
 * its own and a failing one is placed at its root page; a file SQLite cannot
 * open as a database is placed at offset 0. When SQLite finds nothing, the
 * URL rows are checked for a footprint held twice: no index enforces that
 * (the writer's footprint map does, schema.ts version 2), so a row written
 * around sherlock would otherwise go unseen. That check sorts every
 * footprint: about as long as SQLite's own at 10 million URLs.
 */
export function checkUrlDb(state: string): SherlockError[] {
  const file = urlDbPath(state);
  const corrupt = (message: string, offset: number, cause?: unknown) => new SherlockError('SHERLOCK_CORRUPT_URLDB', message, { file, offset }, { cause });
  let db: Database.Database | undefined;
  try {
    db = openReadOnly(file);
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const check = (table?: string): SherlockError[] =>
      (db!.pragma(table === undefined ? 'integrity_check' : `integrity_check(${JSON.stringify(table)})`) as { integrity_check: string }[])
        .map((row) => row.integrity_check.replace(/^\*\*\* in database \w+ \*\*\*\s*/, '').replace(/\s+/g, ' '))
        .filter((line) => line !== 'ok')
        .map((line) => {
          const page = /\bpage (\d+)/i.exec(line);
          return corrupt(line, page === null ? 0 : (Number(page[1]) - 1) * pageSize);
        });
    try {
      const problems = check();
      return problems.length > 0 ? problems : twice(db, file);
    } catch (err) {
      if (!isCorrupt(err)) throw err;
      const tables = db.prepare<[], { name: string; rootpage: number }>(`SELECT name, rootpage FROM sqlite_master WHERE type = 'table' AND rootpage > 0`).all();
      return tables.flatMap(({ name, rootpage }) => {
        try {
          return check(name);
        } catch (tableErr) {
          if (!isCorrupt(tableErr)) throw tableErr;
          return [corrupt(`table ${name}: ${(tableErr as Error).message}`, (rootpage - 1) * pageSize, tableErr)];
        }
      });
    }
  } catch (err) {
    const sqlite = err instanceof SherlockError ? err.cause : err;
    if (isCorrupt(sqlite)) return [corrupt((sqlite as Error).message, 0, sqlite)];
    throw err instanceof SherlockError ? err : ioError(err, file, 'checking the URL database');
  } finally {
    db?.close();
  }
}

/** One SHERLOCK_CORRUPT_URLDB per footprint that more than one row of `urls` holds. */
function twice(db: Database.Database, file: string): SherlockError[] {
  return db
    .prepare<[], { footprint: Buffer; ids: string }>(
      `SELECT footprint, group_concat(id, ', ') AS ids FROM urls GROUP BY footprint HAVING count(*) > 1 ORDER BY min(id)`,
    )
    .all()
    .map(
      ({ footprint, ids }) =>
        new SherlockError('SHERLOCK_CORRUPT_URLDB', `footprint ${footprint.toString('hex')} is held by rows ${ids}; a URL has one row`, { file }),
    );
}

function isCorrupt(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB';
}
