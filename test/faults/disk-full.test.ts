/**
 * Disk full (docs/reliability.md "Disk full"): the state directory lives on
 * a tmpfs of 1 MiB (mounted by the test, which needs root) that a crawl of
 * ~2 MB fills. The writers must stop cleanly — one error line naming the
 * file, no stack trace — with nothing half-written published: the buckets
 * and ARC files verify, every plan in the inbox reads, no index version
 * appears. When space returns (the tmpfs grows) the crawl resumes and
 * finishes, every page fetched. Then another tenant fills the disk: a build
 * fails and leaves `current` on the whole version it named, an export
 * publishes no file.
 *
 * Where the test cannot mount (not root, or a container without the right),
 * the same crawl runs under a file-size limit (RLIMIT_FSIZE, `ulimit -f`):
 * the kernel then fails the writes past the limit with EFBIG, the same write
 * paths as ENOSPC, with no hook in our code. The test prints which ran.
 */

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readlinkSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { inboxDir, readPlan } from '../../common/gather/plan-file.js';
import { verifyIndexDir } from '../../common/index/manifest.js';
import { arcDir } from '../../common/archive/arc-place.js';
import { readUrls } from '../../shepherd/status.js';
import { runCli, type Run } from '../helpers/cli.js';
import { startFixture, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { cliPath, scratchDir } from '../helpers/paths.js';

const PAGES = 100;
const SETS = ['gatherer.allow_private_addresses=true', 'gatherer.min_delay=0s'].flatMap((s) => ['--set', s]);
const FULL = /ENOSPC|SQLITE_FULL|EFBIG/;

/** A binary tree of pages, each with 15 KB of incompressible text. */
function site(): Record<string, RouteHandler> {
  const routes: Record<string, RouteHandler> = {};
  for (let i = 0; i < PAGES; i++) {
    const text = randomBytes(11_000).toString('base64');
    routes[`/p${i}`] = (_req: IncomingMessage, res: ServerResponse) => {
      const children = [2 * i + 1, 2 * i + 2].filter((j) => j < PAGES).map((j) => `<a href="/p${j}">page ${j}</a>`);
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<title>Page ${i}</title><p>${text}</p>${children.join(' ')}`);
    };
  }
  return routes;
}

function mount(dir: string, size: string, remount = false): boolean {
  const args = remount ? ['-o', `remount,size=${size}`, dir] : ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir];
  return spawnSync('mount', args, { stdio: 'ignore' }).status === 0;
}

/** Runs the CLI under `ulimit -f` (KiB): writes past the limit fail with EFBIG (Node ignores SIGXFSZ). */
async function runLimited(kib: number, args: readonly string[]): Promise<Run> {
  const child = spawn('bash', ['-c', `ulimit -f ${kib} && exec "$0" "$@"`, process.execPath, cliPath, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'], CONFIGURATION_DIRECTORY: '/nonexistent' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, stdout, stderr };
}

async function ok(args: readonly string[]): Promise<Run> {
  const run = await runCli(args);
  assert.equal(run.status, 0, `sherlock ${args.join(' ')}: ${run.stderr}`);
  return run;
}

/** A writer that ran out of space: exit 1, one error line naming what failed, no stack trace. */
function stoppedCleanly(run: Run, what: string): void {
  assert.equal(run.status, 1, `${what}: exit ${run.status}\n${run.stderr}`);
  assert.match(run.stderr, FULL, `${what}: the error says the disk is full`);
  assert.doesNotMatch(run.stderr, /\n\s+at /, `${what}: no stack trace`);
}

/** Nothing half-written is published: buckets and ARC files verify, every plan in the inbox reads. */
async function wholeFiles(state: string): Promise<void> {
  await ok(['bucket', 'verify', '--state', state]);
  for (const name of readdirSync(arcDir(state)).filter((n) => /\.arc\.gz$/.test(n))) await ok(['arc', 'verify', join(arcDir(state), name)]);
  const inbox = existsSync(inboxDir(state)) ? readdirSync(inboxDir(state)) : [];
  assert.deepEqual(inbox.filter((n) => n.endsWith('.tmp')), [], 'no plan left half-written');
  for (const name of inbox.filter((n) => n.endsWith('.plan'))) readPlan(join(inboxDir(state), name));
}

async function resumed(state: string, seeds: string, fixture: Fixture): Promise<void> {
  await ok(['crawl', '--state', state, '--seeds', seeds, '--until-idle', ...SETS]);
  await wholeFiles(state);
  const fetched = new Set(fixture.requests.map((r) => r.path).filter((p) => p.startsWith('/p')));
  assert.equal(fetched.size, PAGES, 'every page fetched once space returned');
  assert.deepEqual([...readUrls(state)].filter((r) => r.state === 'new' || r.state === 'queued').map((r) => r.url), [], 'no URL left behind');
}

async function setUp(t: TestContext, root: string): Promise<{ state: string; seeds: string; fixture: Fixture }> {
  const fixture = await startFixture({ address: '127.0.0.93', routes: site() });
  t.after(() => fixture.close());
  const seeds = join(root, 'seeds.txt');
  writeFileSync(seeds, `${fixture.origin}/p0\n`);
  return { state: join(root, 'mnt', 'state'), seeds, fixture };
}

/** Whether this process may mount a tmpfs (root, and a container that allows it); SHERLOCK_FAULT_NO_MOUNT forces the other path. */
function canMount(): boolean {
  if (process.getuid?.() !== 0 || process.env['SHERLOCK_FAULT_NO_MOUNT'] !== undefined) return false;
  const probe = mkdtempSync(join(tmpdir(), 'sherlock-mount-probe-'));
  try {
    return mount(probe, '64k') && spawnSync('umount', [probe]).status === 0;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

const tmpfs = canMount();

test('disk full on a 1 MiB tmpfs: writers stop cleanly, nothing half-written is published, work resumes when space returns', { skip: tmpfs ? false : 'cannot mount a tmpfs here (the RLIMIT_FSIZE test runs instead)' }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sherlock-disk-full-'));
  const mnt = join(dir, 'mnt');
  mkdirSync(mnt);
  assert.ok(mount(mnt, '1m'), 'mount -t tmpfs');
  t.after(() => {
    spawnSync('umount', ['-l', mnt]);
    rmSync(dir, { recursive: true, force: true });
  });
  const { state, seeds, fixture } = await setUp(t, dir);
  console.log('disk full: tmpfs path');

  stoppedCleanly(await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', ...SETS]), 'crawl');
  await wholeFiles(state);
  const index = join(state, 'index');
  stoppedCleanly(await runCli(['index', 'build', '--state', state]), 'index build');
  assert.ok(!existsSync(join(index, 'current')) && readdirSync(index).every((n) => n.endsWith('.tmp') || n === 'build.lock'), 'no index version published');
  assert.ok(mount(mnt, '32m', true), 'the tmpfs grows');
  await resumed(state, seeds, fixture);
  await ok(['index', 'build', '--state', state]);
  const version = readlinkSync(join(index, 'current'));

  // Full again, by another tenant of the disk: a build fails and current stays on the whole version.
  const filler = join(mnt, 'filler');
  const fd = openSync(filler, 'w');
  try {
    for (;;) writeSync(fd, Buffer.alloc(64 * 1024));
  } catch (err) {
    assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
  } finally {
    closeSync(fd);
  }
  stoppedCleanly(await runCli(['index', 'build', '--state', state]), 'index build on a full disk');
  assert.equal(readlinkSync(join(index, 'current')), version);
  verifyIndexDir(join(index, version));
  const out = join(state, 'warc');
  mkdirSync(out);
  stoppedCleanly(await runCli(['export', 'warc', '--state', state, '--out', out]), 'export warc on a full disk');
  assert.deepEqual(readdirSync(out).filter((n) => n.endsWith('.warc.gz')), [], 'no WARC file published');
  rmSync(filler);
  await ok(['index', 'build', '--state', state]);
  await ok(['index', 'verify', '--state', state]);
});

test('writes failing at a file-size limit (RLIMIT_FSIZE): the crawl stops cleanly, files stay whole, and it resumes without the limit', { skip: tmpfs ? 'the tmpfs test runs instead' : false }, async (t) => {
  const dir = scratchDir(t);
  const { state, seeds, fixture } = await setUp(t, dir);
  mkdirSync(join(dir, 'mnt'));
  console.log('disk full: RLIMIT_FSIZE path (no tmpfs here)');
  stoppedCleanly(await runLimited(512, ['crawl', '--state', state, '--seeds', seeds, '--until-idle', ...SETS]), 'crawl');
  await wholeFiles(state);
  stoppedCleanly(await runLimited(512, ['crawl', '--state', state, '--seeds', seeds, '--until-idle', ...SETS]), 'crawl again at the limit');
  await wholeFiles(state);
  await resumed(state, seeds, fixture);
});
