/**
 * Corruption (docs/reliability.md "Corruption"): flipped bytes and cut files
 * in every file sherlock keeps — buckets, ARC files, index versions, Nutch
 * SequenceFiles, the SQLite URL database, the gatherer's queue and host
 * files. Each is detected with an error naming the file and the offset, the
 * verify commands report it, and the part that meets it keeps serving what
 * is intact where it can (the choice per file is in docs/reliability.md).
 * Where the damage goes is drawn from a printed seed (SHERLOCK_FAULT_SEED).
 */

import assert from 'node:assert/strict';
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { after, test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { readArc } from '../../common/archive/arc-read.js';
import { BucketReader, BUCKET_HEADER_SIZE, bucketFilePath } from '../../common/bucket/file.js';
import { arcDir } from '../../common/archive/arc-place.js';
import { urlDbPath } from '../../shepherd/urldb.js';
import { runCli, type Run } from '../helpers/cli.js';
import { flip, patch } from '../helpers/damage.js';
import { startFixture, startFixtures, type RouteHandler } from '../helpers/http-fixtures.js';
import { nutchData } from '../helpers/nutch-data.js';
import { scratchDir } from '../helpers/paths.js';
import { seededRandom } from './kill-points.js';

const PAGES = 30;
const SETS = ['gatherer.allow_private_addresses=true', 'gatherer.min_delay=0s'].flatMap((s) => ['--set', s]);
const QUEUE_PAGE = 2048;

function pagesOf(pages: number): Record<string, RouteHandler> {
  const routes: Record<string, RouteHandler> = {};
  for (let i = 0; i < pages; i++) {
    routes[`/p${i}`] = (_req: IncomingMessage, res: ServerResponse) => {
      const children = [2 * i + 1, 2 * i + 2].filter((j) => j < pages).map((j) => `<a href="/p${j}">page ${j}</a>`);
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<title>Page ${i}</title><p>alpha beta word${i} gamma delta</p>${children.join(' ')}`);
    };
  }
  return routes;
}

async function cli(args: readonly string[], status: number): Promise<Run> {
  const run = await runCli(args);
  assert.equal(run.status, status, `sherlock ${args.join(' ')}: exit ${run.status}\n${run.stdout}${run.stderr}`);
  return run;
}

/** A crawled and indexed state, made once (by the first test that asks) and copied for each test. */
let base: Promise<string> | undefined;
let baseDir: string | undefined;
after(() => {
  if (baseDir !== undefined) rmSync(baseDir, { recursive: true, force: true });
});
function crawledState(): Promise<string> {
  base ??= (async () => {
    const state = (baseDir = mkdtempSync(join(tmpdir(), 'sherlock-corrupt-base-')));
    const site = await startFixture({ address: '127.0.0.97', routes: pagesOf(PAGES) });
    try {
      writeFileSync(join(state, 'seeds.txt'), `${site.origin}/p0\n`);
      await cli(['crawl', '--state', state, '--seeds', join(state, 'seeds.txt'), '--until-idle', ...SETS], 0);
      await cli(['index', 'build', '--state', state], 0);
    } finally {
      await site.close();
    }
    return state;
  })();
  return base;
}

/** A fresh copy of the crawled state. */
async function copyOfState(t: TestContext): Promise<string> {
  const from = await crawledState();
  const to = scratchDir(t);
  cpSync(from, to, { recursive: true, verbatimSymlinks: true });
  return to;
}

test('buckets: a flipped byte and a cut tail are reported with their offsets; the indexer skips the damaged bucket, the writer cuts the tail', async (t) => {
  const rnd = seededRandom(t);
  const state = await copyOfState(t);
  const file = bucketFilePath(state);
  const reader = BucketReader.open(file);
  const buckets = [...reader.buckets()];
  reader.close();
  const victim = buckets[1 + rnd.below(buckets.length - 2)]!;
  flip(file, victim.offset + BUCKET_HEADER_SIZE + rnd.below(victim.data.length));

  const verify = await cli(['bucket', 'verify', '--state', state], 1);
  assert.match(verify.stdout, new RegExp(`buckets: offset ${victim.offset}: bucket ${victim.oid}: CRC-32 mismatch`));
  assert.match(verify.stdout, new RegExp(`${buckets.length - 1} buckets ok, 0 deleted, 1 problems`));
  const build = await cli(['index', 'build', '--state', state, '--json'], 0);
  assert.match(build.stderr, new RegExp(`damaged buckets skipped file=\\S+ offset=${victim.offset}`));
  const robots = buckets.length - PAGES;
  assert.equal((JSON.parse(build.stdout) as { cards: number }).cards, buckets.length - robots - 1, 'every intact page is indexed');

  // A tail cut by a failing disk: reported, then cut by the writer's repair; the buckets before it stay.
  const last = buckets.at(-1)!;
  truncateSync(file, last.offset + BUCKET_HEADER_SIZE + 1);
  const cut = await cli(['bucket', 'verify', '--state', state], 1);
  assert.match(cut.stdout, new RegExp(`offset ${last.offset}: bucket of \\d+ bytes cut short by the end of the file`));
  await cli(['gatherer', 'run', '--state', state, '--until-idle', ...SETS], 0);
  const repaired = await cli(['bucket', 'verify', '--state', state], 1);
  assert.match(repaired.stdout, new RegExp(`${buckets.length - 2} buckets ok, 0 deleted, 1 problems`), 'only the flipped bucket is left to report');
});

test('ARC files: a flipped byte is reported at its record, lenient export keeps the others; a cut file names where it ends', async (t) => {
  const rnd = seededRandom(t);
  const state = await copyOfState(t);
  const [name] = readdirSync(arcDir(state)).filter((n) => n.endsWith('.arc.gz'));
  const file = join(arcDir(state), name!);
  const records = [...readArc(file)];
  const victim = records[1 + rnd.below(records.length - 2)]!;
  flip(file, victim.offset + 20 + rnd.below(victim.length - 28));

  const verify = await cli(['arc', 'verify', file], 1);
  assert.match(verify.stdout, new RegExp(`${name}: offset ${victim.offset}: `));
  assert.match(verify.stdout, new RegExp(`1 problem, ${records.length - 1} complete records`));
  const strict = await cli(['export', 'cdx', '--state', state, '--out', join(state, 'strict.cdx')], 1);
  assert.match(strict.stderr, new RegExp(`${name}: offset ${victim.offset}: `));
  await cli(['export', 'cdx', '--state', state, '--out', join(state, 'lenient.cdx'), '--lenient'], 1);
  const lines = readFileSync(join(state, 'lenient.cdx'), 'utf8').trim().split('\n');
  assert.equal(lines.length - 1, records.length - 2, 'every intact record but the version block is in the CDX');

  const end = records.at(-1)!;
  truncateSync(file, end.offset + 10);
  const cut = await cli(['arc', 'verify', file], 1);
  assert.match(cut.stdout, new RegExp(`offset ${end.offset}: truncated gzip member`));
});

test('index files: flipped and cut files of a version are named with offsets by index verify; other versions verify', async (t) => {
  const rnd = seededRandom(t);
  const state = await copyOfState(t);
  const index = join(state, 'index');
  const older = readlinkSync(join(index, 'current'));
  await cli(['index', 'build', '--state', state], 0);
  const version = join(index, readlinkSync(join(index, 'current')));
  const damaged = ['WordIndex', 'Cards', 'CardInfo', 'Lexicon', 'Fingerprints', 'StringIndex', 'Suggestions'];
  const cutName = damaged[rnd.below(damaged.length)]!;
  for (const name of damaged) {
    const file = join(version, name);
    const size = statSync(file).size;
    if (name === cutName) truncateSync(file, 64 + rnd.below(size - 64));
    else flip(file, rnd.below(size));
  }
  const verify = await cli(['index', 'verify', '--state', state, '--all'], 1);
  for (const name of damaged) assert.match(verify.stdout, new RegExp(`/${name}: offset \\d+: `), `${name} is reported with an offset`);
  assert.match(verify.stdout, new RegExp(`${older}: 8 files, ok`), 'the older version is whole');
  assert.match(verify.stdout, new RegExp(`\\(current\\): 8 files, ${damaged.length} problems`));
  // The searcher refuses such a version and keeps serving the one it has: test/searcher/engine.test.ts.
});

test('SequenceFiles: a flipped byte anywhere in a crawldb part is caught by its .crc, naming the file and the 512-byte chunk', async (t) => {
  const rnd = seededRandom(t);
  const part = scratchDir(t);
  cpSync(nutchData('nutch-1.21-crawl', 'crawldb', 'current', 'part-r-00000'), part, { recursive: true });
  for (const name of readdirSync(part)) chmodSync(join(part, name), 0o644);
  const data = join(part, 'data');
  const pristine = readFileSync(data);
  await cli(['nutch', 'dump', part], 0);
  for (let i = 0; i < 5; i++) {
    const offset = rnd.below(pristine.length);
    writeFileSync(data, pristine);
    flip(data, offset);
    const dump = await cli(['nutch', 'dump', part], 1);
    assert.match(dump.stderr, new RegExp(`${data}: offset ${offset - (offset % 512)}: checksum mismatch`));
  }
  writeFileSync(data, pristine.subarray(0, rnd.below(pristine.length)));
  const cut = await cli(['nutch', 'dump', part], 1);
  assert.match(cut.stderr, new RegExp(`${part}/(\\.data\\.crc|data): offset \\d+: `), 'a cut file disagrees with its checksums');
});

test('URL database: a damaged page is found by shepherd verify at its offset; the shepherd refuses a damaged database', async (t) => {
  const state = await copyOfState(t);
  const file = urlDbPath(state);
  const db = new Database(file);
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const root = db.prepare(`SELECT rootpage FROM sqlite_master WHERE name = 'urls'`).pluck().get() as number;
  db.close();
  await cli(['shepherd', 'verify', '--state', state], 0);
  patch(file, (root - 1) * pageSize, Buffer.alloc(pageSize, 0xa5));
  const verify = await cli(['shepherd', 'verify', '--state', state], 1);
  assert.match(verify.stdout, new RegExp(`urls\\.sqlite: offset ${(root - 1) * pageSize}: `), "the problem is placed at the damaged page");
  // The shepherd meets the damage when it touches the page: here, injecting a URL into the damaged table.
  writeFileSync(join(state, 'more.txt'), 'http://127.0.0.97/new-page\n');
  const inject = await cli(['inject', '--state', state, join(state, 'more.txt')], 1);
  assert.match(inject.stderr, /urls\.sqlite: .*SQLITE_CORRUPT/);
  const cycle = await cli(['shepherd', 'run', '--state', state, '--once'], 1);
  assert.match(cycle.stderr, /urls\.sqlite: .*SQLITE_CORRUPT/);

  patch(file, 0, Buffer.from('not a database at all'));
  const header = await cli(['shepherd', 'verify', '--state', state], 1);
  assert.match(header.stdout, /urls\.sqlite: offset 0: file is not a database/);
  const status = await cli(['status', '--state', state], 1);
  assert.match(status.stderr, /urls\.sqlite: .*SQLITE_NOTADB/);
});

test('URL database: a footprint held by two rows (written around sherlock) is found by shepherd verify', async (t) => {
  const state = await copyOfState(t);
  const file = urlDbPath(state);
  const db = new Database(file);
  const row = db.prepare(`SELECT id, footprint, site_id FROM urls ORDER BY id LIMIT 1`).get() as { id: number; footprint: Buffer; site_id: number };
  const copy = db
    .prepare(`INSERT INTO urls (footprint, url, site_id, state, depth, first_seen) VALUES (?, 'http://127.0.0.97/copy', ?, 0, 0, 0)`)
    .run(row.footprint, row.site_id).lastInsertRowid;
  db.close();
  const verify = await cli(['shepherd', 'verify', '--state', state], 1);
  assert.match(verify.stdout, new RegExp(`urls\\.sqlite: footprint ${row.footprint.toString('hex')} is held by rows ${row.id}, ${copy}; a URL has one row`));
  assert.match(verify.stdout, /urls\.sqlite: 1 problems/);
});

test('gatherer queue: a damaged page quarantines its host, logged with file and offset, while the other host is fetched to the end', async (t) => {
  const state = scratchDir(t);
  const sites = await startFixtures(t, ['127.0.0.98', '127.0.0.99'], () => pagesOf(150));
  const urls = sites.flatMap((f) => Array.from({ length: 150 }, (_, i) => `${f.origin}/p${i}`));
  await cli(['gatherer', 'add', '--state', state, ...urls], 0);
  await cli(['gatherer', 'run', '--state', state, '--max-pages', '2', ...SETS], 0);
  // The first page of the first host owning one (owner: u32 at page offset 4).
  const queue = join(state, 'gather', 'queue');
  const bytes = readFileSync(queue);
  let page = 1;
  while (bytes.readUInt32LE(page * QUEUE_PAGE + 4) === 0) page++;
  flip(queue, page * QUEUE_PAGE + 20);
  const before = sites.map((f) => f.requests.length);

  const run = await cli(['gatherer', 'run', '--state', state, '--until-idle', ...SETS], 0);
  assert.match(run.stderr, new RegExp(`damaged queue page: host quarantined until restart host=\\S+ file=${queue} offset=${page * QUEUE_PAGE}`));
  const fetched = sites.map((f, i) => new Set(f.requests.slice(before[i]).map((r) => r.path).filter((p) => p.startsWith('/p'))).size);
  assert.equal(fetched.filter((n) => n >= 148).length, 1, `one host fetched to the end, the other quarantined: ${fetched.join(', ')}`);
  const status = await cli(['gatherer', 'status', '--state', state], 0);
  assert.match(status.stdout, /queued (1[0-9]{2}|[5-9][0-9])/, 'the quarantined host keeps its entries queued');
});

test('gatherer host file: a damaged record is refused at start, naming the file and offset', async (t) => {
  const state = await copyOfState(t);
  const hosts = join(state, 'gather', 'hosts');
  flip(hosts, 512 + 40);
  const run = await cli(['gatherer', 'run', '--state', state, '--until-idle', ...SETS], 1);
  assert.match(run.stderr, new RegExp(`${hosts}: offset 512: host record 1: CRC-32 mismatch`));
});
