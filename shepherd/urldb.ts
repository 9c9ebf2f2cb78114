/**
 * The shepherd's URL database, `<state>/shepherd/urls.sqlite` (DESIGN §5;
 * sherlock-original §2 "Refetch", §3): every URL the crawl knows, keyed by its
 * 16-byte footprint, with its state, depth, refetch schedule and what the last
 * fetch said; the sites with their budgets; checkpoints. The table layout and
 * the migrations are in schema.ts. A URL's row is found through the footprint
 * map (footprint-map.ts): built from the table at open (~7 s and 128 MiB at
 * 10 million URLs, so a daemon has it before it reports ready), and kept up
 * to date by this writer.
 *
 * Access. One writer: open() takes `urls.sqlite.lock` (common/lock.ts) and
 * holds it until close(); the site counts and the footprint map kept here
 * are right only because no other process writes (readers such as
 * status.ts read the tables as they are). SQLite in WAL mode, synchronous=NORMAL, foreign keys
 * on. Every bulk operation (inject, addLinks, recordResults, markQueued,
 * feedback) is one transaction of prepared statements; `transaction(fn)` makes
 * one around several calls, and calls inside it join it. So a merge step writes
 * its rows and its checkpoint together:
 *
 *   db.transaction(() => { db.recordResults(results, now); db.setMeta('bucket_checkpoint', next); });
 *
 * Speed. Rows are appended in first-seen order (schema.ts), and a new URL
 * is known to be new by a probe of the footprint map, so no B-tree takes
 * inserts all over it. Adding URLs is two halves: the JavaScript (canonical
 * form, footprint, site, hash order) makes a PreparedBatch (url-batch.ts),
 * then this thread inserts it. injectAll does the first half of the next
 * batch in a worker thread while this thread inserts the current one, so on
 * two cores the insert is the critical path. docs/decisions.md ("Shepherd")
 * has the figures.
 *
 * Crash. kill -9 loses nothing committed (the WAL is in the page cache); a
 * power loss may lose the last commits (synchronous=NORMAL syncs the WAL at
 * checkpoints), never half of one: data and checkpoint go back together, and
 * the merge reads the buckets after the checkpoint again. A transaction that
 * throws is rolled back and the site cache dropped.
 *
 * States (column `state`, the index in URL_STATES, stored: never renumber;
 * the name is the API's):
 *   0 new           known, never fetched, not yet planned
 *   1 queued        handed to the gatherer (in a plan); planned again after
 *                   requeue_after if no result comes back (a lost plan)
 *   2 ok            last fetch 2xx (code 0)
 *   3 not_modified  last fetch 304 (code 3; 4 "unchanged" too)
 *   4 redirect      last fetch 3xx (code 1); `redirect` holds the target
 *   5 error         last fetch failed; due again at next_fetch
 *   6 gone          404 or 410 twice in a row; never fetched again
 *   7 duplicate     the indexer says another URL has this content; fetched
 *                   again max_refetch after its last fetch (its content may
 *                   have changed, or its twin gone), then as any fetched row
 *   8 disallowed    robots.txt forbids it (code 2304); not fetched again
 *
 * Results (recordResult; codes as in gatherer/outcome.ts, times of the fetch):
 *   code               state         next_fetch                 interval
 *   0                  ok            time + interval            none yet: initial_refetch;
 *                                                               checksum same: × 1.5;
 *                                                               checksum changed: × 0.5;
 *                                                               no checksum to compare: kept
 *   3, 4               not_modified  time + interval            × 1.5 (initial when none)
 *   1                  redirect      time + interval            same target: × 1.5;
 *                                                               other or first: × 0.5 (initial)
 *   2404, 2410 (first) error         time + retry_delay         kept
 *   2404, 2410 after   gone          never                      kept
 *     2404 or 2410
 *   2304               disallowed    never                      kept
 *   2308 (taken down,  not fetched: a queued row goes back to new when never
 *     no request)      fetched, else stays queued due at once (a lost plan);
 *                      anything else is kept, last_fetch too. So a takedown
 *                      lifted lets the next plan take it, and until then
 *                      due() passes it over like any row a takedown hides.
 *   1000–1999          error         retries + 1 ≤ max_retries: kept
 *                                    time + max(retry_delay × 2^(retries − 1), Retry-After);
 *                                    beyond: given up, code + 1000 recorded,
 *                                    time + max_refetch
 *   any other          error         time + max_refetch         kept
 * Intervals stay within [min_refetch, max_refetch], a site rule's where one
 * sets them (common/site-rules.ts). A success resets retries;
 * errors keep the copy we have (oid, checksum, validators) so a refetch can
 * still be conditional. A result not newer than the row's last fetch is
 * ignored (two fetches of one URL are never a second apart: the gatherer's
 * retries wait a minute), so a batch applied twice changes nothing. A
 * result for a URL not in the database (fetched by `gatherer add`) adds it at
 * depth 0, outside the site's budget: it has been fetched already.
 * An archived result (a capture `sherlock import archive` took from another
 * tool's archive) moves the row as any result does but plans nothing the
 * crawl had not: on a row it adds, or one not planned before (gone,
 * disallowed, or known only from archives), next_fetch stays empty, so an
 * imported collection is searchable without its live sites being fetched.
 * refetchNow (`sherlock shepherd refetch`) makes such rows due like any fetched row.
 *
 * Planning (due): two priority bands, the original's refresh band before the
 * normal one; plan priorities are band × 10^9 + rank.
 *   refresh  rows with next_fetch ≤ now (ok, not_modified, redirect, error
 *            with retries left or given up long enough ago, lost queued ones),
 *            taken most overdue first in windows of max(2 × limit, 1024) rows,
 *            each window ranked by weight (descending), depth, lateness.
 *            After a long stop the oldest are refreshed first and planning
 *            costs one window, not a sort of everything due.
 *   new      state new, by weight (descending), depth, then first seen
 *            (id; a batch's new rows get their ids in hash order, so its
 *            sites are interleaved), read from the urls_new index in that
 *            order until the batch is full.
 * At most `perSite` URLs of one site are taken in one call. Rows not taken
 * stay as they are; markQueued(footprints) after the plan file is written
 * takes them out of the bands (a crash between the two plans them twice,
 * which the gatherer survives; the other order could lose them until
 * requeue_after).
 *
 * Errors: SHERLOCK_BAD_URL for an unusable result URL; SHERLOCK_LOCKED when
 * another process has the database open; SHERLOCK_IO for SQLite failures, and
 * for a file that is not a sherlock URL database or was written by a newer
 * sherlock (no code names "format from the future": the bucket, queue and
 * plan files say SHERLOCK_CORRUPT_* for an unknown version, and there is no
 * SHERLOCK_CORRUPT_* for this file, so SHERLOCK_IO with the reason).
 */

