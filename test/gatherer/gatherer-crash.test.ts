/**
 * kill -9 of `sherlock gatherer run` in the middle of a crawl, then a restart:
 * every URL ends with exactly one stored object, the ARC files and the
 * buckets agree record for record, and only requests in flight at the kill
 * may reach a server twice.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { test } from 'node:test';
import { writePlan } from '../../common/gather/plan-file.js';
import { arcRecords, storedObjects } from '../helpers/gather-state.js';
import { startFixture, type Fixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { cliPath, scratchDir } from '../helpers/paths.js';

const PAGES = 60;
const CONNECTIONS = 8;
const SETTINGS = [
  'gatherer.allow_private_addresses=true',
  'gatherer.min_delay=0s',
  'gatherer.sync_interval=100ms',
  `gatherer.max_connections=${CONNECTIONS}`,
  'log.level=notice',
].flatMap((s) => ['--set', s]);

function slowPage(i: number): RouteHandler {
  return (_req: IncomingMessage, res: ServerResponse) => {
    setTimeout(() => res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<title>${i}</title><p>page ${i} ${'x'.repeat(2000)}`), 5);
  };
}

test('kill -9 mid-crawl and restart: each URL stored exactly once, ARC and buckets agree', async (t) => {
  const state = scratchDir(t);
  const fixtures: Fixture[] = [];
  for (const address of ['127.0.0.8', '127.0.0.9', '127.0.0.10', '127.0.0.11']) {
    const routes: Record<string, RouteHandler> = {};
    for (let i = 0; i < PAGES; i++) routes[`/p${i}`] = slowPage(i);
    const fixture = await startFixture({ address, routes });
    t.after(() => fixture.close());
    fixtures.push(fixture);
  }
  const urls = fixtures.flatMap((f) => [...Array(PAGES).keys()].map((i) => `${f.origin}/p${i}`));
  writePlan(state, urls.map((url) => ({ url, priority: 1 })));

  const pageRequests = (): number => fixtures.reduce((n, f) => n + f.requests.filter((r) => r.path !== '/robots.txt').length, 0);
  const child = spawn(process.execPath, [cliPath, ...SETTINGS, 'gatherer', 'run', '--state', state], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = once(child, 'exit');
  while (pageRequests() < urls.length / 3) {
    if (child.exitCode !== null) assert.fail(`gatherer exited early (${child.exitCode}): ${stderr}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  child.kill('SIGKILL');
  await exited;
  const atKill = pageRequests();
  assert.ok(atKill < urls.length, 'the kill came before the end of the crawl');

  // Not spawnSync: the servers live in this process and must keep answering.
  const rerun = spawn(process.execPath, [cliPath, ...SETTINGS, 'gatherer', 'run', '--state', state, '--until-idle'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let rerunErr = '';
  rerun.stderr.on('data', (d: Buffer) => (rerunErr += d.toString()));
  const [status] = (await once(rerun, 'exit')) as [number | null];
  assert.equal(status, 0, rerunErr);
  t.diagnostic(rerunErr.trim());

  const objects = storedObjects(state).filter((o) => !o.robots);
  const seen = new Map<string, number>();
  for (const o of objects) seen.set(o.url, (seen.get(o.url) ?? 0) + 1);
  for (const url of urls) assert.equal(seen.get(url), 1, `${url} stored ${seen.get(url) ?? 0} times`);
  assert.equal(objects.length, urls.length);
  assert.ok(objects.every((o) => o.status === 200 && o.code === 0));

  // The ARC files hold exactly the records the buckets point at.
  const records = arcRecords(state);
  const pointed = storedObjects(state).filter((o) => o.arc !== undefined);
  assert.equal(records.length, pointed.length, 'ARC records without a bucket (or the reverse)');
  const byPlace = new Map(records.map((r) => [`${r.file} ${r.offset}`, r]));
  for (const o of pointed) {
    const record = byPlace.get(`${o.arc!.file} ${o.arc!.offset}`);
    assert.equal(record?.url, o.url);
    assert.equal(record?.length, o.arc!.length);
  }

  // Servers saw each page once, except those in flight when the process died.
  let twice = 0;
  for (const f of fixtures) {
    const counts = new Map<string, number>();
    for (const r of f.requests) if (r.path !== '/robots.txt') counts.set(r.path, (counts.get(r.path) ?? 0) + 1);
    for (const n of counts.values()) {
      assert.ok(n <= 2);
      if (n === 2) twice += 1;
    }
  }
  assert.ok(twice <= CONNECTIONS, `${twice} pages fetched twice; at most the ${CONNECTIONS} in flight at the kill may be`);
});
