/**
 * The URL database (shepherd/urldb.ts, shepherd/schema.ts) on real SQLite files:
 * the schema and its version, reopening, refusing files it must not touch,
 * injecting within budgets, the result state machine, planning order and
 * per-site limits, and checkpoints that commit with their data.
 */

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import Database from 'better-sqlite3';
import { isSherlockError } from '../../common/errors.js';
import { TakedownSet } from '../../common/takedowns.js';
import { canonicalUrl, footprint } from '../../common/url.js';
import { APPLICATION_ID, DUE_NEW_SQL, DUE_REFRESH_SQL, MIGRATIONS, SCHEMA_VERSION } from '../../shepherd/schema.js';
import { UrlDb, type FetchOutcome, type UrlDbSettings } from '../../shepherd/urldb.js';
import { scratchDir } from '../helpers/paths.js';

const HOUR = 3600;
const DAY = 86_400;
const T0 = 1_700_000_000;

/** Settings in the config's units (ms): 1 d initial, 1 h … 30 d, retry after 1 h, 3 retries. */
const SETTINGS: Partial<UrlDbSettings> = {
  initial_refetch: DAY * 1000,
  min_refetch: HOUR * 1000,
  max_refetch: 30 * DAY * 1000,
  retry_delay: HOUR * 1000,
  max_retries: 3,
  requeue_after: 7 * DAY * 1000,
  db_cache: 8 * 2 ** 20,
};

/**
 * A scratch state directory and an opener whose databases are closed when the
 * test ends — before the directory is removed (hooks run in the order added).
 */
function harness(t: test.TestContext) {
  const open: UrlDb[] = [];
  t.after(() => {
    for (const db of open) db.close();
  });
  const state = scratchDir(t, 'sherlock-urldb-');
  return {
    state,
    file: join(state, 'shepherd', 'urls.sqlite'),
    open(settings: Partial<UrlDbSettings> = {}): UrlDb {
      const db = UrlDb.open(state, { ...SETTINGS, ...settings });
      open.push(db);
      return db;
    },
  };
}

function openDb(t: test.TestContext, settings: Partial<UrlDbSettings> = {}): { db: UrlDb; state: string } {
  const h = harness(t);
  return { db: h.open(settings), state: h.state };
}

function fp(url: string): Buffer {
  return footprint(canonicalUrl(url));
}

const MD5_A = 'aa'.repeat(16);
const MD5_B = 'bb'.repeat(16);

