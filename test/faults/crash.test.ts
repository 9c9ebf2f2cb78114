/**
 * Crash safety (docs/reliability.md "Crash safety"): every command that
 * writes is killed with SIGKILL at random moments — `crawl`, `gatherer run`
 * and `shepherd run --once` while a two-host site is gathered, `index build`,
 * `export cdx` and `export warc` — then run again, until the work is done.
 * At the end nothing is lost or damaged:
 * - `bucket verify` and `arc verify` pass, and every bucket's `a` attribute
 *   names a readable ARC record of its URL;
 * - the URL database agrees with the buckets: no URL left new or queued,
 *   every fetched URL has a bucket, every page's bucket a fetched row;
 * - the site's access log shows every page fetched, and fetched twice no
 *   more often than the kills of a fetching process allow: the entries a
 *   host has fetched and not yet stored (at most MAX_UNSTORED_PER_HOST) die
 *   with the process and are fetched again;
 * - after every kill of a build `current` names a version the Manifest
 *   verifies, and `index verify --all` passes at the end;
 * - after every kill of an export, what stands under the output's name is
 *   byte for byte what an uninterrupted export writes.
 * The random moments come from a printed seed (SHERLOCK_FAULT_SEED replays
 * a run); SHERLOCK_STRESS scales the number of kills.
 */

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { ArcReader } from '../../common/archive/arc-read.js';
import { BucketReader, bucketFilePath } from '../../common/bucket/file.js';
import { verifyIndexDir } from '../../common/index/manifest.js';
import { MAX_UNSTORED_PER_HOST } from '../../gatherer/gatherer.js';
import { arcDir, parseArcAttribute } from '../../common/archive/arc-place.js';
import { readUrls } from '../../shepherd/status.js';
import { runCli } from '../helpers/cli.js';
import { startFixtures, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';
import { killAfter, seededRandom, STRESS } from './kill-points.js';

const PAGES = 120;
const GATHER_KILLS = 24 * STRESS;
const INDEX_KILLS = 14 * STRESS;
const EXPORT_KILLS = 14 * STRESS;
// 20 ms of rest per address keeps a fast machine from crawling the whole site between two kills.
const SETS = ['gatherer.allow_private_addresses=true', 'gatherer.min_delay=20ms', 'shepherd.plan_batch=40', 'indexer.memory_budget=64KiB'].flatMap((s) => ['--set', s]);
const FETCHED_STATES = new Set(['ok', 'not_modified', 'redirect', 'error', 'gone', 'disallowed']);

/** A binary tree of pages with words to index, a 404 and a redirect off every tenth, a disallowed path. */
function site(): Record<string, RouteHandler> {
  const routes: Record<string, RouteHandler> = {
    '/robots.txt': (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nDisallow: /private\n'),
    '/moved': (_req, res) => res.writeHead(301, { Location: '/p1' }).end(),
  };
  for (let i = 0; i < PAGES; i++) {
    const words = Array.from({ length: 300 }, (_, k) => `w${((k * 7919 + i * 104729) % 997).toString(36)}`).join(' ');
    routes[`/p${i}`] = (_req, res) => {
      const children = [2 * i + 1, 2 * i + 2].filter((j) => j < PAGES).map((j) => `<a href="/p${j}">page ${j}</a>`);
      const extra = i % 10 === 0 ? `<a href="/missing${i}">x</a> <a href="/moved">m</a> <a href="/private/${i}">p</a>` : '';
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<title>Page ${i}</title><p>${words}</p>${children.join(' ')} <a href="/p0">home</a> ${extra}`);
    };
  }
  return routes;
}

function pageRequests(fixtures: readonly Fixture[]): number {
  return fixtures.reduce((n, f) => n + f.requests.filter((r) => r.path.startsWith('/p')).length, 0);
}

async function ok(args: readonly string[]): Promise<string> {
  const run = await runCli(args);
  assert.equal(run.status, 0, `sherlock ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

test('every writer killed at random moments and restarted loses nothing and leaves every file whole', { timeout: 600_000 * STRESS }, async (t) => {
  const rnd = seededRandom(t);
  const state = scratchDir(t);
  const fixtures = await startFixtures(t, ['127.0.0.90', '127.0.0.91'], site);
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, fixtures.map((f) => `${f.origin}/p0\n`).join(''));
  await ok(['inject', '--state', state, seeds]);
  const figures = { gather: 0, shepherd: 0, index: 0, export: 0, buildsCut: 0, exportsCut: 0 };

  // Gathering: crawl, gatherer and shepherd cycles killed in turn, each after it fetched something (or at once).
  let fetchingKills = 0;
  let midCrawl = 0;
  for (let round = 0; figures.gather + figures.shepherd < GATHER_KILLS && round < 4 * GATHER_KILLS; round++) {
    const kind = (['crawl', 'gatherer', 'shepherd'] as const)[rnd.below(3)]!;
    const before = pageRequests(fixtures);
    const args =
      kind === 'crawl' ? ['crawl', '--state', state, '--seeds', seeds, '--until-idle'] : kind === 'gatherer' ? ['gatherer', 'run', '--state', state, '--until-idle'] : ['shepherd', 'run', '--state', state, '--once'];
    const fetches = kind !== 'shepherd';
    const waitForFetch = fetches && rnd.next() < 0.7;
    const result = await killAfter(t, [...args, ...SETS], rnd.below(fetches ? 150 : 700), () => !waitForFetch || pageRequests(fixtures) > before);
    if (!result.killed) {
      assert.equal(result.status, 0, `${kind} exited by itself: ${result.run.stderr}`);
      continue;
    }
    if (new Set(fixtures.flatMap((f) => f.requests.map((r) => `${f.origin}${r.path}`)).filter((u) => /\/p\d+$/.test(u))).size < 2 * PAGES) midCrawl += 1;
    if (kind === 'shepherd') figures.shepherd += 1;
    else figures.gather += 1;
    if (fetches) fetchingKills += 1;
  }
  assert.ok(midCrawl >= (figures.gather + figures.shepherd) / 2, `${midCrawl} kills came before every page was fetched`);
  await ok(['crawl', '--state', state, '--seeds', seeds, '--until-idle', ...SETS]);

  // Nothing lost, nothing fetched twice beyond the fetches in flight at each kill.
  const rows = [...readUrls(state)];
  const left = rows.filter((r) => !FETCHED_STATES.has(r.state));
  assert.deepEqual(left.map((r) => `${r.url} ${r.state}`), [], 'no URL left unfetched');
  let twice = 0;
  for (const f of fixtures) {
    const paths = f.requests.map((r) => r.path).filter((p) => p.startsWith('/p'));
    assert.equal(new Set(paths).size, PAGES, `${f.origin}: every page fetched`);
    twice += paths.length - PAGES;
  }
  const allowed = MAX_UNSTORED_PER_HOST * fixtures.length * fetchingKills;
  assert.ok(twice <= allowed, `${twice} pages fetched twice in ${fetchingKills} kills of a fetching process`);

  // Buckets and ARC records whole; the database and the buckets agree.
  const bucketVerify = await ok(['bucket', 'verify', '--state', state, '--json']);
  const bucketReport = JSON.parse(bucketVerify) as { buckets: number; problems: unknown[] };
  assert.deepEqual(bucketReport.problems, []);
  const arcFiles = readdirSync(arcDir(state)).filter((n) => /\.arc\.gz$/.test(n));
  let arcRecords = 0;
  for (const name of arcFiles) {
    const out = await ok(['arc', 'verify', join(arcDir(state), name), '--json']);
    const summary = JSON.parse(out.trim().split('\n').at(-1)!) as { records: number; ok: boolean };
    assert.ok(summary.ok);
    arcRecords += summary.records;
  }
  const stored = new Map<string, number>();
  const reader = BucketReader.open(bucketFilePath(state));
  const arcs = new Map<string, ArcReader>();
  try {
    for (const bucket of reader.buckets()) {
      const header = reader.decode(bucket).header;
      const url = header.string('U')!;
      stored.set(url, (stored.get(url) ?? 0) + 1);
      const at = parseArcAttribute(header.string('a'));
      if (at === undefined) continue;
      let arc = arcs.get(at.file);
      if (arc === undefined) arcs.set(at.file, (arc = ArcReader.open(join(arcDir(state), at.file))));
      const record = arc.recordAt(at.offset);
      assert.equal(record.header.url, url, `bucket ${bucket.oid}: its ARC record is of its URL`);
    }
  } finally {
    reader.close();
    for (const arc of arcs.values()) arc.close();
  }
  const known = new Map(rows.map((r) => [r.url, r.state]));
  for (const row of rows) assert.ok(stored.has(row.url), `${row.url} (${row.state}) has a bucket`);
  for (const url of stored.keys()) if (!url.endsWith('/robots.txt')) assert.ok(FETCHED_STATES.has(known.get(url) ?? 'unknown'), `${url} stored and fetched in the database`);

  // Index builds killed at random moments: current is always whole.
  await ok(['index', 'build', '--state', state, ...SETS]);
  const index = join(state, 'index');
  const temps = () => readdirSync(index).filter((n) => n.endsWith('.tmp'));
  for (let round = 0; figures.index < INDEX_KILLS && round < 3 * INDEX_KILLS; round++) {
    const before = temps();
    // Most kills wait for the first stage to begin (past the process's start), the rest land anywhere.
    const staged = rnd.next() < 0.7;
    const result = await killAfter(t, ['index', 'build', '--state', state, ...SETS], rnd.below(staged ? 400 : 1500), (run) => !staged || run.stderr.includes('stage='));
    if (result.killed) figures.index += 1;
    else assert.equal(result.status, 0, result.run.stderr);
    if (temps().some((n) => !before.includes(n))) figures.buildsCut += 1;
    verifyIndexDir(join(index, 'current'));
  }
  await ok(['index', 'build', '--state', state, ...SETS]);
  await ok(['index', 'verify', '--state', state, '--all']);
  assert.deepEqual(readdirSync(index).filter((n) => n.endsWith('.tmp')), [], 'the last build cleared what killed ones left');

  // Exports killed at random moments: the output is whole or absent, never half.
  const expected = join(state, 'expected');
  mkdirSync(join(expected, 'warc'), { recursive: true });
  await ok(['export', 'cdx', '--state', state, '--out', join(expected, 'index.cdx')]);
  await ok(['export', 'warc', '--state', state, '--out', join(expected, 'warc')]);
  const out = join(state, 'out');
  for (let round = 0; figures.export < EXPORT_KILLS && round < 3 * EXPORT_KILLS; round++) {
    rmSync(out, { recursive: true, force: true });
    mkdirSync(join(out, 'warc'), { recursive: true });
    const warc = rnd.next() < 0.5;
    const args = warc ? ['export', 'warc', '--state', state, '--out', join(out, 'warc')] : ['export', 'cdx', '--state', state, '--out', join(out, 'index.cdx'), '--sort-memory', '4KiB'];
    // Most kills wait for the output's temporary file, the rest land anywhere from the start.
    const writing = () => readdirSync(out, { recursive: true }).some((n) => String(n).endsWith('.tmp'));
    const result = rnd.next() < 0.6 ? await killAfter(t, args, rnd.below(30), writing) : await killAfter(t, args, rnd.below(600));
    if (result.killed) figures.export += 1;
    else assert.equal(result.status, 0, result.run.stderr);
    if (readdirSync(out, { recursive: true }).some((n) => String(n).endsWith('.tmp'))) figures.exportsCut += 1;
    const names = warc ? readdirSync(join(expected, 'warc')).map((n) => join('warc', n)) : ['index.cdx'];
    for (const name of names) {
      if (existsSync(join(out, name))) assert.ok(readFileSync(join(out, name)).equals(readFileSync(join(expected, name))), `${name} is whole`);
    }
  }

  const kills = figures.gather + figures.shepherd + figures.index + figures.export;
  const line =
    `kill points survived: ${kills} (gathering ${figures.gather}, shepherd ${figures.shepherd}, ${midCrawl} of these mid-crawl, index ${figures.index} (${figures.buildsCut} mid-build), export ${figures.export} (${figures.exportsCut} mid-file)); ` +
    `checked ${bucketReport.buckets} buckets, ${arcRecords} ARC records in ${arcFiles.length} files, ${rows.length} URLs; ` +
    `pages fetched twice ${twice} (allowed ${allowed}); lost 0`;
  t.diagnostic(line);
  console.log(line);
  assert.ok(kills >= 50, `${kills} kill points`);
});