import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { SherlockError, ioError } from '../common/errors.js';
import { acquireLock, type Lock } from '../common/lock.js';
import { logger } from '../common/log.js';
import { SiteRules } from '../common/site-rules.js';
import { PRIORITY_BAND, type PlanEntry } from '../common/gather/plan-file.js';
import { TakedownSet } from '../common/takedowns.js';
import { canonicalOrNone, canonicalUrl, footprint as footprintOf, siteFootprint, urlParts, type UrlParts } from '../common/url.js';
import { shepherdConfig, type ShepherdConfig } from './config.js';
import { FootprintMap, MAX_ROW_ID, footprintKey } from './footprint-map.js';
import { DUE_NEW_SQL, DUE_REFRESH_SQL, SCHEMA_VERSION, migrate } from './schema.js';
import { BatchReader, SiteHalves, prepareBatch, type BatchData, type BatchRequest } from './url-batch.js';
import { BatchThread, fitsThread, urlUnits } from './url-batch-thread.js';

const log = logger('shepherd');

export const URL_STATES = ['new', 'queued', 'ok', 'not_modified', 'redirect', 'error', 'gone', 'duplicate', 'disallowed'] as const;
export type UrlState = (typeof URL_STATES)[number];

const NEW = 0;
const QUEUED = 1;
const OK = 2;
const NOT_MODIFIED = 3;
const REDIRECT = 4;
const ERROR = 5;
const GONE = 6;
const DUPLICATE = 7;
const DISALLOWED = 8;
/** The states of a URL fetched at least once, not set aside by the indexer. */
const FETCHED = [OK, NOT_MODIFIED, REDIRECT, ERROR, GONE, DUPLICATE, DISALLOWED].join(', ');

/** Gatherer codes that steer the state machine (gatherer/outcome.ts; numbers only, parts do not import each other). */
const CODE_OK = 0;
const CODE_REDIRECT = 1;
const CODE_NOT_MODIFIED = 3;
const CODE_UNCHANGED = 4;
const CODE_ROBOTS = 2304;
const CODE_TAKEN_DOWN = 2308;
const CODE_NOT_FOUND = 2404;
const CODE_GONE = 2410;

const GROW = 1.5;
const SHRINK = 0.5;
/** Above this many cached sites the cache is emptied between transactions (memory stays bounded). */
const SITE_CACHE_LIMIT = 200_000;
/** At this many remembered URLs (UrlDb.known) the memory is emptied before the next one: bounded as it fills, not between transactions (a batch of 100,000 injected URLs doubled it), and small (recent links are the ones met again). */
const KNOWN_CACHE_LIMIT = 25_000;

/** The [shepherd] keys the database uses; durations in ms and sizes in bytes, as the config gives them. */
export type UrlDbSettings = Pick<
  ShepherdConfig,
  'max_depth' | 'max_urls_per_site' | 'initial_refetch' | 'min_refetch' | 'max_refetch' | 'retry_delay' | 'max_retries' | 'requeue_after' | 'db_cache'
>;

export interface InjectEntry {
  url: string;
  /** Hops from a seed; 0 when absent. */
  depth?: number;
  /** A base URL a relative `url` is resolved against (a sitemap's, say). */
  source?: string;
}

/** One transaction's worth of injectAll: entries and the time they are first seen. */
export interface InjectBatch {
  entries: readonly InjectEntry[];
  now: number;
}

export interface InjectCounts {
  added: number;
  /** Already in the database. */
  known: number;
  /** Not added: no canonical form, or over the site's max_urls or max_depth. */
  refused: number;
}

/** What one fetch came to; shepherd/results.ts's FetchResult fits. */
export interface FetchOutcome {
  url: string;
  /** When fetched, Unix seconds. */
  time: number;
  /** Gatherer code: 0 ok, 1 redirect, 3 not modified, 1000–1999 temporary, ≥ 2000 permanent. */
  code: number;
  status?: number;
  /** MD5 of the body, 32 hex digits (anything else is ignored). */
  checksum?: string;
  oid?: number;
  /** Last-Modified, Unix seconds. */
  lastModified?: number;
  etag?: string;
  /** Where a redirect points; resolved against `url`. */
  redirect?: string;
  /** Retry-After, seconds: the least wait before a temporary error is retried. */
  retryAfter?: number;
  /** An imported capture (`sherlock import archive`), not a fetch: it plans no fetch the crawl had not planned. */
  archived?: boolean;
}

/** A URL with everything the database knows of it, as an import restores it (times Unix seconds). */
export interface RestoredUrl {
  url: string;
  state: UrlState;
  depth: number;
  firstSeen: number;
  lastFetch: number | null;
  nextFetch: number | null;
  interval: number | null;
  retries: number;
  status: number | null;
  error: number | null;
  checksum: Buffer | null;
  lastModified: number | null;
  etag: string | null;
  weight: number;
  redirect: string | null;
}

export interface DueUrl extends PlanEntry {
  footprint: Buffer;
  siteId: number;
  depth: number;
  weight: number;
  band: 'refresh' | 'new';
  /** The state before planning. */
  state: UrlState;
}

export interface UrlRecord {
  footprint: Buffer;
  url: string;
  site: string;
  siteId: number;
  state: UrlState;
  depth: number;
  firstSeen: number;
  lastFetch?: number;
  nextFetch?: number;
  interval?: number;
  retries: number;
  status?: number;
  error?: number;
  /** Hex. */
  checksum?: string;
  oid?: number;
  lastModified?: number;
  etag?: string;
  weight: number;
  redirect?: string;
}

export interface SiteRecord {
  id: number;
  site: string;
  footprint: Buffer;
  urls: number;
  /** null: the config's value applies. */
  maxUrls: number | null;
  maxDepth: number | null;
  delayMs: number | null;
  created: number;
}

export interface SiteBudget {
  /** undefined: unchanged; null: back to the config's value. */
  maxUrls?: number | null;
  maxDepth?: number | null;
  delayMs?: number | null;
}

export interface Feedback {
  footprint: Buffer;
  weight?: number;
  duplicate?: boolean;
}

export interface UrlDbStats {
  urls: Record<UrlState, number>;
  total: number;
  sites: number;
}