test('a new database has the schema, its version and application id, in WAL mode', (t) => {
  const { db, state } = openDb(t);
  db.close();
  const file = join(state, 'shepherd', 'urls.sqlite');
  const raw = new Database(file, { readonly: true });
  try {
    assert.equal(raw.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    assert.equal(raw.pragma('application_id', { simple: true }), APPLICATION_ID);
    assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
    const names = raw.prepare(`SELECT name FROM sqlite_schema WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%' ORDER BY name`).pluck().all();
    // No index on urls.footprint: rows are found through the footprint map (footprint-map.ts).
    assert.deepEqual(names, ['meta', 'sites', 'sites_footprint', 'urls', 'urls_new', 'urls_refresh']);
  } finally {
    raw.close();
  }
});

test('the planner queries read their partial indexes in order, without a sort; rows are read by rowid', (t) => {
  const { db, state } = openDb(t);
  db.close();
  const raw = new Database(join(state, 'shepherd', 'urls.sqlite'), { readonly: true });
  try {
    const plan = (sql: string, ...params: unknown[]) =>
      (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
    assert.match(plan(DUE_NEW_SQL), /^SCAN urls USING COVERING INDEX urls_new$/);
    assert.match(plan(DUE_REFRESH_SQL, T0), /^SEARCH urls USING COVERING INDEX urls_refresh \(next_fetch<\?\)$/);
    // A row found by footprint (through the map) and a row the planner takes are both read by rowid; the map is built from rowid ranges.
    assert.match(plan(`SELECT url FROM urls WHERE id = ?`, 1), /^SEARCH urls USING INTEGER PRIMARY KEY \(rowid=\?\)$/);
    assert.match(plan(`SELECT footprint FROM urls WHERE id BETWEEN ? AND ?`, 1, 2), /^SEARCH urls USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)$/);
  } finally {
    raw.close();
  }
});

test('reopening keeps URLs, sites, counts and checkpoints', (t) => {
  const h = harness(t);
  const first = h.open();
  first.inject([{ url: 'http://a.example/x' }, { url: 'http://a.example/y', depth: 2 }], T0);
  first.setMeta('bucket_checkpoint', 42);
  first.close();
  const db = h.open();
  assert.equal(db.get('http://a.example/y')?.depth, 2);
  assert.equal(db.get('http://a.example/x')?.state, 'new');
  assert.equal(db.getSite('http://a.example/')?.urls, 2);
  assert.equal(db.getMeta('bucket_checkpoint'), 42);
  assert.equal(db.getMeta('nothing'), undefined);
  // A new URL of a known site takes its footprint's site half from the sites row.
  assert.deepEqual(db.inject([{ url: 'http://a.example/z' }, { url: 'http://a.example/x' }], T0 + 1), { added: 1, known: 1, refused: 0 });
  assert.deepEqual(db.get('http://a.example/z')?.footprint, fp('http://a.example/z'));
  assert.equal(db.getSite('http://a.example/')?.urls, 3);
});

test('a version 1 database is upgraded: urls_footprint dropped, its URLs found, none added twice', (t) => {
  const h = harness(t);
  mkdirSync(join(h.state, 'shepherd'), { recursive: true });
  const raw = new Database(h.file);
  raw.exec(MIGRATIONS[0]!.sql);
  raw.pragma(`application_id = ${APPLICATION_ID}`);
  raw.pragma('user_version = 1');
  const url = canonicalUrl('http://a.example/old');
  raw.prepare(`INSERT INTO sites (id, site, footprint, urls, created) VALUES (1, 'http://a.example', ?, 1, ?)`).run(fp(url).subarray(0, 8), T0);
  raw.prepare(`INSERT INTO urls (footprint, url, site_id, state, depth, first_seen) VALUES (?, ?, 1, 0, 3, ?)`).run(fp(url), url, T0);
  raw.close();
  const db = h.open();
  assert.equal(db.get(url)?.depth, 3);
  assert.deepEqual(db.inject([{ url }, { url: 'http://a.example/new' }], T0 + 1), { added: 1, known: 1, refused: 0 });
  db.close();
  const after = new Database(h.file, { readonly: true });
  assert.equal(after.pragma('user_version', { simple: true }), 2);
  assert.equal(after.prepare(`SELECT count(*) FROM sqlite_schema WHERE name = 'urls_footprint'`).pluck().get(), 0);
  assert.equal(after.prepare(`SELECT count(*) FROM urls`).pluck().get(), 2);
  after.close();
});

test('reopened, the footprint map finds rows in every slice of ids, around a gap; a row id past 2^32 − 1 is refused at open', (t) => {
  const h = harness(t);
  const urls = Array.from({ length: 70_000 }, (_, i) => `http://s${i % 50}.example/p/${i}`);
  const first = h.open();
  assert.equal(first.inject(urls.map((url) => ({ url })), T0).added, urls.length);
  first.close();
  const raw = new Database(h.file);
  const gone = raw.prepare(`SELECT url FROM urls WHERE id = 1000`).pluck().get() as string;
  raw.prepare(`DELETE FROM urls WHERE id = 1000`).run();
  raw.close();
  const db = h.open();
  for (const i of [0, 1, 998, 1000, 65_535, 65_536, 65_537, 69_999]) {
    const url = canonicalUrl(urls[i]!);
    assert.equal(db.get(url)?.url, url === gone ? undefined : url, `URL ${i}`);
  }
  // Everything met again is known but the deleted row, which is added again.
  assert.deepEqual(db.inject(urls.map((url) => ({ url })), T0 + 1), { added: 1, known: urls.length - 1, refused: 0 });
  db.close();

  const big = new Database(h.file);
  big.prepare(`INSERT INTO urls (id, footprint, url, site_id, state, depth, first_seen) VALUES (?, ?, 'http://s0.example/big', 1, 0, 0, ?)`).run(2 ** 32, fp('http://s0.example/big'), T0);
  big.close();
  // The map is built at open, so the open is refused; the lock is released for the next.
  const refused = (err: unknown) => isSherlockError(err, 'SHERLOCK_IO') && /URL row id 4294967296 is beyond 4294967295/.test(err.message) && err.place.file === h.file;
  assert.throws(() => h.open(), refused);
  assert.throws(() => h.open(), refused);
});

test('a second writer is refused while the database is open', (t) => {
  const { state } = openDb(t);
  assert.throws(() => UrlDb.open(state, SETTINGS), (err: unknown) => isSherlockError(err, 'SHERLOCK_LOCKED'));
});

test('a database written by a newer sherlock is refused, and left as it was', (t) => {
  const { db, state } = openDb(t);
  db.inject([{ url: 'http://a.example/' }], T0);
  db.close();
  const file = join(state, 'shepherd', 'urls.sqlite');
  const raw = new Database(file);
  raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
  raw.close();
  assert.throws(
    () => UrlDb.open(state, SETTINGS),
    (err: unknown) => {
      assert.ok(isSherlockError(err, 'SHERLOCK_IO'), String(err));
      assert.equal(err.place.file, file);
      assert.match(err.message, new RegExp(`schema version ${SCHEMA_VERSION + 1} is newer than this sherlock knows \\(${SCHEMA_VERSION}\\)`));
      return true;
    },
  );
  const after = new Database(file, { readonly: true });
  assert.equal(after.pragma('user_version', { simple: true }), SCHEMA_VERSION + 1);
  after.close();
  // The lock was released: once the version is right again, it opens.
  const fix = new Database(file);
  fix.pragma(`user_version = ${SCHEMA_VERSION}`);
  fix.close();
  UrlDb.open(state, SETTINGS).close();
});

test('a SQLite file that is not a URL database, and a file that is not SQLite, are refused', (t) => {
  const state = scratchDir(t, 'sherlock-urldb-');
  mkdirSync(join(state, 'shepherd'));
  const file = join(state, 'shepherd', 'urls.sqlite');
  const other = new Database(file);
  other.exec('CREATE TABLE notes (x)');
  other.close();
  assert.throws(() => UrlDb.open(state, SETTINGS), (err: unknown) => isSherlockError(err, 'SHERLOCK_IO') && /not a sherlock URL database/.test(err.message));
  const junk = scratchDir(t, 'sherlock-urldb-');
  mkdirSync(join(junk, 'shepherd'));
  writeFileSync(join(junk, 'shepherd', 'urls.sqlite'), Buffer.alloc(8192, 0x5a));
  assert.throws(() => UrlDb.open(junk, SETTINGS), (err: unknown) => isSherlockError(err, 'SHERLOCK_IO') && /SQLITE_NOTADB/.test(err.message));
  assert.equal(existsSync(join(junk, 'shepherd', 'urls.sqlite.lock')), false);
});

test('inject canonicalises, deduplicates, resolves against the source and refuses bad URLs', (t) => {
  const { db } = openDb(t);
  const counts = db.inject(
    [
      { url: 'HTTP://Example.COM:80/a/../b#frag' },
      { url: 'http://example.com/b' },
      { url: 'c?x=1', source: 'http://example.com/dir/sitemap.xml' },
      { url: 'ftp://example.com/file' },
      { url: 'not a url' },
      { url: 'http://example.com/d', depth: -1 },
      { url: 'https://example.com/b' },
    ],
    T0,
  );
  assert.deepEqual(counts, { added: 3, known: 1, refused: 3 });
  const row = db.get('http://example.com/b');
  assert.equal(row?.url, 'http://example.com/b');
  assert.equal(row?.site, 'http://example.com');
  assert.deepEqual(row?.footprint, fp('http://example.com/b'));
  assert.equal(row?.firstSeen, T0);
  assert.equal(db.get('http://example.com/dir/c?x=1')?.state, 'new');
  assert.equal(db.getSite('http://example.com/')?.urls, 2);
  assert.equal(db.getSite('https://example.com/')?.urls, 1);
  assert.deepEqual(db.stats(), {
    urls: { new: 3, queued: 0, ok: 0, not_modified: 0, redirect: 0, error: 0, gone: 0, duplicate: 0, disallowed: 0 },
    total: 3,
    sites: 2,
  });
});

test('inject respects max_urls and max_depth, from the config or the site; a known URL met again lowers its depth', (t) => {
  const h = harness(t);
  const db = h.open({ max_urls_per_site: 3, max_depth: 2 });
  const urls = (host: string, n: number) => Array.from({ length: n }, (_, i) => ({ url: `http://${host}/${i}`, depth: 1 }));
  assert.deepEqual(db.inject(urls('a.example', 5), T0), { added: 3, known: 0, refused: 2 });
  // Full, but a URL it has is still known, not refused.
  assert.deepEqual(db.inject([{ url: 'http://a.example/0', depth: 0 }, { url: 'http://a.example/9' }], T0), { added: 0, known: 1, refused: 1 });
  assert.equal(db.get('http://a.example/0')?.depth, 0);
  assert.deepEqual(db.inject([{ url: 'http://b.example/deep', depth: 3 }], T0), { added: 0, known: 0, refused: 1 });
  db.setSite('http://b.example/', { maxUrls: 10, maxDepth: 5 }, T0);
  assert.deepEqual(db.inject([...urls('b.example', 6), { url: 'http://b.example/deep', depth: 3 }], T0), { added: 7, known: 0, refused: 0 });
  const site = db.getSite('http://b.example/anything');
  assert.equal(site?.urls, 7);
  assert.equal(site?.maxUrls, 10);
  assert.equal(site?.maxDepth, 5);
  assert.equal(site?.delayMs, null);
  db.setSite('http://b.example/', { delayMs: 20_000 }, T0);
  assert.equal(db.getSite('http://b.example/')?.maxUrls, 10);
  assert.equal(db.getSite('http://b.example/')?.delayMs, 20_000);
  db.close();
  const again = h.open({ max_urls_per_site: 3, max_depth: 2 });
  assert.equal(again.getSite('http://a.example/')?.urls, 3);
  assert.deepEqual(again.inject(urls('a.example', 4), T0), { added: 0, known: 3, refused: 1 });
});

test('a site budget goes to its URLs in the order given, whatever their footprints', (t) => {
  const { db } = openDb(t, { max_urls_per_site: 3 });
  const order = ['z', 'b', 'q', 'a', 'm', 'c'].map((p) => `http://a.example/${p}`);
  const mixed = order.flatMap((url, i) => [{ url }, { url: `http://s${i}.example/` }]);
  assert.deepEqual(db.inject(mixed, T0), { added: 9, known: 0, refused: 3 });
  assert.deepEqual(
    order.map((url) => db.get(url) !== undefined),
    [true, true, true, false, false, false],
  );
});

test('configure takes new budgets and a new schedule without reopening', (t) => {
  const { db } = openDb(t, { max_depth: 1 });
  assert.deepEqual(db.inject([{ url: 'http://a.example/deep', depth: 3 }], T0), { added: 0, known: 0, refused: 1 });
  db.inject([{ url: 'http://a.example/' }], T0);
  db.configure({ ...SETTINGS, max_depth: 5, initial_refetch: 2 * DAY * 1000 });
  assert.deepEqual(db.inject([{ url: 'http://a.example/deep', depth: 3 }, { url: 'http://a.example/' }], T0), { added: 1, known: 1, refused: 0 });
  db.recordResult({ url: 'http://a.example/deep', time: T0 + 1, code: 0, status: 200 }, T0 + 2);
  assert.equal(db.get('http://a.example/deep')?.interval, 2 * DAY);
  // Back to the defaults for what is not given: max_depth is the config's default again.
  db.configure({ ...SETTINGS });
  assert.equal(db.inject([{ url: 'http://a.example/deeper', depth: 3 }], T0).added, 1);
});

test('addLinks adds at depth + 1, resolves relative links against the page, and stops at max_depth', (t) => {
  const { db } = openDb(t, { max_depth: 2 });
  db.inject([{ url: 'http://a.example/dir/page', depth: 1 }], T0);
  const from = fp('http://a.example/dir/page');
  const counts = db.addLinks(from, ['other', '/top', 'http://b.example/', 'http://a.example/top', 'javascript:void(0)'], undefined, T0);
  assert.deepEqual(counts, { added: 3, known: 1, refused: 1 });
  assert.equal(db.get('http://a.example/dir/other')?.depth, 2);
  assert.equal(db.get('http://b.example/')?.depth, 2);
  assert.deepEqual(db.addLinks(fp('http://a.example/top'), ['/deeper'], undefined, T0), { added: 0, known: 0, refused: 1 });
  assert.deepEqual(db.addLinks(from, ['/deeper'], 0, T0), { added: 1, known: 0, refused: 0 });
  assert.equal(db.get('http://a.example/deeper')?.depth, 1);
});

test('a link met again is known without changing its row, a shallower one still lowers its depth, and a rolled-back one is added again', (t) => {
  const { db } = openDb(t, { max_depth: 5 });
  db.inject([{ url: 'http://a.example/deep', depth: 3 }, { url: 'http://a.example/top', depth: 0 }], T0);
  const deep = fp('http://a.example/deep');
  const top = fp('http://a.example/top');
  assert.deepEqual(db.addLinks(deep, ['http://a.example/x'], undefined, T0), { added: 1, known: 0, refused: 0 });
  assert.deepEqual(db.addLinks(deep, ['http://a.example/x'], undefined, T0), { added: 0, known: 1, refused: 0 });
  assert.equal(db.get('http://a.example/x')?.depth, 4);
  assert.deepEqual(db.addLinks(top, ['http://a.example/x'], undefined, T0), { added: 0, known: 1, refused: 0 });
  assert.equal(db.get('http://a.example/x')?.depth, 1);
  assert.throws(
    () =>
      db.transaction(() => {
        assert.equal(db.addLinks(top, ['http://a.example/gone'], undefined, T0).added, 1);
        throw new Error('rolled back');
      }),
    /rolled back/,
  );
  assert.equal(db.get('http://a.example/gone'), undefined);
  assert.deepEqual(db.addLinks(top, ['http://a.example/gone'], undefined, T0), { added: 1, known: 0, refused: 0 });
  assert.equal(db.get('http://a.example/gone')?.depth, 1);
});

/** A database with one URL, and a function feeding it results at given times. */
function oneUrl(t: test.TestContext, url = 'http://a.example/page') {
  const { db } = openDb(t);
  db.inject([{ url }], T0);
  const result = (time: number, r: Partial<FetchOutcome> & { code: number }) => db.recordResult({ url, time, ...r }, time);
  return { db, url, result, row: () => db.get(url)! };
}

test('2xx: the first success sets the initial interval; the same checksum lengthens it, a new one shortens it, within bounds', (t) => {
  const { result, row } = oneUrl(t);
  assert.equal(result(T0, { code: 0, status: 200, checksum: MD5_A, oid: 7, lastModified: T0 - DAY, etag: '"v1"' }), 'ok');
  let r = row();
  assert.equal(r.interval, DAY);
  assert.equal(r.nextFetch, T0 + DAY);
  assert.equal(r.lastFetch, T0);
  assert.equal(r.checksum, MD5_A);
  assert.equal(r.oid, 7);
  assert.equal(r.status, 200);
  assert.equal(r.etag, '"v1"');
  assert.equal(r.lastModified, T0 - DAY);

  result(T0 + DAY, { code: 0, status: 200, checksum: MD5_A, oid: 8 });
  r = row();
  assert.equal(r.interval, 1.5 * DAY);
  assert.equal(r.nextFetch, T0 + DAY + 1.5 * DAY);
  assert.equal(r.etag, undefined, 'validators are those of the latest copy');

  result(T0 + 3 * DAY, { code: 0, status: 200, checksum: MD5_B, oid: 9 });
  assert.equal(row().interval, 0.75 * DAY);
  for (let i = 0; i < 10; i++) result(T0 + (4 + i) * DAY, { code: 0, status: 200, checksum: i % 2 === 0 ? MD5_A : MD5_B });
  assert.equal(row().interval, HOUR, 'never below min_refetch');
  for (let i = 0; i < 20; i++) result(T0 + (20 + i) * DAY, { code: 0, status: 200, checksum: MD5_A });
  assert.equal(row().interval, 30 * DAY, 'never above max_refetch');
  // No checksum to compare: the interval stays.
  result(T0 + 60 * DAY, { code: 0, status: 200 });
  assert.equal(row().interval, 30 * DAY);
});

test('304: not_modified, a longer interval, the copy and its checksum kept', (t) => {
  const { result, row } = oneUrl(t);
  result(T0, { code: 0, status: 200, checksum: MD5_A, oid: 3, etag: '"e"' });
  assert.equal(result(T0 + DAY, { code: 3, status: 304, oid: 4 }), 'not_modified');
  const r = row();
  assert.equal(r.state, 'not_modified');
  assert.equal(r.interval, 1.5 * DAY);
  assert.equal(r.nextFetch, T0 + DAY + 1.5 * DAY);
  assert.equal(r.oid, 3);
  assert.equal(r.checksum, MD5_A);
  assert.equal(r.etag, '"e"');
  assert.equal(r.status, 304);
});

test('3xx: redirect with its canonical target; a stable target lengthens the interval', (t) => {
  const { result, row } = oneUrl(t);
  assert.equal(result(T0, { code: 1, status: 301, redirect: '/moved#x', oid: 5 }), 'redirect');
  assert.equal(row().redirect, 'http://a.example/moved');
  assert.equal(row().interval, DAY);
  result(T0 + DAY, { code: 1, status: 301, redirect: 'http://a.example/moved' });
  assert.equal(row().interval, 1.5 * DAY);
  result(T0 + 3 * DAY, { code: 1, status: 302, redirect: 'http://a.example/elsewhere' });
  assert.equal(row().interval, 0.75 * DAY);
  result(T0 + 4 * DAY, { code: 0, status: 200, checksum: MD5_A });
  assert.equal(row().redirect, undefined);
  assert.equal(row().state, 'ok');
});

test('404 once is an error retried later; 404 or 410 twice in a row is gone, never planned again', (t) => {
  const { db, url, result, row } = oneUrl(t);
  assert.equal(result(T0, { code: 2404, status: 404 }), 'error');
  assert.equal(row().error, 2404);
  assert.equal(row().nextFetch, T0 + HOUR);
  assert.deepEqual(
    db.due(T0 + HOUR, 10).map((d) => d.url),
    ['http://a.example/page'],
  );
  // A success between two 404s starts over.
  result(T0 + HOUR, { code: 0, status: 200, checksum: MD5_A });
  assert.equal(result(T0 + 2 * DAY, { code: 2404, status: 404 }), 'error');
  db.markQueued([fp(url)], T0 + 3 * DAY);
  assert.equal(result(T0 + 3 * DAY, { code: 2410, status: 410 }), 'gone');
  assert.equal(row().nextFetch, undefined);
  assert.deepEqual(db.due(T0 + 365 * DAY, 10), []);
});

test('a second 404 to the same planned fetch (a twin after a killed gatherer) leaves the URL an error, not gone', (t) => {
  const { db, url, result, row } = oneUrl(t);
  db.markQueued([fp(url)], T0);
  assert.equal(result(T0, { code: 2404, status: 404 }), 'error');
  assert.equal(result(T0 + 5, { code: 2404, status: 404 }), 'error', 'the twin does not count as a second answer');
  assert.ok(row().nextFetch !== undefined, 'still planned again');
  db.markQueued([fp(url)], T0 + HOUR);
  assert.equal(result(T0 + HOUR, { code: 2404, status: 404 }), 'gone');
});

test('2304: disallowed by robots.txt, not planned again', (t) => {
  const { db, result, row } = oneUrl(t);
  assert.equal(result(T0, { code: 2304 }), 'disallowed');
  assert.equal(row().error, 2304);
  assert.equal(row().nextFetch, undefined);
  assert.deepEqual(db.due(T0 + 365 * DAY, 10), []);
});

test('2308: taken down in the gatherer queue is not a fetch; the row is planned again once the takedown is lifted', (t) => {
  const { db, url, result, row } = oneUrl(t);
  const hidden = TakedownSet.of([{ op: 'add', kind: 'url', target: url, reason: 'test', time: new Date(T0 * 1000).toISOString() }]);
  // Never fetched: new again, passed over while the takedown holds, planned at once after.
  db.markQueued([fp(url)], T0);
  assert.equal(result(T0 + 5, { code: 2308 }), 'new');
  assert.equal(row().lastFetch, undefined);
  assert.equal(row().error, undefined);
  assert.deepEqual(db.due(T0 + 10, 10, Infinity, hidden), []);
  assert.deepEqual(db.due(T0 + 10, 10).map((d) => d.url), [url]);
  // Fetched before: stays queued, due at once, its copy and validators kept for a conditional refetch.
  result(T0 + HOUR, { code: 0, status: 200, checksum: MD5_A, oid: 4, etag: '"v"' });
  db.markQueued([fp(url)], T0 + 2 * DAY);
  assert.equal(result(T0 + 2 * DAY + 5, { code: 2308 }), 'queued');
  const r = row();
  assert.deepEqual([r.lastFetch, r.nextFetch, r.oid, r.checksum, r.etag, r.retries, r.error], [T0 + HOUR, T0 + 2 * DAY + 5, 4, MD5_A, '"v"', 0, undefined]);
  assert.deepEqual(db.due(T0 + 2 * DAY + 10, 10, Infinity, hidden), []);
  const [again] = db.due(T0 + 2 * DAY + 10, 10);
  assert.deepEqual([again?.url, again?.ifNoneMatch], [url, '"v"']);
  // A row settled by a fetch of a twin entry is not moved by a takedown met later.
  assert.equal(result(T0 + 2 * DAY + 6, { code: 0, status: 200, checksum: MD5_A }), 'ok');
  assert.equal(result(T0 + 2 * DAY + 7, { code: 2308 }), 'ok');
  assert.equal(row().nextFetch, T0 + 2 * DAY + 6 + 1.5 * DAY);
});

test('temporary errors are retried with a doubling delay (or Retry-After), then given up until max_refetch', (t) => {
  const { db, result, row } = oneUrl(t);
  let time = T0;
  const waits: number[] = [];
  for (let i = 1; i <= 3; i++) {
    assert.equal(result(time, { code: 1503, status: 503 }), 'error');
    const r = row();
    assert.equal(r.retries, i);
    assert.equal(r.error, 1503);
    waits.push(r.nextFetch! - time);
    assert.equal(db.due(r.nextFetch! - 1, 10).length, 0);
    assert.equal(db.due(r.nextFetch!, 10).length, 1);
    time = r.nextFetch!;
  }
  assert.deepEqual(waits, [HOUR, 2 * HOUR, 4 * HOUR]);
  assert.equal(result(time, { code: 1503, status: 503 }), 'error');
  const r = row();
  assert.equal(r.retries, 4);
  assert.equal(r.error, 2503, 'given up: the permanent code');
  assert.equal(r.nextFetch, time + 30 * DAY);
  // A success resets the count.
  result(time + 30 * DAY, { code: 0, status: 200, checksum: MD5_A });
  assert.equal(row().retries, 0);
  assert.equal(row().error, undefined);
  result(time + 31 * DAY, { code: 1429, status: 429, retryAfter: 5 * HOUR });
  assert.equal(row().nextFetch, time + 31 * DAY + 5 * HOUR);
});

test('applying a result twice changes nothing', (t) => {
  const { result, row } = oneUrl(t);
  result(T0, { code: 0, status: 200, checksum: MD5_A });
  const twice = { code: 1503, status: 503 };
  assert.equal(result(T0 + DAY, twice), 'error');
  const once = row();
  assert.equal(result(T0 + DAY, twice), undefined);
  assert.deepEqual(row(), once);
});

test('other permanent errors wait max_refetch; a result older than the last one is ignored', (t) => {
  const { result, row } = oneUrl(t);
  result(T0, { code: 0, status: 200, checksum: MD5_A, oid: 1 });
  assert.equal(result(T0 + DAY, { code: 2202 }), 'error');
  assert.equal(row().nextFetch, T0 + DAY + 30 * DAY);
  assert.equal(row().oid, 1, 'the copy we have is kept');
  assert.equal(row().checksum, MD5_A);
  assert.equal(result(T0 + 1, { code: 0, status: 200 }), undefined);
  assert.equal(row().state, 'error');
});

test('a result for an unknown URL adds it, outside the site budget', (t) => {
  const { db } = openDb(t, { max_urls_per_site: 1 });
  db.inject([{ url: 'http://a.example/1' }], T0);
  assert.equal(db.recordResult({ url: 'http://a.example/2', time: T0, code: 0, status: 200 }, T0), 'ok');
  assert.equal(db.get('http://a.example/2')?.depth, 0);
  assert.equal(db.getSite('http://a.example/')?.urls, 2);
  assert.throws(() => db.recordResult({ url: 'mailto:x@y', time: T0, code: 0 }, T0), (err: unknown) => isSherlockError(err, 'SHERLOCK_BAD_URL'));
});

test('an archived capture adds its URL as fetched but plans no fetch of it, nor does a newer capture; a URL the crawl planned stays planned; shepherd refetch asks them all', (t) => {
  const { db } = openDb(t);
  const years = 365 * DAY;
  const old = T0 - 10 * years;
  // Only in an archive: fetched (ten years ago), never due.
  assert.equal(db.recordResult({ url: 'http://a.example/old', time: old, code: 0, status: 200, checksum: 'aa'.repeat(16), oid: 1, archived: true }, T0), 'ok');
  assert.equal(db.get('http://a.example/old')?.lastFetch, old);
  assert.equal(db.get('http://a.example/old')?.nextFetch, undefined);
  assert.equal(db.recordResult({ url: 'http://a.example/old', time: old + years, code: 0, status: 200, checksum: 'bb'.repeat(16), oid: 2, archived: true }, T0), 'ok');
  assert.equal(db.get('http://a.example/old')?.oid, 2, 'the newer capture is the row');
  assert.equal(db.get('http://a.example/old')?.nextFetch, undefined);
  // Seeded (or linked) before, the crawl wants it: an archived capture does not take that away.
  db.inject([{ url: 'http://a.example/seeded' }], T0);
  db.recordResult({ url: 'http://a.example/seeded', time: old, code: 0, status: 200, oid: 3, archived: true }, T0);
  assert.equal(db.get('http://a.example/seeded')?.nextFetch, old + DAY);
  // Crawled, then a newer archived capture: still refreshed.
  db.recordResult({ url: 'http://a.example/crawled', time: old, code: 0, status: 200, oid: 4 }, T0);
  db.recordResult({ url: 'http://a.example/crawled', time: old + years, code: 0, status: 200, oid: 5, archived: true }, T0);
  assert.notEqual(db.get('http://a.example/crawled')?.nextFetch, undefined);
  assert.deepEqual(db.due(T0 + years, 10).map((d) => d.url).sort(), ['http://a.example/crawled', 'http://a.example/seeded']);
  assert.equal(db.refetchNow(undefined, T0), 3);
  assert.deepEqual(db.due(T0, 10).map((d) => d.url).sort(), ['http://a.example/crawled', 'http://a.example/old', 'http://a.example/seeded']);
});

test('due: refresh-due first, then new by weight and depth; per-site and total limits; queued URLs leave the bands', (t) => {
  const { db } = openDb(t);
  db.inject(
    [
      { url: 'http://a.example/deep', depth: 3 },
      { url: 'http://a.example/shallow', depth: 1 },
      { url: 'http://b.example/heavy', depth: 5 },
      { url: 'http://b.example/seed', depth: 0 },
      { url: 'http://c.example/old', depth: 0 },
      { url: 'http://c.example/later', depth: 0 },
    ],
    T0,
  );
  db.feedback([{ footprint: fp('http://b.example/heavy'), weight: 2 }]);
  // c.example/old was fetched at T0 and is due at T0 + 1 d; c.example/later a day after.
  db.recordResult({ url: 'http://c.example/old', time: T0, code: 0, status: 200, checksum: MD5_A, lastModified: T0 - DAY, etag: '"x"' }, T0);
  db.recordResult({ url: 'http://c.example/later', time: T0 + DAY, code: 0, status: 200 }, T0 + DAY);
  db.inject([{ url: 'http://d.example/new', depth: 1 }], T0 + DAY);

  const now = T0 + DAY;
  const all = db.due(now, 100);
  assert.deepEqual(
    all.map((d) => [d.band, d.url, d.priority]),
    [
      ['refresh', 'http://c.example/old', 0],
      ['new', 'http://b.example/heavy', 1_000_000_000],
      ['new', 'http://b.example/seed', 1_000_000_001],
      ['new', 'http://a.example/shallow', 1_000_000_002],
      ['new', 'http://d.example/new', 1_000_000_003],
      ['new', 'http://a.example/deep', 1_000_000_004],
    ],
  );
  assert.equal(all[0]!.ifModifiedSince, new Date((T0 - DAY) * 1000).toUTCString());
  assert.equal(all[0]!.ifNoneMatch, '"x"');
  assert.equal(all[0]!.state, 'ok');
  assert.equal(all[1]!.ifModifiedSince, undefined);

  assert.deepEqual(
    db.due(now, 100, 1).map((d) => d.url),
    ['http://c.example/old', 'http://b.example/heavy', 'http://a.example/shallow', 'http://d.example/new'],
  );
  assert.deepEqual(
    db.due(now, 2).map((d) => d.url),
    ['http://c.example/old', 'http://b.example/heavy'],
  );
  assert.equal(db.due(now, 0).length, 0);

  assert.equal(db.markQueued([fp('http://c.example/old'), fp('http://b.example/heavy')], now), 2);
  assert.equal(db.get('http://b.example/heavy')?.state, 'queued');
  assert.deepEqual(
    db.due(now, 2).map((d) => d.url),
    ['http://b.example/seed', 'http://a.example/shallow'],
  );
  // A queued URL whose result never comes back is planned again after requeue_after.
  const late = db.due(now + 7 * DAY, 3);
  assert.deepEqual(
    late.map((d) => [d.band, d.url]),
    [
      ['refresh', 'http://b.example/heavy'],
      ['refresh', 'http://c.example/later'],
      ['refresh', 'http://c.example/old'],
    ],
  );
});

test('due interleaves the sites of one batch instead of running through one site', (t) => {
  const { db } = openDb(t);
  const entries = [];
  for (const host of ['a', 'b', 'c', 'd']) for (let i = 0; i < 50; i++) entries.push({ url: `http://${host}.example/${i}` });
  db.inject(entries, T0);
  const first = db.due(T0, 20).map((d) => new URL(d.url).host);
  assert.equal(new Set(first).size, 4, first.join(' '));
  const limited = db.due(T0, 1000, 5);
  assert.equal(limited.length, 20);
});

test('feedback marks duplicates, which are planned again only max_refetch after their last fetch', (t) => {
  const { db } = openDb(t);
  db.inject([{ url: 'http://a.example/1' }, { url: 'http://a.example/2' }], T0);
  db.recordResults(['http://a.example/1', 'http://a.example/2'].map((url) => ({ url, time: T0, code: 0, status: 200, checksum: MD5_A, oid: 1 })), T0);
  assert.equal(db.feedback([{ footprint: fp('http://a.example/2'), duplicate: true, weight: 1 }]), 2);
  const copy = db.get('http://a.example/2')!;
  assert.equal(copy.state, 'duplicate');
  assert.equal(copy.weight, 1);
  const month = 30 * DAY;
  assert.equal(copy.nextFetch, T0 + month);
  // Its twin is due after its interval; the duplicate not until a month after its fetch, then as any row.
  const later = T0 + month - 1;
  assert.deepEqual(db.due(later, 10).map((d) => d.url), ['http://a.example/1']);
  assert.deepEqual(db.due(T0 + month, 10).map((d) => d.url).sort(), ['http://a.example/1', 'http://a.example/2']);
  assert.equal(db.markQueued([fp('http://a.example/2')], T0 + month), 1);
  db.recordResults([{ url: 'http://a.example/2', time: T0 + month, code: 0, status: 200, checksum: 'bb'.repeat(16), oid: 2 }], T0 + month);
  assert.equal(db.get('http://a.example/2')?.state, 'ok', 'fetched again, it waits for the next index to say whether it is still a copy');
});

test('a URL marked duplicate before it was ever fetched is not scheduled; recrawl-now asks duplicates again', (t) => {
  const { db } = openDb(t);
  db.inject([{ url: 'http://a.example/1' }, { url: 'http://a.example/2' }], T0);
  db.feedback([{ footprint: fp('http://a.example/2'), duplicate: true }]);
  assert.equal(db.get('http://a.example/2')?.nextFetch, undefined);
  assert.deepEqual(db.due(T0, 10).map((d) => d.url), ['http://a.example/1']);
  assert.equal(db.refetchNow(undefined, T0), 1);
  assert.deepEqual(db.due(T0, 10).map((d) => d.url).sort(), ['http://a.example/1', 'http://a.example/2']);
});

test('a checkpoint set in the transaction of its data survives reopening; a failed transaction loses both', (t) => {
  const h = harness(t);
  const db = h.open({ max_urls_per_site: 3 });
  db.inject([{ url: 'http://a.example/seed' }], T0);
  db.transaction(() => {
    const states = db.recordResults(
      [
        { url: 'http://a.example/seed', time: T0, code: 0, status: 200, checksum: MD5_A, oid: 1 },
        { url: 'http://a.example/seed', time: T0 - 5, code: 1503 },
      ],
      T0,
    );
    assert.deepEqual(states, { ok: 1, stale: 1 });
    db.addLinks(fp('http://a.example/seed'), ['/one'], undefined, T0);
    db.setMeta('bucket_checkpoint', 2);
  });
  assert.throws(
    () =>
      db.transaction(() => {
        db.addLinks(fp('http://a.example/seed'), ['/two'], undefined, T0);
        db.setMeta('bucket_checkpoint', 3);
        throw new Error('merge failed');
      }),
    /merge failed/,
  );
  assert.equal(db.getMeta('bucket_checkpoint'), 2);
  assert.equal(db.get('http://a.example/two'), undefined);
  // The site count rolled back with the rows: one more URL still fits.
  assert.equal(db.getSite('http://a.example/')?.urls, 2);
  assert.deepEqual(db.inject([{ url: 'http://a.example/three' }, { url: 'http://a.example/four' }], T0), { added: 1, known: 0, refused: 1 });
  assert.equal(db.getSite('http://a.example/')?.urls, 3);
  db.close();
  const again = h.open();
  assert.equal(again.getMeta('bucket_checkpoint'), 2);
  assert.equal(again.get('http://a.example/seed')?.state, 'ok');
  assert.equal(again.get('http://a.example/one')?.depth, 1);
});
