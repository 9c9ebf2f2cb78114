/**
 * Takedowns under `kill -9` of every daemon (docs/reliability.md "Crash
 * safety"): `sherlock run` crawls a loopback site (still crawling
 * throughout), indexes it and answers over a real WebSocket; `takedown add` of a
 * fetched page and of a prefix of pages not yet fetched hides them within a
 * second; then the supervisor and its four daemons are killed with SIGKILL
 * and `sherlock run` is started again on the same state. The first search
 * after the restart hides them, the site saw no request for them after the
 * adds (bar one in flight), the takedown file lists both, and the index
 * version the restarted indexer publishes holds neither: once they are lifted,
 * a fresh `sherlock search` still does not find them.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { currentVersion } from '../../common/index/layout.js';
import { Client, listening, resultPage, type ResultPage } from '../searcher/net.js';
import { daemonPids, gone, runCli, startCli, until, type Running } from '../helpers/cli.js';
import { startFixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { LOOPBACK_CRAWL } from '../helpers/linked-site.js';
import { scratchDir } from '../helpers/paths.js';

const DAEMONS = ['gatherer', 'shepherd', 'indexer', 'searcher'];
// A chain longer than the test lasts, each answer held back: the crawl is still running at every step.
const PAGES = 600;
const ANSWER_MS = 100;
// Pages under /hold/ linked from each: more than the gatherer fetches in a step, so some are always queued when the prefix goes in.
const HELD = 4;
const SETS = [...LOOPBACK_CRAWL, ...['shepherd.cycle_interval=100ms', 'indexer.poll_interval=100ms', 'indexer.rebuild_documents=3', 'indexer.workers=1'].flatMap((s) => ['--set', s])];

/** `/kp<i>` links to `/kp<i+1>` and to `/hold/<i>-<k>`; kp0 and kp1 share the word pairword, every hold page has holdword. */
function site(): Record<string, RouteHandler> {
  const routes: Record<string, RouteHandler> = {
    '/robots.txt': (_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nAllow: /\n'),
  };
  const page = (body: string): RouteHandler => (_req, res) => setTimeout(() => res.writeHead(200, { 'Content-Type': 'text/html' }).end(body), ANSWER_MS);
  for (let i = 0; i < PAGES; i++) {
    const held = Array.from({ length: HELD }, (_, k) => `<a href="/hold/${i}-${k}">held</a>`).join(' ');
    routes[`/kp${i}`] = page(`<title>kp page ${i}</title><p>kpword${i} ${i < 2 ? 'pairword' : ''} <a href="/kp${i + 1}">next</a> ${held}</p>`);
    for (let k = 0; k < HELD; k++) routes[`/hold/${i}-${k}`] = page(`<title>held ${i}</title><p>holdword holdword${i}x${k}</p>`);
  }
  return routes;
}

/** `sherlock run` on `state`, its searcher on the test's address, and a WebSocket client to it. */
async function startRun(t: TestContext, state: string): Promise<{ run: Running; client: Client }> {
  // Killed, it cannot remove its own temporary files: those go in the test's scratch directory.
  const run = startCli(t, ['run', '--state', state, '--listen', '127.0.0.202:0', ...SETS], { env: { TMPDIR: scratchDir(t) } });
  t.after(() => {
    for (const daemon of DAEMONS) for (const pid of daemonPids(run, daemon)) if (!gone(pid)) process.kill(pid, 'SIGKILL');
  });
  return { run, client: await Client.open(t, `ws://${await listening(run)}/`) };
}

/** SIGKILL of the supervisor and of every daemon's process group, stopped first so that it restarts nothing in between; waits until none is left. */
async function killAll(run: Running): Promise<void> {
  const supervisor = run.child.pid!;
  process.kill(supervisor, 'SIGSTOP');
  const daemons = DAEMONS.flatMap((daemon) => daemonPids(run, daemon)).filter((pid) => !gone(pid));
  assert.equal(daemons.length, DAEMONS.length, run.stderr);
  for (const pid of daemons) process.kill(-pid, 'SIGKILL');
  process.kill(supervisor, 'SIGKILL');
  assert.equal(await run.exited, null);
  for (const pid of daemons) await until(`daemon ${pid} gone`, () => gone(pid), 30_000);
}

test('a takedown hides its URLs within a second, survives kill -9 of every daemon, and the next version leaves them out', { timeout: 180_000 }, async (t) => {
  const fixture = await startFixture({ address: '127.0.0.201', routes: site() });
  t.after(() => fixture.close());
  const state = scratchDir(t);
  const seeds = join(state, 'seeds');
  writeFileSync(seeds, `${fixture.origin}/kp0\n`);
  assert.equal((await runCli(['inject', '--state', state, seeds])).status, 0);
  const target = `${fixture.origin}/kp1`;
  const prefix = `${fixture.origin}/hold/`;
  let n = 0;
  const search = async (client: Client, q: string): Promise<ResultPage> => resultPage(await client.search(`q${n++}`, q));
  /** Searches `q` until `ok`; the milliseconds from `since`. */
  const waitFor = async (client: Client, q: string, since: number, ok: (a: ResultPage) => boolean, ms: number): Promise<number> => {
    for (;;) {
      const a = await search(client, q).catch(() => undefined);
      if (a !== undefined && ok(a)) return performance.now() - since;
      if (performance.now() - since > ms) assert.fail(`${q}: not as expected after ${ms} ms: ${JSON.stringify(a)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  const first = await startRun(t, state);
  await waitFor(first.client, 'pairword', performance.now(), (a) => a.urls.includes(target), 60_000);

  const add = await runCli(['takedown', 'add', target, '--reason', 'complaint 1', '--state', state]);
  assert.equal(add.status, 0, add.stderr);
  const targetAdded = Date.now();
  const hidden = await waitFor(first.client, 'pairword', performance.now(), (a) => !a.urls.includes(target) && a.total === 1, 5000);
  assert.ok(hidden < 1000, `hidden after ${Math.round(hidden)} ms`);
  const addPrefix = await runCli(['takedown', 'add', prefix, '--prefix', '--reason', 'complaint 2', '--state', state]);
  assert.equal(addPrefix.status, 0, addPrefix.stderr);
  const prefixAdded = Date.now();
  const held = await waitFor(first.client, 'holdword', performance.now(), (a) => a.total === 0, 5000);
  assert.ok(held < 1000, `prefix hidden after ${Math.round(held)} ms`);
  // The crawl goes on past the prefix: the gatherer had held pages to skip.
  await until('more pages fetched after the takedowns', () => fixture.requests.filter((r) => r.at > prefixAdded && r.path.startsWith('/kp')).length >= 3, 30_000);

  await killAll(first.run);
  const killed = currentVersion(join(state, 'index'));
  assert.ok(killed !== undefined);

  const list = await runCli(['takedown', 'list', '--json', '--state', state]);
  assert.equal(list.status, 0, list.stderr);
  const listed = list.stdout.trim().split('\n').map((line) => JSON.parse(line) as { kind: string; target: string; reason: string });
  assert.deepEqual(listed.map((l) => [l.kind, l.target, l.reason]).sort(), [['prefix', prefix, 'complaint 2'], ['url', target, 'complaint 1']]);

  const second = await startRun(t, state);
  const restarted = await search(second.client, 'pairword');
  assert.deepEqual(restarted, { total: 1, urls: [`${fixture.origin}/kp0`] }, 'the first search after the restart');
  assert.equal((await search(second.client, 'holdword')).total, 0);

  // The restarted indexer publishes versions of its own (the crawl goes on) and the searcher swaps to one (or a later one).
  const swapped = () => [...second.run.stderr.matchAll(/index version loaded version=(\S+) .*previous=(\S+)/g)].find((m) => m[2] !== 'none')?.[1];
  await until('the searcher to load a version built after the restart', () => swapped() !== undefined, 60_000);
  const next = swapped()!;
  assert.ok(next > killed, `${next} after ${killed}`);
  assert.deepEqual(await search(second.client, 'pairword'), restarted);
  assert.equal(second.run.stderr.match(/daemon exited; restarting/g), null, second.run.stderr);

  // No request for a taken-down URL after its add returned, bar one in flight when the prefix went in.
  const after = (since: number, match: (path: string) => boolean) => fixture.requests.filter((r) => r.at > since && match(r.path)).map((r) => r.path);
  assert.deepEqual(after(targetAdded, (p) => p === '/kp1'), []);
  const inFlight = after(prefixAdded, (p) => p.startsWith('/hold/'));
  assert.ok(inFlight.length <= 1, JSON.stringify(inFlight));
  const line = `hidden after ${Math.round(hidden)} ms (prefix ${Math.round(held)} ms); held pages fetched before the prefix ${after(0, (p) => p.startsWith('/hold/')).length - inFlight.length}, after ${inFlight.length}; pages fetched after it ${after(prefixAdded, (p) => p.startsWith('/kp')).length}; versions ${killed} then ${next}`;
  t.diagnostic(line);
  console.log(line);

  // The version published after the restart holds neither: lifted, they stay absent from a fresh search of it.
  second.run.child.kill('SIGINT');
  assert.equal(await second.run.exited, 0, second.run.stderr);
  assert.ok(currentVersion(join(state, 'index')) !== killed);
  assert.equal((await runCli(['takedown', 'remove', target, '--state', state])).status, 0);
  assert.equal((await runCli(['takedown', 'remove', prefix, '--prefix', '--state', state])).status, 0);
  const fresh = async (q: string): Promise<ResultPage> => {
    const run = await runCli(['search', '--state', state, '--json', q]);
    assert.equal(run.status, 0, run.stderr);
    return resultPage({ type: 'result', ...(JSON.parse(run.stdout) as object) });
  };
  assert.deepEqual(await fresh('pairword'), { total: 1, urls: [`${fixture.origin}/kp0`] });
  assert.equal((await fresh('holdword')).total, 0);
  assert.equal((await fresh('kpword1')).total, 0);
});
