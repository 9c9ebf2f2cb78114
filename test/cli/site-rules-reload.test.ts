/**
 * Site rules reloaded by a running daemon (`sherlock gatherer run`) on
 * SIGHUP: a bad rule file is refused with its file:line in the log and the
 * running rules are kept (the server still sees the old delay); once the
 * file is fixed, the next SIGHUP brings the new rules.
 */

import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { writePlan } from '../../common/gather/plan-file.js';
import { startCli, until } from '../helpers/cli.js';
import { startFixture } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

test('gatherer run on SIGHUP: a bad rule file is logged with file:line and the running rules kept; a good one replaces them', async (t) => {
  const dir = scratchDir(t);
  const server = await startFixture({
    address: '127.0.0.227',
    routes: { '*': (req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<title>${req.url}</title>`) },
  });
  t.after(() => server.close());
  const config = join(dir, 'sherlock.toml');
  writeFileSync(config, '[gatherer]\nallow_private_addresses = true\nmin_delay = "0s"\nsync_interval = "200ms"\n[log]\nlevel = "notice"\n');
  const sites = join(dir, 'sites.d');
  mkdirSync(sites);
  const rule = (delay: string): void => writeFileSync(join(sites, 'local.toml'), `[[site]]\nhost = "127.0.0.227"\ndelay = "${delay}"\n`);
  rule('300ms');
  const state = join(dir, 'state');
  const daemon = startCli(t, ['--config', config, 'gatherer', 'run', '--state', state]);

  const pages = (): number[] => server.requests.filter((r) => r.path !== '/robots.txt').map((r) => r.at);
  const gapsFrom = (first: number): number[] => pages().slice(first).slice(1).map((at, i) => at - pages()[first + i]!);
  let planned = 0;
  const plan = async (n: number): Promise<number> => {
    const first = planned;
    writePlan(state, [...Array(n).keys()].map((i) => ({ url: `${server.origin}/p${first + i}`, priority: 1 })));
    planned += n;
    await until(`pages ${first}–${planned - 1}`, () => pages().length === planned);
    return first;
  };

  for (const gap of gapsFrom(await plan(3))) assert.ok(gap >= 300, `${gap} ms apart; the rule says 300`);

  rule('0s');
  writeFileSync(join(sites, 'zz-bad.toml'), '[[site]]\nhots = "127.0.0.227"\n');
  daemon.child.kill('SIGHUP');
  await until('the refused reload', () => daemon.stderr.includes('config not reloaded'));
  assert.match(daemon.stderr, /zz-bad\.toml:2: hots: unknown key, did you mean host\?/);
  for (const gap of gapsFrom(await plan(3))) assert.ok(gap >= 300, `${gap} ms apart after a refused reload; the running rule says 300`);

  rmSync(join(sites, 'zz-bad.toml'));
  daemon.child.kill('SIGHUP');
  await until('the reload', () => daemon.stderr.includes('config reloaded'));
  const first = await plan(5);
  const span = pages().at(-1)! - pages()[first]!;
  assert.ok(span < 600, `five pages took ${span} ms after the rule went to 0s`);

  daemon.child.kill('SIGTERM');
  assert.equal(await daemon.exited, 0, daemon.stderr);
});