interface SiteEntry {
  id: number;
  /** siteFootprint, the first 8 bytes of the footprint of every URL of the site. */
  half: Buffer;
  urls: number;
  maxUrls: number | null;
  maxDepth: number | null;
  dirty: boolean;
}

interface SiteRow {
  id: number;
  site: string;
  footprint: Buffer;
  urls: number;
  max_urls: number | null;
  max_depth: number | null;
  delay_ms: number | null;
  created: number;
}

interface UrlRow extends ResultRow {
  footprint: Buffer;
  url: string;
  site: string;
  site_id: number;
  depth: number;
  first_seen: number;
  weight: number;
}

/** The columns a result reads and writes. */
export interface ResultRow {
  state: number;
  last_fetch: number | null;
  next_fetch: number | null;
  interval: number | null;
  retries: number;
  status: number | null;
  error: number | null;
  checksum: Buffer | null;
  oid: number | null;
  last_modified: number | null;
  etag: string | null;
  redirect: string | null;
}

/** A row the planner may take, as its index gives it. */
interface Candidate {
  id: number;
  next_fetch?: number;
  weight: number;
  depth: number;
}

/** What planning reads of a row it takes. */
interface DueRow {
  footprint: Buffer;
  url: string;
  site_id: number;
  state: number;
  last_modified: number | null;
  etag: string | null;
}

/** Schedule bounds in seconds. */
interface Schedule {
  initial: number;
  min: number;
  max: number;
  retryDelay: number;
  maxRetries: number;
  requeueAfter: number;
}

function seconds(ms: number): number {
  return Math.max(1, Math.round(ms / 1000));
}

function whole(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} must be a whole number ≥ 0, not ${value}`);
}

/** SQLite's failures as SHERLOCK_IO naming the file; anything else unchanged. */
function dbError(err: unknown, file: string, doing: string): unknown {
  if (err instanceof Database.SqliteError) {
    return new SherlockError('SHERLOCK_IO', `${doing} failed: ${err.code}: ${err.message}`, { file }, { cause: err });
  }
  return err;
}

const HEX_MD5 = /^[0-9a-f]{32}$/i;

function md5Bytes(hex: string | undefined): Buffer | null {
  return hex !== undefined && HEX_MD5.test(hex) ? Buffer.from(hex, 'hex') : null;
}

/**
 * The row after a result that fetched nothing (a takedown hid the URL in the
 * gatherer's queue): as if never planned. Only a queued row moves: to new
 * when it was never fetched, else due at once; a row a later fetch or plan
 * settled already is kept.
 */
function notFetched<R extends ResultRow>(prev: R, time: number): R {
  if (prev.state !== QUEUED) return prev;
  return prev.last_fetch === null ? { ...prev, state: NEW, next_fetch: null } : { ...prev, next_fetch: time };
}

/** What the worker is asked for `entries` (url-batch.ts): a depth that is not a number is NaN, refused there. */
function batchRequest(entries: readonly InjectEntry[]): BatchRequest {
  const urls = entries.map((e) => e.url);
  const depths = Float64Array.from(entries, (e) => (typeof e.depth === 'number' ? e.depth : e.depth === undefined ? 0 : NaN));
  return entries.some((e) => e.source !== undefined) ? { urls, depths, sources: entries.map((e) => e.source) } : { urls, depths };
}

function httpDate(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toUTCString();
}

function prepareAll(db: Database.Database) {
  return {
    siteGet: db.prepare<[string], SiteRow>(`SELECT * FROM sites WHERE site = ?`),
    siteAdd: db.prepare<[string, Buffer, number]>(`INSERT INTO sites (site, footprint, created) VALUES (?, ?, ?)`),
    siteCount: db.prepare<[number, number]>(`UPDATE sites SET urls = ? WHERE id = ?`),
    siteBudget: db.prepare<[number | null, number | null, number | null, number]>(
      `UPDATE sites SET max_urls = ?, max_depth = ?, delay_ms = ? WHERE id = ?`,
    ),
    insert: db.prepare<[Buffer, string, number, number, number]>(
      `INSERT INTO urls (footprint, url, site_id, state, depth, first_seen) VALUES (?, ?, ?, ${NEW}, ?, ?)`,
    ),
    /** 1 when row ? has footprint ?, 0 when another, undefined when there is no such row. */
    holds: db.prepare<[Buffer, number], number>(`SELECT footprint = ? FROM urls WHERE id = ?`).pluck(),
    /** The footprint map's rows, in slices of ids: each row as 10 hex digits of id and 32 of footprint. */
    mapSlice: db.prepare<[number, number], string | null>(`SELECT group_concat(printf('%010x%s', id, hex(footprint)), '') FROM urls WHERE id BETWEEN ? AND ?`).pluck(),
    rowSpan: db.prepare<[], { rows: number; last: number | null }>(`SELECT count(*) AS rows, max(id) AS last FROM urls`),
    restore: db.prepare<[Record<string, unknown>]>(
      `UPDATE urls SET state = @state, last_fetch = @last_fetch, next_fetch = @next_fetch, interval = @interval, retries = @retries,
         status = @status, error = @error, checksum = @checksum, last_modified = @last_modified, etag = @etag, weight = @weight, redirect = @redirect
       WHERE id = @id`,
    ),
    lowerDepth: db.prepare<[number, number, number]>(`UPDATE urls SET depth = ? WHERE id = ? AND depth > ?`),
    origin: db.prepare<[number], { url: string; depth: number }>(`SELECT url, depth FROM urls WHERE id = ?`),
    resultGet: db.prepare<[number], ResultRow & { id: number }>(
      `SELECT id, state, last_fetch, next_fetch, interval, retries, status, error, checksum, oid, last_modified, etag, redirect FROM urls WHERE id = ?`,
    ),
    resultSet: db.prepare<[ResultRow & { id: number }]>(
      `UPDATE urls SET state = @state, last_fetch = @last_fetch, next_fetch = @next_fetch, interval = @interval, retries = @retries,
         status = @status, error = @error, checksum = @checksum, oid = @oid, last_modified = @last_modified, etag = @etag, redirect = @redirect
       WHERE id = @id`,
    ),
    queue: db.prepare<[number, number]>(
      `UPDATE urls SET state = ${QUEUED}, next_fetch = ? WHERE id = ? AND state NOT IN (${GONE}, ${DISALLOWED})`,
    ),
    weigh: db.prepare<[number, number]>(`UPDATE urls SET weight = ? WHERE id = ?`),
    refetchAll: db.prepare<[number]>(`UPDATE urls SET next_fetch = ? WHERE state IN (${FETCHED})`),
    refetchSite: db.prepare<[number, number]>(`UPDATE urls SET next_fetch = ? WHERE site_id = ? AND state IN (${FETCHED})`),
    duplicate: db.prepare<[number, number]>(`UPDATE urls SET state = ${DUPLICATE}, next_fetch = last_fetch + ? WHERE id = ?`),
    dueRefresh: db.prepare<[number], Candidate>(DUE_REFRESH_SQL),
    dueNew: db.prepare<[], Candidate>(DUE_NEW_SQL),
    dueDetail: db.prepare<[number], DueRow>(`SELECT footprint, url, site_id, state, last_modified, etag FROM urls WHERE id = ?`),
    get: db.prepare<[number], UrlRow>(`SELECT urls.*, sites.site FROM urls JOIN sites ON sites.id = urls.site_id WHERE urls.id = ?`),
    metaGet: db.prepare<[string], string | number | null>(`SELECT value FROM meta WHERE key = ?`).pluck(),
    metaSet: db.prepare<[string, string | number]>(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`),
  };
}

