/**
 * `sherlock gatherer run` as systemd runs it: it picks up plans dropped into
 * its inbox while running, SIGHUP reloads the config file (a new min_delay
 * shows in the gaps the server sees), SIGTERM drains and exits 0 with every
 * file closed (no ARC file left `.open`, the queue lock released).
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { writePlan } from '../../common/gather/plan-file.js';
import { GatherQueue } from '../../common/gather/queue-file.js';
import { storedObjects } from '../helpers/gather-state.js';
import { startFixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { cliPath, scratchDir } from '../helpers/paths.js';

const until = async (what: string, ok: () => boolean, ms = 15_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

test('gatherer run: plans picked up while running, SIGHUP reloads min_delay, SIGTERM drains and closes cleanly', async (t) => {
  const state = scratchDir(t);
  const routes: Record<string, RouteHandler> = {};
  for (let i = 0; i < 40; i++) {
    routes[`/p${i}`] = (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<title>${i}</title>`);
  }
  const fixture = await startFixture({ address: '127.0.0.20', routes });
  t.after(() => fixture.close());
  const configFile = join(state, 'sherlock.toml');
  const writeConfig = (delay: string): void =>
    writeFileSync(configFile, `[gatherer]\nallow_private_addresses = true\nmin_delay = "${delay}"\nsync_interval = "200ms"\n[log]\nlevel = "notice"\n`);
  writeConfig('20ms');

  const child = spawn(process.execPath, [cliPath, '--config', configFile, 'gatherer', 'run', '--state', state], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = once(child, 'exit');
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  const pages = (): number[] => fixture.requests.filter((r) => r.path !== '/robots.txt').map((r) => r.at);
  writePlan(state, [...Array(10).keys()].map((i) => ({ url: `${fixture.origin}/p${i}`, priority: 1 })));
  await until('the first plan to be fetched', () => pages().length === 10);

  writeConfig('400ms');
  child.kill('SIGHUP');
  await until('the reload', () => stderr.includes('config reloaded'));
  writePlan(state, [...Array(30).keys()].map((i) => ({ url: `${fixture.origin}/p${i + 10}`, priority: 1 })));
  await until('two pages of the second plan', () => pages().length >= 12);
  const slow = pages().slice(10);
  assert.ok(slow[1]! - slow[0]! >= 400, `after SIGHUP the gap is ${slow[1]! - slow[0]!} ms, not min_delay 400ms`);

  child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  assert.equal(code, 0, stderr);
  assert.match(stderr, /gatherer stopped/);

  const fetched = pages().length;
  assert.ok(fetched < 40, 'SIGTERM came before the end of the queue');
  const arcs = readdirSync(join(state, 'gather', 'arc'));
  assert.ok(arcs.length > 0 && arcs.every((name) => !name.endsWith('.open')), `ARC files left open: ${arcs.join(' ')}`);
  // Every page the server answered was stored; the rest is still queued (lock released: we can open the queue).
  assert.equal(storedObjects(state).filter((o) => !o.robots).length, fetched);
  const queue = GatherQueue.open(state);
  try {
    const host = [...queue.hosts()][0]!;
    assert.equal(host.queued, 40 - fetched);
  } finally {
    queue.close();
  }
});
