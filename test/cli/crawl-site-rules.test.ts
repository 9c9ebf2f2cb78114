/**
 * Site rules in the shepherd, end to end through `sherlock crawl
 * --until-idle` with a sites.d beside the config file: reject and accept
 * patterns keep URLs from ever being planned (so the servers never see them),
 * and a rule's refetch bounds set the intervals of its URLs in the URL
 * database. `sherlock inject` judges seeds by the same rules.
 */

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { startFixture, type Fixture } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

/** Every page links the same set of paths. */
async function site(t: TestContext, address: string, paths: string[]): Promise<Fixture> {
  const links = paths.map((path) => `<a href="${path}">${path}</a>`).join(' ');
  const fixture = await startFixture({
    address,
    routes: { '*': (req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<title>${req.url}</title>${links}`) },
  });
  t.after(() => fixture.close());
  return fixture;
}

const pagePaths = (f: Fixture) => f.requests.map((r) => r.path).filter((path) => path !== '/robots.txt').sort();

test('a crawl never requests what site rules reject or do not accept, and refetches within the rules bounds', async (t) => {
  const shop = await site(t, '127.0.0.225', ['/', '/a', '/login', '/b?print=1', '/b']);
  const docs = await site(t, '127.0.0.226', ['/docs/', '/docs/x', '/blog/y', '/docs/z']);
  const dir = scratchDir(t);
  const config = join(dir, 'sherlock.toml');
  writeFileSync(config, '[gatherer]\nallow_private_addresses = true\nmin_delay = "0s"\n');
  mkdirSync(join(dir, 'sites.d'));
  writeFileSync(join(dir, 'sites.d', 'shop.toml'), `[[site]]\nhost = "127.0.0.225"\nreject = ["/login", "[?&]print="]\nmin_refetch = "10m"\nmax_refetch = "2h"\n`);
  writeFileSync(join(dir, 'sites.d', 'docs.toml'), `[[site]]\nprefix = "${docs.origin}/"\naccept = ["/docs/"]\n`);
  const state = join(dir, 'state');
  const seeds = join(dir, 'seeds.txt');
  writeFileSync(seeds, `${shop.origin}/\n${docs.origin}/docs/\n`);

  const run = await runCli(['--config', config, 'crawl', '--state', state, '--seeds', seeds, '--until-idle', '--json']);
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(pagePaths(shop), ['/', '/a', '/b']);
  assert.deepEqual(pagePaths(docs), ['/docs/', '/docs/x', '/docs/z']);

  const dump = await runCli(['shepherd', 'dump', '--state', state, '--json']);
  assert.equal(dump.status, 0, dump.stderr);
  const rows = dump.stdout.trim().split('\n').map((line) => JSON.parse(line) as { url: string; lastFetch: number; nextFetch: number });
  assert.deepEqual(rows.map((row) => row.url).sort(), [...['/', '/a', '/b'].map((p) => `${shop.origin}${p}`), ...['/docs/', '/docs/x', '/docs/z'].map((p) => `${docs.origin}${p}`)].sort(), 'refused URLs are not even remembered');
  for (const row of rows) {
    // initial_refetch (1d) held within the rule bounds [10m, 2h] for the shop, [shepherd]'s [1h, 30d] for the docs.
    assert.equal(row.nextFetch - row.lastFetch, row.url.startsWith(shop.origin) ? 2 * 3600 : 86_400, row.url);
  }
});

test('sherlock inject refuses seeds a site rule rejects, naming the reason rule', async (t) => {
  const dir = scratchDir(t);
  const config = join(dir, 'sherlock.toml');
  writeFileSync(config, '');
  mkdirSync(join(dir, 'sites.d'));
  writeFileSync(join(dir, 'sites.d', 'a.toml'), '[[site]]\ndomain = "example.org"\nreject = ["/private/"]\n');
  const seeds = join(dir, 'seeds.txt');
  writeFileSync(seeds, 'https://example.org/\nhttps://www.example.org/private/x\nhttps://example.net/private/y\n');
  const run = await runCli(['--config', config, 'inject', '--state', join(dir, 'state'), '--json', seeds]);
  assert.equal(run.status, 0, run.stderr);
  const report = JSON.parse(run.stdout) as { added: number; rejected: Record<string, number> };
  assert.equal(report.added, 2);
  assert.deepEqual(report.rejected, { rule: 1 });
});