type Statements = ReturnType<typeof prepareAll>;

export function urlDbPath(state: string): string {
  return join(state, 'shepherd', 'urls.sqlite');
}

/** URLs per state, their total and the number of sites, on any connection (shepherd/status.ts reads read-only). */
export function countUrls(db: Database.Database): UrlDbStats {
  const urls = Object.fromEntries(URL_STATES.map((s) => [s, 0])) as Record<UrlState, number>;
  let total = 0;
  for (const { state, n } of db.prepare<[], { state: number; n: number }>(`SELECT state, count(*) AS n FROM urls GROUP BY state`).iterate()) {
    const name = URL_STATES[state];
    if (name !== undefined) urls[name] = n;
    total += n;
  }
  return { urls, total, sites: db.prepare<[], number>(`SELECT count(*) FROM sites`).pluck().get()! };
}

export class UrlDb {
  readonly file: string;
  private readonly s: Statements;
  private schedule!: Schedule;
  private rules = SiteRules.none;
  private maxDepth!: number;
  private maxUrls!: number;
  private readonly runTx: Database.Transaction<(fn: () => unknown) => unknown>;
  private readonly sites = new Map<string, SiteEntry>();
  private readonly dirty = new Set<SiteEntry>();
  /**
   * Canonical URLs this process added or found, with a depth their row has
   * at most (rows are never removed, and depths only lowered). A link found
   * here again at that depth or deeper is known without hashing or a query:
   * most links of a page lead to pages already in the database.
   */
  private readonly known = new Map<string, number>();
  /** Site halves of the batches prepared on this thread (url-batch.ts). */
  private readonly halves = new SiteHalves();
  /** Row ids by footprint (footprint-map.ts); built at open, dropped when a transaction is rolled back and built again when next needed. */
  private map: FootprintMap | undefined;
  private closed = false;

  private constructor(
    private readonly db: Database.Database,
    file: string,
    private readonly lock: Lock,
    settings: Partial<UrlDbSettings>,
    rules: SiteRules,
  ) {
    this.file = file;
    this.s = prepareAll(db);
    this.configure(settings, rules);
    this.runTx = db.transaction((fn: () => unknown) => {
      const out = fn();
      this.flushSites();
      return out;
    });
  }

  /**
   * Takes new settings (a daemon's reload) without closing: the budgets and
   * the schedule apply from the next call, and the footprint map is kept,
   * where reopening would read it from the table again (~7 s at 10 million
   * URLs). Settings not given take the [shepherd] defaults; site rules'
   * min_refetch and max_refetch bound the intervals of their URLs instead.
   */
  configure(settings: Partial<UrlDbSettings>, rules = SiteRules.none): void {
    const all: UrlDbSettings = { ...shepherdConfig.parse({}), ...settings };
    this.rules = rules;
    this.maxDepth = all.max_depth;
    this.maxUrls = all.max_urls_per_site;
    const min = seconds(all.min_refetch);
    const max = Math.max(min, seconds(all.max_refetch));
    this.schedule = {
      min,
      max,
      initial: Math.min(max, Math.max(min, seconds(all.initial_refetch))),
      retryDelay: seconds(all.retry_delay),
      maxRetries: all.max_retries,
      requeueAfter: seconds(all.requeue_after),
    };
    this.guard('setting the cache size', () => this.db.pragma(`cache_size = ${-Math.max(1024, Math.floor(all.db_cache / 1024))}`));
  }

  /**
   * Opens (creating or upgrading) `<state>/shepherd/urls.sqlite` as its one
   * writer. Settings not given take the [shepherd] defaults.
   */
  static open(state: string, settings: Partial<UrlDbSettings> = {}, rules = SiteRules.none): UrlDb {
    const file = urlDbPath(state);
    const dir = dirname(file);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw ioError(err, dir, 'creating directory');
    }
    const lock = acquireLock(`${file}.lock`);
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { timeout: 5000 });
      db.pragma('foreign_keys = ON');
      db.pragma('synchronous = NORMAL');
      // Version checks come first, so a refused file is not changed (not even its journal mode).
      const found = migrate(db, file);
      if (db.pragma('journal_mode = WAL', { simple: true }) !== 'wal') {
        throw new SherlockError('SHERLOCK_IO', 'cannot switch the URL database to WAL mode', { file });
      }
      db.pragma(`journal_size_limit = ${64 * 2 ** 20}`);
      if (found === 0) log.info('URL database created', { file, version: SCHEMA_VERSION });
      else if (found !== SCHEMA_VERSION) log.notice('URL database schema upgraded', { file, from: found, to: SCHEMA_VERSION });
      const urlDb = new UrlDb(db, file, lock, settings, rules);
      urlDb.footprints();
      return urlDb;
    } catch (err) {
      db?.close();
      lock.release();
      throw dbError(err, file, 'opening the URL database');
    }
  }

  /** Closes the database and releases the lock; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      try {
        this.db.pragma('optimize');
      } catch {
        // Only statistics for the query planner; closing matters more.
      }
      this.db.close();
    } catch (err) {
      throw dbError(err, this.file, 'closing the URL database');
    } finally {
      this.lock.release();
    }
  }

  /**
   * Runs `fn` in one transaction (BEGIN IMMEDIATE … COMMIT), or inside the
   * transaction already open. If it throws, everything it wrote is rolled back.
   */
  transaction<T>(fn: () => T): T {
    if (this.db.inTransaction) return fn();
    if (this.sites.size > SITE_CACHE_LIMIT) this.sites.clear();
    try {
      return this.runTx.immediate(fn) as T;
    } catch (err) {
      // The rows behind cached counts, remembered URLs and filed footprints may have been rolled back.
      this.sites.clear();
      this.dirty.clear();
      this.known.clear();
      this.map = undefined;
      throw dbError(err, this.file, 'URL database transaction');
    }
  }

  // ------------------------------------------------------------ adding URLs

  /** Adds seeds (or imported URLs): canonicalised, deduplicated, within each site's budget; one transaction. */
  inject(entries: readonly InjectEntry[], now: number): InjectCounts {
    return this.injectAll([{ entries, now }]);
  }

  /**
   * inject() of batch after batch, each its own transaction, in which
   * `each(counts, batch)` runs last (a caller's checkpoint commits with it);
   * returns the counts of all. From the second batch on, a worker thread
   * (url-batch-thread.ts) canonicalises and hashes the next batch while this
   * thread inserts the current one: the same rows, in the same order, as
   * batch after batch of inject(). The iterator is asked for the next batch
   * before the current one is inserted.
   */
  injectAll<B extends InjectBatch>(batches: Iterable<B>, each?: (counts: InjectCounts, batch: B) => void): InjectCounts {
    const total: InjectCounts = { added: 0, known: 0, refused: 0 };
    const source = batches[Symbol.iterator]();
    let current = source.next();
    if (current.done === true) return total;
    let prepared: BatchData = prepareBatch(batchRequest(current.value.entries), this.halves);
    let thread: BatchThread | undefined;
    try {
      for (;;) {
        const following = source.next();
        let request: BatchRequest | undefined;
        if (following.done !== true) {
          request = batchRequest(following.value.entries);
          const units = urlUnits(request);
          if (fitsThread(units)) {
            thread ??= new BatchThread();
            thread.send(request, units);
            request = undefined;
          }
        }
        const { now } = current.value;
        whole(now, 'now');
        const counts: InjectCounts = { added: 0, known: 0, refused: prepared.refused };
        this.transaction(() => {
          this.addPrepared(new BatchReader(prepared), now, counts, false);
          each?.(counts, current.value);
        });
        total.added += counts.added;
        total.known += counts.known;
        total.refused += counts.refused;
        if (following.done === true) return total;
        prepared = request === undefined ? thread!.receive() : prepareBatch(request, this.halves);
        current = following;
      }
    } finally {
      thread?.close();
    }
  }

  /**
   * Adds URLs with their whole record (an import): each canonicalised and
   * added like a seed — its site's row and count, the site's max_urls and
   * max_depth — in the order given, first seen at its own time; a URL already
   * known is left as it is. The bucket reference (oid) is not restored: it
   * means nothing outside the state that wrote it.
   */
  restore(entries: readonly RestoredUrl[]): InjectCounts {
    const batch = prepareBatch(
      { urls: entries.map((e) => e.url), depths: Float64Array.from(entries, (e) => (Number.isSafeInteger(e.firstSeen) ? e.depth : NaN)) },
      this.halves,
    );
    const counts: InjectCounts = { added: 0, known: 0, refused: batch.refused };
    const read = new BatchReader(batch);
    const sites: SiteEntry[] = [];
    this.transaction(() => {
      for (let i = 0; i < batch.n; i++) {
        const e = entries[batch.from[i]!]!;
        const s = batch.siteOf[i]!;
        const site = (sites[s] ??= this.siteNamed(batch.sites[s]!, () => read.half(s), e.firstSeen));
        const id = this.add(read, i, site, e.firstSeen, counts, false);
        if (id === 0) continue;
        const redirect = e.redirect === null ? null : (canonicalOrNone(e.redirect, read.url(i)) ?? null);
        this.s.restore.run({
          id,
          state: URL_STATES.indexOf(e.state),
          last_fetch: e.lastFetch,
          next_fetch: e.nextFetch,
          interval: e.interval,
          retries: e.retries,
          status: e.status,
          error: e.error,
          checksum: e.checksum,
          last_modified: e.lastModified,
          etag: e.etag,
          weight: e.weight,
          redirect,
        });
      }
    });
    return counts;
  }

  /**
   * Adds the links of the page with footprint `from` at depth + 1 (`depth`:
   * the page's; its row's when undefined). Scope is the caller's business;
   * here only duplicates and the site's max_urls and max_depth. Relative links
   * are resolved against the page's URL.
   */
  addLinks(from: Buffer, links: readonly string[], depth: number | undefined, now: number): InjectCounts {
    whole(now, 'now');
    const counts: InjectCounts = { added: 0, known: 0, refused: 0 };
    this.transaction(() => {
      const fromId = this.idOf(from);
      const origin = fromId === undefined ? undefined : this.s.origin.get(fromId);
      const linkDepth = (depth ?? origin?.depth ?? 0) + 1;
      const urls: string[] = [];
      for (const link of links) {
        // A remembered URL is canonical and absolute: the base cannot change it.
        const knownDepth = this.known.get(link);
        if (knownDepth !== undefined && knownDepth <= linkDepth) counts.known++;
        else urls.push(link);
      }
      const base = origin?.url;
      const batch = prepareBatch(
        { urls, depths: new Float64Array(urls.length).fill(linkDepth), sources: base === undefined ? undefined : urls.map(() => base) },
        this.halves,
      );
      counts.refused += batch.refused;
      this.addPrepared(new BatchReader(batch), now, counts, true);
    });
    return counts;
  }

  /**
   * A prepared batch (url-batch.ts) into the database; inside a transaction.
   * Sites are made in the order the batch met them. A site's budget goes to
   * its URLs in the order given, so the URLs of a site that may run out of
   * budget in this batch go first, in that order. All others go in the
   * batch's hash order: the new rows' ids, and so the plan order of urls_new,
   * interleave the sites of the batch rather than running through one site
   * after another. `remember`: keep the URLs in `known` (links are met again;
   * a bulk inject's URLs would only push them out).
   */
  private addPrepared(read: BatchReader, now: number, counts: InjectCounts, remember: boolean): void {
    const { n, siteOf, order } = read.batch;
    const sites = read.batch.sites.map((name, s) => this.siteNamed(name, () => read.half(s), now));
    const wanted = new Uint32Array(sites.length);
    for (let i = 0; i < n; i++) wanted[siteOf[i]!]!++;
    const free = sites.map((site, s) => site.urls + wanted[s]! <= (site.maxUrls ?? this.maxUrls));
    for (let i = 0; i < n; i++) {
      const s = siteOf[i]!;
      if (!free[s]) this.add(read, i, sites[s]!, now, counts, remember);
    }
    for (let k = 0; k < n; k++) {
      const s = siteOf[order[k]!]!;
      if (free[s]) this.add(read, order[k]!, sites[s]!, now, counts, remember);
    }
  }

  /** URL i of a batch into the database, counted; inside a transaction. Returns the new row's id, or 0 when none was added. */
  private add(read: BatchReader, i: number, site: SiteEntry, now: number, counts: InjectCounts, remember: boolean): number {
    const fp = read.footprint(i);
    const depth = read.batch.depths[i]!;
    const canonical = read.url(i);
    const id = this.idOf(fp);
    if (id === undefined) {
      if (depth > (site.maxDepth ?? this.maxDepth) || site.urls >= (site.maxUrls ?? this.maxUrls)) {
        counts.refused++;
        return 0;
      }
      const added = this.insertRow(fp, canonical, site, depth, now);
      counts.added++;
      if (remember) this.remember(canonical, depth);
      return added;
    }
    counts.known++;
    this.s.lowerDepth.run(depth, id, depth);
    if (remember) this.remember(canonical, Math.min(depth, this.known.get(canonical) ?? depth));
    return 0;
  }

  /** A new row, filed in the footprint map and counted in its site; inside a transaction. */
  private insertRow(fp: Buffer, canonical: string, site: SiteEntry, depth: number, now: number): number {
    const id = Number(this.s.insert.run(fp, canonical, site.id, depth, now).lastInsertRowid);
    this.footprints().add(fp, id);
    this.countUrl(site);
    return id;
  }

  /** The id of the row with footprint `fp`, or undefined. */
  private idOf(fp: Buffer): number | undefined {
    return this.footprints().find(fp, (id) => this.s.holds.get(fp, id) === 1);
  }

  /**
   * The footprint map, built from the table when none is held: the
   * rows in slices of ids, each slice's ids and footprints as one hex string
   * from SQLite (one value a slice, not a JavaScript row a URL: 2.8 s of
   * reading at 10 million rows against 21 s row by row), then filed (3.6 s).
   */
  private footprints(): FootprintMap {
    if (this.map !== undefined) return this.map;
    const started = performance.now();
    const { rows, last } = this.s.rowSpan.get()!;
    if (last !== null && last > MAX_ROW_ID) {
      throw new SherlockError('SHERLOCK_IO', `URL row id ${last} is beyond ${MAX_ROW_ID}, the last the footprint map can hold`, { file: this.file });
    }
    const map = new FootprintMap(rows);
    const slice = 65_536;
    for (let first = 1; last !== null && first <= last; first += slice) {
      const text = this.s.mapSlice.get(first, first + slice - 1);
      if (text === null || text === undefined) continue;
      const bytes = Buffer.from(text, 'hex');
      if (bytes.length * 2 !== text.length || bytes.length % 21 !== 0) {
        throw new SherlockError('SHERLOCK_IO', `URL rows ${first}…${first + slice - 1} do not read back as 5-byte ids and 16-byte footprints`, { file: this.file });
      }
      for (let at = 0; at < bytes.length; at += 21) map.addKey(footprintKey(bytes, at + 5), bytes[at]! * 2 ** 32 + bytes.readUInt32BE(at + 1));
    }
    if (rows >= 100_000) log.info('footprint map built', { urls: rows, mib: Math.round(map.bytes / 2 ** 20), seconds: +((performance.now() - started) / 1000).toFixed(2) });
    this.map = map;
    return map;
  }

  private remember(canonical: string, depth: number): void {
    if (this.known.size >= KNOWN_CACHE_LIMIT && !this.known.has(canonical)) this.known.clear();
    this.known.set(canonical, depth);
  }

  private countUrl(site: SiteEntry): void {
    site.urls++;
    if (!site.dirty) {
      site.dirty = true;
      this.dirty.add(site);
    }
  }

  /** The cached entry of the canonical URL's site (`parts`: its urlParts), created when new. */
  private siteFor(canonical: string, now: number, parts: UrlParts = urlParts(canonical)): SiteEntry {
    return this.siteNamed(parts.site, () => siteFootprint(canonical), now);
  }

  /** The cached entry of site `name` (urlParts().site), created with site half `halfOf()` when new. */
  private siteNamed(name: string, halfOf: () => Buffer, now: number): SiteEntry {
    let entry = this.sites.get(name);
    if (entry !== undefined) return entry;
    const row = this.s.siteGet.get(name);
    if (row !== undefined) {
      entry = { id: row.id, half: row.footprint, urls: row.urls, maxUrls: row.max_urls, maxDepth: row.max_depth, dirty: false };
    } else {
      const half = halfOf();
      const id = Number(this.s.siteAdd.run(name, half, now).lastInsertRowid);
      entry = { id, half, urls: 0, maxUrls: null, maxDepth: null, dirty: false };
    }
    this.sites.set(name, entry);
    return entry;
  }

  /** Writes the cached counts that changed; runs at the end of every transaction. */
  private flushSites(): void {
    for (const site of this.dirty) {
      this.s.siteCount.run(site.urls, site.id);
      site.dirty = false;
    }
    this.dirty.clear();
  }

  // ------------------------------------------------------------ sites

  /** The site of `url` (any URL of it), or undefined when it has no URLs yet. */
  getSite(url: string): SiteRecord | undefined {
    const name = urlParts(canonicalUrl(url)).site;
    const row = this.guard('reading a site', () => this.s.siteGet.get(name));
    if (row === undefined) return undefined;
    const cached = this.sites.get(name);
    return {
      id: row.id,
      site: row.site,
      footprint: row.footprint,
      urls: cached?.urls ?? row.urls,
      maxUrls: row.max_urls,
      maxDepth: row.max_depth,
      delayMs: row.delay_ms,
      created: row.created,
    };
  }

  /** Sets the budgets of the site of `url`, creating the site if need be. */
  setSite(url: string, budget: SiteBudget, now: number): SiteRecord {
    for (const [name, value] of Object.entries(budget)) {
      if (value !== undefined && value !== null && (!Number.isSafeInteger(value) || value < 0)) {
        throw new RangeError(`site budget ${name} must be a whole number ≥ 0 or null, not ${String(value)}`);
      }
    }
    const canonical = canonicalUrl(url);
    this.transaction(() => {
      const site = this.siteFor(canonical, now);
      const row = this.s.siteGet.get(urlParts(canonical).site)!;
      const pick = (value: number | null | undefined, old: number | null) => (value === undefined ? old : value);
      site.maxUrls = pick(budget.maxUrls, row.max_urls);
      site.maxDepth = pick(budget.maxDepth, row.max_depth);
      this.s.siteBudget.run(site.maxUrls, site.maxDepth, pick(budget.delayMs, row.delay_ms), site.id);
    });
    return this.getSite(canonical)!;
  }

  // ------------------------------------------------------------ fetch results

  /**
   * Applies one fetch result (state machine in the module comment). Returns
   * the URL's new state, or undefined when the result is not newer than what
   * the row already has (stale, or applied before). Throws SHERLOCK_BAD_URL when `r.url` has no canonical form.
   */
  recordResult(r: FetchOutcome, now: number): UrlState | undefined {
    whole(now, 'now');
    whole(r.time, 'result time');
    if (!Number.isSafeInteger(r.code) || r.code < 0) throw new RangeError(`result code must be a whole number ≥ 0, not ${r.code}`);
    const canonical = canonicalUrl(r.url);
    const fp = footprintOf(canonical);
    return this.transaction(() => {
      const known = this.idOf(fp);
      const id = known ?? this.insertRow(fp, canonical, this.siteFor(canonical, now), 0, now);
      const prev = this.s.resultGet.get(id)!;
      if (prev.last_fetch !== null && r.time <= prev.last_fetch) return undefined;
      const next = this.transition(prev, r, canonical);
      if (r.archived === true && (known === undefined || !this.planned(prev))) next.next_fetch = null;
      this.s.resultSet.run(next);
      return URL_STATES[next.state];
    });
  }

  /** recordResult for a batch in one transaction; counts the new states (and `stale` results ignored). */
  recordResults(results: readonly FetchOutcome[], now: number): Partial<Record<UrlState | 'stale', number>> {
    const counts: Partial<Record<UrlState | 'stale', number>> = {};
    this.transaction(() => {
      for (const r of results) {
        const state = this.recordResult(r, now) ?? 'stale';
        counts[state] = (counts[state] ?? 0) + 1;
      }
    });
    return counts;
  }

  /** Whether the crawl means to fetch this row: new, queued, or due some time (not gone, disallowed, or known only from an archive). */
  private planned(row: ResultRow): boolean {
    return row.state === NEW || row.state === QUEUED || row.next_fetch !== null;
  }

  /** The schedule of one URL: [shepherd]'s, with the refetch bounds of its site rules. */
  private scheduleOf(url: string): Schedule {
    if (this.rules.empty) return this.schedule;
    const { min_refetch: ruleMin, max_refetch: ruleMax } = this.rules.effective(url).settings;
    if (ruleMin === undefined && ruleMax === undefined) return this.schedule;
    const min = ruleMin === undefined ? this.schedule.min : seconds(ruleMin);
    const max = Math.max(min, ruleMax === undefined ? this.schedule.max : seconds(ruleMax));
    return { ...this.schedule, min, max, initial: Math.min(max, Math.max(min, this.schedule.initial)) };
  }

  /** The row after result `r`; anything else `prev` carries (its id) is kept. */
  private transition<R extends ResultRow>(prev: R, r: FetchOutcome, url: string): R {
    const schedule = this.scheduleOf(url);
    const { initial, max, retryDelay, maxRetries } = schedule;
    const bounded = (interval: number): number => Math.round(Math.min(schedule.max, Math.max(schedule.min, interval)));
    const code = r.code;
    if (code === CODE_TAKEN_DOWN) return notFetched(prev, r.time);
    const next: R = { ...prev, last_fetch: r.time, status: r.status ?? null };
    const settle = (state: number, interval: number) => {
      next.state = state;
      next.interval = interval;
      next.next_fetch = r.time + interval;
      next.retries = 0;
      next.error = null;
    };
    if (code === CODE_OK) {
      const sum = md5Bytes(r.checksum);
      let interval = prev.interval;
      if (interval === null) interval = initial;
      else if (sum !== null && prev.checksum !== null) interval = bounded(interval * (sum.equals(prev.checksum) ? GROW : SHRINK));
      settle(OK, interval);
      next.checksum = sum;
      next.oid = r.oid ?? null;
      next.last_modified = r.lastModified ?? null;
      next.etag = r.etag ?? null;
      next.redirect = null;
    } else if (code === CODE_NOT_MODIFIED || code === CODE_UNCHANGED) {
      settle(NOT_MODIFIED, prev.interval === null ? initial : bounded(prev.interval * GROW));
      if (r.lastModified !== undefined) next.last_modified = r.lastModified;
      if (r.etag !== undefined) next.etag = r.etag;
    } else if (code === CODE_REDIRECT) {
      const target = r.redirect === undefined ? null : (canonicalOrNone(r.redirect, url) ?? null);
      const same = target !== null && target === prev.redirect;
      settle(REDIRECT, prev.interval === null ? initial : bounded(prev.interval * (same ? GROW : SHRINK)));
      next.redirect = target;
      next.checksum = md5Bytes(r.checksum);
      next.oid = r.oid ?? null;
      next.last_modified = r.lastModified ?? null;
      next.etag = r.etag ?? null;
    } else if (code === CODE_ROBOTS) {
      next.state = DISALLOWED;
      next.next_fetch = null;
      next.retries = 0;
      next.error = code;
    } else if (code === CODE_NOT_FOUND || code === CODE_GONE) {
      // Gone on the second answer in a row, each to a fetch planned of its own: a
      // row not queued again since its last 404 is hearing a twin of that fetch
      // (a gatherer killed before it marked the entry done fetches it again).
      const again = prev.state === QUEUED && (prev.error === CODE_NOT_FOUND || prev.error === CODE_GONE);
      next.state = again ? GONE : ERROR;
      next.next_fetch = again ? null : r.time + retryDelay;
      next.retries = 0;
      next.error = code;
    } else if (code >= 1000 && code < 2000) {
      next.state = ERROR;
      next.retries = prev.retries + 1;
      if (next.retries > maxRetries) {
        next.error = code + 1000;
        next.next_fetch = r.time + max;
      } else {
        next.error = code;
        const wait = Math.max(retryDelay * 2 ** (next.retries - 1), r.retryAfter ?? 0);
        next.next_fetch = r.time + Math.round(Math.min(max, wait));
      }
    } else {
      next.state = ERROR;
      next.next_fetch = r.time + max;
      next.retries = 0;
      next.error = code;
    }
    return next;
  }

  // ------------------------------------------------------------ planning

  /**
   * Up to `limit` URLs to fetch now, at most `perSite` per site, in plan order
   * with plan priorities and conditional-GET validators (bands in the module
   * comment). Reads only; markQueued takes them out once planned. URLs
   * `takedowns` hides are passed over, left as they are.
   */
  due(now: number, limit: number, perSite: number = Number.POSITIVE_INFINITY, takedowns: TakedownSet = TakedownSet.EMPTY): DueUrl[] {
    whole(now, 'now');
    whole(limit, 'limit');
    if (limit >= PRIORITY_BAND) throw new RangeError(`limit must be below ${PRIORITY_BAND}`);
    if (!(perSite >= 0)) throw new RangeError(`perSite must be ≥ 0, not ${perSite}`);
    return this.guard('planning', () => {
      const taken = new Map<number, number>();
      const picks: DueUrl[] = [];
      let refreshRank = 0;
      let newRank = 0;
      // The row is read by id (a rowid lookup) to learn its site; a row over perSite is read and skipped.
      const take = (row: Candidate, band: 'refresh' | 'new') => {
        const d = this.s.dueDetail.get(row.id)!;
        if (takedowns.size > 0 && takedowns.hides(d.url)) return;
        const n = taken.get(d.site_id) ?? 0;
        if (n >= perSite) return;
        taken.set(d.site_id, n + 1);
        const out: DueUrl = {
          url: d.url,
          priority: band === 'refresh' ? refreshRank++ : PRIORITY_BAND + newRank++,
          footprint: d.footprint,
          siteId: d.site_id,
          depth: row.depth,
          weight: row.weight,
          band,
          state: URL_STATES[d.state]!,
        };
        if (d.last_modified !== null) out.ifModifiedSince = httpDate(d.last_modified);
        if (d.etag !== null && d.etag !== '' && !/[\t\n\r]/.test(d.etag)) out.ifNoneMatch = d.etag;
        picks.push(out);
      };
      const window = Math.max(2 * limit, 1024);
      let chunk: Candidate[] = [];
      const rank = () => {
        chunk.sort((a, b) => b.weight - a.weight || a.depth - b.depth || a.next_fetch! - b.next_fetch! || a.id - b.id);
        for (const row of chunk) {
          if (picks.length >= limit) break;
          take(row, 'refresh');
        }
        chunk = [];
      };
      if (limit > 0) {
        for (const row of this.s.dueRefresh.iterate(now)) {
          chunk.push(row);
          if (chunk.length >= window) {
            rank();
            if (picks.length >= limit) break;
          }
        }
        rank();
      }
      if (picks.length < limit) {
        for (const row of this.s.dueNew.iterate()) {
          take(row, 'new');
          if (picks.length >= limit) break;
        }
      }
      return picks;
    });
  }

  /** Marks planned URLs queued; returns how many rows changed. */
  markQueued(footprints: readonly Buffer[], now: number): number {
    whole(now, 'now');
    const until = now + this.schedule.requeueAfter;
    let changed = 0;
    this.transaction(() => {
      for (const fp of footprints) {
        const id = this.idOf(fp);
        if (id !== undefined) changed += this.s.queue.run(until, id).changes;
      }
    });
    return changed;
  }

  /** The indexer's word on URLs: static weights, duplicates (fetched again max_refetch after their last fetch). */
  feedback(entries: readonly Feedback[]): number {
    let changed = 0;
    this.transaction(() => {
      for (const e of entries) {
        const id = this.idOf(e.footprint);
        if (id === undefined) continue;
        if (e.weight !== undefined && Number.isFinite(e.weight)) changed += this.s.weigh.run(e.weight, id).changes;
        if (e.duplicate === true) changed += this.s.duplicate.run(this.schedule.max, id).changes;
      }
    });
    return changed;
  }

  /**
   * Makes every fetched URL of these sites (all sites when undefined) due at
   * `now`: an operator's "recrawl now". Rows keep their validators, so the
   * refetch is conditional; gone and disallowed rows are asked again too
   * (the site may have come back, robots.txt may allow them now), and so are
   * duplicates.
   */
  refetchNow(sites: readonly string[] | undefined, now: number): number {
    whole(now, 'now');
    let changed = 0;
    this.transaction(() => {
      if (sites === undefined) {
        changed = this.s.refetchAll.run(now).changes;
        return;
      }
      for (const url of sites) {
        const site = this.getSite(url);
        if (site !== undefined) changed += this.s.refetchSite.run(now, site.id).changes;
      }
    });
    return changed;
  }

  // ------------------------------------------------------------ reading

  /** The row of `url` (canonicalised), or undefined. */
  get(url: string): UrlRecord | undefined {
    const fp = footprintOf(canonicalUrl(url));
    const row = this.guard('reading a URL', () => {
      const id = this.idOf(fp);
      return id === undefined ? undefined : this.s.get.get(id);
    });
    if (row === undefined) return undefined;
    const out: UrlRecord = {
      footprint: row.footprint,
      url: row.url,
      site: row.site,
      siteId: row.site_id,
      state: URL_STATES[row.state]!,
      depth: row.depth,
      firstSeen: row.first_seen,
      retries: row.retries,
      weight: row.weight,
    };
    if (row.last_fetch !== null) out.lastFetch = row.last_fetch;
    if (row.next_fetch !== null) out.nextFetch = row.next_fetch;
    if (row.interval !== null) out.interval = row.interval;
    if (row.status !== null) out.status = row.status;
    if (row.error !== null) out.error = row.error;
    if (row.checksum !== null) out.checksum = row.checksum.toString('hex');
    if (row.oid !== null) out.oid = row.oid;
    if (row.last_modified !== null) out.lastModified = row.last_modified;
    if (row.etag !== null) out.etag = row.etag;
    if (row.redirect !== null) out.redirect = row.redirect;
    return out;
  }

  /** URLs per state, their total and the number of sites. Scans the whole table: for status pages, not loops. */
  stats(): UrlDbStats {
    return this.guard('counting', () => countUrls(this.db));
  }

  // ------------------------------------------------------------ checkpoints

  getMeta(key: string): string | number | undefined {
    return this.guard('reading meta', () => this.s.metaGet.get(key) ?? undefined);
  }

  /** Sets a checkpoint; call it inside the transaction that writes what it covers. */
  setMeta(key: string, value: string | number): void {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError(`meta ${key} must be finite, not ${value}`);
    this.transaction(() => {
      this.s.metaSet.run(key, value);
    });
  }

  private guard<T>(doing: string, fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw dbError(err, this.file, doing);
    }
  }
}
